//! Forwards engine `tracing` events to the `log` facade, which pyo3-log
//! hands to Python's `logging` (logger `cursus.<module path>`).
//!
//! A small subscriber instead of tracing's `log` feature: enabling that
//! feature here would change the engine's feature set and make every other
//! build of the workspace (e.g. `cargo build -p cursus-broker`) recompile it.

use std::fmt::Write as _;
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
        // pyo3-log may take the GIL to look a logger up.
        let Some(_entry) = crate::PythonEntry::enter() else {
            return false;
        };
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
        // pyo3-log takes the GIL to hand the record to `logging`.
        let Some(_entry) = crate::PythonEntry::enter() else {
            return;
        };
        let meta = event.metadata();
        let mut text = Text::default();
        event.record(&mut text);
        log::logger().log(
            &log::Record::builder()
                .level(level(meta.level()))
                .target(meta.target())
                .module_path(meta.module_path())
                .file(meta.file())
                .line(meta.line())
                .args(format_args!("{}{}", text.message, text.fields))
                .build(),
        );
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
