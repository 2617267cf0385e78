//! The event store's hand-shaped value types (`StoredEvent`, `Page`; the
//! declared results `Appended` and `Snapshot` are generated, replay proofs
//! are in `replay.rs`), the paged-read cursor shared by the synchronous and
//! the asyncio store, and argument conversion. The store classes themselves are in
//! `sync/eventstore.rs` and `aio/eventstore.rs`, with the native halves of
//! the aggregate (`_Aggregate`, `_AsyncAggregate`: the engine's
//! `Aggregate`); the readers and the aggregate helper's folding are Python
//! (`cursus/_eventstore.py`).

use crate::errors::to_py;
pub use crate::replay::{range_result, RangeEvent, ReplayProof};
pub use crate::results_gen::{Appended, Snapshot};
use cursus::eventstore::{
    Aggregate as EngineAggregate, Cursor, Event, Page as EnginePage, PageLimits,
    Snapshot as EngineSnapshot, StoredEvent as EngineEvent,
};
use cursus::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use std::sync::Arc;

/// One stored event (or, read by `browse`, any record) with every field.
#[pyclass(module = "cursus", frozen, get_all)]
#[derive(Debug)]
pub struct StoredEvent {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Offset in the partition.
    pub offset: u64,
    /// Aggregate key (`b""` for a record without one).
    pub key: Py<PyBytes>,
    /// Version in the aggregate's stream (0 for a record that is no event).
    pub version: u64,
    /// Event type (may be empty).
    pub event_type: String,
    /// Schema version of the payload (1 unless the writer set another).
    pub schema_version: u32,
    /// Metadata text (may be empty).
    pub metadata: String,
    /// Payload.
    pub payload: Py<PyBytes>,
    /// Milliseconds since the epoch (0 when unknown).
    pub timestamp: i64,
}

#[pymethods]
impl StoredEvent {
    /// An event as the store would return it (for tests of fold functions,
    /// and for the events the aggregate helper appends; their `timestamp`
    /// is 0, unknown). `key` and `payload` take `str` (UTF-8) or bytes.
    #[new]
    #[pyo3(signature = (*, topic, partition, offset, key, version, event_type, payload, schema_version=1, metadata=String::new(), timestamp=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        topic: String,
        partition: u32,
        offset: u64,
        key: &Bound<'_, PyAny>,
        version: u64,
        event_type: String,
        payload: &Bound<'_, PyAny>,
        schema_version: u32,
        metadata: String,
        timestamp: i64,
    ) -> PyResult<Self> {
        let bytes = |v: &Bound<'_, PyAny>| -> PyResult<Py<PyBytes>> {
            let b = crate::types::key(Some(v))?.unwrap_or_default();
            Ok(PyBytes::new_bound(py, &b).unbind())
        };
        Ok(StoredEvent {
            topic,
            partition,
            offset,
            key: bytes(key)?,
            version,
            event_type,
            schema_version,
            metadata,
            payload: bytes(payload)?,
            timestamp,
        })
    }

    /// The payload (alias of `payload`, as `Message.value`).
    #[getter]
    fn value(&self, py: Python<'_>) -> Py<PyBytes> {
        self.payload.clone_ref(py)
    }

    /// The payload decoded as UTF-8 (event payloads are text; a record
    /// read by `browse` that is not raises `UnicodeDecodeError`).
    #[getter]
    fn text<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.payload.bind(py).call_method1("decode", ("utf-8",))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "StoredEvent(topic={:?}, partition={}, offset={}, key={}, version={}, \
             event_type={:?}, schema_version={}, timestamp={}, payload=<{} bytes>)",
            self.topic,
            self.partition,
            self.offset,
            self.key
                .bind(py)
                .repr()
                .map_or_else(|_| "?".to_owned(), |r| r.to_string()),
            self.version,
            self.event_type,
            self.schema_version,
            self.timestamp,
            self.payload.bind(py).as_bytes().len()
        )
    }
}

impl StoredEvent {
    pub(crate) fn from_engine(py: Python<'_>, e: EngineEvent) -> StoredEvent {
        StoredEvent {
            topic: e.topic,
            partition: e.partition,
            offset: e.offset,
            key: PyBytes::new_bound(py, &e.key).unbind(),
            version: e.version,
            event_type: e.event_type,
            schema_version: e.schema_version,
            metadata: e.metadata,
            payload: PyBytes::new_bound(py, &e.payload).unbind(),
            timestamp: e.timestamp,
        }
    }
}

/// One page of a paged read.
#[pyclass(module = "cursus", frozen)]
pub struct Page {
    partition: u32,
    snapshot: Option<Snapshot>,
    events: Py<PyList>,
    has_more: bool,
    completeness: Option<&'static str>,
    head_version: Option<u64>,
    readable_end_offset: Option<u64>,
    earliest_offset: Option<u64>,
}

#[pymethods]
impl Page {
    /// The partition read.
    #[getter]
    fn partition(&self) -> u32 {
        self.partition
    }

