//! Observability: client statistics, the periodic statistics and error
//! listeners, and the engine's log records (see `docs/observability.md`).

use super::{Consumer, Error, Producer};
use crate::callback::Listener;
use crate::log::{self as bridge_log, LogRecord};
use crate::registry::Handle;
use cursus::{Result, Statistics};
use cursus_bridge_macros::bridge_fn;
use std::sync::Arc;
use std::time::Duration;

impl Handle for Statistics {
    const KIND: &'static str = "statistics";
}

impl Handle for LogRecord {
    const KIND: &'static str = "log record";
}

/// A producer's statistics now: counters since it was created (records,
/// bytes and batches acknowledged, requests, retries, errors by class,
/// requests in flight) and the produce latency percentiles.
///
/// Thread-safety: safe from any thread, and from a callback.
#[bridge_fn(out = "statistics")]
pub fn producer_statistics(producer: &Producer) -> Result<Statistics> {
    producer.statistics()
}

/// A consumer's statistics now: counters since it was created (records and
/// bytes received, requests, retries, errors by class), the fetch latency
/// percentiles, and the lag of every assigned partition (asks the broker
/// for the partitions' end offsets).
///
/// Thread-safety: safe from any thread, and from a callback.
#[bridge_fn(out = "statistics")]
pub fn consumer_statistics(consumer: &Consumer) -> Result<Statistics> {
    consumer.statistics()
}

/// The client's `client_id`.
///
/// Thread-safety: safe from any thread while the statistics are alive.
#[bridge_fn]
pub fn statistics_client_id(statistics: &Statistics) -> &str {
    &statistics.client_id
}

/// What client they are from: `"producer"` or `"consumer"`.
///
/// Thread-safety: safe from any thread while the statistics are alive.
#[bridge_fn]
pub fn statistics_kind(statistics: &Statistics) -> &str {
    &statistics.kind
}

/// Records the broker acknowledged (producer).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_records_sent(statistics: &Statistics) -> u64 {
    statistics.records_sent
}

/// Payload plus key bytes of the acknowledged records (producer).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_bytes_sent(statistics: &Statistics) -> u64 {
    statistics.bytes_sent
}

/// Batches the broker acknowledged (producer).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_batches_sent(statistics: &Statistics) -> u64 {
    statistics.batches_sent
}

/// Records the consumer's fetchers received.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_records_received(statistics: &Statistics) -> u64 {
    statistics.records_received
}

/// Payload plus key bytes of the received records (consumer).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_bytes_received(statistics: &Statistics) -> u64 {
    statistics.bytes_received
}

/// Request attempts sent to brokers (each retry counts).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_requests(statistics: &Statistics) -> u64 {
    statistics.requests
}

/// Request attempts that were retries.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_retries(statistics: &Statistics) -> u64 {
    statistics.retries
}

/// Request attempts sent and not answered yet when the snapshot was taken.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_in_flight_requests(statistics: &Statistics) -> u64 {
    statistics.in_flight_requests
}

/// Failed request attempts of one error class (`class_name` as
/// `error_class_name` gives it, e.g. `"not_found"`); 0 for a class that
/// never failed or an unknown name.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_errors(statistics: &Statistics, class_name: &str) -> u64 {
    statistics.errors_of(class_name)
}

/// Produce latency samples (acknowledged batches).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_produce_latency_count(statistics: &Statistics) -> u64 {
    statistics.produce_latency.count
}

/// Produce latency (send to acknowledgement of a batch), median, in
/// microseconds.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_produce_latency_p50_us(statistics: &Statistics) -> u64 {
    statistics.produce_latency.p50_us
}

/// Produce latency, 99th percentile, in microseconds.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_produce_latency_p99_us(statistics: &Statistics) -> u64 {
    statistics.produce_latency.p99_us
}

/// Produce latency, 99.9th percentile, in microseconds.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_produce_latency_p999_us(statistics: &Statistics) -> u64 {
    statistics.produce_latency.p999_us
}

/// Produce latency, the largest sample, in microseconds.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_produce_latency_max_us(statistics: &Statistics) -> u64 {
    statistics.produce_latency.max_us
}

/// Fetch latency samples (CONSUME requests that returned records).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_fetch_latency_count(statistics: &Statistics) -> u64 {
    statistics.fetch_latency.count
}

/// Fetch latency (a CONSUME request to its records), median, in
/// microseconds.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_fetch_latency_p50_us(statistics: &Statistics) -> u64 {
    statistics.fetch_latency.p50_us
}

/// Fetch latency, 99th percentile, in microseconds.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_fetch_latency_p99_us(statistics: &Statistics) -> u64 {
    statistics.fetch_latency.p99_us
}

