//! PUBLISH, as a text command (`message=`) or a CBV2 batch.
//!
//! Records are routed (explicit partition, key hash or round robin),
//! checked against the idempotent-producer state, re-encoded as version-3
//! records carrying their real offset (and the append time when the producer
//! set no timestamp), appended and,
//! for acks=1/all, made durable before the AckResponse is sent. acks=0 gets
//! no frame at all, not even for an error (§8.7).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{
    Acks, Batch, CommandPayload, ControlBatchType, ErrorPayload, Record, RecordVersion,
    TransactionMarker, TransactionState,
};
use serde::Serialize;

use super::params::{chosen_partition, optional_number, required};
use super::{Durable, HandlerResult, Reply};
use crate::broker::{Broker, Listener};
use crate::placement::commit::{committed, Commit, Written};
use crate::storage::Partitioner;
use crate::topics::definition::{parse_bool, topic_param};
use crate::topics::partition::{checkpoint_producers, storage_error};
use crate::topics::{effective_min_isr, is_internal_topic, Partition, SeqCheck, Topic};

/// Attempts to find a live partition generation when a TRUNCATE or DELETE
/// races with the append.
const FENCE_RETRIES: usize = 3;

/// Text fields that only the transaction coordinator may set.
const TRANSACTION_FIELDS: [&str; 3] = [
    "transactional_id",
    "transaction_state",
    "transaction_marker",
];

/// Durability a publisher asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckMode {
    /// acks=0: no response frame.
    None,
    /// acks=1: durable leader append.
    Leader,
    /// acks=-1/all: every in-sync replica (the leader alone in standalone).
    All,
}

impl AckMode {
    /// Parses the text `acks=` value (trimmed, case-insensitive); absent or
    /// empty means 1.
    pub fn from_text(value: Option<&str>) -> Result<AckMode, ErrorPayload> {
        let Some(raw) = value else {
            return Ok(AckMode::Leader);
        };
        match raw.trim().to_ascii_lowercase().as_str() {
            "" | "1" => Ok(AckMode::Leader),
            "0" => Ok(AckMode::None),
            "-1" | "all" => Ok(AckMode::All),
            _ => Err(ErrorPayload::new("invalid_acks").with_field("acks", raw)),
        }
    }

    fn from_batch(acks: Acks) -> AckMode {
        match acks {
            Acks::Default | Acks::Leader => AckMode::Leader,
            Acks::None => AckMode::None,
            Acks::MinusOne | Acks::All => AckMode::All,
        }
    }
}

/// A publish request after parsing, common to text and batch forms.
struct PublishInput {
    topic: String,
    partition: Option<u32>,
    acks: AckMode,
    /// The request asked for idempotence (isIdempotent / batch flag).
    idempotent: bool,
    records: Vec<Record>,
    producer_id: String,
    producer_epoch: i64,
    seq_start: u64,
    seq_end: u64,
}

/// The AckResponse JSON, fields in the documented order.
#[derive(Serialize)]
struct AckResponse<'a> {
    status: &'static str,
    last_offset: u64,
    producer_id: &'a str,
    producer_epoch: i64,
    seq_start: u64,
    seq_end: u64,
    leader: &'a str,
}

/// Text PUBLISH.
pub async fn publish_text(broker: &Arc<Broker>, p: &CommandPayload, listener: Listener) -> Reply {
    let silent = p
        .get("acks")
        .is_some_and(|a| a.trim().eq_ignore_ascii_case("0"));
    let result = match parse_text(p) {
        Ok(input) => publish(broker, input, listener).await,
        Err(e) => Err(e),
    };
    finish(result, silent)
}

/// Batch PUBLISH (already decoded by the connection).
pub async fn publish_batch(broker: &Arc<Broker>, batch: Batch, listener: Listener) -> Reply {
    let silent = batch.acks == Acks::None;
    let result = match parse_batch(batch) {
        Ok(input) => publish(broker, input, listener).await,
        Err(e) => Err(e),
    };
    finish(result, silent)
}

fn finish(result: HandlerResult, silent: bool) -> Reply {
    if silent {
        if let Err(e) = &result {
            tracing::debug!(error = %e, "acks=0 publish failed; no response is sent");
        }
        return Reply::Silent;
    }
    result.unwrap_or_else(Reply::Error)
}

