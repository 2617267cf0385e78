//! `Producer` and `Delivery`: sends, delivery callbacks, flush and close.

use super::*;
use crate::eventstore::{event_arg, Appended};
use crate::timeout::FlushTimeout;

/// Sends records to Cursus topics.
#[pyclass(module = "cursus", frozen)]
pub struct Producer {
    inner: Slot<blocking::Producer>,
    /// The configured `transactional_id` (readable after close too).
    transactional_id: Option<String>,
    /// The engine runtime (this process's), for `send`'s poll made with
    /// the GIL held (see `at_once`).
    runtime: tokio::runtime::Handle,
}

#[pymethods]
impl Producer {
    /// Connects; keyword arguments are engine producer/client options,
    /// plus `error_cb(error)` for background errors and
    /// `stats_cb(statistics)` called every `statistics_interval_ms` (both
    /// on the producer's callback thread).
    #[new]
    #[pyo3(signature = (**config))]
    fn new(py: Python<'_>, config: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let callbacks = crate::listeners::ClientCallbacks::from_kwargs(config)?;
        let cfg = config::producer(py, config)?;
        let transactional_id = cfg.transactional_id.clone();
        let p = off_thread(py, move || blocking::Producer::connect(cfg))?;
        p.set_error_listener(callbacks.error_listener(py))
            .py_err(py)?;
        p.set_statistics_listener(None, callbacks.statistics_listener(py))
            .py_err(py)?;
        let runtime = blocking::runtime_handle().py_err(py)?;
        Ok(Producer {
            inner: Slot::new("producer", p),
            transactional_id,
            runtime,
        })
    }

    /// Queues a record (waiting at most `max_block_ms` for buffer space);
    /// returns its pending `Delivery`, or `None` when `on_delivery(error,
    /// metadata)` is given: that is then called once, on this producer's
    /// callback thread (never an engine I/O thread), and may call this
    /// producer again (`send`, `send_and_wait`, `flush`).
    ///
    /// `metadata` is the record's metadata text; `trace_context` (a
    /// `TraceContext`) is written into it (docs/observability.md, "Trace
    /// context in records").
    #[pyo3(signature = (topic, value, *, key=None, partition=None, timestamp=None, on_delivery=None, metadata=None, trace_context=None))]
    #[allow(clippy::too_many_arguments)]
    fn send(
        &self,
        py: Python<'_>,
        topic: String,
        value: &Bound<'_, PyAny>,
        key: Option<&Bound<'_, PyAny>>,
        partition: Option<u32>,
        timestamp: Option<i64>,
        on_delivery: Option<Py<PyAny>>,
        metadata: Option<String>,
        trace_context: Option<PyRef<'_, crate::telemetry::TraceContext>>,
    ) -> PyResult<Option<Delivery>> {
        let p = self.inner.get(py)?;
        let rec = record(
            topic,
            value,
            key,
            partition,
            timestamp,
            metadata,
            trace_context.as_deref(),
        )?;
        match on_delivery {
            Some(cb) => {
                let callback = move |r| call_delivery_callback(cb, r);
                at_once(py, &self.runtime, async {
                    p.as_async()?.send_with_callback(rec, callback).await
                })?;
                Ok(None)
            }
            None => {
                let d = at_once(py, &self.runtime, async { p.as_async()?.send(rec).await })?;
                Ok(Some(Delivery {
                    state: Mutex::new(DeliveryState::Pending(d)),
                }))
            }
        }
    }

