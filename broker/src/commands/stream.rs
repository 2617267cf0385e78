//! STREAM: continuous push of a partition on a dedicated connection.
//!
//! Data frames (kind 5, status OK, a CBV2 batch) are pushed when the
//! partition's durable offset advances, at most about every 100 ms; an
//! empty-payload keepalive goes out when nothing was sent for the keepalive
//! interval; the stream ends with `STREAM_CONTROL type=CLOSE …` and status
//! STREAM_END (`reason=timeout` after `stream_timeout_ms` without a
//! delivered record), or silently when the client goes away.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cursus_wire::{Command, CommandPayload, Frame, Status};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::debug;

use super::consume::{encode_batch, read, read_options, AutoOffsetReset, Isolation};
use super::params::{existing_topic, number, partition_number, partition_of, required};
use super::{HandlerResult, Reply};
use crate::broker::{Broker, Listener};
use crate::server::{FrameWriter, Inbound};
use crate::storage::StorageError;
use crate::topics::Partition;

/// Minimum spacing of data frames.
const PUSH_INTERVAL: Duration = Duration::from_millis(100);

/// A validated STREAM request, ready to run.
#[derive(Debug)]
pub struct StreamPlan {
    topic: String,
    partition: Arc<Partition>,
    next: u64,
    batch: usize,
    isolation: Isolation,
}

/// Why a stream ended (the `reason=` of the close control frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CloseReason {
    Stopped,
    Removed,
    Error,
    /// No record delivered for `stream_timeout_ms`.
    Timeout,
    OffsetOutOfRange {
        earliest: u64,
        latest: u64,
    },
}

/// STREAM topic= partition= member= [group=] [offset=] [autoOffsetReset=]
/// [isolation=] [batch=]: validates and resolves the start offset.
pub async fn start(broker: &Arc<Broker>, p: &CommandPayload, listener: Listener) -> HandlerResult {
    let topic = existing_topic(broker, p, "STREAM")?;
    let id = partition_number(
        required(p, "partition", "missing_partition", "STREAM")?,
        "STREAM",
    )?;
    required(p, "member", "missing_member", "STREAM")?;
    let options = read_options(p)?;
    let explicit: Option<u64> = p
        .get("offset")
        .map(|v| number(v, "offset", "invalid_offset"))
        .transpose()?;
    broker
        .placement()
        .check_leader(&topic.def.name, id, listener)?;
    let partition = partition_of(&topic, id)?;
    let log = partition.log();
    // As for CONSUME: the committed offset wins over a lower offset=.
    let committed = broker
        .offsets
        .committed_offset(&topic.def.name, &options.group, id);
    let next = match (committed, explicit) {
        (Some(c), Some(e)) => Some(c.max(e)),
        (c, e) => c.or(e),
    }
    .unwrap_or_else(|| match options.reset {
        AutoOffsetReset::Earliest => log.earliest_offset(),
        AutoOffsetReset::Latest => match options.isolation {
            Isolation::ReadCommitted => partition.stable_offset(),
            Isolation::ReadUncommitted => log.durable_offset(),
        },
    });
    Ok(Reply::Stream(StreamPlan {
        topic: topic.def.name.clone(),
        partition,
        next,
        batch: options.batch,
        isolation: options.isolation,
    }))
}

