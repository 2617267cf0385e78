//! Event sourcing: APPEND_STREAM, READ_STREAM, STREAM_VERSION,
//! SAVE_SNAPSHOT, READ_SNAPSHOT, READ_STREAM_HISTORY, and BROWSE_MESSAGES
//! (any topic). `docs/event-sourcing.md` is the contract.
//!
//! An aggregate lives on the partition its key hashes to (FNV-1a, as
//! PUBLISH by key). APPEND_STREAM checks the version against the
//! partition's [`StreamIndex`](crate::eventsource::StreamIndex) and appends
//! under the partition's writer lock, so a version is never assigned twice,
//! then syncs before replying. Readers see an event once its record is
//! durable.
//!
//! Errors: everything found before a two-frame reply starts is one typed
//! status-ERROR frame, except the errors the seed and the addendum give to
//! the JSON error envelope (`{"status":"ERROR","error":"<code> k=v…"}`, one
//! status-OK frame, no batch): READ_STREAM's `invalid_from_version` and
//! READ_STREAM_HISTORY's handler errors (`invalid_from_version`,
//! `invalid_to_version`, `invalid_max_records`, `invalid_max_bytes`,
//! `record_too_large`).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{Acks, Batch, CommandPayload, ErrorPayload, Record, RecordVersion};
use serde::Serialize;

use super::params::{number, partition_number, partition_of, required};
use super::{Durable, HandlerResult, Reply};
use crate::broker::{Broker, Listener};
use crate::eventsource::replay::payload_digest;
use crate::eventsource::{Entry, Snapshot, SnapshotStore};
use crate::placement::commit::{committed, Commit};
use crate::storage::{PartitionLog, StorageError, StoredRecord};
use crate::topics::definition::topic_param;
use crate::topics::partition::{blocking, storage_error};
use crate::topics::{Partition, Topic};

/// Attempts to find a live partition generation when a TRUNCATE or DELETE
/// races with an append or a snapshot.
const FENCE_RETRIES: usize = 3;

/// READ_STREAM `max_events` default and bounds.
pub const STREAM_DEFAULT_EVENTS: u64 = 256;
/// Largest READ_STREAM `max_events`.
pub const STREAM_MAX_EVENTS: u64 = 4096;
/// READ_STREAM `max_bytes` default (8 MiB).
pub const STREAM_DEFAULT_BYTES: u64 = 8 << 20;
/// Smallest READ_STREAM `max_bytes`.
pub const STREAM_MIN_BYTES: u64 = 1024;
/// Largest READ_STREAM `max_bytes` (32 MiB).
pub const STREAM_MAX_BYTES: u64 = 32 << 20;
/// BROWSE_MESSAGES / READ_STREAM_HISTORY `max_records` default.
pub const PAGE_DEFAULT_RECORDS: u64 = 100;
/// Largest BROWSE_MESSAGES / READ_STREAM_HISTORY `max_records`.
pub const PAGE_MAX_RECORDS: u64 = 1000;
/// BROWSE_MESSAGES / READ_STREAM_HISTORY `max_bytes` default (1 MiB).
pub const PAGE_DEFAULT_BYTES: u64 = 1 << 20;
/// Largest BROWSE_MESSAGES / READ_STREAM_HISTORY `max_bytes` (4 MiB).
pub const PAGE_MAX_BYTES: u64 = 4 << 20;
/// Fixed part of a record's page cost.
pub const RECORD_OVERHEAD: usize = 64;

/// A record's page cost: payload + key + metadata + event type + 64.
pub fn record_cost(r: &Record) -> usize {
    r.payload.len() + r.key.len() + r.metadata.len() + r.event_type.len() + RECORD_OVERHEAD
}

// ---------------------------------------------------------------- helpers

/// `key=`: `missing_key` when absent or empty.
fn key_param<'a>(p: &'a CommandPayload, command: &str) -> Result<&'a str, ErrorPayload> {
    required(p, "key", "missing_key", command)
}

/// `version=` of APPEND_STREAM and SAVE_SNAPSHOT: `missing_version`, or
/// `invalid_version` when not a positive integer.
fn version_param(p: &CommandPayload, command: &str) -> Result<u64, ErrorPayload> {
    let raw = required(p, "version", "missing_version", command)?;
    match raw.trim().parse::<u64>() {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(ErrorPayload::new("invalid_version").with_field("version", raw)),
    }
}

