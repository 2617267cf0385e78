//! The C backend: one `extern "C"` function per bridge function, the
//! opaque handle types and a `*_destroy` per handle type.
//!
//! The generated code calls the hand-written glue of `ffi-c` (`crate::guard`,
//! `crate::args`, `crate::lend`, `crate::callbacks`, `crate::types`); it is
//! `include!`d at the crate root of `ffi-c` and read by cbindgen.
//!
//! - A call returns `cursus_status_t`, takes `cursus_error_t **out_error`
//!   last and writes its result to `out_<name>` (which may be NULL).
//! - An accessor returns its value; an invalid handle gives the fallback.
//! - A handle is an id carried in an opaque pointer type.

use crate::{banner, snake, ArgType, BridgeFn, RetType};
use std::fmt::Write as _;

const SAFETY: &str = "/// # Safety
/// Pointer arguments follow the header's conventions: handles are values
/// returned by this library (or NULL); strings are NUL-terminated; byte
/// buffers hold the given length; out-parameters are NULL or point to
/// writable storage.";

/// The C type of a handle.
pub fn handle_type(name: &str) -> String {
    format!("cursus_{}_t", snake(name))
}

fn callback_type(payload: &str) -> String {
    match (payload, crate::callback_handle(payload)) {
        ("RecordMetadata", _) => "cursus_delivery_cb".to_owned(),
        (_, Some(h)) => handle_callback_type(h),
        _ => "cursus_completion_cb".to_owned(),
    }
}

/// The C function pointer type of a `Callback<T>` with `T` a handle.
pub fn handle_callback_type(name: &str) -> String {
    format!("cursus_{}_cb", snake(name))
}

/// The C function pointer type of a `Listener<T>`.
pub fn listener_type(name: &str) -> String {
    format!("cursus_{}_listener", snake(name))
}

fn callback_glue(payload: &str) -> &'static str {
    match payload {
        "RecordMetadata" => "delivery",
        _ => "completion",
    }
}

fn enum_type(name: &str) -> &'static str {
    match name {
        "Status" => "cursus_status_t",
        _ => "cursus_error_class_t",
    }
}

fn params(f: &BridgeFn, accessor: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (n, t) in &f.args {
        match t {
            ArgType::Handle(h) => {
                let ptr = if accessor { "*const" } else { "*mut" };
                out.push(format!("{n}: {ptr} {}", handle_type(h)));
            }
            ArgType::Str | ArgType::OptStr => out.push(format!("{n}: *const c_char")),
            ArgType::Bytes | ArgType::OptBytes => {
                out.push(format!("{n}: *const u8"));
                out.push(format!("{n}_len: usize"));
            }
            ArgType::Bool => out.push(format!("{n}: bool")),
            ArgType::U32 => out.push(format!("{n}: u32")),
            ArgType::I32 => out.push(format!("{n}: i32")),
            ArgType::U64 => out.push(format!("{n}: u64")),
            ArgType::I64 => out.push(format!("{n}: i64")),
            ArgType::Usize => out.push(format!("{n}: usize")),
            ArgType::Strings => {
                out.push(format!("{n}: *const *const c_char"));
                out.push(format!("{n}_count: usize"));
            }
            ArgType::Pairs => {
                out.push(format!("{n}_keys: *const *const c_char"));
                out.push(format!("{n}_values: *const *const c_char"));
                out.push(format!("{n}_count: usize"));
            }
            ArgType::Callback(p) | ArgType::OptCallback(p) => {
                out.push(format!("{n}: {}", callback_type(p)));
                out.push("user_data: *mut c_void".to_owned());
            }
            ArgType::Listener(h) => {
                out.push(format!("{n}: {}", listener_type(h)));
                out.push("user_data: *mut c_void".to_owned());
            }
        }
    }
    out
}

