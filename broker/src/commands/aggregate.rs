//! Aggregate replay: AGGREGATE_REPLAY_PROOF and AGGREGATE_EVENT_RANGE_READ
//! (`docs/aggregate-replay.md`; the proof itself is
//! [`crate::eventsource::replay`]).
//!
//! Both scan the match's partition from its earliest retained offset up to
//! the last stable offset taken after a flush (`proof_hwm`), reading
//! committed records only (open and aborted transactional records and
//! control markers are left out), 256 records per read.

use std::sync::Arc;

use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{CommandPayload, ErrorPayload, Record};
use serde::Serialize;

use super::params::partition_of;
use super::{HandlerResult, Reply};
use crate::broker::{Broker, Listener};
use crate::eventsource::replay::{Proof, ProofScan, ProofStatus, ProvenEvent};
use crate::topics::definition::topic_param;
use crate::topics::{Partition, Topic};

/// Records per read of the proof scan.
const SCAN_CHUNK: usize = 256;
/// AGGREGATE_EVENT_RANGE_READ `max_records` default.
pub const RANGE_DEFAULT_RECORDS: u64 = 1000;

/// The topic, partition and match id a proof or range read targets, after
/// the addendum's checks in order.
fn target(
    broker: &Broker,
    p: &CommandPayload,
    command: &str,
    listener: Listener,
) -> Result<(Arc<Topic>, Arc<Partition>, String), ErrorPayload> {
    let name = topic_param(p, command)?;
    let match_id = ["match_id", "key"]
        .iter()
        .find_map(|f| p.get(f).filter(|v| !v.is_empty()))
        .ok_or_else(|| ErrorPayload::new("missing_match_id").with_field("command", command))?;
    let topic = broker
        .topics
        .get(name)
        .ok_or_else(|| broker.placement().missing_topic(name))?;
    if !topic.def.aggregate_replay {
        return Err(ErrorPayload::new("aggregate_replay_not_enabled").with_field("topic", name));
    }
    let count = topic.partitions.len() as u32;
    if count == 0 {
        return Err(ErrorPayload::new("no_partitions_available").with_field("topic", name));
    }
    let expected = partition_for_key(match_id.as_bytes(), count);
    if let Some(raw) = p.get("partition") {
        if raw.trim().parse::<u32>().ok() != Some(expected) {
            return Err(ErrorPayload::new("aggregate_partition_mismatch")
                .with_field("expected", expected)
                .with_field("got", raw));
        }
    }
    broker
        .placement()
        .check_leader(&topic.def.name, expected, listener)?;
    let partition = partition_of(&topic, expected)?;
    Ok((topic, partition, match_id.to_owned()))
}

/// Runs the proof scan of `match_id` (see the module docs).
async fn scan(
    topic: &Topic,
    partition: &Partition,
    match_id: &str,
    keep_events: bool,
) -> ProofScan {
    let flushed = partition.flush().await;
    let hwm = partition.stable_offset();
    let mut scan = ProofScan::new(&topic.def.name, partition.id(), match_id, hwm, keep_events);
    if let Err(e) = flushed {
        scan.unavailable(partition.log().durable_offset(), &e.to_string());
        return scan;
    }
    let mut next = partition.log().earliest_offset();
    while next < hwm && !scan.failed() {
        let (chunk, reached) = match partition
            .read_committed(next, SCAN_CHUNK, super::consume::MAX_FETCH_BYTES)
            .await
        {
            Ok(read) => read,
            Err(e) => {
                scan.unavailable(next, &e.to_string());
                break;
            }
        };
        for stored in chunk {
            if stored.offset >= hwm {
                break;
            }
            match Record::decode(stored.data) {
                Ok(record) if record.key == match_id.as_bytes() => {
                    scan.feed(stored.offset, &record)
                }
                Ok(_) => {}
                Err(e) => scan.unavailable(stored.offset, &format!("record does not decode: {e}")),
            }
        }
        if reached <= next {
            scan.unavailable(next, "the read made no progress");
            break;
        }
        next = reached;
    }
    scan
}

fn proof_json(proof: &Proof, marshal_code: &str) -> Result<String, ErrorPayload> {
    proof
        .to_json()
        .map_err(|e| ErrorPayload::new(marshal_code).with_field("reason", e.to_string()))
}

