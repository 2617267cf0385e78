//! `_EventStore`: the synchronous event store's native half (wrapped by
//! `cursus.EventStore`, which adds the readers and the aggregate helper),
//! and `_Aggregate`, the engine's aggregate for it (wrapped by
//! `cursus.Aggregate`, which folds the events into the state).

use super::*;
use crate::eventstore::{
    event_arg, loaded, page_or_none, range_result, text_arg, AggregateCell, Appended, EventCursor,
    ReplayProof, Snapshot, StoredEvent,
};

/// Native synchronous event store client.
#[pyclass(module = "cursus._cursus", name = "_EventStore", frozen)]
pub struct EventStore {
    inner: Slot<Arc<blocking::EventStore>>,
}

#[pymethods]
impl EventStore {
    /// Connects; keyword arguments are engine client options.
    #[new]
    #[pyo3(signature = (**config))]
    fn new(py: Python<'_>, config: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let cfg = config::client(py, config)?;
        let s = off_thread(py, move || blocking::EventStore::connect(cfg))?;
        Ok(EventStore {
            inner: Slot::new("event store", Arc::new(s)),
        })
    }

    /// Appends an event if the aggregate is at `expected_version`.
    #[pyo3(signature = (topic, key, expected_version, payload, *, event_type=String::new(), metadata=None, schema_version=None, event_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn append(
        &self,
        py: Python<'_>,
        topic: String,
        key: String,
        expected_version: u64,
        payload: &Bound<'_, PyAny>,
        event_type: String,
        metadata: Option<&Bound<'_, PyAny>>,
        schema_version: Option<u32>,
        event_id: Option<String>,
    ) -> PyResult<Appended> {
        let s = self.inner.get(py)?;
        let event = event_arg(py, payload, event_type, metadata, schema_version, event_id)?;
        interruptible(py, async {
            s.as_async()?
                .append(&topic, &key, expected_version, &event)
                .await
        })
        .map(Into::into)
    }

    /// The aggregate's current version (0 when it has no event).
    fn stream_version(&self, py: Python<'_>, topic: String, key: String) -> PyResult<u64> {
        let s = self.inner.get(py)?;
        interruptible(py, async {
            s.as_async()?.stream_version(&topic, &key).await
        })
    }

    /// Saves `state` as the aggregate's snapshot at `version`.
    fn save_snapshot(
        &self,
        py: Python<'_>,
        topic: String,
        key: String,
        version: u64,
        state: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let s = self.inner.get(py)?;
        let state = text_arg(py, "state", state)?;
        interruptible(py, async {
            s.as_async()?
                .save_snapshot(&topic, &key, version, &state)
                .await
        })
    }

    /// The aggregate's latest snapshot, or `None`.
    fn read_snapshot(
        &self,
        py: Python<'_>,
        topic: String,
        key: String,
    ) -> PyResult<Option<Snapshot>> {
        let s = self.inner.get(py)?;
        let snap = interruptible(py, async {
            s.as_async()?.read_snapshot(&topic, &key).await
        })?;
        Ok(snap.map(Into::into))
    }

    /// The replay proof of aggregate `match_id` (AGGREGATE_REPLAY_PROOF); a
    /// proof that is not complete raises with the proof in `.proof`.
    #[pyo3(signature = (topic, match_id, expected_last_sequence=None))]
    fn replay_proof(
        &self,
        py: Python<'_>,
        topic: String,
        match_id: String,
        expected_last_sequence: Option<u64>,
    ) -> PyResult<ReplayProof> {
        let s = self.inner.get(py)?;
        interruptible(py, async {
            s.as_async()?
                .replay_proof(&topic, &match_id, expected_last_sequence)
                .await
        })
        .map(Into::into)
    }

    /// Events `from_sequence..=to_sequence` of aggregate `match_id` under
    /// a complete proof (AGGREGATE_EVENT_RANGE_READ): `(proof, events)`.
    #[pyo3(signature = (topic, match_id, from_sequence, to_sequence, max_records=None))]
    fn event_range(
        &self,
        py: Python<'_>,
        topic: String,
        match_id: String,
        from_sequence: u64,
        to_sequence: u64,
        max_records: Option<u32>,
    ) -> PyResult<PyObject> {
        let s = self.inner.get(py)?;
        let range = interruptible(py, async {
            s.as_async()?
                .event_range(&topic, &match_id, from_sequence, to_sequence, max_records)
                .await
        })?;
        range_result(py, range)
    }

    /// Reads the next page of `cursor` and moves it on; `None` once done.
    fn next_page(&self, py: Python<'_>, cursor: &EventCursor) -> PyResult<PyObject> {
        let s = self.inner.get(py)?;
        let c = cursor.inner.clone();
        let page = interruptible(py, async {
            let mut c = c.lock().await;
            s.as_async()?.next_page(&mut c).await
        })?;
        page_or_none(py, page)
    }

    /// Closes the client. Closing a closed client does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        match self.inner.take() {
            Some(s) => interruptible(py, async {
                s.as_async()?.close().await;
                Ok(())
            }),
            None => Ok(()),
        }
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }
}

