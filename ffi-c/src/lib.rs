//! `libcursus`: the C ABI of the Cursus engine.
//!
//! Every function here is a thin conversion over [`cursus::blocking`]: it
//! converts C arguments, calls the facade, and maps [`cursus::Error`] to a
//! [`cursus_status_t`] plus an optional [`cursus_error_t`] out-parameter.
//!
//! Handles are not pointers to Rust objects: they are ids into a process-wide
//! registry (see [`registry`]). A NULL, destroyed or wrong-kind handle is
//! therefore detected and reported as an error, never dereferenced. Panics are
//! caught at the boundary and reported as `CURSUS_ERR_INTERNAL`.
//!
//! The header `include/cursus.h` is generated from this file by cbindgen (see
//! `build.rs`); every public item's documentation ends up in it.

#![warn(missing_docs)]
#![allow(non_camel_case_types)]

mod registry;

use bytes::Bytes;
use cursus::blocking::{Admin, Consumer, Producer};
use cursus::consumer::ConsumerRecord;
use cursus::producer::{ProducerRecord, RecordMetadata};
use cursus::protocol::admin::NewTopic;
use cursus::protocol::group::TopicPartition;
use cursus::wire::ErrorClass;
use cursus::{ClientConfig, ConsumerConfig, ErrorKind, ProducerConfig};
use registry::{Object, Registry};
use std::collections::{BTreeMap, VecDeque};
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Major version of the library this header belongs to.
pub const CURSUS_VERSION_MAJOR: u32 = 0;
/// Minor version of the library this header belongs to.
pub const CURSUS_VERSION_MINOR: u32 = 1;
/// Patch version of the library this header belongs to.
pub const CURSUS_VERSION_PATCH: u32 = 0;

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
    /// The object was closed or destroyed, or the process forked after creating it.
    CURSUS_ERR_CLOSED = 10,
    /// An argument or configuration value is invalid (NULL handle, bad UTF-8, unknown option...).
    CURSUS_ERR_INVALID_ARGUMENT = 11,
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