/// Fetch latency, 99.9th percentile, in microseconds.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_fetch_latency_p999_us(statistics: &Statistics) -> u64 {
    statistics.fetch_latency.p999_us
}

/// Fetch latency, the largest sample, in microseconds.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_fetch_latency_max_us(statistics: &Statistics) -> u64 {
    statistics.fetch_latency.max_us
}

/// How many partition rows the statistics hold (a consumer's assigned
/// partitions; 0 for a producer). Rows are read by index, `0 <= i < count`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn statistics_partition_count(statistics: &Statistics) -> usize {
    statistics.partitions.len()
}

/// Row `i`'s topic (NULL/null when `i` is out of range).
///
/// Thread-safety: safe from any thread while the statistics are alive.
#[bridge_fn]
pub fn statistics_partition_topic(statistics: &Statistics, i: usize) -> Option<&str> {
    statistics.partitions.get(i).map(|p| p.topic.as_str())
}

/// Row `i`'s partition (-1 when `i` is out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn statistics_partition_partition(statistics: &Statistics, i: usize) -> i64 {
    statistics
        .partitions
        .get(i)
        .map_or(-1, |p| i64::from(p.partition))
}

/// Row `i`'s position: the offset after the last record the consumer
/// returned, else the group's committed offset, else where
/// `auto_offset_reset` starts it (-1 when unknown or out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn statistics_partition_position(statistics: &Statistics, i: usize) -> i64 {
    statistics
        .partitions
        .get(i)
        .and_then(|p| p.position)
        .map_or(-1, |o| o as i64)
}

/// Row `i`'s end offset (LIST_OFFSETS latest; -1 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn statistics_partition_end_offset(statistics: &Statistics, i: usize) -> i64 {
    statistics
        .partitions
        .get(i)
        .map_or(-1, |p| p.end_offset as i64)
}

/// Row `i`'s lag: end offset minus position (-1 when the position is
/// unknown or `i` is out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn statistics_partition_lag(statistics: &Statistics, i: usize) -> i64 {
    statistics
        .partitions
        .get(i)
        .and_then(|p| p.lag)
        .map_or(-1, |l| l as i64)
}

/// The statistics as one JSON object (fields as in docs/observability.md).
///
/// Thread-safety: safe from any thread while the statistics are alive.
#[bridge_fn]
pub fn statistics_json(statistics: &Statistics) -> String {
    statistics.to_json()
}

/// The interval an `interval_ms` argument names: negative, the client's
/// `statistics_interval_ms` option; 0, never.
fn interval_arg(interval_ms: i64) -> Option<Duration> {
    u64::try_from(interval_ms).ok().map(Duration::from_millis)
}

fn statistics_listener(
    listener: Option<Listener<Statistics>>,
) -> Option<cursus::events::StatisticsListener> {
    listener.map(|l| Arc::new(move |s: Statistics| l(&s)) as cursus::events::StatisticsListener)
}

fn error_listener(listener: Option<Listener<Error>>) -> Option<cursus::events::ErrorListener> {
    listener.map(|l| Arc::new(move |e: Error| l(&e)) as cursus::events::ErrorListener)
}

/// Sets the producer's statistics listener: it gets a statistics handle
/// every `interval_ms` milliseconds (negative: the `statistics_interval_ms`
/// option; 0: never), on the producer's callback thread (never an I/O
/// thread). A NULL/null listener removes it. The handle is valid only
/// during the call. The listener may call the library, this producer
/// included.
///
/// Thread-safety: safe from any thread, and from a callback.
#[bridge_fn]
pub fn producer_set_statistics_listener(
    producer: &Producer,
    interval_ms: i64,
    listener: Option<Listener<Statistics>>,
) -> Result<()> {
    producer.set_statistics_listener(interval_arg(interval_ms), statistics_listener(listener))
}

/// Sets the consumer's statistics listener: it gets a statistics handle
/// (lag included) every `interval_ms` milliseconds (negative: the
/// `statistics_interval_ms` option; 0: never), on the consumer's callback
/// thread (never an I/O thread). A NULL/null listener removes it. The
/// handle is valid only during the call.
///
/// Thread-safety: safe from any thread, and from a callback.
#[bridge_fn]
pub fn consumer_set_statistics_listener(
    consumer: &Consumer,
    interval_ms: i64,
    listener: Option<Listener<Statistics>>,
) -> Result<()> {
    consumer.set_statistics_listener(interval_arg(interval_ms), statistics_listener(listener))
}

/// Sets the producer's error listener: it gets each background error (a
/// batch that failed, a fenced producer, a lost broker connection) as an
/// error handle, on the producer's callback thread. A NULL/null listener
/// removes it. The handle is valid only during the call.
///
/// Thread-safety: safe from any thread, and from a callback.
#[bridge_fn]
pub fn producer_set_error_listener(
    producer: &Producer,
    listener: Option<Listener<Error>>,
) -> Result<()> {
    producer.set_error_listener(error_listener(listener))
}

