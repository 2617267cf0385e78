//! The producer.

use super::{partition_arg, Callback, Config, NO_TIMESTAMP};
use crate::error::Status;
use crate::records_in::Layout;
use crate::registry::Handle;
use crate::timeout;
use bytes::Bytes;
use cursus::{Error, ProducerRecord, RecordMetadata, Result, TraceContext};
use cursus_bridge_macros::bridge_fn;

pub use cursus::blocking::Producer;

impl Handle for Producer {
    const KIND: &'static str = "producer";
}

fn record(
    topic: &str,
    partition: i32,
    key: Option<&[u8]>,
    value: &[u8],
    timestamp: i64,
) -> ProducerRecord {
    ProducerRecord {
        topic: topic.to_owned(),
        partition: partition_arg(partition),
        key: key.map(Bytes::copy_from_slice),
        payload: Bytes::copy_from_slice(value),
        timestamp: (timestamp != NO_TIMESTAMP).then_some(timestamp),
        ..Default::default()
    }
}

/// Connects a producer with `config` (options `bootstrap_servers`, `acks`,
/// `linger_ms`, `enable_idempotence`, ...).
///
/// Thread-safety: safe from any thread. A producer may be used from several
/// threads at once.
#[bridge_fn(out = "producer")]
pub fn producer_new(config: &Config) -> Result<Producer> {
    let config = config.builder().producer()?;
    Producer::connect(config)
}

/// Sends one record and waits until it is acknowledged (or fails);
/// returns where it was stored.
///
/// `partition` < 0 lets the partitioner choose (the key's FNV-1a hash, or
/// round-robin without a key). `key` may be absent (no key); key and value
/// may hold any bytes and are copied before the call returns. `timestamp`
/// is milliseconds since the epoch, or `CURSUS_NO_TIMESTAMP` (`INT64_MIN`)
/// to stamp the send time.
///
/// Thread-safety: safe from any thread, concurrently on one producer, and
/// from a delivery callback.
#[bridge_fn(out = "metadata", langs = "c")]
pub fn producer_send(
    producer: &Producer,
    topic: &str,
    partition: i32,
    key: Option<&[u8]>,
    value: &[u8],
    timestamp: i64,
) -> Result<RecordMetadata> {
    producer.send_and_wait(record(topic, partition, key, value, timestamp))
}

/// Queues one record and returns once it is queued (waiting at most
/// `max_block_ms` for buffer space). `callback` is then called exactly
/// once with the outcome, on this producer's callback thread (never an
/// I/O thread), in offset order per partition. If queueing fails, the
/// error is returned and the callback is never called. The callback may
/// call the library, including `send` and `flush` of this producer.
/// Without a callback (NULL) the record is sent all the same and nothing
/// is called for it: the cheapest send; a failure reaches the producer's
/// error listener, and `flush` waits for it as for any record.
/// Arguments are as for `producer_send`.
///
/// Thread-safety: safe from any thread, concurrently on one producer, and
/// from a delivery callback.
#[bridge_fn]
pub fn producer_send_cb(
    producer: &Producer,
    topic: &str,
    partition: i32,
    key: Option<&[u8]>,
    value: &[u8],
    timestamp: i64,
    callback: Option<Callback<RecordMetadata>>,
) -> Result<()> {
    queue(
        producer,
        record(topic, partition, key, value, timestamp),
        callback,
    )
}

/// Queues `record`, its outcome to `callback` (none: dropped; a failure
/// reaches the error listener).
fn queue(
    producer: &Producer,
    record: ProducerRecord,
    callback: Option<Callback<RecordMetadata>>,
) -> Result<()> {
    let Some(callback) = callback else {
        // No callback (C NULL): no completion to box, queue and run on the
        // callback thread per record. A failure still reaches the error
        // listener (a failed batch); `flush` still waits for the record.
        return producer.send(record).map(drop);
    };
    // A failed delivery names its topic, whatever failed.
    let named = record.topic.clone();
    let callback = move |outcome: Result<RecordMetadata>| {
        callback(outcome.map_err(|e| match e.field("topic") {
            Some(_) => e,
            None => e.with_field("topic", named),
        }))
    };
    producer.send_with_callback(record, callback)
}