    /// Stream reads: the aggregate's snapshot (first page only, and only
    /// when its version is at least the read's `from_version`; the events
    /// then start after it).
    #[getter]
    fn snapshot(&self) -> Option<Snapshot> {
        self.snapshot.clone()
    }

    /// The events (browse: the records), in order; a new list each time.
    #[getter]
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let events = self.events.bind(py);
        Ok(PyList::new_bound(py, events.iter()))
    }

    /// More pages follow.
    #[getter]
    fn has_more(&self) -> bool {
        self.has_more
    }

    /// History reads: `"complete"`, `"partial"` or `"unknown"`.
    #[getter]
    fn completeness(&self) -> Option<&'static str> {
        self.completeness
    }

    /// History reads: the aggregate's current version.
    #[getter]
    fn head_version(&self) -> Option<u64> {
        self.head_version
    }

    /// Browse reads: the end of what is readable in the partition.
    #[getter]
    fn readable_end_offset(&self) -> Option<u64> {
        self.readable_end_offset
    }

    /// Browse reads: the partition's earliest retained offset.
    #[getter]
    fn earliest_offset(&self) -> Option<u64> {
        self.earliest_offset
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.events.bind(py).len()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Page(partition={}, events=<{}>, has_more={}{}{}{})",
            self.partition,
            self.events.bind(py).len(),
            if self.has_more { "True" } else { "False" },
            self.snapshot
                .as_ref()
                .map_or_else(String::new, |s| format!(", snapshot_version={}", s.version)),
            self.completeness
                .map_or_else(String::new, |c| format!(", completeness={c:?}")),
            self.head_version
                .map_or_else(String::new, |v| format!(", head_version={v}")),
        )
    }
}

impl Page {
    /// Converts an engine page (one copy of each key and payload).
    pub fn from_engine(py: Python<'_>, p: EnginePage) -> Page {
        let events = PyList::new_bound(
            py,
            p.events
                .into_iter()
                .map(|e| StoredEvent::from_engine(py, e).into_py(py)),
        );
        Page {
            partition: p.partition,
            snapshot: p.snapshot.map(Into::into),
            events: events.unbind(),
            has_more: p.has_more,
            completeness: p.completeness.map(|c| c.as_str()),
            head_version: p.head_version,
            readable_end_offset: p.readable_end_offset,
            earliest_offset: p.earliest_offset,
        }
    }
}

/// Converts an optional engine page for Python (`None` once done).
pub fn page_or_none(py: Python<'_>, p: Option<EnginePage>) -> PyResult<PyObject> {
    Ok(match p {
        Some(p) => Py::new(py, Page::from_engine(py, p))?.into_py(py),
        None => py.None(),
    })
}

/// A paged read's position. The engine's cursor, behind an async mutex so
/// that a page read (sync or asyncio) holds it across its round trip: two
/// reads of one cursor take turns instead of reading the same page.
#[pyclass(module = "cursus._cursus", name = "_EventCursor", frozen)]
pub struct EventCursor {
    pub(crate) inner: Arc<tokio::sync::Mutex<Cursor>>,
}

fn limits(max_records: Option<u32>, max_bytes: Option<u32>) -> PageLimits {
    PageLimits {
        max_records,
        max_bytes,
    }
}

impl EventCursor {
    fn of(cursor: Cursor) -> EventCursor {
        EventCursor {
            inner: Arc::new(tokio::sync::Mutex::new(cursor)),
        }
    }
}

#[pymethods]
impl EventCursor {
    /// An aggregate's stream (READ_STREAM) from `from_version`.
    #[staticmethod]
    #[pyo3(signature = (topic, key, from_version, max_records=None, max_bytes=None))]
    fn stream(
        topic: String,
        key: String,
        from_version: u64,
        max_records: Option<u32>,
        max_bytes: Option<u32>,
    ) -> EventCursor {
        EventCursor::of(
            Cursor::stream(topic, key, from_version).with_limits(limits(max_records, max_bytes)),
        )
    }

    /// An aggregate's original events (READ_STREAM_HISTORY).
    #[staticmethod]
    #[pyo3(signature = (topic, key, from_version, to_version=None, max_records=None, max_bytes=None))]
    fn history(
        topic: String,
        key: String,
        from_version: u64,
        to_version: Option<u64>,
        max_records: Option<u32>,
        max_bytes: Option<u32>,
    ) -> EventCursor {
        EventCursor::of(
            Cursor::history(topic, key, from_version, to_version)
                .with_limits(limits(max_records, max_bytes)),
        )
    }

    /// A partition's records (BROWSE_MESSAGES).
    #[staticmethod]
    #[pyo3(signature = (topic, partition, from_offset, to_offset=None, max_records=None, max_bytes=None))]
    fn browse(
        topic: String,
        partition: u32,
        from_offset: u64,
        to_offset: Option<u64>,
        max_records: Option<u32>,
        max_bytes: Option<u32>,
    ) -> EventCursor {
        EventCursor::of(
            Cursor::browse(topic, partition, from_offset, to_offset)
                .with_limits(limits(max_records, max_bytes)),
        )
    }

