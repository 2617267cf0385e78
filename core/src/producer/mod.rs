//! The producer: asynchronous sends batched per partition, acknowledged by
//! the broker with the record's partition and offset.
//!
//! `send` picks the partition (explicit, FNV-1a of the key, or round-robin,
//! exactly as the broker would), reserves buffer memory (waiting up to
//! `max_block_ms`), and queues the record; the returned [`Delivery`]
//! resolves when the broker acknowledged the batch holding it. A scheduler
//! task sends a partition's queue as one CBV2 batch when it reaches
//! `batch_size` bytes or has waited `linger_ms`, with at most one batch per
//! partition in flight so records keep their order. While a batch is in
//! flight the next one keeps growing, so throughput rises with load.

mod accumulator;
mod batch;
mod ordered;
mod reply;
mod sender;
mod transaction;

use crate::client::{Cluster, Lane};
use crate::config::ProducerConfig;
use crate::dispatch::Dispatcher;
use crate::error::{Error, Result};
pub use crate::protocol::txn::GroupMetadata;
use crate::protocol::txn::TxnResult;
use crate::wire::partitioner::partition_for_key;
use crate::TopicPartition;
use accumulator::{Accumulator, Queued};
use bytes::Bytes;
use ordered::Ordered;
use reply::{Slot, Want};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{Semaphore, SemaphorePermit, TryAcquireError};
use tokio::time::Instant;

/// Bookkeeping bytes counted per record on top of its payload and key.
const RECORD_OVERHEAD: usize = 64;

/// A record to send.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerRecord {
    /// Topic.
    pub topic: String,
    /// Partition; `None` lets the partitioner choose.
    pub partition: Option<u32>,
    /// Key; records with the same key go to the same partition.
    pub key: Option<Bytes>,
    /// Value.
    pub payload: Bytes,
    /// Milliseconds since the epoch; `None` stamps the send time.
    pub timestamp: Option<i64>,
    /// The record's metadata (empty: none); consumers read it as
    /// [`ConsumerRecord::metadata`](crate::ConsumerRecord::metadata).
    pub metadata: String,
    /// The trace context of the span sending the record, written into its
    /// metadata ([`crate::trace_context`] says how the two share it).
    pub trace_context: Option<crate::TraceContext>,
}

impl ProducerRecord {
    /// A record for `topic` carrying `payload`.
    pub fn new(topic: impl Into<String>, payload: impl Into<Bytes>) -> Self {
        ProducerRecord {
            topic: topic.into(),
            payload: payload.into(),
            ..Default::default()
        }
    }

    /// Sets the key.
    pub fn key(mut self, key: impl Into<Bytes>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets an explicit partition.
    pub fn partition(mut self, partition: u32) -> Self {
        self.partition = Some(partition);
        self
    }

    /// Sets the timestamp (milliseconds since the epoch).
    pub fn timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = Some(timestamp);
        self
    }

    /// Sets the metadata.
    pub fn metadata(mut self, metadata: impl Into<String>) -> Self {
        self.metadata = metadata.into();
        self
    }

    /// Sets the trace context the record carries.
    pub fn trace_context(mut self, context: crate::TraceContext) -> Self {
        self.trace_context = Some(context);
        self
    }

    /// The metadata sent: the record's own, with its trace context added
    /// when it has one and the metadata can carry it.
    fn wire_metadata(&mut self) -> Option<Box<str>> {
        let metadata = std::mem::take(&mut self.metadata);
        let metadata = match &self.trace_context {
            Some(context) => crate::trace_context::inject(&metadata, context).unwrap_or(metadata),
            None => metadata,
        };
        (!metadata.is_empty()).then(|| metadata.into_boxed_str())
    }
}

/// Where an acknowledged record was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMetadata {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Offset; `None` with acks=0, where nothing is confirmed.
    pub offset: Option<u64>,
    /// Timestamp sent with the record.
    pub timestamp: i64,
}

/// Resolves when the record has been acknowledged (or has failed).
///
/// Awaiting it (polling it the first time) asks the producer to send the
/// batch holding the record at once instead of at the end of `linger_ms`:
/// a caller waiting for one record does not wait out the linger. Only that
/// record's partition is sent early; a delivery never awaited changes
/// nothing. A delivery points into its batch's shared outcome (no channel
/// per record).
#[derive(Debug)]
pub struct Delivery {
    slot: Arc<Slot>,
    index: usize,
    timestamp: i64,
}

