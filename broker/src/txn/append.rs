//! Appending transaction records to partitions: TXN_PUBLISH data records
//! (idempotent by sequence, like an idempotent PUBLISH) and control
//! markers. Both are durable before they return and update the partition's
//! transaction index under its writer lock.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use cursus_wire::{ErrorPayload, Record, RecordVersion, TransactionState};

use super::markers::{marker_record, MarkerKind, COORDINATOR_EPOCH};
use crate::eventsource::check_reservation;
use crate::eventsource::{PendingEvent, Reservation};
use crate::topics::partition::storage_error;
use crate::topics::{Partition, SeqCheck, TopicRegistry};

/// Attempts to find a live partition generation when a TRUNCATE races.
const FENCE_RETRIES: usize = 3;

/// One TXN_PUBLISH record before it is stored.
#[derive(Debug, Clone)]
pub struct TxnRecord<'a> {
    /// Transactional id.
    pub transactional_id: &'a str,
    /// Broker-managed producer id.
    pub producer_id: &'a str,
    /// Producer epoch.
    pub epoch: i64,
    /// Sequence number (> 0).
    pub seq: u64,
    /// Key (may be empty).
    pub key: Bytes,
    /// Payload.
    pub payload: Bytes,
}

/// Result of a TXN_PUBLISH append.
#[derive(Debug)]
pub struct Appended {
    /// Offset of the record (the original one for a retried sequence).
    pub offset: u64,
    /// False when the sequence was a retry and nothing was appended.
    pub new: bool,
    /// Resolves once the record is durable (the fsync already started).
    pub durable: DurableAppend,
}

/// The fsync of an appended record, started at once (group commit shares
/// it with concurrent appends).
#[derive(Debug)]
pub struct DurableAppend(tokio::task::JoinHandle<Result<(), ErrorPayload>>);

impl DurableAppend {
    /// Already durable (a remote participant answered after its sync).
    pub fn ready() -> DurableAppend {
        DurableAppend(tokio::spawn(async { Ok(()) }))
    }

    /// Durable once `wait` resolves.
    pub fn from_future(
        wait: impl std::future::Future<Output = Result<(), ErrorPayload>> + Send + 'static,
    ) -> DurableAppend {
        DurableAppend(tokio::spawn(wait))
    }

