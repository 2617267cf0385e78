//! The spans of a language's tracing layer, as the engine declares them
//! (`core/src/telemetry.rs`, docs/observability.md "Spans"): a layer asks
//! for the span of an operation and starts one of its own OpenTelemetry
//! API with its name, kind and attributes, so no language re-declares them.

use super::partition_arg;
use crate::registry::Handle;
use cursus::telemetry::{self, AttributeValue, SpanKind};
use cursus::Result;
use cursus_bridge_macros::bridge_fn;

/// A span to start (name, kind, attributes), or attributes to add to a
/// started one (an acknowledgement's, an error's: then the name is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanSpec(pub telemetry::SpanSpec);

impl Handle for SpanSpec {
    const KIND: &'static str = "span spec";
}

impl SpanSpec {
    /// Attributes alone, to add to a started span.
    fn attributes(attributes: Vec<(&'static str, AttributeValue)>) -> SpanSpec {
        SpanSpec(telemetry::SpanSpec {
            name: String::new(),
            kind: SpanKind::Client,
            attributes,
        })
    }

    fn attribute(&self, index: usize) -> Option<&(&'static str, AttributeValue)> {
        self.0.attributes.get(index)
    }
}

/// An optional `u64` given as an `i64` (negative: none).
fn optional_u64(value: i64) -> Option<u64> {
    u64::try_from(value).ok()
}

/// The instrumentation scope every layer names its tracer with (`cursus`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "scope")]
pub fn span_scope() -> Result<String> {
    Ok(telemetry::SCOPE.to_owned())
}

/// The publish span of a send of one record to `topic`: `partition` < 0
/// when the partitioner chooses, `key` absent for none (only a UTF-8 key
/// is recorded), `body_size` the value's length, `client_id` absent for
/// none. Started at the send, ended at the acknowledgement.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "span")]
pub fn span_publish(
    topic: &str,
    partition: i32,
    key: Option<&[u8]>,
    body_size: u64,
    client_id: Option<&str>,
) -> Result<SpanSpec> {
    Ok(SpanSpec(telemetry::publish(
        topic,
        partition_arg(partition),
        key,
        body_size as usize,
        client_id,
    )))
}

/// What a publish span adds when the record is acknowledged (`offset` < 0:
/// none, as with acks=0): attributes only.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "span")]
pub fn span_acknowledged(partition: u32, offset: i64) -> Result<SpanSpec> {
    Ok(SpanSpec::attributes(telemetry::acknowledged(
        partition,
        optional_u64(offset),
    )))
}

/// The receive span of one poll that returned `count` records of `topics`
/// (one entry per record, or per distinct topic), `group` absent for none.
/// A layer links it to each record's trace context.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "span")]
pub fn span_receive(topics: &[String], count: u64, group: Option<&str>) -> Result<SpanSpec> {
    let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
    Ok(SpanSpec(telemetry::receive(&topics, count as usize, group)))
}

/// The process span of one received record: a child of the record's
/// trace context.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "span")]
pub fn span_process(
    topic: &str,
    partition: u32,
    offset: u64,
    key: Option<&[u8]>,
    body_size: u64,
    group: Option<&str>,
) -> Result<SpanSpec> {
    Ok(SpanSpec(telemetry::process(
        topic,
        partition,
        offset,
        key,
        body_size as usize,
        group,
    )))
}

/// The span of a transaction's commit (`commit` true) or abort.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "span")]
pub fn span_end_transaction(transactional_id: &str, commit: bool) -> Result<SpanSpec> {
    Ok(SpanSpec(telemetry::end_transaction(
        transactional_id,
        commit,
    )))
}

/// The span of an event-store append to `aggregate` expecting `version`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "span")]
pub fn span_append(topic: &str, aggregate: &str, version: u64) -> Result<SpanSpec> {
    Ok(SpanSpec(telemetry::append(topic, aggregate, version)))
}

/// The span of an event-store read of `aggregate` from `from_version`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "span")]
pub fn span_read(topic: &str, aggregate: &str, from_version: u64) -> Result<SpanSpec> {
    Ok(SpanSpec(telemetry::read(topic, aggregate, from_version)))
}

/// The attribute key of a metric point's `attribute`: `client_id`
/// (every point), `error_type` (the class of `errors`), `topic` and
/// `partition` (`lag`), as `telemetry::keys` declares them; an unknown
/// one fails with `invalid_argument`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "key")]
pub fn telemetry_metric_attribute(attribute: &str) -> Result<String> {
    use telemetry::keys as k;
    let key = match attribute {
        "client_id" => k::CLIENT_ID,
        "error_type" => k::ERROR_TYPE,
        "topic" => k::DESTINATION,
        "partition" => k::PARTITION,
        other => {
            return Err(cursus::Error::invalid_argument(format!(
                "no metric attribute {other:?}"
            )))
        }
    };
    Ok(key.to_owned())
}

/// What a span of a failed operation adds (`error.type`, the error's
/// `code`): attributes only. The layer also sets the span's status to
/// error.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "span")]
pub fn span_failed(code: &str) -> Result<SpanSpec> {
    Ok(SpanSpec::attributes(vec![(
        telemetry::keys::ERROR_TYPE,
        code.into(),
    )]))
}

/// The span's name (empty for attributes alone).
///
/// Thread-safety: safe from any thread while the span spec is alive.
#[bridge_fn]
pub fn span_spec_name(span: &SpanSpec) -> &str {
    &span.0.name
}

/// The span's kind: `producer`, `consumer` or `client`.
///
/// Thread-safety: safe from any thread while the span spec is alive.
#[bridge_fn]
pub fn span_spec_kind(span: &SpanSpec) -> &str {
    span.0.kind.name()
}

/// The number of attributes.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn span_spec_attribute_count(span: &SpanSpec) -> usize {
    span.0.attributes.len()
}

