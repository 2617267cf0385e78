//! The one error type of the engine, which every binding maps.
//!
//! A broker error carries the typed payload's code, class, retryable flag,
//! message and fields. Failures that happen on this side of the wire (I/O,
//! timeouts, protocol violations, use of a closed object, bad arguments) have
//! their own [`ErrorKind`] and a fixed code and class, so that callers can
//! branch on `class()` and `retryable()` whatever the origin.

use crate::wire::{ErrorClass, ErrorPayload, WireError};
use std::collections::BTreeMap;
use std::fmt;

/// Where an error comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The broker answered with a typed error.
    Broker,
    /// The network failed (connect, read, write, disconnect). Retryable.
    Io,
    /// A deadline passed: a request, a blocked send, a flush or a close.
    Timeout,
    /// The peer violated the protocol (bad frame, unexpected reply).
    Protocol,
    /// The object was closed, or the process forked after creating it.
    Closed,
    /// A caller-supplied argument or configuration value is invalid.
    InvalidArgument,
    /// A bug or a panic inside the engine, caught at a boundary.
    Internal,
    /// The TLS handshake failed: an untrusted or mismatched broker
    /// certificate, a refused client certificate, or a peer that does not
    /// speak TLS. Class authorization, never retried: trying again cannot
    /// change a certificate. The `reason` field says which.
    Tls,
}

impl ErrorKind {
    /// The code reported for errors of a local kind.
    pub const fn local_code(self) -> &'static str {
        match self {
            ErrorKind::Broker => "broker_error",
            ErrorKind::Io => "io_error",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Protocol => "protocol_error",
            ErrorKind::Closed => "closed",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Internal => "internal_error",
            ErrorKind::Tls => "tls_handshake_failed",
        }
    }

    /// The class reported for errors of a local kind: a lost connection or
    /// a timeout is an availability problem; misuse is a validation error.
    pub const fn local_class(self) -> ErrorClass {
        match self {
            ErrorKind::Io | ErrorKind::Timeout => ErrorClass::Availability,
            ErrorKind::Closed | ErrorKind::InvalidArgument => ErrorClass::Validation,
            ErrorKind::Broker | ErrorKind::Protocol | ErrorKind::Internal => ErrorClass::Internal,
            ErrorKind::Tls => ErrorClass::Authorization,
        }
    }
}

/// An engine error: code, class, retryable flag, message and fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    code: String,
    class: ErrorClass,
    retryable: bool,
    message: String,
    fields: BTreeMap<String, String>,
}

/// Result alias used throughout the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of a local kind with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            code: kind.local_code().to_owned(),
            class: kind.local_class(),
            retryable: matches!(kind, ErrorKind::Io | ErrorKind::Timeout),
            message: message.into(),
            fields: BTreeMap::new(),
        }
    }

    /// A network failure.
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Io, message)
    }

    /// A deadline that passed.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Timeout, message)
    }

    /// A protocol violation by the peer.
    pub fn protocol(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Protocol, message)
    }

    /// Use of a closed object.
    pub fn closed(what: &str) -> Self {
        Self::new(ErrorKind::Closed, format!("{what} is closed"))
    }

    /// An invalid argument or configuration value.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    /// An internal failure (a bug).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// Overrides the code of a local error (e.g. `max_block_exceeded`).
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = code.into();
        self
    }

    /// Overrides the class of a local error.
    pub fn with_class(mut self, class: ErrorClass) -> Self {
        self.class = class;
        self
    }

    /// Adds a field.
    pub fn with_field(mut self, name: impl Into<String>, value: impl ToString) -> Self {
        self.fields.insert(name.into(), value.to_string());
        self
    }

    /// Where the error comes from.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Machine-readable code (the broker's code, or the local kind's).
    pub fn code(&self) -> &str {
        &self.code
    }

    /// One of the eight classes.
    pub fn class(&self) -> ErrorClass {
        self.class
    }

    /// Whether the same operation may be attempted again (with backoff).
    pub fn retryable(&self) -> bool {
        self.retryable
    }

    /// Human-readable detail.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Structured details (e.g. `leader`, `earliest`, `latest`).
    pub fn fields(&self) -> &BTreeMap<String, String> {
        &self.fields
    }

    /// One field's value.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    /// True for a broker error with this code.
    pub fn is_broker_code(&self, code: &str) -> bool {
        self.kind == ErrorKind::Broker && self.code == code
    }
}

impl From<ErrorPayload> for Error {
    fn from(p: ErrorPayload) -> Self {
        Error {
            kind: ErrorKind::Broker,
            code: p.code,
            class: p.class,
            retryable: p.retryable,
            message: p.message,
            fields: p.fields,
        }
    }
}

impl From<WireError> for Error {
    fn from(e: WireError) -> Self {
        Error::protocol(e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::TimedOut {
            Error::timeout(e.to_string())
        } else {
            Error::io(e.to_string())
        }
    }
}

/// The readable form every language shows for an error (its message,
/// `str()`, `what()`, `Error()`, `getMessage()`):
/// `code (class[, retryable]): message; field=value, field=value`, parts
/// left out when empty, e.g.
/// `topic_not_found (not_found): topic=orders` or
/// `timeout (availability, retryable): flush did not finish within 100 ms`.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}", self.code, self.class.name())?;
        if self.retryable {
            f.write_str(", retryable")?;
        }
        f.write_str(")")?;
        let mut sep = ": ";
        if !self.message.is_empty() {
            write!(f, "{sep}{}", self.message)?;
            sep = "; ";
        }
        for (k, v) in &self.fields {
            write!(f, "{sep}{k}={v}")?;
            sep = ", ";
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_errors_keep_the_payload() {
        let e: Error = ErrorPayload::new("NOT_LEADER")
            .with_field("leader", "h:1")
            .into();
        assert_eq!(e.kind(), ErrorKind::Broker);
        assert_eq!(e.class(), ErrorClass::Routing);
        assert!(e.retryable());
        assert_eq!(e.field("leader"), Some("h:1"));
        assert_eq!(e.to_string(), "NOT_LEADER (routing, retryable): leader=h:1");
    }

    #[test]
    fn local_kinds_have_codes_and_classes() {
        let e = Error::timeout("request 7 took too long");
        assert_eq!(e.code(), "timeout");
        assert_eq!(e.class(), ErrorClass::Availability);
        assert!(e.retryable());
        let e = Error::closed("producer");
        assert_eq!(e.class(), ErrorClass::Validation);
        assert!(!e.retryable());
        assert_eq!(e.to_string(), "closed (validation): producer is closed");
        let e = Error::invalid_argument("bad")
            .with_field("option", "acks")
            .with_field("value", "x");
        assert_eq!(
            e.to_string(),
            "invalid_argument (validation): bad; option=acks, value=x"
        );
    }
}
