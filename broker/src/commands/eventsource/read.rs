//! READ_STREAM, READ_STREAM_HISTORY and STREAM_VERSION: an aggregate's
//! visible (durable) events, read back from the log and checked against
//! the stream index, one page at a time.

use std::sync::Arc;

use cursus_wire::{CommandPayload, ErrorPayload, Record};
use serde::Serialize;

use super::{
    aggregate, bounded, envelope_error, from_version_param, is_zero, record_cost, route,
    snapshot_store, two_frames, PAGE_DEFAULT_BYTES, PAGE_DEFAULT_RECORDS, PAGE_MAX_BYTES,
    PAGE_MAX_RECORDS, STREAM_DEFAULT_BYTES, STREAM_DEFAULT_EVENTS, STREAM_MAX_BYTES,
    STREAM_MAX_EVENTS, STREAM_MIN_BYTES,
};
use crate::broker::{Broker, Listener};
use crate::commands::params::number;
use crate::commands::{HandlerResult, Reply};
use crate::eventsource::{Entry, Snapshot};
use crate::storage::{PartitionLog, StorageError, StoredRecord};
use crate::topics::partition::blocking;
use crate::topics::Partition;

// --------------------------------------------------------- STREAM_VERSION

/// `STREAM_VERSION topic= key=`: `OK version=<N>` (0 for an aggregate
/// without events).
pub fn stream_version(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "STREAM_VERSION";
    let (topic, key) = aggregate(broker, p, CMD)?;
    let partition = route(broker, &topic, key, listener)?;
    let durable = partition.log().durable_offset();
    let version = partition.with_streams(|s| s.visible_head(key, durable));
    Ok(Reply::text(format!("OK version={version}")))
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

/// Widest gap (in offsets) between two of an aggregate's events that one
/// log read still spans: the records of other aggregates in between are
/// read and skipped, which costs less than a read of its own per event
/// (each read takes a chunk of the segment file, 64 KiB at least).
const SPAN_GAP: u64 = 64;
/// Most records one such read takes, and its (soft) byte budget: a read
/// stops at whichever comes first, and the next event not yet read starts
/// the next one.
const SPAN_RECORDS: u64 = 4096;
const SPAN_BYTES: usize = 1 << 20;

/// Reads the records of `entries` (blocking), checking each against its
/// entry. Entries close together in the log are read together: one log
/// read from an entry's offset covers the entries after it while each is
/// at most [`SPAN_GAP`] offsets past the one before.
fn load_events(
    log: &PartitionLog,
    key: &str,
    entries: &[Entry],
) -> Result<Vec<Loaded>, StorageError> {
    let mut out = Vec::with_capacity(entries.len());
    let mut window = Vec::new().into_iter().peekable();
    // Offsets [window_from, window_end) are covered by the last read.
    let (mut window_from, mut window_end) = (0u64, 0u64);
    for (i, entry) in entries.iter().enumerate() {
        if entry.offset < window_from || entry.offset >= window_end {
            let count = span(&entries[i..]);
            let read = log.read(entry.offset, count, SPAN_BYTES)?;
            window_from = entry.offset;
            window_end = read.last().map_or(entry.offset + 1, |r| r.offset + 1);
            window = read.into_iter().peekable();
        }
        while window.next_if(|s| s.offset < entry.offset).is_some() {}
        let found = window.next_if(|s| s.offset == entry.offset);
        out.push(check(entry, key, found));
    }
    Ok(out)
}

/// Records one read from `entries[0]`'s offset should take: up to the
/// last entry reached through gaps of at most [`SPAN_GAP`], within
/// [`SPAN_RECORDS`].
fn span(entries: &[Entry]) -> usize {
    let first = entries[0].offset;
    let mut last = first;
    for e in &entries[1..] {
        if e.offset <= last || e.offset - last > SPAN_GAP || e.offset - first >= SPAN_RECORDS {
            break;
        }
        last = e.offset;
    }
    usize::try_from(last - first + 1).unwrap_or(usize::MAX)
}

/// The event of `entry` when `found` is its record (same key and version).
fn check(entry: &Entry, key: &str, found: Option<StoredRecord>) -> Loaded {
    let checked = found.and_then(|stored| {
        let record = Record::decode(stored.data.clone()).ok()?;
        let matches = record.key == key.as_bytes() && record.aggregate_version == entry.version;
        matches.then(|| (record_cost(&record), stored))
    });
    match checked {
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
    }
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

/// Why a page of loaded events ended before its last event.
enum PageEnd<'a> {
    /// Every event fits.
    All,
    /// The next event does not continue the versions (a gap).
    Gap,
    /// The page holds its most records.
    Full,
    /// The next event's record is missing or does not match its entry.
    Missing(&'a Loaded),
    /// The next event's record would pass the byte budget.
    OverBudget(&'a Loaded),
}

/// A page: the records taken from the front of the loaded events, and why
/// it ended.
struct Page<'a> {
    records: Vec<StoredRecord>,
    end: PageEnd<'a>,
}

/// Takes records from the front of `loaded` while they continue the
/// versions from `contiguous_from` (when given), the page has fewer than
/// `max_records`, the record is there, and the page stays within
/// `max_bytes`.
fn page(
    loaded: &[Loaded],
    contiguous_from: Option<u64>,
    max_records: usize,
    max_bytes: usize,
) -> Page<'_> {
    let mut records = Vec::with_capacity(loaded.len().min(max_records));
    let mut bytes = 0usize;
    for (i, l) in loaded.iter().enumerate() {
        let end = if contiguous_from.is_some_and(|from| l.entry.version != from + i as u64) {
            Some(PageEnd::Gap)
        } else if records.len() == max_records {
            Some(PageEnd::Full)
        } else if l.stored.is_none() {
            Some(PageEnd::Missing(l))
        } else if bytes + l.cost > max_bytes {
            Some(PageEnd::OverBudget(l))
        } else {
            None
        };
        if let Some(end) = end {
            return Page { records, end };
        }
        bytes += l.cost;
        records.extend(l.stored.clone());
    }
    Page {
        records,
        end: PageEnd::All,
    }
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
    let (topic, key) = aggregate(broker, p, CMD)?;
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
    let Page { records, end } = page(&loaded, None, usize::MAX, max_bytes);
    let cut = match end {
        PageEnd::Missing(l) => {
            return Err(ErrorPayload::new("stream_index_record_mismatch")
                .with_field("topic", &topic.def.name)
                .with_field("key", key)
                .with_field("version", l.entry.version)
                .with_field("offset", l.entry.offset));
        }
        PageEnd::OverBudget(l) if records.is_empty() => {
            return Err(ErrorPayload::new("event_exceeds_page_budget")
                .with_field("version", l.entry.version)
                .with_field("size", l.cost)
                .with_field("max_bytes", max_bytes));
        }
        PageEnd::OverBudget(_) => true,
        PageEnd::All | PageEnd::Gap | PageEnd::Full => false,
    };
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
    let (topic, key) = aggregate(broker, p, CMD)?;
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
    let Page { records, end } = page(&loaded, Some(from), max_records, max_bytes);
    let (mut partial, mut limited) = match end {
        PageEnd::OverBudget(l) if records.is_empty() => {
            return Ok(envelope_error(
                &ErrorPayload::new("record_too_large")
                    .with_field("version", l.entry.version)
                    .with_field("offset", l.entry.offset),
            ));
        }
        PageEnd::Gap | PageEnd::Missing(_) => (true, false),
        PageEnd::Full | PageEnd::OverBudget(_) => (false, true),
        PageEnd::All => (false, false),
    };
    // The page continues the versions from `from`.
    let expected = from + records.len() as u64;
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