/// Attribute `index`'s key; none out of range.
///
/// Thread-safety: safe from any thread while the span spec is alive.
#[bridge_fn]
pub fn span_spec_attribute_key(span: &SpanSpec, index: usize) -> Option<&str> {
    span.attribute(index).map(|(k, _)| *k)
}

/// Attribute `index`'s value when it is a string; none when it is an
/// integer (`span_spec_attribute_int`) or out of range.
///
/// Thread-safety: safe from any thread while the span spec is alive.
#[bridge_fn]
pub fn span_spec_attribute_string(span: &SpanSpec, index: usize) -> Option<&str> {
    match span.attribute(index) {
        Some((_, AttributeValue::Str(s))) => Some(s.as_ref()),
        _ => None,
    }
}

/// Attribute `index`'s value when it is an integer; 0 otherwise.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn span_spec_attribute_int(span: &SpanSpec, index: usize) -> i64 {
    match span.attribute(index) {
        Some((_, AttributeValue::Int(n))) => *n,
        _ => 0,
    }
}

/// One of the metrics every layer reports from a client's statistics
/// (`cursus::telemetry::metrics::ALL`, docs/observability.md "Metrics").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric(pub &'static telemetry::metrics::Metric);

impl Handle for Metric {
    const KIND: &'static str = "metric";
}

/// The number of metrics (`metric` takes 0 to this minus one).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "count")]
pub fn metric_count() -> Result<u64> {
    Ok(telemetry::metrics::ALL.len() as u64)
}

/// Metric `index`, in the order a layer registers them; an
/// `invalid_argument` error out of range.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "metric")]
pub fn metric(index: u64) -> Result<Metric> {
    telemetry::metrics::ALL
        .get(index as usize)
        .map(Metric)
        .ok_or_else(|| cursus::Error::invalid_argument(format!("no metric {index}")))
}

/// The instrument name.
///
/// Thread-safety: safe from any thread while the metric is alive.
#[bridge_fn]
pub fn metric_name(metric: &Metric) -> &str {
    metric.0.name
}

/// The statistics field it reads, its field names joined by dots, e.g.
/// `records_sent`, `produce_latency.p50_us` or `partitions.lag`.
///
/// Thread-safety: safe from any thread while the metric is alive.
#[bridge_fn]
pub fn metric_field(metric: &Metric) -> &str {
    metric.0.field
}

/// The UCUM unit (`{message}`, `By`, `us`, ...).
///
/// Thread-safety: safe from any thread while the metric is alive.
#[bridge_fn]
pub fn metric_unit(metric: &Metric) -> &str {
    metric.0.unit
}

/// The instrument kind: `counter` (monotonic) or `gauge`.
///
/// Thread-safety: safe from any thread while the metric is alive.
#[bridge_fn]
pub fn metric_kind(metric: &Metric) -> &str {
    metric.0.kind.name()
}

/// The kind of client that reports it (`producer`, `consumer`), or none
/// for every client.
///
/// Thread-safety: safe from any thread while the metric is alive.
#[bridge_fn]
pub fn metric_client(metric: &Metric) -> Option<&str> {
    metric.0.client
}

/// How the field becomes points: `none` (one), `error_type` (one per
/// error class of the `errors` map, in `error.type`) or `partition` (one
/// per partition with a known lag, with its topic and partition).
///
/// Thread-safety: safe from any thread while the metric is alive.
#[bridge_fn]
pub fn metric_breakdown(metric: &Metric) -> &str {
    metric.0.breakdown.name()
}
