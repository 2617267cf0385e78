//! Forwards engine `tracing` events to the `log` facade, which pyo3-log
//! hands to Python's `logging` (logger `cursus.<module path>`).
//!
//! Events happen on any thread, the engine's I/O threads included, and
//! handing one to `logging` takes the GIL: so an event is formatted where
//! it happens and handed to the process's log thread (`cursus-log`, a
//! `cursus::dispatch::Dispatcher`), which takes the GIL. The I/O threads
//! never wait for Python, and records keep their order.
//!
//! A small subscriber instead of tracing's `log` feature: enabling that
//! feature here would change the engine's feature set and make every other
//! build of the workspace (e.g. `cargo build -p cursus-broker`) recompile it.

use cursus::dispatch::Dispatcher;
use pyo3::prelude::*;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicPtr, Ordering};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

fn level(l: &Level) -> log::Level {
    match *l {
        Level::ERROR => log::Level::Error,
        Level::WARN => log::Level::Warn,
        Level::INFO => log::Level::Info,
        Level::DEBUG => log::Level::Debug,
        _ => log::Level::Trace,
    }
}

/// Collects an event's message and `key=value` fields.
#[derive(Default)]
struct Text {
    message: String,
    fields: String,
}

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

/// The subscriber: events only (spans are not used by the engine's logs).
pub struct LogBridge;

impl Subscriber for LogBridge {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        // Ask `enabled` every time, so level changes in Python apply.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // pyo3-log answers from its filters, without the GIL.
        if crate::EXITING.load(Ordering::SeqCst) {
            return false;
        }
        let m = log::Metadata::builder()
            .level(level(metadata.level()))
            .target(metadata.target())
            .build();
        log::max_level() >= m.level() && log::logger().enabled(&m)
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        let mut text = Text::default();
        event.record(&mut text);
        let line = text.message + &text.fields;
        log_thread().run(move || {
            // pyo3-log takes the GIL to hand the record to `logging`.
            let Some(_entry) = crate::PythonEntry::enter() else {
                return;
            };
            log::logger().log(
                &log::Record::builder()
                    .level(level(meta.level()))
                    .target(meta.target())
                    .module_path(meta.module_path())
                    .file(meta.file())
                    .line(meta.line())
                    .args(format_args!("{line}"))
                    .build(),
            );
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Waits until the records logged so far are handed to `logging`, at most
/// until `deadline` (`None`: no limit); false if the deadline passed first.
pub(crate) fn flush(deadline: Option<std::time::Instant>) -> bool {
    log_thread().wait_idle(deadline)
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
