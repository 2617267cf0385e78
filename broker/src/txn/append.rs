//! Appending transaction records to partitions: TXN_PUBLISH data records
//! (idempotent by sequence, like an idempotent PUBLISH) and control
//! markers. Both are durable before they return and update the partition's
//! transaction index under its writer lock.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use cursus_wire::{ErrorPayload, Record, RecordVersion, TransactionState};
use futures_util::future::{BoxFuture, FutureExt, Shared};

use super::markers::{marker_record, MarkerKind, COORDINATOR_EPOCH};
use crate::eventsource::check_reservation;
use crate::eventsource::{PendingEvent, Reservation};
use crate::placement::commit::Written;
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
    /// Metadata (empty: none).
    pub metadata: &'a str,
}

/// Result of a TXN_PUBLISH append.
#[derive(Debug)]
pub struct Appended {
    /// Offset of the record (the original one for a retried sequence).
    pub offset: u64,
    /// The leader epoch of the partition generation that holds it
    /// ([`Partition::leader_epoch`]; 0 standalone, or when a remote leader
    /// answered once it was committed).
    pub leader_epoch: u64,
    /// False when the sequence was a retry and nothing was appended.
    pub new: bool,
    /// Resolves once the record is durable (the fsync already started).
    pub durable: DurableAppend,
}