/// Statements converting the arguments, and the expressions passed on.
fn conversions(f: &BridgeFn, accessor: bool) -> (Vec<String>, Vec<String>) {
    let mut stmts = Vec::new();
    let mut pass = Vec::new();
    for (i, (n, t)) in f.args.iter().enumerate() {
        match t {
            ArgType::Handle(h) if accessor && i == 0 => {
                stmts.push(format!(
                    "let ({n}, side) = crate::args::handle_with_side::<::cursus_bridge::api::{h}>({n} as usize as u64)?;"
                ));
                pass.push(format!("&{n}"));
            }
            ArgType::Handle(h) => {
                stmts.push(format!(
                    "let {n} = crate::args::handle::<::cursus_bridge::api::{h}>({n} as usize as u64)?;"
                ));
                pass.push(format!("&{n}"));
            }
            ArgType::Str => {
                stmts.push(format!("let {n} = crate::args::str_arg({n}, \"{n}\")?;"));
                pass.push(n.clone());
            }
            ArgType::OptStr => {
                stmts.push(format!(
                    "let {n} = crate::args::opt_str_arg({n}, \"{n}\")?;"
                ));
                pass.push(n.clone());
            }
            ArgType::Bytes => {
                stmts.push(format!(
                    "let {n} = crate::args::bytes_arg({n}, {n}_len, \"{n}\")?;"
                ));
                pass.push(n.clone());
            }
            ArgType::OptBytes => {
                stmts.push(format!(
                    "let {n} = crate::args::opt_bytes_arg({n}, {n}_len, \"{n}\")?;"
                ));
                pass.push(n.clone());
            }
            ArgType::Strings => {
                stmts.push(format!(
                    "let {n} = crate::args::strings_arg({n}, {n}_count, \"{n}\")?;"
                ));
                pass.push(format!("&{n}"));
            }
            ArgType::Pairs => {
                stmts.push(format!(
                    "let {n} = crate::args::pairs_arg({n}_keys, {n}_values, {n}_count, \"{n}\")?;"
                ));
                pass.push(format!("&{n}"));
            }
            ArgType::OptCallback(p) => {
                // NULL: no completion at all (not one that drops the outcome).
                let glue = match crate::callback_handle(p) {
                    Some(h) => format!("handle::<::cursus_bridge::api::{h}, _>"),
                    None => callback_glue(p).to_owned(),
                };
                stmts.push(format!(
                    "let {n} = {n}.is_some().then(|| crate::callbacks::{glue}({n}, user_data));"
                ));
                pass.push(n.clone());
            }
            ArgType::Callback(p) => {
                match crate::callback_handle(p) {
                    Some(h) => stmts.push(format!(
                        "let {n} = crate::callbacks::handle::<::cursus_bridge::api::{h}, _>({n}, user_data);"
                    )),
                    None => stmts.push(format!(
                        "let {n} = crate::callbacks::{}({n}, user_data);",
                        callback_glue(p)
                    )),
                }
                pass.push(n.clone());
            }
            ArgType::Listener(h) => {
                stmts.push(format!(
                    "let {n} = crate::listeners::listener::<::cursus_bridge::api::{h}, _>({n}, user_data);"
                ));
                pass.push(n.clone());
            }
            _ => pass.push(n.clone()),
        }
    }
    (stmts, pass)
}

fn docs(s: &mut String, f: &BridgeFn) {
    for line in &f.docs {
        if line.is_empty() {
            let _ = writeln!(s, "///");
        } else {
            let _ = writeln!(s, "/// {line}");
        }
    }
    let _ = writeln!(s, "///");
    let _ = writeln!(s, "{SAFETY}");
}

fn out_name(f: &BridgeFn) -> String {
    let name = f.out.clone().unwrap_or_else(|| match &f.ret {
        RetType::Handle(h) | RetType::OptHandle(h) => snake(h),
        _ => "value".to_owned(),
    });
    format!("out_{name}")
}

