//! Engine logs for every binding: a `tracing` subscriber that hands each
//! enabled event, formatted, to one listener on the process's log thread.
//!
//! The engine logs on any thread, its I/O threads included, and a
//! listener is language code (a C function, a JVM call, Python's
//! `logging`, which takes the GIL). So:
//!
//! - the level is checked first, on an atomic: an event below it costs a
//!   load and never touches a language runtime (the default level is `off`);
//! - an enabled event is formatted where it happens (message, then
//!   ` key=value` fields; the target is the engine module) and queued to
//!   the log thread (`cursus-log`, a [`cursus::dispatch::Dispatcher`]),
//!   which calls the listener: records keep their order and the I/O
//!   threads never wait for a language;
//! - the queue is bounded ([`MAX_QUEUED`] records): while a slow listener
//!   is that far behind, new records are dropped and counted, and the next
//!   record delivered carries the count ([`LogRecord::dropped`]) and says
//!   so at the end of its message.
//!
//! The subscriber is installed once per process ([`install`]); a binding
//! sets the listener and the level ([`set_listener`], [`set_level`]). A
//! binding with its own filter (Python's `logging` levels per logger) adds
//! it with [`set_filter`], and one whose log thread must survive `fork()`
//! provides it with [`set_log_thread`].

use cursus::dispatch::Dispatcher;
use cursus::{Error, Result};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata};

/// The most records waiting for the log thread; more are dropped (and
/// counted) until it catches up.
pub const MAX_QUEUED: usize = 10_000;

/// One engine log record, formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Severity.
    pub level: Level,
    /// Where it comes from: the engine module (`cursus::consumer::group`).
    pub target: String,
    /// The message, then ` key=value` per field.
    pub message: String,
    /// The Rust module path, when known.
    pub module_path: Option<String>,
    /// The source file, when known.
    pub file: Option<String>,
    /// The source line, when known.
    pub line: Option<u32>,
    /// Records dropped just before this one because the listener was
    /// [`MAX_QUEUED`] records behind.
    pub dropped: u64,
}

impl LogRecord {
    /// The level's name: `error`, `warn`, `info`, `debug` or `trace`.
    pub fn level_name(&self) -> &'static str {
        level_name(&self.level)
    }
}

/// The name of a level, lower case.
pub fn level_name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        _ => "trace",
    }
}

/// A level by name (`error`, `warn`, `info`, `debug`, `trace`, any case);
/// `off` is `None`.
pub fn parse_level(name: &str) -> Result<Option<Level>> {
    Ok(Some(match name.trim().to_ascii_lowercase().as_str() {
        "off" | "none" => return Ok(None),
        "error" => Level::ERROR,
        "warn" | "warning" => Level::WARN,
        "info" => Level::INFO,
        "debug" => Level::DEBUG,
        "trace" => Level::TRACE,
        _ => {
            return Err(Error::invalid_argument(format!(
                "unknown log level {name:?}: use error, warn, info, debug, trace or off"
            )))
        }
    }))
}

/// `off` = 0, `error` = 1 ... `trace` = 5.
fn rank(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        _ => 5,
    }
}

/// The most verbose level delivered (see [`rank`]); 0 is off.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The listener of log records (called on the log thread).
pub type LogListener = Arc<dyn Fn(&LogRecord) + Send + Sync>;

