//! `Consumer`: subscribe, poll (interruptible), wakeup, commits, consumer
//! control (seek, position, pause/resume, committed offsets), the
//! rebalance listener, statistics, close.

use super::*;
use crate::listeners::{ClientCallbacks, RebalanceTarget};
use cursus::consumer::LostDelivery;

/// A consumer-group member.
#[pyclass(module = "cursus", frozen)]
pub struct Consumer {
    pub(crate) inner: Slot<Arc<blocking::Consumer>>,
    /// The consumer while `close()` runs: the rebalance listener (told of
    /// the revocation) may still commit, seek ... through it.
    closing: Mutex<Option<Arc<blocking::Consumer>>>,
}

impl Consumer {
    /// The consumer, or while `close()` runs, the closing one for calls
    /// from its rebalance listener.
    fn handle(&self, py: Python<'_>) -> PyResult<Arc<blocking::Consumer>> {
        self.inner.get(py).or_else(|closed| {
            let closing = self
                .closing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            match closing {
                Some(c) if c.as_async().is_ok_and(|a| a.in_rebalance_listener()) => Ok(c),
                _ => Err(closed),
            }
        })
    }

    fn install_listener(
        &self,
        py: Python<'_>,
        c: &blocking::Consumer,
        target: Option<RebalanceTarget>,
    ) -> PyResult<()> {
        let (listener, lost) = match target {
            Some(t) => {
                let (l, lost) = t.into_listener(py, Arc::new(AtomicBool::new(false)));
                (Some(l), lost)
            }
            None => (None, LostDelivery::AsLost),
        };
        c.set_rebalance_listener_with(listener, lost).py_err(py)
    }
}

#[pymethods]
impl Consumer {
    /// Connects; keyword arguments are engine consumer/client options
    /// (`group_id` is required), plus `error_cb(error)` for background
    /// errors and `stats_cb(statistics)` called every
    /// `statistics_interval_ms` (both on the consumer's callback thread).
    #[new]
    #[pyo3(signature = (**config))]
    fn new(py: Python<'_>, config: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let callbacks = ClientCallbacks::from_kwargs(config)?;
        let cfg = config::consumer(py, config)?;
        let c = off_thread(py, move || blocking::Consumer::connect(cfg))?;
        c.set_error_listener(callbacks.error_listener(py))
            .py_err(py)?;
        c.set_statistics_listener(None, callbacks.statistics_listener(py))
            .py_err(py)?;
        Ok(Consumer {
            inner: Slot::new("consumer", Arc::new(c)),
            closing: Mutex::new(None),
        })
    }

    /// Subscribes to a topic or a list of topics (the group is joined on
    /// the next `poll`). `on_assign`, `on_revoke`, `on_lost` (each called
    /// with a list of `TopicPartition`) replace the rebalance listener when
    /// any is given (see `set_rebalance_listener`); a loss without
    /// `on_lost` calls `on_revoke`.
    #[pyo3(signature = (topics, on_assign=None, on_revoke=None, on_lost=None))]
    fn subscribe(
        &self,
        py: Python<'_>,
        topics: &Bound<'_, PyAny>,
        on_assign: Option<Py<PyAny>>,
        on_revoke: Option<Py<PyAny>>,
        on_lost: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let c = self.inner.get(py)?;
        let topics = topics_arg(topics)?;
        if let Some(target) = RebalanceTarget::callables(on_assign, on_revoke, on_lost, py)? {
            self.install_listener(py, &c, Some(target))?;
        }
        interruptible(py, async {
            c.as_async()?.subscribe(Subscription::Topics(topics)).await
        })
    }

    /// Subscribes to every topic matching a glob pattern; the callbacks
    /// as for `subscribe`.
    #[pyo3(signature = (pattern, on_assign=None, on_revoke=None, on_lost=None))]
    fn subscribe_pattern(
        &self,
        py: Python<'_>,
        pattern: String,
        on_assign: Option<Py<PyAny>>,
        on_revoke: Option<Py<PyAny>>,
        on_lost: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let c = self.inner.get(py)?;
        if let Some(target) = RebalanceTarget::callables(on_assign, on_revoke, on_lost, py)? {
            self.install_listener(py, &c, Some(target))?;
        }
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
    ) -> PyResult<PyObject> {
        let c = self.inner.get(py)?;
        let timeout = duration(py, timeout)?.unwrap_or(Duration::MAX);
        // One engine poll (it returns only with records, at the deadline or
        // when woken), waited for in slices with signal checks: Ctrl-C
        // drops it while it waits, when it has taken no record.
        let records = interruptible(py, async {
            let c = c.as_async()?;
            let max = max_records.unwrap_or_else(|| c.max_poll_records());
            c.poll_max(timeout, max).await
        })?;
        Message::list(py, records)
    }

    /// Makes the poll blocked in another thread (or else the next poll)
    /// return `[]` at once. Safe from any thread and from a signal handler.
    fn wakeup(&self, py: Python<'_>) -> PyResult<()> {
        self.inner.get(py)?.wakeup().py_err(py)
    }