/// Opaque configuration: string key/value options (the engine's option
/// names: `bootstrap_servers`, `acks`, `linger_ms`, `group_id`, ...).
pub struct cursus_config_t {
    _private: [u8; 0],
}
/// Opaque admin client.
pub struct cursus_admin_t {
    _private: [u8; 0],
}
/// Opaque producer.
pub struct cursus_producer_t {
    _private: [u8; 0],
}
/// Opaque group consumer.
pub struct cursus_consumer_t {
    _private: [u8; 0],
}
/// Opaque consumed message.
pub struct cursus_message_t {
    _private: [u8; 0],
}
/// Opaque error: code, class, retryable flag, message and fields.
pub struct cursus_error_t {
    _private: [u8; 0],
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

/// Outcome of one send, passed to a delivery callback.
#[repr(C)]
pub struct cursus_delivery_report_t {
    /// `CURSUS_OK` when the record was acknowledged.
    pub status: cursus_status_t,
    /// The error when `status != CURSUS_OK`, else NULL. Borrowed: valid only
    /// during the callback; do not free it.
    pub error: *const cursus_error_t,
    /// Topic of the record (NUL-terminated; valid only during the callback).
    pub topic: *const c_char,
    /// Metadata, meaningful when `status == CURSUS_OK`.
    pub metadata: cursus_record_metadata_t,
}

/// Delivery callback: called exactly once per successfully queued record,
/// on an engine thread. It must not block for long; it may call library
/// functions (except blocking calls such as send, flush, poll and close,
/// which fail with `CURSUS_ERR_INTERNAL` on an engine thread).
pub type cursus_delivery_cb =
    Option<unsafe extern "C" fn(user_data: *mut c_void, report: *const cursus_delivery_report_t)>;

// ----------------------------------------------------------------------------
// Internal plumbing
// ----------------------------------------------------------------------------

static REGISTRY: Registry = Registry::new();

/// Configuration state behind a `cursus_config_t`.
pub(crate) struct ConfigObj {
    entries: Mutex<Vec<(String, String)>>,
}

/// Consumer state: the engine consumer plus records polled but not yet handed out.
pub(crate) struct ConsumerObj {
    inner: Consumer,
    buffered: Mutex<VecDeque<ConsumerRecord>>,
    delivered: Mutex<BTreeMap<(String, u32), u64>>,
}

/// Producer state: the engine producer plus the count of delivery callbacks
/// not yet returned, so that `flush` returns only after they all ran.
pub(crate) struct ProducerObj {
    inner: Producer,
    pending: Arc<(Mutex<usize>, Condvar)>,
}

impl ConsumerObj {
    /// The next offsets of the records handed out so far, per partition.
    fn delivered_offsets(&self) -> FfiResult<Vec<(TopicPartition, u64)>> {
        Ok(self
            .delivered
            .lock()
            .map_err(|_| invalid("lock poisoned"))?
            .iter()
            .map(|((topic, partition), next)| {
                (
                    TopicPartition {
                        topic: topic.clone(),
                        partition: *partition,
                    },
                    *next,
                )
            })
            .collect())
    }
}

impl ProducerObj {
    /// Waits until no callback is pending, until `deadline` if any.
    fn wait_callbacks(&self, deadline: Option<Instant>) -> FfiResult<()> {
        let (lock, cv) = &*self.pending;
        let mut n = lock.lock().unwrap_or_else(|p| p.into_inner());
        while *n > 0 {
            match deadline {
                None => n = cv.wait(n).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(cursus::Error::timeout(
                            "delivery callbacks still running at the flush deadline",
                        ));
                    }
                    n = cv
                        .wait_timeout(n, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
        Ok(())
    }
}

/// A consumed record with a NUL-terminated copy of its topic.
pub(crate) struct MessageObj {
    record: ConsumerRecord,
    topic: CString,
}

/// An engine error with NUL-terminated copies of its strings.
pub(crate) struct ErrorObj {
    status: cursus_status_t,
    class: ErrorClass,
    retryable: bool,
    code: CString,
    class_name: CString,
    message: CString,
    fields: Vec<(CString, CString)>,
}

fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

fn class_status(class: ErrorClass) -> cursus_status_t {
    use cursus_status_t::*;
    match class {
        ErrorClass::Validation => CURSUS_ERR_VALIDATION,
        ErrorClass::Authorization => CURSUS_ERR_AUTHORIZATION,
        ErrorClass::Routing => CURSUS_ERR_ROUTING,
        ErrorClass::Availability => CURSUS_ERR_AVAILABILITY,
        ErrorClass::Conflict => CURSUS_ERR_CONFLICT,
        ErrorClass::Fencing => CURSUS_ERR_FENCING,
        ErrorClass::NotFound => CURSUS_ERR_NOT_FOUND,
        _ => CURSUS_ERR_INTERNAL,
    }
}

fn class_enum(class: ErrorClass) -> cursus_error_class_t {
    use cursus_error_class_t::*;
    match class {
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

/// The status of an engine error: local kinds first, then the class.
fn status_of(e: &cursus::Error) -> cursus_status_t {
    match e.kind() {
        ErrorKind::Timeout => cursus_status_t::CURSUS_ERR_TIMEOUT,
        ErrorKind::Closed => cursus_status_t::CURSUS_ERR_CLOSED,
        ErrorKind::InvalidArgument => cursus_status_t::CURSUS_ERR_INVALID_ARGUMENT,
        ErrorKind::Internal | ErrorKind::Protocol => cursus_status_t::CURSUS_ERR_INTERNAL,
        _ => class_status(e.class()),
    }
}

impl ErrorObj {
    fn from_engine(e: &cursus::Error) -> ErrorObj {
        ErrorObj {
            status: status_of(e),
            class: e.class(),
            retryable: e.retryable(),
            code: cstring(e.code()),
            class_name: cstring(e.class().name()),
            message: cstring(e.message()),
            fields: e
                .fields()
                .iter()
                .map(|(k, v)| (cstring(k), cstring(v)))
                .collect(),
        }
    }
}

type FfiResult<T> = Result<T, cursus::Error>;

/// Stores `e` into `*out_error` when `out_error` is non-NULL; returns its status.
fn report(e: cursus::Error, out_error: *mut *mut cursus_error_t) -> cursus_status_t {
    let obj = ErrorObj::from_engine(&e);
    let status = obj.status;
    if !out_error.is_null() {
        let id = REGISTRY.insert(Object::Error(Arc::new(obj)));
        // SAFETY: the caller passed a non-NULL pointer to writable storage for
        // one `cursus_error_t*`, as the header documents for every function.
        unsafe { *out_error = id as *mut cursus_error_t };
    }
    status
}

/// Runs `f` catching panics; maps its error to a status (and `*out_error`).
fn guard<F>(out_error: *mut *mut cursus_error_t, f: F) -> cursus_status_t
where
    F: FnOnce() -> FfiResult<()>,
{
    if !out_error.is_null() {
        // SAFETY: non-NULL out-parameter documented as writable storage.
        unsafe { *out_error = std::ptr::null_mut() };
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => cursus_status_t::CURSUS_OK,
        Ok(Err(e)) => report(e, out_error),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            report(
                cursus::Error::internal(format!("panic inside libcursus: {what}")),
                out_error,
            )
        }
    }
}

/// Runs `f` catching panics, returning `fallback` on panic (for accessors).
fn guard_value<T, F: FnOnce() -> T>(fallback: T, f: F) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

fn invalid(msg: impl Into<String>) -> cursus::Error {
    cursus::Error::invalid_argument(msg)
}

/// Reads a required NUL-terminated UTF-8 string argument.
fn str_arg<'a>(p: *const c_char, name: &str) -> FfiResult<&'a str> {
    if p.is_null() {
        return Err(invalid(format!("argument {name} is NULL")));
    }
    // SAFETY: non-NULL; the caller guarantees a NUL-terminated string that
    // stays valid for the duration of the call.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map_err(|_| invalid(format!("argument {name} is not valid UTF-8")))
}

/// Copies a pointer + length byte argument (NULL allowed when `len == 0`).
fn bytes_arg(p: *const u8, len: usize, name: &str) -> FfiResult<Bytes> {
    if len == 0 {
        return Ok(Bytes::new());
    }
    if p.is_null() {
        return Err(invalid(format!(
            "argument {name} is NULL with length {len}"
        )));
    }
    // SAFETY: non-NULL; the caller guarantees `len` readable bytes at `p`
    // for the duration of the call. The bytes are copied before returning.
    Ok(Bytes::copy_from_slice(unsafe {
        std::slice::from_raw_parts(p, len)
    }))
}

/// Writes `value` to a required out-parameter.
fn out<T>(p: *mut T, value: T, name: &str) -> FfiResult<()> {
    if p.is_null() {
        return Err(invalid(format!("out-parameter {name} is NULL")));
    }
    // SAFETY: non-NULL; the caller guarantees writable storage for one `T`.
    unsafe { p.write(value) };
    Ok(())
}

fn check_out<T>(p: *mut *mut T, name: &str) -> FfiResult<()> {
    if p.is_null() {
        return Err(invalid(format!("out-parameter {name} is NULL")));
    }
    // SAFETY: non-NULL; the caller guarantees writable storage for one pointer.
    unsafe { *p = std::ptr::null_mut() };
    Ok(())
}

fn timeout_arg(ms: i64) -> Option<Duration> {
    (ms >= 0).then(|| Duration::from_millis(ms as u64))
}

fn config_entries(config: *const cursus_config_t) -> FfiResult<Vec<(String, String)>> {
    let cfg = REGISTRY.config(config as usize)?;
    let entries = cfg
        .entries
        .lock()
        .map_err(|_| invalid("config lock poisoned"))?;
    Ok(entries.clone())
}

/// Applies entries to one engine config kind. Keys known only to another
/// kind (validated when they were set) are skipped, so one config object can
/// serve admin, producer and consumer.
fn apply(
    entries: &[(String, String)],
    known: &[&[cursus::config::OptionDoc]],
    mut set: impl FnMut(&str, &str) -> FfiResult<()>,
) -> FfiResult<()> {
    for (k, v) in entries {
        if known.iter().any(|t| t.iter().any(|o| o.name == k)) {
            set(k, v)?;
        }
    }
    Ok(())
}

fn client_config(entries: &[(String, String)]) -> FfiResult<ClientConfig> {
    let mut c = ClientConfig::default();
    apply(entries, &[ClientConfig::options()], |k, v| c.set(k, v))?;
    c.validate()?;
    Ok(c)
}

fn producer_config(entries: &[(String, String)]) -> FfiResult<ProducerConfig> {
    let mut c = ProducerConfig::default();
    let known = [ProducerConfig::options(), ClientConfig::options()];
    apply(entries, &known, |k, v| c.set(k, v))?;
    c.client.validate()?;
    Ok(c)
}

fn consumer_config(entries: &[(String, String)]) -> FfiResult<ConsumerConfig> {
    let mut c = ConsumerConfig::default();
    let known = [ConsumerConfig::options(), ClientConfig::options()];
    apply(entries, &known, |k, v| c.set(k, v))?;
    c.client.validate()?;
    if c.group_id.is_empty() {
        return Err(invalid("option group_id is required for a consumer"));
    }
    Ok(c)
}

// ----------------------------------------------------------------------------
// Version and status
// ----------------------------------------------------------------------------

/// The runtime version of the library, e.g. `"0.1.0"` (static storage; do not free).
///
/// Thread-safety: safe from any thread.
#[no_mangle]
pub extern "C" fn cursus_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// A static name for a status, e.g. `"CURSUS_ERR_TIMEOUT"` (do not free).
///
/// Thread-safety: safe from any thread.
#[no_mangle]
pub extern "C" fn cursus_status_name(status: cursus_status_t) -> *const c_char {
    use cursus_status_t::*;
    let s: &'static str = match status {
        CURSUS_OK => "CURSUS_OK\0",
        CURSUS_ERR_VALIDATION => "CURSUS_ERR_VALIDATION\0",
        CURSUS_ERR_AUTHORIZATION => "CURSUS_ERR_AUTHORIZATION\0",
        CURSUS_ERR_ROUTING => "CURSUS_ERR_ROUTING\0",
        CURSUS_ERR_AVAILABILITY => "CURSUS_ERR_AVAILABILITY\0",
        CURSUS_ERR_CONFLICT => "CURSUS_ERR_CONFLICT\0",
        CURSUS_ERR_FENCING => "CURSUS_ERR_FENCING\0",
        CURSUS_ERR_NOT_FOUND => "CURSUS_ERR_NOT_FOUND\0",
        CURSUS_ERR_INTERNAL => "CURSUS_ERR_INTERNAL\0",
        CURSUS_ERR_TIMEOUT => "CURSUS_ERR_TIMEOUT\0",
        CURSUS_ERR_CLOSED => "CURSUS_ERR_CLOSED\0",
        CURSUS_ERR_INVALID_ARGUMENT => "CURSUS_ERR_INVALID_ARGUMENT\0",
    };
    s.as_ptr().cast()
}

/// Frees a string returned by the library (NULL is ignored).
///
/// Thread-safety: safe from any thread; each string is freed once.
///
/// # Safety
/// `s` must be NULL or a string returned by this library and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cursus_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: the caller passes a pointer obtained from `CString::into_raw`
        // in this library, freed only once.
        drop(unsafe { CString::from_raw(s) });
    }
}

// ----------------------------------------------------------------------------
// Errors
// ----------------------------------------------------------------------------

fn with_error<T>(e: *const cursus_error_t, fallback: T, f: impl FnOnce(&ErrorObj) -> T) -> T {
    catch_unwind(AssertUnwindSafe(|| {
        REGISTRY.error(e as usize).ok().map(|o| f(&o))
    }))
    .ok()
    .flatten()
    .unwrap_or(fallback)
}

/// Frees an error (NULL and already-freed errors are ignored).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_free(error: *mut cursus_error_t) {
    let _ = catch_unwind(|| REGISTRY.remove_error(error as usize));
}

