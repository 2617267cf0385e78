//! Per-partition queues of records waiting to be sent, and the rule that
//! decides when a queue becomes a batch.
//!
//! A queue is a list of batches in the making: a record joins the last one
//! unless that one is full (`MAX_BATCH_BYTES` or `MAX_BATCH_RECORDS`), so
//! a batch is formed as records arrive and the sender takes the first one
//! whole. Each batch carries its [`Replies`] (settled once when the broker
//! answers) and the buffer memory its records hold ([`Memory`], released
//! once with the batch).
//!
//! The accumulator also keeps the producer's view of each topic (its
//! metadata and round-robin counter), so that a send picks its partition
//! and queues its record under one lock.

use super::reply::{Replies, Want};
use super::{Delivery, Shared};
use crate::error::Error;
use crate::protocol::admin::TopicMetadata;
use std::collections::VecDeque;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Most payload bytes in one PUBLISH batch (well under the 64 MiB frame).
pub(super) const MAX_BATCH_BYTES: usize = 4 << 20;
/// Most records in one PUBLISH batch.
pub(super) const MAX_BATCH_RECORDS: usize = 10_000;

/// A topic partition.
pub(super) type Tp = (String, u32);

/// The accumulator's maps are keyed by the application's own topic names,
/// looked up once per send: a fast non-cryptographic hash (FxHash, as in
/// rustc) rather than SipHash, whose flood resistance buys nothing here.
type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// rustc's FxHash: a multiply-rotate hash over 8-byte words.
#[derive(Default)]
pub(super) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A record waiting in a queue.
pub(super) struct Queued {
    pub key: bytes::Bytes,
    pub payload: bytes::Bytes,
    pub timestamp: i64,
    /// The metadata sent, if any (a `Box<str>`: 16 bytes a queued
    /// record, not a `String`'s 24).
    pub metadata: Option<Box<str>>,
}

impl Queued {
    /// The metadata sent (empty: none).
    pub fn metadata(&self) -> &str {
        self.metadata.as_deref().unwrap_or("")
    }
}

/// Buffer memory held by a batch's records, given back when it drops
/// (after the batch is settled, or failed).
pub(super) struct Memory {
    semaphore: Arc<Semaphore>,
    bytes: usize,
}

impl Drop for Memory {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.semaphore.add_permits(self.bytes);
        }
    }
}

/// A batch in the making.
struct Building {
    records: Vec<Queued>,
    replies: Replies,
    memory: Memory,
}

struct PartitionQueue {
    /// The topic, for the batches' delivery slots.
    topic: String,
    batches: VecDeque<Building>,
    bytes: usize,
    oldest: Option<Instant>,
    in_flight: bool,
    /// Records in the last batch taken: a new batch reserves room for as
    /// many, so a busy partition's batch does not grow (and move) by doubling.
    last_batch_len: usize,
}

/// A batch taken from a queue, with its idempotent sequence range.
pub(super) struct Drained {
    pub tp: Tp,
    pub records: Vec<Queued>,
    pub replies: Replies,
    /// Released when the batch is dropped, after its replies are settled.
    pub _memory: Memory,
    pub first_seq: u64,
    pub epoch: i64,
}

/// What the producer knows of a topic.
struct TopicEntry {
    metadata: Arc<TopicMetadata>,
    /// When it was cached, in milliseconds since the epoch (the clock every
    /// send reads anyway for the record's timestamp).
    fetched_ms: i64,
    round_robin: u32,
}

/// Every partition's queue plus the idempotent sequence state.
pub(super) struct Accumulator {
    queues: HashMap<Tp, PartitionQueue>,
    topics: HashMap<String, TopicEntry>,
    flush_requested: bool,
    next_seq: HashMap<Tp, u64>,
    epoch: i64,
    memory: Arc<Semaphore>,
}

impl Accumulator {
    /// An empty accumulator whose batches give their memory back to `memory`.
    pub fn new(memory: Arc<Semaphore>) -> Accumulator {
        Accumulator {
            queues: HashMap::default(),
            topics: HashMap::default(),
            flush_requested: false,
            next_seq: HashMap::default(),
            epoch: 0,
            memory,
        }
    }

    /// The cached metadata of `topic`, if younger than `max_age` at
    /// `now_ms` (milliseconds since the epoch; a clock that went back
    /// expires it too), and its round-robin counter.
    pub fn topic(
        &mut self,
        topic: &str,
        max_age: Duration,
        now_ms: i64,
    ) -> Option<(&TopicMetadata, &mut u32)> {
        let entry = self.topics.get_mut(topic)?;
        let age = now_ms.checked_sub(entry.fetched_ms).filter(|a| *a >= 0)?;
        if age as u128 >= max_age.as_millis() {
            return None;
        }
        Some((&entry.metadata, &mut entry.round_robin))
    }