    /// Commits the positions of the records returned so far.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let c = self.handle(py)?;
        interruptible(py, async { c.as_async()?.commit_sync().await })
    }

    /// Commits explicit next offsets: `{TopicPartition: offset}` or a list
    /// of `(TopicPartition, offset)`.
    fn commit_offsets(&self, py: Python<'_>, offsets: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.handle(py)?;
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

    /// The group's committed next offset: of one `TopicPartition`
    /// (`int`, or `None` when nothing was committed), or of each partition
    /// of a list (a `dict` in the order asked, values `int` or `None`).
    /// Any partition of the group's topics may be asked, assigned or not.
    fn committed(&self, py: Python<'_>, partitions: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let c = self.handle(py)?;
        if let Ok(tp) = partitions.extract::<TopicPartition>() {
            let tp = tp.engine();
            let offset = interruptible(py, async { c.as_async()?.committed(&tp).await })?;
            return Ok(offset.into_py(py));
        }
        let tps = partitions_arg(partitions)?;
        let offsets = interruptible(py, async { c.as_async()?.committed_offsets(&tps).await })?;
        committed_dict(py, offsets)
    }

    /// Makes the next `poll` return records of `partition` from `offset`
    /// on (records already fetched for it are dropped). The partition must
    /// be assigned; inside `on_assign` this starts somewhere else than the
    /// committed offset. Commits never move back: after a seek backwards
    /// records are returned again, but commits stay at the furthest offset
    /// returned.
    fn seek(&self, py: Python<'_>, partition: TopicPartition, offset: u64) -> PyResult<()> {
        let c = self.handle(py)?;
        let tp = partition.engine();
        interruptible(py, async { c.as_async()?.seek(&tp, offset).await })
    }

    /// The offset of the next record `poll` returns for an assigned
    /// partition.
    fn position(&self, py: Python<'_>, partition: TopicPartition) -> PyResult<u64> {
        let c = self.handle(py)?;
        let tp = partition.engine();
        interruptible(py, async { c.as_async()?.position(&tp).await })
    }

    /// Stops returning records of these assigned partitions until
    /// `resume`; the consumer stays in its group and keeps their
    /// positions. Pausing a paused partition is harmless.
    fn pause(&self, py: Python<'_>, partitions: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.handle(py)?;
        let tps = partitions_arg(partitions)?;
        interruptible(py, async { c.as_async()?.pause(&tps).await })
    }

    /// Returns records of these partitions again, from their positions.
    fn resume(&self, py: Python<'_>, partitions: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.handle(py)?;
        let tps = partitions_arg(partitions)?;
        interruptible(py, async { c.as_async()?.resume(&tps).await })
    }

    /// The paused partitions, sorted.
    fn paused(&self, py: Python<'_>) -> PyResult<Vec<TopicPartition>> {
        let c = self.handle(py)?;
        let p = interruptible(py, async { c.as_async()?.paused().await })?;
        Ok(p.into_iter().map(TopicPartition::from).collect())
    }

    /// Sets (or with `None` removes) the rebalance listener: an object
    /// with `on_partitions_assigned(partitions)`,
    /// `on_partitions_revoked(partitions)` and optionally
    /// `on_partitions_lost(partitions)` (subclass `cursus.RebalanceListener`).
    /// It runs on the consumer's listener thread while `poll` (or `close`,
    /// or `subscribe`) waits for it; it may call `commit`, `seek`, `pause`,
    /// `position` ... on this consumer, but `poll` there raises
    /// `ValidationError`. Exceptions it raises are logged (logger
    /// `cursus`) and ignored.
    #[pyo3(signature = (listener))]
    fn set_rebalance_listener(&self, py: Python<'_>, listener: Option<Py<PyAny>>) -> PyResult<()> {
        let c = self.inner.get(py)?;
        let target = listener
            .map(|l| RebalanceTarget::object(py, l))
            .transpose()?;
        self.install_listener(py, &c, target)
    }

    /// This consumer's statistics now, with the lag of each assigned
    /// partition (asks the broker for the end offsets).
    fn statistics(&self, py: Python<'_>) -> PyResult<types::Statistics> {
        let c = self.inner.get(py)?;
        let s = interruptible(py, async { c.as_async()?.statistics().await })?;
        Ok(s.into())
    }

    /// The partitions currently assigned to this member.
    fn assignment(&self, py: Python<'_>) -> PyResult<Vec<TopicPartition>> {
        let c = self.handle(py)?;
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
        *self.closing.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(&c));
        let closed = self.close_engine(py, &c);
        *self.closing.lock().unwrap_or_else(|p| p.into_inner()) = None;
        closed
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

impl Consumer {
    /// `close()` of the engine consumer.
    fn close_engine(&self, py: Python<'_>, c: &Arc<blocking::Consumer>) -> PyResult<()> {
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
        // Let go of the Python listeners (they may refer to this consumer).
        let _ = c.set_rebalance_listener(None);
        let _ = c.set_error_listener(None);
        let _ = c.set_statistics_listener(None, None);
        closed.and(callbacks)
    }
}