fn call(s: &mut String, f: &BridgeFn) {
    let mut ps = params(f, false);
    let out = out_name(f);
    let mut before = Vec::new();
    let after: Option<String> = match &f.ret {
        RetType::Unit => None,
        RetType::Bool => Some(scalar_out(&mut ps, &out, "bool")),
        RetType::U32 => Some(scalar_out(&mut ps, &out, "u32")),
        RetType::I32 => Some(scalar_out(&mut ps, &out, "i32")),
        RetType::U64 => Some(scalar_out(&mut ps, &out, "u64")),
        RetType::I64 => Some(scalar_out(&mut ps, &out, "i64")),
        RetType::Usize => Some(scalar_out(&mut ps, &out, "usize")),
        RetType::Handle(h) => {
            ps.push(format!("{out}: *mut *mut {}", handle_type(h)));
            before.push(format!("crate::args::clear({out});"));
            Some(format!("crate::args::put_handle({out}, Some(result));"))
        }
        RetType::OptHandle(h) => {
            ps.push(format!("{out}: *mut *mut {}", handle_type(h)));
            before.push(format!("crate::args::clear({out});"));
            Some(format!("crate::args::put_handle({out}, result);"))
        }
        RetType::Strings => {
            ps.push(format!("{out}: *mut *mut cursus_string_list_t"));
            before.push(format!("crate::args::clear({out});"));
            Some(format!(
                "crate::args::put_handle({out}, Some(::cursus_bridge::api::StringList(result)));"
            ))
        }
        RetType::ByteVec => {
            ps.push(format!("{out}: *mut *mut u8"));
            ps.push(format!("{out}_len: *mut usize"));
            before.push(format!("crate::args::clear({out});"));
            before.push(format!("crate::args::put({out}_len, 0);"));
            Some(format!(
                "crate::args::put_buffer({out}, {out}_len, result);"
            ))
        }
        RetType::String => {
            ps.push(format!("{out}: *mut *mut c_char"));
            before.push(format!("crate::args::clear({out});"));
            Some(format!("crate::args::put_string({out}, &result);"))
        }
        RetType::RecordMetadata => {
            ps.push(format!(
                "{out}: *mut crate::types::cursus_record_metadata_t"
            ));
            Some(format!(
                "crate::args::put({out}, crate::types::record_metadata(&result));"
            ))
        }
        other => panic!("{}: a call cannot return {other:?}", f.name),
    };
    ps.push("out_error: *mut *mut cursus_error_t".to_owned());
    docs(s, f);
    let _ = writeln!(s, "#[no_mangle]");
    let _ = writeln!(
        s,
        "pub unsafe extern \"C\" fn cursus_{}({}) -> crate::types::cursus_status_t {{",
        f.name,
        ps.join(", ")
    );
    let _ = writeln!(s, "    crate::guard::call(out_error, || {{");
    for b in &before {
        let _ = writeln!(s, "        {b}");
    }
    let (stmts, pass) = conversions(f, false);
    for st in stmts {
        let _ = writeln!(s, "        {st}");
    }
    let invoke = format!("{}({})?", f.path(), pass.join(", "));
    match after {
        None => {
            let _ = writeln!(s, "        {invoke};");
        }
        Some(a) => {
            let _ = writeln!(s, "        let result = {invoke};");
            let _ = writeln!(s, "        {a}");
        }
    }
    let _ = writeln!(s, "        Ok(())");
    let _ = writeln!(s, "    }})");
    let _ = writeln!(s, "}}\n");
}

fn scalar_out(ps: &mut Vec<String>, out: &str, ty: &str) -> String {
    ps.push(format!("{out}: *mut {ty}"));
    format!("crate::args::put({out}, result);")
}