/// An optional integer field within `min..=max` (`default` when absent),
/// else `<code> <field>=<value>`.
fn bounded(
    p: &CommandPayload,
    field: &str,
    code: &str,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, ErrorPayload> {
    match p.get(field) {
        None => Ok(default),
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(ErrorPayload::new(code).with_field(field, raw)),
        },
    }
}

/// `from_version=`: 1 when absent; `invalid_from_version` when 0 or not a
/// number.
fn from_version_param(p: &CommandPayload) -> Result<u64, ErrorPayload> {
    bounded(p, "from_version", "invalid_from_version", 1, 1, u64::MAX)
}

/// The live event-sourcing topic `name`: `topic_not_found`,
/// or `event_sourcing_not_enabled` otherwise (access was checked by
/// `crate::auth` before the handler ran).
fn es_topic(broker: &Broker, name: &str) -> Result<Arc<Topic>, ErrorPayload> {
    let topic = broker
        .topics
        .get(name)
        .ok_or_else(|| broker.placement().missing_topic(name))?;
    if !topic.def.event_sourcing {
        return Err(ErrorPayload::new("event_sourcing_not_enabled").with_field("topic", name));
    }
    Ok(topic)
}

/// The partition aggregate `key` lives on.
/// In a cluster, only its leader serves it (`NOT_LEADER` elsewhere).
fn route(
    broker: &Broker,
    topic: &Topic,
    key: &str,
    listener: Listener,
) -> Result<Arc<Partition>, ErrorPayload> {
    let count = topic.partitions.len() as u32;
    if count == 0 {
        return Err(
            ErrorPayload::new("no_partitions_available").with_field("topic", &topic.def.name)
        );
    }
    let id = partition_for_key(key.as_bytes(), count);
    broker
        .placement()
        .check_leader(&topic.def.name, id, listener)?;
    partition_of(topic, id)
}

fn snapshot_store(topic: &Topic) -> Result<&Arc<SnapshotStore>, ErrorPayload> {
    topic.snapshots.as_ref().ok_or_else(|| {
        ErrorPayload::new("stream_index_failed")
            .with_field("topic", &topic.def.name)
            .with_field("reason", "no snapshot store")
    })
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The JSON error envelope of a two-frame exchange: one status-OK frame
/// `{"status":"ERROR","error":"<code> k=v …"}` and no batch.
fn envelope_error(e: &ErrorPayload) -> Reply {
    let mut text = e.code.clone();
    for (name, value) in &e.fields {
        text.push(' ');
        text.push_str(name);
        text.push('=');
        if value.is_empty() || value.chars().any(char::is_whitespace) {
            text.push_str(&serde_json::Value::String(value.clone()).to_string());
        } else {
            text.push_str(value);
        }
    }
    #[derive(Serialize)]
    struct ErrorEnvelope {
        status: &'static str,
        error: String,
    }
    let envelope = ErrorEnvelope {
        status: "ERROR",
        error: text,
    };
    // Serializing two strings cannot fail.
    Reply::Ok(Bytes::from(
        serde_json::to_vec(&envelope).unwrap_or_default(),
    ))
}

/// Unwraps a result, or answers with the JSON error envelope.
macro_rules! or_envelope {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Ok(envelope_error(&e)),
        }
    };
}

/// A two-frame reply: `envelope` as JSON, then a CBV2 batch (acks "1",
/// flags 0) of `records` for `topic`/`partition`.
fn two_frames(
    envelope: &impl Serialize,
    topic: &str,
    partition: u32,
    records: &[StoredRecord],
) -> HandlerResult {
    let json = serde_json::to_vec(envelope)
        .map_err(|e| ErrorPayload::new("marshal_failed").with_field("reason", e.to_string()))?;
    let header = Batch {
        acks: Acks::Leader,
        ..Batch::new(topic, partition as i32)
    };
    let size: usize = 64 + topic.len() + records.iter().map(|r| 4 + r.data.len()).sum::<usize>();
    let mut out = BytesMut::with_capacity(size);
    header
        .encode_with_raw_records(records.iter().map(|r| &r.data[..]), &mut out)
        .map_err(|e| ErrorPayload::new("marshal_failed").with_field("reason", e.to_string()))?;
    Ok(Reply::TwoFrames(Bytes::from(json), out.freeze()))
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One indexed event read back from the log.
struct Loaded {
    entry: Entry,
    /// The stored record, when it is there and matches the entry (same
    /// key and version).
    stored: Option<StoredRecord>,
    /// Page cost of the record (0 when missing).
    cost: usize,
}

/// Reads the records of `entries` (blocking), checking each against its
/// entry.
fn load_events(
    log: &PartitionLog,
    key: &str,
    entries: &[Entry],
) -> Result<Vec<Loaded>, StorageError> {
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let found = log
            .read(entry.offset, 1, usize::MAX)?
            .into_iter()
            .next()
            .filter(|s| s.offset == entry.offset);
        let checked = found.and_then(|stored| {
            let record = Record::decode(stored.data.clone()).ok()?;
            let matches = record.key == key.as_bytes() && record.aggregate_version == entry.version;
            matches.then(|| (record_cost(&record), stored))
        });
        out.push(match checked {
            Some((cost, stored)) => Loaded {
                entry: *entry,
                stored: Some(stored),
                cost,
            },
            None => Loaded {
                entry: *entry,
                stored: None,
                cost: 0,
            },
        });
    }
    Ok(out)
}