/// A binding's filter after the level (target, level); true to log.
pub type LogFilter = Arc<dyn Fn(&Metadata<'_>) -> bool + Send + Sync>;

static LISTENER: Mutex<Option<LogListener>> = Mutex::new(None);
static FILTER: OnceLock<LogFilter> = OnceLock::new();
static LOG_THREAD: OnceLock<fn() -> Dispatcher> = OnceLock::new();
static QUEUED: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Sets the most verbose level delivered (`None`: off, nothing is
/// formatted or queued).
pub fn set_level(level: Option<Level>) {
    LEVEL.store(level.as_ref().map_or(0, rank), Ordering::SeqCst);
}

/// The level set last (`None`: off).
pub fn level() -> Option<Level> {
    match LEVEL.load(Ordering::Relaxed) {
        0 => None,
        1 => Some(Level::ERROR),
        2 => Some(Level::WARN),
        3 => Some(Level::INFO),
        4 => Some(Level::DEBUG),
        _ => Some(Level::TRACE),
    }
}

/// Installs the subscriber (once per process) and sets the listener and
/// the level: `None` as either turns logging off. Records already queued
/// go to the listener set when they are delivered.
pub fn set_listener(level: Option<Level>, listener: Option<LogListener>) {
    install();
    let off = listener.is_none();
    *LISTENER.lock().unwrap_or_else(|p| p.into_inner()) = listener;
    set_level(if off { None } else { level });
}

/// Adds a filter asked after the level (once per process; false when one
/// was set before).
pub fn set_filter(filter: LogFilter) -> bool {
    FILTER.set(filter).is_ok()
}

/// Makes `provider` give the log thread (once per process, before the
/// first record; false when one was set before). The default is one
/// dispatcher for the life of the process.
pub fn set_log_thread(provider: fn() -> Dispatcher) -> bool {
    LOG_THREAD.set(provider).is_ok()
}

fn log_thread() -> Dispatcher {
    if let Some(provider) = LOG_THREAD.get() {
        return provider();
    }
    static DEFAULT: OnceLock<Dispatcher> = OnceLock::new();
    DEFAULT
        .get_or_init(|| Dispatcher::new("cursus-log"))
        .clone()
}

/// Installs the subscriber as the process's global default; false when
/// the process has another one (engine logs then go there).
pub fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| tracing::subscriber::set_global_default(LogSubscriber).is_ok())
}

/// Runs `job` on the log thread after the records queued before it,
/// unless [`MAX_QUEUED`] jobs are waiting: then it is dropped and counted
/// (false). For bindings that route records of their own (the `log`
/// crate's) through the same thread.
pub fn submit(job: impl FnOnce() + Send + 'static) -> bool {
    if QUEUED.fetch_add(1, Ordering::AcqRel) >= MAX_QUEUED {
        QUEUED.fetch_sub(1, Ordering::AcqRel);
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return false;
    }
    log_thread().run(move || {
        QUEUED.fetch_sub(1, Ordering::AcqRel);
        job();
    });
    true
}

/// Takes the count of records dropped since the last call (for the next
/// record delivered).
pub fn take_dropped() -> u64 {
    DROPPED.swap(0, Ordering::Relaxed)
}

/// Waits until the records queued so far were handed to the listener, at
/// most until `deadline` (`None`: no limit); false if it passed first.
pub fn flush(deadline: Option<std::time::Instant>) -> bool {
    log_thread().wait_idle(deadline)
}

/// Hands `record` to the listener (on the log thread).
fn deliver(mut record: LogRecord) {
    let dropped = take_dropped();
    if dropped > 0 {
        record.dropped = dropped;
        let _ = write!(
            record.message,
            " [{dropped} earlier log records dropped: the log listener fell behind]"
        );
    }
    let listener = LISTENER.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(listener) = listener {
        listener(&record);
    }
}

/// Collects an event's message and ` key=value` fields.
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

/// The subscriber: events only (the engine's logs use no spans).
#[derive(Debug, Clone, Copy, Default)]
pub struct LogSubscriber;

impl tracing::Subscriber for LogSubscriber {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        // Ask `enabled` every time, so level changes apply at once.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        rank(metadata.level()) <= LEVEL.load(Ordering::Relaxed)
            && match FILTER.get() {
                Some(filter) => filter(metadata),
                None => true,
            }
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
        let record = LogRecord {
            level: *meta.level(),
            target: meta.target().to_owned(),
            message: text.message + &text.fields,
            module_path: meta.module_path().map(str::to_owned),
            file: meta.file().map(str::to_owned),
            line: meta.line(),
            dropped: 0,
        };
        submit(move || deliver(record));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_names_round_trip() {
        for name in ["error", "warn", "info", "debug", "trace"] {
            let level = parse_level(name).unwrap().unwrap();
            assert_eq!(level_name(&level), name);
        }
        assert_eq!(parse_level("OFF").unwrap(), None);
        assert_eq!(parse_level("loud").unwrap_err().code(), "invalid_argument");
    }
}
