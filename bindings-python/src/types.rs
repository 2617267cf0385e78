//! Message and metadata types, and payload conversion.

use bytes::Bytes;
use cursus as pa;
use cursus::consumer::{ConsumerRecord, RecordEvent};
use cursus::producer::RecordMetadata as EngineMetadata;
use cursus::TopicPartition as EngineTp;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

// The result classes declared in the bridge (`bridge_results!`).
pub use crate::results_gen::*;

/// Payloads at least this large are sent without copying (the `bytes`
/// object is kept alive until the engine is done with it); smaller ones are
/// copied, which is cheaper than the shared ownership.
const ZERO_COPY_MIN: usize = 4096;

/// Keeps an immutable Python `bytes` object alive while the engine reads it.
struct PyBytesOwner {
    _obj: Py<PyBytes>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the pointer refers to the immutable buffer of a `bytes` object
// that `_obj` keeps alive (a strong reference); `bytes` never moves or
// changes its buffer, so reading it from any thread is sound. `Py<T>` itself
// is `Send`, and dropping it without the GIL defers the decref to pyo3's
// reference pool.
unsafe impl Send for PyBytesOwner {}

impl AsRef<[u8]> for PyBytesOwner {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr`/`len` were taken from the live, immutable `bytes`
        // object held by `_obj` (see the `Send` impl above).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Converts a bytes-like object (`bytes`, `bytearray`, `memoryview`, any
/// buffer of unsigned bytes) into engine `Bytes`. Large `bytes` are shared,
/// not copied; mutable buffers are copied, since the caller may change them
/// while the record is queued.
pub fn payload(obj: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(share(b));
    }
    // Any other buffer (bytearray, memoryview, array of bytes...): one copy
    // through `memoryview(obj).tobytes()` (the buffer C API is not part of
    // the abi3 surface before 3.11), then shared.
    let py = obj.py();
    let view = py
        .import_bound("builtins")?
        .getattr("memoryview")?
        .call1((obj,))
        .map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "expected a bytes-like object (bytes, bytearray, memoryview), got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
    let copy = view.call_method0("tobytes")?;
    Ok(share(copy.downcast::<PyBytes>()?))
}

/// Shares a `bytes` object's buffer with the engine (copies small ones).
fn share(b: &Bound<'_, PyBytes>) -> Bytes {
    let data = b.as_bytes();
    if data.len() < ZERO_COPY_MIN {
        return Bytes::copy_from_slice(data);
    }
    Bytes::from_owner(PyBytesOwner {
        ptr: data.as_ptr(),
        len: data.len(),
        _obj: b.clone().unbind(),
    })
}

/// Converts an optional bytes-like key.
pub fn key(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Bytes>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) if o.is_instance_of::<pyo3::types::PyString>() => {
            Ok(Some(Bytes::from(o.extract::<String>()?)))
        }
        Some(o) => payload(o).map(Some),
    }
}

/// Where an acknowledged record was stored.
#[pyclass(module = "cursus", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct RecordMetadata {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Offset; `None` with acks=0, where nothing is confirmed.
    pub offset: Option<u64>,
    /// Timestamp sent with the record (ms since the epoch).
    pub timestamp: i64,
}

#[pymethods]
impl RecordMetadata {
    fn __repr__(&self) -> String {
        format!(
            "RecordMetadata(topic={:?}, partition={}, offset={}, timestamp={})",
            self.topic,
            self.partition,
            self.offset
                .map_or_else(|| "None".to_owned(), |o| o.to_string()),
            self.timestamp
        )
    }
}

impl From<EngineMetadata> for RecordMetadata {
    fn from(m: EngineMetadata) -> Self {
        RecordMetadata {
            topic: m.topic,
            partition: m.partition,
            offset: m.offset,
            timestamp: m.timestamp,
        }
    }
}

/// A consumed record.
///
/// Lean on purpose (issue #20): `poll` makes one per record under the GIL,
/// so the object holds only what every record has (the topic `str` is
/// shared by the records of one poll, key and payload are `bytes` made once
/// from the engine's buffer); the rarer metadata and event fields sit behind
/// one pointer and become Python objects only when read.
#[pyclass(module = "cursus", frozen)]
#[derive(Debug)]
pub struct Message {
    topic: Py<PyString>,
    key: Option<Py<PyBytes>>,
    payload: Py<PyBytes>,
    offset: u64,
    timestamp: i64,
    partition: u32,
    extra: Option<Box<MessageExtra>>,
}

/// The fields of a message most records do not have.
#[derive(Debug)]
struct MessageExtra {
    metadata: Option<String>,
    event: Option<RecordEvent>,
}

#[pymethods]
impl Message {
    /// Topic.
    #[getter]
    fn topic(&self, py: Python<'_>) -> Py<PyString> {
        self.topic.clone_ref(py)
    }

    /// Partition.
    #[getter]
    fn partition(&self) -> u32 {
        self.partition
    }

    /// Offset.
    #[getter]
    fn offset(&self) -> u64 {
        self.offset
    }

    /// Key; `None` when the record has no (or an empty) key.
    #[getter]
    fn key(&self, py: Python<'_>) -> Option<Py<PyBytes>> {
        self.key.as_ref().map(|k| k.clone_ref(py))
    }

    /// Payload.
    #[getter]
    fn payload(&self, py: Python<'_>) -> Py<PyBytes> {
        self.payload.clone_ref(py)
    }

    /// The payload (alias of `payload`).
    #[getter]
    fn value(&self, py: Python<'_>) -> Py<PyBytes> {
        self.payload.clone_ref(py)
    }

    /// Timestamp (ms since the epoch): the producer's, or the broker's
    /// append time when the producer set none.
    #[getter]
    fn timestamp(&self) -> i64 {
        self.timestamp
    }

    /// The record's metadata (event-sourcing topics: usually JSON), or
    /// `None` when it has none.
    #[getter]
    fn metadata(&self) -> Option<&str> {
        self.extra.as_ref()?.metadata.as_deref()
    }

    /// The W3C trace context the record carries in its metadata (a
    /// `TraceContext`), or `None` (read by the engine:
    /// `ConsumerRecord::trace_context`).
    #[getter]
    fn trace_context(&self) -> Option<crate::telemetry::TraceContext> {
        cursus::trace_context::extract(self.metadata()?).map(Into::into)
    }

    /// The event type of an event of an event-sourcing topic, else `None`.
    #[getter]
    fn event_type(&self) -> Option<&str> {
        self.event().map(|e| e.event_type.as_str())
    }

    /// The event's payload schema version, else `None`.
    #[getter]
    fn schema_version(&self) -> Option<u32> {
        self.event().map(|e| e.schema_version)
    }

    /// The aggregate version the event created, else `None`.
    #[getter]
    fn aggregate_version(&self) -> Option<u64> {
        self.event().map(|e| e.aggregate_version)
    }

    /// The event id, when the event has one, else `None`.
    #[getter]
    fn event_id(&self) -> Option<&str> {
        self.event()?.event_id.as_deref()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Message(topic={:?}, partition={}, offset={}, timestamp={}, key={}, payload=<{} bytes>{})",
            self.topic.bind(py).to_string_lossy(),
            self.partition,
            self.offset,
            self.timestamp,
            self.key
                .as_ref()
                .map_or_else(|| "None".to_owned(), |k| format!("<{} bytes>", k.bind(py).as_bytes().len())),
            self.payload.bind(py).as_bytes().len(),
            match self.event() {
                Some(e) => format!(
                    ", event_type={:?}, aggregate_version={}",
                    e.event_type, e.aggregate_version
                ),
                None => String::new(),
            }
        )
    }
}

impl Message {
    fn event(&self) -> Option<&RecordEvent> {
        self.extra.as_ref()?.event.as_ref()
    }

    /// Converts an engine record (one copy of key and payload into
    /// `bytes`), with its topic as the `str` given.
    fn from_engine(py: Python<'_>, topic: Py<PyString>, r: ConsumerRecord) -> Message {
        let extra = (r.metadata.is_some() || r.event.is_some()).then(|| {
            Box::new(MessageExtra {
                metadata: r.metadata,
                event: r.event,
            })
        });
        Message {
            topic,
            key: r.key.as_ref().map(|k| PyBytes::new_bound(py, k).unbind()),
            payload: PyBytes::new_bound(py, &r.payload).unbind(),
            offset: r.offset,
            timestamp: r.timestamp,
            partition: r.partition,
            extra,
        }
    }

    /// The records of one poll as a Python `list` of `Message`, made in
    /// one pass with the GIL held: one `str` per topic of the batch (the
    /// records of a poll come a partition at a time, so comparing with the
    /// previous record's topic finds it), one `bytes` per payload and key.
    pub fn list(py: Python<'_>, records: Vec<ConsumerRecord>) -> PyResult<PyObject> {
        let mut topics: Vec<(String, Py<PyString>)> = Vec::new();
        let mut last: Option<usize> = None;
        let mut out: Vec<Py<Message>> = Vec::with_capacity(records.len());
        for r in records {
            let i = match last {
                Some(i) if topics[i].0 == r.topic => i,
                _ => {
                    let i = match topics.iter().position(|(t, _)| *t == r.topic) {
                        Some(i) => i,
                        None => {
                            let s = PyString::new_bound(py, &r.topic).unbind();
                            topics.push((r.topic.clone(), s));
                            topics.len() - 1
                        }
                    };
                    last = Some(i);
                    i
                }
            };
            let topic = topics[i].1.clone_ref(py);
            out.push(Py::new(py, Message::from_engine(py, topic, r))?);
        }
        Ok(out.into_py(py))
    }
}

/// A topic partition.
#[pyclass(module = "cursus", frozen, get_all, eq, hash)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopicPartition {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
}

#[pymethods]
impl TopicPartition {
    #[new]
    fn new(topic: String, partition: u32) -> Self {
        TopicPartition { topic, partition }
    }

    fn __repr__(&self) -> String {
        format!("TopicPartition({:?}, {})", self.topic, self.partition)
    }
}

impl From<EngineTp> for TopicPartition {
    fn from(tp: EngineTp) -> Self {
        TopicPartition {
            topic: tp.topic,
            partition: tp.partition,
        }
    }
}

impl TopicPartition {
    /// The engine's topic partition.
    pub fn engine(&self) -> EngineTp {
        EngineTp::new(&self.topic, self.partition)
    }
}

/// Latency percentiles in microseconds (all 0 while `count` is 0).
#[pyclass(module = "cursus", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct Latency {
    /// Samples recorded.
    pub count: u64,
    /// Median.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// The largest sample.
    pub max_us: u64,
}

#[pymethods]
impl Latency {
    fn __repr__(&self) -> String {
        format!(
            "Latency(count={}, p50_us={}, p99_us={}, p999_us={}, max_us={})",
            self.count, self.p50_us, self.p99_us, self.p999_us, self.max_us
        )
    }
}

impl From<pa::Latency> for Latency {
    fn from(l: pa::Latency) -> Self {
        Latency {
            count: l.count,
            p50_us: l.p50_us,
            p99_us: l.p99_us,
            p999_us: l.p999_us,
            max_us: l.max_us,
        }
    }
}

/// How far a consumer is behind on one assigned partition.
#[pyclass(module = "cursus", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct PartitionLag {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// The consumer's position (the offset after the last record it
    /// returned, else the committed offset, else where `auto_offset_reset`
    /// starts it); `None` when unknown.
    pub position: Option<u64>,
    /// The partition's end offset.
    pub end_offset: u64,
    /// `end_offset - position`; `None` when the position is unknown.
    pub lag: Option<u64>,
}

#[pymethods]
impl PartitionLag {
    fn __repr__(&self) -> String {
        let opt = |v: Option<u64>| v.map_or_else(|| "None".to_owned(), |v| v.to_string());
        format!(
            "PartitionLag(topic={:?}, partition={}, position={}, end_offset={}, lag={})",
            self.topic,
            self.partition,
            opt(self.position),
            self.end_offset,
            opt(self.lag)
        )
    }
}

impl From<pa::PartitionLag> for PartitionLag {
    fn from(p: pa::PartitionLag) -> Self {
        PartitionLag {
            topic: p.topic,
            partition: p.partition,
            position: p.position,
            end_offset: p.end_offset,
            lag: p.lag,
        }
    }
}

/// A client's statistics at one moment (see docs/observability.md):
/// counters since the client was made, latency percentiles, and for a
/// consumer the lag of each assigned partition.
#[pyclass(module = "cursus", frozen)]
#[derive(Clone, Debug)]
pub struct Statistics {
    /// The client's `client_id` option.
    #[pyo3(get)]
    pub client_id: String,
    /// `"producer"` or `"consumer"`.
    #[pyo3(get)]
    pub kind: String,
    /// Records acknowledged by the broker (producer).
    #[pyo3(get)]
    pub records_sent: u64,
    /// Payload plus key bytes of the acknowledged records (producer).
    #[pyo3(get)]
    pub bytes_sent: u64,
    /// Batches acknowledged by the broker (producer).
    #[pyo3(get)]
    pub batches_sent: u64,
    /// Records the consumer's fetchers received (consumer).
    #[pyo3(get)]
    pub records_received: u64,
    /// Payload plus key bytes of the received records (consumer).
    #[pyo3(get)]
    pub bytes_received: u64,
    /// Request attempts sent to brokers (each retry counts).
    #[pyo3(get)]
    pub requests: u64,
    /// Request attempts that were retries.
    #[pyo3(get)]
    pub retries: u64,
    /// Failed request attempts by error class (classes that never failed
    /// are absent).
    #[pyo3(get)]
    pub errors: std::collections::BTreeMap<String, u64>,
    /// Request attempts sent and not answered yet.
    #[pyo3(get)]
    pub in_flight_requests: u64,
    /// Produce latency: a batch's send to its acknowledgement.
    #[pyo3(get)]
    pub produce_latency: Latency,
    /// Fetch latency: a fetch request to the batch it returned.
    #[pyo3(get)]
    pub fetch_latency: Latency,
    /// The lag of each assigned partition (consumer; empty otherwise).
    #[pyo3(get)]
    pub partitions: Vec<PartitionLag>,
    /// The engine's snapshot (for `to_json`).
    engine: pa::Statistics,
}

#[pymethods]
impl Statistics {
    /// The snapshot as JSON text (the attribute names as keys; the same
    /// document every language's statistics give).
    fn to_json(&self) -> String {
        self.engine.to_json()
    }

    /// The snapshot as a `dict` of plain values (nested dicts and lists).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import_bound("json")?
            .call_method1("loads", (self.engine.to_json(),))
    }

    fn __repr__(&self) -> String {
        format!(
            "Statistics(kind={:?}, client_id={:?}, records_sent={}, records_received={}, requests={}, retries={}, in_flight_requests={}, partitions={})",
            self.kind,
            self.client_id,
            self.records_sent,
            self.records_received,
            self.requests,
            self.retries,
            self.in_flight_requests,
            self.partitions.len()
        )
    }
}

impl From<pa::Statistics> for Statistics {
    fn from(s: pa::Statistics) -> Self {
        Statistics {
            client_id: s.client_id.clone(),
            kind: s.kind.clone(),
            records_sent: s.records_sent,
            bytes_sent: s.bytes_sent,
            batches_sent: s.batches_sent,
            records_received: s.records_received,
            bytes_received: s.bytes_received,
            requests: s.requests,
            retries: s.retries,
            errors: s.errors.clone(),
            in_flight_requests: s.in_flight_requests,
            produce_latency: s.produce_latency.into(),
            fetch_latency: s.fetch_latency.into(),
            partitions: s.partitions.iter().cloned().map(Into::into).collect(),
            engine: s,
        }
    }
}