fn accessor(s: &mut String, f: &BridgeFn) {
    let mut ps = params(f, true);
    let keys: Vec<&str> = f.args.iter().skip(1).map(|(n, _)| n.as_str()).collect();
    let key = format!(
        "format!(\"{}:{{:?}}\", ({}))",
        f.name,
        keys.iter().map(|k| format!("{k},")).collect::<String>()
    );
    let lend = |v: &str| format!("crate::lend::str(&side, {key}, {v})");
    let (ret, fallback, conv, pre) = match &f.ret {
        RetType::Bool => (
            "bool".to_owned(),
            "false".to_owned(),
            "value".to_owned(),
            None,
        ),
        RetType::U32 => ("u32".into(), "0".into(), "value".into(), None),
        RetType::I32 => ("i32".into(), "0".into(), "value".into(), None),
        RetType::U64 => ("u64".into(), "0".into(), "value".into(), None),
        RetType::I64 => ("i64".into(), "0".into(), "value".into(), None),
        RetType::Usize => ("usize".into(), "0".into(), "value".into(), None),
        RetType::Str | RetType::String => (
            "*const c_char".into(),
            "std::ptr::null()".into(),
            lend("value"),
            None,
        ),
        RetType::OptStr | RetType::OptString => (
            "*const c_char".into(),
            "std::ptr::null()".into(),
            format!("value.map_or(std::ptr::null(), |v| {})", lend("v")),
            None,
        ),
        RetType::ByteSlice => {
            ps.push("out_len: *mut usize".into());
            (
                "*const u8".into(),
                "std::ptr::null()".into(),
                "{ crate::args::put(out_len, value.len()); value.as_ptr() }".into(),
                Some("crate::args::put(out_len, 0);".to_owned()),
            )
        }
        RetType::Enum(e) => {
            let ct = enum_type(e);
            let variant = f.fallback.clone().unwrap_or_else(|| "Internal".into());
            (
                format!("crate::types::{ct}"),
                format!("crate::types::{ct}::from(::cursus_bridge::api::{e}::{variant})"),
                format!("crate::types::{ct}::from(value)"),
                None,
            )
        }
        other => panic!("{}: an accessor cannot return {other:?}", f.name),
    };
    let fallback = match (&f.ret, &f.fallback) {
        (RetType::Enum(_), _) | (_, None) => fallback,
        (_, Some(v)) => v.clone(),
    };
    docs(s, f);
    let _ = writeln!(s, "#[no_mangle]");
    let _ = writeln!(
        s,
        "pub unsafe extern \"C\" fn cursus_{}({}) -> {ret} {{",
        f.name,
        ps.join(", ")
    );
    if let Some(p) = pre {
        let _ = writeln!(s, "    {p}");
    }
    let _ = writeln!(s, "    crate::guard::access({fallback}, || {{");
    let (stmts, pass) = conversions(f, true);
    for st in stmts {
        let _ = writeln!(s, "        {st}");
    }
    let _ = writeln!(s, "        let value = {}({});", f.path(), pass.join(", "));
    if !conv.contains("side") {
        let _ = writeln!(s, "        let _ = &side;");
    }
    let _ = writeln!(s, "        Ok({conv})");
    let _ = writeln!(s, "    }})");
    let _ = writeln!(s, "}}\n");
}

fn destroy(s: &mut String, handle: &str) {
    let words = snake(handle).replace('_', " ");
    let ty = handle_type(handle);
    let _ = writeln!(
        s,
        "/// Destroys a {words} handle (NULL and already-destroyed handles are\n/// ignored). Strings and bytes its accessors lent become invalid.\n///\n/// Thread-safety: safe from any thread; calls running on the handle\n/// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.\n///\n{SAFETY}"
    );
    let _ = writeln!(s, "#[no_mangle]");
    let _ = writeln!(
        s,
        "pub unsafe extern \"C\" fn cursus_{}_destroy(handle: *mut {ty}) {{",
        snake(handle)
    );
    let _ = writeln!(
        s,
        "    crate::guard::quiet(|| ::cursus_bridge::registry::remove::<::cursus_bridge::api::{handle}>(handle as usize as u64));"
    );
    let _ = writeln!(s, "}}\n");
}

fn listener_typedef(s: &mut String, handle: &str) {
    let words = snake(handle).replace('_', " ");
    let _ = writeln!(
        s,
        "/// A listener of {words} events, set with the `user_data` it gets back.\n\
         /// It is called once per event on the client's callback thread (log\n\
         /// records: the process's log thread), never on an I/O thread. `event`\n\
         /// is a {words} handle valid only during the call: read it with the\n\
         /// `cursus_{}_*` accessors and do not destroy it. `user_data` must stay\n\
         /// valid until the listener is replaced or cleared (NULL) or the client\n\
         /// is destroyed.",
        snake(handle)
    );
    let _ = writeln!(
        s,
        "pub type {} = Option<unsafe extern \"C\" fn(user_data: *mut c_void, event: *const {})>;\n",
        listener_type(handle),
        handle_type(handle)
    );
}

