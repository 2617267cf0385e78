//! `AsyncConsumer`: polls, commits and consumer control resolved on
//! asyncio futures; the rebalance listener and the error and statistics
//! callbacks (plain callables, run on the consumer's threads: the asyncio
//! wrapper adapts coroutine functions).

use super::*;
use crate::listeners::{ClientCallbacks, RebalanceTarget};
use crate::sync::{committed_dict, partitions_arg};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Native async consumer (wrapped by `cursus.aio.Consumer`).
#[pyclass(module = "cursus._cursus", frozen)]
pub struct AsyncConsumer {
    state: ProcessLocal<Client<Arc<EngineConsumer>>>,
    /// Set while the rebalance listener runs Python: a `poll` made then
    /// (from a coroutine listener, on the loop) is refused, as the
    /// synchronous consumer refuses one from its listener.
    in_listener: Arc<AtomicBool>,
    /// The consumer while `close()` runs: the rebalance listener (told of
    /// the revocation) may still commit, seek ... through it.
    closing: Arc<Mutex<Option<Arc<EngineConsumer>>>>,
}

impl AsyncConsumer {
    pub(super) fn st(&self, py: Python<'_>) -> PyResult<&Client<Arc<EngineConsumer>>> {
        self.state.get().py_err(py)
    }

    /// The consumer, or while `close()` runs, the closing one for calls
    /// made while the rebalance listener runs.
    fn engine(&self, py: Python<'_>) -> PyResult<Arc<EngineConsumer>> {
        self.st(py)?.inner.get(py).or_else(|closed| {
            let closing = self
                .closing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            match closing {
                Some(c) if self.in_listener.load(Ordering::SeqCst) => Ok(c),
                _ => Err(closed),
            }
        })
    }

    fn install_listener(&self, py: Python<'_>, target: Option<RebalanceTarget>) -> PyResult<()> {
        let c = self.st(py)?.inner.get(py)?;
        let busy = Arc::clone(&self.in_listener);
        match target {
            Some(t) => {
                let (listener, lost) = t.into_listener(py, busy);
                c.set_rebalance_listener_with(Some(listener), lost);
            }
            None => c.set_rebalance_listener(None),
        }
        Ok(())
    }