/// Entries of `key` on `partition` from version `from`: visible (durable)
/// and still retained, at most `limit`.
fn visible_entries(partition: &Partition, key: &str, from: u64, limit: usize) -> Vec<Entry> {
    let durable = partition.log().durable_offset();
    let earliest = partition.log().earliest_offset();
    let mut entries = partition.with_streams(|s| s.entries(key, from, durable, limit));
    entries.retain(|e| e.offset >= earliest);
    entries
}

async fn load(
    partition: &Partition,
    topic: &str,
    key: &str,
    entries: Vec<Entry>,
) -> Result<Vec<Loaded>, ErrorPayload> {
    let log = Arc::clone(partition.log());
    let key_owned = key.to_owned();
    blocking(move || load_events(&log, &key_owned, &entries))
        .await
        .map_err(|e| {
            ErrorPayload::new("partition_read_failed")
                .with_field("topic", topic)
                .with_field("partition", partition.id())
                .with_field("reason", e.to_string())
        })
}

// ---------------------------------------------------------- APPEND_STREAM

/// The replay identity of an APPEND_STREAM on an aggregate replay topic.
struct ReplayIdentity<'a> {
    event_id: &'a str,
    producer_id: &'a str,
    seq: u64,
    epoch: i64,
}

/// `event_id=`, `producerId=`, `seqNum=` (> 0) and `epoch=` (optional, ≥ 0)
/// of an append to an aggregate replay topic.
fn replay_identity<'a>(
    p: &'a CommandPayload,
    command: &str,
) -> Result<ReplayIdentity<'a>, ErrorPayload> {
    let event_id = required(p, "event_id", "missing_event_id", command)?;
    let producer_id = required(p, "producerId", "missing_producer_id", command)?;
    let seq = match p.get("seqNum").map(|v| v.trim().parse::<u64>()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            return Err(ErrorPayload::new("invalid_producer_sequence")
                .with_field("command", command)
                .with_field("seqNum", p.get("seqNum").unwrap_or("")))
        }
    };
    let epoch = match p.get("epoch") {
        None => 0,
        Some(raw) => match raw.trim().parse::<i64>() {
            Ok(e) if e >= 0 => e,
            _ => return Err(ErrorPayload::new("invalid_producer_epoch").with_field("epoch", raw)),
        },
    };
    Ok(ReplayIdentity {
        event_id,
        producer_id,
        seq,
        epoch,
    })
}

/// `stream_version_reserved topic= key= transactional_id=<owner>` when a
/// transaction holds `key`.
pub fn check_reservation(
    partition: &Partition,
    topic: &str,
    key: &str,
    own: Option<(&str, i64)>,
) -> Result<(), ErrorPayload> {
    let owner = partition.with_streams(|s| s.reservation(key).cloned());
    match owner {
        Some(r) if own != Some((r.producer_id.as_str(), r.epoch)) => {
            Err(ErrorPayload::new("stream_version_reserved")
                .with_field("topic", topic)
                .with_field("key", key)
                .with_field("transactional_id", r.transactional_id))
        }
        _ => Ok(()),
    }
}

