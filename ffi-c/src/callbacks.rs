//! C callbacks as bridge callbacks. They run on the client's callback
//! thread (see `cursus::dispatch`), never on a network thread; a panic
//! around them is contained there.

use crate::types::{
    cursus_completion_cb, cursus_delivery_cb, cursus_delivery_report_t, cursus_record_metadata_t,
    cursus_status_t,
};
use cursus_bridge::api::{Callback, RecordMetadata, Status};
use std::ffi::c_void;

/// The `user_data` of a C callback, handed back on the callback thread.
struct UserData(*mut c_void);
// SAFETY: the header requires user_data passed with a callback to be usable
// from another thread; the library never dereferences it, only passes it back.
unsafe impl Send for UserData {}

/// A delivery callback (NULL: the outcome is dropped).
pub(crate) fn delivery(cb: cursus_delivery_cb, user_data: *mut c_void) -> Callback<RecordMetadata> {
    let user_data = UserData(user_data);
    Box::new(move |outcome| {
        let user_data = user_data;
        let Some(cb) = cb else { return };
        let (topic, report_error, report) = match &outcome {
            Ok(m) => (
                crate::args::cstring(&m.topic),
                None,
                crate::types::record_metadata(m),
            ),
            Err(e) => (
                crate::args::cstring(e.field("topic").unwrap_or("")),
                Some(crate::guard::error_handle(e.clone())),
                cursus_record_metadata_t {
                    partition: -1,
                    offset: -1,
                    timestamp: 0,
                },
            ),
        };
        let status = match &outcome {
            Ok(_) => cursus_status_t::CURSUS_OK,
            Err(e) => cursus_status_t::from(Status::of(e)),
        };
        let rep = cursus_delivery_report_t {
            status,
            error: report_error.map_or(std::ptr::null(), |e| e as *const _),
            topic: topic.as_ptr(),
            metadata: report,
        };
        // SAFETY: `cb` is a C function pointer the caller supplied with the
        // documented signature; `rep` and the strings it points to outlive
        // the call.
        unsafe { cb(user_data.0, &rep) };
        if let Some(e) = report_error {
            cursus_bridge::registry::remove::<cursus_bridge::api::Error>(e as usize as u64);
        }
    })
}

/// A completion callback (NULL: the outcome is dropped).
pub(crate) fn completion(cb: cursus_completion_cb, user_data: *mut c_void) -> Callback<()> {
    let user_data = UserData(user_data);
    Box::new(move |outcome| {
        let user_data = user_data;
        let Some(cb) = cb else { return };
        match outcome {
            // SAFETY: `cb` is a C function pointer the caller supplied with
            // the documented signature.
            Ok(()) => unsafe { cb(user_data.0, cursus_status_t::CURSUS_OK, std::ptr::null()) },
            Err(e) => {
                let status = cursus_status_t::from(Status::of(&e));
                let handle = crate::guard::error_handle(e);
                // SAFETY: as above; the error handle stays registered during
                // the call.
                unsafe { cb(user_data.0, status, handle) };
                cursus_bridge::registry::remove::<cursus_bridge::api::Error>(
                    handle as usize as u64,
                );
            }
        }
    })
}

/// A completion callback whose result is a handle `T` (a delivery batch),
/// lent to the C callback for the duration of the call (NULL: the outcome
/// is dropped).
pub(crate) fn handle<T: cursus_bridge::registry::Handle, R: 'static>(
    cb: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            status: cursus_status_t,
            result: *mut R,
            error: *const crate::cursus_error_t,
        ),
    >,
    user_data: *mut c_void,
) -> Callback<T> {
    let user_data = UserData(user_data);
    Box::new(move |outcome| {
        let user_data = user_data;
        let Some(cb) = cb else { return };
        match outcome {
            Ok(result) => {
                let id = cursus_bridge::registry::insert(result);
                // SAFETY: `cb` is a C function pointer the caller supplied
                // with the documented signature; the handle stays registered
                // during the call.
                unsafe {
                    cb(
                        user_data.0,
                        cursus_status_t::CURSUS_OK,
                        id as usize as *mut R,
                        std::ptr::null(),
                    )
                };
                cursus_bridge::registry::remove::<T>(id);
            }
            Err(e) => {
                let status = cursus_status_t::from(Status::of(&e));
                let handle = crate::guard::error_handle(e);
                // SAFETY: as above; the error handle stays registered during
                // the call.
                unsafe { cb(user_data.0, status, std::ptr::null_mut(), handle) };
                cursus_bridge::registry::remove::<cursus_bridge::api::Error>(
                    handle as usize as u64,
                );
            }
        }
    })
}
