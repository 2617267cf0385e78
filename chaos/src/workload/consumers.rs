//! Group consumers (read_committed) of [`IDEM_TOPIC`] in
//! [`READER_GROUP`]: they poll and commit, partition by partition, the
//! offset after the last record polled, recording each acknowledged
//! commit. A monitor reads the committed offsets of both groups in turn
//! for the whole run, so the checker can see whether one ever went back.

use super::{connect_retrying, consumer_config, IDEM_TOPIC, READER_GROUP, TXN_GROUP};
use super::{IDEM_PARTITIONS, TXN_IN_PARTITIONS, TXN_IN_TOPIC};
use crate::ledger::{lock, CommitAck, CommittedSample, Ledger};
use cursus::consumer::{Consumer, Subscription};
use cursus::TopicPartition;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Consecutive failed polls after which the consumer is replaced.
const MAX_POLL_FAILURES: u32 = 20;

/// Runs group consumer `id` until `stop`.
pub async fn run(id: u32, addr: String, ledger: Arc<Ledger>, stop: CancellationToken) {
    'session: while !stop.is_cancelled() {
        let Some(consumer) = connect_retrying(&stop, || async {
            let c = Consumer::connect(consumer_config(&addr, READER_GROUP, 200)).await?;
            c.subscribe(Subscription::Topics(vec![IDEM_TOPIC.into()]))
                .await?;
            Ok(c)
        })
        .await
        else {
            return;
        };
        let mut failures = 0;
        while !stop.is_cancelled() {
            let records = match consumer.poll(Duration::from_millis(300)).await {
                Ok(r) => {
                    failures = 0;
                    r
                }
                Err(_) => {
                    failures += 1;
                    if failures >= MAX_POLL_FAILURES {
                        let _ =
                            tokio::time::timeout(Duration::from_secs(5), consumer.close()).await;
                        continue 'session;
                    }
                    continue;
                }
            };
            ledger
                .consumed
                .fetch_add(records.len() as u64, Ordering::Relaxed);
            let mut next: BTreeMap<u32, u64> = BTreeMap::new();
            for r in &records {
                let e = next.entry(r.partition).or_default();
                *e = (*e).max(r.offset + 1);
            }
            for (partition, offset) in next {
                let tp = TopicPartition::new(IDEM_TOPIC, partition);
                if consumer.commit_offsets(&[(tp, offset)]).await.is_ok() {
                    lock(&ledger.commits).push(CommitAck {
                        group: READER_GROUP.into(),
                        consumer: id,
                        topic: IDEM_TOPIC.into(),
                        partition,
                        offset,
                    });
                }
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), consumer.close()).await;
    }
}

/// The (group, topic, partitions) the monitor watches.
pub fn watched() -> [(&'static str, &'static str, u32); 2] {
    [
        (READER_GROUP, IDEM_TOPIC, IDEM_PARTITIONS),
        (TXN_GROUP, TXN_IN_TOPIC, TXN_IN_PARTITIONS),
    ]
}

/// Reads the committed offsets of [`watched`] groups in turn until `stop`.
/// The clients are never subscribed: they only FETCH committed offsets.
pub async fn monitor(addr: String, ledger: Arc<Ledger>, stop: CancellationToken) {
    let mut clients = Vec::new();
    for (group, topic, partitions) in watched() {
        let Some(c) = connect_retrying(&stop, || {
            Consumer::connect(consumer_config(&addr, group, 1))
        })
        .await
        else {
            return;
        };
        clients.push((c, group, topic, partitions));
    }
    while !stop.is_cancelled() {
        for (c, group, topic, partitions) in &clients {
            for partition in 0..*partitions {
                let tp = TopicPartition::new(*topic, partition);
                if let Ok(Some(offset)) = c.committed(&tp).await {
                    lock(&ledger.committed_samples).push(CommittedSample {
                        group: (*group).into(),
                        topic: (*topic).into(),
                        partition,
                        offset,
                    });
                }
            }
        }
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
    for (c, ..) in clients {
        let _ = c.close().await;
    }
}