/// `record` with the application's `metadata` and the trace context of
/// `traceparent`/`tracestate` (checked: `invalid_trace_context`). The
/// engine writes the context into the metadata (docs/observability.md,
/// "Trace context in records"). A single traced send and each record of a
/// traced batch (`records_in`) go through here.
pub(crate) fn with_trace_context(
    mut record: ProducerRecord,
    metadata: Option<&str>,
    traceparent: Option<&str>,
    tracestate: Option<&str>,
) -> Result<ProducerRecord> {
    record.metadata = metadata.unwrap_or_default().to_owned();
    // An empty tracestate is none (as `TraceContext::new` takes it).
    let tracestate = tracestate.filter(|s| !s.is_empty());
    record.trace_context = match (traceparent, tracestate) {
        (Some(parent), state) => Some(TraceContext::new(parent, state)?),
        (None, None) => None,
        // A tracestate means nothing without its traceparent (W3C): a
        // caller passing one alone lost the other.
        (None, Some(_)) => {
            return Err(
                Error::invalid_argument("tracestate given without a traceparent")
                    .with_code("invalid_trace_context"),
            )
        }
    };
    Ok(record)
}

/// `producer_send` with the record's metadata and the W3C trace context
/// of the span sending it: the hook a tracing layer (opentelemetry-cpp's
/// propagator, for one) uses to link the consumer's spans to this send
/// (docs/observability.md, "C and C++").
///
/// `metadata` (NULL: none) is the record's own metadata (UTF-8, usually
/// a JSON object). `traceparent` (NULL: no context) and `tracestate`
/// (NULL or empty: none) are the W3C header values; the engine adds them
/// to the metadata as the keys `traceparent` and `tracestate` of a JSON
/// object, keeping the application's object byte for byte (metadata that
/// is not a JSON object is sent unchanged, without the context). A
/// malformed context fails the call with `CURSUS_ERR_INVALID_ARGUMENT`,
/// code `invalid_trace_context`, as does a `tracestate` without a
/// `traceparent`. Consumers read the context back with
/// `message_traceparent` and `message_tracestate`. The other arguments
/// are as for `producer_send`.
///
/// Thread-safety: safe from any thread, concurrently on one producer, and
/// from a delivery callback.
#[bridge_fn(out = "metadata", langs = "c")]
#[allow(clippy::too_many_arguments)]
pub fn producer_send_traced(
    producer: &Producer,
    topic: &str,
    partition: i32,
    key: Option<&[u8]>,
    value: &[u8],
    timestamp: i64,
    metadata: Option<&str>,
    traceparent: Option<&str>,
    tracestate: Option<&str>,
) -> Result<RecordMetadata> {
    let record = record(topic, partition, key, value, timestamp);
    producer.send_and_wait(with_trace_context(
        record,
        metadata,
        traceparent,
        tracestate,
    )?)
}

/// `producer_send_cb` with the record's metadata and trace context, as
/// `producer_send_traced` takes them (a malformed context fails the call
/// with code `invalid_trace_context`, and then the callback is never
/// called). The other arguments are as for `producer_send_cb`.
///
/// Thread-safety: safe from any thread, concurrently on one producer, and
/// from a delivery callback.
#[bridge_fn]
#[allow(clippy::too_many_arguments)]
pub fn producer_send_cb_traced(
    producer: &Producer,
    topic: &str,
    partition: i32,
    key: Option<&[u8]>,
    value: &[u8],
    timestamp: i64,
    metadata: Option<&str>,
    traceparent: Option<&str>,
    tracestate: Option<&str>,
    callback: Option<Callback<RecordMetadata>>,
) -> Result<()> {
    let record = record(topic, partition, key, value, timestamp);
    queue(
        producer,
        with_trace_context(record, metadata, traceparent, tracestate)?,
        callback,
    )
}

/// The outcomes of one batch send, in the order the records were packed:
/// what a batch's single delivery callback gets.
#[derive(Debug, Clone)]
pub struct DeliveryBatch {
    topic: String,
    outcomes: Vec<Result<RecordMetadata>>,
    packed: Vec<u8>,
}

impl Handle for DeliveryBatch {
    const KIND: &'static str = "delivery batch";
}

