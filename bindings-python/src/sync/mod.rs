//! The synchronous API: `Producer`, `Consumer`, `AdminClient`,
//! `Delivery` and the event store's native half, over `cursus::blocking`. Every blocking call runs with the
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
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod admin;
mod consumer;
mod eventstore;
mod producer;

pub use admin::AdminClient;
pub use consumer::Consumer;
pub use eventstore::{Aggregate, EventStore};
pub use producer::{BatchDelivery, Delivery, Producer};

/// Longest uninterruptible wait: signals are checked at least this often.
pub(crate) const SLICE: Duration = Duration::from_millis(100);

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
    drive(py, std::pin::pin!(future))
}

/// `interruptible` for a future already pinned (and maybe polled before).
fn drive<F, T>(py: Python<'_>, mut future: std::pin::Pin<&mut F>) -> PyResult<T>
where
    F: std::future::Future<Output = cursus::Result<T>> + Send,
    T: Send,
{
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

/// Like `interruptible`, for a call that is usually ready at once (a
/// `send` with buffer space and the topic's metadata cached): polls the
/// future once on this thread, in the engine runtime's context given by
/// `runtime`, WITHOUT releasing the GIL (releasing and taking it back cost
/// more than the call itself); only when it is not ready does it wait as
/// `interruptible` does, GIL released. The engine holds none of its locks
/// while it calls Python (callbacks may call the client), so the GIL held
/// here cannot wait on an engine thread that waits for the GIL.
pub(crate) fn at_once<F, T>(
    py: Python<'_>,
    runtime: &tokio::runtime::Handle,
    future: F,
) -> PyResult<T>
where
    F: std::future::Future<Output = cursus::Result<T>> + Send,
    T: Send,
{
    let mut future = std::pin::pin!(future);
    // Inside another runtime `drive` refuses the call, as every blocking
    // call is refused there.
    if tokio::runtime::Handle::try_current().is_err() {
        // When not ready, `drive` polls again at once with its own waker,
        // the one the engine then keeps.
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            cursus::blocking::poll_once(runtime, future.as_mut())
        }));
        match polled {
            Ok(std::task::Poll::Ready(outcome)) => return outcome.py_err(py),
            Ok(std::task::Poll::Pending) => {}
            Err(payload) => return Err(to_py(py, &panic_error(&*payload))),
        }
    }
    drive(py, future)
}

/// Runs a blocking engine call that has no future of its own to slice
/// (connecting: the blocking client is made from the connection) on a
/// helper thread, and waits for it in slices with signal checks, GIL
/// released. Connecting is rare, so a thread each is cheap next to its round
/// trips; an interrupted call finishes on its thread and its outcome is
/// dropped.
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
/// small or mutable payloads; see `types::payload`). `metadata` and
/// `trace_context` are the send's optional keyword arguments: the engine
/// writes the context into the metadata (`cursus::trace_context`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn record(
    topic: String,
    value: &Bound<'_, PyAny>,
    key: Option<&Bound<'_, PyAny>>,
    partition: Option<u32>,
    timestamp: Option<i64>,
    metadata: Option<String>,
    trace_context: Option<&crate::telemetry::TraceContext>,
) -> PyResult<ProducerRecord> {
    Ok(ProducerRecord {
        topic,
        partition,
        key: types::key(key)?,
        payload: types::payload(value)?,
        timestamp,
        metadata: metadata.unwrap_or_default(),
        trace_context: trace_context.map(|c| c.inner.clone()),
    })
}

/// The records of a batch send: each item of `records` is a value
/// (bytes-like or str) or a `(key, value)` tuple; every record gets
/// `topic`, `partition` and `timestamp`, and its entry of `metadata` and
/// `trace_context` (sequences of one per record, `None` entries: none), as
/// `record` gives a single send's. Payloads are shared, not copied (see
/// `types::payload`).
pub(crate) fn batch_records(
    topic: &str,
    records: &Bound<'_, PyAny>,
    partition: Option<u32>,
    timestamp: Option<i64>,
    metadata: Option<&Bound<'_, PyAny>>,
    trace_context: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<ProducerRecord>> {
    let mut out = batch_values(topic, records, partition, timestamp)?;
    let metadata = per_record("metadata", metadata, out.len(), |m| m.extract::<String>())?;
    let contexts = per_record("trace_context", trace_context, out.len(), |c| {
        Ok(c.extract::<PyRef<'_, crate::telemetry::TraceContext>>()?
            .inner
            .clone())
    })?;
    for ((record, metadata), context) in out.iter_mut().zip(metadata).zip(contexts) {
        record.metadata = metadata.unwrap_or_default();
        record.trace_context = context;
    }
    Ok(out)
}

/// A batch's `metadata=` or `trace_context=` argument (`what`): `None`, or
/// a sequence with one entry per record of the `count`, each `None` or
/// what `item` converts.
fn per_record<T>(
    what: &str,
    values: Option<&Bound<'_, PyAny>>,
    count: usize,
    item: impl Fn(&Bound<'_, PyAny>) -> PyResult<T>,
) -> PyResult<Vec<Option<T>>> {
    let Some(values) = values.filter(|v| !v.is_none()) else {
        return Ok((0..count).map(|_| None).collect());
    };
    // A str is a sequence too: one metadata text for a batch of one
    // record per character is a mistake, not a wish.
    if values.is_instance_of::<PyString>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{what} of a batch is a sequence with one entry (or None) per record, not a str"
        )));
    }
    let out = values
        .iter()?
        .map(|v| {
            let v = v?;
            if v.is_none() {
                Ok(None)
            } else {
                item(&v).map(Some)
            }
        })
        .collect::<PyResult<Vec<_>>>()?;
    if out.len() != count {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{what} has {} entries for a batch of {count} records",
            out.len()
        )));
    }
    Ok(out)
}

