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

mod admin;
mod consumer;
mod eventstore;
mod producer;

pub use admin::AsyncAdmin;
pub use consumer::AsyncConsumer;
pub use eventstore::{AsyncAggregate, AsyncEventStore};
pub use producer::AsyncProducer;

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
    Message::list(py, v)
}

fn strings(py: Python<'_>, v: Vec<String>) -> PyResult<PyObject> {
    Ok(v.into_py(py))
}

fn timeout_arg(py: Python<'_>, seconds: Option<f64>) -> PyResult<Option<Duration>> {
    crate::sync::duration(py, seconds)
}

/// Connects a client: resolves to the Python object `wrap` makes of its
/// state, with a dispatcher of its own (thread `cursus-aio-<kind>`) for the
/// asyncio resolutions of its calls.
fn connect_client<'py, F, T, W>(
    py: Python<'py>,
    kind: &'static str,
    what: &'static str,
    connecting: F,
    wrap: fn(ProcessLocal<Client<T>>) -> W,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = cursus::Result<T>> + Send + 'static,
    T: Clone + Send + 'static,
    W: pyo3::PyClass + Into<pyo3::PyClassInitializer<W>>,
{
    let dispatcher = Dispatcher::new(format!("cursus-aio-{kind}"));
    bridge(py, &dispatcher.clone(), connecting, move |py, value| {
        Ok(Py::new(py, wrap(Client::new(what, value, dispatcher)))?.into_py(py))
    })
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