fn callback_typedef(s: &mut String, handle: &str) {
    let words = snake(handle).replace('_', " ");
    let _ = writeln!(
        s,
        "/// A completion callback with a {words}, passed with the `user_data` it\n\
         /// gets back. It is called exactly once on the client's callback thread,\n\
         /// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`\n\
         /// a {words} handle valid only during the call (read it with the\n\
         /// `cursus_{}_*` accessors and do not destroy it) and `error` NULL;\n\
         /// otherwise `result` is NULL and `error` is borrowed for the call.",
        snake(handle)
    );
    let _ = writeln!(
        s,
        "pub type {} = Option<unsafe extern \"C\" fn(user_data: *mut c_void, status: cursus_status_t, result: *mut {}, error: *const cursus_error_t)>;\n",
        handle_callback_type(handle),
        handle_type(handle)
    );
}

/// The Rust source of the C entry points.
pub fn generate(api: &crate::Api) -> String {
    let mut s = banner("//", "C entry points of libcursus");
    let _ = writeln!(s);
    for h in &api.handles {
        let words = snake(h).replace('_', " ");
        let _ = writeln!(
            s,
            "/// Opaque {words} handle (destroy with `cursus_{}_destroy`).",
            snake(h)
        );
        let _ = writeln!(s, "#[allow(non_camel_case_types)]");
        let _ = writeln!(
            s,
            "pub struct {} {{\n    _private: [u8; 0],\n}}\n",
            handle_type(h)
        );
    }
    let mut listeners: Vec<&str> = Vec::new();
    for f in api.fns.iter().filter(|f| f.for_lang("c")) {
        for (_, t) in &f.args {
            if let ArgType::Listener(h) = t {
                if !listeners.contains(&h.as_str()) {
                    listeners.push(h);
                }
            }
        }
    }
    listeners.sort_unstable();
    for h in listeners {
        listener_typedef(&mut s, h);
    }
    let mut callbacks: Vec<&str> = Vec::new();
    for f in api.fns.iter().filter(|f| f.for_lang("c")) {
        for (_, t) in &f.args {
            if let ArgType::Callback(p) | ArgType::OptCallback(p) = t {
                if let Some(h) = crate::callback_handle(p) {
                    if !callbacks.contains(&h) {
                        callbacks.push(h);
                    }
                }
            }
        }
    }
    callbacks.sort_unstable();
    for h in callbacks {
        callback_typedef(&mut s, h);
    }
    for f in api.fns.iter().filter(|f| f.for_lang("c")) {
        if f.fallible {
            call(&mut s, f);
        } else {
            accessor(&mut s, f);
        }
    }
    for h in &api.handles {
        destroy(&mut s, h);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_is_a_typedef_plus_user_data() {
        let code = generate(&crate::listener_api("LogRecord"));
        assert!(
            code.contains("pub type cursus_log_record_listener = Option<unsafe extern \"C\" fn(user_data: *mut c_void, event: *const cursus_log_record_t)>;"),
            "{code}"
        );
        assert!(code.contains("valid only during the call"), "{code}");
        assert!(
            code.contains(
                "listener: cursus_log_record_listener, user_data: *mut c_void, out_error"
            ),
            "{code}"
        );
        assert!(code.contains(
            "let listener = crate::listeners::listener::<::cursus_bridge::api::LogRecord, _>(listener, user_data);"
        ));
        assert_eq!(
            code.matches("pub type cursus_log_record_listener").count(),
            1
        );
        syn::parse_file(&code).unwrap();
    }

    #[test]
    fn a_handle_callback_is_a_typedef_with_a_lent_result() {
        let code = generate(&crate::callback_api("DeliveryBatch"));
        assert!(
            code.contains("pub type cursus_delivery_batch_cb = Option<unsafe extern \"C\" fn(user_data: *mut c_void, status: cursus_status_t, result: *mut cursus_delivery_batch_t, error: *const cursus_error_t)>;"),
            "{code}"
        );
        assert!(
            code.contains("callback: cursus_delivery_batch_cb, user_data: *mut c_void, out_error"),
            "{code}"
        );
        assert!(code.contains(
            "let callback = crate::callbacks::handle::<::cursus_bridge::api::DeliveryBatch, _>(callback, user_data);"
        ));
        // RecordMetadata and () keep their own shapes.
        let code = generate(&crate::callback_api("RecordMetadata"));
        assert!(code.contains("callback: cursus_delivery_cb"), "{code}");
        assert!(!code.contains("cursus_record_metadata_cb"), "{code}");
        syn::parse_file(&code).unwrap();
    }
}
