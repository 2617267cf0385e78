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
mod sender;

use crate::client::{Cluster, Lane};
use crate::config::ProducerConfig;
use crate::error::{Error, Result};
use crate::partitioner::partition_for_key;
use accumulator::{Accumulator, Queued};
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{oneshot, Semaphore};

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
#[derive(Debug)]
pub struct Delivery {
    rx: oneshot::Receiver<Result<RecordMetadata>>,
}

impl Future for Delivery {
    type Output = Result<RecordMetadata>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.rx)
            .poll(cx)
            .map(|r| r.unwrap_or_else(|_| Err(Error::closed("producer"))))
    }
}

pub(crate) struct Shared {
    cluster: Arc<Cluster>,
    config: ProducerConfig,
    memory: Arc<Semaphore>,
    accumulator: Mutex<Accumulator>,
    wake: tokio::sync::Notify,
    drained: tokio::sync::Notify,
    closed: AtomicBool,
    round_robin: Mutex<std::collections::HashMap<String, AtomicU32>>,
    producer_id: String,
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
        let shared = Arc::new(Shared {
            memory: Arc::new(Semaphore::new(
                config.buffer_memory.min(Semaphore::MAX_PERMITS),
            )),
            accumulator: Mutex::new(Accumulator::default()),
            wake: tokio::sync::Notify::new(),
            drained: tokio::sync::Notify::new(),
            closed: AtomicBool::new(false),
            round_robin: Mutex::new(Default::default()),
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
        let shared = &self.shared;
        if shared.closed.load(Ordering::SeqCst) {
            return Err(Error::closed("producer"));
        }
        let size =
            record.payload.len() + record.key.as_ref().map_or(0, Bytes::len) + RECORD_OVERHEAD;
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
        let partition = self.choose_partition(&record).await?;
        let permit = tokio::time::timeout(
            shared.config.max_block,
            Arc::clone(&shared.memory).acquire_many_owned(size as u32),
        )
        .await
        .map_err(|_| {
            Error::timeout(format!(
                "buffer_memory ({} bytes) stayed full for max_block_ms ({} ms)",
                shared.config.buffer_memory,
                shared.config.max_block.as_millis()
            ))
            .with_code("max_block_exceeded")
        })?
        .map_err(|_| Error::closed("producer"))?;
        let (tx, rx) = oneshot::channel();
        let timestamp = record.timestamp.unwrap_or_else(now_ms);
        let mut accumulator = shared.accumulator.lock().unwrap_or_else(|p| p.into_inner());
        // Checked again under the lock: `close` sets the flag before its final
        // `fail_all`, so a record is either queued before that (and flushed or
        // failed) or refused here, never stranded after the sender exits.
        if shared.closed.load(Ordering::SeqCst) {
            return Err(Error::closed("producer"));
        }
        let ready = accumulator.push(
            (record.topic, partition),
            Queued {
                key: record.key.unwrap_or_default(),
                payload: record.payload,
                timestamp,
                size,
                reply: tx,
                _permit: permit,
            },
            shared.config.batch_size,
        );
        drop(accumulator);
        if ready {
            shared.wake.notify_one();
        }
        Ok(Delivery { rx })
    }

    async fn choose_partition(&self, record: &ProducerRecord) -> Result<u32> {
        let metadata = self.shared.cluster.metadata(&record.topic, false).await?;
        let count = metadata.topic.partitions;
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
        let by_key = metadata.topic.partitioner != "round_robin";
        match &record.key {
            Some(key) if by_key && !key.is_empty() => Ok(partition_for_key(key, count)),
            _ => {
                let mut counters = self
                    .shared
                    .round_robin
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                let counter = counters
                    .entry(record.topic.clone())
                    .or_insert_with(|| AtomicU32::new(0));
                Ok(counter.fetch_add(1, Ordering::Relaxed) % count)
            }
        }
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

    /// Waits until the accumulator is empty (what flush and close share).
    async fn drain(&self, timeout: Option<Duration>) -> Result<()> {
        let shared = &self.shared;
        let wait = async {
            loop {
                let drained = shared.drained.notified();
                tokio::pin!(drained);
                drained.as_mut().enable();
                {
                    let mut acc = shared.accumulator.lock().unwrap_or_else(|p| p.into_inner());
                    if acc.is_empty() {
                        return;
                    }
                    acc.request_flush();
                }
                shared.wake.notify_one();
                drained.await;
            }
        };
        match timeout {
            None => {
                wait.await;
                Ok(())
            }
            Some(t) => tokio::time::timeout(t, wait).await.map_err(|_| {
                Error::timeout(format!("flush did not finish within {} ms", t.as_millis()))
            }),
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
        self.shared
            .accumulator
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .fail_all(&Error::closed("producer"));
        self.shared.wake.notify_one();
        self.shared.cluster.close().await;
        flushed
    }

    /// True once `close` was called.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::SeqCst)
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A value unique to this process and moment, for producer ids.
fn unique_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(now_ms() as u128);
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish()
}