/// The status that corresponds to this error (`CURSUS_ERR_INVALID_ARGUMENT` for an invalid handle).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_status(error: *const cursus_error_t) -> cursus_status_t {
    with_error(error, cursus_status_t::CURSUS_ERR_INVALID_ARGUMENT, |e| {
        e.status
    })
}

/// The machine-readable code, e.g. `"topic_not_found"` (owned by the error; NULL for an invalid handle).
///
/// Thread-safety: safe from any thread while the error is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_code(error: *const cursus_error_t) -> *const c_char {
    with_error(error, std::ptr::null(), |e| e.code.as_ptr())
}

/// The class (`CURSUS_CLASS_INTERNAL` for an invalid handle).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_class(error: *const cursus_error_t) -> cursus_error_class_t {
    with_error(error, cursus_error_class_t::CURSUS_CLASS_INTERNAL, |e| {
        class_enum(e.class)
    })
}

/// The class name, e.g. `"routing"` (owned by the error; NULL for an invalid handle).
///
/// Thread-safety: safe from any thread while the error is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_class_name(error: *const cursus_error_t) -> *const c_char {
    with_error(error, std::ptr::null(), |e| e.class_name.as_ptr())
}

/// Whether the operation may be retried (with backoff). False for an invalid handle.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_retryable(error: *const cursus_error_t) -> bool {
    with_error(error, false, |e| e.retryable)
}

/// The human-readable message (owned by the error; NULL for an invalid handle).
///
/// Thread-safety: safe from any thread while the error is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_message(error: *const cursus_error_t) -> *const c_char {
    with_error(error, std::ptr::null(), |e| e.message.as_ptr())
}

/// Number of structured fields (0 for an invalid handle).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_field_count(error: *const cursus_error_t) -> usize {
    with_error(error, 0, |e| e.fields.len())
}

/// Name of field `index` (sorted by name; NULL when out of range).
///
/// Thread-safety: safe from any thread while the error is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_field_name(
    error: *const cursus_error_t,
    index: usize,
) -> *const c_char {
    with_error(error, std::ptr::null(), |e| {
        e.fields
            .get(index)
            .map_or(std::ptr::null(), |f| f.0.as_ptr())
    })
}

/// Value of field `index` (NULL when out of range).
///
/// Thread-safety: safe from any thread while the error is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_field_value(
    error: *const cursus_error_t,
    index: usize,
) -> *const c_char {
    with_error(error, std::ptr::null(), |e| {
        e.fields
            .get(index)
            .map_or(std::ptr::null(), |f| f.1.as_ptr())
    })
}

/// Value of the field named `name`, or NULL when absent.
///
/// Thread-safety: safe from any thread while the error is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_error_field(
    error: *const cursus_error_t,
    name: *const c_char,
) -> *const c_char {
    with_error(error, std::ptr::null(), |e| match str_arg(name, "name") {
        Ok(n) => e
            .fields
            .iter()
            .find(|(k, _)| k.to_str() == Ok(n))
            .map_or(std::ptr::null(), |f| f.1.as_ptr()),
        Err(_) => std::ptr::null(),
    })
}

// ----------------------------------------------------------------------------
// Config
// ----------------------------------------------------------------------------

/// Creates an empty configuration (all engine defaults). Never NULL.
/// Free with `cursus_config_destroy`; a config may be destroyed as soon as
/// the clients created from it exist.
///
/// Thread-safety: safe from any thread.
#[no_mangle]
pub extern "C" fn cursus_config_new() -> *mut cursus_config_t {
    guard_value(std::ptr::null_mut(), || {
        REGISTRY.insert(Object::Config(Arc::new(ConfigObj {
            entries: Mutex::new(Vec::new()),
        }))) as *mut cursus_config_t
    })
}

/// Sets one option by name. The value is validated immediately by the
/// engine: an unknown name or invalid value returns
/// `CURSUS_ERR_INVALID_ARGUMENT` with a message naming the option (and, for an
/// unknown name, listing the known ones). Admin, producer and consumer
/// options may all be set on one config; each client uses the ones it knows.
///
/// Thread-safety: safe from any thread (a config is internally locked).
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_config_set(
    config: *mut cursus_config_t,
    key: *const c_char,
    value: *const c_char,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let cfg = REGISTRY.config(config as usize)?;
        let key = str_arg(key, "key")?;
        let value = str_arg(value, "value")?;
        // Validate against every config kind; accept if one accepts. When
        // none does, prefer the error of a kind that knows the option.
        let mut errors = Vec::new();
        let attempts: [FfiResult<()>; 3] = [
            ClientConfig::default().set(key, value),
            ProducerConfig::default().set(key, value),
            ConsumerConfig::default().set(key, value),
        ];
        for a in attempts {
            match a {
                Ok(()) => {
                    let mut entries = cfg
                        .entries
                        .lock()
                        .map_err(|_| invalid("config lock poisoned"))?;
                    entries.retain(|(k, _)| k != key);
                    entries.push((key.to_owned(), value.to_owned()));
                    return Ok(());
                }
                Err(e) => errors.push(e),
            }
        }
        let known = |e: &cursus::Error| !e.message().starts_with("unknown ");
        let best = errors.iter().position(known).unwrap_or(2);
        Err(errors.swap_remove(best))
    })
}

/// Destroys a configuration (NULL and already-destroyed handles are ignored).
///
/// Thread-safety: safe from any thread; do not use the handle afterwards
/// (doing so returns `CURSUS_ERR_INVALID_ARGUMENT`).
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_config_destroy(config: *mut cursus_config_t) {
    let _ = catch_unwind(|| REGISTRY.remove(config as usize, registry::Kind::Config));
}

// ----------------------------------------------------------------------------
// Admin
// ----------------------------------------------------------------------------

/// Connects an admin client with `config` (option `bootstrap_servers` etc.).
/// On success `*out_admin` receives the handle; on failure it is set to NULL.
///
/// Thread-safety: safe from any thread. The admin handle itself may be used
/// from several threads at once.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_new(
    config: *const cursus_config_t,
    out_admin: *mut *mut cursus_admin_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_admin, "out_admin")?;
        let entries = config_entries(config)?;
        let admin = Admin::connect(client_config(&entries)?)?;
        let id = REGISTRY.insert(Object::Admin(Arc::new(admin)));
        out(out_admin, id as *mut cursus_admin_t, "out_admin")
    })
}

/// Creates a topic with `partitions` partitions (0: broker default).
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_create_topic(
    admin: *mut cursus_admin_t,
    topic: *const c_char,
    partitions: u32,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let admin = REGISTRY.admin(admin as usize)?;
        let mut t = NewTopic::new(str_arg(topic, "topic")?);
        if partitions > 0 {
            t = t.partitions(partitions);
        }
        admin.create_topic(&t)?;
        Ok(())
    })
}

/// Deletes a topic. With `if_exists`, a missing topic is not an error.
/// `out_deleted` (may be NULL) receives the broker's answer: true when the
/// topic was deleted, false when `if_exists` found no topic.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_delete_topic(
    admin: *mut cursus_admin_t,
    topic: *const c_char,
    if_exists: bool,
    out_deleted: *mut bool,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        if !out_deleted.is_null() {
            out(out_deleted, false, "out_deleted")?;
        }
        let admin = REGISTRY.admin(admin as usize)?;
        let outcome = admin.delete_topic(str_arg(topic, "topic")?, if_exists)?;
        if !out_deleted.is_null() {
            out(out_deleted, outcome.deleted, "out_deleted")?;
        }
        Ok(())
    })
}

/// Lists topic names as one newline-separated string in `*out_names`
/// (empty when there are none). Free it with `cursus_string_free`.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_list_topics(
    admin: *mut cursus_admin_t,
    out_names: *mut *mut c_char,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_names, "out_names")?;
        let admin = REGISTRY.admin(admin as usize)?;
        let names = admin.list_topics()?.join("\n");
        out(out_names, cstring(&names).into_raw(), "out_names")
    })
}

/// Parses a boolean option value for [`cursus_admin_create_topic_opts`].
fn bool_opt(key: &str, v: &str) -> FfiResult<bool> {
    match v {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(invalid(format!(
            "option {key}: expected true or false, got {v:?}"
        ))),
    }
}

