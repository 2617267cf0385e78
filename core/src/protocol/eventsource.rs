//! Event-sourcing requests and replies: APPEND_STREAM, READ_STREAM,
//! STREAM_VERSION, SAVE_SNAPSHOT, READ_SNAPSHOT, BROWSE_MESSAGES and
//! READ_STREAM_HISTORY (seed "Event Sourcing Commands", the addendum,
//! `docs/event-sourcing.md`).

use super::reply::OkReply;
use crate::error::{Error, Result};
use crate::wire::{Batch, ErrorPayload, Record};
use bytes::Bytes;
use serde::Deserialize;

/// A snapshot: aggregate state as of `version`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Snapshot {
    /// The aggregate version the state includes.
    pub version: u64,
    /// The serialised state.
    pub payload: String,
}

/// One stored event (or, for browse, any record) with every field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Offset in the partition.
    pub offset: u64,
    /// Aggregate key (empty for a record without one).
    pub key: Bytes,
    /// Version in the aggregate's stream (0 for a record that is no event).
    pub version: u64,
    /// Event type.
    pub event_type: String,
    /// Schema version of the payload.
    pub schema_version: u32,
    /// Metadata text.
    pub metadata: String,
    /// Payload.
    pub payload: Bytes,
    /// Milliseconds since the epoch (0 when unknown).
    pub timestamp: i64,
}

impl From<Record> for StoredEvent {
    fn from(r: Record) -> StoredEvent {
        StoredEvent {
            topic: r.topic,
            partition: u32::try_from(r.partition).unwrap_or_default(),
            offset: r.offset,
            key: r.key,
            version: r.aggregate_version,
            event_type: r.event_type,
            schema_version: r.schema_version,
            metadata: r.metadata,
            payload: r.payload,
            timestamp: r.timestamp,
        }
    }
}

/// Where an APPEND_STREAM stored its event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// The event's version.
    pub version: u64,
    /// Its offset.
    pub offset: u64,
    /// Its partition.
    pub partition: u32,
}

impl Appended {
    /// Reads `OK version= offset= partition=`.
    pub fn from_reply(r: &OkReply) -> Result<Appended> {
        Ok(Appended {
            version: r.parse_field("version")?,
            offset: r.parse_field("offset")?,
            partition: r.parse_field("partition")?,
        })
    }
}

/// Reads `OK snapshot=<json>|null` (the JSON taken whole: a state may hold
/// spaces).
pub fn snapshot_from_reply(reply: &[u8]) -> Result<Option<Snapshot>> {
    super::reply::json_after(reply, "snapshot")
}

/// Fails with the typed error a JSON envelope carries
/// (`{"status":"ERROR","error":"<code> k=v …"}`).
fn envelope_error(envelope: &[u8]) -> Option<Error> {
    #[derive(Deserialize)]
    struct Status {
        status: String,
        #[serde(default)]
        error: String,
    }
    let s: Status = serde_json::from_slice(envelope).ok()?;
    if !s.status.eq_ignore_ascii_case("error") {
        return None;
    }
    Some(
        ErrorPayload::from_error_text(&format!("ERROR: {}", s.error))
            .map(Error::from)
            .unwrap_or_else(|| {
                Error::protocol(format!("error envelope without a code: {:?}", s.error))
            }),
    )
}

/// Parses a two-frame reply: the envelope as `T`, and the batch's records.
pub fn two_frames<T: for<'de> Deserialize<'de>>(
    envelope: &Bytes,
    batch: Option<Bytes>,
) -> Result<(T, Vec<StoredEvent>)> {
    if let Some(e) = envelope_error(envelope) {
        return Err(e);
    }
    let head: T = serde_json::from_slice(envelope)
        .map_err(|e| Error::protocol(format!("bad reply envelope: {e}")))?;
    let batch = batch.ok_or_else(|| Error::protocol("reply envelope without its batch"))?;
    let events = Batch::decode(batch)?
        .records
        .into_iter()
        .map(StoredEvent::from)
        .collect();
    Ok((head, events))
}

/// READ_STREAM frame 1.
#[derive(Debug, Deserialize)]
pub struct StreamEnvelope {
    /// Partition of the aggregate.
    pub partition: u32,
    /// The latest snapshot at or after `from_version`.
    #[serde(default)]
    pub snapshot: Option<Snapshot>,
    /// More events follow this page.
    #[serde(default)]
    pub has_more: bool,
    /// The version to ask for next (0: none).
    #[serde(default)]
    pub next_version: u64,
}

/// BROWSE_MESSAGES frame 1.
#[derive(Debug, Deserialize)]
pub struct BrowseEnvelope {
    /// The offset to ask for next.
    pub next_offset: u64,
    /// The partition's earliest offset.
    pub earliest_offset: u64,
    /// The end of what is readable (committed, transaction-resolved).
    pub readable_end_offset: u64,
    /// More records follow.
    pub has_more: bool,
}

/// READ_STREAM_HISTORY frame 1.
#[derive(Debug, Deserialize)]
pub struct HistoryEnvelope {
    /// Partition of the aggregate.
    pub partition: u32,
    /// The version to ask for next (0: none).
    #[serde(default)]
    pub next_version: u64,
    /// The aggregate's current version.
    pub head_version: u64,
    /// `complete`, `partial` or `unknown`.
    pub completeness: String,
    /// More events follow.
    pub has_more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_envelope_is_a_typed_error() {
        let e =
            envelope_error(br#"{"status":"ERROR","error":"invalid_from_version from_version=0"}"#)
                .unwrap();
        assert_eq!(e.code(), "invalid_from_version");
        assert_eq!(e.field("from_version"), Some("0"));
        assert!(envelope_error(br#"{"status":"OK","partition":1}"#).is_none());
        let r: Result<(StreamEnvelope, _)> = two_frames(
            &Bytes::from_static(br#"{"status":"ERROR","error":"stream_index_failed"}"#),
            None,
        );
        assert_eq!(r.unwrap_err().code(), "stream_index_failed");
    }

    #[test]
    fn snapshots_parse_or_are_null() {
        let r = br#"OK snapshot={"version":5,"payload":"{\"a\": 1, \"b\": 2}"}"#;
        assert_eq!(
            snapshot_from_reply(r).unwrap(),
            Some(Snapshot {
                version: 5,
                payload: r#"{"a": 1, "b": 2}"#.into()
            })
        );
        assert_eq!(snapshot_from_reply(b"OK snapshot=null").unwrap(), None);
        assert!(snapshot_from_reply(b"OK version=1").is_err());
    }

    #[test]
    fn stream_envelope_reads_optional_fields() {
        let (head, events): (StreamEnvelope, _) = {
            let mut batch = Batch::new("t", 1);
            batch.records.push(Record {
                topic: "t".into(),
                partition: 1,
                offset: 7,
                payload: Bytes::from_static(b"e"),
                key: Bytes::from_static(b"a"),
                aggregate_version: 3,
                event_type: "Created".into(),
                ..Default::default()
            });
            two_frames(
                &Bytes::from_static(
                    br#"{"status":"OK","topic":"t","key":"a","partition":1,"count":1}"#,
                ),
                Some(
                    batch
                        .to_bytes(crate::wire::RecordVersionPolicy::Minimal)
                        .unwrap(),
                ),
            )
            .unwrap()
        };
        assert_eq!(head.partition, 1);
        assert!(head.snapshot.is_none() && !head.has_more && head.next_version == 0);
        assert_eq!(events[0].version, 3);
        assert_eq!(events[0].event_type, "Created");
    }
}
