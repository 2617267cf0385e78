//! One background fetcher per assigned partition: it reads ahead from the
//! partition leader (CONSUME long polls, or a STREAM), and hands batches to
//! the consumer through a bounded channel — the prefetch bound.
//!
//! Each fetcher has its own connection lane because the broker answers a
//! connection's requests in order: a long poll would otherwise hold up the
//! other partitions' fetches.

use super::ConsumerRecord;
use crate::client::retry::{decide, Decision};
use crate::client::{Cluster, Idempotence, Lane};
use crate::config::{AutoOffsetReset, ConsumeMode, ConsumerConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::group::TopicPartition;
use crate::wire::{Batch, Command, CommandPayload, ControlBatchType, ErrorPayload, Status};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What a fetcher reports, tagged with the fetcher's id: a seek, a pause
/// or a rebalance replaces a partition's fetcher, and what the replaced one
/// had in flight is recognised by its id and dropped.
pub(super) enum FetchEvent {
    /// Records of one partition, in offset order (never empty).
    Records(u64, Vec<ConsumerRecord>),
    /// A failure the consumer must surface (the fetcher has stopped).
    Failed(u64, TopicPartition, Error),
}

/// Everything a fetcher needs.
pub(super) struct FetchSpec {
    pub cluster: Arc<Cluster>,
    pub config: ConsumerConfig,
    pub tp: TopicPartition,
    pub position: u64,
    pub member_id: String,
    /// Tags every event this fetcher sends.
    pub id: u64,
}

/// Starts a fetcher; it stops when `cancel` fires or the channel closes.
pub(super) fn start(spec: FetchSpec, events: mpsc::Sender<FetchEvent>, cancel: CancellationToken) {
    tokio::spawn(async move {
        let (tp, id) = (spec.tp.clone(), spec.id);
        tokio::select! {
            _ = cancel.cancelled() => {}
            result = run(spec, &events) => {
                if let Err(e) = result {
                    let _ = events.send(FetchEvent::Failed(id, tp, e)).await;
                }
            }
        }
    });
}

async fn run(mut spec: FetchSpec, events: &mpsc::Sender<FetchEvent>) -> Result<()> {
    let lane = spec.cluster.new_lane();
    let mut backoff = crate::client::retry::Backoff::new(
        spec.cluster.config().retry_backoff,
        spec.cluster.config().retry_backoff_max,
    );
    loop {
        let step = match spec.config.consume_mode {
            ConsumeMode::Poll => poll_once(&mut spec, lane, events).await,
            ConsumeMode::Stream => stream_until_end(&mut spec, events).await,
        };
        match step {
            Ok(true) => {
                backoff = crate::client::retry::Backoff::new(
                    spec.cluster.config().retry_backoff,
                    spec.cluster.config().retry_backoff_max,
                )
            }
            Ok(false) => return Ok(()),
            Err(e) if e.is_broker_code("OFFSET_OUT_OF_RANGE") => {
                spec.position = reset_position(&spec, &e)?
            }
            // Whatever the retry policy would retry for a read (routing,
            // availability, a lost connection): the leader may have moved,
            // so the next fetch asks for fresh metadata.
            Err(e) if decide(&e, true, Idempotence::Safe) != Decision::Fail => {
                spec.cluster.invalidate_metadata(&spec.tp.topic);
                tracing::debug!(tp = %spec.tp, error = %e, "fetch failed; retrying");
                tokio::time::sleep(backoff.next_delay()).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Applies `auto_offset_reset` to an OFFSET_OUT_OF_RANGE error, using the
/// range the broker reported.
fn reset_position(spec: &FetchSpec, e: &Error) -> Result<u64> {
    let field = |name: &str| e.field(name).and_then(|v| v.parse::<u64>().ok());
    let to = match spec.config.auto_offset_reset {
        AutoOffsetReset::Earliest => field("earliest"),
        AutoOffsetReset::Latest => field("latest"),
        AutoOffsetReset::Error => None,
    };
    match to {
        Some(offset) => {
            tracing::warn!(tp = %spec.tp, from = spec.position, to = offset, "offset out of range; resetting");
            Ok(offset)
        }
        None => Err(e.clone()),
    }
}

fn consume_payload(spec: &FetchSpec, command: Command) -> CommandPayload {
    let c = &spec.config;
    let mut p = CommandPayload::new()
        .field("topic", &spec.tp.topic)
        .field("partition", spec.tp.partition)
        .field("offset", spec.position)
        .field("member", &spec.member_id)
        .field("group", &c.group_id)
        .field("isolation", c.isolation_level.as_str())
        .field("batch", c.fetch_max_records);
    if command == Command::Consume {
        p = p.field("wait_ms", c.fetch_max_wait.as_millis());
    }
    p
}

/// One CONSUME long poll; true to keep going.
async fn poll_once(
    spec: &mut FetchSpec,
    lane: Lane,
    events: &mpsc::Sender<FetchEvent>,
) -> Result<bool> {
    let payload = consume_payload(spec, Command::Consume).to_bytes()?;
    let timeout = spec.cluster.config().request_timeout + spec.config.fetch_max_wait;
    let reply = spec
        .cluster
        .request_leader_bytes(
            &spec.tp.topic,
            spec.tp.partition,
            lane,
            Command::Consume,
            payload,
            Idempotence::Safe,
            Some(timeout),
            None,
        )
        .await?;
    deliver(spec, Batch::decode(reply)?, events).await
}

/// Sends a batch's records on and advances the position; false when the
/// consumer is gone.
async fn deliver(
    spec: &mut FetchSpec,
    batch: Batch,
    events: &mpsc::Sender<FetchEvent>,
) -> Result<bool> {
    crate::stats::batch_fetched(&spec.cluster, &batch, spec.position);
    let mut records = Vec::with_capacity(batch.records.len());
    for r in batch.records {
        if r.offset < spec.position {
            continue;
        }
        spec.position = r.offset + 1;
        // Transaction control markers are bookkeeping, not application data.
        if r.control_batch_type != ControlBatchType::None {
            continue;
        }
        records.push(ConsumerRecord::from_wire(&spec.tp, r));
    }
    if records.is_empty() {
        return Ok(true);
    }
    Ok(events
        .send(FetchEvent::Records(spec.id, records))
        .await
        .is_ok())
}

/// Runs one STREAM on a dedicated connection until it ends; true to open
/// another from the current position.
async fn stream_until_end(spec: &mut FetchSpec, events: &mpsc::Sender<FetchEvent>) -> Result<bool> {
    let leader = spec
        .cluster
        .leader(&spec.tp.topic, spec.tp.partition)
        .await?;
    let conn = spec.cluster.dedicated_connection(&leader).await?;
    let payload = consume_payload(spec, Command::Stream).to_bytes()?;
    let mut stream = conn.open_stream(Command::Stream, payload)?;
    // The broker pushes keepalives; silence longer than this means trouble.
    let silence = Duration::from_secs(30);
    loop {
        let frame = match tokio::time::timeout(silence, stream.next()).await {
            Err(_) => {
                return Err(Error::timeout(format!(
                    "stream for {} went silent",
                    spec.tp
                )))
            }
            Ok(None) => {
                return Err(Error::io(format!(
                    "stream for {} ended without STREAM_END",
                    spec.tp
                )))
            }
            Ok(Some(frame)) => frame?,
        };
        if frame.status == Status::Error {
            let e = ErrorPayload::decode(frame.payload)
                .map(Error::from)
                .unwrap_or_else(Error::from);
            return Err(e);
        }
        if frame.payload.is_empty() {
            continue; // keepalive
        }
        if frame.payload.starts_with(b"STREAM_CONTROL") {
            let text = String::from_utf8_lossy(&frame.payload).into_owned();
            if frame.status == Status::StreamEnd || text.to_ascii_lowercase().contains("type=close")
            {
                return stream_closed(spec, &text);
            }
            continue;
        }
        if !deliver(spec, Batch::decode(frame.payload)?, events).await? {
            return Ok(false);
        }
    }
}

/// Interprets `STREAM_CONTROL type=CLOSE reason=… offset=…`.
fn stream_closed(spec: &mut FetchSpec, text: &str) -> Result<bool> {
    let field = |name: &str| {
        text.split_whitespace()
            .find_map(|t| t.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .map(str::to_owned)
    };
    match field("reason").as_deref() {
        Some("offset_out_of_range") => {
            let mut e =
                ErrorPayload::new("OFFSET_OUT_OF_RANGE").with_field("requested", spec.position);
            for name in ["earliest", "latest"] {
                if let Some(v) = field(name) {
                    e = e.with_field(name, v);
                }
            }
            Err(e.into())
        }
        Some("removed") => Err(ErrorPayload::new("topic_not_found")
            .with_field("topic", &spec.tp.topic)
            .into()),
        // A graceful end of an idle or stopped stream: open the next one
        // at once (the broker starts it from the committed offset; records
        // below our position are skipped).
        Some("timeout" | "stopped") => Ok(true),
        reason => Err(Error::new(
            ErrorKind::Io,
            format!(
                "stream for {} closed ({})",
                spec.tp,
                reason.unwrap_or("no reason")
            ),
        )),
    }
}
