//! The C types that are not handles: statuses, classes, the delivery
//! report, the callback types, and the constants of the timeout and
//! timestamp conventions.

use cursus_bridge::api::{ErrorClass, RecordMetadata, Status};
use std::ffi::{c_char, c_void};

/// Status returned by every fallible function. `CURSUS_OK` is zero; every
/// other value names the error class (or, for local failures, the kind).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cursus_status_t {
    /// Success.
    CURSUS_OK = 0,
    /// Class `validation`: the request or a value was invalid.
    CURSUS_ERR_VALIDATION = 1,
    /// Class `authorization`: the principal may not do this.
    CURSUS_ERR_AUTHORIZATION = 2,
    /// Class `routing`: the request went to the wrong broker.
    CURSUS_ERR_ROUTING = 3,
    /// Class `availability`: the broker or network is unavailable (retry later).
    CURSUS_ERR_AVAILABILITY = 4,
    /// Class `conflict`: the request conflicts with the current state.
    CURSUS_ERR_CONFLICT = 5,
    /// Class `fencing`: a newer producer or member fenced this one.
    CURSUS_ERR_FENCING = 6,
    /// Class `not_found`: the topic, group or partition does not exist.
    CURSUS_ERR_NOT_FOUND = 7,
    /// Class `internal`, a protocol violation, or a panic caught at the boundary.
    CURSUS_ERR_INTERNAL = 8,
    /// A deadline passed (class `availability`, retryable).
    CURSUS_ERR_TIMEOUT = 9,
    /// The object was closed, or the process forked after creating it
    /// (code `used_after_fork`).
    CURSUS_ERR_CLOSED = 10,
    /// An argument or configuration value is invalid (NULL or destroyed
    /// handle, bad UTF-8, unknown option...).
    CURSUS_ERR_INVALID_ARGUMENT = 11,
}

impl From<Status> for cursus_status_t {
    fn from(s: Status) -> Self {
        use cursus_status_t::*;
        match s {
            Status::Ok => CURSUS_OK,
            Status::Validation => CURSUS_ERR_VALIDATION,
            Status::Authorization => CURSUS_ERR_AUTHORIZATION,
            Status::Routing => CURSUS_ERR_ROUTING,
            Status::Availability => CURSUS_ERR_AVAILABILITY,
            Status::Conflict => CURSUS_ERR_CONFLICT,
            Status::Fencing => CURSUS_ERR_FENCING,
            Status::NotFound => CURSUS_ERR_NOT_FOUND,
            Status::Internal => CURSUS_ERR_INTERNAL,
            Status::Timeout => CURSUS_ERR_TIMEOUT,
            Status::Closed => CURSUS_ERR_CLOSED,
            Status::InvalidArgument => CURSUS_ERR_INVALID_ARGUMENT,
        }
    }
}

/// The eight error classes of the Cursus protocol.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cursus_error_class_t {
    /// `validation`.
    CURSUS_CLASS_VALIDATION = 1,
    /// `authorization`.
    CURSUS_CLASS_AUTHORIZATION = 2,
    /// `routing`.
    CURSUS_CLASS_ROUTING = 3,
    /// `availability`.
    CURSUS_CLASS_AVAILABILITY = 4,
    /// `conflict`.
    CURSUS_CLASS_CONFLICT = 5,
    /// `fencing`.
    CURSUS_CLASS_FENCING = 6,
    /// `not_found`.
    CURSUS_CLASS_NOT_FOUND = 7,
    /// `internal`.
    CURSUS_CLASS_INTERNAL = 8,
}

impl From<ErrorClass> for cursus_error_class_t {
    fn from(c: ErrorClass) -> Self {
        use cursus_error_class_t::*;
        match c {
            ErrorClass::Validation => CURSUS_CLASS_VALIDATION,
            ErrorClass::Authorization => CURSUS_CLASS_AUTHORIZATION,
            ErrorClass::Routing => CURSUS_CLASS_ROUTING,
            ErrorClass::Availability => CURSUS_CLASS_AVAILABILITY,
            ErrorClass::Conflict => CURSUS_CLASS_CONFLICT,
            ErrorClass::Fencing => CURSUS_CLASS_FENCING,
            ErrorClass::NotFound => CURSUS_CLASS_NOT_FOUND,
            _ => CURSUS_CLASS_INTERNAL,
        }
    }
}

/// Where a record was written.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cursus_record_metadata_t {
    /// Partition the record was written to.
    pub partition: i32,
    /// Offset of the record, or -1 when the broker did not report one (acks=0).
    pub offset: i64,
    /// Timestamp in milliseconds since the epoch.
    pub timestamp: i64,
}

/// The C view of where a record was written.
pub(crate) fn record_metadata(m: &RecordMetadata) -> cursus_record_metadata_t {
    cursus_record_metadata_t {
        partition: m.partition as i32,
        offset: m.offset.map_or(-1, |o| o as i64),
        timestamp: m.timestamp,
    }
}

/// Outcome of one send, passed to a delivery callback.
#[repr(C)]
pub struct cursus_delivery_report_t {
    /// `CURSUS_OK` when the record was acknowledged.
    pub status: cursus_status_t,
    /// The error when `status != CURSUS_OK`, else NULL. Borrowed: valid only
    /// during the callback; do not destroy it.
    pub error: *const crate::cursus_error_t,
    /// Topic of the record (NUL-terminated; valid only during the callback).
    pub topic: *const c_char,
    /// Metadata, meaningful when `status == CURSUS_OK`.
    pub metadata: cursus_record_metadata_t,
}

/// Delivery callback: called exactly once per queued record, on the
/// producer's callback thread (never a network thread), in offset order per
/// partition. It may call any library function, including `send` and
/// `flush` of the same producer; while it runs, the producer's later
/// callbacks wait.
pub type cursus_delivery_cb =
    Option<unsafe extern "C" fn(user_data: *mut c_void, report: *const cursus_delivery_report_t)>;

/// Completion callback (e.g. of `cursus_consumer_commit_async`): called
/// exactly once with the outcome, on the client's callback thread. `error`
/// is NULL on success; otherwise it is borrowed (valid only during the
/// callback; do not destroy it). It may call any library function.
pub type cursus_completion_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        status: cursus_status_t,
        error: *const crate::cursus_error_t,
    ),
>;

// Literals, because cbindgen copies them into the header; the tests check
// them against the bridge's values.
/// `timeout_ms` value meaning "no limit".
pub const CURSUS_NO_TIMEOUT: i64 = -1;
/// `timeout_ms` value meaning "the default" (30 s) for flush and close.
pub const CURSUS_DEFAULT_TIMEOUT: i64 = -2;
/// `timestamp` value meaning "stamp the send time" (`INT64_MIN`).
pub const CURSUS_NO_TIMESTAMP: i64 = -9_223_372_036_854_775_807 - 1;
/// `partition` value letting the partitioner choose.
pub const CURSUS_ANY_PARTITION: i32 = -1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_the_bridge() {
        assert_eq!(CURSUS_NO_TIMEOUT, cursus_bridge::timeout::NO_LIMIT);
        assert_eq!(CURSUS_DEFAULT_TIMEOUT, cursus_bridge::timeout::USE_DEFAULT);
        assert_eq!(CURSUS_NO_TIMESTAMP, cursus_bridge::api::NO_TIMESTAMP);
        assert_eq!(cursus_status_t::from(Status::Closed) as i32, 10);
    }
}
