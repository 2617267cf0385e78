//! Forwards engine `tracing` events to the `log` facade, which pyo3-log
//! hands to Python's `logging` (logger `cursus.<module path>`).
//!
//! Events happen on any thread, the engine's I/O threads included, and
//! handing one to `logging` takes the GIL: so the bridge's subscriber
//! (`cursus_bridge::log`, shared with C and Java) formats an event where it
//! happens and queues it, bounded, to the process's log thread
//! (`cursus-log`, a `cursus::dispatch::Dispatcher`, this module's
//! fork-aware one), whose listener here takes the GIL. The I/O threads
//! never wait for Python, and records keep their order. Python's logging
//! levels filter events before they are formatted.
//!
//! Records of the `log` crate itself (rustls logs through it, on the I/O
//! threads doing TLS handshakes) take the same way: the process's `log`
//! logger is `Threaded`, which formats a record where it is made and hands
//! it to the log thread; only there does pyo3-log (which takes the GIL in
//! `log()`) see it. Installed directly, pyo3-log would make an I/O thread
//! wait for the GIL, and one still logging while the interpreter finalizes
//! would abort the process ("FATAL: exception not rethrown").
//!
//! A subscriber instead of tracing's `log` feature: enabling that feature
//! here would change the engine's feature set and make every other build
//! of the workspace (e.g. `cargo build -p cursus-broker`) recompile it.

use cursus::dispatch::Dispatcher;
use cursus_bridge::log::LogRecord;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, OnceLock};
use tracing::Level;

/// The subscriber: the bridge's, shared by every binding (it formats an
/// event where it happens and queues it, bounded, to the log thread).
pub use cursus_bridge::log::LogSubscriber as LogBridge;

fn level(l: &Level) -> log::Level {
    match *l {
        Level::ERROR => log::Level::Error,
        Level::WARN => log::Level::Warn,
        Level::INFO => log::Level::Info,
        Level::DEBUG => log::Level::Debug,
        _ => log::Level::Trace,
    }
}

/// Whether Python wants an engine event: pyo3-log answers from its
/// filters, without the GIL (asked after the bridge's level, which is
/// `trace` here: Python's levels decide).
fn python_wants(metadata: &tracing::Metadata<'_>) -> bool {
    if crate::EXITING.load(Ordering::SeqCst) {
        return false;
    }
    let m = log::Metadata::builder()
        .level(level(metadata.level()))
        .target(metadata.target())
        .build();
    log::max_level() >= m.level() && log::logger().enabled(&m)
}

/// A record formatted on the thread that made it, for the log thread.
struct Owned {
    level: log::Level,
    target: String,
    module_path: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    text: String,
}

impl Owned {
    fn from_bridge(record: &LogRecord) -> Owned {
        Owned {
            level: level(&record.level),
            target: record.target.clone(),
            module_path: record.module_path.clone(),
            file: record.file.clone(),
            line: record.line,
            text: record.message.clone(),
        }
    }

    fn of(record: &log::Record<'_>) -> Owned {
        Owned {
            level: record.level(),
            target: record.target().to_owned(),
            module_path: record.module_path().map(str::to_owned),
            file: record.file().map(str::to_owned),
            line: record.line(),
            text: record.args().to_string(),
        }
    }

    /// Hands the record to `logging` (on the log thread: pyo3-log takes
    /// the GIL), or to the `log` logger that another extension installed
    /// before ours.
    fn deliver(self) {
        let Some(_entry) = crate::PythonEntry::enter() else {
            return;
        };
        let text = self.text;
        let send = |record: &log::Record<'_>| match PYTHON_LOG.get() {
            Some(python) if INSTALLED.load(Ordering::SeqCst) => log::Log::log(python, record),
            _ => log::logger().log(record),
        };
        send(
            &log::Record::builder()
                .level(self.level)
                .target(&self.target)
                .module_path(self.module_path.as_deref())
                .file(self.file.as_deref())
                .line(self.line)
                .args(format_args!("{text}"))
                .build(),
        );
    }
}

/// pyo3-log's logger, called on the log thread only.
static PYTHON_LOG: OnceLock<pyo3_log::Logger> = OnceLock::new();

/// True once `Threaded` is the process's `log` logger.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The process's `log` logger: hands records to the log thread.
struct Threaded;

impl log::Log for Threaded {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        // pyo3-log answers from its filters, without the GIL.
        !crate::EXITING.load(Ordering::SeqCst)
            && PYTHON_LOG
                .get()
                .is_some_and(|python| python.enabled(metadata))
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            let owned = Owned::of(record);
            cursus_bridge::log::submit(move || owned.deliver());
        }
    }

    fn flush(&self) {}
}

/// Makes `python` (pyo3-log) the destination of `log` records, through the
/// log thread. Does nothing when the process already has a `log` logger
/// (another extension's): engine logs then go there.
pub(crate) fn install(py: Python<'_>, python: pyo3_log::Logger, max: log::LevelFilter) {
    // Engine events: the bridge's subscriber, filtered by Python's levels,
    // delivered on this module's fork-aware log thread. Its level (checked
    // first, on an atomic) is the `cursus` logger's: a level Python does
    // not log costs the engine nothing.
    cursus_bridge::log::set_log_thread(log_thread);
    cursus_bridge::log::set_filter(Arc::new(python_wants));
    cursus_bridge::log::set_listener(
        python_level(py),
        Some(Arc::new(|record: &LogRecord| {
            Owned::from_bridge(record).deliver()
        })),
    );
    if PYTHON_LOG.set(python).is_ok() && log::set_logger(&Threaded).is_ok() {
        INSTALLED.store(true, Ordering::SeqCst);
        log::set_max_level(max);
    }
}

