//! CONSUME: one poll of a partition, answered with a CBV2 batch built from
//! the stored record bytes (possibly empty), with an optional long poll that
//! wakes when the partition's durable (read_uncommitted) or stable
//! (read_committed) offset advances.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use cursus_wire::{Batch, CommandPayload, ErrorPayload};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::params::{existing_topic, number, partition_number, partition_of, required};
use super::{HandlerResult, Reply};
use crate::broker::{Broker, Listener};
use crate::storage::{StorageError, StoredRecord};
use crate::topics::partition::storage_error;
use crate::topics::Partition;

/// Most records one CONSUME or STREAM fetch returns.
pub const MAX_BATCH: usize = 8192;
/// Longest long-poll wait.
pub const MAX_WAIT_MS: u64 = 30_000;
/// Soft cap on record bytes per fetch, well inside the 64 MiB frame limit.
pub const MAX_FETCH_BYTES: usize = 8 << 20;
/// Group used when a request names none.
pub const DEFAULT_GROUP: &str = "default-group";

/// Where a read starts when no explicit or committed offset applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoOffsetReset {
    /// The earliest retained offset.
    Earliest,
    /// The partition's end: the last stable offset for read_committed, the
    /// high-water mark for read_uncommitted.
    Latest,
}

/// Which records a reader sees (`isolation=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Up to the last stable offset, without control markers and records
    /// of aborted transactions (the default).
    ReadCommitted,
    /// The raw durable log up to the high-water mark.
    ReadUncommitted,
}

/// Read options shared by CONSUME and STREAM.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Consumer group (for the committed-offset lookup).
    pub group: String,
    /// Records per fetch, 1..=[`MAX_BATCH`].
    pub batch: usize,
    /// Reset policy.
    pub reset: AutoOffsetReset,
    /// Isolation level.
    pub isolation: Isolation,
}

fn syntax(field: &str, value: &str) -> ErrorPayload {
    ErrorPayload::new("invalid_consume_syntax")
        .with_field("field", field)
        .with_field("value", value)
}

/// Parses `group`, `batch`, `autoOffsetReset` and `isolation`
/// (`read_committed` by default).
pub fn read_options(p: &CommandPayload) -> Result<ReadOptions, ErrorPayload> {
    let group = p
        .get("group")
        .filter(|g| !g.is_empty())
        .unwrap_or(DEFAULT_GROUP)
        .to_owned();
    let batch = match p.get("batch") {
        None => MAX_BATCH,
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) if n >= 1 => n.min(MAX_BATCH as u64) as usize,
            _ => return Err(syntax("batch", v)),
        },
    };
    let reset = match p.get("autoOffsetReset") {
        None => AutoOffsetReset::Earliest,
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "earliest" => AutoOffsetReset::Earliest,
            "latest" => AutoOffsetReset::Latest,
            _ => return Err(syntax("autoOffsetReset", v)),
        },
    };
    let isolation = match p.get("isolation") {
        None | Some("read_committed") => Isolation::ReadCommitted,
        Some("read_uncommitted") => Isolation::ReadUncommitted,
        Some(v) => return Err(syntax("isolation", v)),
    };
    Ok(ReadOptions {
        group,
        batch,
        reset,
        isolation,
    })
}

/// CONSUME topic= partition= offset= member= [group=] [autoOffsetReset=]
/// [isolation=] [batch=] [wait_ms=].
pub async fn consume(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let topic = existing_topic(broker, p, "CONSUME")?;
    let id = partition_number(
        required(p, "partition", "missing_partition", "CONSUME")?,
        "CONSUME",
    )?;
    let offset: u64 = number(
        required(p, "offset", "missing_offset", "CONSUME")?,
        "offset",
        "invalid_offset",
    )?;
    required(p, "member", "missing_member", "CONSUME")?;
    let options = read_options(p)?;
    let wait_ms = match p.get("wait_ms") {
        None => 0,
        Some(v) => v.trim().parse::<u64>().map_err(|_| syntax("wait_ms", v))?,
    };
    broker
        .placement()
        .check_leader(&topic.def.name, id, listener)?;
    let partition = partition_of(&topic, id)?;
    // A committed group offset takes precedence over a lower offset= (the
    // spec's resolution order); a higher one is the consumer reading ahead
    // of its last commit and must be honoured, or it would re-read forever.
    let start = broker
        .offsets
        .committed_offset(&topic.def.name, &options.group, id)
        .map_or(offset, |committed| committed.max(offset));
    let wait = Duration::from_millis(wait_ms.min(MAX_WAIT_MS));
    let records = read_wait(
        &partition,
        start,
        options.batch,
        options.isolation,
        wait,
        &broker.shutdown,
    )
    .await
    .map_err(|e| storage_error(&topic.def.name, id, &e))?;
    let payload = encode_batch(&topic.def.name, id, &records)?;
    Ok(Reply::Ok(payload))
}

/// Reads what `isolation` shows from `from` (see [`read`]); when nothing is
/// readable waits up to `wait` for the durable or stable offset to move (or
/// the partition to close, or the broker to shut down).
pub async fn read_wait(
    partition: &Partition,
    from: u64,
    max_records: usize,
    isolation: Isolation,
    wait: Duration,
    shutdown: &CancellationToken,
) -> Result<Vec<StoredRecord>, StorageError> {
    let deadline = Instant::now() + wait;
    let mut signal = partition.subscribe();
    loop {
        // Mark the current state seen before reading, so an advance that
        // happens after the read is not missed.
        let closed = signal.borrow_and_update().closed;
        let (records, _) = read(partition, from, max_records, isolation).await?;
        if !records.is_empty() || closed || wait.is_zero() {
            return Ok(records);
        }
        let woke = tokio::select! {
            changed = tokio::time::timeout_at(deadline, signal.changed()) => {
                matches!(changed, Ok(Ok(())))
            }
            _ = shutdown.cancelled() => false,
        };
        if !woke {
            return Ok(Vec::new());
        }
    }
}

/// Reads what `isolation` shows from `from`: the records and the offset
/// the read reached (read_committed skips over left-out records).
pub async fn read(
    partition: &Partition,
    from: u64,
    max_records: usize,
    isolation: Isolation,
) -> Result<(Vec<StoredRecord>, u64), StorageError> {
    match isolation {
        Isolation::ReadCommitted => {
            partition
                .read_committed(from, max_records, MAX_FETCH_BYTES)
                .await
        }
        Isolation::ReadUncommitted => {
            let records = partition.read(from, max_records, MAX_FETCH_BYTES).await?;
            let next = records.last().map_or(from, |r| r.offset + 1);
            Ok((records, next))
        }
    }
}

/// A CBV2 batch of stored records, without decoding them.
pub fn encode_batch(
    topic: &str,
    partition: u32,
    records: &[StoredRecord],
) -> Result<Bytes, ErrorPayload> {
    let header = Batch::new(topic, partition as i32);
    let size: usize = 64 + topic.len() + records.iter().map(|r| 4 + r.data.len()).sum::<usize>();
    let mut out = BytesMut::with_capacity(size);
    header
        .encode_with_raw_records(records.iter().map(|r| &r.data[..]), &mut out)
        .map_err(|e| ErrorPayload::new("broker_error").with_field("reason", e.to_string()))?;
    Ok(out.freeze())
}