impl DeliveryBatch {
    /// The outcomes of `topic`'s records, in order; a failure names the
    /// topic, as a single send's does.
    pub fn new(topic: &str, outcomes: Vec<Result<RecordMetadata>>) -> DeliveryBatch {
        let outcomes: Vec<_> = outcomes
            .into_iter()
            .map(|o| {
                o.map_err(|e| match e.field("topic") {
                    Some(_) => e,
                    None => e.with_field("topic", topic),
                })
            })
            .collect();
        DeliveryBatch {
            topic: topic.to_owned(),
            packed: crate::records_in::pack_reports(&outcomes),
            outcomes,
        }
    }

    /// Every record's outcome, in order.
    pub fn outcomes(&self) -> &[Result<RecordMetadata>] {
        &self.outcomes
    }

    /// Takes the outcomes.
    pub fn into_outcomes(self) -> Vec<Result<RecordMetadata>> {
        self.outcomes
    }

    fn delivered(&self, index: usize) -> Option<&RecordMetadata> {
        self.outcomes.get(index).and_then(|o| o.as_ref().ok())
    }
}

/// Queues a batch of records of `topic`, packed as `bridge/src/records_in.rs`
/// describes (u32 count; per record i32 topic_len (-1: the batch's topic),
/// topic, i32 partition (-1: any), i64 timestamp (`CURSUS_NO_TIMESTAMP`: the
/// send time), i32 key_len (-1: no key), key, u32 value_len, value;
/// little-endian), in one call, and returns once every record is queued
/// (each waits at most `max_block_ms` for buffer space). The buffer is
/// copied before the call returns. A batch has one topic: a record naming
/// another fails the call with `CURSUS_ERR_INVALID_ARGUMENT` (class
/// validation, "a batch has one topic: record I is for "T", the batch for
/// "B""), the same rule and error in every language. Records with
/// metadata or a trace context: `producer_send_batch_traced`.
///
/// `callback` is then called exactly once for the whole batch, on this
/// producer's callback thread, with a delivery batch handle lent for the
/// call: every record's outcome in packed order. A record that cannot be
/// queued (a partition that does not exist, a record too large) fails
/// alone, in its slot; the others are sent. A malformed buffer or a
/// closed producer fails the call, and then the callback is never called.
///
/// Thread-safety: safe from any thread, concurrently on one producer, and
/// from a delivery callback.
#[bridge_fn]
pub fn producer_send_batch(
    producer: &Producer,
    topic: &str,
    packed: &[u8],
    callback: Callback<DeliveryBatch>,
) -> Result<()> {
    send_packed(producer, topic, packed, Layout::Plain, callback)
}

/// `producer_send_batch` for records that carry metadata or a W3C trace
/// context: the batch is packed in the traced layout of
/// `bridge/src/records_in.rs`, each record as for `producer_send_batch`
/// followed by i32 metadata_len (-1: none), metadata (UTF-8), i32
/// traceparent_len (-1: no context), traceparent, i32 tracestate_len (-1:
/// none), tracestate. Each record's context is written into its metadata
/// as `producer_send_traced` writes one record's (docs/observability.md,
/// "Trace context in records"). A malformed context, or a tracestate
/// without a traceparent, fails the whole call before anything is sent
/// with `CURSUS_ERR_INVALID_ARGUMENT`, code `invalid_trace_context` (its
/// field `record` names the record); a malformed buffer, with
/// `CURSUS_ERR_INVALID_ARGUMENT` naming the byte. The callback and
/// everything else are as for `producer_send_batch`.
///
/// Thread-safety: safe from any thread, concurrently on one producer, and
/// from a delivery callback.
#[bridge_fn]
pub fn producer_send_batch_traced(
    producer: &Producer,
    topic: &str,
    packed: &[u8],
    callback: Callback<DeliveryBatch>,
) -> Result<()> {
    send_packed(producer, topic, packed, Layout::Traced, callback)
}

/// Unpacks `packed` in `layout` and queues its records as one batch.
fn send_packed(
    producer: &Producer,
    topic: &str,
    packed: &[u8],
    layout: Layout,
    callback: Callback<DeliveryBatch>,
) -> Result<()> {
    let records = crate::records_in::unpack_layout(topic, packed, layout)?;
    let named = topic.to_owned();
    producer.send_batch(records, move |outcomes| {
        callback(Ok(DeliveryBatch::new(&named, outcomes)))
    })
}