impl Delivery {
    /// Record `index` of the batch whose outcome `slot` will hold.
    pub(crate) fn batch(slot: Arc<Slot>, index: usize, timestamp: i64) -> Delivery {
        Delivery {
            slot,
            index,
            timestamp,
        }
    }
}

impl Future for Delivery {
    type Output = Result<RecordMetadata>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.slot.poll(self.index, self.timestamp, cx)
    }
}

pub(crate) struct Shared {
    cluster: Arc<Cluster>,
    config: ProducerConfig,
    memory: Arc<Semaphore>,
    accumulator: Mutex<Accumulator>,
    wake: tokio::sync::Notify,
    drained: tokio::sync::Notify,
    /// No new record is accepted (close started, or the producer dropped).
    closed: AtomicBool,
    /// Close failed what was left: nothing may be queued any more, not
    /// even records handed over in order before close.
    terminated: AtomicBool,
    producer_id: String,
    /// Runs delivery callbacks (see [`crate::dispatch`]).
    dispatcher: Dispatcher,
    /// Sends handed over in call order (see `ordered`).
    ordered: Ordered,
    /// The runtime the producer's tasks run on.
    runtime: tokio::runtime::Handle,
    /// Transaction state when `transactional_id` is configured.
    txn: Option<transaction::Transactions>,
}

/// When the last [`Producer`] clone is dropped without `close`, stop
/// accepting records but let the sender deliver what is queued, then exit.
struct DropGuard(Arc<Shared>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::SeqCst);
        self.0.wake.notify_one();
    }
}

/// Sends records to Cursus topics. Cheap to clone; clones share one producer.
///
/// ```no_run
/// use cursus::producer::{Producer, ProducerRecord};
/// use cursus::ProducerConfig;
///
/// # async fn demo() -> cursus::Result<()> {
/// let mut config = ProducerConfig::new("127.0.0.1:9000");
/// config.set("linger_ms", "10")?;
/// let producer = Producer::connect(config).await?;
/// // `send` queues the record; awaiting the delivery waits for the broker.
/// let delivery = producer.send(ProducerRecord::new("orders", "paid").key("order-7")).await?;
/// let stored = delivery.await?;
/// println!("partition {} offset {:?}", stored.partition, stored.offset);
/// producer.close(cursus::blocking::DEFAULT_TIMEOUT).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Producer {
    shared: Arc<Shared>,
    _guard: Arc<DropGuard>,
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("producer_id", &self.shared.producer_id)
            .finish()
    }
}

impl Producer {
    /// Validates `config`, connects to a bootstrap broker and starts the
    /// sender.
    pub async fn connect(config: ProducerConfig) -> Result<Producer> {
        config.validate()?;
        let cluster = Cluster::new(config.client.clone())?;
        cluster.any_broker(Lane::PRODUCE).await?;
        let producer_id = format!("{}-{:016x}", config.client.client_id, unique_u64());
        let memory = Arc::new(Semaphore::new(
            config.buffer_memory.min(Semaphore::MAX_PERMITS),
        ));
        let shared = Arc::new(Shared {
            accumulator: Mutex::new(Accumulator::new(Arc::clone(&memory))),
            memory,
            wake: tokio::sync::Notify::new(),
            drained: tokio::sync::Notify::new(),
            closed: AtomicBool::new(false),
            terminated: AtomicBool::new(false),
            dispatcher: {
                // Listeners run on the delivery callback thread too.
                let dispatcher = Dispatcher::new("cursus-producer-cb");
                cluster.events().adopt(&dispatcher);
                dispatcher
            },
            ordered: Ordered::default(),
            runtime: tokio::runtime::Handle::current(),
            txn: config
                .transactional_id
                .clone()
                .map(transaction::Transactions::new),
            producer_id,
            cluster,
            config,
        });
        tokio::spawn(sender::run(Arc::clone(&shared)));
        Ok(Producer {
            _guard: Arc::new(DropGuard(Arc::clone(&shared))),
            shared,
        })
    }

    /// The producer id sent with idempotent batches.
    pub fn producer_id(&self) -> &str {
        &self.shared.producer_id
    }

    /// Queues a record. Waits for metadata and, when `buffer_memory` is
    /// full, for space (up to `max_block_ms`). The returned [`Delivery`]
    /// resolves with the record's partition and offset.
    pub async fn send(&self, record: ProducerRecord) -> Result<Delivery> {
        let delivery = self
            .enqueue(record, Admission::New, None, Want::Delivery)
            .await?;
        Ok(delivery.expect("a queued record has its delivery"))
    }

