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
//!
//! * [`append`] — APPEND_STREAM;
//! * [`snapshot`] — SAVE_SNAPSHOT and READ_SNAPSHOT;
//! * [`read`] — READ_STREAM, READ_STREAM_HISTORY and STREAM_VERSION;
//! * [`browse`] — BROWSE_MESSAGES.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{Acks, Batch, CommandPayload, ErrorPayload, Record};
use serde::Serialize;

use super::params::{partition_of, required};
use super::{HandlerResult, Reply};
use crate::broker::{Broker, Listener};
use crate::eventsource::SnapshotStore;
use crate::storage::StoredRecord;
use crate::topics::definition::topic_param;
use crate::topics::{Partition, Topic};

/// Unwraps a result, or answers with the JSON error envelope.
macro_rules! or_envelope {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Ok(envelope_error(&e)),
        }
    };
}

pub mod append;
pub mod browse;
pub mod read;
pub mod snapshot;

pub use append::{append_stream, append_stream_pipelined};
pub use browse::browse_messages;
pub use read::{read_stream, read_stream_history, stream_version};
pub use snapshot::{read_snapshot, save_snapshot};

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

/// The event-sourcing topic and aggregate key a read names (`topic=`,
/// `key=`).
fn aggregate<'a>(
    broker: &Broker,
    p: &'a CommandPayload,
    command: &str,
) -> Result<(Arc<Topic>, &'a str), ErrorPayload> {
    let name = topic_param(p, command)?;
    let key = key_param(p, command)?;
    Ok((es_topic(broker, name)?, key))
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