/// The exact-retry check of a replay append of `version` ≤ the head: the
/// committed record at `version` must carry the same event id and payload
/// digest (then its offset is returned), else
/// `aggregate_identity_conflict sequence=<v>`.
async fn replay_retry(
    partition: &Partition,
    key: &str,
    version: u64,
    event_id: &str,
    digest: &str,
) -> Result<u64, ErrorPayload> {
    let unavailable = |reason: String| {
        ErrorPayload::new("aggregate_proof_unavailable")
            .with_field("key", key)
            .with_field("sequence", version)
            .with_field("reason", reason)
    };
    let Some(entry) = partition.with_streams(|s| s.entry_at(key, version)) else {
        return Err(unavailable("the event is no longer retained".into()));
    };
    let stored = partition
        .read(entry.offset, 1, usize::MAX)
        .await
        .map_err(|e| unavailable(e.to_string()))?
        .into_iter()
        .next()
        .filter(|s| s.offset == entry.offset)
        .ok_or_else(|| unavailable("the event record is missing".into()))?;
    let record = Record::decode(stored.data).map_err(|e| unavailable(e.to_string()))?;
    if record.event_id == event_id && record.payload_digest == digest {
        Ok(entry.offset)
    } else {
        Err(ErrorPayload::new("aggregate_identity_conflict").with_field("sequence", version))
    }
}

/// `APPEND_STREAM topic= key= version= [event_type=] [schema_version=]
/// [metadata=] [event_id=] [producerId= seqNum= [epoch=]] message=`:
/// appends the event as version `version` (which must be the current
/// version + 1), synced before the reply `OK version= offset= partition=`.
/// On an aggregate replay topic the event id and producer fields are
/// required and stored with the payload digest, and an exact retry of an
/// appended event answers its original offset. On any event-sourcing
/// topic a retry of version `v` whose `event_id` is the one stored at `v`
/// answers the original append too (the SDK sends a fresh id with every
/// event, so its retries are safe).
pub async fn append_stream(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "APPEND_STREAM";
    let name = topic_param(p, CMD)?;
    let key = key_param(p, CMD)?;
    let version = version_param(p, CMD)?;
    let message = required(p, "message", "missing_message", CMD)?;
    let schema_version: u32 = match p.get("schema_version") {
        None => 1,
        Some(raw) => raw.trim().parse().map_err(|_| {
            ErrorPayload::new("invalid_schema_version").with_field("schema_version", raw)
        })?,
    };
    let event_type = p.get("event_type").unwrap_or_default();
    let metadata = p.get("metadata").unwrap_or_default();
    for _ in 0..FENCE_RETRIES {
        let topic = es_topic(broker, name)?;
        let replay = if topic.def.aggregate_replay {
            Some(replay_identity(p, CMD)?)
        } else {
            None
        };
        let event_id = match &replay {
            Some(r) => r.event_id,
            None => p.get("event_id").unwrap_or_default(),
        };
        let digest = replay
            .as_ref()
            .map(|_| payload_digest(message.as_bytes()))
            .unwrap_or_default();
        let partition = route(broker, &topic, key, listener)?;
        let writer = partition.writer.lock().await;
        if partition.is_closed() {
            // A TRUNCATE or DELETE ended this generation.
            continue;
        }
        // A key reserved by a transaction (TXN_APPEND_STREAM) takes no
        // other append until that transaction is resolved.
        check_reservation(&partition, &topic.def.name, key, None)?;
        let current = partition.with_streams(|s| s.head(key));
        // An exact retry of an appended version (its reply was lost, or its
        // replication wait ended with a leadership move) answers the
        // original append: on a replay topic the stored event must match
        // (else aggregate_identity_conflict); elsewhere an event carrying
        // this event id must be the one stored at `version`.
        let retried = if version > current {
            None
        } else if replay.is_some() {
            Some(replay_retry(&partition, key, version, event_id, &digest).await?)
        } else if event_id.is_empty() {
            None
        } else {
            partition.with_streams(|s| {
                s.entry_at(key, version)
                    .map(|e| e.offset)
                    .filter(|offset| s.event_id_offset(event_id) == Some(*offset))
            })
        };
        if let Some(offset) = retried {
            drop(writer);
            return Ok(when_durable(
                broker,
                &partition,
                &topic.def.name,
                version,
                offset,
            ));
        }
        if replay.is_some() {
            let taken = partition.with_streams(|s| {
                s.event_id_offset(event_id).is_some() || s.event_id_pending(event_id)
            });
            if taken {
                return Err(ErrorPayload::new("aggregate_identity_conflict")
                    .with_field("event_id", event_id));
            }
        }
        if version != current + 1 {
            return Err(ErrorPayload::new("version_conflict")
                .with_field("current", current)
                .with_field("expected", version));
        }
        let offset = partition.log().log_end_offset();
        let timestamp = now_ms();
        let mut record = Record {
            topic: topic.def.name.clone(),
            partition: partition.id() as i32,
            offset,
            timestamp,
            payload: Bytes::copy_from_slice(message.as_bytes()),
            key: Bytes::copy_from_slice(key.as_bytes()),
            event_type: event_type.to_owned(),
            schema_version,
            aggregate_version: version,
            metadata: metadata.to_owned(),
            event_id: event_id.to_owned(),
            payload_digest: digest,
            ..Record::default()
        };
        if let Some(r) = &replay {
            record.producer_id = r.producer_id.to_owned();
            record.seq_num = r.seq;
            record.epoch = r.epoch;
        }
        let mut buf = BytesMut::new();
        record.encode(RecordVersion::V3, &mut buf).map_err(|e| {
            ErrorPayload::new("invalid_payload").with_field("reason", e.to_string())
        })?;
        super::deadline::point_of_no_return()?;
        let info = partition
            .append(vec![(timestamp, buf.freeze())])
            .await
            .map_err(|e| append_failed(&topic.def.name, partition.id(), &e))?;
        if info.base_offset != offset {
            return Err(ErrorPayload::new("append_stream_failed")
                .with_field("reason", "append offset mismatch")
                .with_field("expected", offset)
                .with_field("actual", info.base_offset));
        }
        partition.with_streams(|s| s.append_event(key, version, offset, event_id));
        drop(writer);
        return Ok(when_durable(
            broker,
            &partition,
            &topic.def.name,
            version,
            offset,
        ));
    }
    Err(broker.placement().generation_changed(name))
}