    /// Queues a record like [`Producer::send`]; `callback` is then called
    /// exactly once with the outcome, on this producer's callback thread
    /// (never on an I/O thread), in the order the outcomes arrive, which for
    /// one partition is offset order. If queueing fails, the error is
    /// returned and the callback is never called. A callback may call the
    /// producer again, `send` and `flush` included.
    pub async fn send_with_callback(
        &self,
        record: ProducerRecord,
        callback: impl FnOnce(Result<RecordMetadata>) + Send + 'static,
    ) -> Result<()> {
        self.enqueue(
            record,
            Admission::New,
            None,
            Want::Callback(Box::new(callback)),
        )
        .await
        .map(drop)
    }

    /// Hands the record over now and returns a future of its
    /// acknowledgement: records handed over by successive calls are queued
    /// in call order, whenever their futures are polled (or if they are
    /// dropped). For callers that cannot await between sends (asyncio,
    /// callbacks): `send` itself keeps call order only if each call is
    /// awaited before the next. Backpressure is the same as `send`'s: a
    /// record waits for buffer space at most `max_block_ms` from this call,
    /// then fails with `max_block_exceeded`. Refused records (closed
    /// producer, invalid record) fail the returned future.
    pub fn send_in_order(
        &self,
        record: ProducerRecord,
    ) -> impl Future<Output = Result<RecordMetadata>> + Send + 'static {
        let admitted = self.admit_in_order(record);
        async move { admitted?.await }
    }

    fn block_deadline(&self) -> Instant {
        Instant::now() + self.shared.config.max_block
    }

    /// Checks a record before it takes buffer space; returns its size.
    fn check_record(&self, record: &ProducerRecord) -> Result<usize> {
        let shared = &self.shared;
        let context = record.trace_context.as_ref().map_or(0, |c| {
            48 + c.traceparent().len() + c.tracestate().map_or(0, str::len)
        });
        let size = record.payload.len()
            + record.key.as_ref().map_or(0, Bytes::len)
            + record.metadata.len()
            + context
            + RECORD_OVERHEAD;
        if size > shared.config.buffer_memory || size > crate::wire::MAX_PAYLOAD {
            return Err(Error::invalid_argument(format!(
                "record of {size} bytes exceeds buffer_memory ({}) or the 64 MiB frame limit",
                shared.config.buffer_memory
            ))
            .with_code("record_too_large"));
        }
        if record.topic.is_empty() {
            return Err(Error::invalid_argument("record topic is empty"));
        }
        if let Some(txn) = &shared.txn {
            txn.check_send()?;
            check_text_record(record)?;
        }
        Ok(size)
    }

    /// Reserves buffer memory (waiting until `deadline`, by default
    /// `max_block_ms` from now, only when it is full), picks the partition
    /// and queues the record with its reply; returns its delivery when one
    /// is wanted.
    async fn enqueue(
        &self,
        record: ProducerRecord,
        admission: Admission,
        deadline: Option<Instant>,
        want: Want,
    ) -> Result<Option<Delivery>> {
        self.check_admission(admission)?;
        let size = self.check_record(&record)?;
        let permit = match self.shared.memory.try_acquire_many(size as u32) {
            Ok(permit) => permit,
            Err(TryAcquireError::Closed) => return Err(Error::closed("producer")),
            Err(TryAcquireError::NoPermits) => {
                let deadline = deadline.unwrap_or_else(|| self.block_deadline());
                self.wait_for_memory(size, deadline).await?
            }
        };
        let (mut record, mut want) = (record, want);
        loop {
            match self.push(record, size, admission, want)? {
                Pushed::Queued(delivery) => {
                    // Now held by the record's batch, released with it.
                    permit.forget();
                    return Ok(delivery);
                }
                Pushed::NoMetadata(r, w) => {
                    let metadata = self.shared.cluster.metadata(&r.topic, false).await?;
                    self.lock_accumulator().cache_topic(&r.topic, metadata);
                    (record, want) = (r, w);
                }
            }
        }
    }

    /// Waits until `deadline` for `size` bytes of buffer memory.
    async fn wait_for_memory(&self, size: usize, deadline: Instant) -> Result<SemaphorePermit<'_>> {
        let shared = &self.shared;
        tokio::time::timeout_at(deadline, shared.memory.acquire_many(size as u32))
            .await
            .map_err(|_| {
                Error::timeout(format!(
                    "buffer_memory ({} bytes) stayed full for max_block_ms ({} ms)",
                    shared.config.buffer_memory,
                    shared.config.max_block.as_millis()
                ))
                .with_code("max_block_exceeded")
            })?
            .map_err(|_| Error::closed("producer"))
    }

    fn lock_accumulator(&self) -> std::sync::MutexGuard<'_, Accumulator> {
        self.shared
            .accumulator
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a record whose memory is reserved, under one lock: picks its
    /// partition from the cached metadata (or gives the record back when
    /// there is none) and adds it to its partition's batch. Refused when
    /// the producer no longer admits it.
    fn push(
        &self,
        record: ProducerRecord,
        size: usize,
        admission: Admission,
        want: Want,
    ) -> Result<Pushed> {
        let shared = &self.shared;
        // The one clock read of a send: the record's timestamp and the
        // age of the cached metadata.
        let now = now_ms();
        let timestamp = record.timestamp.unwrap_or(now);
        let mut accumulator = self.lock_accumulator();
        // Checked again under the lock: `close` sets the flags before its
        // final `fail_all`, so a record is either queued before that (and
        // flushed or failed) or refused here, never stranded after the
        // sender exits.
        self.check_admission(admission)?;
        let max_age = shared.cluster.config().metadata_max_age;
        let Some((metadata, round_robin)) = accumulator.topic(&record.topic, max_age, now) else {
            return Ok(Pushed::NoMetadata(record, want));
        };
        let partition = partition_in(&record, &metadata.topic, round_robin)?;
        let mut record = record;
        let metadata = record.wire_metadata();
        let (delivery, ready) = accumulator.push(
            (record.topic, partition),
            Queued {
                key: record.key.unwrap_or_default(),
                payload: record.payload,
                timestamp,
                metadata,
            },
            size,
            want,
            shared.config.batch_size,
            &self.shared,
        );
        drop(accumulator);
        if ready {
            shared.wake.notify_one();
        }
        Ok(Pushed::Queued(delivery))
    }

    fn check_admission(&self, admission: Admission) -> Result<()> {
        let shared = &self.shared;
        let refused = match admission {
            Admission::New => shared.closed.load(Ordering::SeqCst),
            Admission::HandedOver => shared.terminated.load(Ordering::SeqCst),
        };
        if refused {
            Err(Error::closed("producer"))
        } else {
            Ok(())
        }
    }

    /// The transactional id, when the producer is transactional.
    pub fn transactional_id(&self) -> Option<&str> {
        self.shared.txn.as_ref().map(transaction::Transactions::id)
    }

    fn transactions(&self) -> Result<&transaction::Transactions> {
        if self.is_closed() {
            return Err(Error::closed("producer"));
        }
        self.shared.txn.as_ref().ok_or_else(|| {
            Error::invalid_argument("the producer is not transactional: set transactional_id")
                .with_code("invalid_transaction_state")
        })
    }

    /// Starts a new epoch: sequences restart at 1 on every partition.
    fn restart_sequences(&self, epoch: i64) {
        self.shared
            .accumulator
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .restart_epoch(epoch);
    }

    /// Obtains the broker-managed producer session of `transactional_id`
    /// (INIT_PRODUCER_ID), fencing any older producer with the same id and
    /// aborting a transaction it left open. Call once before the first
    /// [`begin_transaction`](Self::begin_transaction).
    pub async fn init_transactions(&self) -> Result<()> {
        let txn = self.transactions()?;
        txn.init_transactions(&self.shared.cluster, |epoch| self.restart_sequences(epoch))
            .await
    }

    /// Begins a transaction: sends from now until commit or abort belong
    /// to it. The broker allows one transaction per epoch, so every
    /// transaction after the first re-initialises the session first.
    pub async fn begin_transaction(&self) -> Result<()> {
        let txn = self.transactions()?;
        txn.begin(&self.shared.cluster, |epoch| self.restart_sequences(epoch))
            .await
    }

    /// Adds consumed offsets (next offset to read, per partition) of
    /// `group`'s session to the open transaction: they are committed
    /// together with its records, or not at all.
    pub async fn send_offsets_to_transaction(
        &self,
        offsets: &[(TopicPartition, u64)],
        group: &GroupMetadata,
    ) -> Result<()> {
        let txn = self.transactions()?;
        txn.send_offsets(&self.shared.cluster, offsets, group).await
    }

    /// Adds what `consumer` has delivered (the offsets `commit_sync` would
    /// commit) to the open transaction, fenced by the consumer's group
    /// session: the consume-process-produce step.
    pub async fn send_consumer_offsets(&self, consumer: &crate::consumer::Consumer) -> Result<()> {
        let group = consumer.group_metadata().await?;
        let offsets = consumer.delivered_offsets().await?;
        if offsets.is_empty() {
            return Ok(());
        }
        self.send_offsets_to_transaction(&offsets, &group).await
    }

    /// Appends `event` to aggregate `key` of an event-sourcing topic inside
    /// the open transaction (TXN_APPEND_STREAM), if the aggregate is at
    /// `expected_version` when the transaction commits: the event then gets
    /// `expected_version + 1`, visible together with the rest of the
    /// transaction. The aggregate is reserved for this transaction until it
    /// ends (other writers get `stream_version_reserved`). A failure makes
    /// the transaction abort-only, as a failed send does.
    pub async fn append_stream(
        &self,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: &crate::eventstore::Event,
    ) -> Result<crate::eventstore::Appended> {
        let txn = self.transactions()?;
        txn.append_stream(&self.shared.cluster, topic, key, expected_version, event)
            .await
    }

    /// Waits for every send of the transaction, then commits it (END_TXN
    /// commit). When the outcome is unknown (a lost reply) the commit is
    /// repeated with the same epoch until the broker decides, for up to
    /// `delivery_timeout_ms`; if still unknown then, the error is returned
    /// and the transaction stays open so that the call may be repeated.
    /// A failed send makes the commit fail: abort instead.
    pub async fn commit_transaction(&self) -> Result<()> {
        self.end_transaction(TxnResult::Commit).await
    }

    /// Waits for the transaction's sends to finish (whatever their
    /// outcome), then aborts it: none of its records or offsets become
    /// visible to read_committed consumers.
    pub async fn abort_transaction(&self) -> Result<()> {
        self.end_transaction(TxnResult::Abort).await
    }

    async fn end_transaction(&self, result: TxnResult) -> Result<()> {
        let txn = self.transactions()?;
        txn.end(
            &self.shared.cluster,
            result,
            self.drain(None),
            self.shared.config.delivery_timeout,
            self.shared.cluster.config().retry_backoff,
        )
        .await
    }

    /// Sends every queued record now and waits until all of them are
    /// acknowledged or failed; `None` waits without limit. Fails with
    /// `closed` once the producer is closed (close itself flushes).
    pub async fn flush(&self, timeout: Option<Duration>) -> Result<()> {
        if self.is_closed() {
            return Err(Error::closed("producer"));
        }
        self.drain(timeout).await
    }

    /// Waits until every record handed over is queued and the accumulator
    /// is empty (what flush and close share).
    async fn drain(&self, timeout: Option<Duration>) -> Result<()> {
        let shared = &self.shared;
        let wait = async {
            loop {
                let drained = shared.drained.notified();
                tokio::pin!(drained);
                drained.as_mut().enable();
                let handed_over = shared.ordered.is_idle();
                {
                    let mut acc = shared.accumulator.lock().unwrap_or_else(|p| p.into_inner());
                    if acc.is_empty() && handed_over {
                        return;
                    }
                    acc.request_flush();
                }
                shared.wake.notify_one();
                drained.await;
            }
        };
        let timed_out = |t: Duration| {
            Error::timeout(format!("flush did not finish within {} ms", t.as_millis()))
        };
        match timeout {
            None => {
                wait.await;
                Ok(())
            }
            // A zero timeout does not wait: one look (which also asks for
            // the queued records to go now). A timer of zero would only fire
            // on the timer's next tick, letting a fast acknowledgement slip
            // in first, so whether a zero flush timed out was a race.
            Some(t) if t.is_zero() => {
                futures_util::FutureExt::now_or_never(wait).ok_or_else(|| timed_out(t))
            }
            Some(t) => tokio::time::timeout(t, wait)
                .await
                .map_err(|_| timed_out(t)),
        }
    }

    /// Stops accepting records, flushes what is queued within `timeout`,
    /// then fails whatever is left and closes the connections. Closing
    /// twice is harmless.
    pub async fn close(&self, timeout: Duration) -> Result<()> {
        if self.shared.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let flushed = self.drain(Some(timeout)).await;
        {
            let mut acc = self
                .shared
                .accumulator
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            self.shared.terminated.store(true, Ordering::SeqCst);
            acc.fail_all(&Error::closed("producer"));
        }
        self.shared.ordered.fail_all(&Error::closed("producer"));
        self.shared.wake.notify_one();
        self.shared.cluster.close().await;
        flushed
    }

    /// True once `close` was called.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }

    /// This producer's statistics now (see [`crate::stats`]).
    pub fn statistics(&self) -> crate::Statistics {
        statistics_of(&self.shared)
    }

    /// Sets (or with `None` clears) the listener of background errors
    /// (batches that failed, a fenced producer, lost connections): called
    /// on this producer's callback thread, never on an I/O thread.
    pub fn set_error_listener(&self, listener: Option<crate::events::ErrorListener>) {
        self.shared.cluster.events().set_error_listener(listener);
    }

    /// Sets (or with `None` clears) the statistics listener: it gets a
    /// snapshot every `interval` (`None`: the `statistics_interval_ms`
    /// option; zero: never) on this producer's callback thread. It stops
    /// when the producer is dropped.
    pub fn set_statistics_listener(
        &self,
        interval: Option<Duration>,
        listener: Option<crate::events::StatisticsListener>,
    ) -> Result<()> {
        let interval = interval.unwrap_or(self.shared.cluster.config().statistics_interval);
        let weak = Arc::downgrade(&self.shared);
        let snapshot: crate::events::Snapshotter = Arc::new(move || {
            // Closed or dropped: no more snapshots.
            let shared = weak.upgrade().filter(|s| !s.closed.load(Ordering::SeqCst));
            Box::pin(async move { shared.map(|s| statistics_of(&s)) })
        });
        self.shared
            .cluster
            .events()
            .set_statistics_listener(interval, listener, snapshot)
    }

    /// The thread delivery callbacks run on (for the blocking facade's
    /// "flush waits for callbacks" rule).
    pub(crate) fn dispatcher(&self) -> &Dispatcher {
        &self.shared.dispatcher
    }
}