/// Runs the stream until it closes or the client disconnects.
pub async fn run(
    broker: &Arc<Broker>,
    plan: StreamPlan,
    request_id: u64,
    writer: &mut FrameWriter,
    inbound: &mut mpsc::Receiver<Inbound>,
) {
    let StreamPlan {
        topic,
        partition,
        mut next,
        batch,
        isolation,
    } = plan;
    let keepalive = broker.config.stream_keepalive;
    let timeout = broker.config.stream_timeout;
    let mut signal = partition.subscribe();
    let mut last_sent = Instant::now();
    // Keepalives do not count: only records reset the stream timeout.
    let mut last_delivered = last_sent;
    let frame =
        |status, payload: Bytes| Frame::stream(Command::Stream, request_id, status, payload);
    let reason = loop {
        let closed = signal.borrow_and_update().closed;
        if closed {
            break CloseReason::Removed;
        }
        match read(&partition, next, batch, isolation).await {
            Ok((records, reached)) if !records.is_empty() => {
                next = reached;
                let payload = match encode_batch(&topic, partition.id(), &records) {
                    Ok(p) => p,
                    Err(_) => break CloseReason::Error,
                };
                if writer.send(&frame(Status::Ok, payload)).await.is_err() {
                    return;
                }
                last_sent = Instant::now();
                last_delivered = last_sent;
                // Pace pushes; keep watching for shutdown and disconnects.
                match idle(
                    broker,
                    inbound,
                    tokio::time::sleep_until(last_sent + PUSH_INTERVAL),
                )
                .await
                {
                    Wake::Ready(_) => continue,
                    Wake::Shutdown => break CloseReason::Stopped,
                    Wake::Gone => return,
                }
            }
            // read_committed may have skipped markers and aborted records.
            Ok((_, reached)) => next = reached,
            Err(StorageError::OffsetOutOfRange {
                earliest, latest, ..
            }) => break CloseReason::OffsetOutOfRange { earliest, latest },
            Err(e) => {
                debug!(error = %e, "stream read failed");
                break if partition.is_closed() {
                    CloseReason::Removed
                } else {
                    CloseReason::Error
                };
            }
        }
        let expires = (!timeout.is_zero()).then(|| last_delivered + timeout);
        let wait = async {
            tokio::select! {
                changed = signal.changed() => changed.is_ok(),
                _ = tokio::time::sleep_until(last_sent + keepalive) => true,
                _ = sleep_until_some(expires) => true,
            }
        };
        match idle(broker, inbound, wait).await {
            // The partition is gone (its signal was dropped).
            Wake::Ready(false) => break CloseReason::Removed,
            Wake::Ready(true) => {}
            Wake::Shutdown => break CloseReason::Stopped,
            Wake::Gone => return,
        }
        if expires.is_some_and(|at| Instant::now() >= at) {
            break CloseReason::Timeout;
        }
        if Instant::now() >= last_sent + keepalive {
            if writer.send(&frame(Status::Ok, Bytes::new())).await.is_err() {
                return;
            }
            last_sent = Instant::now();
        }
    };
    let control = close_text(reason, next);
    debug!(topic, partition = partition.id(), control, "stream closed");
    let _ = writer
        .send(&frame(Status::StreamEnd, Bytes::from(control)))
        .await;
}

/// Sleeps until `at`, or forever when `None`.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Outcome of waiting while streaming.
enum Wake<T> {
    /// The awaited event happened, with its output.
    Ready(T),
    /// The broker is shutting down.
    Shutdown,
    /// The client disconnected or sent an invalid frame.
    Gone,
}

/// Waits for `event` while watching for shutdown and the client going
/// away. Frames the client sends on a stream connection are ignored.
async fn idle<T>(
    broker: &Broker,
    inbound: &mut mpsc::Receiver<Inbound>,
    event: impl std::future::Future<Output = T>,
) -> Wake<T> {
    tokio::pin!(event);
    loop {
        tokio::select! {
            out = &mut event => return Wake::Ready(out),
            _ = broker.shutdown.cancelled() => return Wake::Shutdown,
            frame = inbound.recv() => match frame {
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return Wake::Gone,
            },
        }
    }
}

/// The `STREAM_CONTROL type=CLOSE …` text.
fn close_text(reason: CloseReason, next: u64) -> String {
    let name = match reason {
        CloseReason::Stopped => "stopped",
        CloseReason::Removed => "removed",
        CloseReason::Error => "error",
        CloseReason::Timeout => "timeout",
        CloseReason::OffsetOutOfRange { .. } => "offset_out_of_range",
    };
    let mut text = format!("STREAM_CONTROL type=CLOSE reason={name} offset={next}");
    if let CloseReason::OffsetOutOfRange { earliest, latest } = reason {
        text.push_str(&format!(
            " requested={next} earliest={earliest} latest={latest}"
        ));
    }
    text
}
