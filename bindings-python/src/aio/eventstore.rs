//! `AsyncEventStore`: the event store resolved on asyncio futures (wrapped
//! by `cursus.aio.EventStore`, which adds the readers and the aggregate
//! helper), and `_AsyncAggregate`, the engine's aggregate for it (wrapped
//! by `cursus.aio.Aggregate`, which folds the events into the state).

use super::*;
use crate::eventstore::{
    event_arg, loaded, page_or_none, range_result, text_arg, AggregateCell, Appended, EventCursor,
    ReplayProof, Snapshot, StoredEvent,
};
use cursus::eventstore::EventStore as EngineEventStore;

/// Native async event store client.
#[pyclass(module = "cursus._cursus", frozen)]
pub struct AsyncEventStore {
    state: ProcessLocal<Client<Arc<EngineEventStore>>>,
}

impl AsyncEventStore {
    fn st(&self, py: Python<'_>) -> PyResult<&Client<Arc<EngineEventStore>>> {
        self.state.get().py_err(py)
    }
}

#[pymethods]
impl AsyncEventStore {
    /// Connects; resolves to an `AsyncEventStore`.
    #[staticmethod]
    #[pyo3(signature = (**config))]
    fn connect<'py>(
        py: Python<'py>,
        config: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cfg = config::client(py, config)?;
        connect_client(
            py,
            "eventstore",
            "event store",
            async { EngineEventStore::connect(cfg).await.map(Arc::new) },
            |state| AsyncEventStore { state },
        )
    }

    /// Appends an event if the aggregate is at `expected_version`.
    #[pyo3(signature = (topic, key, expected_version, payload, *, event_type=String::new(), metadata=None, schema_version=None, event_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn append<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        key: String,
        expected_version: u64,
        payload: &Bound<'py, PyAny>,
        event_type: String,
        metadata: Option<&Bound<'py, PyAny>>,
        schema_version: Option<u32>,
        event_id: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let s = st.inner.get(py)?;
        let event = event_arg(py, payload, event_type, metadata, schema_version, event_id)?;
        bridge(
            py,
            &st.dispatcher,
            async move { s.append(&topic, &key, expected_version, &event).await },
            into::<Appended, _>,
        )
    }

    /// The aggregate's current version (0 when it has no event).
    fn stream_version<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        key: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let s = st.inner.get(py)?;
        bridge(
            py,
            &st.dispatcher,
            async move { s.stream_version(&topic, &key).await },
            |py, v| Ok(v.into_py(py)),
        )
    }

    /// Saves `state` as the aggregate's snapshot at `version`.
    fn save_snapshot<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        key: String,
        version: u64,
        state: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let s = st.inner.get(py)?;
        let state = text_arg(py, "state", state)?;
        bridge(
            py,
            &st.dispatcher,
            async move { s.save_snapshot(&topic, &key, version, &state).await },
            none,
        )
    }

    /// The aggregate's latest snapshot, or `None`.
    fn read_snapshot<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        key: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let s = st.inner.get(py)?;
        bridge(
            py,
            &st.dispatcher,
            async move { s.read_snapshot(&topic, &key).await },
            |py, snap| Ok(snap.map(Snapshot::from).into_py(py)),
        )
    }

    /// The replay proof of aggregate `match_id`; resolves to a
    /// `ReplayProof`, or raises with the proof in `.proof` when it is not
    /// complete.
    #[pyo3(signature = (topic, match_id, expected_last_sequence=None))]
    fn replay_proof<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        match_id: String,
        expected_last_sequence: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let s = st.inner.get(py)?;
        bridge(
            py,
            &st.dispatcher,
            async move {
                s.replay_proof(&topic, &match_id, expected_last_sequence)
                    .await
            },
            into::<ReplayProof, _>,
        )
    }

    /// Events `from_sequence..=to_sequence` of aggregate `match_id` under
    /// a complete proof; resolves to `(proof, events)`.
    #[pyo3(signature = (topic, match_id, from_sequence, to_sequence, max_records=None))]
    fn event_range<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        match_id: String,
        from_sequence: u64,
        to_sequence: u64,
        max_records: Option<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let s = st.inner.get(py)?;
        bridge(
            py,
            &st.dispatcher,
            async move {
                s.event_range(&topic, &match_id, from_sequence, to_sequence, max_records)
                    .await
            },
            range_result,
        )
    }

    /// Reads the next page of `cursor` and moves it on; resolves to `None`
    /// once done.
    fn next_page<'py>(&self, py: Python<'py>, cursor: &EventCursor) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let s = st.inner.get(py)?;
        let c = cursor.inner.clone();
        bridge(
            py,
            &st.dispatcher,
            async move {
                let mut c = c.lock().await;
                s.next_page(&mut c).await
            },
            page_or_none,
        )
    }

    /// Closes the client; closing twice does nothing.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.st(py)?.inner.take();
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                if let Some(s) = s {
                    s.close().await;
                }
                Ok::<(), Error>(())
            },
            none,
        )
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.state.get().map_or(true, |s| s.inner.is_closed())
    }
}

