//! `_EventStore`: the synchronous event store's native half (wrapped by
//! `cursus.EventStore`, which adds the readers and the aggregate helper).

use super::*;
use crate::eventstore::{
    event_arg, page_or_none, range_result, text_arg, Appended, EventCursor, ReplayProof, Snapshot,
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
