//! The JNI backend: one `Java_io_cursus_NativeBridge_<name>` function per
//! bridge function, a `<handle>Destroy` per handle type, and the Java class
//! `io.cursus.NativeBridge` that declares them.
//!
//! The generated Rust calls the hand-written glue of the JNI library
//! (`crate::glue`): argument and result conversions, the panic and
//! exception boundary, and completion callbacks. Calls and accessors alike
//! throw the mapped `CursusException` on failure (an invalid handle
//! included); Java code never sees a fallback value.

use crate::{banner, camel, snake, ArgType, BridgeFn, RetType};
use std::fmt::Write as _;

fn callback_glue(payload: &str) -> &'static str {
    match payload {
        "RecordMetadata" => "delivery",
        _ => "completion",
    }
}

fn java_name(f: &BridgeFn) -> String {
    camel(&f.name)
}

fn destroy_name(handle: &str) -> String {
    format!("{}Destroy", camel(&snake(handle)))
}

/// (Rust parameter type, Java parameter type).
fn param_types(t: &ArgType) -> (&'static str, &'static str) {
    match t {
        ArgType::Handle(_) => ("jlong", "long"),
        ArgType::Str | ArgType::OptStr => ("JString<'l>", "String"),
        ArgType::Bytes | ArgType::OptBytes => ("JByteArray<'l>", "byte[]"),
        ArgType::Bool => ("jboolean", "boolean"),
        ArgType::U32 | ArgType::I32 | ArgType::Usize => ("jint", "int"),
        ArgType::U64 | ArgType::I64 => ("jlong", "long"),
        ArgType::Strings | ArgType::Pairs => ("JObjectArray<'l>", "String[]"),
        ArgType::Callback(_) | ArgType::OptCallback(_) => ("JObject<'l>", "NativeCompletion"),
        ArgType::Listener(_) => ("JObject<'l>", "NativeListener"),
    }
}

/// (Rust return type, its default, Java return type).
fn ret_types(t: &RetType) -> (&'static str, &'static str, &'static str) {
    match t {
        RetType::Unit => ("()", "()", "void"),
        RetType::Bool => ("jboolean", "0", "boolean"),
        RetType::U32 | RetType::I32 | RetType::Usize | RetType::Enum(_) => ("jint", "0", "int"),
        RetType::U64 | RetType::I64 | RetType::Handle(_) | RetType::OptHandle(_) => {
            ("jlong", "0", "long")
        }
        RetType::Str | RetType::OptStr | RetType::String | RetType::OptString => {
            ("jstring", "std::ptr::null_mut()", "String")
        }
        RetType::ByteSlice | RetType::ByteVec => ("jbyteArray", "std::ptr::null_mut()", "byte[]"),
        RetType::Strings => ("jobjectArray", "std::ptr::null_mut()", "String[]"),
        RetType::RecordMetadata => panic!("RecordMetadata results are C only"),
    }
}

fn conversion(n: &str, t: &ArgType) -> (Option<String>, String) {
    match t {
        ArgType::Handle(h) => (
            Some(format!(
                "let {n} = crate::glue::handle::<::cursus_bridge::api::{h}>({n})?;"
            )),
            format!("&{n}"),
        ),
        ArgType::Str => (
            Some(format!(
                "let {n} = crate::glue::string(env, &{n}, \"{n}\")?;"
            )),
            format!("&{n}"),
        ),
        ArgType::OptStr => (
            Some(format!("let {n} = crate::glue::opt_string(env, &{n})?;")),
            format!("{n}.as_deref()"),
        ),
        ArgType::Bytes => (
            Some(format!(
                "let {n} = crate::glue::bytes(env, &{n}, \"{n}\")?;"
            )),
            format!("&{n}"),
        ),
        ArgType::OptBytes => (
            Some(format!("let {n} = crate::glue::opt_bytes(env, &{n})?;")),
            format!("{n}.as_deref()"),
        ),
        ArgType::Bool => (None, format!("{n} != 0")),
        ArgType::U32 => (None, format!("crate::glue::u32_arg(\"{n}\", {n})?")),
        ArgType::I32 | ArgType::I64 => (None, n.to_owned()),
        ArgType::U64 => (None, format!("crate::glue::u64_arg(\"{n}\", {n})?")),
        ArgType::Usize => (None, format!("crate::glue::usize_arg(\"{n}\", {n})?")),
        ArgType::Strings => (
            Some(format!(
                "let {n} = crate::glue::strings(env, &{n}, \"{n}\")?;"
            )),
            format!("&{n}"),
        ),
        ArgType::Pairs => (
            Some(format!(
                "let {n} = crate::glue::pairs(env, &{n}, \"{n}\")?;"
            )),
            format!("&{n}"),
        ),
        ArgType::OptCallback(p) => (
            // null: no completion at all.
            Some(format!(
                "let {n} = if {n}.is_null() {{ None }} else {{ Some({}) }};",
                match crate::callback_handle(p) {
                    Some(h) => format!(
                        "crate::glue::handle_completion::<::cursus_bridge::api::{h}>(env, &{n})?"
                    ),
                    None => format!("crate::glue::{}(env, &{n})?", callback_glue(p)),
                }
            )),
            n.to_owned(),
        ),
        ArgType::Callback(p) => (
            Some(match crate::callback_handle(p) {
                Some(h) => format!(
                    "let {n} = crate::glue::handle_completion::<::cursus_bridge::api::{h}>(env, &{n})?;"
                ),
                None => format!("let {n} = crate::glue::{}(env, &{n})?;", callback_glue(p)),
            }),
            n.to_owned(),
        ),
        ArgType::Listener(h) => (
            Some(format!(
                "let {n} = crate::glue::listener::<::cursus_bridge::api::{h}>(env, &{n})?;"
            )),
            n.to_owned(),
        ),
    }
}

