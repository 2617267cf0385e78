//! Background upkeep: periodic flush of data nobody waited for (acks=0), the
//! retention pass that deletes expired segments, consumer group session
//! expiry, and transaction timeouts and expiration.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::MissedTickBehavior;
use tracing::warn;

use crate::broker::Broker;
use crate::storage::CleanupPolicy;
use crate::topics::partition::blocking;

/// Runs until shutdown, then flushes once more.
pub async fn run(broker: Arc<Broker>) {
    let mut flush = tokio::time::interval(broker.config.flush_interval);
    let mut retention = tokio::time::interval(broker.config.retention_check_interval);
    let mut sessions =
        tokio::time::interval(session_check_interval(broker.config.group_session_timeout));
    flush.set_missed_tick_behavior(MissedTickBehavior::Delay);
    retention.set_missed_tick_behavior(MissedTickBehavior::Delay);
    sessions.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut txns = tokio::time::interval(crate::txn::expiry::check_interval(
        broker.config.transaction_timeout,
    ));
    txns.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = broker.shutdown.cancelled() => break,
            _ = flush.tick() => flush_all(&broker).await,
            _ = retention.tick() => enforce_retention(&broker).await,
            _ = sessions.tick() => broker.groups.expire_all().await,
            _ = txns.tick() => crate::txn::expiry::expire(&broker).await,
        }
    }
    flush_all(&broker).await;
}

/// How often expired group members are looked for: a quarter of the session
/// timeout, between 10 ms and 1 s. Group commands also expire lazily.
pub fn session_check_interval(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// Makes every partition's appended data durable.
pub async fn flush_all(broker: &Broker) {
    for topic in broker.topics.list() {
        for partition in &topic.partitions {
            if let Err(e) = partition.flush().await {
                if !partition.is_closed() {
                    warn!(topic = %topic.def.name, partition = partition.id(), error = %e, "flush failed");
                }
            }
        }
    }
}

/// One retention pass over every topic whose cleanup policy deletes.
/// A topic override of 0 means the broker default; a broker value of 0
/// means no limit.
pub async fn enforce_retention(broker: &Broker) {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    for topic in broker.topics.list() {
        let def = &topic.def;
        // Compaction is not implemented; compact-only topics keep everything.
        if def.cleanup_policy == CleanupPolicy::Compact {
            continue;
        }
        let pick = |topic_value: u64, broker_value: u64| {
            Some(if topic_value > 0 {
                topic_value
            } else {
                broker_value
            })
            .filter(|v| *v > 0)
        };
        let bytes = pick(def.retention_bytes, broker.config.retention_bytes);
        let hours = pick(def.retention_hours, broker.config.retention_hours);
        if bytes.is_none() && hours.is_none() {
            continue;
        }
        let ms = hours.map(|h| i64::try_from(h.saturating_mul(3_600_000)).unwrap_or(i64::MAX));
        for partition in &topic.partitions {
            let log = Arc::clone(partition.log());
            let result = blocking(move || log.enforce_retention(bytes, ms, now_ms)).await;
            if let Err(e) = result {
                if !partition.is_closed() {
                    warn!(topic = %def.name, partition = partition.id(), error = %e, "retention failed");
                }
            }
        }
    }
}
