//! BROWSE_MESSAGES: committed records of any topic from an offset, without
//! touching groups or offsets.

use std::sync::Arc;

use cursus_wire::{CommandPayload, ErrorPayload, Record};
use serde::Serialize;

use super::{bounded, record_cost, two_frames, PAGE_DEFAULT_BYTES, PAGE_DEFAULT_RECORDS};
use super::{PAGE_MAX_BYTES, PAGE_MAX_RECORDS};
use crate::broker::{Broker, Listener};
use crate::commands::params::{number, partition_number, required};
use crate::commands::HandlerResult;
use crate::storage::StoredRecord;
use crate::topics::definition::topic_param;

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
            .read_committed(next, room, crate::commands::consume::MAX_FETCH_BYTES)
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
