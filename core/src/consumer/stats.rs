//! A consumer's statistics and listeners (see [`crate::stats`] and
//! [`crate::events`]).

use super::{Consumer, TopicPartition};
use crate::client::Idempotence;
use crate::config::AutoOffsetReset;
use crate::error::Result;
use crate::events::{ClientEvents, ErrorListener, StatisticsListener};
use crate::protocol::admin::parse_offsets;
use crate::stats::{PartitionLag, Statistics};
use crate::wire::{Command, CommandPayload};
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

impl Consumer {
    /// This consumer's statistics now, with the lag of every assigned
    /// partition: LIST_OFFSETS `latest` minus the position (the offset
    /// after the last record `poll` returned, else the group's committed
    /// offset, else where `auto_offset_reset` starts it).
    pub async fn statistics(&self) -> Result<Statistics> {
        let mut s = self
            .cluster
            .events()
            .stats()
            .snapshot(&self.config.client.client_id, "consumer");
        let assigned = self.assignment().await?;
        let delivered: BTreeMap<TopicPartition, u64> =
            self.delivered_offsets().await?.into_iter().collect();
        let mut by_topic: BTreeMap<&str, Vec<&TopicPartition>> = BTreeMap::new();
        for tp in &assigned {
            by_topic.entry(&tp.topic).or_default().push(tp);
        }
        for (topic, tps) in by_topic {
            let payload = CommandPayload::new().field("topic", topic);
            let reply = self
                .cluster
                .ok_request(Command::ListOffsets, &payload, Idempotence::Safe)
                .await?;
            let offsets = parse_offsets(&reply)?;
            for tp in tps {
                let Some(o) = offsets.iter().find(|o| o.partition == tp.partition) else {
                    continue;
                };
                let position = match delivered.get(tp) {
                    Some(p) => Some(*p),
                    None => match self.committed(tp).await? {
                        Some(c) => Some(c),
                        None => match self.config.auto_offset_reset {
                            AutoOffsetReset::Earliest => Some(o.earliest),
                            AutoOffsetReset::Latest => Some(o.latest),
                            AutoOffsetReset::Error => None,
                        },
                    },
                };
                s.partitions.push(PartitionLag {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                    position,
                    end_offset: o.latest,
                    lag: position.map(|p| o.latest.saturating_sub(p)),
                });
            }
        }
        Ok(s)
    }

    /// The consumer's listeners and counters.
    pub(crate) fn events(&self) -> &ClientEvents {
        self.cluster.events()
    }

    /// Sets (or with `None` clears) the listener of background errors
    /// (membership lost, lost connections), called on the consumer's
    /// dispatcher thread, never on an I/O thread.
    pub fn set_error_listener(&self, listener: Option<ErrorListener>) {
        self.events().set_error_listener(listener);
    }

    /// Sets (or with `None` clears) the statistics listener: it gets a
    /// snapshot ([`Consumer::statistics`]) every `interval` (`None`: the
    /// `statistics_interval_ms` option; zero: never) on the consumer's
    /// dispatcher thread. It stops when the consumer is dropped.
    pub fn set_statistics_listener(
        self: &Arc<Self>,
        interval: Option<Duration>,
        listener: Option<StatisticsListener>,
    ) -> Result<()> {
        let weak = Arc::downgrade(self);
        set_listener_with(self, weak, interval, listener)
    }
}

/// Starts the periodic statistics of a consumer that `weak` reaches
/// through `get`.
pub(crate) fn set_listener_with<T: AsConsumer + Send + Sync + 'static>(
    consumer: &Consumer,
    weak: Weak<T>,
    interval: Option<Duration>,
    listener: Option<StatisticsListener>,
) -> Result<()> {
    let interval = interval.unwrap_or(consumer.cluster.config().statistics_interval);
    let snapshot: crate::events::Snapshotter = Arc::new(move || {
        let weak = weak.clone();
        Box::pin(async move {
            let owner = weak.upgrade()?;
            let consumer = owner.as_consumer()?;
            match consumer.statistics().await {
                Ok(s) => Some(s),
                // Closed: no more snapshots.
                Err(e) if e.kind() == crate::ErrorKind::Closed => None,
                Err(e) => {
                    tracing::debug!(error = %e, "statistics without lag");
                    Some(
                        consumer
                            .events()
                            .stats()
                            .snapshot(&consumer.config.client.client_id, "consumer"),
                    )
                }
            }
        })
    });
    consumer
        .events()
        .set_statistics_listener(interval, listener, snapshot)
}

/// What holds a consumer (the consumer itself, or the blocking facade's
/// process-local one).
pub(crate) trait AsConsumer {
    /// The consumer, when it is usable in this process.
    fn as_consumer(&self) -> Option<&Consumer>;
}

impl AsConsumer for Consumer {
    fn as_consumer(&self) -> Option<&Consumer> {
        Some(self)
    }
}

impl AsConsumer for crate::runtime::ProcessLocal<Consumer> {
    fn as_consumer(&self) -> Option<&Consumer> {
        self.get().ok()
    }
}