    /// Caches `metadata` of `topic` (keeping its round-robin counter).
    pub fn cache_topic(&mut self, topic: &str, metadata: Arc<TopicMetadata>) {
        let fetched_ms = super::now_ms();
        match self.topics.get_mut(topic) {
            Some(e) => {
                e.metadata = metadata;
                e.fetched_ms = fetched_ms;
            }
            None => {
                self.topics.insert(
                    topic.to_owned(),
                    TopicEntry {
                        metadata,
                        fetched_ms,
                        round_robin: 0,
                    },
                );
            }
        }
    }

    /// Forgets `topic`'s metadata (after a routing error).
    pub fn forget_topic(&mut self, topic: &str) {
        if let Some(e) = self.topics.get_mut(topic) {
            // Expired, but the round-robin counter stays.
            e.fetched_ms = i64::MIN;
        }
    }

    /// Queues a record of `size` bytes (already reserved in buffer memory)
    /// with its reply. Returns its delivery, when one is wanted, and true
    /// when the sender must look again: the queue is now full, or it was
    /// empty, so a new linger deadline starts.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        tp: Tp,
        record: Queued,
        size: usize,
        want: Want,
        batch_size: usize,
        shared: &Arc<Shared>,
    ) -> (Option<Delivery>, bool) {
        let memory = &self.memory;
        let q = self
            .queues
            .entry(tp)
            .or_insert_with_key(|(topic, _)| PartitionQueue {
                topic: topic.clone(),
                batches: VecDeque::new(),
                bytes: 0,
                oldest: None,
                in_flight: false,
                last_batch_len: 0,
            });
        let was_empty = q.batches.is_empty();
        let open = q.batches.back().is_some_and(|b| {
            b.records.len() < MAX_BATCH_RECORDS && b.memory.bytes + size <= MAX_BATCH_BYTES
        });
        if !open {
            q.batches.push_back(Building {
                records: Vec::with_capacity(q.last_batch_len.min(MAX_BATCH_RECORDS)),
                replies: Replies::new(),
                memory: Memory {
                    semaphore: Arc::clone(memory),
                    bytes: 0,
                },
            });
        }
        let batch = q.batches.back_mut().expect("a batch is open");
        let delivery = batch.replies.add(want, record.timestamp, &q.topic, shared);
        batch.memory.bytes += size;
        batch.records.push(record);
        q.bytes += size;
        if q.oldest.is_none() {
            q.oldest = Some(Instant::now());
        }
        let ready = !q.in_flight && (was_empty || q.bytes >= batch_size);
        (delivery, ready)
    }

    /// No record queued or in flight.
    pub fn is_empty(&self) -> bool {
        self.queues
            .values()
            .all(|q| q.batches.is_empty() && !q.in_flight)
    }

    /// Makes every queue ready regardless of linger until all is sent.
    pub fn request_flush(&mut self) {
        self.flush_requested = true;
    }

    /// Takes the batches that are ready: full, lingered long enough,
    /// flushing, or holding a delivery being awaited; at most one in flight
    /// per partition. Also returns when the next queue will have lingered
    /// long enough.
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
            if q.in_flight || q.batches.is_empty() {
                continue;
            }
            let due = q.oldest.map_or(now, |t| t + linger);
            if !(force
                || q.bytes >= batch_size
                || due <= now
                || q.batches.iter().any(|b| b.replies.expedited()))
            {
                next = Some(next.map_or(due, |n| n.min(due)));
                continue;
            }
            let batch = q.batches.pop_front().expect("a batch is queued");
            q.bytes -= batch.memory.bytes;
            q.oldest = (!q.batches.is_empty()).then_some(now);
            q.in_flight = true;
            q.last_batch_len = batch.records.len();
            let seq = self.next_seq.entry(tp.clone()).or_insert(1);
            let first_seq = *seq;
            *seq += batch.records.len() as u64;
            out.push(Drained {
                tp: tp.clone(),
                records: batch.records,
                replies: batch.replies,
                _memory: batch.memory,
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
        for ((topic, partition), q) in self.queues.iter_mut() {
            for batch in q.batches.drain(..) {
                batch.replies.fail(topic, *partition, error);
            }
            q.bytes = 0;
            q.oldest = None;
        }
    }
}
