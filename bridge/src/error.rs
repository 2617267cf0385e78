//! Errors as every language sees them: one status per failure, the names
//! of kinds and classes, the readable text.
//!
//! A status is the class of a broker error, or the local kind (timeout,
//! closed, invalid argument) for failures on this side of the wire. C
//! returns it, C++/Java/Python pick their exception class by it, Go its
//! sentinel. The readable text is the engine error's `Display`: the same
//! string in every language.

use cursus::{Error, ErrorClass, ErrorKind};

/// What a failed call reports, in every language. `Ok` is zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// Class `validation`: the request or a value was invalid.
    Validation = 1,
    /// Class `authorization`: the principal may not do this.
    Authorization = 2,
    /// Class `routing`: the request went to the wrong broker.
    Routing = 3,
    /// Class `availability`: the broker or network is unavailable.
    Availability = 4,
    /// Class `conflict`: the request conflicts with the current state.
    Conflict = 5,
    /// Class `fencing`: a newer producer or member fenced this one.
    Fencing = 6,
    /// Class `not_found`: the topic, group or partition does not exist.
    NotFound = 7,
    /// Class `internal`, a protocol violation, or a caught panic.
    Internal = 8,
    /// A deadline passed.
    Timeout = 9,
    /// The object was closed, or the process forked after creating it.
    Closed = 10,
    /// An argument or configuration value is invalid.
    InvalidArgument = 11,
}

impl Status {
    /// The status of an engine error: local kinds first, then the class.
    pub fn of(e: &Error) -> Status {
        match e.kind() {
            ErrorKind::Timeout => Status::Timeout,
            ErrorKind::Closed => Status::Closed,
            ErrorKind::InvalidArgument => Status::InvalidArgument,
            ErrorKind::Internal | ErrorKind::Protocol => Status::Internal,
            _ => Status::of_class(e.class()),
        }
    }

    /// The status of a class.
    pub fn of_class(class: ErrorClass) -> Status {
        match class {
            ErrorClass::Validation => Status::Validation,
            ErrorClass::Authorization => Status::Authorization,
            ErrorClass::Routing => Status::Routing,
            ErrorClass::Availability => Status::Availability,
            ErrorClass::Conflict => Status::Conflict,
            ErrorClass::Fencing => Status::Fencing,
            ErrorClass::NotFound => Status::NotFound,
            _ => Status::Internal,
        }
    }

    /// Its name: `ok`, `validation`, ..., `timeout`, `closed`,
    /// `invalid_argument`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Validation => "validation",
            Status::Authorization => "authorization",
            Status::Routing => "routing",
            Status::Availability => "availability",
            Status::Conflict => "conflict",
            Status::Fencing => "fencing",
            Status::NotFound => "not_found",
            Status::Internal => "internal",
            Status::Timeout => "timeout",
            Status::Closed => "closed",
            Status::InvalidArgument => "invalid_argument",
        }
    }
}

/// The lowercase name of an error kind (`broker`, `io`, `tls`, `timeout`,
/// `protocol`, `closed`, `invalid_argument`, `internal`).
pub fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Broker => "broker",
        ErrorKind::Io => "io",
        ErrorKind::Tls => "tls",
        ErrorKind::Timeout => "timeout",
        ErrorKind::Protocol => "protocol",
        ErrorKind::Closed => "closed",
        ErrorKind::InvalidArgument => "invalid_argument",
        _ => "internal",
    }
}

/// The error reported when a panic is caught at a language boundary.
pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Error {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    Error::internal(format!("panic inside the Cursus library: {what}")).with_code("panic")
}

/// An error a language layer raises for its own misuse (a NULL out
/// parameter, a negative count).
pub fn invalid(message: impl Into<String>) -> Error {
    Error::invalid_argument(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_kinds_take_precedence_over_the_class() {
        assert_eq!(Status::of(&Error::timeout("t")), Status::Timeout);
        assert_eq!(Status::of(&Error::closed("producer")), Status::Closed);
        assert_eq!(Status::of(&Error::protocol("x")), Status::Internal);
        assert_eq!(Status::of(&Error::io("x")), Status::Availability);
        assert_eq!(Status::NotFound.name(), "not_found");
        assert_eq!(kind_name(ErrorKind::InvalidArgument), "invalid_argument");
        let e = from_panic(&"boom");
        assert_eq!(Status::of(&e), Status::Internal);
        assert!(e.message().contains("boom"));
    }
}