/// Parses an unsigned integer option value for [`cursus_admin_create_topic_opts`].
fn num_opt<T: std::str::FromStr>(key: &str, v: &str) -> FfiResult<T> {
    v.parse().map_err(|_| {
        invalid(format!(
            "option {key}: expected an unsigned integer, got {v:?}"
        ))
    })
}

/// Builds a [`NewTopic`] from NewTopic field names and string values.
fn new_topic(name: &str, options: &[(&str, &str)]) -> FfiResult<NewTopic> {
    let mut t = NewTopic::new(name);
    let list = |v: &str| -> Vec<String> {
        v.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    for &(k, v) in options {
        match k {
            "partitions" => t.partitions = Some(num_opt(k, v)?),
            "idempotent" => t.idempotent = Some(bool_opt(k, v)?),
            "event_sourcing" => t.event_sourcing = Some(bool_opt(k, v)?),
            "replication_factor" => t.replication_factor = Some(num_opt(k, v)?),
            "min_in_sync_replicas" => t.min_in_sync_replicas = Some(num_opt(k, v)?),
            "cleanup_policy" => t.cleanup_policy = Some(v.to_owned()),
            "retention_hours" => t.retention_hours = Some(num_opt(k, v)?),
            "retention_bytes" => t.retention_bytes = Some(num_opt(k, v)?),
            "partitioner" => t.partitioner = Some(v.to_owned()),
            "auth_policy" => t.auth_policy = Some(v.to_owned()),
            "read_acl" => t.read_acl = Some(list(v)),
            "write_acl" => t.write_acl = Some(list(v)),
            _ => {
                return Err(invalid(format!(
                    "unknown topic option {k:?} (known: partitions, idempotent, event_sourcing, \
                     replication_factor, min_in_sync_replicas, cleanup_policy, retention_hours, \
                     retention_bytes, partitioner, auth_policy, read_acl, write_acl)"
                )))
            }
        }
    }
    Ok(t)
}

/// Reads an array of `count` NUL-terminated strings (NULL allowed when `count == 0`).
fn str_array<'a>(p: *const *const c_char, count: usize, name: &str) -> FfiResult<Vec<&'a str>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(invalid(format!("argument {name} is NULL")));
    }
    (0..count)
        .map(|i| {
            // SAFETY: non-NULL array of `count` pointers, per the contract.
            let s = unsafe { *p.add(i) };
            str_arg(s, name)
        })
        .collect()
}

/// Creates a topic with every NewTopic field settable: `option_count` pairs
/// `keys[i]` = `values[i]`. Keys: `partitions`, `replication_factor`,
/// `min_in_sync_replicas`, `retention_hours`, `retention_bytes` (unsigned
/// integers); `idempotent`, `event_sourcing` (`true`/`false`);
/// `cleanup_policy`, `partitioner`, `auth_policy` (strings); `read_acl`,
/// `write_acl` (comma-separated principals, empty for an empty list).
/// Unset fields use the broker default. An unknown key or unparsable value
/// returns `CURSUS_ERR_INVALID_ARGUMENT`. `out_metadata` (may be NULL)
/// receives the topic definition the broker replied with.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_create_topic_opts(
    admin: *mut cursus_admin_t,
    topic: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    option_count: usize,
    out_metadata: *mut cursus_topic_metadata_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let admin = REGISTRY.admin(admin as usize)?;
        let keys = str_array(keys, option_count, "keys")?;
        let values = str_array(values, option_count, "values")?;
        let pairs: Vec<(&str, &str)> = keys.into_iter().zip(values).collect();
        let t = admin.create_topic(&new_topic(str_arg(topic, "topic")?, &pairs)?)?;
        if !out_metadata.is_null() {
            out(out_metadata, topic_metadata(&t), "out_metadata")?;
        }
        Ok(())
    })
}

/// Replaces the topic's `min_in_sync_replicas` override; a negative
/// `min_in_sync_replicas` restores the broker default. `out_metadata` (may
/// be NULL) receives the topic definition the broker replied with.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_alter_topic_config(
    admin: *mut cursus_admin_t,
    topic: *const c_char,
    min_in_sync_replicas: i64,
    out_metadata: *mut cursus_topic_metadata_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let admin = REGISTRY.admin(admin as usize)?;
        let isr = if min_in_sync_replicas < 0 {
            None
        } else {
            Some(
                u32::try_from(min_in_sync_replicas)
                    .map_err(|_| invalid("argument min_in_sync_replicas is out of range"))?,
            )
        };
        let t = admin.alter_topic_config(str_arg(topic, "topic")?, isr)?;
        if !out_metadata.is_null() {
            out(out_metadata, topic_metadata(&t), "out_metadata")?;
        }
        Ok(())
    })
}

/// Truncates a topic (drops all its records) if its current revision is
/// `expected_revision` (else `CURSUS_ERR_CONFLICT`). On success the new
/// revision and lifecycle epoch are written to `*out_revision` and
/// `*out_lifecycle_epoch` (each may be NULL).
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_truncate_topic(
    admin: *mut cursus_admin_t,
    topic: *const c_char,
    expected_revision: u64,
    out_revision: *mut u64,
    out_lifecycle_epoch: *mut u64,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let admin = REGISTRY.admin(admin as usize)?;
        let t = admin.truncate_topic(str_arg(topic, "topic")?, expected_revision)?;
        if !out_revision.is_null() {
            out(out_revision, t.revision, "out_revision")?;
        }
        if !out_lifecycle_epoch.is_null() {
            out(
                out_lifecycle_epoch,
                t.lifecycle_epoch,
                "out_lifecycle_epoch",
            )?;
        }
        Ok(())
    })
}

fn json_string(encoded: serde_json::Result<String>) -> FfiResult<*mut c_char> {
    let s = encoded.map_err(|e| cursus::Error::internal(format!("cannot encode JSON: {e}")))?;
    Ok(cstring(&s).into_raw())
}

/// Describes a topic: `*out_json` receives the broker's DESCRIBE document as
/// JSON (`{"topic":..., "definition":{...}, "partitions":[{"id", "leader",
/// "replicas", "isr", "leo", "hwm"}...]}`). Free it with `cursus_string_free`.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_describe_topic(
    admin: *mut cursus_admin_t,
    topic: *const c_char,
    out_json: *mut *mut c_char,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_json, "out_json")?;
        let admin = REGISTRY.admin(admin as usize)?;
        let d = admin.describe_topic(str_arg(topic, "topic")?)?;
        out(
            out_json,
            json_string(serde_json::to_string(&d))?,
            "out_json",
        )
    })
}

/// Status of a consumer group: `*out_json` receives the broker's
/// GROUP_STATUS document as JSON (`group_name`, `topic_name`, `state`,
/// `generation`, `member_count`, `partition_count`, `members`). Free it with
/// `cursus_string_free`.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_group_status(
    admin: *mut cursus_admin_t,
    group: *const c_char,
    out_json: *mut *mut c_char,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_json, "out_json")?;
        let admin = REGISTRY.admin(admin as usize)?;
        let g = admin.group_status(str_arg(group, "group")?)?;
        out(
            out_json,
            json_string(serde_json::to_string(&g))?,
            "out_json",
        )
    })
}

/// A topic definition, from the broker's METADATA reply or the reply of
/// `cursus_admin_create_topic_opts` or `cursus_admin_alter_topic_config`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cursus_topic_metadata_t {
    /// Number of partitions.
    pub partitions: u32,
    /// Replication factor.
    pub replication_factor: u32,
    /// Topic revision (pass it to `cursus_admin_truncate_topic`).
    pub revision: u64,
    /// Lifecycle epoch.
    pub lifecycle_epoch: u64,
    /// Whether the topic is idempotent.
    pub idempotent: bool,
    /// Whether the topic is event-sourced.
    pub event_sourcing: bool,
    /// The min_in_sync_replicas override, or -1 when the broker default
    /// applies or the reply does not report it (METADATA does not; the
    /// replies of `cursus_admin_create_topic_opts` and
    /// `cursus_admin_alter_topic_config` do).
    pub min_in_sync_replicas: i64,
}