fn result_conversion(t: &RetType) -> &'static str {
    match t {
        RetType::Unit => "Ok(result)",
        RetType::Bool => "Ok(jboolean::from(result))",
        RetType::U32 | RetType::I32 | RetType::Usize | RetType::Enum(_) => "Ok(result as jint)",
        RetType::U64 | RetType::I64 => "Ok(result as jlong)",
        RetType::Str => "crate::glue::new_string(env, result)",
        RetType::String => "crate::glue::new_string(env, &result)",
        RetType::OptStr => "crate::glue::opt_new_string(env, result)",
        RetType::OptString => "crate::glue::opt_new_string(env, result.as_deref())",
        RetType::ByteSlice => "crate::glue::new_bytes(env, result)",
        RetType::ByteVec => "crate::glue::new_bytes(env, &result)",
        RetType::Strings => "crate::glue::new_strings(env, &result)",
        RetType::Handle(_) => "Ok(::cursus_bridge::registry::insert(result) as jlong)",
        RetType::OptHandle(_) => {
            "Ok(result.map_or(0, |r| ::cursus_bridge::registry::insert(r) as jlong))"
        }
        RetType::RecordMetadata => panic!("RecordMetadata results are C only"),
    }
}

fn function(s: &mut String, f: &BridgeFn) {
    let (jret, default, _) = ret_types(&f.ret);
    let params: Vec<String> = f
        .args
        .iter()
        .map(|(n, t)| format!("{n}: {}", param_types(t).0))
        .collect();
    let _ = writeln!(
        s,
        "/// `NativeBridge.{}`: see `{}`.",
        java_name(f),
        f.path()
    );
    let _ = writeln!(s, "#[no_mangle]");
    let _ = writeln!(
        s,
        "pub extern \"system\" fn Java_io_cursus_NativeBridge_{}<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>{}{}){} {{",
        java_name(f),
        if params.is_empty() { "" } else { ", " },
        params.join(", "),
        if jret == "()" { String::new() } else { format!(" -> {jret}") }
    );
    let _ = writeln!(s, "    crate::glue::run(&mut env, {default}, |env| {{");
    let _ = writeln!(s, "        let _ = &env;");
    let mut pass = Vec::new();
    for (n, t) in &f.args {
        let (stmt, p) = conversion(n, t);
        if let Some(st) = stmt {
            let _ = writeln!(s, "        {st}");
        }
        pass.push(p);
    }
    let q = if f.fallible { "?" } else { "" };
    let _ = writeln!(
        s,
        "        #[allow(clippy::let_unit_value)]\n        let result = {}({}){q};",
        f.path(),
        pass.join(", ")
    );
    let _ = writeln!(s, "        {}", result_conversion(&f.ret));
    let _ = writeln!(s, "    }})");
    let _ = writeln!(s, "}}\n");
}

fn destroy(s: &mut String, handle: &str) {
    let _ = writeln!(
        s,
        "/// `NativeBridge.{}`: releases a handle.",
        destroy_name(handle)
    );
    let _ = writeln!(s, "#[no_mangle]");
    let _ = writeln!(
        s,
        "pub extern \"system\" fn Java_io_cursus_NativeBridge_{}<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>, handle: jlong) {{",
        destroy_name(handle)
    );
    let _ = writeln!(
        s,
        "    crate::glue::run(&mut env, (), |_| {{\n        ::cursus_bridge::registry::remove::<::cursus_bridge::api::{handle}>(handle as u64);\n        Ok(())\n    }})"
    );
    let _ = writeln!(s, "}}\n");
}

