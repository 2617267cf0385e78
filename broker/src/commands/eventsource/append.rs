//! APPEND_STREAM: the version check against the partition's stream index,
//! the append under the partition's writer lock, exact retries, and the
//! reply once the event is committed.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use cursus_wire::{CommandPayload, ErrorPayload, Record, RecordVersion};

use super::{es_topic, key_param, now_ms, route, version_param, FENCE_RETRIES};
use crate::broker::{Broker, Listener};
use crate::commands::params::required;
use crate::commands::{Durable, HandlerResult, Reply};
use crate::eventsource::check_reservation;
use crate::eventsource::replay::payload_digest;
use crate::placement::commit::{committed, Commit, Written};
use crate::storage::StorageError;
use crate::topics::definition::topic_param;
use crate::topics::partition::storage_error;
use crate::topics::Partition;

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
        crate::commands::deadline::point_of_no_return()?;
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
        let writes = [Written::at(&partition, offset)];
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