/// The engine level matching a Python level threshold: the most verbose
/// engine level whose records Python would log (pyo3-log maps error,
/// warn, info, debug to 40, 30, 20, 10; trace is never forwarded).
fn engine_level(threshold: i64) -> Option<Level> {
    match threshold {
        i64::MIN..=10 => Some(Level::DEBUG),
        11..=20 => Some(Level::INFO),
        21..=30 => Some(Level::WARN),
        31..=40 => Some(Level::ERROR),
        _ => None,
    }
}

/// The threshold Python applies to engine records: the lowest effective
/// level of the `cursus` logger and of its configured descendants
/// (`cursus.consumer.group` ...), raised by `logging.disable()`.
fn python_threshold(py: Python<'_>) -> PyResult<i64> {
    let logging = py.import_bound("logging")?;
    let logger_class = logging.getattr("Logger")?;
    let mut lowest: i64 = logging
        .call_method1("getLogger", ("cursus",))?
        .call_method0("getEffectiveLevel")?
        .extract()?;
    let manager = logging.getattr("root")?.getattr("manager")?;
    // A copy: other threads may add loggers meanwhile.
    let loggers = manager.getattr("loggerDict")?.call_method0("copy")?;
    for item in loggers.call_method0("items")?.iter()? {
        let (name, logger): (String, Bound<'_, PyAny>) = item?.extract()?;
        if name.starts_with("cursus.") && logger.is_instance(&logger_class)? {
            let level: i64 = logger.call_method0("getEffectiveLevel")?.extract()?;
            lowest = lowest.min(level);
        }
    }
    let disabled: i64 = manager.getattr("disable")?.extract()?;
    Ok(lowest.max(disabled.saturating_add(1)))
}

/// The engine level for Python's current configuration (`debug` if it
/// cannot be read: Python's own filters still apply).
fn python_level(py: Python<'_>) -> Option<Level> {
    python_threshold(py).map_or(Some(Level::DEBUG), engine_level)
}

/// Sets the engine's log level from the `cursus` logger's effective level
/// (done when the module is imported and whenever a client is made).
pub(crate) fn sync_level(py: Python<'_>) {
    cursus_bridge::log::set_level(python_level(py));
}

/// Sets the engine's log level from the effective level of the `cursus`
/// logger (and of its descendants): call it after changing those levels
/// while clients exist (each new client does it too). Returns the engine
/// level now in force (`"off"`, `"error"`, `"warn"`, `"info"`, `"debug"`).
#[pyfunction]
pub fn sync_log_level(py: Python<'_>) -> &'static str {
    sync_level(py);
    cursus_bridge::log::level()
        .as_ref()
        .map_or("off", cursus_bridge::log::level_name)
}

/// Waits until the records logged so far are handed to `logging`, at most
/// until `deadline` (`None`: no limit); false if the deadline passed first.
pub(crate) fn flush(deadline: Option<std::time::Instant>) -> bool {
    cursus_bridge::log::flush(deadline)
}

/// Waits (GIL released) until the engine records logged so far are handed
/// to `logging`, at most `timeout` seconds (too large: no limit); false if
/// it passed first.
#[pyfunction]
pub fn _flush_logs(py: Python<'_>, timeout: f64) -> bool {
    let deadline = std::time::Duration::try_from_secs_f64(timeout.max(0.0))
        .ok()
        .and_then(|t| std::time::Instant::now().checked_add(t));
    py.allow_threads(|| flush(deadline))
}

/// The log thread of this process, with the pid that made it.
type LogThread = (u32, Dispatcher);

/// The current process's log thread. No lock: a `fork()` may happen while
/// another thread is here, and a child must not inherit a held lock.
static LOG_THREAD: AtomicPtr<LogThread> = AtomicPtr::new(std::ptr::null_mut());

/// The log thread of this process. A `fork()`ed child makes its own (the
/// parent's thread does not exist there); the parent's is left as it is.
fn log_thread() -> Dispatcher {
    let pid = std::process::id();
    loop {
        let current = LOG_THREAD.load(Ordering::Acquire);
        // SAFETY: a non-null pointer here came from `Box::into_raw` below
        // and was published by the successful compare-exchange; published
        // boxes are never freed, so it is valid for the life of the process.
        if let Some((owner, dispatcher)) = unsafe { current.as_ref() } {
            if *owner == pid {
                return dispatcher.clone();
            }
        }
        let fresh = Box::into_raw(Box::new((pid, Dispatcher::new("cursus-log"))));
        match LOG_THREAD.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // Published: never freed (see above). The replaced one, a
            // parent's, is leaked: its thread does not exist here.
            // SAFETY: `fresh` is the live box just published.
            Ok(_) => return unsafe { (*fresh).1.clone() },
            Err(_) => {
                // Another thread published first; ours was never shared.
                // SAFETY: `fresh` came from `Box::into_raw` above and was
                // not published, so this is its only owner.
                drop(unsafe { Box::from_raw(fresh) });
            }
        }
    }
}
