//! The boundary every C entry point goes through: panics are caught (they
//! never unwind into C), and failures become a status plus, when the caller
//! asked for it, an error handle in `*out_error`.

use crate::cursus_error_t;
use crate::types::cursus_status_t;
use cursus_bridge::api::{Error, Status};
use cursus_bridge::error::from_panic;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Registers `e` as an error handle (what `out_error` and callbacks get).
pub(crate) fn error_handle(e: Error) -> *mut cursus_error_t {
    cursus_bridge::registry::insert(e) as usize as *mut cursus_error_t
}

/// Runs the body of a call: `CURSUS_OK`, or the error's status with the
/// error stored in `*out_error` (when not NULL, which is set to NULL first).
pub(crate) fn call(
    out_error: *mut *mut cursus_error_t,
    body: impl FnOnce() -> cursus_bridge::Result<()>,
) -> cursus_status_t {
    crate::args::clear(out_error);
    let error = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return cursus_status_t::CURSUS_OK,
        Ok(Err(e)) => e,
        Err(panic) => from_panic(&*panic),
    };
    let status = cursus_status_t::from(Status::of(&error));
    if !out_error.is_null() {
        crate::args::put(out_error, error_handle(error));
    }
    status
}

/// Runs the body of an accessor: its value, or `fallback` when it fails
/// (an invalid handle) or panics.
pub(crate) fn access<T>(fallback: T, body: impl FnOnce() -> cursus_bridge::Result<T>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        _ => fallback,
    }
}

/// Runs a body that reports nothing (destroy functions).
pub(crate) fn quiet<T>(body: impl FnOnce() -> T) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn text(e: *mut cursus_error_t) -> String {
        // SAFETY: `e` is an error handle from this library; the text is
        // lent by it and copied before it is destroyed.
        unsafe {
            let t = CStr::from_ptr(crate::cursus_error_text(e))
                .to_string_lossy()
                .into_owned();
            crate::cursus_error_destroy(e);
            t
        }
    }

    #[test]
    fn panics_become_internal_errors() {
        let mut err = std::ptr::null_mut();
        let s = call(&mut err, || panic!("boom"));
        assert_eq!(s, cursus_status_t::CURSUS_ERR_INTERNAL);
        assert!(text(err).contains("boom"));
        assert_eq!(
            access(-1, || -> cursus_bridge::Result<i32> { panic!("x") }),
            -1
        );
    }

    #[test]
    fn handles_are_checked_never_dereferenced() {
        let mut cfg = std::ptr::null_mut();
        let mut err = std::ptr::null_mut();
        let key = c"acks";
        let bad = c"7";
        // SAFETY: valid out-parameters and NUL-terminated strings; handles
        // come from the library (or are deliberately stale/wrong).
        unsafe {
            assert_eq!(
                crate::cursus_config_new_for(c"producer".as_ptr(), &mut cfg, &mut err),
                cursus_status_t::CURSUS_OK
            );
            assert!(err.is_null());
            let s = crate::cursus_config_set(cfg, key.as_ptr(), bad.as_ptr(), &mut err);
            assert_eq!(s, cursus_status_t::CURSUS_ERR_INVALID_ARGUMENT);
            assert!(text(err).contains("acks"));
            let s = crate::cursus_config_set(cfg, c"group_id".as_ptr(), c"g".as_ptr(), &mut err);
            assert_eq!(s, cursus_status_t::CURSUS_ERR_INVALID_ARGUMENT);
            assert!(text(err).contains("unknown producer option"));
            // A config is not a producer.
            let s = crate::cursus_producer_flush(cfg.cast(), 0, &mut err);
            assert_eq!(s, cursus_status_t::CURSUS_ERR_INVALID_ARGUMENT);
            assert!(text(err).contains("not a producer"));
            crate::cursus_config_destroy(cfg);
            crate::cursus_config_destroy(cfg);
            let s = crate::cursus_config_set(cfg, key.as_ptr(), bad.as_ptr(), &mut err);
            assert_eq!(s, cursus_status_t::CURSUS_ERR_INVALID_ARGUMENT);
            assert_eq!(
                CStr::from_ptr(crate::cursus_error_code(err)).to_str(),
                Ok("invalid_handle")
            );
            crate::cursus_error_destroy(err);
            // Accessors give their fallback.
            assert_eq!(crate::cursus_message_offset(std::ptr::null()), -1);
            assert!(crate::cursus_error_code(std::ptr::null()).is_null());
            let mut len = 7;
            assert!(crate::cursus_message_payload(std::ptr::null(), &mut len).is_null());
            assert_eq!(len, 0);
        }
    }
}
