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
mod logbridge;
mod sync;
mod types;

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by an `atexit` hook: the interpreter is shutting down, so engine
/// threads must no longer take the GIL (logs and callbacks are dropped).
static EXITING: AtomicBool = AtomicBool::new(false);

#[pyfunction]
fn _mark_exiting() {
    EXITING.store(true, Ordering::SeqCst);
}

/// Runs `f` with the GIL from an engine thread, unless the interpreter is
/// shutting down (then `f` is skipped and `None` returned).
pub(crate) fn with_gil_if_alive<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    if EXITING.load(Ordering::SeqCst) {
        return None;
    }
    // SAFETY: Py_IsInitialized may be called at any time, without the GIL.
    if unsafe { pyo3::ffi::Py_IsInitialized() } == 0 {
        return None;
    }
    Some(Python::with_gil(f))
}

/// Whether engine threads may still call into Python.
pub(crate) fn python_alive() -> bool {
    // SAFETY: as above.
    !EXITING.load(Ordering::SeqCst) && unsafe { pyo3::ffi::Py_IsInitialized() } != 0
}

/// The extension module.
#[pymodule]
fn _cursus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Engine `tracing` events become `log` records (logbridge), which
    // pyo3-log hands to Python's `logging` under the logger
    // `cursus.<module path>`. Level changes in Python are honoured (only
    // logger objects are cached). If the process already has a `log` logger
    // or a tracing subscriber (another extension), engine logs go there.
    let _ = pyo3_log::Logger::new(m.py(), pyo3_log::Caching::Loggers)?
        .filter(log::LevelFilter::Debug)
        .install();
    let _ = tracing::subscriber::set_global_default(logbridge::LogBridge);
    m.py()
        .import_bound("atexit")?
        .call_method1("register", (wrap_pyfunction!(_mark_exiting, m)?,))?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<sync::Producer>()?;
    m.add_class::<sync::Delivery>()?;
    m.add_class::<sync::Consumer>()?;
    m.add_class::<sync::AdminClient>()?;
    m.add_class::<aio::AsyncProducer>()?;
    m.add_class::<aio::AsyncConsumer>()?;
    m.add_class::<aio::AsyncAdmin>()?;
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
    m.add_class::<types::GroupStatus>()?;
    m.add_class::<types::GroupMember>()?;
    m.add_function(wrap_pyfunction!(config::client_options, m)?)?;
    m.add_function(wrap_pyfunction!(config::producer_options, m)?)?;
    m.add_function(wrap_pyfunction!(config::consumer_options, m)?)?;
    Ok(())
}