/// APPEND_STREAM's reply once `offset` is durable. The fsync starts now
/// (group commit shares it); the connection takes its next request
/// meanwhile, so a client appending to many aggregates at once does not
/// pay one fsync per append in turn.
/// In a cluster, once the in-sync replicas have the event too (an
/// acknowledged event survives a leader change).
fn when_durable(
    broker: &Broker,
    partition: &Arc<Partition>,
    topic: &str,
    version: u64,
    offset: u64,
) -> Reply {
    let partition = Arc::clone(partition);
    let topic = topic.to_owned();
    let placement = Arc::clone(&broker.mode().placement);
    let timeout = broker.config.request_timeout;
    let sync = tokio::spawn(async move {
        let id = partition.id();
        let local = async {
            partition
                .sync_to(offset)
                .await
                .map_err(|e| append_failed(&topic, id, &e))
        };
        let writes = [(id, offset)];
        committed(&*placement, &topic, &writes, local, Commit::InSync, timeout).await?;
        Ok(format!(
            "OK version={version} offset={offset} partition={id}"
        ))
    });
    Reply::Deferred(Durable(Box::pin(async move {
        match sync.await {
            Ok(Ok(line)) => Reply::text(line),
            Ok(Err(e)) => Reply::Error(e),
            Err(e) => Reply::Error(
                ErrorPayload::new("append_stream_failed").with_field("reason", e.to_string()),
            ),
        }
    })))
}

fn append_failed(topic: &str, partition: u32, e: &StorageError) -> ErrorPayload {
    match e {
        StorageError::Deleted { .. } => storage_error(topic, partition, e),
        other => ErrorPayload::new("append_stream_failed")
            .with_field("topic", topic)
            .with_field("partition", partition)
            .with_field("reason", other.to_string()),
    }
}

// --------------------------------------------------------- STREAM_VERSION

/// `STREAM_VERSION topic= key=`: `OK version=<N>` (0 for an aggregate
/// without events).
pub fn stream_version(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "STREAM_VERSION";
    let name = topic_param(p, CMD)?;
    let key = key_param(p, CMD)?;
    let topic = es_topic(broker, name)?;
    let partition = route(broker, &topic, key, listener)?;
    let durable = partition.log().durable_offset();
    let version = partition.with_streams(|s| s.visible_head(key, durable));
    Ok(Reply::text(format!("OK version={version}")))
}

// ---------------------------------------------------------- SAVE_SNAPSHOT

