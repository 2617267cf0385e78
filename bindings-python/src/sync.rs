//! The synchronous API: `Producer`, `Consumer`, `AdminClient` and
//! `Delivery`, over `cursus::blocking`. Every blocking call runs with the
//! GIL released; long waits run in short slices with a signal check between
//! slices so Ctrl-C interrupts them promptly.

use crate::errors::{panic_error, to_py, IntoPyResult};
use crate::types::{self, Message, RecordMetadata, TopicPartition};
use crate::{config, types::*};
use cursus::blocking;
use cursus::consumer::Subscription;
use cursus::producer::{Delivery as EngineDelivery, ProducerRecord};
use cursus::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Longest uninterruptible wait: signals are checked at least this often.
pub(crate) const SLICE: Duration = Duration::from_millis(100);

/// The default `flush`/`close` timeout in seconds: the bridge's (30 s, the
/// same in every language). Also written as `timeout=30.0` in the method
/// signatures, since pyo3 defaults must be literals; a test checks both.
pub(crate) const DEFAULT_TIMEOUT_S: f64 = cursus_bridge::timeout::DEFAULT.as_secs() as f64;

/// Runs `f` with the GIL released; a panic becomes an internal error.
pub(crate) fn blocking<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> cursus::Result<T> + Send,
    T: Send,
{
    match py.allow_threads(|| std::panic::catch_unwind(AssertUnwindSafe(f))) {
        Ok(r) => r.py_err(py),
        Err(payload) => Err(to_py(py, &panic_error(&*payload))),
    }
}

/// Runs an engine future on the calling thread, GIL released, in slices of
/// at most `SLICE` with a signal check between slices: a wait that may be
/// long (`send` waiting up to `max_block_ms` for buffer space, a request
/// being retried) stays interruptible with Ctrl-C. An interrupted call
/// drops the future, which cancels the operation. The fast path (a future
/// ready at once) costs one poll, on this thread.
pub(crate) fn interruptible<F, T>(py: Python<'_>, future: F) -> PyResult<T>
where
    F: std::future::Future<Output = cursus::Result<T>> + Send,
    T: Send,
{
    let mut future = Box::pin(future);
    loop {
        let step = blocking(py, || {
            // The timer is made inside the runtime (it needs its clock).
            blocking::block_on_engine(async { tokio::time::timeout(SLICE, future.as_mut()).await })
        })?;
        match step {
            Ok(outcome) => return outcome.py_err(py),
            Err(_elapsed) => py.check_signals()?,
        }
    }
}

/// Runs a blocking engine call that has no future of its own to slice
/// (connecting, the admin client) on a helper thread,
/// and waits for it in slices with signal checks, GIL released. These calls
/// are rare, so a thread each is cheap next to their round trips; an
/// interrupted call finishes on its thread and its outcome is dropped.
pub(crate) fn off_thread<F, T>(py: Python<'_>, call: F) -> PyResult<T>
where
    F: FnOnce() -> cursus::Result<T> + Send + 'static,
    T: Send + 'static,
{
    use std::sync::mpsc::{sync_channel, RecvTimeoutError};
    let (tx, rx) = sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("cursus-call".to_owned())
        .spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(AssertUnwindSafe(call)));
        });
    if let Err(e) = spawned {
        return Err(to_py(
            py,
            &Error::internal(format!("cannot start a thread for the call: {e}")),
        ));
    }
    let mut rx = rx;
    loop {
        // The receiver is Send but not Sync: moved into the GIL-free wait
        // and back.
        let (received, back) = py.allow_threads(move || (rx.recv_timeout(SLICE), rx));
        rx = back;
        match received {
            Ok(Ok(outcome)) => return outcome.py_err(py),
            Ok(Err(payload)) => return Err(to_py(py, &panic_error(&*payload))),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(to_py(
                    py,
                    &Error::internal("the call's thread ended without an outcome"),
                ))
            }
        }
    }
}