fn statistics_of(shared: &Shared) -> crate::Statistics {
    shared
        .cluster
        .events()
        .stats()
        .snapshot(&shared.cluster.config().client_id, "producer")
}

/// The partition of `record` in a topic described by `topic`;
/// `round_robin` is the topic's counter for records without a key.
fn partition_in(
    record: &ProducerRecord,
    topic: &crate::TopicInfo,
    round_robin: &mut u32,
) -> Result<u32> {
    let count = topic.partitions;
    if count == 0 {
        return Err(Error::protocol(format!(
            "topic {} reports no partitions",
            record.topic
        )));
    }
    if let Some(p) = record.partition {
        if p >= count {
            return Err(Error::invalid_argument(format!(
                "partition {p} does not exist: topic {} has {count}",
                record.topic
            )));
        }
        return Ok(p);
    }
    let by_key = topic.partitioner != "round_robin";
    match &record.key {
        Some(key) if by_key && !key.is_empty() => Ok(partition_for_key(key, count)),
        _ => {
            let next = *round_robin;
            *round_robin = round_robin.wrapping_add(1);
            Ok(next % count)
        }
    }
}

/// The outcome of [`Producer::push`].
enum Pushed {
    /// Queued, with its delivery when one was wanted.
    Queued(Option<Delivery>),
    /// The topic's metadata is not cached: fetch it, then push again.
    NoMetadata(ProducerRecord, Want),
}

/// Which records a producer still takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admission {
    /// A new `send`: refused once close started.
    New,
    /// Handed over to `send_in_order` before close started: taken until
    /// close fails what is left.
    HandedOver,
}

/// TXN_PUBLISH is a text command: the key is a field (text without
/// whitespace) and the payload the trailing `message=` (text).
fn check_text_record(record: &ProducerRecord) -> Result<()> {
    if std::str::from_utf8(&record.payload).is_err() {
        return Err(Error::invalid_argument(
            "a transactional record's payload must be UTF-8 text (TXN_PUBLISH is a text command)",
        ));
    }
    if let Some(key) = &record.key {
        match std::str::from_utf8(key) {
            Ok(k) if !k.chars().any(char::is_whitespace) => {}
            _ => {
                return Err(Error::invalid_argument(
                    "a transactional record's key must be UTF-8 text without whitespace",
                ))
            }
        }
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A value unique to this process and moment, for producer ids.
pub(crate) fn unique_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(now_ms() as u128);
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish()
}