fn topic_metadata(t: &cursus::protocol::admin::TopicInfo) -> cursus_topic_metadata_t {
    cursus_topic_metadata_t {
        partitions: t.partitions,
        replication_factor: t.replication_factor,
        revision: t.revision,
        lifecycle_epoch: t.lifecycle_epoch,
        idempotent: t.idempotent,
        event_sourcing: t.event_sourcing,
        min_in_sync_replicas: t.min_in_sync_replicas.map_or(-1, i64::from),
    }
}

/// Topic metadata: fills `*out_metadata` and, when `out_leaders` is not
/// NULL, stores the partition leaders (one address per partition, in
/// partition order, newline-separated) in `*out_leaders`; free it with
/// `cursus_string_free`.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_metadata(
    admin: *mut cursus_admin_t,
    topic: *const c_char,
    out_metadata: *mut cursus_topic_metadata_t,
    out_leaders: *mut *mut c_char,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        if out_metadata.is_null() {
            return Err(invalid("out-parameter out_metadata is NULL"));
        }
        if !out_leaders.is_null() {
            check_out(out_leaders, "out_leaders")?;
        }
        let admin = REGISTRY.admin(admin as usize)?;
        let m = admin.metadata(str_arg(topic, "topic")?)?;
        out(out_metadata, topic_metadata(&m.topic), "out_metadata")?;
        if !out_leaders.is_null() {
            let leaders = cstring(&m.leaders.join("\n")).into_raw();
            out(out_leaders, leaders, "out_leaders")?;
        }
        Ok(())
    })
}

/// Offsets of one partition, from `cursus_admin_list_offsets`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cursus_partition_offsets_t {
    /// Partition id.
    pub partition: u32,
    /// Earliest available offset.
    pub earliest: u64,
    /// Latest offset.
    pub latest: u64,
    /// Log end offset.
    pub leo: u64,
    /// High-water mark.
    pub hwm: u64,
}

/// Lists the offsets of one partition (`partition` >= 0) or of every
/// partition (`partition` < 0). `*out_offsets` receives an array of
/// `*out_count` entries; free it with `cursus_partition_offsets_free`.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_list_offsets(
    admin: *mut cursus_admin_t,
    topic: *const c_char,
    partition: i64,
    out_offsets: *mut *mut cursus_partition_offsets_t,
    out_count: *mut usize,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_offsets, "out_offsets")?;
        out(out_count, 0, "out_count")?;
        let admin = REGISTRY.admin(admin as usize)?;
        let p = if partition < 0 {
            None
        } else {
            Some(u32::try_from(partition).map_err(|_| invalid("partition is out of range"))?)
        };
        let list: Box<[cursus_partition_offsets_t]> = admin
            .list_offsets(str_arg(topic, "topic")?, p)?
            .iter()
            .map(|o| cursus_partition_offsets_t {
                partition: o.partition,
                earliest: o.earliest,
                latest: o.latest,
                leo: o.leo,
                hwm: o.hwm,
            })
            .collect();
        let n = list.len();
        let ptr = Box::into_raw(list) as *mut cursus_partition_offsets_t;
        out(out_count, n, "out_count")?;
        out(out_offsets, ptr, "out_offsets")
    })
}

/// Frees an array returned by `cursus_admin_list_offsets` (NULL is ignored).
///
/// Thread-safety: safe from any thread; each array is freed once.
///
/// # Safety
/// `offsets` must be NULL or an array returned by `cursus_admin_list_offsets`
/// with its `count`, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cursus_partition_offsets_free(
    offsets: *mut cursus_partition_offsets_t,
    count: usize,
) {
    if !offsets.is_null() {
        // SAFETY: the pointer and count come from `Box::<[_]>::into_raw` in
        // `cursus_admin_list_offsets`, and the array is freed only once.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(offsets, count)) });
    }
}

/// Lists consumer group names as one newline-separated string in
/// `*out_names` (empty when there are none). Free it with `cursus_string_free`.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_list_groups(
    admin: *mut cursus_admin_t,
    out_names: *mut *mut c_char,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_names, "out_names")?;
        let admin = REGISTRY.admin(admin as usize)?;
        let names = admin.list_groups()?.join("\n");
        out(out_names, cstring(&names).into_raw(), "out_names")
    })
}

/// The broker's HELP text (one command per line) in `*out_text`. Free it
/// with `cursus_string_free`.
///
/// Thread-safety: safe from any thread, concurrently on one handle.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_help(
    admin: *mut cursus_admin_t,
    out_text: *mut *mut c_char,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_text, "out_text")?;
        let admin = REGISTRY.admin(admin as usize)?;
        let text = admin.help()?.join("\n");
        out(out_text, cstring(&text).into_raw(), "out_text")
    })
}

/// Closes the admin client; later calls on it return `CURSUS_ERR_CLOSED`.
/// Closing twice is fine. The handle must still be destroyed.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_close(
    admin: *mut cursus_admin_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || REGISTRY.admin(admin as usize)?.close())
}

/// Destroys an admin handle (NULL and already-destroyed handles are ignored).
///
/// Thread-safety: safe from any thread; calls running concurrently on the
/// handle finish normally, later ones return `CURSUS_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_admin_destroy(admin: *mut cursus_admin_t) {
    let _ = catch_unwind(|| REGISTRY.remove(admin as usize, registry::Kind::Admin));
}

// ----------------------------------------------------------------------------
// Producer
// ----------------------------------------------------------------------------

/// Creates a producer with `config` (options `bootstrap_servers`, `acks`,
/// `linger_ms`, `enable_idempotence`, ...).
///
/// Thread-safety: safe from any thread. A producer may be used from several
/// threads at once.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_producer_new(
    config: *const cursus_config_t,
    out_producer: *mut *mut cursus_producer_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_producer, "out_producer")?;
        let entries = config_entries(config)?;
        let p = Producer::connect(producer_config(&entries)?)?;
        let id = REGISTRY.insert(Object::Producer(Arc::new(ProducerObj {
            inner: p,
            pending: Arc::new((Mutex::new(0), Condvar::new())),
        })));
        out(out_producer, id as *mut cursus_producer_t, "out_producer")
    })
}

fn make_record(
    topic: *const c_char,
    partition: i32,
    key: *const u8,
    key_len: usize,
    payload: *const u8,
    payload_len: usize,
) -> FfiResult<ProducerRecord> {
    let mut r = ProducerRecord::new(
        str_arg(topic, "topic")?,
        bytes_arg(payload, payload_len, "payload")?,
    );
    if !key.is_null() {
        r = r.key(bytes_arg(key, key_len, "key")?);
    } else if key_len != 0 {
        return Err(invalid("argument key is NULL with non-zero length"));
    }
    if partition >= 0 {
        r = r.partition(partition as u32);
    }
    Ok(r)
}

fn metadata(m: &RecordMetadata) -> cursus_record_metadata_t {
    cursus_record_metadata_t {
        partition: m.partition as i32,
        offset: m.offset.map_or(-1, |o| o as i64),
        timestamp: m.timestamp,
    }
}

/// Sends one record and blocks until it is acknowledged (or fails).
///
/// `partition` < 0 lets the partitioner choose. `key` may be NULL (no key);
/// `key`/`payload` are pointer + length and may contain NUL bytes; they are
/// copied before the call returns. `out_metadata` may be NULL.
///
/// Thread-safety: safe from any thread, concurrently on one producer. Must
/// not be called from a delivery callback.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_producer_send(
    producer: *mut cursus_producer_t,
    topic: *const c_char,
    partition: i32,
    key: *const u8,
    key_len: usize,
    payload: *const u8,
    payload_len: usize,
    out_metadata: *mut cursus_record_metadata_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let p = REGISTRY.producer(producer as usize)?;
        let record = make_record(topic, partition, key, key_len, payload, payload_len)?;
        let m = p.inner.send_and_wait(record)?;
        if !out_metadata.is_null() {
            out(out_metadata, metadata(&m), "out_metadata")?;
        }
        Ok(())
    })
}

