//! `AsyncConsumer`: polls and commits resolved on asyncio futures.

use super::*;

/// Native async consumer (wrapped by `cursus.aio.Consumer`).
#[pyclass(module = "cursus._cursus", frozen)]
pub struct AsyncConsumer {
    state: ProcessLocal<Client<Arc<EngineConsumer>>>,
}

impl AsyncConsumer {
    pub(super) fn st(&self, py: Python<'_>) -> PyResult<&Client<Arc<EngineConsumer>>> {
        self.state.get().py_err(py)
    }
}

#[pymethods]
impl AsyncConsumer {
    /// Connects; resolves to an `AsyncConsumer`.
    #[staticmethod]
    #[pyo3(signature = (**config))]
    fn connect<'py>(
        py: Python<'py>,
        config: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cfg = config::consumer(py, config)?;
        connect_client(
            py,
            "consumer",
            "consumer",
            async { EngineConsumer::connect(cfg).await.map(Arc::new) },
            |state| AsyncConsumer { state },
        )
    }

    /// Subscribes to a topic or a list of topics.
    fn subscribe<'py>(
        &self,
        py: Python<'py>,
        topics: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        let topics = topics_arg(topics)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.subscribe(Subscription::Topics(topics)).await },
            none,
        )
    }

    /// Subscribes to every topic matching a glob pattern.
    fn subscribe_pattern<'py>(
        &self,
        py: Python<'py>,
        pattern: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.subscribe(Subscription::Pattern(pattern)).await },
            none,
        )
    }

    /// Resolves with the next records, up to `max_records` (default and
    /// maximum: `max_poll_records`), waiting at most `timeout` seconds
    /// (`None`: until one arrives); `[]` after `wakeup()`. Only the records
    /// returned count as delivered.
    #[pyo3(signature = (timeout=None, max_records=None))]
    fn poll<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
        max_records: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        let t = timeout_arg(py, timeout)?.unwrap_or(Duration::MAX);
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                let max = max_records.unwrap_or_else(|| c.max_poll_records());
                c.poll_max(t, max).await
            },
            messages,
        )
    }

    /// Makes the pending poll (or else the next) resolve with `[]` at once.
    fn wakeup(&self, py: Python<'_>) -> PyResult<()> {
        self.st(py)?.inner.get(py)?.wakeup();
        Ok(())
    }

    /// Commits the positions of the records returned so far.
    fn commit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.commit_sync().await },
            none,
        )
    }

    /// Commits explicit next offsets.
    fn commit_offsets<'py>(
        &self,
        py: Python<'py>,
        offsets: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        let offsets = offsets_arg(offsets)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.commit_offsets(&offsets).await },
            none,
        )
    }

    /// Resolves with the committed next offset of a partition, or `None`.
    fn committed<'py>(&self, py: Python<'py>, tp: TopicPartition) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        let tp = tp.engine();
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.committed(&tp).await },
            |py, v| Ok(v.into_py(py)),
        )
    }

    /// Resolves with the assigned partitions.
    fn assignment<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.assignment().await },
            list::<TopicPartition, _>,
        )
    }

    /// This member's id in its group, or None before it has joined.
    fn member_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.member_id().await },
            into::<Option<String>, Option<String>>,
        )
    }

    /// Commits (with auto-commit), leaves the group and closes; closing
    /// twice does nothing.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.take();
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                match c {
                    Some(c) => c.close().await,
                    None => Ok(()),
                }
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
