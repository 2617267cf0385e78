//! Reading C arguments and writing out-parameters.
//!
//! Every pointer a C caller passes is checked for NULL before use; what the
//! caller promises (and the header documents) is that a non-NULL pointer
//! points to what its type says, valid for the duration of the call.

use cursus_bridge::error::invalid;
use cursus_bridge::registry::{self, Handle, Side};
use cursus_bridge::Result;
use std::ffi::{c_char, CStr, CString};
use std::sync::Arc;

/// The object behind a handle argument.
pub(crate) fn handle<T: Handle>(id: u64) -> Result<Arc<T>> {
    registry::get(id)
}

/// The object behind a handle argument, with its side slot (accessors).
pub(crate) fn handle_with_side<T: Handle>(id: u64) -> Result<(Arc<T>, Arc<Side>)> {
    registry::get_with_side(id)
}

/// A required NUL-terminated UTF-8 string.
pub(crate) fn str_arg<'a>(p: *const c_char, name: &str) -> Result<&'a str> {
    opt_str_arg(p, name)?.ok_or_else(|| invalid(format!("argument {name} is NULL")))
}

/// An optional NUL-terminated UTF-8 string (NULL: none).
pub(crate) fn opt_str_arg<'a>(p: *const c_char, name: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL; the caller guarantees a NUL-terminated string that
    // stays valid for the duration of the call.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map(Some)
        .map_err(|_| invalid(format!("argument {name} is not valid UTF-8")))
}

/// A required byte buffer (NULL allowed when `len == 0`).
pub(crate) fn bytes_arg<'a>(p: *const u8, len: usize, name: &str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    opt_bytes_arg(p, len, name)?
        .ok_or_else(|| invalid(format!("argument {name} is NULL with length {len}")))
}

/// An optional byte buffer: NULL means none (then `len` must be 0).
pub(crate) fn opt_bytes_arg<'a>(p: *const u8, len: usize, name: &str) -> Result<Option<&'a [u8]>> {
    if p.is_null() {
        if len != 0 {
            return Err(invalid(format!(
                "argument {name} is NULL with length {len}"
            )));
        }
        return Ok(None);
    }
    // SAFETY: non-NULL; the caller guarantees `len` readable bytes at `p`
    // for the duration of the call (the bridge copies what it keeps).
    Ok(Some(unsafe { std::slice::from_raw_parts(p, len) }))
}

/// An array of `count` strings (NULL allowed when `count == 0`).
pub(crate) fn strings_arg(
    p: *const *const c_char,
    count: usize,
    name: &str,
) -> Result<Vec<String>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(invalid(format!(
            "argument {name} is NULL with {count} entries"
        )));
    }
    (0..count)
        .map(|i| {
            // SAFETY: non-NULL array of `count` pointers, per the contract.
            let s = unsafe { *p.add(i) };
            str_arg(s, &format!("{name}[{i}]")).map(str::to_owned)
        })
        .collect()
}

/// `count` name/value pairs from two parallel arrays.
pub(crate) fn pairs_arg(
    keys: *const *const c_char,
    values: *const *const c_char,
    count: usize,
    name: &str,
) -> Result<Vec<(String, String)>> {
    let keys = strings_arg(keys, count, &format!("{name}_keys"))?;
    let values = strings_arg(values, count, &format!("{name}_values"))?;
    Ok(keys.into_iter().zip(values).collect())
}

/// Writes `value` to an out-parameter, unless it is NULL.
pub(crate) fn put<T>(p: *mut T, value: T) {
    if !p.is_null() {
        // SAFETY: non-NULL; the caller guarantees writable storage for a `T`.
        unsafe { p.write(value) };
    }
}

/// Sets a pointer out-parameter to NULL, unless it is NULL itself.
pub(crate) fn clear<T>(p: *mut *mut T) {
    put(p, std::ptr::null_mut());
}

/// Registers a result as a new handle and writes it (NULL for none). With
/// a NULL out-parameter the result is dropped instead.
pub(crate) fn put_handle<H: Handle, T>(p: *mut *mut T, value: Option<H>) {
    if p.is_null() {
        return;
    }
    let id = value.map_or(0, registry::insert);
    put(p, id as usize as *mut T);
}

/// Writes a library-allocated copy of `value` (free with
/// `cursus_string_free`).
#[allow(dead_code)] // for calls that return a String (none yet)
pub(crate) fn put_string(p: *mut *mut c_char, value: &str) {
    if !p.is_null() {
        put(p, cstring(value).into_raw());
    }
}

/// Writes a library-allocated buffer and its length (free with
/// `cursus_buffer_free`).
pub(crate) fn put_buffer(p: *mut *mut u8, len: *mut usize, value: Vec<u8>) {
    if p.is_null() {
        return;
    }
    let boxed = value.into_boxed_slice();
    put(len, boxed.len());
    put(p, Box::into_raw(boxed) as *mut u8);
}

/// A C string of `s` (an interior NUL becomes U+FFFD).
pub(crate) fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}