/// User data pointer handed back to a C callback on an engine thread.
struct SendPtr(*mut c_void);
// SAFETY: the header requires user_data passed with a callback to be usable
// from any thread; the library never dereferences it, only passes it back.
unsafe impl Send for SendPtr {}

/// Queues one record and returns once it is queued (blocking at most
/// `max_block_ms` for buffer space). `callback` is then called exactly once
/// with the outcome, on an engine thread, with `user_data`. If queueing
/// fails, the error is returned and the callback is never called.
/// `callback` may be NULL (fire and forget; use `cursus_producer_flush`).
///
/// Thread-safety: safe from any thread, concurrently on one producer.
/// `user_data` must be safe to use from the engine thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_producer_send_cb(
    producer: *mut cursus_producer_t,
    topic: *const c_char,
    partition: i32,
    key: *const u8,
    key_len: usize,
    payload: *const u8,
    payload_len: usize,
    callback: cursus_delivery_cb,
    user_data: *mut c_void,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let p = REGISTRY.producer(producer as usize)?;
        let record = make_record(topic, partition, key, key_len, payload, payload_len)?;
        let Some(cb) = callback else {
            // No callback: queue only; flush/close wait for the record.
            drop(p.inner.send(record)?);
            return Ok(());
        };
        let topic_c = cstring(&record.topic);
        let ud = SendPtr(user_data);
        let pending = Arc::clone(&p.pending);
        *pending.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        let done = CallbackDone(Arc::clone(&pending));
        p.inner.send_with_callback(record, move |result| {
            let ud = ud;
            let _done = done;
            let _ = catch_unwind(AssertUnwindSafe(|| {
                let mut err_id = 0usize;
                let rep = match &result {
                    Ok(m) => cursus_delivery_report_t {
                        status: cursus_status_t::CURSUS_OK,
                        error: std::ptr::null(),
                        topic: topic_c.as_ptr(),
                        metadata: metadata(m),
                    },
                    Err(e) => {
                        let obj = ErrorObj::from_engine(e);
                        let status = obj.status;
                        err_id = REGISTRY.insert(Object::Error(Arc::new(obj)));
                        cursus_delivery_report_t {
                            status,
                            error: err_id as *const cursus_error_t,
                            topic: topic_c.as_ptr(),
                            metadata: cursus_record_metadata_t {
                                partition: -1,
                                offset: -1,
                                timestamp: 0,
                            },
                        }
                    }
                };
                // SAFETY: `cb` is a C function pointer supplied by the caller
                // with the documented signature; `rep` outlives the call.
                unsafe { cb(ud.0, &rep) };
                if err_id != 0 {
                    REGISTRY.remove_error(err_id);
                }
            }));
        })
    })
}

/// Decrements a producer's pending-callback count when dropped (after the
/// callback ran, or with the closure if the engine drops it unrun).
struct CallbackDone(Arc<(Mutex<usize>, Condvar)>);

impl Drop for CallbackDone {
    fn drop(&mut self) {
        let (lock, cv) = &*self.0;
        let mut n = lock.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.saturating_sub(1);
        cv.notify_all();
    }
}

/// Sends everything queued and waits for it, at most `timeout_ms`
/// (negative: no limit). When it returns `CURSUS_OK`, every delivery
/// callback of the records sent before the call has returned. Returns
/// `CURSUS_ERR_TIMEOUT` when the deadline passes.
///
/// Thread-safety: safe from any thread; not from a delivery callback.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_producer_flush(
    producer: *mut cursus_producer_t,
    timeout_ms: i64,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let p = REGISTRY.producer(producer as usize)?;
        let timeout = timeout_arg(timeout_ms);
        let deadline = timeout.map(|t| Instant::now() + t);
        p.inner.flush(timeout)?;
        p.wait_callbacks(deadline)
    })
}

/// Flushes within `timeout_ms` (negative: 30 s), then closes the producer.
/// Later sends return `CURSUS_ERR_CLOSED`; closing twice is fine. The handle
/// must still be destroyed.
///
/// Thread-safety: safe from any thread; not from a delivery callback.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_producer_close(
    producer: *mut cursus_producer_t,
    timeout_ms: i64,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let t = timeout_arg(timeout_ms).unwrap_or(Duration::from_secs(30));
        let p = REGISTRY.producer(producer as usize)?;
        let deadline = Instant::now() + t;
        p.inner.close(t)?;
        p.wait_callbacks(Some(deadline))
    })
}

/// Destroys a producer handle (NULL and already-destroyed handles are
/// ignored). Records not yet flushed are abandoned: call
/// `cursus_producer_close` first to deliver them.
///
/// Thread-safety: safe from any thread, including a delivery callback.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_producer_destroy(producer: *mut cursus_producer_t) {
    let _ = catch_unwind(|| REGISTRY.remove(producer as usize, registry::Kind::Producer));
}

// ----------------------------------------------------------------------------
// Consumer
// ----------------------------------------------------------------------------

/// Creates a group consumer with `config` (option `group_id` is required;
/// `auto_offset_reset`, `enable_auto_commit`, ... are optional).
///
/// Thread-safety: safe from any thread. A consumer handle may be shared
/// between threads, but its calls are meant for one thread at a time (they
/// serialise on the engine consumer).
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_new(
    config: *const cursus_config_t,
    out_consumer: *mut *mut cursus_consumer_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_consumer, "out_consumer")?;
        let entries = config_entries(config)?;
        let c = Consumer::connect(consumer_config(&entries)?)?;
        let id = REGISTRY.insert(Object::Consumer(Arc::new(ConsumerObj {
            inner: c,
            buffered: Mutex::new(VecDeque::new()),
            delivered: Mutex::new(BTreeMap::new()),
        })));
        out(out_consumer, id as *mut cursus_consumer_t, "out_consumer")
    })
}

/// Subscribes to `topic_count` topics (an array of NUL-terminated names),
/// replacing any previous subscription.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_subscribe(
    consumer: *mut cursus_consumer_t,
    topics: *const *const c_char,
    topic_count: usize,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let c = REGISTRY.consumer(consumer as usize)?;
        if topics.is_null() && topic_count > 0 {
            return Err(invalid("argument topics is NULL"));
        }
        let mut names = Vec::with_capacity(topic_count);
        for i in 0..topic_count {
            // SAFETY: non-NULL array of `topic_count` pointers, per the contract.
            let p = unsafe { *topics.add(i) };
            names.push(str_arg(p, "topics[i]")?.to_owned());
        }
        c.buffered
            .lock()
            .map_err(|_| invalid("lock poisoned"))?
            .clear();
        c.inner.subscribe(&names)
    })
}

/// Waits at most `timeout_ms` for the next message. On success
/// `*out_message` is a message handle (free with `cursus_message_destroy`),
/// or NULL when no message arrived within the timeout (still `CURSUS_OK`).
///
/// Thread-safety: safe from any thread; one poll at a time per consumer is
/// the intended use.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_poll(
    consumer: *mut cursus_consumer_t,
    timeout_ms: i64,
    out_message: *mut *mut cursus_message_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_message, "out_message")?;
        let c = REGISTRY.consumer(consumer as usize)?;
        let poisoned = || invalid("lock poisoned");
        let mut next = c.buffered.lock().map_err(|_| poisoned())?.pop_front();
        if next.is_none() {
            let t = Duration::from_millis(timeout_ms.max(0) as u64);
            let mut records: VecDeque<ConsumerRecord> = c.inner.poll(t)?.into();
            next = records.pop_front();
            c.buffered.lock().map_err(|_| poisoned())?.extend(records);
        }
        if let Some(record) = next {
            c.delivered
                .lock()
                .map_err(|_| poisoned())?
                .insert((record.topic.clone(), record.partition), record.offset + 1);
            let topic = cstring(&record.topic);
            let id = REGISTRY.insert(Object::Message(Arc::new(MessageObj { record, topic })));
            out(out_message, id as *mut cursus_message_t, "out_message")?;
        }
        Ok(())
    })
}