/// Sets the consumer's error listener: it gets each background error
/// (membership lost, a lost broker connection) as an error handle, on the
/// consumer's callback thread. A NULL/null listener removes it. The handle
/// is valid only during the call.
///
/// Thread-safety: safe from any thread, and from a callback.
#[bridge_fn]
pub fn consumer_set_error_listener(
    consumer: &Consumer,
    listener: Option<Listener<Error>>,
) -> Result<()> {
    consumer.set_error_listener(error_listener(listener))
}

/// Sends the engine's log records at `level_name` (`error`, `warn`,
/// `info`, `debug`, `trace`) and above to `listener`, for the whole
/// process, on the process's log thread (`cursus-log`, never an I/O
/// thread), in order. `off` or a NULL/null listener stops logging; records
/// below the level cost nearly nothing. The record handle is valid only
/// during the call. When the listener falls 10000 records behind, newer
/// records are dropped; the next one delivered says how many.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn log_set_listener(level_name: &str, listener: Option<Listener<LogRecord>>) -> Result<()> {
    let level = bridge_log::parse_level(level_name)?;
    bridge_log::set_listener(level, listener);
    Ok(())
}

/// Changes the level of the log listener (`error`, `warn`, `info`,
/// `debug`, `trace` or `off`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn log_set_level(level_name: &str) -> Result<()> {
    bridge_log::set_level(bridge_log::parse_level(level_name)?);
    Ok(())
}

/// The record's level: `"error"`, `"warn"`, `"info"`, `"debug"` or
/// `"trace"`.
///
/// Thread-safety: safe from any thread while the record is alive.
#[bridge_fn]
pub fn log_record_level(record: &LogRecord) -> &str {
    record.level_name()
}

/// Where the record comes from: the engine module, e.g.
/// `"cursus::consumer::group"`.
///
/// Thread-safety: safe from any thread while the record is alive.
#[bridge_fn]
pub fn log_record_target(record: &LogRecord) -> &str {
    &record.target
}

/// The message, followed by ` key=value` per field.
///
/// Thread-safety: safe from any thread while the record is alive.
#[bridge_fn]
pub fn log_record_message(record: &LogRecord) -> &str {
    &record.message
}

/// Records dropped just before this one because the listener fell behind.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn log_record_dropped(record: &LogRecord) -> u64 {
    record.dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::config::{config_new, config_set};
    use crate::api::producer::{producer_close, producer_new, producer_send};
    use std::sync::mpsc;

    #[test]
    fn statistics_and_listeners_through_the_entry_points() {
        let broker = cursus_testkit::TestBroker::start();
        let config = config_new().unwrap();
        config_set(&config, "bootstrap_servers", &broker.addr).unwrap();
        let producer = producer_new(&config).unwrap();
        let (tx, rx) = mpsc::channel::<(String, u64)>();
        let tx = std::sync::Mutex::new(tx);
        producer_set_error_listener(
            &producer,
            Some(Arc::new(move |e: &Error| {
                let _ = tx.lock().unwrap().send((e.class().name().to_owned(), 0));
            })),
        )
        .unwrap();
        let failed = producer_send(
            &producer,
            "missing",
            -1,
            None,
            b"x",
            crate::api::NO_TIMESTAMP,
        )
        .expect_err("no such topic");
        let s = producer_statistics(&producer).unwrap();
        assert_eq!(statistics_kind(&s), "producer");
        assert_eq!(statistics_records_sent(&s), 0);
        assert!(statistics_errors(&s, failed.class().name()) >= 1);
        assert_eq!(statistics_errors(&s, "no_such_class"), 0);
        assert_eq!(statistics_partition_count(&s), 0);
        assert_eq!(statistics_partition_topic(&s, 0), None);
        assert_eq!(statistics_partition_lag(&s, 0), -1);
        assert!(statistics_json(&s).contains("\"kind\":\"producer\""));

        let (stx, srx) = mpsc::channel::<u64>();
        let stx = std::sync::Mutex::new(stx);
        producer_set_statistics_listener(
            &producer,
            20,
            Some(Arc::new(move |s: &Statistics| {
                let _ = stx.lock().unwrap().send(statistics_requests(s));
            })),
        )
        .unwrap();
        assert!(srx.recv_timeout(Duration::from_secs(20)).unwrap() >= 1);
        producer_set_statistics_listener(&producer, 20, None).unwrap();
        producer_set_error_listener(&producer, None).unwrap();
        producer_close(&producer, 5000).unwrap();
        assert!(
            rx.try_recv().is_err(),
            "a failed call is not a background error"
        );
        assert!(log_set_level("loud").is_err());
    }
}