/// `SAVE_SNAPSHOT topic= key= version= message=`: stores the snapshot as
/// the aggregate's latest (durable before the reply `OK version=
/// partition=`); `version` must not exceed the stream's.
pub async fn save_snapshot(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "SAVE_SNAPSHOT";
    let name = topic_param(p, CMD)?;
    let key = key_param(p, CMD)?;
    let version = version_param(p, CMD)?;
    let message = required(p, "message", "missing_message", CMD)?;
    for _ in 0..FENCE_RETRIES {
        let topic = es_topic(broker, name)?;
        let partition = route(broker, &topic, key, listener)?;
        // The writer lock orders the snapshot with appends and with a
        // TRUNCATE, which clears the store after fencing every partition.
        let _writer = partition.writer.lock().await;
        if partition.is_closed() {
            continue;
        }
        let durable = partition.log().durable_offset();
        let current = partition.with_streams(|s| s.visible_head(key, durable));
        if version > current {
            return Err(ErrorPayload::new("snapshot_version_exceeds_stream")
                .with_field("version", version)
                .with_field("current", current));
        }
        let store = Arc::clone(snapshot_store(&topic)?);
        let (id, key_owned) = (partition.id(), key.to_owned());
        let snapshot = Snapshot {
            version,
            payload: message.to_owned(),
        };
        blocking(move || store.save(id, &key_owned, snapshot))
            .await
            .map_err(|e| {
                ErrorPayload::new("snapshot_save_failed")
                    .with_field("topic", name)
                    .with_field("reason", e.to_string())
            })?;
        drop(_writer);
        // Answered once the other in-sync replicas have it too.
        broker
            .placement()
            .replicate_snapshot(name, partition.id(), key, version, message)
            .await?;
        return Ok(Reply::text(format!(
            "OK version={version} partition={}",
            partition.id()
        )));
    }
    Err(broker.placement().generation_changed(name))
}

// ---------------------------------------------------------- READ_SNAPSHOT

/// `READ_SNAPSHOT topic= key=`: `OK snapshot={"version":N,"payload":"…"}`
/// or `OK snapshot=null`.
pub fn read_snapshot(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "READ_SNAPSHOT";
    let name = topic_param(p, CMD)?;
    let key = key_param(p, CMD)?;
    let topic = es_topic(broker, name)?;
    let partition = route(broker, &topic, key, listener)?;
    let snapshot = snapshot_store(&topic)?.get(partition.id(), key);
    let json = serde_json::to_string(&snapshot).map_err(|e| {
        ErrorPayload::new("marshal_snapshot_failed").with_field("reason", e.to_string())
    })?;
    Ok(Reply::text(format!("OK snapshot={json}")))
}

// ------------------------------------------------------------ READ_STREAM

#[derive(Serialize)]
struct StreamEnvelope<'a> {
    status: &'static str,
    topic: &'a str,
    key: &'a str,
    partition: u32,
    count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    snapshot: Option<&'a Snapshot>,
    has_more: bool,
    #[serde(skip_serializing_if = "is_zero")]
    next_version: u64,
}

/// `READ_STREAM topic= key= [from_version=] [max_events=] [max_bytes=]`:
/// the JSON envelope (with the latest snapshot when its version is at
/// least `from_version`; the events then start after it), then the events.
pub async fn read_stream(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "READ_STREAM";
    let name = topic_param(p, CMD)?;
    let key = key_param(p, CMD)?;
    let topic = es_topic(broker, name)?;
    let from = or_envelope!(from_version_param(p));
    let max_events = bounded(
        p,
        "max_events",
        "invalid_max_events",
        STREAM_DEFAULT_EVENTS,
        1,
        STREAM_MAX_EVENTS,
    )? as usize;
    let max_bytes = bounded(
        p,
        "max_bytes",
        "invalid_max_bytes",
        STREAM_DEFAULT_BYTES,
        STREAM_MIN_BYTES,
        STREAM_MAX_BYTES,
    )? as usize;
    let partition = route(broker, &topic, key, listener)?;
    let snapshot = snapshot_store(&topic)?
        .get(partition.id(), key)
        .filter(|s| s.version >= from);
    let start = snapshot.as_ref().map_or(from, |s| s.version + 1);
    // One more than the page to learn whether more follow.
    let mut entries = visible_entries(&partition, key, start, max_events + 1);
    let more_entries = entries.len() > max_events;
    entries.truncate(max_events);
    let loaded = load(&partition, &topic.def.name, key, entries).await?;
    let mut records = Vec::with_capacity(loaded.len());
    let mut bytes = 0usize;
    let mut cut = false;
    for l in &loaded {
        let Some(stored) = &l.stored else {
            return Err(ErrorPayload::new("stream_index_record_mismatch")
                .with_field("topic", &topic.def.name)
                .with_field("key", key)
                .with_field("version", l.entry.version)
                .with_field("offset", l.entry.offset));
        };
        if bytes + l.cost > max_bytes {
            if records.is_empty() {
                return Err(ErrorPayload::new("event_exceeds_page_budget")
                    .with_field("version", l.entry.version)
                    .with_field("size", l.cost)
                    .with_field("max_bytes", max_bytes));
            }
            cut = true;
            break;
        }
        bytes += l.cost;
        records.push(stored.clone());
    }
    let has_more = cut || more_entries;
    let next_version = if has_more {
        loaded
            .get(records.len().saturating_sub(1))
            .map_or(start, |l| l.entry.version + 1)
    } else {
        0
    };
    let envelope = StreamEnvelope {
        status: "OK",
        topic: &topic.def.name,
        key,
        partition: partition.id(),
        count: records.len(),
        snapshot: snapshot.as_ref(),
        has_more,
        next_version,
    };
    two_frames(&envelope, &topic.def.name, partition.id(), &records)
}

