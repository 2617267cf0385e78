//! `cursus._cursus`: the native half of the Python package `cursus`.
//!
//! The package's public names are re-exported by `python/cursus/__init__.py`;
//! the exception hierarchy lives in `python/cursus/_errors.py`, the asyncio
//! wrappers in `python/cursus/aio.py`. This crate only converts types, maps
//! errors and adapts threading: all behaviour is the engine's
//! (`cursus::blocking` and the async engine types).

// pyo3 0.22's #[pymethods] expansion converts PyResult<T> into itself,
// which recent clippy flags at every method signature.
#![allow(clippy::useless_conversion)]
#![warn(missing_docs)]

mod aio;
mod config;
mod errors;
mod eventstore;
mod fork;
mod listeners;
mod logbridge;
mod sync;
mod types;

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Set by an `atexit` hook: the interpreter is shutting down, so engine
/// threads must no longer take the GIL (logs and callbacks are dropped).
static EXITING: AtomicBool = AtomicBool::new(false);

/// Engine threads currently between "Python is alive" and done with the GIL.
/// Once finalization starts, a thread that waits for the GIL is terminated
/// with `pthread_exit`, whose forced unwind through Rust frames aborts the
/// process ("FATAL: exception not rethrown"). So the exit hook waits for
/// this to reach zero before the interpreter finalizes.
static IN_PYTHON: AtomicUsize = AtomicUsize::new(0);

/// How long the exit hook waits for engine threads to leave Python.
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// How long the exit hook lets the log thread hand over the records
/// already logged (bounded: engine threads may go on logging).
const EXIT_LOG_WAIT: Duration = Duration::from_millis(500);

/// Registered with `atexit`: lets the log thread deliver what was logged
/// so far, then stops engine threads from entering Python and waits (GIL
/// released, bounded) for those already on their way in.
#[pyfunction]
fn _mark_exiting(py: Python<'_>) {
    py.allow_threads(|| logbridge::flush(Some(Instant::now() + EXIT_LOG_WAIT)));
    EXITING.store(true, Ordering::SeqCst);
    py.allow_threads(|| {
        let deadline = Instant::now() + EXIT_WAIT;
        while IN_PYTHON.load(Ordering::SeqCst) != 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

/// Proof that the current engine thread may call into Python; counted in
/// `IN_PYTHON` until dropped.
pub(crate) struct PythonEntry(());

impl PythonEntry {
    /// `None` once the interpreter is exiting or not initialized.
    pub(crate) fn enter() -> Option<PythonEntry> {
        // Count first, then check: the exit hook sets EXITING before it
        // reads the count, so a thread is either refused or waited for.
        IN_PYTHON.fetch_add(1, Ordering::SeqCst);
        let entry = PythonEntry(());
        // SAFETY: Py_IsInitialized may be called at any time, without the GIL.
        let initialized = unsafe { pyo3::ffi::Py_IsInitialized() } != 0;
        (!EXITING.load(Ordering::SeqCst) && initialized).then_some(entry)
    }
}

impl Drop for PythonEntry {
    fn drop(&mut self) {
        IN_PYTHON.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs `f` with the GIL from an engine thread, unless the interpreter is
/// shutting down (then `f` is skipped and `None` returned).
pub(crate) fn with_gil_if_alive<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    let _entry = PythonEntry::enter()?;
    Some(Python::with_gil(f))
}

/// The extension module.
#[pymodule]
fn _cursus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Engine `tracing` events become `log` records (logbridge), which
    // pyo3-log hands to Python's `logging` under the logger
    // `cursus.<module path>`. Level changes in Python are honoured (only
    // logger objects are cached). If the process already has a `log` logger
    // or a tracing subscriber (another extension), engine logs go there.
    // Records of the `log` crate (rustls, ...) reach pyo3-log through the
    // log thread too (logbridge::install), never on an engine I/O thread.
    logbridge::install(
        m.py(),
        pyo3_log::Logger::new(m.py(), pyo3_log::Caching::Loggers)?.filter(log::LevelFilter::Debug),
        log::LevelFilter::Debug,
    );
    let _ = tracing::subscriber::set_global_default(logbridge::LogBridge);
    m.py()
        .import_bound("atexit")?
        .call_method1("register", (wrap_pyfunction!(_mark_exiting, m)?,))?;
    fork::watch();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("_DEFAULT_TIMEOUT", sync::DEFAULT_TIMEOUT_S)?;
    m.add_class::<sync::Producer>()?;
    m.add_class::<sync::Delivery>()?;
    m.add_class::<sync::BatchDelivery>()?;
    m.add_class::<sync::Consumer>()?;
    m.add_class::<sync::AdminClient>()?;
    m.add_class::<aio::AsyncProducer>()?;
    m.add_class::<aio::AsyncConsumer>()?;
    m.add_class::<aio::AsyncAdmin>()?;
    m.add_class::<sync::EventStore>()?;
    m.add_class::<aio::AsyncEventStore>()?;
    m.add_class::<sync::Aggregate>()?;
    m.add_class::<aio::AsyncAggregate>()?;
    m.add_class::<eventstore::EventCursor>()?;
    m.add_class::<eventstore::Appended>()?;
    m.add_class::<eventstore::Snapshot>()?;
    m.add_class::<eventstore::StoredEvent>()?;
    m.add_class::<eventstore::Page>()?;
    m.add_class::<eventstore::ReplayProof>()?;
    m.add_class::<eventstore::RangeEvent>()?;
    m.add_class::<types::RecordMetadata>()?;
    m.add_class::<types::Message>()?;
    m.add_class::<types::TopicPartition>()?;
    m.add_class::<types::TopicInfo>()?;
    m.add_class::<types::TopicMetadata>()?;
    m.add_class::<types::PartitionOffsets>()?;
    m.add_class::<types::DeleteOutcome>()?;
    m.add_class::<types::TruncateOutcome>()?;
    m.add_class::<types::TopicDescription>()?;
    m.add_class::<types::PartitionDescription>()?;
    m.add_class::<types::ClusterStatus>()?;
    m.add_class::<types::ClusterBroker>()?;
    m.add_class::<types::ClusterPartition>()?;
    m.add_class::<types::LeaderElection>()?;
    m.add_class::<types::GroupStatus>()?;
    m.add_class::<types::GroupMember>()?;
    m.add_class::<types::Statistics>()?;
    m.add_class::<types::Latency>()?;
    m.add_class::<types::PartitionLag>()?;
    m.add_function(wrap_pyfunction!(config::_check_config, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_closed_error, m)?)?;
    m.add_function(wrap_pyfunction!(logbridge::_flush_logs, m)?)?;
    m.add_function(wrap_pyfunction!(logbridge::sync_log_level, m)?)?;
    m.add_function(wrap_pyfunction!(config::client_options, m)?)?;
    m.add_function(wrap_pyfunction!(config::producer_options, m)?)?;
    m.add_function(wrap_pyfunction!(config::consumer_options, m)?)?;
    Ok(())
}