/// The records of a batch send without metadata or trace context.
fn batch_values(
    topic: &str,
    records: &Bound<'_, PyAny>,
    partition: Option<u32>,
    timestamp: Option<i64>,
) -> PyResult<Vec<ProducerRecord>> {
    let mut out = Vec::with_capacity(records.len().unwrap_or(0));
    for item in records.iter()? {
        let item = item?;
        // The batch rule (cursus_bridge::records_in): one topic, named once
        // here; each record its own partition, `partition` by default.
        let (key, value, own_partition) = match item.downcast::<pyo3::types::PyTuple>() {
            Ok(t) if t.len() == 2 => (Some(t.get_item(0)?), t.get_item(1)?, None),
            Ok(t) if t.len() == 3 => (
                Some(t.get_item(0)?),
                t.get_item(1)?,
                Some(t.get_item(2)?.extract::<Option<u32>>()?),
            ),
            Ok(t) => {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "a batch record is a value, a (key, value) or a (key, value, partition) tuple, \
                     not a tuple of {}",
                    t.len()
                )))
            }
            Err(_) => (None, item, None),
        };
        let key = match key {
            Some(k) => types::key(Some(&k))?,
            None => None,
        };
        let payload = if value.is_instance_of::<PyString>() {
            bytes::Bytes::from(value.extract::<String>()?)
        } else {
            types::payload(&value)?
        };
        out.push(ProducerRecord {
            topic: topic.to_owned(),
            partition: own_partition.unwrap_or(partition),
            key,
            payload,
            timestamp,
            ..Default::default()
        });
    }
    Ok(out)
}

/// A batch's outcomes as Python objects: `RecordMetadata` for a delivered
/// record, the exception instance (not raised) for a failed one.
pub(crate) fn batch_results(
    py: Python<'_>,
    outcomes: &[cursus::Result<cursus::producer::RecordMetadata>],
) -> PyObject {
    let items: Vec<PyObject> = outcomes
        .iter()
        .map(|o| match o {
            Ok(m) => RecordMetadata::from(m.clone()).into_py(py),
            Err(e) => to_py(py, e).into_value(py).into_py(py),
        })
        .collect();
    pyo3::types::PyList::new_bound(py, items).into_py(py)
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

/// True for an exception made from an engine error (not, say, a
/// `KeyboardInterrupt` raised by a signal check).
pub(crate) fn is_engine_error(py: Python<'_>, e: &PyErr) -> bool {
    e.value_bound(py).hasattr("kind").unwrap_or(false)
}

pub(crate) fn is_engine_timeout(py: Python<'_>, e: &PyErr) -> bool {
    e.value_bound(py)
        .getattr("kind")
        .and_then(|k| k.extract::<String>())
        .is_ok_and(|k| k == "timeout")
}

/// A topic name or a sequence of names.
pub(crate) fn topics_arg(topics: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if topics.is_instance_of::<PyString>() {
        Ok(vec![topics.extract()?])
    } else {
        topics.extract()
    }
}

/// `{TopicPartition: next_offset}` or a sequence of pairs, for the engine.
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

/// A sequence of `TopicPartition`s, for the engine.
pub(crate) fn partitions_arg(
    partitions: &Bound<'_, PyAny>,
) -> PyResult<Vec<cursus::TopicPartition>> {
    if partitions.extract::<TopicPartition>().is_ok() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "expected a list of TopicPartition, got one TopicPartition (wrap it in a list)",
        ));
    }
    let mut out = Vec::new();
    for item in partitions.iter()? {
        out.push(item?.extract::<TopicPartition>()?.engine());
    }
    Ok(out)
}

/// `{TopicPartition: offset or None}` in the order asked.
pub(crate) fn committed_dict(
    py: Python<'_>,
    offsets: Vec<(cursus::TopicPartition, Option<u64>)>,
) -> PyResult<PyObject> {
    let d = PyDict::new_bound(py);
    for (tp, offset) in offsets {
        d.set_item(TopicPartition::from(tp).into_py(py), offset)?;
    }
    Ok(d.into_py(py))
}