fn parse_text(p: &CommandPayload) -> Result<PublishInput, ErrorPayload> {
    let topic = topic_param(p, "PUBLISH")?.to_owned();
    if TRANSACTION_FIELDS.iter().any(|f| p.get(f).is_some()) {
        return Err(forbidden_txn());
    }
    let acks = AckMode::from_text(p.get("acks"))?;
    let producer_id = required(p, "producerId", "missing_producer_id", "PUBLISH")?.to_owned();
    let message = required(p, "message", "missing_message", "PUBLISH")?;
    let seq: u64 = optional_number(p, "seqNum", "invalid_seq_num")?.unwrap_or(0);
    let epoch: i64 = optional_number(p, "epoch", "invalid_epoch")?.unwrap_or(0);
    let idempotent = match p.get("isIdempotent") {
        None => false,
        Some(v) => parse_bool(v).ok_or_else(|| {
            ErrorPayload::new("invalid_is_idempotent").with_field("isIdempotent", v)
        })?,
    };
    let partition = chosen_partition(p, "PUBLISH")?;
    let record = Record {
        payload: Bytes::copy_from_slice(message.as_bytes()),
        key: p
            .get("key")
            .map(|k| Bytes::copy_from_slice(k.as_bytes()))
            .unwrap_or_default(),
        producer_id: producer_id.clone(),
        seq_num: seq,
        epoch,
        ..Default::default()
    };
    Ok(PublishInput {
        topic,
        partition,
        acks,
        idempotent,
        records: vec![record],
        producer_id,
        producer_epoch: epoch,
        seq_start: seq,
        seq_end: seq,
    })
}

fn parse_batch(batch: Batch) -> Result<PublishInput, ErrorPayload> {
    if batch.topic.is_empty() {
        return Err(ErrorPayload::new("missing_topic").with_field("command", "PUBLISH"));
    }
    if !crate::topics::is_valid_topic_name(&batch.topic) {
        return Err(ErrorPayload::new("invalid_topic_name").with_field("topic", &batch.topic));
    }
    let carries_txn = |r: &Record| {
        !r.transactional_id.is_empty()
            || r.transaction_state != TransactionState::None
            || r.transaction_marker != TransactionMarker::None
            || r.control_batch_type != ControlBatchType::None
    };
    if batch.records.iter().any(carries_txn) {
        return Err(forbidden_txn());
    }
    let (first, last) = match (batch.records.first(), batch.records.last()) {
        (Some(f), Some(l)) => (f, l),
        _ => {
            return Err(ErrorPayload::new("empty_messages")
                .with_field("command", "PUBLISH")
                .with_field("topic", &batch.topic))
        }
    };
    let (seq_start, seq_end) = if batch.batch_start != 0 {
        (batch.batch_start, batch.batch_end)
    } else {
        (first.seq_num, last.seq_num)
    };
    Ok(PublishInput {
        partition: u32::try_from(batch.partition).ok(),
        acks: AckMode::from_batch(batch.acks),
        idempotent: batch.idempotent,
        producer_id: first.producer_id.clone(),
        producer_epoch: first.epoch,
        seq_start,
        seq_end,
        topic: batch.topic,
        records: batch.records,
    })
}

fn forbidden_txn() -> ErrorPayload {
    ErrorPayload::new("transaction_metadata_forbidden").with_field("command", "PUBLISH")
}