/// Commits the positions of the messages returned by `cursus_consumer_poll`
/// so far, synchronously.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_commit(
    consumer: *mut cursus_consumer_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let c = REGISTRY.consumer(consumer as usize)?;
        let buffered = !c
            .buffered
            .lock()
            .map_err(|_| invalid("lock poisoned"))?
            .is_empty();
        if !buffered {
            return c.inner.commit_sync();
        }
        // Records fetched by the engine but not yet handed out must not be
        // committed: commit exactly what the application received.
        let offsets = c.delivered_offsets()?;
        if offsets.is_empty() {
            return Ok(());
        }
        c.inner.commit_offsets(&offsets)
    })
}

/// Subscribes to every topic whose name matches the glob `pattern` (e.g.
/// `"orders-*"`), replacing any previous subscription.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_subscribe_pattern(
    consumer: *mut cursus_consumer_t,
    pattern: *const c_char,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let c = REGISTRY.consumer(consumer as usize)?;
        let pattern = str_arg(pattern, "pattern")?;
        c.buffered
            .lock()
            .map_err(|_| invalid("lock poisoned"))?
            .clear();
        c.inner.subscribe_pattern(pattern)
    })
}

/// Commit callback: called exactly once with the outcome of
/// `cursus_consumer_commit_async`, on a library thread. `error` is NULL on
/// success; otherwise it is borrowed (valid only during the callback; do not
/// free it). It must not block for long.
pub type cursus_commit_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        status: cursus_status_t,
        error: *const cursus_error_t,
    ),
>;

/// Calls a C commit callback with an outcome (panics are contained).
fn run_commit_cb(
    cb: unsafe extern "C" fn(*mut c_void, cursus_status_t, *const cursus_error_t),
    ud: SendPtr,
    result: FfiResult<()>,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| match result {
        // SAFETY: `cb` is a C function pointer supplied by the caller with
        // the documented signature.
        Ok(()) => unsafe { cb(ud.0, cursus_status_t::CURSUS_OK, std::ptr::null()) },
        Err(e) => {
            let obj = ErrorObj::from_engine(&e);
            let status = obj.status;
            let id = REGISTRY.insert(Object::Error(Arc::new(obj)));
            // SAFETY: as above; the error handle stays registered during the call.
            unsafe { cb(ud.0, status, id as *const cursus_error_t) };
            REGISTRY.remove_error(id);
        }
    }));
}

/// Commits the positions of the messages returned by `cursus_consumer_poll`
/// so far, in the background. Returns once the commit is started; `callback`
/// (may be NULL) is then called exactly once with the outcome and
/// `user_data`, on a library thread. If starting fails, the error is
/// returned and the callback is never called.
///
/// Thread-safety: safe from any thread. `user_data` must be safe to use from
/// another thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_commit_async(
    consumer: *mut cursus_consumer_t,
    callback: cursus_commit_cb,
    user_data: *mut c_void,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let c = REGISTRY.consumer(consumer as usize)?;
        let ud = SendPtr(user_data);
        let done = move |result: FfiResult<()>| {
            if let Some(cb) = callback {
                run_commit_cb(cb, ud, result);
            }
        };
        let buffered = !c
            .buffered
            .lock()
            .map_err(|_| invalid("lock poisoned"))?
            .is_empty();
        if !buffered {
            return c.inner.commit_async(done);
        }
        // Records fetched but not handed out must not be committed: commit
        // exactly what the application received, on a helper thread.
        let offsets = c.delivered_offsets()?;
        std::thread::Builder::new()
            .name("cursus-commit".into())
            .spawn(move || {
                let r = if offsets.is_empty() {
                    Ok(())
                } else {
                    c.inner.commit_offsets(&offsets)
                };
                done(r)
            })
            .map_err(|e| cursus::Error::internal(format!("cannot start commit thread: {e}")))?;
        Ok(())
    })
}

/// The committed next offset of `topic`/`partition` for the consumer's
/// group: `*out_found` tells whether there is one, and `*out_offset`
/// receives it (-1 when not found).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_committed(
    consumer: *mut cursus_consumer_t,
    topic: *const c_char,
    partition: u32,
    out_offset: *mut i64,
    out_found: *mut bool,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        out(out_offset, -1, "out_offset")?;
        out(out_found, false, "out_found")?;
        let c = REGISTRY.consumer(consumer as usize)?;
        let tp = TopicPartition {
            topic: str_arg(topic, "topic")?.to_owned(),
            partition,
        };
        if let Some(o) = c.inner.committed(&tp)? {
            out(out_offset, o as i64, "out_offset")?;
            out(out_found, true, "out_found")?;
        }
        Ok(())
    })
}

/// Commits explicit next offsets (the offset after the last record
/// processed), synchronously: `count` entries `topics[i]`/`partitions[i]` =
/// `offsets[i]`, committed in order. The consumer must have joined its group
/// (poll at least once after subscribing). On failure the entries before the
/// failing one stay committed. `count` may be 0 (the arrays may then be NULL).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
/// `topics`, `partitions` and `offsets` each hold `count` entries.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_commit_offsets(
    consumer: *mut cursus_consumer_t,
    topics: *const *const c_char,
    partitions: *const u32,
    offsets: *const u64,
    count: usize,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let c = REGISTRY.consumer(consumer as usize)?;
        let names = str_array(topics, count, "topics")?;
        if count > 0 && partitions.is_null() {
            return Err(invalid("argument partitions is NULL"));
        }
        if count > 0 && offsets.is_null() {
            return Err(invalid("argument offsets is NULL"));
        }
        let list: Vec<(TopicPartition, u64)> = names
            .into_iter()
            .enumerate()
            .map(|(i, topic)| {
                // SAFETY: non-NULL arrays of `count` entries, per the contract.
                let (partition, offset) = unsafe { (*partitions.add(i), *offsets.add(i)) };
                (
                    TopicPartition {
                        topic: topic.to_owned(),
                        partition,
                    },
                    offset,
                )
            })
            .collect();
        c.inner.commit_offsets(&list)
    })
}

/// One assigned partition, from `cursus_consumer_assignment`.
#[repr(C)]
#[derive(Debug)]
pub struct cursus_topic_partition_t {
    /// Topic name (NUL-terminated; owned by the array).
    pub topic: *mut c_char,
    /// Partition id.
    pub partition: u32,
}

/// The partitions currently assigned to the consumer: `*out_partitions`
/// receives an array of `*out_count` entries (NULL when empty); free it with
/// `cursus_topic_partitions_free`.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_assignment(
    consumer: *mut cursus_consumer_t,
    out_partitions: *mut *mut cursus_topic_partition_t,
    out_count: *mut usize,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        check_out(out_partitions, "out_partitions")?;
        out(out_count, 0, "out_count")?;
        let c = REGISTRY.consumer(consumer as usize)?;
        let list: Box<[cursus_topic_partition_t]> = c
            .inner
            .assignment()?
            .iter()
            .map(|tp| cursus_topic_partition_t {
                topic: cstring(&tp.topic).into_raw(),
                partition: tp.partition,
            })
            .collect();
        let n = list.len();
        let ptr = if n == 0 {
            std::ptr::null_mut()
        } else {
            Box::into_raw(list) as *mut cursus_topic_partition_t
        };
        out(out_count, n, "out_count")?;
        out(out_partitions, ptr, "out_partitions")
    })
}

/// Frees an array returned by `cursus_consumer_assignment` (NULL is ignored).
///
/// Thread-safety: safe from any thread; each array is freed once.
///
/// # Safety
/// `partitions` must be NULL or an array returned by
/// `cursus_consumer_assignment` with its `count`, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cursus_topic_partitions_free(
    partitions: *mut cursus_topic_partition_t,
    count: usize,
) {
    if partitions.is_null() {
        return;
    }
    // SAFETY: the pointer and count come from `Box::<[_]>::into_raw` in
    // `cursus_consumer_assignment`, and the array is freed only once.
    let list = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(partitions, count)) };
    for tp in list.iter() {
        // SAFETY: each topic was produced by `CString::into_raw` and is
        // freed once, with its array.
        unsafe { cursus_string_free(tp.topic) };
    }
}