    /// Queues a batch of records of `topic` in one call, the GIL released
    /// while the engine queues them (each waits at most `max_block_ms` for
    /// buffer space). Each item of `records` is a value (bytes-like or str),
    /// a `(key, value)` or a `(key, value, partition)` tuple; `partition`
    /// (None: the partitioner) applies to the records without their own,
    /// `timestamp` to every record. A batch has one topic (the library's
    /// rule in every language). Returns a `BatchDelivery`, or
    /// `None` when `on_delivery(results)` is given: that is then called ONCE,
    /// on this producer's callback thread, with every record's result in
    /// order (a `RecordMetadata`, or the exception of a record that failed).
    /// A record that cannot be queued (a partition that does not exist, too
    /// large) fails alone; a closed producer raises and never calls back.
    ///
    /// `metadata` and `trace_context` carry each record's metadata text and
    /// `TraceContext` as `send` does one record's: sequences with one entry
    /// per record (`None`: none for that record).
    #[pyo3(signature = (topic, records, *, partition=None, timestamp=None, on_delivery=None, metadata=None, trace_context=None))]
    #[allow(clippy::too_many_arguments)]
    fn send_batch(
        &self,
        py: Python<'_>,
        topic: String,
        records: &Bound<'_, PyAny>,
        partition: Option<u32>,
        timestamp: Option<i64>,
        on_delivery: Option<Py<PyAny>>,
        metadata: Option<&Bound<'_, PyAny>>,
        trace_context: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<BatchDelivery>> {
        let p = self.inner.get(py)?;
        let batch = batch_records(
            &topic,
            records,
            partition,
            timestamp,
            metadata,
            trace_context,
        )?;
        match on_delivery {
            Some(cb) => {
                blocking(py, move || {
                    p.send_batch(batch, move |outcomes| {
                        crate::with_gil_if_alive(|py| {
                            let results = batch_results(py, &outcomes);
                            if let Err(err) = cb.call1(py, (results,)) {
                                err.write_unraisable_bound(py, Some(cb.bind(py)));
                            }
                        });
                    })
                })?;
                Ok(None)
            }
            None => {
                let (tx, rx) = std::sync::mpsc::sync_channel(1);
                blocking(py, move || {
                    p.send_batch(batch, move |outcomes| {
                        let _ = tx.send(outcomes);
                    })
                })?;
                Ok(Some(BatchDelivery {
                    state: Mutex::new(BatchState::Pending(rx)),
                }))
            }
        }
    }

    /// Sends a record and waits for its acknowledgement (`metadata` and
    /// `trace_context` as for `send`).
    #[pyo3(signature = (topic, value, *, key=None, partition=None, timestamp=None, timeout=None, metadata=None, trace_context=None))]
    #[allow(clippy::too_many_arguments)]
    fn send_and_wait(
        &self,
        py: Python<'_>,
        topic: String,
        value: &Bound<'_, PyAny>,
        key: Option<&Bound<'_, PyAny>>,
        partition: Option<u32>,
        timestamp: Option<i64>,
        timeout: Option<f64>,
        metadata: Option<String>,
        trace_context: Option<PyRef<'_, crate::telemetry::TraceContext>>,
    ) -> PyResult<RecordMetadata> {
        let d = self
            .send(
                py,
                topic,
                value,
                key,
                partition,
                timestamp,
                None,
                metadata,
                trace_context,
            )?
            .expect("send without a callback returns a delivery");
        d.result(py, timeout)
    }

    /// Sends everything queued and waits until every record sent before is
    /// acknowledged and its `on_delivery` callback has returned (`timeout`
    /// in seconds, the library's 30 s by default; `None`: no limit).
    /// Interruptible with Ctrl-C.
    #[pyo3(signature = (timeout=FlushTimeout::Default))]
    fn flush(&self, py: Python<'_>, timeout: FlushTimeout) -> PyResult<()> {
        let p = self.inner.get(py)?;
        flush(py, &p, timeout.resolve(py)?)
    }

    /// Flushes (at most `timeout` seconds, the library's 30 s by default;
    /// `None`: no limit), fails what is left, then closes. Closing a closed
    /// producer does nothing.
    #[pyo3(signature = (timeout=FlushTimeout::Default))]
    fn close(&self, py: Python<'_>, timeout: FlushTimeout) -> PyResult<()> {
        let Some(p) = self.inner.peek() else {
            return Ok(());
        };
        let flushed = flush(py, &p, timeout.resolve(py)?);
        if let Err(e) = &flushed {
            // Ctrl-C (or any non-engine error): leave the producer open.
            if !is_engine_timeout(py, e) {
                return flushed;
            }
        }
        self.inner.take();
        blocking(py, || p.close(Some(Duration::ZERO)))?;
        // Let go of the Python callbacks (they may refer to this producer).
        let _ = p.set_error_listener(None);
        let _ = p.set_statistics_listener(None, None);
        flushed
    }

    /// This producer's statistics now.
    fn statistics(&self, py: Python<'_>) -> PyResult<types::Statistics> {
        let p = self.inner.get(py)?;
        Ok(p.statistics().py_err(py)?.into())
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// The `transactional_id` this producer was configured with, or `None`
    /// for a producer that is not transactional.
    #[getter]
    fn transactional_id(&self) -> Option<String> {
        self.transactional_id.clone()
    }

    /// Obtains the producer's transactional session from the broker
    /// (INIT_PRODUCER_ID), fencing any older producer with the same
    /// `transactional_id` and aborting a transaction it left open. Call once,
    /// before the first `begin_transaction()`. Interruptible with Ctrl-C.
    fn init_transactions(&self, py: Python<'_>) -> PyResult<()> {
        let p = self.inner.get(py)?;
        interruptible(py, async { p.as_async()?.init_transactions().await })
    }

    /// Begins a transaction: records sent until `commit_transaction()` or
    /// `abort_transaction()` belong to it. Raises `ValidationError` with code
    /// `invalid_transaction_state` before `init_transactions()` or while a
    /// transaction is open. Interruptible with Ctrl-C.
    fn begin_transaction(&self, py: Python<'_>) -> PyResult<()> {
        let p = self.inner.get(py)?;
        interruptible(py, async { p.as_async()?.begin_transaction().await })
    }

    /// Adds consumed offsets to the open transaction, fenced by
    /// `consumer`'s group session (it must have joined: polled once): they
    /// are committed with the transaction's records, or not at all. Without
    /// `offsets`, what `consumer` has delivered so far (the offset after
    /// the last record `poll` returned, per partition: what `commit()`
    /// would commit); with `offsets` (`{TopicPartition: next_offset}` or a
    /// list of pairs), those. Interruptible with Ctrl-C.
    #[pyo3(signature = (consumer, offsets=None))]
    fn send_offsets_to_transaction(
        &self,
        py: Python<'_>,
        consumer: &Bound<'_, Consumer>,
        offsets: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let p = self.inner.get(py)?;
        let c = consumer.get().inner.get(py)?;
        let offsets = offsets.map(offsets_arg).transpose()?;
        interruptible(py, async {
            let (producer, consumer) = (p.as_async()?, c.as_async()?);
            match offsets {
                None => producer.send_consumer_offsets(consumer).await,
                Some(offsets) => {
                    let group = consumer.group_metadata().await?;
                    producer.send_offsets_to_transaction(&offsets, &group).await
                }
            }
        })
    }

    /// Appends an event to aggregate `key` of event-sourcing `topic` inside
    /// the open transaction (TXN_APPEND_STREAM): it gets version
    /// `expected_version + 1` when the transaction commits, and never
    /// exists if it aborts. The aggregate is reserved for the transaction
    /// until it ends (other writers get `stream_version_reserved`). A
    /// failure makes the transaction abort-only. Interruptible with Ctrl-C.
    #[pyo3(signature = (topic, key, expected_version, payload, *, event_type=String::new(), metadata=None, schema_version=None, event_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn append_stream(
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
        let p = self.inner.get(py)?;
        let event = event_arg(py, payload, event_type, metadata, schema_version, event_id)?;
        interruptible(py, async {
            p.as_async()?
                .append_stream(&topic, &key, expected_version, &event)
                .await
        })
        .map(Into::into)
    }

    /// Waits for every record of the transaction, then commits it: its
    /// records and offsets become visible to `read_committed` consumers
    /// together. When the outcome stays unknown (connection lost) the
    /// engine repeats the commit until the broker decides, for up to
    /// `delivery_timeout_ms`; if it is still unknown then, the error is
    /// retryable and the transaction stays open (commit again, or abort).
    /// A failed send of the transaction makes the commit fail: abort then.
    /// Interruptible with Ctrl-C.
    fn commit_transaction(&self, py: Python<'_>) -> PyResult<()> {
        let p = self.inner.get(py)?;
        interruptible(py, async { p.as_async()?.commit_transaction().await })
    }

    /// Waits for the transaction's sends to finish, then aborts it: none
    /// of its records or offsets ever become visible to `read_committed`
    /// consumers. Interruptible with Ctrl-C.
    fn abort_transaction(&self, py: Python<'_>) -> PyResult<()> {
        let p = self.inner.get(py)?;
        interruptible(py, async { p.as_async()?.abort_transaction().await })
    }

    /// A context manager for one transaction: `with producer.transaction():`
    /// begins, commits when the block ends normally, and aborts when it
    /// raises (the block's exception propagates; an abort that fails too is
    /// attached to it as a note and logged, never raised instead of it).
    /// See `cursus.Transaction`.
    fn transaction(slf: Py<Self>, py: Python<'_>) -> PyResult<PyObject> {
        Ok(py
            .import_bound("cursus._transaction")?
            .getattr("Transaction")?
            .call1((slf,))?
            .unbind())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes with the library's default timeout, as `close()` does.
    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py, FlushTimeout::Default)?;
        Ok(false)
    }
}