// ---------------------------------------------------- READ_STREAM_HISTORY

#[derive(Serialize)]
struct HistoryEnvelope<'a> {
    status: &'static str,
    topic: &'a str,
    key: &'a str,
    partition: u32,
    #[serde(skip_serializing_if = "is_zero")]
    next_version: u64,
    head_version: u64,
    completeness: &'static str,
    has_more: bool,
}

/// `READ_STREAM_HISTORY topic= key= [from_version=] [to_version=]
/// [max_records=] [max_bytes=]`: the original events (no snapshot) in
/// version order, each verified against the log, with a completeness
/// verdict (`complete`, `partial`, `unknown`).
pub async fn read_stream_history(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "READ_STREAM_HISTORY";
    let name = topic_param(p, CMD)?;
    let key = key_param(p, CMD)?;
    let topic = es_topic(broker, name)?;
    let from = or_envelope!(from_version_param(p));
    let max_records = or_envelope!(bounded(
        p,
        "max_records",
        "invalid_max_records",
        PAGE_DEFAULT_RECORDS,
        1,
        PAGE_MAX_RECORDS,
    )) as usize;
    let max_bytes = or_envelope!(bounded(
        p,
        "max_bytes",
        "invalid_max_bytes",
        PAGE_DEFAULT_BYTES,
        1,
        PAGE_MAX_BYTES,
    )) as usize;
    let partition = route(broker, &topic, key, listener)?;
    let durable = partition.log().durable_offset();
    let head = partition.with_streams(|s| s.visible_head(key, durable));
    let to = match p.get("to_version") {
        None => head,
        Some(raw) => {
            let to = or_envelope!(number::<u64>(raw, "to_version", "invalid_to_version"));
            if to < from || to > head {
                return Ok(envelope_error(
                    &ErrorPayload::new("invalid_to_version")
                        .with_field("to_version", raw)
                        .with_field("from_version", from)
                        .with_field("head_version", head),
                ));
            }
            to
        }
    };
    let mut envelope = HistoryEnvelope {
        status: "OK",
        topic: &topic.def.name,
        key,
        partition: partition.id(),
        next_version: 0,
        head_version: head,
        completeness: "complete",
        has_more: false,
    };
    if to < from {
        // Nothing asked for (an aggregate without events): complete.
        return two_frames(&envelope, &topic.def.name, partition.id(), &[]);
    }
    let mut entries = visible_entries(&partition, key, from, max_records + 1);
    entries.retain(|e| e.version <= to);
    if entries.is_empty() {
        // Versions exist but the index holds none of them (retention).
        envelope.completeness = "unknown";
        return two_frames(&envelope, &topic.def.name, partition.id(), &[]);
    }
    let loaded = load(&partition, &topic.def.name, key, entries).await?;
    let mut records = Vec::with_capacity(loaded.len());
    let mut expected = from;
    let mut bytes = 0usize;
    let mut limited = false;
    let mut partial = false;
    for l in &loaded {
        if l.entry.version != expected {
            partial = true;
            break;
        }
        if records.len() == max_records {
            limited = true;
            break;
        }
        let Some(stored) = &l.stored else {
            partial = true;
            break;
        };
        if bytes + l.cost > max_bytes {
            if records.is_empty() {
                return Ok(envelope_error(
                    &ErrorPayload::new("record_too_large")
                        .with_field("version", l.entry.version)
                        .with_field("offset", l.entry.offset),
                ));
            }
            limited = true;
            break;
        }
        bytes += l.cost;
        records.push(stored.clone());
        expected += 1;
    }
    if !partial && !limited && expected <= to && records.len() < max_records {
        // The index ran out before `to` with no limit reached.
        partial = true;
    } else if !partial && !limited && expected <= to {
        // The record limit was reached exactly; more versions follow.
        limited = true;
    }
    if partial {
        envelope.completeness = "partial";
    } else if limited {
        envelope.next_version = expected;
        envelope.has_more = expected <= to;
    }
    two_frames(&envelope, &topic.def.name, partition.id(), &records)
}