/// `<prefix><status> proof=<JSON>`: a failed proof as a typed error.
fn failed(prefix: &str, status: ProofStatus, json: String) -> ErrorPayload {
    ErrorPayload::new(format!("{prefix}{}", status.as_str())).with_field("proof", json)
}

/// `AGGREGATE_REPLAY_PROOF topic= match_id= [partition=]
/// [expected_last_sequence=]`: `OK proof=<JSON>` when complete, else
/// `aggregate_proof_<status> proof=<JSON>`.
pub async fn replay_proof(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "AGGREGATE_REPLAY_PROOF";
    let (topic, partition, match_id) = target(broker, p, CMD, listener)?;
    let expected = match p.get("expected_last_sequence") {
        None => None,
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(ErrorPayload::new("invalid_expected_last_sequence")
                    .with_field("expected_last_sequence", raw))
            }
        },
    };
    let (proof, status, _) = scan(&topic, &partition, &match_id, false)
        .await
        .finish(expected);
    let json = proof_json(&proof, "marshal_aggregate_proof_failed")?;
    if status != ProofStatus::Complete {
        return Err(failed("aggregate_proof_", status, json));
    }
    Ok(Reply::text(format!("OK proof={json}")))
}

/// One event of a range read, keys in the addendum's order.
#[derive(Serialize)]
struct RangeEvent<'a> {
    offset: u64,
    match_id: &'a str,
    event_sequence: u64,
    event_id: &'a str,
    event_type: &'a str,
    payload: &'a str,
}

#[derive(Serialize)]
struct Range<'a> {
    proof: &'a Proof,
    events: Vec<RangeEvent<'a>>,
}

/// A required sequence field: `<code> <field>=<value>` when missing, not a
/// number, or below `min`.
fn sequence_param(
    p: &CommandPayload,
    field: &str,
    code: &str,
    min: u64,
) -> Result<u64, ErrorPayload> {
    let raw = p.get(field).unwrap_or_default();
    match raw.trim().parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(ErrorPayload::new(code).with_field(field, raw)),
    }
}

/// `AGGREGATE_EVENT_RANGE_READ topic= match_id= [partition=]
/// from_sequence= to_sequence= [max_records=]`: after a complete proof,
/// `OK range={"proof":…,"events":[…]}` with the events from `from` to `to`
/// (at most `max_records`); else `aggregate_range_<status> proof=<JSON>`,
/// or `aggregate_range_incomplete` when fewer events than asked exist.
pub async fn event_range_read(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "AGGREGATE_EVENT_RANGE_READ";
    let (topic, partition, match_id) = target(broker, p, CMD, listener)?;
    let from = sequence_param(p, "from_sequence", "invalid_from_sequence", 1)?;
    let to = sequence_param(p, "to_sequence", "invalid_to_sequence", from)?;
    let max_records = match p.get("max_records") {
        None => RANGE_DEFAULT_RECORDS,
        Some(raw) => match raw.trim().parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(ErrorPayload::new("invalid_max_records").with_field("max_records", raw))
            }
        },
    };
    let (proof, status, events) = scan(&topic, &partition, &match_id, true).await.finish(None);
    if status != ProofStatus::Complete {
        let json = proof_json(&proof, "marshal_aggregate_range_failed")?;
        return Err(failed("aggregate_range_", status, json));
    }
    let selected: Vec<&ProvenEvent> = events
        .iter()
        .filter(|e| (from..=to).contains(&e.sequence))
        .take(usize::try_from(max_records).unwrap_or(usize::MAX))
        .collect();
    let wanted = (to - from).saturating_add(1).min(max_records);
    if selected.len() as u64 != wanted {
        return Err(ErrorPayload::new("aggregate_range_incomplete")
            .with_field("from", from)
            .with_field("to", to)
            .with_field("returned", selected.len()));
    }
    let range = Range {
        proof: &proof,
        events: selected
            .iter()
            .map(|e| RangeEvent {
                offset: e.offset,
                match_id: &match_id,
                event_sequence: e.sequence,
                event_id: &e.event_id,
                event_type: &e.event_type,
                payload: &e.payload,
            })
            .collect(),
    };
    let json = serde_json::to_string(&range).map_err(|e| {
        ErrorPayload::new("marshal_aggregate_range_failed").with_field("reason", e.to_string())
    })?;
    Ok(Reply::text(format!("OK range={json}")))
}