async fn publish(broker: &Arc<Broker>, input: PublishInput, listener: Listener) -> HandlerResult {
    if is_internal_topic(&input.topic) {
        return Err(ErrorPayload::new("internal_topic_write_forbidden")
            .with_field("command", "PUBLISH")
            .with_field("topic", &input.topic));
    }
    let topic = broker
        .topics
        .get(&input.topic)
        .ok_or_else(|| broker.placement().missing_topic(&input.topic))?;
    if topic.def.aggregate_replay {
        // Every event of a replay topic carries its identity (event id,
        // digest, sequence): only APPEND_STREAM writes them.
        return Err(
            ErrorPayload::new("aggregate_publish_requires_append_stream")
                .with_field("topic", &topic.def.name),
        );
    }
    if topic.def.event_sourcing && input.records.iter().any(|r| r.aggregate_version != 0) {
        // Stream versions are assigned by APPEND_STREAM only; a published
        // record claiming one would enter the stream index at the next
        // restart without having been checked.
        return Err(ErrorPayload::new("invalid_aggregate_version")
            .with_field("topic", &topic.def.name)
            .with_field("reason", "use_append_stream"));
    }
    if input.idempotent && input.acks != AckMode::All {
        return Err(ErrorPayload::new("invalid_acks")
            .with_field(
                "acks",
                if input.acks == AckMode::None {
                    "0"
                } else {
                    "1"
                },
            )
            .with_field("reason", "idempotent_requires_acks_all"));
    }
    let min_isr = effective_min_isr(&topic.def, broker.config.min_insync_replicas);
    if input.idempotent && input.records.iter().any(|r| r.producer_id.is_empty()) {
        return Err(ErrorPayload::new("missing_producer_id").with_field("command", "PUBLISH"));
    }
    let groups = route(&topic, input.partition, input.records)?;
    let placement = broker.placement();
    for id in groups.keys().copied() {
        placement.check_leader(&topic.def.name, id, listener)?;
        // The ISR the acknowledgement waits for: this broker alone in
        // standalone mode, the partition's ISR in a cluster.
        let isr = placement.in_sync_replicas(&topic.def.name, id);
        if input.acks == AckMode::All && (isr as u32) < min_isr {
            return Err(ErrorPayload::new("insufficient_in_sync_replicas")
                .with_field("topic", &topic.def.name)
                .with_field("isr", isr)
                .with_field("min_in_sync_replicas", min_isr));
        }
    }

    let dedup = input.idempotent || topic.def.idempotent;
    let mut last = None;
    let mut to_sync = Vec::with_capacity(groups.len());
    for (id, (order_last, records)) in groups {
        let (partition, offset) = append_group(broker, &topic.def.name, id, records, dedup).await?;
        to_sync.push((Arc::clone(&partition), offset));
        if last.map_or(true, |(o, _)| order_last > o) {
            last = Some((order_last, offset));
        }
    }
    if input.acks == AckMode::None {
        // No guarantee, but make the data durable (and readable) promptly.
        for (partition, _) in &to_sync {
            partition.schedule_flush();
        }
        return Ok(Reply::Silent);
    }
    // Acknowledged once durable. The connection takes its next request
    // meanwhile (replies still go out in order), so the appends of one
    // connection's pipelined batches share fsyncs instead of each waiting
    // for the one before it.
    let topic_name = topic.def.name.clone();
    let last_offset = last.map_or(0, |(_, o)| o);
    let leader = broker.advertised_to(listener).to_owned();
    let (producer_id, producer_epoch) = (input.producer_id, input.producer_epoch);
    let (seq_start, seq_end) = (input.seq_start, input.seq_end);
    // acks=all: also held by the partitions' in-sync replicas.
    let level = match input.acks {
        AckMode::All => Commit::InSync,
        _ => Commit::Local,
    };
    let placement = Arc::clone(&broker.mode().placement);
    let commit_timeout = broker.config.request_timeout;
    Ok(Reply::Deferred(Durable(Box::pin(async move {
        let writes: Vec<Written> = to_sync.iter().map(|(p, o)| Written::at(p, *o)).collect();
        let local = async {
            for (partition, offset) in &to_sync {
                partition
                    .sync_to(*offset)
                    .await
                    .map_err(|e| storage_error(&topic_name, partition.id(), &e))?;
            }
            Ok(())
        };
        let done = committed(
            &*placement,
            &topic_name,
            &writes,
            local,
            level,
            commit_timeout,
        );
        if let Err(e) = done.await {
            return Reply::Error(e);
        }
        let ack = AckResponse {
            status: "OK",
            last_offset,
            producer_id: &producer_id,
            producer_epoch,
            seq_start,
            seq_end,
            leader: &leader,
        };
        match serde_json::to_vec(&ack) {
            Ok(json) => Reply::Ok(Bytes::from(json)),
            Err(e) => Reply::Error(
                ErrorPayload::new("marshal_ack_failed").with_field("reason", e.to_string()),
            ),
        }
    }))))
}

/// Groups records by target partition, keeping their order. Each group is
/// keyed by the index of its last record so the ack can report the offset of
/// the request's last record.
fn route(
    topic: &Topic,
    explicit: Option<u32>,
    records: Vec<Record>,
) -> Result<BTreeMap<u32, (usize, Vec<Record>)>, ErrorPayload> {
    let count = topic.partitions.len() as u32;
    let mut groups: BTreeMap<u32, (usize, Vec<Record>)> = BTreeMap::new();
    for (i, record) in records.into_iter().enumerate() {
        let id = match explicit {
            Some(id) if id >= count => {
                return Err(ErrorPayload::new("partition_not_found")
                    .with_field("topic", &topic.def.name)
                    .with_field("partition", id))
            }
            Some(id) => id,
            None if topic.def.partitioner == Partitioner::HashKey && !record.key.is_empty() => {
                partition_for_key(&record.key, count)
            }
            None => topic.next_round_robin(),
        };
        let entry = groups.entry(id).or_insert_with(|| (i, Vec::new()));
        entry.0 = i;
        entry.1.push(record);
    }
    Ok(groups)
}