/// The number of records in the batch.
///
/// Thread-safety: safe from any thread while the batch is lent.
#[bridge_fn]
pub fn delivery_batch_count(batch: &DeliveryBatch) -> usize {
    batch.outcomes.len()
}

/// The topic of the batch.
///
/// Thread-safety: safe from any thread while the batch is lent.
#[bridge_fn]
pub fn delivery_batch_topic(batch: &DeliveryBatch) -> &str {
    &batch.topic
}

/// Record `index`'s status: `ok` when it was delivered, else the status of
/// its error (`invalid_argument` for an index out of range).
///
/// Thread-safety: safe from any thread while the batch is lent.
#[bridge_fn(fallback = "InvalidArgument")]
pub fn delivery_batch_status(batch: &DeliveryBatch, index: usize) -> Status {
    match batch.outcomes.get(index) {
        Some(Ok(_)) => Status::Ok,
        Some(Err(e)) => Status::of(e),
        None => Status::InvalidArgument,
    }
}

/// Succeeds when record `index` was delivered; else fails with its error
/// (or `invalid_argument` for an index out of range).
///
/// Thread-safety: safe from any thread while the batch is lent.
#[bridge_fn]
pub fn delivery_batch_check(batch: &DeliveryBatch, index: usize) -> Result<()> {
    match batch.outcomes.get(index) {
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(e.clone()),
        None => Err(Error::invalid_argument(format!(
            "record {index} is out of range: the batch has {}",
            batch.outcomes.len()
        ))),
    }
}

/// The partition record `index` was written to, or -1 when it failed.
///
/// Thread-safety: safe from any thread while the batch is lent.
#[bridge_fn(fallback = "-1")]
pub fn delivery_batch_partition(batch: &DeliveryBatch, index: usize) -> i32 {
    batch.delivered(index).map_or(-1, |m| m.partition as i32)
}

/// The offset of record `index`, or -1 when it failed (or with acks=0).
///
/// Thread-safety: safe from any thread while the batch is lent.
#[bridge_fn(fallback = "-1")]
pub fn delivery_batch_offset(batch: &DeliveryBatch, index: usize) -> i64 {
    batch
        .delivered(index)
        .and_then(|m| m.offset)
        .map_or(-1, |o| o as i64)
}

/// The timestamp of record `index` (milliseconds since the epoch), or 0
/// when it failed.
///
/// Thread-safety: safe from any thread while the batch is lent.
#[bridge_fn]
pub fn delivery_batch_timestamp(batch: &DeliveryBatch, index: usize) -> i64 {
    batch.delivered(index).map_or(0, |m| m.timestamp)
}

/// Every record's report in one buffer, 24 bytes each after a u32 count
/// (i32 status, i32 partition, i64 offset, i64 timestamp; little-endian;
/// see `bridge/src/records_in.rs`), lent by the batch: for languages where
/// a call per record is expensive (cgo, JNI).
///
/// Thread-safety: safe from any thread while the batch is lent.
#[bridge_fn]
pub fn delivery_batch_packed(batch: &DeliveryBatch) -> &[u8] {
    &batch.packed
}

/// Sends everything queued and waits until every record sent before the
/// call is acknowledged or failed and its callback has returned, at most
/// `timeout_ms` (`-1`: no limit, `-2`: the default, 30 s). Fails with
/// `timeout` when the deadline passes. From a delivery callback it waits
/// for the acknowledgements only (the callbacks behind the running one
/// cannot run before it returns).
///
/// Thread-safety: safe from any thread, and from a delivery callback.
#[bridge_fn]
pub fn producer_flush(producer: &Producer, timeout_ms: i64) -> Result<()> {
    producer.flush(timeout::with_default(timeout_ms)?)
}

/// Stops taking records, flushes within `timeout_ms` (`-1`: no limit, `-2`:
/// the default, 30 s), fails what is left, then closes. Later sends fail
/// with `closed`; closing twice is harmless. The handle must still be
/// destroyed.
///
/// Thread-safety: safe from any thread, and from a delivery callback.
#[bridge_fn]
pub fn producer_close(producer: &Producer, timeout_ms: i64) -> Result<()> {
    producer.close(timeout::with_default(timeout_ms)?)
}
