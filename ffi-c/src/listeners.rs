//! C listeners as bridge listeners: a function pointer plus `user_data`,
//! called once per event on the client's callback thread (log records: the
//! log thread), never on a network thread. For the duration of each call
//! the event is a registered handle, so every generated accessor works on
//! it; it is removed when the listener returns.

use cursus_bridge::api::Listener;
use cursus_bridge::registry::{self, Handle};
use std::ffi::c_void;
use std::sync::Arc;

/// The `user_data` of a C listener, handed back on the callback thread.
struct UserData(*mut c_void);
// SAFETY: the header requires user_data passed with a listener to be usable
// from another thread until the listener is replaced or the client is
// destroyed; the library never dereferences it, only passes it back.
unsafe impl Send for UserData {}
// SAFETY: as above; the pointer is only copied, never dereferenced.
unsafe impl Sync for UserData {}

impl UserData {
    /// The pointer (a method, so closures capture the whole wrapper).
    fn get(&self) -> *mut c_void {
        self.0
    }
}

/// A C listener of `T` events (NULL: `None`, which clears the listener).
pub(crate) fn listener<T: Handle + Clone, E: 'static>(
    f: Option<unsafe extern "C" fn(*mut c_void, *const E)>,
    user_data: *mut c_void,
) -> Option<Listener<T>> {
    let f = f?;
    let user_data = UserData(user_data);
    Some(Arc::new(move |event: &T| {
        let id = registry::insert(event.clone());
        // SAFETY: `f` is a C function pointer the caller supplied with the
        // documented signature; the handle it gets stays registered until
        // it returns.
        unsafe { f(user_data.get(), id as usize as *const E) };
        registry::remove::<T>(id);
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{cursus_error_code, cursus_error_t};
    use std::ffi::CStr;
    use std::sync::Mutex;

    static SEEN: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
    static LAST: Mutex<usize> = Mutex::new(0);

    unsafe extern "C" fn record(user_data: *mut c_void, event: *const cursus_error_t) {
        // SAFETY: `event` is the handle lent for this call; the accessor
        // returns a NUL-terminated string it lends.
        let code = unsafe { CStr::from_ptr(cursus_error_code(event)) };
        *LAST.lock().unwrap() = event as usize;
        SEEN.lock()
            .unwrap()
            .push((user_data as usize, code.to_string_lossy().into_owned()));
    }

    #[test]
    fn the_event_is_a_handle_during_the_call_only() {
        assert!(
            listener::<cursus_bridge::api::Error, cursus_error_t>(None, std::ptr::null_mut())
                .is_none()
        );
        let l = listener::<cursus_bridge::api::Error, _>(Some(record), 42 as *mut c_void)
            .expect("a listener");
        let event = cursus::Error::invalid_argument("x").with_code("connection_lost");
        l(&event);
        l(&event);
        let seen = SEEN.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![
                (42, "connection_lost".to_owned()),
                (42, "connection_lost".to_owned())
            ]
        );
        let gone = *LAST.lock().unwrap() as *const cursus_error_t;
        // SAFETY: a handle value the library made; it is only looked up.
        assert!(
            unsafe { cursus_error_code(gone) }.is_null(),
            "removed after the call"
        );
    }
}