    fn control<'py, F, T, C>(
        &self,
        py: Python<'py>,
        call: impl FnOnce(Arc<EngineConsumer>) -> F,
        convert: C,
    ) -> PyResult<Bound<'py, PyAny>>
    where
        F: Future<Output = cursus::Result<T>> + Send + 'static,
        T: Send + 'static,
        C: FnOnce(Python<'_>, T) -> PyResult<PyObject> + Send + 'static,
    {
        let c = self.engine(py)?;
        bridge(py, &self.st(py)?.dispatcher, call(c), convert)
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
        let callbacks = ClientCallbacks::from_kwargs(config)?;
        let cfg = config::consumer(py, config)?;
        let on_error = callbacks.error_listener(py);
        let on_stats = callbacks.statistics_listener(py);
        connect_client(
            py,
            "consumer",
            "consumer",
            async {
                let c = Arc::new(EngineConsumer::connect(cfg).await?);
                c.set_error_listener(on_error);
                c.set_statistics_listener(None, on_stats)?;
                Ok(c)
            },
            |state| AsyncConsumer {
                state,
                in_listener: Arc::new(AtomicBool::new(false)),
                closing: Arc::new(Mutex::new(None)),
            },
        )
    }

    /// Subscribes to a topic or a list of topics; `on_assign`,
    /// `on_revoke`, `on_lost` replace the rebalance listener when any is
    /// given (plain callables, called on the consumer's listener thread).
    #[pyo3(signature = (topics, on_assign=None, on_revoke=None, on_lost=None))]
    fn subscribe<'py>(
        &self,
        py: Python<'py>,
        topics: &Bound<'py, PyAny>,
        on_assign: Option<Py<PyAny>>,
        on_revoke: Option<Py<PyAny>>,
        on_lost: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        let topics = topics_arg(topics)?;
        if let Some(target) = RebalanceTarget::callables(on_assign, on_revoke, on_lost, py)? {
            self.install_listener(py, Some(target))?;
        }
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.subscribe(Subscription::Topics(topics)).await },
            none,
        )
    }

    /// Subscribes to every topic matching a glob pattern; the callbacks
    /// as for `subscribe`.
    #[pyo3(signature = (pattern, on_assign=None, on_revoke=None, on_lost=None))]
    fn subscribe_pattern<'py>(
        &self,
        py: Python<'py>,
        pattern: String,
        on_assign: Option<Py<PyAny>>,
        on_revoke: Option<Py<PyAny>>,
        on_lost: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.st(py)?.inner.get(py)?;
        if let Some(target) = RebalanceTarget::callables(on_assign, on_revoke, on_lost, py)? {
            self.install_listener(py, Some(target))?;
        }
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
        if self.in_listener.load(Ordering::SeqCst) {
            return Err(to_py(
                py,
                &Error::invalid_argument("poll cannot be called from the rebalance listener"),
            ));
        }
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
        let c = self.engine(py)?;
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
        let c = self.engine(py)?;
        let offsets = offsets_arg(offsets)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { c.commit_offsets(&offsets).await },
            none,
        )
    }

    /// Resolves with the committed next offset of one `TopicPartition`
    /// (`None`: none), or with `{TopicPartition: offset or None}` for a
    /// list, in the order asked.
    fn committed<'py>(
        &self,
        py: Python<'py>,
        partitions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Ok(tp) = partitions.extract::<TopicPartition>() {
            let tp = tp.engine();
            return self.control(
                py,
                |c| async move { c.committed(&tp).await },
                |py, v| Ok(v.into_py(py)),
            );
        }
        let tps = partitions_arg(partitions)?;
        self.control(
            py,
            |c| async move { c.committed_offsets(&tps).await },
            committed_dict,
        )
    }

    /// Makes the next poll return records of `partition` from `offset` on.
    fn seek<'py>(
        &self,
        py: Python<'py>,
        partition: TopicPartition,
        offset: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tp = partition.engine();
        self.control(py, |c| async move { c.seek(&tp, offset).await }, none)
    }

    /// Resolves with the offset of the next record poll returns for
    /// `partition`.
    fn position<'py>(
        &self,
        py: Python<'py>,
        partition: TopicPartition,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tp = partition.engine();
        self.control(
            py,
            |c| async move { c.position(&tp).await },
            |py, v| Ok(v.into_py(py)),
        )
    }

    /// Stops returning records of these partitions until `resume`.
    fn pause<'py>(
        &self,
        py: Python<'py>,
        partitions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tps = partitions_arg(partitions)?;
        self.control(py, |c| async move { c.pause(&tps).await }, none)
    }

    /// Returns records of these partitions again.
    fn resume<'py>(
        &self,
        py: Python<'py>,
        partitions: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tps = partitions_arg(partitions)?;
        self.control(py, |c| async move { c.resume(&tps).await }, none)
    }

    /// Resolves with the paused partitions, sorted.
    fn paused<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.control(
            py,
            |c| async move { c.paused().await },
            list::<TopicPartition, _>,
        )
    }

    /// Sets (or with `None` removes) the rebalance listener object (see
    /// the synchronous `Consumer.set_rebalance_listener`).
    #[pyo3(signature = (listener))]
    fn set_rebalance_listener(&self, py: Python<'_>, listener: Option<Py<PyAny>>) -> PyResult<()> {
        let target = listener
            .map(|l| RebalanceTarget::object(py, l))
            .transpose()?;
        self.install_listener(py, target)
    }

    /// Resolves with this consumer's statistics (with the lag of each
    /// assigned partition).
    fn statistics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.control(
            py,
            |c| async move { c.statistics().await },
            into::<crate::types::Statistics, cursus::Statistics>,
        )
    }

    /// Resolves with the assigned partitions.
    fn assignment<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.engine(py)?;
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
        let closing = Arc::clone(&self.closing);
        if let Some(c) = &c {
            *closing.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(c));
        }
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                match c {
                    Some(c) => {
                        let closed = c.close().await;
                        *closing.lock().unwrap_or_else(|p| p.into_inner()) = None;
                        // Let go of the Python listeners (they may refer
                        // to this consumer).
                        c.set_rebalance_listener(None);
                        c.set_error_listener(None);
                        let _ = c.set_statistics_listener(None, None);
                        closed
                    }
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