// -------------------------------------------------------- BROWSE_MESSAGES

#[derive(Serialize)]
struct BrowseEnvelope<'a> {
    status: &'static str,
    topic: &'a str,
    partition: u32,
    next_offset: u64,
    earliest_offset: u64,
    readable_end_offset: u64,
    has_more: bool,
}

/// `BROWSE_MESSAGES topic= partition= from_offset= [to_offset=]
/// [max_records=] [max_bytes=]`: committed records of any topic from
/// `from_offset` up to the last stable offset (or `to_offset`), without
/// touching groups or offsets.
pub async fn browse_messages(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "BROWSE_MESSAGES";
    let name = topic_param(p, CMD)?;
    let id = partition_number(required(p, "partition", "missing_partition", CMD)?, CMD)?;
    let from: u64 = number(
        required(p, "from_offset", "missing_from_offset", CMD)?,
        "from_offset",
        "invalid_from_offset",
    )?;
    let max_records = bounded(
        p,
        "max_records",
        "invalid_max_records",
        PAGE_DEFAULT_RECORDS,
        1,
        PAGE_MAX_RECORDS,
    )? as usize;
    let max_bytes = bounded(
        p,
        "max_bytes",
        "invalid_max_bytes",
        PAGE_DEFAULT_BYTES,
        1,
        PAGE_MAX_BYTES,
    )? as usize;
    let topic = broker
        .topics
        .get(name)
        .ok_or_else(|| broker.placement().missing_topic(name))?;
    broker
        .placement()
        .check_leader(&topic.def.name, id, listener)?;
    let partition = topic.partition(id).cloned().ok_or_else(|| {
        ErrorPayload::new("partition_not_found")
            .with_field("topic", name)
            .with_field("partition", id)
    })?;
    let to = match p.get("to_offset") {
        None => None,
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(t) if t >= from => Some(t),
            _ => {
                return Err(ErrorPayload::new("invalid_to_offset")
                    .with_field("to_offset", raw)
                    .with_field("from_offset", from))
            }
        },
    };
    let stable = partition.stable_offset();
    let readable_end = to.map_or(stable, |t| t.min(stable));
    let earliest = partition.log().earliest_offset().min(stable);
    let mut envelope = BrowseEnvelope {
        status: "OK",
        topic: &topic.def.name,
        partition: id,
        next_offset: readable_end,
        earliest_offset: earliest,
        readable_end_offset: readable_end,
        has_more: false,
    };
    if from >= readable_end {
        return two_frames(&envelope, &topic.def.name, id, &[]);
    }
    let range_error = || {
        ErrorPayload::new("range_error")
            .with_field("requested", from)
            .with_field("earliest", earliest)
            .with_field("latest", readable_end)
    };
    if from < earliest {
        return Err(range_error());
    }
    let mut records: Vec<StoredRecord> = Vec::new();
    let mut bytes = 0usize;
    let mut cut = false;
    let mut next = from;
    'scan: while next < readable_end && records.len() < max_records {
        let room = max_records - records.len();
        let (chunk, reached) = partition
            .read_committed(next, room, super::consume::MAX_FETCH_BYTES)
            .await
            .map_err(|_| range_error())?;
        for stored in chunk {
            if stored.offset >= readable_end {
                break 'scan;
            }
            let record = Record::decode(stored.data.clone()).map_err(|e| {
                ErrorPayload::new("partition_read_failed")
                    .with_field("offset", stored.offset)
                    .with_field("reason", e.to_string())
            })?;
            let cost = record_cost(&record);
            if bytes + cost > max_bytes {
                if records.is_empty() {
                    return Err(ErrorPayload::new("record_too_large")
                        .with_field("offset", stored.offset)
                        .with_field("size", cost)
                        .with_field("max_bytes", max_bytes));
                }
                cut = true;
                break 'scan;
            }
            bytes += cost;
            records.push(stored);
            if records.len() == max_records {
                break 'scan;
            }
        }
        if reached <= next {
            break;
        }
        next = reached;
    }
    if let Some(last) = records.last() {
        if cut || records.len() == max_records {
            envelope.next_offset = last.offset + 1;
        }
    }
    envelope.has_more = envelope.next_offset < readable_end;
    two_frames(&envelope, &topic.def.name, id, &records)
}