/// The engine's aggregate (`cursus::eventstore::Aggregate`) for the
/// synchronous store: which version to append at and when a snapshot is
/// due. Each operation takes the `_EventStore` to use, blocks with the GIL
/// released and can be interrupted with Ctrl-C.
#[pyclass(module = "cursus._cursus", name = "_Aggregate", frozen)]
pub struct Aggregate {
    cell: Arc<AggregateCell>,
}

#[pymethods]
impl Aggregate {
    /// An aggregate not loaded yet (version 0); `load` reads its stream.
    #[new]
    fn new(topic: &str, key: &str, snapshot_every: u64) -> Self {
        Aggregate {
            cell: AggregateCell::new(topic, key, snapshot_every),
        }
    }

    /// Loads (again): the latest snapshot and every event after it, as
    /// `(snapshot or None, [StoredEvent, ...])` to fold in order.
    fn load(&self, py: Python<'_>, store: &EventStore) -> PyResult<PyObject> {
        let s = store.inner.get(py)?;
        let cell = self.cell.clone();
        let read = interruptible(py, async { cell.load(s.as_async()?).await })?;
        loaded(py, read)
    }

    /// Appends an event at the aggregate's next version; returns it as
    /// stored (`StoredEvent`, timestamp 0).
    #[pyo3(signature = (store, payload, *, event_type=String::new(), metadata=None, schema_version=None, event_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn append(
        &self,
        py: Python<'_>,
        store: &EventStore,
        payload: &Bound<'_, PyAny>,
        event_type: String,
        metadata: Option<&Bound<'_, PyAny>>,
        schema_version: Option<u32>,
        event_id: Option<String>,
    ) -> PyResult<StoredEvent> {
        let s = store.inner.get(py)?;
        let event = event_arg(py, payload, event_type, metadata, schema_version, event_id)?;
        let cell = self.cell.clone();
        let stored = interruptible(py, async { cell.append(s.as_async()?, &event).await })?;
        Ok(StoredEvent::from_engine(py, stored))
    }

    /// The automatic snapshot after an append: saves `state` when one is
    /// due; True when saved. A failed save is logged (warn), never raised.
    fn auto_snapshot(
        &self,
        py: Python<'_>,
        store: &EventStore,
        state: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let s = store.inner.get(py)?;
        let state = text_arg(py, "state", state)?;
        let cell = self.cell.clone();
        interruptible(py, async {
            Ok(cell.auto_snapshot(s.as_async()?, &state).await)
        })
    }

    /// Reports a state `serialize` could not turn into text (logged at
    /// warn, as a failed automatic snapshot).
    fn snapshot_failed(&self, reason: &str) {
        self.cell.snapshot_failed(reason);
    }

    /// Saves `state` as the snapshot at the aggregate's version.
    fn save_snapshot(
        &self,
        py: Python<'_>,
        store: &EventStore,
        state: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let s = store.inner.get(py)?;
        let state = text_arg(py, "state", state)?;
        let cell = self.cell.clone();
        interruptible(py, async {
            cell.save_snapshot(s.as_async()?, &state).await
        })
    }

    /// The topic.
    #[getter]
    fn topic(&self) -> String {
        self.cell.view().topic().to_owned()
    }

    /// The aggregate key.
    #[getter]
    fn key(&self) -> String {
        self.cell.view().key().to_owned()
    }

    /// The version loaded or last appended.
    #[getter]
    fn version(&self) -> u64 {
        self.cell.view().version()
    }

    /// The version of the last snapshot loaded or saved (0: none).
    #[getter]
    fn snapshot_version(&self) -> u64 {
        self.cell.view().snapshot_version()
    }

    /// Events between automatic snapshots (0: never).
    #[getter]
    fn snapshot_every(&self) -> u64 {
        self.cell.view().snapshot_every()
    }

    /// True when `snapshot_every` (> 0) events were appended since the
    /// last snapshot.
    #[getter]
    fn snapshot_due(&self) -> bool {
        self.cell.view().snapshot_due()
    }
}
