//! Strings accessors lend: a NUL-terminated copy kept with the handle (in
//! its side slot), so the pointer stays valid until the handle is
//! destroyed. One copy per accessor and arguments, made on first use.

use cursus_bridge::registry::Side;
use std::collections::HashMap;
use std::ffi::{c_char, CString};

#[derive(Default)]
struct Lent(HashMap<String, CString>);

/// The lent copy of `value` for the accessor call `key`.
pub(crate) fn str(side: &Side, key: String, value: impl AsRef<str>) -> *const c_char {
    side.with(|lent: &mut Lent| {
        lent.0
            .entry(key)
            .or_insert_with(|| crate::args::cstring(value.as_ref()))
            .as_ptr()
    })
}
