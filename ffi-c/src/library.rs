//! Library-level functions: version, status names, freeing what the
//! library allocated for the caller.

use crate::types::cursus_status_t;
use std::ffi::{c_char, CString};

/// The runtime version of the library, e.g. `"0.1.0"` (static storage; do
/// not free). Compare it with `CURSUS_VERSION_STRING` to detect a header
/// and library of different versions.
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

/// Frees a string the library allocated for the caller (NULL is ignored).
///
/// Thread-safety: safe from any thread; each string is freed once.
///
/// # Safety
/// `s` must be NULL or a string returned by this library for the caller to
/// free, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cursus_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: the caller passes a pointer obtained from
        // `CString::into_raw` in this library, freed only once.
        drop(unsafe { CString::from_raw(s) });
    }
}

/// Frees a buffer the library allocated for the caller (e.g. the records
/// of `cursus_consumer_poll_batch`) with its length (NULL is ignored).
///
/// Thread-safety: safe from any thread; each buffer is freed once.
///
/// # Safety
/// `buffer` must be NULL or a buffer returned by this library with its
/// length, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cursus_buffer_free(buffer: *mut u8, len: usize) {
    if !buffer.is_null() {
        // SAFETY: the pointer and length come from `Box::<[u8]>::into_raw`
        // in this library, and the buffer is freed only once.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(buffer, len)) });
    }
}