/// Appends one partition's records under its writer lock; returns the
/// partition and the offset to acknowledge (the last appended record, or the
/// producer's recorded offset when everything was a duplicate).
async fn append_group(
    broker: &Arc<Broker>,
    topic_name: &str,
    id: u32,
    mut records: Vec<Record>,
    dedup: bool,
) -> Result<(Arc<Partition>, u64), ErrorPayload> {
    for _ in 0..FENCE_RETRIES {
        let topic = broker
            .topics
            .get(topic_name)
            .ok_or_else(|| ErrorPayload::new("topic_not_found").with_field("topic", topic_name))?;
        let partition = topic.partition(id).cloned().ok_or_else(|| {
            ErrorPayload::new("partition_not_found")
                .with_field("topic", topic_name)
                .with_field("partition", id)
        })?;
        let mut producers = partition.writer.lock().await;
        if partition.is_closed() {
            // A TRUNCATE replaced this generation: retry on the new one.
            continue;
        }
        // Check every sequence first: a rejected record appends nothing.
        let mut scratch = crate::topics::ProducerTable::new();
        let mut keep = Vec::with_capacity(records.len());
        let mut duplicate_offset = None;
        for record in &records {
            let tracked = !record.producer_id.is_empty() && record.seq_num > 0;
            if dedup && tracked {
                let pid = record.producer_id.as_str();
                if scratch.get(pid).is_none() {
                    // From memory, else the durable checkpoint.
                    let known = producers.fetch(pid).map_err(|e| {
                        ErrorPayload::new("broker_error").with_field("reason", e.to_string())
                    })?;
                    if let Some(e) = known {
                        scratch.observe(pid, e.epoch, e.last_seq, e.last_offset);
                    }
                }
                match scratch.check(pid, record.epoch, record.seq_num)? {
                    SeqCheck::Duplicate { offset } => {
                        duplicate_offset = Some(offset);
                        keep.push(false);
                        continue;
                    }
                    SeqCheck::Append => scratch.observe(pid, record.epoch, record.seq_num, 0),
                }
            }
            keep.push(true);
        }
        let count = keep.iter().filter(|k| **k).count();
        if count == 0 {
            let offset = duplicate_offset.unwrap_or(0);
            return Ok((Arc::clone(&partition), offset));
        }
        let base = partition.log().log_end_offset();
        let timestamp = now_ms();
        // The stored form of each record is the record itself with its
        // topic, partition, offset and broker timestamp set. The records are
        // updated in place and encoded into one shared buffer (one topic
        // string is moved from record to record), so a batch costs a few
        // allocations instead of several per record.
        let hint: usize = records
            .iter()
            .map(|r| {
                96 + topic_name.len()
                    + r.payload.len()
                    + r.key.len()
                    + r.producer_id.len()
                    + r.event_type.len()
                    + r.metadata.len()
            })
            .sum();
        let mut buf = BytesMut::with_capacity(hint);
        let mut entries = Vec::with_capacity(count);
        let mut topic_string = topic_name.to_owned();
        let kept = records.iter_mut().zip(&keep).filter(|(_, k)| **k);
        for (offset, (record, _)) in (base..).zip(kept) {
            record.topic = std::mem::take(&mut topic_string);
            record.partition = id as i32;
            record.offset = offset;
            // The producer's timestamp is kept (what its delivery report
            // said is what consumers read); unset ones get the append time.
            if record.timestamp == 0 {
                record.timestamp = timestamp;
            }
            let encoded = record.encode(RecordVersion::V3, &mut buf);
            topic_string = std::mem::take(&mut record.topic);
            encoded.map_err(|e| {
                ErrorPayload::new("invalid_payload").with_field("reason", e.to_string())
            })?;
            entries.push((timestamp, buf.split().freeze()));
        }
        super::deadline::point_of_no_return()?;
        let segments = partition.log().segment_count();
        let info = partition
            .append(entries)
            .await
            .map_err(|e| storage_error(topic_name, id, &e))?;
        if info.base_offset != base {
            // Offsets are encoded into the records; this would corrupt them.
            return Err(ErrorPayload::new("broker_error")
                .with_field("reason", "append offset mismatch")
                .with_field("expected", base)
                .with_field("actual", info.base_offset));
        }
        let kept = records.iter().zip(&keep).filter(|(_, k)| **k);
        for (i, (record, _)) in kept.enumerate() {
            if !record.producer_id.is_empty() && record.seq_num > 0 {
                producers.observe(
                    &record.producer_id,
                    record.epoch,
                    record.seq_num,
                    base + i as u64,
                );
            }
        }
        if partition.log().segment_count() > segments {
            // A segment was sealed: checkpoint the producer state.
            if let Err(e) = checkpoint_producers(&producers).await {
                tracing::warn!(topic = topic_name, partition = id, error = %e, "producer checkpoint failed");
            }
        }
        return Ok((Arc::clone(&partition), info.last_offset));
    }
    Err(broker.placement().generation_changed(topic_name))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_text_values() {
        assert_eq!(AckMode::from_text(None).unwrap(), AckMode::Leader);
        assert_eq!(AckMode::from_text(Some(" ALL ")).unwrap(), AckMode::All);
        assert_eq!(AckMode::from_text(Some("-1")).unwrap(), AckMode::All);
        assert_eq!(AckMode::from_text(Some("0")).unwrap(), AckMode::None);
        assert_eq!(
            AckMode::from_text(Some("none")).unwrap_err().code,
            "invalid_acks"
        );
    }
}