fn flush(py: Python<'_>, p: &blocking::Producer, timeout: Option<Duration>) -> PyResult<()> {
    let done = sliced(py, timeout, |slice| match p.flush(Some(slice)) {
        Ok(()) => Ok(Some(())),
        Err(e) if e.kind() == ErrorKind::Timeout => Ok(None),
        Err(e) => Err(e),
    })?;
    match done {
        Some(()) => Ok(()),
        None => Err(to_py(
            py,
            &Error::timeout(format!(
                "flush did not finish within {} ms",
                timeout.unwrap_or_default().as_millis()
            )),
        )),
    }
}

enum DeliveryState {
    Pending(EngineDelivery),
    Done(cursus::Result<cursus::producer::RecordMetadata>),
}

/// The pending acknowledgement of one sent record.
#[pyclass(module = "cursus", frozen)]
pub struct Delivery {
    state: Mutex<DeliveryState>,
}

#[pymethods]
impl Delivery {
    /// Waits for the acknowledgement (`timeout` in seconds; `None`: no
    /// limit) and returns where the record was stored, or raises its error.
    /// A timed-out wait raises `cursus.TimeoutError`; the delivery goes on.
    #[pyo3(signature = (timeout=None))]
    fn result(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<RecordMetadata> {
        let timeout = duration(py, timeout)?;
        let out = sliced(py, timeout, |slice| {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if let DeliveryState::Pending(d) = &mut *st {
                // The engine future itself, bounded by one slice: an elapsed
                // slice is told apart from a delivery that failed by timeout.
                match blocking::block_on_engine(async {
                    tokio::time::timeout(slice, &mut *d).await
                })? {
                    Err(_elapsed) => return Ok(None),
                    Ok(r) => *st = DeliveryState::Done(r),
                }
            }
            match &*st {
                DeliveryState::Done(r) => Ok(Some(r.clone())),
                DeliveryState::Pending(_) => Ok(None),
            }
        })?;
        match out {
            Some(r) => r.map(RecordMetadata::from).py_err(py),
            None => Err(to_py(
                py,
                &Error::timeout(format!(
                    "delivery not acknowledged within {} ms",
                    timeout.unwrap_or_default().as_millis()
                )),
            )),
        }
    }

    /// True once the record was acknowledged or failed (never blocks).
    fn done(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.result(py, Some(0.0)).is_ok() || {
            let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            matches!(*st, DeliveryState::Done(_))
        })
    }
}