/// The fsync of an appended record, started at once (group commit shares
/// it with concurrent appends). The records of one batch append share one
/// ([`DurableAppend::share`]).
#[derive(Debug)]
pub struct DurableAppend(Shared<BoxFuture<'static, Result<(), ErrorPayload>>>);

impl DurableAppend {
    /// Already durable (a remote participant answered after its sync).
    pub fn ready() -> DurableAppend {
        DurableAppend(futures_util::future::ready(Ok(())).boxed().shared())
    }

    /// Durable once `wait` resolves; `wait` runs at once in its own task.
    pub fn from_future(
        wait: impl std::future::Future<Output = Result<(), ErrorPayload>> + Send + 'static,
    ) -> DurableAppend {
        let task = tokio::spawn(wait);
        DurableAppend(
            async move {
                task.await.unwrap_or_else(|e| {
                    Err(ErrorPayload::new("transaction_publish_failed")
                        .with_field("reason", e.to_string()))
                })
            }
            .boxed()
            .shared(),
        )
    }

    /// The same wait, for another record the same sync covers.
    pub fn share(&self) -> DurableAppend {
        DurableAppend(self.0.clone())
    }

    /// Waits until the record is durable.
    pub async fn wait(self) -> Result<(), ErrorPayload> {
        self.0.await
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
    record: Record,
) -> Result<(), ErrorPayload> {
    let timestamp = now_ms();
    let bytes = encode_at(partition, topic, offset, timestamp, record)?;
    append_entries(partition, topic, offset, vec![(timestamp, bytes)]).await
}

/// The stored bytes of `record` at `offset` of `partition`.
fn encode_at(
    partition: &Partition,
    topic: &str,
    offset: u64,
    timestamp: i64,
    mut record: Record,
) -> Result<Bytes, ErrorPayload> {
    record.topic = topic.to_owned();
    record.partition = partition.id() as i32;
    record.offset = offset;
    record.timestamp = timestamp;
    let mut buf = BytesMut::new();
    record
        .encode(RecordVersion::V3, &mut buf)
        .map_err(|e| ErrorPayload::new("invalid_payload").with_field("reason", e.to_string()))?;
    Ok(buf.freeze())
}

/// Appends encoded `entries` at `base`, the partition's log end, in one
/// log write (writer lock held by the caller; same registration rule as
/// [`append_one`]).
async fn append_entries(
    partition: &Partition,
    topic: &str,
    base: u64,
    entries: Vec<(i64, Bytes)>,
) -> Result<(), ErrorPayload> {
    let info = partition
        .append(entries)
        .await
        .map_err(|e| storage_error(topic, partition.id(), &e))?;
    if info.base_offset != base {
        return Err(ErrorPayload::new("broker_error")
            .with_field("reason", "append offset mismatch")
            .with_field("expected", base)
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
    append_data_batch(topics, topic, id, std::slice::from_ref(rec))
        .await
        .pop()
        .unwrap_or_else(|| Err(ErrorPayload::new("broker_error").with_field("reason", "no append")))
}

/// How one record of a batch is taken: appended at the given position of
/// the batch's new entries, answered with an earlier offset, or refused.
enum Taken {
    New(u64),
    Duplicate(u64),
    Refused(ErrorPayload),
}

/// [`append_data`] for consecutive TXN_PUBLISH records of one producer
/// session to one partition, in sequence order (a pipelined transaction):
/// one writer-lock hold, one log append of every new record and one sync
/// shared by all of them. Each record gets its own outcome, exactly as if
/// they had been appended one by one: a duplicate answers its original
/// offset, a sequence gap is refused (and so is every record after it,
/// which then follows a gap too).
pub async fn append_data_batch(
    topics: &TopicRegistry,
    topic: &str,
    id: u32,
    recs: &[TxnRecord<'_>],
) -> Vec<Result<Appended, ErrorPayload>> {
    for _ in 0..FENCE_RETRIES {
        let partition = match live_partition(topics, topic, id) {
            Ok(p) => p,
            Err(e) => return recs.iter().map(|_| Err(e.clone())).collect(),
        };
        let mut producers = partition.writer.lock().await;
        if partition.is_closed() {
            continue;
        }
        let base = partition.log().log_end_offset();
        let timestamp = now_ms();
        let mut taken = Vec::with_capacity(recs.len());
        let mut entries = Vec::new();
        // (producer, epoch, sequence, offset) of the batch's new records,
        // newest last: the producer table and the transaction index learn
        // of them only once they are in the log, so sequences and repeats
        // inside the batch are checked against these.
        let mut appended: Vec<(&str, i64, u64, u64)> = Vec::new();
        for rec in recs {
            let check = match appended.last() {
                None => producers.check(rec.producer_id, rec.epoch, rec.seq),
                Some(&(_, _, seq, _)) if rec.seq == seq + 1 => Ok(SeqCheck::Append),
                Some(&(_, _, seq, offset)) if rec.seq <= seq => Ok(SeqCheck::Duplicate { offset }),
                Some(&(_, _, seq, _)) => Err(ErrorPayload::new("invalid_producer_sequence")
                    .with_field("producer", rec.producer_id)
                    .with_field("epoch", rec.epoch)
                    .with_field("expected", seq + 1)
                    .with_field("got", rec.seq)),
            };
            let outcome = match check {
                Err(e) => Taken::Refused(e),
                Ok(SeqCheck::Duplicate { offset }) => {
                    let in_batch = appended
                        .iter()
                        .find(|(p, e, s, _)| (*p, *e, *s) == (rec.producer_id, rec.epoch, rec.seq));
                    let original = match in_batch {
                        Some(&(_, _, _, o)) => Some(o),
                        None => partition
                            .with_txn_index(|ix| ix.offset_of(rec.producer_id, rec.epoch, rec.seq)),
                    };
                    Taken::Duplicate(original.unwrap_or(offset))
                }
                Ok(SeqCheck::Append) => {
                    let offset = base + entries.len() as u64;
                    match encode_data(&partition, topic, rec, offset, timestamp) {
                        Err(e) => Taken::Refused(e),
                        Ok(bytes) => {
                            entries.push((timestamp, bytes));
                            appended.push((rec.producer_id, rec.epoch, rec.seq, offset));
                            Taken::New(offset - base)
                        }
                    }
                }
            };
            taken.push(outcome);
        }
        let new_records = || {
            recs.iter()
                .zip(&taken)
                .filter_map(|(rec, t)| matches!(t, Taken::New(_)).then_some(rec))
        };
        if !entries.is_empty() {
            // Registered before the append: another publisher's sync may
            // make the records durable at any moment after, and a
            // read_committed reader must never see one unregistered.
            partition.with_txn_index(|ix| {
                for (i, rec) in new_records().enumerate() {
                    let offset = base + i as u64;
                    ix.record(
                        rec.producer_id,
                        rec.epoch,
                        rec.transactional_id,
                        rec.seq,
                        offset,
                    );
                }
            });
            if let Err(e) = append_entries(&partition, topic, base, entries).await {
                partition.with_txn_index(|ix| {
                    for (i, rec) in new_records().enumerate() {
                        ix.forget(rec.producer_id, rec.epoch, base + i as u64);
                    }
                });
                return recs.iter().map(|_| Err(e.clone())).collect();
            }
            for (i, rec) in new_records().enumerate() {
                producers.observe(rec.producer_id, rec.epoch, rec.seq, base + i as u64);
            }
        }
        drop(producers);
        let leader_epoch = partition.leader_epoch();
        let answered = |t: &Taken| match t {
            Taken::New(i) => Some((base + i, true)),
            Taken::Duplicate(offset) => Some((*offset, false)),
            Taken::Refused(_) => None,
        };
        // One sync covers every record the batch answers.
        let last = taken.iter().filter_map(answered).map(|(o, _)| o).max();
        let durable = last.map(|last| sync_later(Arc::clone(&partition), topic, id, last));
        return taken
            .into_iter()
            .map(|t| match (answered(&t), &durable, t) {
                (Some((offset, new)), Some(durable), _) => Ok(Appended {
                    offset,
                    leader_epoch,
                    new,
                    durable: durable.share(),
                }),
                (_, _, Taken::Refused(e)) => Err(e),
                _ => Err(ErrorPayload::new("broker_error").with_field("reason", "unsynced append")),
            })
            .collect();
    }
    let pending = ErrorPayload::new("topic_lifecycle_pending").with_field("topic", topic);
    recs.iter().map(|_| Err(pending.clone())).collect()
}

/// The stored bytes of a TXN_PUBLISH record at `offset` of `partition`.
fn encode_data(
    partition: &Partition,
    topic: &str,
    rec: &TxnRecord<'_>,
    offset: u64,
    timestamp: i64,
) -> Result<Bytes, ErrorPayload> {
    let record = Record {
        payload: rec.payload.clone(),
        key: rec.key.clone(),
        producer_id: rec.producer_id.to_owned(),
        seq_num: rec.seq,
        epoch: rec.epoch,
        transactional_id: rec.transactional_id.to_owned(),
        transaction_state: TransactionState::Open,
        metadata: rec.metadata.to_owned(),
        ..Record::default()
    };
    encode_at(partition, topic, offset, timestamp, record)
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
            leader_epoch: partition.leader_epoch(),
            new: true,
            durable: sync_later(partition, topic, id, offset),
        });
    }
    Err(ErrorPayload::new("topic_lifecycle_pending").with_field("topic", topic))
}

/// Starts making `offset` of `partition` durable.
pub fn sync_later(partition: Arc<Partition>, topic: &str, id: u32, offset: u64) -> DurableAppend {
    let topic = topic.to_owned();
    DurableAppend::from_future(async move {
        partition
            .sync_to(offset)
            .await
            .map_err(|e| storage_error(&topic, id, &e))
    })
}

/// Appends the `kind` marker of `(producer_id, epoch)` to `topic`/`id`
/// unless one is already there, and makes it durable; where it is. A topic
/// or partition that no longer exists has nothing to mark (`Ok(None)`).
pub async fn append_marker(
    topics: &TopicRegistry,
    topic: &str,
    id: u32,
    transactional_id: &str,
    producer_id: &str,
    epoch: i64,
    kind: MarkerKind,
) -> Result<Option<Written>, ErrorPayload> {
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
) -> Result<Option<Written>, ErrorPayload> {
    for _ in 0..FENCE_RETRIES {
        let partition = match live_partition(topics, topic, id) {
            Ok(p) => p,
            Err(_) => return Ok(None),
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
        return Ok(Some(Written::at(&partition, offset)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{CleanupPolicy, LogConfig};
    use crate::topics::{TopicDefaults, TopicPatch};
    use cursus_wire::CommandPayload;

    async fn registry(dir: &std::path::Path) -> TopicRegistry {
        let defaults = TopicDefaults {
            partitions: 1,
            replication_factor: 1,
            cleanup_policy: CleanupPolicy::Delete,
            min_insync_replicas: 1,
        };
        let topics = TopicRegistry::open(dir, LogConfig::default(), defaults).unwrap();
        let (_, p) = CommandPayload::parse_line("CREATE topic=t partitions=1").unwrap();
        topics
            .create(&TopicPatch::parse(&p).unwrap())
            .await
            .unwrap();
        topics
    }

    fn record(seq: u64) -> TxnRecord<'static> {
        TxnRecord {
            transactional_id: "tx",
            producer_id: "txn-1",
            epoch: 0,
            seq,
            key: Bytes::new(),
            payload: Bytes::from(format!("r{seq}")),
            metadata: "",
        }
    }

    /// A pipelined batch is one append covered by one sync, and no record
    /// of it is answered before the sync that covers it: when a record's
    /// durable wait resolves, the log is durable past its offset.
    #[tokio::test]
    async fn a_batch_shares_one_sync_and_no_record_is_durable_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let topics = registry(dir.path()).await;
        let partition = live_partition(&topics, "t", 0).unwrap();
        let syncs = partition.log().sync_count();
        let recs: Vec<TxnRecord<'_>> = (1..=50).map(record).collect();
        let appended = append_data_batch(&topics, "t", 0, &recs).await;
        let mut offsets = Vec::new();
        for a in appended {
            let a = a.unwrap();
            assert!(a.new);
            offsets.push(a.offset);
            a.durable.wait().await.unwrap();
            assert!(partition.log().durable_offset() > a.offset);
        }
        assert_eq!(offsets, (0..50).collect::<Vec<u64>>());
        assert_eq!(
            partition.log().sync_count(),
            syncs + 1,
            "one sync for the batch"
        );
        // Every record is in the transaction index (read_committed holds
        // them back until the marker).
        for (seq, offset) in (1..=50).zip(0..) {
            let indexed = partition.with_txn_index(|ix| ix.offset_of("txn-1", 0, seq));
            assert_eq!(indexed, Some(offset));
        }
    }

    /// A resend of an earlier record of the same batch (not the newest)
    /// answers that record's offset, not the newest one's (a pipelined
    /// run read whole, as on a loaded broker, holds both).
    #[tokio::test]
    async fn a_repeat_inside_a_batch_answers_its_own_original_offset() {
        let dir = tempfile::tempdir().unwrap();
        let topics = registry(dir.path()).await;
        let recs = [record(1), record(2), record(3), record(1)];
        let out = append_data_batch(&topics, "t", 0, &recs).await;
        let got: Vec<(u64, bool)> = out
            .iter()
            .map(|a| a.as_ref().map(|a| (a.offset, a.new)).unwrap())
            .collect();
        assert_eq!(got, vec![(0, true), (1, true), (2, true), (0, false)]);
    }

    /// Each record of a batch has the outcome it would have alone: a
    /// resent sequence answers its original offset, a gap is refused and so
    /// is what follows it, and the producer table learns the new records.
    #[tokio::test]
    async fn batch_outcomes_match_one_by_one_appends() {
        let dir = tempfile::tempdir().unwrap();
        let topics = registry(dir.path()).await;
        let first = append_data_batch(&topics, "t", 0, &[record(1), record(2)]).await;
        assert_eq!(first.len(), 2);
        // 2 again (a resend), 3 new, 3 again inside the batch, 5 (a gap), 6.
        let recs = [record(2), record(3), record(3), record(5), record(6)];
        let out = append_data_batch(&topics, "t", 0, &recs).await;
        let ok = |i: usize| out[i].as_ref().map(|a| (a.offset, a.new)).unwrap();
        assert_eq!(ok(0), (1, false));
        assert_eq!(ok(1), (2, true));
        assert_eq!(ok(2), (2, false));
        for refused in &out[3..] {
            let e = refused.as_ref().unwrap_err();
            assert_eq!(e.code, "invalid_producer_sequence");
        }
        // The next batch continues after 3.
        let next = append_data_batch(&topics, "t", 0, &[record(4)]).await;
        assert_eq!(
            next[0].as_ref().map(|a| (a.offset, a.new)).unwrap(),
            (3, true)
        );
        let partition = live_partition(&topics, "t", 0).unwrap();
        assert_eq!(partition.log().log_end_offset(), 4);
    }
}
