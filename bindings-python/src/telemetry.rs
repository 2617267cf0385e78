//! Tracing support: `cursus.TraceContext` (the W3C context a record
//! carries) and the engine's span declarations (`cursus::telemetry`)
//! handed to `cursus.otel`, so that the Python layer starts its spans with
//! the names, kinds and attributes every language uses and declares none
//! of its own.

use crate::errors::IntoPyResult;
use cursus::telemetry::{self as spans, AttributeValue, SpanSpec};
use pyo3::prelude::*;

/// A W3C trace context: a `traceparent` value and an optional
/// `tracestate`, checked when made (an invalid one raises
/// `cursus.ValidationError` with code `invalid_trace_context`).
#[pyclass(module = "cursus", frozen, eq, hash)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TraceContext {
    pub(crate) inner: cursus::TraceContext,
}

#[pymethods]
impl TraceContext {
    #[new]
    #[pyo3(signature = (traceparent, tracestate=None))]
    fn new(py: Python<'_>, traceparent: &str, tracestate: Option<&str>) -> PyResult<Self> {
        let inner = cursus::TraceContext::new(traceparent, tracestate).py_err(py)?;
        Ok(TraceContext { inner })
    }

    /// The `traceparent` value.
    #[getter]
    fn traceparent(&self) -> &str {
        self.inner.traceparent()
    }

    /// The `tracestate` value, or `None`.
    #[getter]
    fn tracestate(&self) -> Option<&str> {
        self.inner.tracestate()
    }

    /// The trace id: 32 lower-case hex digits.
    #[getter]
    fn trace_id(&self) -> &str {
        self.inner.trace_id()
    }

    /// The parent span id: 16 lower-case hex digits.
    #[getter]
    fn span_id(&self) -> &str {
        self.inner.span_id()
    }

    /// True when the `sampled` flag is set.
    #[getter]
    fn sampled(&self) -> bool {
        self.inner.sampled()
    }

    fn __repr__(&self) -> String {
        match self.inner.tracestate() {
            Some(state) => format!("TraceContext({:?}, {:?})", self.inner.traceparent(), state),
            None => format!("TraceContext({:?})", self.inner.traceparent()),
        }
    }
}

impl From<cursus::TraceContext> for TraceContext {
    fn from(inner: cursus::TraceContext) -> Self {
        TraceContext { inner }
    }
}

/// A span declaration as `(name, kind, [(key, value), ...])` (kind:
/// `producer`, `consumer` or `client`; values `str` or `int`).
type Spec = (String, &'static str, Vec<(&'static str, PyObject)>);

fn attributes(
    py: Python<'_>,
    attrs: Vec<(&'static str, AttributeValue)>,
) -> Vec<(&'static str, PyObject)> {
    attrs
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                AttributeValue::Str(s) => s.as_ref().into_py(py),
                AttributeValue::Int(n) => n.into_py(py),
            };
            (k, v)
        })
        .collect()
}

fn spec(py: Python<'_>, s: SpanSpec) -> Spec {
    (s.name, s.kind.name(), attributes(py, s.attributes))
}

fn key_bytes(key: Option<&Bound<'_, PyAny>>) -> PyResult<Option<bytes::Bytes>> {
    crate::types::key(key)
}

/// The publish span of a send (`cursus::telemetry::publish`).
#[pyfunction]
#[pyo3(signature = (topic, partition, key, body_size, client_id))]
fn _span_publish(
    py: Python<'_>,
    topic: &str,
    partition: Option<u32>,
    key: Option<&Bound<'_, PyAny>>,
    body_size: usize,
    client_id: Option<&str>,
) -> PyResult<Spec> {
    let key = key_bytes(key)?;
    Ok(spec(
        py,
        spans::publish(topic, partition, key.as_deref(), body_size, client_id),
    ))
}

/// The publish spans of a batch send, one per record in order: the
/// records parsed as `Producer.send_batch` parses them (so a tracing layer
/// does not parse them again).
#[pyfunction]
#[pyo3(signature = (topic, records, partition, client_id))]
fn _span_publish_batch(
    py: Python<'_>,
    topic: &str,
    records: &Bound<'_, PyAny>,
    partition: Option<u32>,
    client_id: Option<&str>,
) -> PyResult<Vec<Spec>> {
    let records = crate::sync::batch_records(topic, records, partition, None, None, None)?;
    Ok(records
        .iter()
        .map(|r| {
            let publish = spans::publish(
                topic,
                r.partition,
                r.key.as_deref(),
                r.payload.len(),
                client_id,
            );
            spec(py, publish)
        })
        .collect())
}