    /// Waits until the record is durable.
    pub async fn wait(self) -> Result<(), ErrorPayload> {
        self.0.await.unwrap_or_else(|e| {
            Err(ErrorPayload::new("transaction_publish_failed").with_field("reason", e.to_string()))
        })
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The live partition `topic`/`id` (the current generation).
fn live_partition(
    topics: &TopicRegistry,
    topic: &str,
    id: u32,
) -> Result<Arc<Partition>, ErrorPayload> {
    let t = topics
        .get(topic)
        .ok_or_else(|| ErrorPayload::new("topic_not_found").with_field("topic", topic))?;
    t.partition(id).cloned().ok_or_else(|| {
        ErrorPayload::new("partition_not_found")
            .with_field("topic", topic)
            .with_field("partition", id)
    })
}

/// Encodes `record` at `offset`, the partition's log end, and appends it
/// (writer lock held by the caller).
///
/// Callers register the record in the transaction index *before* this
/// append: another publisher's sync may make it durable at any moment
/// after, and a read_committed reader must never see it unregistered.
async fn append_one(
    partition: &Partition,
    topic: &str,
    offset: u64,
    mut record: Record,
) -> Result<(), ErrorPayload> {
    let timestamp = now_ms();
    record.topic = topic.to_owned();
    record.partition = partition.id() as i32;
    record.offset = offset;
    record.timestamp = timestamp;
    let mut buf = BytesMut::new();
    record
        .encode(RecordVersion::V3, &mut buf)
        .map_err(|e| ErrorPayload::new("invalid_payload").with_field("reason", e.to_string()))?;
    let info = partition
        .append(vec![(timestamp, buf.freeze())])
        .await
        .map_err(|e| storage_error(topic, partition.id(), &e))?;
    if info.base_offset != offset {
        return Err(ErrorPayload::new("broker_error")
            .with_field("reason", "append offset mismatch")
            .with_field("expected", offset)
            .with_field("actual", info.base_offset));
    }
    Ok(())
}

/// Appends a TXN_PUBLISH record to `topic`/`id` unless its sequence was
/// already appended (then answers the original offset). The record is made
/// durable by [`Appended::durable`], which the caller awaits before it
/// answers, without holding the transaction's lock.
pub async fn append_data(
    topics: &TopicRegistry,
    topic: &str,
    id: u32,
    rec: &TxnRecord<'_>,
) -> Result<Appended, ErrorPayload> {
    for _ in 0..FENCE_RETRIES {
        let partition = live_partition(topics, topic, id)?;
        let mut producers = partition.writer.lock().await;
        if partition.is_closed() {
            continue;
        }
        let appended = match producers.check(rec.producer_id, rec.epoch, rec.seq)? {
            SeqCheck::Duplicate { offset } => {
                let original = partition
                    .with_txn_index(|ix| ix.offset_of(rec.producer_id, rec.epoch, rec.seq));
                (original.unwrap_or(offset), false)
            }
            SeqCheck::Append => {
                let record = Record {
                    payload: rec.payload.clone(),
                    key: rec.key.clone(),
                    producer_id: rec.producer_id.to_owned(),
                    seq_num: rec.seq,
                    epoch: rec.epoch,
                    transactional_id: rec.transactional_id.to_owned(),
                    transaction_state: TransactionState::Open,
                    ..Record::default()
                };
                let offset = partition.log().log_end_offset();
                partition.with_txn_index(|ix| {
                    ix.record(
                        rec.producer_id,
                        rec.epoch,
                        rec.transactional_id,
                        rec.seq,
                        offset,
                    )
                });
                if let Err(e) = append_one(&partition, topic, offset, record).await {
                    partition.with_txn_index(|ix| ix.forget(rec.producer_id, rec.epoch, offset));
                    return Err(e);
                }
                producers.observe(rec.producer_id, rec.epoch, rec.seq, offset);
                (offset, true)
            }
        };
        drop(producers);
        let (offset, new) = appended;
        let topic = topic.to_owned();
        let durable = DurableAppend(tokio::spawn(async move {
            partition
                .sync_to(offset)
                .await
                .map_err(|e| storage_error(&topic, id, &e))
        }));
        return Ok(Appended {
            offset,
            new,
            durable,
        });
    }
    Err(ErrorPayload::new("topic_lifecycle_pending").with_field("topic", topic))
}

/// One TXN_APPEND_STREAM event before it is stored.
#[derive(Debug, Clone)]
pub struct TxnEvent<'a> {
    /// Transactional id.
    pub transactional_id: &'a str,
    /// Broker-managed producer id.
    pub producer_id: &'a str,
    /// Producer epoch.
    pub epoch: i64,
    /// Stream sequence number (stored in the record; not checked here).
    pub seq: u64,
    /// Aggregate key.
    pub key: &'a str,
    /// The version the event gets (the head + 1, counting the
    /// transaction's own pending events of the key).
    pub version: u64,
    /// Schema version.
    pub schema_version: u32,
    /// Event type (may be empty).
    pub event_type: &'a str,
    /// Metadata (may be empty).
    pub metadata: &'a str,
    /// Event id (may be empty; required on a replay topic).
    pub event_id: &'a str,
    /// Payload digest (replay topics; else empty).
    pub payload_digest: String,
    /// Payload.
    pub payload: Bytes,
    /// The topic is an aggregate replay topic (event ids are unique).
    pub replay: bool,
}

/// Appends a TXN_APPEND_STREAM event to `topic`/`id` as an open
/// transactional record: checks the key's reservation (another
/// transaction's ⇒ `stream_version_reserved`), the version
/// (`version_conflict`) and, on a replay topic, the event id
/// (`aggregate_identity_conflict`); then appends, registers the record in
/// the transaction index and stages the event (reserving its key) in the
/// stream index, all under the writer lock. Durable through
/// [`Appended::durable`].
pub async fn append_event(
    topics: &TopicRegistry,
    topic: &str,
    id: u32,
    ev: &TxnEvent<'_>,
) -> Result<Appended, ErrorPayload> {
    for _ in 0..FENCE_RETRIES {
        let partition = live_partition(topics, topic, id)?;
        let writer = partition.writer.lock().await;
        if partition.is_closed() {
            continue;
        }
        check_reservation(&partition, topic, ev.key, Some((ev.producer_id, ev.epoch)))?;
        let next = partition.with_streams(|s| s.next_version_for(ev.key, ev.producer_id, ev.epoch));
        if ev.version != next {
            return Err(ErrorPayload::new("version_conflict")
                .with_field("current", next - 1)
                .with_field("expected", ev.version));
        }
        if ev.replay {
            let taken = partition.with_streams(|s| {
                s.event_id_offset(ev.event_id).is_some() || s.event_id_pending(ev.event_id)
            });
            if taken {
                return Err(ErrorPayload::new("aggregate_identity_conflict")
                    .with_field("event_id", ev.event_id));
            }
        }
        let record = Record {
            payload: ev.payload.clone(),
            key: Bytes::copy_from_slice(ev.key.as_bytes()),
            event_type: ev.event_type.to_owned(),
            schema_version: ev.schema_version,
            aggregate_version: ev.version,
            metadata: ev.metadata.to_owned(),
            event_id: ev.event_id.to_owned(),
            payload_digest: ev.payload_digest.clone(),
            producer_id: ev.producer_id.to_owned(),
            seq_num: ev.seq,
            epoch: ev.epoch,
            transactional_id: ev.transactional_id.to_owned(),
            transaction_state: TransactionState::Open,
            ..Record::default()
        };
        let offset = partition.log().log_end_offset();
        // Registered with sequence 0: TXN_PUBLISH's retries look records up
        // by their (per-partition) sequence, which this one is not part of.
        partition.with_txn_index(|ix| {
            ix.record(ev.producer_id, ev.epoch, ev.transactional_id, 0, offset)
        });
        if let Err(e) = append_one(&partition, topic, offset, record).await {
            partition.with_txn_index(|ix| ix.forget(ev.producer_id, ev.epoch, offset));
            return Err(e);
        }
        let owner = Reservation {
            transactional_id: ev.transactional_id.to_owned(),
            producer_id: ev.producer_id.to_owned(),
            epoch: ev.epoch,
        };
        partition.with_streams(|s| {
            s.stage(
                &owner,
                PendingEvent {
                    key: ev.key.to_owned(),
                    version: ev.version,
                    offset,
                    event_id: ev.event_id.to_owned(),
                },
            )
        });
        drop(writer);
        return Ok(Appended {
            offset,
            new: true,
            durable: sync_later(partition, topic, id, offset),
        });
    }
    Err(ErrorPayload::new("topic_lifecycle_pending").with_field("topic", topic))
}

/// Starts making `offset` of `partition` durable.
pub fn sync_later(partition: Arc<Partition>, topic: &str, id: u32, offset: u64) -> DurableAppend {
    let topic = topic.to_owned();
    DurableAppend(tokio::spawn(async move {
        partition
            .sync_to(offset)
            .await
            .map_err(|e| storage_error(&topic, id, &e))
    }))
}

/// Appends the `kind` marker of `(producer_id, epoch)` to `topic`/`id`
/// unless one is already there, and makes it durable. A topic or partition
/// that no longer exists has nothing to mark (`Ok(false)`).
pub async fn append_marker(
    topics: &TopicRegistry,
    topic: &str,
    id: u32,
    transactional_id: &str,
    producer_id: &str,
    epoch: i64,
    kind: MarkerKind,
) -> Result<bool, ErrorPayload> {
    append_marker_at(
        topics,
        topic,
        id,
        transactional_id,
        producer_id,
        epoch,
        kind,
        COORDINATOR_EPOCH,
    )
    .await
}

/// [`append_marker`] with `coordinator_epoch` as the marker's coordinator
/// epoch (in a cluster, the shard epoch of the coordinator that wrote it).
#[allow(clippy::too_many_arguments)]
pub async fn append_marker_at(
    topics: &TopicRegistry,
    topic: &str,
    id: u32,
    transactional_id: &str,
    producer_id: &str,
    epoch: i64,
    kind: MarkerKind,
    coordinator_epoch: i64,
) -> Result<bool, ErrorPayload> {
    for _ in 0..FENCE_RETRIES {
        let partition = match live_partition(topics, topic, id) {
            Ok(p) => p,
            Err(_) => return Ok(false),
        };
        let writer = partition.writer.lock().await;
        if partition.is_closed() {
            continue;
        }
        let offset = match partition.with_txn_index(|ix| ix.marker_for(producer_id, epoch)) {
            Some(existing) if existing.kind == kind => existing.offset,
            Some(existing) => {
                return Err(ErrorPayload::new("transaction_commit_failed")
                    .with_field("transactional_id", transactional_id)
                    .with_field("topic", topic)
                    .with_field("partition", id)
                    .with_field(
                        "reason",
                        format!("a {:?} marker is already written", existing.kind),
                    ))
            }
            None => {
                let record = marker_record(
                    transactional_id,
                    producer_id,
                    epoch,
                    kind,
                    coordinator_epoch,
                );
                let offset = partition.log().log_end_offset();
                let previous = partition.with_txn_index(|ix| {
                    let previous = ix.last_marker(producer_id);
                    ix.marker(producer_id, epoch, kind, offset);
                    previous
                });
                if let Err(e) = append_one(&partition, topic, offset, record).await {
                    partition.with_txn_index(|ix| ix.forget_marker(producer_id, offset, previous));
                    return Err(e);
                }
                offset
            }
        };
        drop(writer);
        partition
            .sync_to(offset)
            .await
            .map_err(|e| storage_error(topic, id, &e))?;
        return Ok(true);
    }
    Err(ErrorPayload::new("topic_lifecycle_pending").with_field("topic", topic))
}

/// Releases `(producer_id, epoch)` in `topic`/`id` after the decision is
/// durable: its records stop holding the stable offset, and its pending
/// stream events (TXN_APPEND_STREAM) are indexed (commit) or dropped
/// (abort), ending their key reservations.
pub fn release(topics: &TopicRegistry, topic: &str, id: u32, producer_id: &str, epoch: i64) {
    let Ok(partition) = live_partition(topics, topic, id) else {
        return;
    };
    let kind = partition.with_txn_index(|ix| {
        let kind = ix.marker_for(producer_id, epoch).map(|m| m.kind);
        ix.resolve(producer_id, epoch);
        kind
    });
    match kind {
        Some(MarkerKind::Commit) => {
            let skipped = partition.with_streams(|s| s.commit_pending(producer_id, epoch));
            for e in skipped {
                tracing::warn!(
                    topic,
                    partition = id,
                    key = %e.key,
                    version = e.version,
                    offset = e.offset,
                    "committed stream event does not continue its stream; not indexed"
                );
            }
        }
        Some(MarkerKind::Abort) => partition.with_streams(|s| s.abort_pending(producer_id, epoch)),
        None => {}
    }
}
