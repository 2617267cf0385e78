//! Background upkeep: periodic flush of data nobody waited for (acks=0), the
//! retention pass that deletes expired segments (recording event stream
//! heads first and pruning stream indexes after), the compaction pass over
//! compacted topics (both checkpoint the idempotent-producer state first),
//! consumer group session expiry, idle producer expiry
//! (`producer_state_ttl_ms`), and transaction timeouts and expiration.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cursus_wire::Record;
use tokio::time::MissedTickBehavior;
use tracing::warn;

use crate::broker::Broker;
use crate::eventsource::SnapshotStore;
use crate::storage::compaction::{self, CompactionPolicy, RecordClass};
use crate::storage::{CleanupPolicy, StorageError, StoredRecord};
use crate::topics::partition::{blocking, checkpoint_producers};
use crate::topics::{is_internal_topic, Partition};
use crate::txn::index::ReadFilter;
use crate::txn::markers::{classify, TxnRecordKind};

/// Runs until shutdown, then flushes once more.
pub async fn run(broker: Arc<Broker>) {
    let mut flush = tokio::time::interval(broker.config.flush_interval);
    let mut retention = tokio::time::interval(broker.config.retention_check_interval);
    let mut sessions =
        tokio::time::interval(session_check_interval(broker.config.group_session_timeout));
    flush.set_missed_tick_behavior(MissedTickBehavior::Delay);
    retention.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut compaction = tokio::time::interval(broker.config.compaction_interval);
    compaction.set_missed_tick_behavior(MissedTickBehavior::Delay);
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
            _ = compaction.tick() => compact_all(&broker).await,
            _ = sessions.tick() => {
                broker.groups.expire_all().await;
                expire_producers(&broker).await;
            }
            _ = txns.tick() => crate::txn::expiry::expire(&broker).await,
        }
    }
    flush_all(&broker).await;
}

/// Drops idempotent producers idle for `producer_state_ttl_ms` from memory,
/// after writing them to their partition's checkpoint.
pub async fn expire_producers(broker: &Broker) {
    let ttl = broker.config.producer_state_ttl;
    for topic in broker.topics.list() {
        for partition in &topic.partitions {
            let mut producers = partition.writer.lock().await;
            let idle = producers.idle(std::time::Instant::now(), ttl);
            if idle.is_empty() {
                continue;
            }
            match checkpoint_producers(&producers).await {
                Ok(()) => producers.forget(&idle),
                Err(e) => {
                    if !partition.is_closed() {
                        warn!(topic = %topic.def.name, partition = partition.id(), error = %e, "producer checkpoint failed; producers kept in memory");
                    }
                }
            }
        }
    }
}

/// How often expired group members are looked for: a quarter of the session
/// timeout, between 10 ms and 1 s. Group commands also expire lazily.
pub fn session_check_interval(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// Records the head of every stream of `partition` in the topic's snapshot
/// journal before retention may remove their events, so a restart never
/// reuses a version (see [`SnapshotStore`]).
async fn record_stream_floors(
    partition: &Partition,
    store: &Arc<SnapshotStore>,
) -> Result<(), StorageError> {
    let durable = partition.log().durable_offset();
    let heads = partition.with_streams(|s| s.visible_heads(durable));
    if heads.is_empty() {
        return Ok(());
    }
    let (store, id) = (Arc::clone(store), partition.id());
    blocking(move || store.record_floors(id, &heads)).await
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
        // Compact-only topics lose records to compaction only.
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
            // Event-sourcing topics: no append between recording the heads
            // and removing segments (a new event in a segment sealed
            // meanwhile could otherwise go without a recorded head).
            let writer = partition.writer.lock().await;
            // Producers whose records retention is about to remove stay
            // deduplicated through the checkpoint.
            if partition.log().segment_count() > 1 {
                if let Err(e) = checkpoint_producers(&writer).await {
                    if !partition.is_closed() {
                        warn!(topic = %def.name, partition = partition.id(), error = %e, "producer checkpoint failed; retention skipped");
                    }
                    continue;
                }
            }
            let _writer = topic.snapshots.as_ref().map(|_| writer);
            if let Some(store) = &topic.snapshots {
                // Only sealed segments are removed: a single segment stays.
                if partition.log().segment_count() > 1 {
                    if let Err(e) = record_stream_floors(partition, store).await {
                        // Without the floors a restart could reuse versions
                        // of streams whose events are all removed: skip.
                        if !partition.is_closed() {
                            warn!(topic = %def.name, partition = partition.id(), error = %e, "recording stream heads failed; retention skipped");
                        }
                        continue;
                    }
                }
            }
            let log = Arc::clone(partition.log());
            let result = blocking(move || log.enforce_retention(bytes, ms, now_ms)).await;
            match result {
                Ok(outcome) if outcome.deleted_segments > 0 && topic.snapshots.is_some() => {
                    partition.with_streams(|s| s.prune_below(outcome.earliest_offset));
                }
                Ok(_) => {}
                Err(e) => {
                    if !partition.is_closed() {
                        warn!(topic = %def.name, partition = partition.id(), error = %e, "retention failed");
                    }
                }
            }
        }
    }
}

/// One compaction pass over every partition of every topic whose cleanup
/// policy compacts (never event-sourcing or internal topics); see
/// [`crate::storage::compaction`].
pub async fn compact_all(broker: &Broker) {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let tombstone_retention_ms =
        i64::try_from(broker.config.compaction_tombstone_retention.as_millis()).unwrap_or(i64::MAX);
    for topic in broker.topics.list() {
        let def = &topic.def;
        let compacted = matches!(
            def.cleanup_policy,
            CleanupPolicy::Compact | CleanupPolicy::DeleteCompact
        );
        if !compacted || def.event_sourcing || is_internal_topic(&def.name) {
            continue;
        }
        for partition in &topic.partitions {
            // Only sealed segments are rewritten.
            if partition.log().segment_count() < 2 || partition.is_closed() {
                continue;
            }
            // Producers whose records compaction may remove stay
            // deduplicated through the checkpoint.
            if let Err(e) = checkpoint_producers(&*partition.writer.lock().await).await {
                if !partition.is_closed() {
                    warn!(topic = %def.name, partition = partition.id(), error = %e, "producer checkpoint failed; compaction skipped");
                }
                continue;
            }
            let below = partition.stable_offset();
            let filter = partition.with_txn_index(|index| index.filter(0, below));
            let policy = CompactionPolicy {
                below,
                now_ms,
                tombstone_retention_ms,
            };
            let log = Arc::clone(partition.log());
            let result = blocking(move || {
                compaction::compact(&log, &policy, |r| compaction_class(&filter, r))
            })
            .await;
            if let Err(e) = result {
                if !partition.is_closed() {
                    warn!(topic = %def.name, partition = partition.id(), error = %e, "compaction failed");
                }
            }
        }
    }
}

/// What a stored record is to the cleaner: markers and keyless records are
/// kept, records read_committed readers never see are aborted.
fn compaction_class(filter: &ReadFilter, stored: &StoredRecord) -> RecordClass {
    let Ok(record) = Record::decode(stored.data.clone()) else {
        // Never drop what cannot be understood.
        return RecordClass::Keyless;
    };
    if matches!(classify(&record), TxnRecordKind::Marker(_)) {
        return RecordClass::Marker;
    }
    if !filter.visible(stored) {
        return RecordClass::Aborted;
    }
    if record.key.is_empty() {
        return RecordClass::Keyless;
    }
    RecordClass::Keyed {
        key: record.key.to_vec(),
        tombstone: record.payload.is_empty(),
    }
}
