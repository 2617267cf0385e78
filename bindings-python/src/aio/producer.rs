//! `AsyncProducer`: ordered sends resolved on asyncio futures.

use super::*;
use crate::eventstore::{event_arg, Appended};
use crate::timeout::FlushTimeout;

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
        let callbacks = crate::listeners::ClientCallbacks::from_kwargs(config)?;
        let cfg = config::producer(py, config)?;
        let on_error = callbacks.error_listener(py);
        let on_stats = callbacks.statistics_listener(py);
        connect_client(
            py,
            "producer",
            "producer",
            async {
                let p = EngineProducer::connect(cfg).await?;
                p.set_error_listener(on_error);
                p.set_statistics_listener(None, on_stats)?;
                Ok(p)
            },
            |state| AsyncProducer { state },
        )
    }

    /// Hands the record over now and resolves with its `RecordMetadata`
    /// once acknowledged. Records keep the order of the calls (per
    /// partition) even when the awaitables are awaited later or never;
    /// backpressure is `buffer_memory` and `max_block_ms`. `metadata` and
    /// `trace_context` as for `Producer.send`.
    #[pyo3(signature = (topic, value, *, key=None, partition=None, timestamp=None, metadata=None, trace_context=None))]
    #[allow(clippy::too_many_arguments)]
    fn send<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        value: &Bound<'py, PyAny>,
        key: Option<&Bound<'py, PyAny>>,
        partition: Option<u32>,
        timestamp: Option<i64>,
        metadata: Option<String>,
        trace_context: Option<PyRef<'py, crate::telemetry::TraceContext>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let p = st.inner.get(py)?;
        let rec = record(
            topic,
            value,
            key,
            partition,
            timestamp,
            metadata,
            trace_context.as_deref(),
        )?;
        // `metadata` is the argument here: the converter by its path.
        bridge_with(
            py,
            &st.dispatcher,
            move || p.send_in_order(rec),
            super::metadata,
        )
    }

    /// Hands a batch of records of `topic` over now (records as for
    /// `Producer.send_batch`: values or `(key, value)` tuples) and resolves
    /// ONCE with every record's result in order: a `RecordMetadata`, or the
    /// exception (not raised) of a record that failed. Records keep the
    /// order of the calls. `metadata` and `trace_context`: one entry per
    /// record, as for `Producer.send_batch`.
    #[pyo3(signature = (topic, records, *, partition=None, timestamp=None, metadata=None, trace_context=None))]
    #[allow(clippy::too_many_arguments)]
    fn send_batch<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        records: &Bound<'py, PyAny>,
        partition: Option<u32>,
        timestamp: Option<i64>,
        metadata: Option<&Bound<'py, PyAny>>,
        trace_context: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let st = self.st(py)?;
        let p = st.inner.get(py)?;
        let batch = crate::sync::batch_records(
            &topic,
            records,
            partition,
            timestamp,
            metadata,
            trace_context,
        )?;
        bridge_with(
            py,
            &st.dispatcher,
            move || {
                let pending: Vec<_> = batch.into_iter().map(|r| p.send_in_order(r)).collect();
                async move {
                    let mut outcomes = Vec::with_capacity(pending.len());
                    for d in pending {
                        outcomes.push(d.await);
                    }
                    Ok(outcomes)
                }
            },
            |py, outcomes: Vec<_>| Ok(crate::sync::batch_results(py, &outcomes)),
        )
    }

    /// Sends everything handed over before the call (the engine counts
    /// records still waiting for buffer space) and waits until it is
    /// acknowledged or failed, at most `timeout` seconds (the library's
    /// 30 s by default; `None`: no limit).
    #[pyo3(signature = (timeout=FlushTimeout::Default))]
    fn flush<'py>(&self, py: Python<'py>, timeout: FlushTimeout) -> PyResult<Bound<'py, PyAny>> {
        let p = self.st(py)?.inner.get(py)?;
        let t = timeout.resolve(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { p.flush(t).await },
            none,
        )
    }

    /// Flushes within `timeout` seconds (the library's 30 s by default;
    /// `None`: no limit), fails what is left and closes; closing twice does
    /// nothing.
    #[pyo3(signature = (timeout=FlushTimeout::Default))]
    fn close<'py>(&self, py: Python<'py>, timeout: FlushTimeout) -> PyResult<Bound<'py, PyAny>> {
        let t = timeout.resolve(py)?.unwrap_or(Duration::MAX);
        let closing = self.st(py)?.inner.take();
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                match closing {
                    Some(p) => {
                        let closed = p.close(t).await;
                        // Let go of the Python callbacks.
                        p.set_error_listener(None);
                        let _ = p.set_statistics_listener(None, None);
                        closed
                    }
                    None => Ok(()),
                }
            },
            none,
        )
    }

    /// This producer's statistics now (no I/O: a plain call).
    fn statistics(&self, py: Python<'_>) -> PyResult<crate::types::Statistics> {
        Ok(self.st(py)?.inner.get(py)?.statistics().into())
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.state.get().map_or(true, |s| s.inner.is_closed())
    }

    /// `init_transactions` (INIT_PRODUCER_ID).
    fn init_transactions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { p.init_transactions().await },
            none,
        )
    }

    /// `begin_transaction`.
    fn begin_transaction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { p.begin_transaction().await },
            none,
        )
    }

    /// Stages `consumer`'s delivered offsets, or the explicit `offsets`
    /// with its group session, in the open transaction.
    #[pyo3(signature = (consumer, offsets=None))]
    fn send_offsets_to_transaction<'py>(
        &self,
        py: Python<'py>,
        consumer: &Bound<'py, AsyncConsumer>,
        offsets: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = self.st(py)?.inner.get(py)?;
        let c = consumer.get().st(py)?.inner.get(py)?;
        let offsets = offsets.map(offsets_arg).transpose()?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                match offsets {
                    None => p.send_consumer_offsets(&c).await,
                    Some(offsets) => {
                        let group = c.group_metadata().await?;
                        p.send_offsets_to_transaction(&offsets, &group).await
                    }
                }
            },
            none,
        )
    }

    /// `append_stream` (TXN_APPEND_STREAM in the open transaction);
    /// resolves to an `Appended`.
    #[pyo3(signature = (topic, key, expected_version, payload, *, event_type=String::new(), metadata=None, schema_version=None, event_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn append_stream<'py>(
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
        let p = self.st(py)?.inner.get(py)?;
        let event = event_arg(py, payload, event_type, metadata, schema_version, event_id)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                p.append_stream(&topic, &key, expected_version, &event)
                    .await
            },
            into::<Appended, _>,
        )
    }

    /// `commit_transaction`.
    fn commit_transaction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { p.commit_transaction().await },
            none,
        )
    }

    /// `abort_transaction`.
    fn abort_transaction<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let p = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { p.abort_transaction().await },
            none,
        )
    }

    /// The configured `transactional_id`, or `None` (also once closed).
    #[getter]
    fn transactional_id(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let st = self.st(py)?;
        Ok(st
            .inner
            .peek()
            .and_then(|p| p.transactional_id().map(str::to_owned)))
    }
}