/// Converts a Python timeout in seconds (`None`: no limit).
pub(crate) fn duration(py: Python<'_>, seconds: Option<f64>) -> PyResult<Option<Duration>> {
    match seconds {
        None => Ok(None),
        Some(s) if s.is_finite() && s >= 0.0 => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => Err(to_py(
            py,
            &Error::invalid_argument(format!(
                "timeout must be a non-negative number of seconds, got {s}"
            )),
        )),
    }
}

/// Runs `step(slice)` repeatedly until it returns `Some`, the deadline
/// passes (returns `None`), or a signal handler raises (KeyboardInterrupt).
fn sliced<T, F>(py: Python<'_>, timeout: Option<Duration>, mut step: F) -> PyResult<Option<T>>
where
    F: FnMut(Duration) -> cursus::Result<Option<T>> + Send,
    T: Send,
{
    let deadline = timeout.map(|t| Instant::now() + t);
    loop {
        let slice = match deadline {
            None => SLICE,
            Some(d) => d.saturating_duration_since(Instant::now()).min(SLICE),
        };
        if let Some(v) = blocking(py, || step(slice))? {
            return Ok(Some(v));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(None);
        }
        py.check_signals()?;
    }
}

/// A shared handle that becomes unusable after `close()`.
pub(crate) struct Slot<T> {
    what: &'static str,
    inner: Mutex<Option<T>>,
}

impl<T: Clone> Slot<T> {
    pub(crate) fn new(what: &'static str, value: T) -> Self {
        Slot {
            what,
            inner: Mutex::new(Some(value)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The handle, or the engine's `closed` error.
    pub(crate) fn get(&self, py: Python<'_>) -> PyResult<T> {
        self.lock()
            .clone()
            .ok_or_else(|| to_py(py, &Error::closed(self.what)))
    }

    /// The handle if still open (without marking it closed).
    pub(crate) fn peek(&self) -> Option<T> {
        self.lock().clone()
    }

    /// Marks the handle closed.
    pub(crate) fn take(&self) -> Option<T> {
        self.lock().take()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.lock().is_none()
    }
}

/// Builds a record from the Python arguments (the only copy made is for
/// small or mutable payloads; see `types::payload`).
pub(crate) fn record(
    topic: String,
    value: &Bound<'_, PyAny>,
    key: Option<&Bound<'_, PyAny>>,
    partition: Option<u32>,
    timestamp: Option<i64>,
) -> PyResult<ProducerRecord> {
    Ok(ProducerRecord {
        topic,
        partition,
        key: types::key(key)?,
        payload: types::payload(value)?,
        timestamp,
    })
}

/// Calls a Python `on_delivery(error, metadata)` callback (on the
/// producer's dispatcher thread).
pub(crate) fn call_delivery_callback(
    callback: Py<PyAny>,
    outcome: cursus::Result<cursus::producer::RecordMetadata>,
) {
    crate::with_gil_if_alive(|py| {
        let args = match outcome {
            Ok(m) => (py.None(), RecordMetadata::from(m).into_py(py)),
            Err(e) => (to_py(py, &e).into_value(py).into_py(py), py.None()),
        };
        if let Err(err) = callback.call1(py, args) {
            err.write_unraisable_bound(py, Some(callback.bind(py)));
        }
    });
}

/// Sends records to Cursus topics.
#[pyclass(module = "cursus", frozen)]
pub struct Producer {
    inner: Slot<blocking::Producer>,
}

#[pymethods]
impl Producer {
    /// Connects; keyword arguments are engine producer/client options.
    #[new]
    #[pyo3(signature = (**config))]
    fn new(py: Python<'_>, config: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let cfg = config::producer(py, config)?;
        let p = off_thread(py, move || blocking::Producer::connect(cfg))?;
        Ok(Producer {
            inner: Slot::new("producer", p),
        })
    }

    /// Queues a record (waiting at most `max_block_ms` for buffer space);
    /// returns its pending `Delivery`, or `None` when `on_delivery(error,
    /// metadata)` is given: that is then called once, on this producer's
    /// callback thread (never an engine I/O thread), and may call this
    /// producer again (`send`, `send_and_wait`, `flush`).
    #[pyo3(signature = (topic, value, *, key=None, partition=None, timestamp=None, on_delivery=None))]
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
    ) -> PyResult<Option<Delivery>> {
        let p = self.inner.get(py)?;
        let rec = record(topic, value, key, partition, timestamp)?;
        match on_delivery {
            Some(cb) => {
                let callback = move |r| call_delivery_callback(cb, r);
                interruptible(py, async {
                    p.as_async()?.send_with_callback(rec, callback).await
                })?;
                Ok(None)
            }
            None => {
                let d = interruptible(py, async { p.as_async()?.send(rec).await })?;
                Ok(Some(Delivery {
                    state: Mutex::new(DeliveryState::Pending(d)),
                }))
            }
        }
    }

    /// Sends a record and waits for its acknowledgement.
    #[pyo3(signature = (topic, value, *, key=None, partition=None, timestamp=None, timeout=None))]
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
    ) -> PyResult<RecordMetadata> {
        let d = self
            .send(py, topic, value, key, partition, timestamp, None)?
            .expect("send without a callback returns a delivery");
        d.result(py, timeout)
    }

    /// Sends everything queued and waits until every record sent before is
    /// acknowledged and its `on_delivery` callback has returned (`timeout`
    /// in seconds, 30 by default; `None`: no limit). Interruptible with
    /// Ctrl-C.
    #[pyo3(signature = (timeout=30.0))]
    fn flush(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<()> {
        let p = self.inner.get(py)?;
        flush(py, &p, duration(py, timeout)?)
    }

    /// Flushes (at most `timeout` seconds, 30 by default; `None`: no
    /// limit), fails what is left, then closes. Closing a closed producer
    /// does nothing.
    #[pyo3(signature = (timeout=30.0))]
    fn close(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<()> {
        let Some(p) = self.inner.peek() else {
            return Ok(());
        };
        let flushed = flush(py, &p, duration(py, timeout)?);
        if let Err(e) = &flushed {
            // Ctrl-C (or any non-engine error): leave the producer open.
            if !is_engine_timeout(py, e) {
                return flushed;
            }
        }
        self.inner.take();
        blocking(py, || p.close(Some(Duration::ZERO)))?;
        flushed
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes with the default timeout (30 s), as `close()` does.
    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py, Some(DEFAULT_TIMEOUT_S))?;
        Ok(false)
    }
}

/// True for an exception made from an engine error (not, say, a
/// `KeyboardInterrupt` raised by a signal check).
fn is_engine_error(py: Python<'_>, e: &PyErr) -> bool {
    e.value_bound(py).hasattr("kind").unwrap_or(false)
}

fn is_engine_timeout(py: Python<'_>, e: &PyErr) -> bool {
    e.value_bound(py)
        .getattr("kind")
        .and_then(|k| k.extract::<String>())
        .is_ok_and(|k| k == "timeout")
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

pub(crate) fn topics_arg(topics: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if topics.is_instance_of::<PyString>() {
        Ok(vec![topics.extract()?])
    } else {
        topics.extract()
    }
}

pub(crate) fn offsets_arg(
    offsets: &Bound<'_, PyAny>,
) -> PyResult<Vec<(cursus::TopicPartition, u64)>> {
    let items: Vec<(TopicPartition, u64)> = if let Ok(d) = offsets.downcast::<PyDict>() {
        d.iter()
            .map(|(k, v)| Ok((k.extract::<TopicPartition>()?, v.extract::<u64>()?)))
            .collect::<PyResult<_>>()?
    } else {
        offsets.extract()?
    };
    Ok(items.into_iter().map(|(tp, o)| (tp.engine(), o)).collect())
}

/// A consumer-group member.
#[pyclass(module = "cursus", frozen)]
pub struct Consumer {
    inner: Slot<Arc<blocking::Consumer>>,
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

/// Topic and group administration.
#[pyclass(module = "cursus", frozen)]
pub struct AdminClient {
    inner: Slot<Arc<blocking::Admin>>,
}

#[pymethods]
impl AdminClient {
    /// Connects; keyword arguments are engine client options.
    #[new]
    #[pyo3(signature = (**config))]
    fn new(py: Python<'_>, config: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let cfg = config::client(py, config)?;
        let a = off_thread(py, move || blocking::Admin::connect(cfg))?;
        Ok(AdminClient {
            inner: Slot::new("admin client", Arc::new(a)),
        })
    }

    /// Creates a topic (or patches an existing one).
    #[pyo3(signature = (name, **options))]
    fn create_topic(
        &self,
        py: Python<'_>,
        name: String,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<TopicInfo> {
        let a = self.inner.get(py)?;
        let t = config::new_topic(py, &name, options)?;
        off_thread(py, move || a.create_topic(&t)).map(Into::into)
    }

    /// Replaces the min_in_sync_replicas override (`None`: broker default).
    #[pyo3(signature = (topic, min_in_sync_replicas=None))]
    fn alter_topic_config(
        &self,
        py: Python<'_>,
        topic: String,
        min_in_sync_replicas: Option<u32>,
    ) -> PyResult<TopicInfo> {
        let a = self.inner.get(py)?;
        off_thread(py, move || {
            a.alter_topic_config(&topic, min_in_sync_replicas)
        })
        .map(Into::into)
    }

    /// Deletes a topic.
    #[pyo3(signature = (topic, *, if_exists=false))]
    fn delete_topic(
        &self,
        py: Python<'_>,
        topic: String,
        if_exists: bool,
    ) -> PyResult<DeleteOutcome> {
        let a = self.inner.get(py)?;
        off_thread(py, move || a.delete_topic(&topic, if_exists)).map(Into::into)
    }

    /// Truncates a topic at its current revision.
    fn truncate_topic(
        &self,
        py: Python<'_>,
        topic: String,
        expected_revision: u64,
    ) -> PyResult<TruncateOutcome> {
        let a = self.inner.get(py)?;
        off_thread(py, move || a.truncate_topic(&topic, expected_revision)).map(Into::into)
    }

    /// Topic names.
    fn list_topics(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let a = self.inner.get(py)?;
        off_thread(py, move || a.list_topics())
    }

    /// DESCRIBE a topic.
    fn describe_topic(&self, py: Python<'_>, topic: String) -> PyResult<TopicDescription> {
        let a = self.inner.get(py)?;
        off_thread(py, move || a.describe_topic(&topic)).map(Into::into)
    }

    /// METADATA of a topic.
    fn metadata(&self, py: Python<'_>, topic: String) -> PyResult<TopicMetadata> {
        let a = self.inner.get(py)?;
        off_thread(py, move || a.metadata(&topic)).map(Into::into)
    }

    /// LIST_OFFSETS of a topic (one partition, or all).
    #[pyo3(signature = (topic, partition=None))]
    fn list_offsets(
        &self,
        py: Python<'_>,
        topic: String,
        partition: Option<u32>,
    ) -> PyResult<Vec<PartitionOffsets>> {
        let a = self.inner.get(py)?;
        let v = off_thread(py, move || a.list_offsets(&topic, partition))?;
        Ok(v.into_iter().map(Into::into).collect())
    }

    /// GROUP_STATUS of a group.
    fn group_status(&self, py: Python<'_>, group: String) -> PyResult<GroupStatus> {
        let a = self.inner.get(py)?;
        off_thread(py, move || a.group_status(&group)).map(Into::into)
    }

    /// Group names.
    fn list_groups(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let a = self.inner.get(py)?;
        off_thread(py, move || a.list_groups())
    }

    /// The broker's HELP lines.
    fn help(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let a = self.inner.get(py)?;
        off_thread(py, move || a.help())
    }

    /// Closes the client. Closing a closed client does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        match self.inner.take() {
            Some(a) => off_thread(py, move || a.close()),
            None => Ok(()),
        }
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
