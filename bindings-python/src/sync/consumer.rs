//! `Consumer`: subscribe, poll (interruptible), wakeup, commits, close.

use super::*;

/// A consumer-group member.
#[pyclass(module = "cursus", frozen)]
pub struct Consumer {
    pub(crate) inner: Slot<Arc<blocking::Consumer>>,
    /// Set by `wakeup()`: the poll in progress (or the next) returns `[]`.
    /// Polls run in short slices (for Ctrl-C), so the engine's own wakeup
    /// only ends the current slice; this flag ends the whole poll.
    woken: Arc<AtomicBool>,
}

#[pymethods]
impl Consumer {
    /// Connects; keyword arguments are engine consumer/client options
    /// (`group_id` is required).
    #[new]
    #[pyo3(signature = (**config))]
    fn new(py: Python<'_>, config: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let cfg = config::consumer(py, config)?;
        let c = off_thread(py, move || blocking::Consumer::connect(cfg))?;
        Ok(Consumer {
            inner: Slot::new("consumer", Arc::new(c)),
            woken: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Subscribes to a topic or a list of topics (the group is joined on
    /// the next `poll`).
    fn subscribe(&self, py: Python<'_>, topics: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.inner.get(py)?;
        let topics = topics_arg(topics)?;
        interruptible(py, async {
            c.as_async()?.subscribe(Subscription::Topics(topics)).await
        })
    }

    /// Subscribes to every topic matching a glob pattern.
    fn subscribe_pattern(&self, py: Python<'_>, pattern: String) -> PyResult<()> {
        let c = self.inner.get(py)?;
        interruptible(py, async {
            c.as_async()?
                .subscribe(Subscription::Pattern(pattern))
                .await
        })
    }

    /// Returns the next records, up to `max_records` (default and maximum:
    /// the `max_poll_records` option), waiting at most `timeout` seconds for
    /// the first (`None`: until one arrives); `[]` when none came in time or
    /// after `wakeup()`. Only the records returned count as delivered:
    /// commits (explicit, automatic, at close) cover exactly those. A
    /// `close()` from another thread makes it raise `ClosedError` at once.
    /// Interruptible with Ctrl-C.
    #[pyo3(signature = (timeout=None, max_records=None))]
    fn poll(
        &self,
        py: Python<'_>,
        timeout: Option<f64>,
        max_records: Option<usize>,
    ) -> PyResult<Vec<Message>> {
        let c = self.inner.get(py)?;
        let timeout = duration(py, timeout)?;
        let woken = Arc::clone(&self.woken);
        let records = sliced(py, timeout, |slice| {
            if woken.swap(false, Ordering::SeqCst) {
                return Ok(Some(Vec::new()));
            }
            let r = match max_records {
                Some(max) => c.poll_max(Some(slice), max)?,
                None => c.poll(Some(slice))?,
            };
            Ok((!r.is_empty() || woken.swap(false, Ordering::SeqCst)).then_some(r))
        })?
        .unwrap_or_default();
        Ok(records
            .iter()
            .map(|r| Message::from_engine(py, r))
            .collect())
    }

    /// Makes the poll blocked in another thread (or else the next poll)
    /// return `[]` at once. Safe from any thread and from a signal handler.
    fn wakeup(&self, py: Python<'_>) -> PyResult<()> {
        let c = self.inner.get(py)?;
        self.woken.store(true, Ordering::SeqCst);
        c.wakeup().py_err(py)
    }

    /// Commits the positions of the records returned so far.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let c = self.inner.get(py)?;
        interruptible(py, async { c.as_async()?.commit_sync().await })
    }

    /// Commits explicit next offsets: `{TopicPartition: offset}` or a list
    /// of `(TopicPartition, offset)`.
    fn commit_offsets(&self, py: Python<'_>, offsets: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.inner.get(py)?;
        let offsets = offsets_arg(offsets)?;
        interruptible(py, async { c.as_async()?.commit_offsets(&offsets).await })
    }

    /// Commits the positions of the records returned so far in the
    /// background; `callback(error_or_None)` runs when done, on this
    /// consumer's callback thread (never an engine I/O thread).
    #[pyo3(signature = (callback=None))]
    fn commit_async(&self, py: Python<'_>, callback: Option<Py<PyAny>>) -> PyResult<()> {
        let c = self.inner.get(py)?;
        blocking(py, || {
            c.commit_async(move |r| {
                if let Some(cb) = callback {
                    crate::with_gil_if_alive(|py| {
                        let arg = match r {
                            Ok(()) => py.None(),
                            Err(e) => to_py(py, &e).into_value(py).into_py(py),
                        };
                        if let Err(err) = cb.call1(py, (arg,)) {
                            err.write_unraisable_bound(py, Some(cb.bind(py)));
                        }
                    });
                }
            })
        })
    }

    /// The committed next offset of a partition, or `None`.
    fn committed(&self, py: Python<'_>, tp: TopicPartition) -> PyResult<Option<u64>> {
        let c = self.inner.get(py)?;
        let tp = tp.engine();
        interruptible(py, async { c.as_async()?.committed(&tp).await })
    }

    /// The partitions currently assigned to this member.
    fn assignment(&self, py: Python<'_>) -> PyResult<Vec<TopicPartition>> {
        let c = self.inner.get(py)?;
        let a = interruptible(py, async { c.as_async()?.assignment().await })?;
        Ok(a.into_iter().map(TopicPartition::from).collect())
    }

    /// This member's id in its group (as `AdminClient.group_status` lists
    /// it), or None before it has joined (the first poll after subscribing
    /// joins).
    fn member_id(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let c = self.inner.get(py)?;
        interruptible(py, async { c.as_async()?.member_id().await })
    }

    /// Commits (with auto-commit), leaves the group and closes. Closing a
    /// closed consumer does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let Some(c) = self.inner.take() else {
            return Ok(());
        };
        // The engine's close (commit, leave the group), interruptible; a
        // poll blocked in another thread fails with `closed` at once.
        let closed = interruptible(py, async { c.as_async()?.close().await });
        if let Err(e) = &closed {
            if !is_engine_error(py, e) {
                return closed; // Ctrl-C: stop here
            }
        }
        // Then the blocking close, on this thread: the engine part is done
        // (closing twice is harmless), and it waits (at most 30 s) for
        // pending commit callbacks, except when called from one of them.
        let callbacks = blocking(py, || c.close());
        closed.and(callbacks)
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}
