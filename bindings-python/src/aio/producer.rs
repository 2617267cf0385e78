//! `AsyncProducer`: ordered sends resolved on asyncio futures.

use super::*;

/// Native async producer (wrapped by `cursus.aio.Producer`).
#[pyclass(module = "cursus._cursus", frozen)]
pub struct AsyncProducer {
    state: ProcessLocal<Client<EngineProducer>>,
}

impl AsyncProducer {
    fn st(&self, py: Python<'_>) -> PyResult<&Client<EngineProducer>> {
        self.state.get().py_err(py)
    }
}

#[pymethods]
impl AsyncProducer {
    /// Connects; resolves to an `AsyncProducer`.
    #[staticmethod]
    #[pyo3(signature = (**config))]
    fn connect<'py>(
        py: Python<'py>,
        config: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cfg = config::producer(py, config)?;
        connect_client(
            py,
            "producer",
            "producer",
            EngineProducer::connect(cfg),
            |state| AsyncProducer { state },
        )
    }

    /// Hands the record over now and resolves with its `RecordMetadata`
    /// once acknowledged. Records keep the order of the calls (per
    /// partition) even when the awaitables are awaited later or never;
    /// backpressure is `buffer_memory` and `max_block_ms`.
    #[pyo3(signature = (topic, value, *, key=None, partition=None, timestamp=None))]
    fn send<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        value: &Bound<'py, PyAny>,
        key: Option<&Bound<'py, PyAny>>,
        partition: Option<u32>,
        timestamp: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let p = st.inner.get(py)?;
        let rec = record(topic, value, key, partition, timestamp)?;
        bridge_with(py, &st.dispatcher, move || p.send_in_order(rec), metadata)
    }

    /// Sends everything handed over before the call (the engine counts
    /// records still waiting for buffer space) and waits until it is
    /// acknowledged or failed, at most `timeout` seconds (30 by default;
    /// `None`: no limit).
    #[pyo3(signature = (timeout=30.0))]
    fn flush<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.st(py)?.inner.get(py)?;
        let t = timeout_arg(py, timeout)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { p.flush(t).await },
            none,
        )
    }

    /// Flushes within `timeout` seconds (30 by default; `None`: no limit),
    /// fails what is left and closes; closing twice does nothing.
    #[pyo3(signature = (timeout=30.0))]
    fn close<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        let t = timeout_arg(py, timeout)?.unwrap_or(Duration::MAX);
        let closing = self.st(py)?.inner.take();
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                match closing {
                    Some(p) => p.close(t).await,
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
