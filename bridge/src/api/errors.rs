//! Error accessors: what a language reads off a failed call's error.

use crate::error::kind_name;
pub use crate::error::Status;
use cursus::{Error, ErrorClass};
use cursus_bridge_macros::bridge_fn;

/// The status this error reports (its class, or its local kind).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "InvalidArgument")]
pub fn error_status(error: &Error) -> Status {
    Status::of(error)
}

/// The class (one of the protocol's eight).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "Internal")]
pub fn error_class(error: &Error) -> ErrorClass {
    error.class()
}

/// The machine-readable code, e.g. `"topic_not_found"` or `"timeout"`.
///
/// Thread-safety: safe from any thread while the error is alive.
#[bridge_fn]
pub fn error_code(error: &Error) -> &str {
    error.code()
}

/// The class name, e.g. `"routing"`.
///
/// Thread-safety: safe from any thread while the error is alive.
#[bridge_fn]
pub fn error_class_name(error: &Error) -> &str {
    error.class().name()
}

/// Where the error comes from: `"broker"`, `"io"`, `"timeout"`,
/// `"protocol"`, `"closed"`, `"invalid_argument"` or `"internal"`.
///
/// Thread-safety: safe from any thread while the error is alive.
#[bridge_fn]
pub fn error_kind(error: &Error) -> &str {
    kind_name(error.kind())
}

/// Whether the operation may be retried (with backoff).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn error_retryable(error: &Error) -> bool {
    error.retryable()
}

/// The detail message as the broker or the engine wrote it (may be empty;
/// see `error_text` for the readable form).
///
/// Thread-safety: safe from any thread while the error is alive.
#[bridge_fn]
pub fn error_message(error: &Error) -> &str {
    error.message()
}

/// The readable form, the same in every language:
/// `code (class[, retryable]): message; field=value, ...`, e.g.
/// `topic_not_found (not_found): topic=orders`.
///
/// Thread-safety: safe from any thread while the error is alive.
#[bridge_fn]
pub fn error_text(error: &Error) -> String {
    error.to_string()
}

/// The number of structured fields (`topic`, `leader`, ...).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn error_field_count(error: &Error) -> usize {
    error.fields().len()
}

/// The name of field `index` (fields are sorted by name; none when out of
/// range).
///
/// Thread-safety: safe from any thread while the error is alive.
#[bridge_fn]
pub fn error_field_name(error: &Error, index: usize) -> Option<&str> {
    error.fields().keys().nth(index).map(String::as_str)
}

/// The value of field `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the error is alive.
#[bridge_fn]
pub fn error_field_value(error: &Error, index: usize) -> Option<&str> {
    error.fields().values().nth(index).map(String::as_str)
}

/// The value of the field named `name` (none when absent).
///
/// Thread-safety: safe from any thread while the error is alive.
#[bridge_fn]
pub fn error_field<'a>(error: &'a Error, name: &str) -> Option<&'a str> {
    error.field(name)
}
