//! The asyncio API's native half: engine futures bridged to asyncio
//! futures. Each call creates an `asyncio.Future` on the running loop and
//! spawns the engine future on the engine runtime; its outcome is handed to
//! the client's dispatcher thread (`cursus::dispatch`), which takes the GIL
//! and resolves the asyncio future with `loop.call_soon_threadsafe`. So the
//! engine's I/O threads never wait for the GIL, and a client whose loop is
//! slow delays no other client. Cancelling the asyncio future aborts the
//! engine task.

use crate::config;
use crate::errors::{panic_error, to_py, IntoPyResult};
use crate::sync::{offsets_arg, record, topics_arg, Slot};
use crate::types::*;
use cursus::admin::Admin as EngineAdmin;
use cursus::blocking::ProcessLocal;
use cursus::consumer::{Consumer as EngineConsumer, Subscription};
use cursus::dispatch::Dispatcher;
use cursus::producer::Producer as EngineProducer;
use cursus::Error;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Aborts the engine task when the asyncio future is cancelled.
#[pyclass(module = "cursus._cursus", frozen)]
struct Canceller {
    abort: tokio::task::AbortHandle,
}

#[pymethods]
impl Canceller {
    fn __call__(&self, fut: &Bound<'_, PyAny>) -> PyResult<()> {
        if fut.call_method0("cancelled")?.is_truthy()? {
            self.abort.abort();
        }
        Ok(())
    }
}