/// Leaves the group and closes the consumer (idempotent). Later calls return
/// `CURSUS_ERR_CLOSED`. The handle must still be destroyed.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_close(
    consumer: *mut cursus_consumer_t,
    out_error: *mut *mut cursus_error_t,
) -> cursus_status_t {
    guard(out_error, || {
        let c = REGISTRY.consumer(consumer as usize)?;
        // Records fetched but not handed out are dropped: after close every
        // call (including commits) fails with CURSUS_ERR_CLOSED.
        c.buffered
            .lock()
            .map_err(|_| invalid("lock poisoned"))?
            .clear();
        c.inner.close()
    })
}

/// Destroys a consumer handle (NULL and already-destroyed handles are
/// ignored). Call `cursus_consumer_close` first to leave the group cleanly.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_consumer_destroy(consumer: *mut cursus_consumer_t) {
    let _ = catch_unwind(|| REGISTRY.remove(consumer as usize, registry::Kind::Consumer));
}

// ----------------------------------------------------------------------------
// Messages
// ----------------------------------------------------------------------------

fn with_message<T>(m: *const cursus_message_t, fallback: T, f: impl FnOnce(&MessageObj) -> T) -> T {
    catch_unwind(AssertUnwindSafe(|| {
        REGISTRY.message(m as usize).ok().map(|o| f(&o))
    }))
    .ok()
    .flatten()
    .unwrap_or(fallback)
}

/// Topic of the message (owned by the message; NULL for an invalid handle).
///
/// Thread-safety: safe from any thread while the message is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_message_topic(message: *const cursus_message_t) -> *const c_char {
    with_message(message, std::ptr::null(), |m| m.topic.as_ptr())
}

/// Partition of the message (-1 for an invalid handle).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_message_partition(message: *const cursus_message_t) -> i32 {
    with_message(message, -1, |m| m.record.partition as i32)
}

/// Offset of the message (-1 for an invalid handle).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_message_offset(message: *const cursus_message_t) -> i64 {
    with_message(message, -1, |m| m.record.offset as i64)
}

/// Timestamp in milliseconds since the epoch (0 when unknown or for an invalid handle).
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_message_timestamp(message: *const cursus_message_t) -> i64 {
    with_message(message, 0, |m| m.record.timestamp)
}

/// The key bytes (owned by the message) and their length in `*out_len`
/// (`out_len` may be NULL). An empty key has length 0. NULL for an invalid handle.
///
/// Thread-safety: safe from any thread while the message is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_message_key(
    message: *const cursus_message_t,
    out_len: *mut usize,
) -> *const u8 {
    let (p, n) = with_message(message, (std::ptr::null(), 0), |m| {
        (m.record.key.as_ptr(), m.record.key.len())
    });
    if !out_len.is_null() {
        let _ = out(out_len, n, "out_len");
    }
    p
}

/// The payload bytes (owned by the message; binary, may contain NULs) and
/// their length in `*out_len` (`out_len` may be NULL). NULL for an invalid handle.
///
/// Thread-safety: safe from any thread while the message is alive.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_message_payload(
    message: *const cursus_message_t,
    out_len: *mut usize,
) -> *const u8 {
    let (p, n) = with_message(message, (std::ptr::null(), 0), |m| {
        (m.record.payload.as_ptr(), m.record.payload.len())
    });
    if !out_len.is_null() {
        let _ = out(out_len, n, "out_len");
    }
    p
}

/// Destroys a message (NULL and already-destroyed handles are ignored).
/// Pointers returned by its accessors become invalid.
///
/// Thread-safety: safe from any thread.
///
/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters point to writable storage.
#[no_mangle]
pub unsafe extern "C" fn cursus_message_destroy(message: *mut cursus_message_t) {
    let _ = catch_unwind(|| REGISTRY.remove(message as usize, registry::Kind::Message));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take_error(e: *mut cursus_error_t) -> (cursus_status_t, String, String) {
        // SAFETY: `e` is an error handle returned by this library.
        unsafe {
            let status = cursus_error_status(e);
            let code = CStr::from_ptr(cursus_error_code(e))
                .to_string_lossy()
                .into_owned();
            let msg = CStr::from_ptr(cursus_error_message(e))
                .to_string_lossy()
                .into_owned();
            cursus_error_free(e);
            (status, code, msg)
        }
    }

    #[test]
    fn panics_become_internal_errors() {
        let mut err = std::ptr::null_mut();
        let s = guard(&mut err, || panic!("boom"));
        assert_eq!(s, cursus_status_t::CURSUS_ERR_INTERNAL);
        let (status, code, msg) = take_error(err);
        assert_eq!(status, cursus_status_t::CURSUS_ERR_INTERNAL);
        assert_eq!(code, "internal_error");
        assert!(msg.contains("boom"), "{msg}");
    }

    #[test]
    fn destroyed_and_wrong_kind_handles_are_errors() {
        let cfg = cursus_config_new();
        let key = CString::new("acks").unwrap();
        let val = CString::new("1").unwrap();
        let mut err = std::ptr::null_mut();
        // SAFETY: valid handle, NUL-terminated strings, writable out-parameter.
        unsafe {
            assert_eq!(
                cursus_config_set(cfg, key.as_ptr(), val.as_ptr(), &mut err),
                cursus_status_t::CURSUS_OK
            );
            assert!(err.is_null());
            // A config is not a producer.
            let s = cursus_producer_flush(cfg.cast(), 0, &mut err);
            assert_eq!(s, cursus_status_t::CURSUS_ERR_INVALID_ARGUMENT);
            assert!(take_error(err).2.contains("not a producer"));
            cursus_config_destroy(cfg);
            cursus_config_destroy(cfg);
            let s = cursus_config_set(cfg, key.as_ptr(), val.as_ptr(), &mut err);
            assert_eq!(s, cursus_status_t::CURSUS_ERR_INVALID_ARGUMENT);
            assert_eq!(take_error(err).1, "invalid_handle");
        }
    }

    #[test]
    fn a_handle_in_use_survives_a_concurrent_destroy() {
        let id = REGISTRY.insert(Object::Config(Arc::new(ConfigObj {
            entries: Mutex::new(vec![("acks".into(), "1".into())]),
        })));
        let held = REGISTRY.config(id).expect("live");
        REGISTRY.remove(id, registry::Kind::Config);
        assert!(REGISTRY.config(id).is_err());
        assert_eq!(held.entries.lock().unwrap().len(), 1);
    }

    #[test]
    fn topic_options_map_to_new_topic_fields() {
        let t = new_topic(
            "t",
            &[
                ("partitions", "3"),
                ("idempotent", "true"),
                ("event_sourcing", "0"),
                ("replication_factor", "1"),
                ("min_in_sync_replicas", "1"),
                ("cleanup_policy", "compact"),
                ("retention_hours", "24"),
                ("retention_bytes", "1024"),
                ("partitioner", "murmur2"),
                ("auth_policy", "acl"),
                ("read_acl", "alice, bob"),
                ("write_acl", ""),
            ],
        )
        .unwrap();
        assert_eq!(t.partitions, Some(3));
        assert_eq!((t.idempotent, t.event_sourcing), (Some(true), Some(false)));
        assert_eq!(t.replication_factor, Some(1));
        assert_eq!(t.min_in_sync_replicas, Some(1));
        assert_eq!(t.cleanup_policy.as_deref(), Some("compact"));
        assert_eq!(
            (t.retention_hours, t.retention_bytes),
            (Some(24), Some(1024))
        );
        assert_eq!(t.partitioner.as_deref(), Some("murmur2"));
        assert_eq!(t.auth_policy.as_deref(), Some("acl"));
        assert_eq!(t.read_acl, Some(vec!["alice".to_owned(), "bob".to_owned()]));
        assert_eq!(t.write_acl, Some(vec![]));
        assert!(new_topic("t", &[("partitions", "-1")]).is_err());
        assert!(new_topic("t", &[("idempotent", "yes")]).is_err());
        let e = new_topic("t", &[("nope", "1")]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn version_macros_match_the_crate() {
        assert_eq!(
            format!("{CURSUS_VERSION_MAJOR}.{CURSUS_VERSION_MINOR}.{CURSUS_VERSION_PATCH}"),
            env!("CARGO_PKG_VERSION")
        );
    }
}
