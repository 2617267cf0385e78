//! The producer.

use super::{partition_arg, Callback, Config, NO_TIMESTAMP};
use crate::registry::Handle;
use crate::timeout;
use bytes::Bytes;
use cursus::{ProducerRecord, RecordMetadata, Result};
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
    callback: Callback<RecordMetadata>,
) -> Result<()> {
    // A failed delivery names its topic, whatever failed.
    let named = topic.to_owned();
    let callback = move |outcome: Result<RecordMetadata>| {
        callback(outcome.map_err(|e| match e.field("topic") {
            Some(_) => e,
            None => e.with_field("topic", named),
        }))
    };
    producer.send_with_callback(record(topic, partition, key, value, timestamp), callback)
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