/// Runs `future` on the engine runtime; returns an asyncio future of the
/// running loop that `dispatcher`'s thread resolves with `convert(value)`
/// or the mapped error.
fn bridge<'py, F, T, C>(
    py: Python<'py>,
    dispatcher: &Dispatcher,
    future: F,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = cursus::Result<T>> + Send + 'static,
    T: Send + 'static,
    C: FnOnce(Python<'_>, T) -> PyResult<PyObject> + Send + 'static,
{
    bridge_with(py, dispatcher, || future, convert)
}

/// `bridge` for an operation that starts when its future is made
/// (`send_in_order` hands the record over at the call): `start` is called
/// only once the asyncio side is ready, so a call that raises (no running
/// loop) has done nothing.
fn bridge_with<'py, S, F, T, C>(
    py: Python<'py>,
    dispatcher: &Dispatcher,
    start: S,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    S: FnOnce() -> F,
    F: Future<Output = cursus::Result<T>> + Send + 'static,
    T: Send + 'static,
    C: FnOnce(Python<'_>, T) -> PyResult<PyObject> + Send + 'static,
{
    let asyncio = py.import_bound("asyncio")?;
    let event_loop = asyncio.call_method0("get_running_loop")?;
    let py_future = event_loop.call_method0("create_future")?;
    let handle = cursus::blocking::runtime_handle().py_err(py)?;
    let resolve = py
        .import_bound("cursus._aio_support")?
        .getattr("_resolve")?
        .unbind();
    let loop_ref = event_loop.unbind();
    let fut_ref = py_future.clone().unbind();
    // The engine future runs as its own task so that a panic in it is
    // caught by the runtime and reported as an internal error here.
    let task = handle.spawn(start());
    let abort = task.abort_handle();
    dispatcher
        .run_after(task, move |joined| {
            let outcome = match joined {
                Ok(r) => r,
                Err(e) if e.is_cancelled() => return,
                Err(e) => Err(match e.try_into_panic() {
                    Ok(payload) => panic_error(&*payload),
                    Err(_) => panic_error(&"the engine task failed"),
                }),
            };
            crate::with_gil_if_alive(|py| {
                let (ok, value) = match outcome
                    .map_err(|e| to_py(py, &e))
                    .and_then(|v| convert(py, v))
                {
                    Ok(v) => (true, v),
                    Err(e) => (false, e.into_value(py).into_py(py)),
                };
                // A closed loop cannot be told any more; nothing awaits then.
                let _ = loop_ref.call_method1(
                    py,
                    "call_soon_threadsafe",
                    (resolve, fut_ref, ok, value),
                );
            });
        })
        .py_err(py)?;
    py_future.call_method1("add_done_callback", (Canceller { abort },))?;
    Ok(py_future)
}

fn none(py: Python<'_>, _: ()) -> PyResult<PyObject> {
    Ok(py.None())
}

fn metadata(py: Python<'_>, m: cursus::producer::RecordMetadata) -> PyResult<PyObject> {
    Ok(RecordMetadata::from(m).into_py(py))
}

fn into<T: IntoPy<PyObject>, U: Into<T>>(py: Python<'_>, v: U) -> PyResult<PyObject> {
    Ok(v.into().into_py(py))
}

fn list<T: IntoPy<PyObject>, U: Into<T>>(py: Python<'_>, v: Vec<U>) -> PyResult<PyObject> {
    Ok(v.into_iter()
        .map(|x| x.into().into_py(py))
        .collect::<Vec<PyObject>>()
        .into_py(py))
}

fn messages(py: Python<'_>, v: Vec<cursus::consumer::ConsumerRecord>) -> PyResult<PyObject> {
    Ok(v.iter()
        .map(|r| Message::from_engine(py, r).into_py(py))
        .collect::<Vec<PyObject>>()
        .into_py(py))
}

fn strings(py: Python<'_>, v: Vec<String>) -> PyResult<PyObject> {
    Ok(v.into_py(py))
}

fn timeout_arg(py: Python<'_>, seconds: Option<f64>) -> PyResult<Option<Duration>> {
    crate::sync::duration(py, seconds)
}

/// A client's dispatcher for the asyncio resolutions of its calls.
fn new_dispatcher(what: &str) -> Dispatcher {
    Dispatcher::new(format!("cursus-aio-{what}"))
}

/// An async client's state: the engine object and the dispatcher that
/// resolves its calls. Owned by the process that made it: in a `fork()`ed
/// child, using it raises `used_after_fork`, and a garbage collection that
/// drops it there leaks it rather than tearing down state the parent's
/// runtime still owns.
struct Client<T> {
    inner: Slot<T>,
    dispatcher: Dispatcher,
}

impl<T: Clone + Send + 'static> Client<T> {
    fn new(what: &'static str, value: T, dispatcher: Dispatcher) -> ProcessLocal<Client<T>> {
        ProcessLocal::new(Client {
            inner: Slot::new(what, value),
            dispatcher,
        })
    }
}

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
        let dispatcher = new_dispatcher("producer");
        bridge(
            py,
            &dispatcher.clone(),
            EngineProducer::connect(cfg),
            move |py, p| {
                Ok(Py::new(
                    py,
                    AsyncProducer {
                        state: Client::new("producer", p, dispatcher.clone()),
                    },
                )?
                .into_py(py))
            },
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

/// Native async consumer (wrapped by `cursus.aio.Consumer`).
#[pyclass(module = "cursus._cursus", frozen)]
pub struct AsyncConsumer {
    state: ProcessLocal<Client<Arc<EngineConsumer>>>,
}

impl AsyncConsumer {
    fn st(&self, py: Python<'_>) -> PyResult<&Client<Arc<EngineConsumer>>> {
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
        let dispatcher = new_dispatcher("consumer");
        bridge(
            py,
            &dispatcher.clone(),
            EngineConsumer::connect(cfg),
            move |py, c| {
                Ok(Py::new(
                    py,
                    AsyncConsumer {
                        state: Client::new("consumer", Arc::new(c), dispatcher.clone()),
                    },
                )?
                .into_py(py))
            },
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

/// Native async admin client (wrapped by `cursus.aio.AdminClient`).
#[pyclass(module = "cursus._cursus", frozen)]
pub struct AsyncAdmin {
    state: ProcessLocal<Client<Arc<EngineAdmin>>>,
}

impl AsyncAdmin {
    fn st(&self, py: Python<'_>) -> PyResult<&Client<Arc<EngineAdmin>>> {
        self.state.get().py_err(py)
    }
}

#[pymethods]
impl AsyncAdmin {
    /// Connects; resolves to an `AsyncAdmin`.
    #[staticmethod]
    #[pyo3(signature = (**config))]
    fn connect<'py>(
        py: Python<'py>,
        config: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cfg = config::client(py, config)?;
        let dispatcher = new_dispatcher("admin");
        bridge(
            py,
            &dispatcher.clone(),
            EngineAdmin::connect(cfg),
            move |py, a| {
                Ok(Py::new(
                    py,
                    AsyncAdmin {
                        state: Client::new("admin client", Arc::new(a), dispatcher.clone()),
                    },
                )?
                .into_py(py))
            },
        )
    }

    /// Creates a topic (or patches an existing one).
    #[pyo3(signature = (name, **options))]
    fn create_topic<'py>(
        &self,
        py: Python<'py>,
        name: String,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        let t = config::new_topic(py, &name, options)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.create_topic(&t).await },
            into::<TopicInfo, _>,
        )
    }

    /// Replaces the min_in_sync_replicas override.
    #[pyo3(signature = (topic, min_in_sync_replicas=None))]
    fn alter_topic_config<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        min_in_sync_replicas: Option<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.alter_topic_config(&topic, min_in_sync_replicas).await },
            into::<TopicInfo, _>,
        )
    }

    /// Deletes a topic.
    #[pyo3(signature = (topic, *, if_exists=false))]
    fn delete_topic<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        if_exists: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.delete_topic(&topic, if_exists).await },
            into::<DeleteOutcome, _>,
        )
    }

    /// Truncates a topic at its current revision.
    fn truncate_topic<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        expected_revision: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.truncate_topic(&topic, expected_revision).await },
            into::<TruncateOutcome, _>,
        )
    }

    /// Topic names.
    fn list_topics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.list_topics().await },
            strings,
        )
    }

    /// DESCRIBE a topic.
    fn describe_topic<'py>(&self, py: Python<'py>, topic: String) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.describe_topic(&topic).await },
            into::<TopicDescription, _>,
        )
    }

    /// METADATA of a topic.
    fn metadata<'py>(&self, py: Python<'py>, topic: String) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.metadata(&topic).await },
            into::<TopicMetadata, _>,
        )
    }

    /// LIST_OFFSETS of a topic.
    #[pyo3(signature = (topic, partition=None))]
    fn list_offsets<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        partition: Option<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.list_offsets(&topic, partition).await },
            list::<PartitionOffsets, _>,
        )
    }

    /// GROUP_STATUS of a group.
    fn group_status<'py>(&self, py: Python<'py>, group: String) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.group_status(&group).await },
            into::<GroupStatus, _>,
        )
    }

    /// Group names.
    fn list_groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.list_groups().await },
            strings,
        )
    }

    /// The broker's HELP lines.
    fn help<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.help().await },
            strings,
        )
    }

    /// Closes the client; closing twice does nothing.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.take();
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                if let Some(a) = a {
                    a.close().await;
                }
                Ok::<(), Error>(())
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