enum BatchState {
    Pending(std::sync::mpsc::Receiver<Vec<cursus::Result<cursus::producer::RecordMetadata>>>),
    Done(Vec<cursus::Result<cursus::producer::RecordMetadata>>),
}

/// The pending outcomes of one batch send (`Producer.send_batch`).
#[pyclass(module = "cursus", frozen)]
pub struct BatchDelivery {
    state: Mutex<BatchState>,
}

#[pymethods]
impl BatchDelivery {
    /// Waits until every record of the batch is acknowledged or failed
    /// (`timeout` in seconds; `None`: no limit) and returns their results
    /// in order: a `RecordMetadata` per delivered record, the exception
    /// (not raised) of a failed one. A timed-out wait raises
    /// `cursus.TimeoutError`; the batch goes on.
    #[pyo3(signature = (timeout=None))]
    fn result(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<PyObject> {
        let timeout = duration(py, timeout)?;
        let done = sliced(py, timeout, |slice| {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if let BatchState::Pending(rx) = &*st {
                match rx.recv_timeout(slice) {
                    Ok(outcomes) => *st = BatchState::Done(outcomes),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return Ok(None),
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        return Err(Error::closed("producer"))
                    }
                }
            }
            Ok(Some(()))
        })?;
        if done.is_none() {
            return Err(to_py(
                py,
                &Error::timeout(format!(
                    "batch not acknowledged within {} ms",
                    timeout.unwrap_or_default().as_millis()
                )),
            ));
        }
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match &*st {
            BatchState::Done(outcomes) => Ok(batch_results(py, outcomes)),
            BatchState::Pending(_) => unreachable!("the wait above settled the batch"),
        }
    }

    /// True once every record of the batch was acknowledged or failed
    /// (never blocks).
    fn done(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let BatchState::Pending(rx) = &*st {
            if let Ok(outcomes) = rx.try_recv() {
                *st = BatchState::Done(outcomes);
            }
        }
        matches!(*st, BatchState::Done(_))
    }
}