/// The Rust source of the JNI entry points.
pub fn generate_rust(api: &crate::Api) -> String {
    let mut s = banner("//", "JNI entry points of the Java binding");
    let _ = writeln!(s);
    for f in api.fns.iter().filter(|f| f.for_lang("jni")) {
        function(&mut s, f);
    }
    for h in &api.handles {
        destroy(&mut s, h);
    }
    s
}

/// Rust docs as Javadoc HTML: backtick spans become `{@code ...}`, the
/// rest is HTML-escaped.
pub(crate) fn javadoc_line(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 1 && !part.contains(['{', '}']) {
            let _ = write!(out, "{{@code {part}}}");
        } else {
            let escaped = part
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace("*/", "*&#47;");
            if i % 2 == 1 {
                let _ = write!(out, "<code>{escaped}</code>");
            } else {
                out.push_str(&escaped);
            }
        }
    }
    out
}

fn javadoc(s: &mut String, lines: &[String]) {
    let _ = writeln!(s, "    /**");
    for line in lines {
        if line.is_empty() {
            let _ = writeln!(s, "     * <p>");
        } else {
            let _ = writeln!(s, "     * {}", javadoc_line(line));
        }
    }
    let _ = writeln!(s, "     */");
}

/// The Java source of `io.cursus.NativeBridge`.
pub fn generate_java(api: &crate::Api) -> String {
    let mut s = banner("//", "the JNI entry points of the Java binding");
    s.push_str(
        "package io.cursus;\n\n\
         /**\n \
         * The native entry points of the Cursus bridge, one per bridge function\n \
         * (see bridge/README.md); the public classes wrap them. Handles are\n \
         * {@code long} ids, never pointers: a destroyed or wrong handle throws\n \
         * instead of crashing. Every method may throw a {@link CursusException}.\n \
         */\n\
         final class NativeBridge {\n    \
         static {\n        NativeLib.load();\n    }\n\n    \
         private NativeBridge() {}\n\n",
    );
    for f in api.fns.iter().filter(|f| f.for_lang("jni")) {
        javadoc(&mut s, &f.docs);
        let (_, _, jret) = ret_types(&f.ret);
        let params: Vec<String> = f
            .args
            .iter()
            .map(|(n, t)| format!("{} {}", param_types(t).1, camel(n)))
            .collect();
        let _ = writeln!(
            s,
            "    static native {jret} {}({});\n",
            java_name(f),
            params.join(", ")
        );
    }
    for h in &api.handles {
        let words = snake(h).replace('_', " ");
        javadoc(
            &mut s,
            &[format!(
                "Releases a {words} handle (0 and released handles are ignored)."
            )],
        );
        let _ = writeln!(
            s,
            "    static native void {}(long handle);\n",
            destroy_name(h)
        );
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javadoc_escapes_html_and_marks_code() {
        assert_eq!(
            javadoc_line("a `x<y>` b & <c>"),
            "a {@code x<y>} b &amp; &lt;c&gt;"
        );
        assert_eq!(javadoc_line("`{a}`"), "<code>{a}</code>");
    }

    #[test]
    fn a_listener_is_a_native_listener() {
        let api = crate::listener_api("Statistics");
        let java = generate_java(&api);
        assert!(
            java.contains(
                "static native void thingSetListener(long thing, NativeListener listener);"
            ),
            "{java}"
        );
        let rust = generate_rust(&api);
        assert!(rust.contains("listener: JObject<'l>"), "{rust}");
        assert!(rust.contains(
            "let listener = crate::glue::listener::<::cursus_bridge::api::Statistics>(env, &listener)?;"
        ));
        syn::parse_file(&rust).unwrap();
    }

    #[test]
    fn a_handle_callback_is_a_native_completion_with_a_handle() {
        let api = crate::callback_api("DeliveryBatch");
        let java = generate_java(&api);
        assert!(
            java.contains("static native void thingDo(long thing, NativeCompletion callback);"),
            "{java}"
        );
        assert!(java.contains("static native void deliveryBatchDestroy(long handle);"));
        let rust = generate_rust(&api);
        assert!(rust.contains(
            "let callback = crate::glue::handle_completion::<::cursus_bridge::api::DeliveryBatch>(env, &callback)?;"
        ), "{rust}");
        syn::parse_file(&rust).unwrap();
    }
}