/// The engine's aggregate (`cursus::eventstore::Aggregate`) for the async
/// store: which version to append at and when a snapshot is due. Each
/// operation takes the `AsyncEventStore` to use and returns an asyncio
/// future resolved by that store's dispatcher.
#[pyclass(module = "cursus._cursus", name = "_AsyncAggregate", frozen)]
pub struct AsyncAggregate {
    cell: Arc<AggregateCell>,
}

impl AsyncAggregate {
    /// Runs `op` with this aggregate, the store's engine client and
    /// `state` as text; the future it returns is resolved by the store's
    /// dispatcher through `convert`.
    fn with_state<'py, F, Fut, T, C>(
        &self,
        py: Python<'py>,
        store: &AsyncEventStore,
        state: &Bound<'py, PyAny>,
        op: F,
        convert: C,
    ) -> PyResult<Bound<'py, PyAny>>
    where
        F: FnOnce(Arc<AggregateCell>, Arc<EngineEventStore>, String) -> Fut,
        Fut: Future<Output = cursus::Result<T>> + Send + 'static,
        T: Send + 'static,
        C: FnOnce(Python<'_>, T) -> PyResult<PyObject> + Send + 'static,
    {
        let st = store.st(py)?;
        let s = st.inner.get(py)?;
        let state = text_arg(py, "state", state)?;
        bridge(py, &st.dispatcher, op(self.cell.clone(), s, state), convert)
    }
}

#[pymethods]
impl AsyncAggregate {
    /// An aggregate not loaded yet (version 0); `load` reads its stream.
    #[new]
    fn new(topic: &str, key: &str, snapshot_every: u64) -> Self {
        AsyncAggregate {
            cell: AggregateCell::new(topic, key, snapshot_every),
        }
    }

    /// Loads (again); resolves to `(snapshot or None, [StoredEvent, ...])`
    /// to fold in order.
    fn load<'py>(&self, py: Python<'py>, store: &AsyncEventStore) -> PyResult<Bound<'py, PyAny>> {
        let st = store.st(py)?;
        let s = st.inner.get(py)?;
        let cell = self.cell.clone();
        bridge(
            py,
            &st.dispatcher,
            async move { cell.load(&s).await },
            loaded,
        )
    }

    /// Appends an event at the aggregate's next version; resolves to the
    /// event as stored (`StoredEvent`, timestamp 0).
    #[pyo3(signature = (store, payload, *, event_type=String::new(), metadata=None, schema_version=None, event_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn append<'py>(
        &self,
        py: Python<'py>,
        store: &AsyncEventStore,
        payload: &Bound<'py, PyAny>,
        event_type: String,
        metadata: Option<&Bound<'py, PyAny>>,
        schema_version: Option<u32>,
        event_id: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = store.st(py)?;
        let s = st.inner.get(py)?;
        let event = event_arg(py, payload, event_type, metadata, schema_version, event_id)?;
        let cell = self.cell.clone();
        bridge(
            py,
            &st.dispatcher,
            async move { cell.append(&s, &event).await },
            |py, e| Ok(StoredEvent::from_engine(py, e).into_py(py)),
        )
    }

    /// The automatic snapshot after an append; resolves to True when one
    /// was saved. A failed save is logged (warn), never raised.
    fn auto_snapshot<'py>(
        &self,
        py: Python<'py>,
        store: &AsyncEventStore,
        state: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.with_state(
            py,
            store,
            state,
            |cell, s, state| async move { Ok(cell.auto_snapshot(&s, &state).await) },
            |py, saved| Ok(saved.into_py(py)),
        )
    }

    /// Reports a state `serialize` could not turn into text (logged at
    /// warn, as a failed automatic snapshot).
    fn snapshot_failed(&self, reason: &str) {
        self.cell.snapshot_failed(reason);
    }

    /// Saves `state` as the snapshot at the aggregate's version.
    fn save_snapshot<'py>(
        &self,
        py: Python<'py>,
        store: &AsyncEventStore,
        state: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.with_state(
            py,
            store,
            state,
            |cell, s, state| async move { cell.save_snapshot(&s, &state).await },
            none,
        )
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