    /// True once every page was read (false while a read is under way).
    #[getter]
    fn done(&self) -> bool {
        self.inner.try_lock().is_ok_and(|c| c.is_done())
    }
}

/// The engine's `Aggregate`, shared by `_Aggregate` and `_AsyncAggregate`.
/// Operations (load, append, save_snapshot) take `op`, an async mutex held
/// across their round trip, so two on one aggregate take turns; `view` is
/// a copy published after each, which the getters read without waiting
/// for an operation under way.
pub struct AggregateCell {
    op: tokio::sync::Mutex<EngineAggregate>,
    view: std::sync::Mutex<EngineAggregate>,
}

impl AggregateCell {
    /// An aggregate not loaded yet (version 0).
    pub fn new(topic: &str, key: &str, snapshot_every: u64) -> Arc<AggregateCell> {
        let a = EngineAggregate::new(topic, key, snapshot_every);
        Arc::new(AggregateCell {
            view: std::sync::Mutex::new(a.clone()),
            op: tokio::sync::Mutex::new(a),
        })
    }

    /// The aggregate as of the last operation.
    pub fn view(&self) -> EngineAggregate {
        self.view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn publish(&self, a: &EngineAggregate) {
        *self
            .view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = a.clone();
    }

    /// Loads the aggregate again (the engine's `Aggregate::load`): its
    /// latest snapshot and the events after it, to fold.
    pub async fn load(
        &self,
        store: &cursus::eventstore::EventStore,
    ) -> cursus::Result<(Option<EngineSnapshot>, Vec<EngineEvent>)> {
        let mut a = self.op.lock().await;
        let (loaded, snapshot, events) =
            EngineAggregate::load(store, a.topic(), a.key(), a.snapshot_every()).await?;
        *a = loaded;
        self.publish(&a);
        Ok((snapshot, events))
    }

    /// Appends at the aggregate's next version (`Aggregate::append`):
    /// the event as stored.
    pub async fn append(
        &self,
        store: &cursus::eventstore::EventStore,
        event: &Event,
    ) -> cursus::Result<EngineEvent> {
        let mut a = self.op.lock().await;
        let stored = a.append(store, event).await;
        self.publish(&a);
        stored
    }

    /// The automatic snapshot (`Aggregate::auto_snapshot`): saves `state`
    /// when due; a failure is logged, never returned.
    pub async fn auto_snapshot(&self, store: &cursus::eventstore::EventStore, state: &str) -> bool {
        let mut a = self.op.lock().await;
        let saved = a.auto_snapshot(store, state).await;
        self.publish(&a);
        saved
    }

    /// Reports a state the application could not serialise for the
    /// automatic snapshot (`Aggregate::snapshot_failed`).
    pub fn snapshot_failed(&self, reason: &str) {
        self.view()
            .snapshot_failed(&Error::invalid_argument(format!(
                "the state could not be serialised: {reason}"
            )));
    }

    /// Saves `state` as the snapshot at the aggregate's version
    /// (`Aggregate::save_snapshot`).
    pub async fn save_snapshot(
        &self,
        store: &cursus::eventstore::EventStore,
        state: &str,
    ) -> cursus::Result<()> {
        let mut a = self.op.lock().await;
        let saved = a.save_snapshot(store, state).await;
        self.publish(&a);
        saved
    }
}

/// What loading an aggregate read, for Python: `(snapshot or None,
/// [StoredEvent, ...])`.
pub fn loaded(
    py: Python<'_>,
    (snapshot, events): (Option<EngineSnapshot>, Vec<EngineEvent>),
) -> PyResult<PyObject> {
    let events = PyList::new_bound(
        py,
        events
            .into_iter()
            .map(|e| StoredEvent::from_engine(py, e).into_py(py)),
    );
    Ok((snapshot.map(Snapshot::from), events).into_py(py))
}

/// Text of a `str` or UTF-8 `bytes`-like argument (payloads, metadata and
/// snapshot states are text on the wire).
pub fn text_arg(py: Python<'_>, what: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = value.downcast::<PyString>() {
        return s.extract::<String>();
    }
    let bytes = crate::types::payload(value).map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "{what} must be str or UTF-8 bytes, got {}",
            value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        to_py(
            py,
            &Error::invalid_argument(format!("{what} is not UTF-8 text: {e}")),
        )
    })
}

/// An event from `append`'s (or `append_stream`'s) arguments. An
/// `event_id` of `None` lets the engine generate one; the engine checks
/// any other at append.
pub fn event_arg(
    py: Python<'_>,
    payload: &Bound<'_, PyAny>,
    event_type: String,
    metadata: Option<&Bound<'_, PyAny>>,
    schema_version: Option<u32>,
    event_id: Option<String>,
) -> PyResult<Event> {
    Ok(Event {
        event_type,
        payload: text_arg(py, "payload", payload)?,
        metadata: match metadata {
            Some(m) if !m.is_none() => text_arg(py, "metadata", m)?,
            _ => String::new(),
        },
        schema_version,
        event_id,
    })
}
