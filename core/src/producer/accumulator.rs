//! Per-partition queues of records waiting to be sent, and the rule that
//! decides when a queue becomes a batch.

use super::reply::Reply;
use crate::error::Error;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;

/// Most payload bytes in one PUBLISH batch (well under the 64 MiB frame).
pub(super) const MAX_BATCH_BYTES: usize = 4 << 20;
/// Most records in one PUBLISH batch.
pub(super) const MAX_BATCH_RECORDS: usize = 10_000;

/// A topic partition.
pub(super) type Tp = (String, u32);

/// A record waiting in a queue; its buffer-memory permit is released when
/// it is dropped (after delivery or failure).
pub(super) struct Queued {
    pub key: bytes::Bytes,
    pub payload: bytes::Bytes,
    pub timestamp: i64,
    pub size: usize,
    pub reply: Reply,
    pub _permit: OwnedSemaphorePermit,
}

#[derive(Default)]
struct PartitionQueue {
    records: VecDeque<Queued>,
    bytes: usize,
    oldest: Option<Instant>,
    in_flight: bool,
}

/// A batch taken from a queue, with its idempotent sequence range.
pub(super) struct Drained {
    pub tp: Tp,
    pub records: Vec<Queued>,
    pub first_seq: u64,
    pub epoch: i64,
}

/// Every partition's queue plus the idempotent sequence state.
#[derive(Default)]
pub(super) struct Accumulator {
    queues: HashMap<Tp, PartitionQueue>,
    flush_requested: bool,
    next_seq: HashMap<Tp, u64>,
    epoch: i64,
}

impl Accumulator {
    /// Queues a record. True when the sender must look again: the queue
    /// is now full, or it was empty, so a new linger deadline starts.
    pub fn push(&mut self, tp: Tp, record: Queued, batch_size: usize) -> bool {
        let q = self.queues.entry(tp).or_default();
        let was_empty = q.records.is_empty();
        q.bytes += record.size;
        q.oldest.get_or_insert_with(Instant::now);
        q.records.push_back(record);
        !q.in_flight && (was_empty || q.bytes >= batch_size)
    }

    /// No record queued or in flight.
    pub fn is_empty(&self) -> bool {
        self.queues
            .values()
            .all(|q| q.records.is_empty() && !q.in_flight)
    }

    /// Makes every queue ready regardless of linger until all is sent.
    pub fn request_flush(&mut self) {
        self.flush_requested = true;
    }

    /// Takes the batches that are ready: full, lingered long enough, or
    /// flushing; at most one in flight per partition. Also returns when the
    /// next queue will have lingered long enough.
    pub fn drain_ready(
        &mut self,
        linger: Duration,
        batch_size: usize,
        force: bool,
    ) -> (Vec<Drained>, Option<Instant>) {
        if self.is_empty() {
            self.flush_requested = false;
        }
        let now = Instant::now();
        let force = force || self.flush_requested;
        let mut out = Vec::new();
        let mut next: Option<Instant> = None;
        for (tp, q) in self.queues.iter_mut() {
            if q.in_flight || q.records.is_empty() {
                continue;
            }
            let due = q.oldest.map_or(now, |t| t + linger);
            if !(force || q.bytes >= batch_size || due <= now) {
                next = Some(next.map_or(due, |n| n.min(due)));
                continue;
            }
            let mut records = Vec::new();
            let mut bytes = 0;
            while let Some(r) = q.records.front() {
                if !records.is_empty()
                    && (bytes + r.size > MAX_BATCH_BYTES || records.len() >= MAX_BATCH_RECORDS)
                {
                    break;
                }
                bytes += r.size;
                records.push(q.records.pop_front().expect("front exists"));
            }
            q.bytes -= bytes;
            q.oldest = (!q.records.is_empty()).then_some(now);
            q.in_flight = true;
            let seq = self.next_seq.entry(tp.clone()).or_insert(1);
            let first_seq = *seq;
            *seq += records.len() as u64;
            out.push(Drained {
                tp: tp.clone(),
                records,
                first_seq,
                epoch: self.epoch,
            });
        }
        (out, next)
    }

    /// Marks a partition's batch finished. After a failed idempotent batch
    /// its sequence numbers are burned, so the producer moves to a new epoch
    /// where every partition restarts at sequence 1.
    pub fn complete(&mut self, tp: &Tp, failed_epoch: Option<i64>) {
        if let Some(q) = self.queues.get_mut(tp) {
            q.in_flight = false;
        }
        if let Some(epoch) = failed_epoch {
            if epoch == self.epoch {
                self.epoch += 1;
                self.next_seq.clear();
            }
        }
    }

    /// Moves to a broker-granted epoch (a transactional session): every
    /// partition restarts at sequence 1.
    pub fn restart_epoch(&mut self, epoch: i64) {
        self.epoch = epoch;
        self.next_seq.clear();
    }

    /// Fails every queued (not in-flight) record with `error`.
    pub fn fail_all(&mut self, error: &Error) {
        for q in self.queues.values_mut() {
            for r in q.records.drain(..) {
                r.reply.send(Err(error.clone()));
            }
            q.bytes = 0;
            q.oldest = None;
        }
    }
}