/// What a publish span adds at the acknowledgement.
#[pyfunction]
#[pyo3(signature = (partition, offset))]
fn _span_acknowledged(
    py: Python<'_>,
    partition: u32,
    offset: Option<u64>,
) -> Vec<(&'static str, PyObject)> {
    attributes(py, spans::acknowledged(partition, offset))
}

/// The receive span of a poll that returned `count` records of `topics`.
#[pyfunction]
#[pyo3(signature = (topics, count, group))]
fn _span_receive(py: Python<'_>, topics: Vec<String>, count: usize, group: Option<&str>) -> Spec {
    let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
    spec(py, spans::receive(&topics, count, group))
}

/// The process span of one received record.
#[pyfunction]
#[pyo3(signature = (topic, partition, offset, key, body_size, group))]
fn _span_process(
    py: Python<'_>,
    topic: &str,
    partition: u32,
    offset: u64,
    key: Option<&Bound<'_, PyAny>>,
    body_size: usize,
    group: Option<&str>,
) -> PyResult<Spec> {
    let key = key_bytes(key)?;
    Ok(spec(
        py,
        spans::process(topic, partition, offset, key.as_deref(), body_size, group),
    ))
}

/// The commit (`commit=True`) or abort span of a transaction.
#[pyfunction]
fn _span_end_transaction(py: Python<'_>, transactional_id: &str, commit: bool) -> Spec {
    spec(py, spans::end_transaction(transactional_id, commit))
}

/// The span of an event-store append.
#[pyfunction]
fn _span_append(py: Python<'_>, topic: &str, aggregate: &str, version: u64) -> Spec {
    spec(py, spans::append(topic, aggregate, version))
}

/// The span of an event-store read.
#[pyfunction]
fn _span_read(py: Python<'_>, topic: &str, aggregate: &str, from_version: u64) -> Spec {
    spec(py, spans::read(topic, aggregate, from_version))
}

/// A metric as `_metrics` hands it to Python.
type MetricRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
);

/// The engine's metrics (`cursus::telemetry::metrics::ALL`) as
/// `(name, field, unit, kind, client, breakdown)` tuples: `field` a path
/// of `Statistics` attribute names joined by `.`, `kind` `counter` or
/// `gauge`, `client` `producer`, `consumer` or `None` (every client),
/// `breakdown` `none`, `error_type` or `partition`.
#[pyfunction]
fn _metrics() -> Vec<MetricRow> {
    spans::metrics::ALL
        .iter()
        .map(|m| {
            (
                m.name,
                m.field,
                m.unit,
                m.kind.name(),
                m.client,
                m.breakdown.name(),
            )
        })
        .collect()
}

/// Registers the class, the span functions and the constants.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TraceContext>()?;
    m.add_function(wrap_pyfunction!(_span_publish, m)?)?;
    m.add_function(wrap_pyfunction!(_span_publish_batch, m)?)?;
    m.add_function(wrap_pyfunction!(_span_acknowledged, m)?)?;
    m.add_function(wrap_pyfunction!(_span_receive, m)?)?;
    m.add_function(wrap_pyfunction!(_span_process, m)?)?;
    m.add_function(wrap_pyfunction!(_span_end_transaction, m)?)?;
    m.add_function(wrap_pyfunction!(_span_append, m)?)?;
    m.add_function(wrap_pyfunction!(_span_read, m)?)?;
    m.add_function(wrap_pyfunction!(_metrics, m)?)?;
    m.add("_TELEMETRY_SCOPE", spans::SCOPE)?;
    m.add("_ERROR_TYPE_KEY", spans::keys::ERROR_TYPE)?;
    m.add("_CLIENT_ID_KEY", spans::keys::CLIENT_ID)?;
    m.add("_DESTINATION_KEY", spans::keys::DESTINATION)?;
    m.add("_PARTITION_KEY", spans::keys::PARTITION)?;
    Ok(())
}
