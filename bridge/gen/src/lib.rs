//! `cursus-bridge-gen`: reads the `#[bridge_fn]` declarations of
//! `bridge/src/api` and writes the entry points a language needs one per
//! function: C functions for `libcursus` ([`c`]) and JNI functions plus the
//! Java `NativeBridge` class ([`jni`]).
//!
//! It runs in the build scripts of `ffi-c` and `bindings-java/native`; its
//! output is `include!`d there (and the C part is also handed to cbindgen
//! for the header). It only knows a fixed set of argument and result types
//! ([`ArgType`], [`RetType`]); a declaration using another type fails the
//! build with a message naming the function.

pub mod c;
pub mod cpp;
pub mod golang;
pub mod java;
pub mod jni;
pub mod outputs;
pub mod python;
pub mod readers;
pub mod results;

use std::fmt::Write as _;
use std::path::Path;

/// An argument type the bridge knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgType {
    /// `&T`: a handle of type `T`.
    Handle(String),
    /// `&str`.
    Str,
    /// `Option<&str>`.
    OptStr,
    /// `&[u8]`.
    Bytes,
    /// `Option<&[u8]>`.
    OptBytes,
    /// `bool`.
    Bool,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// `i64`.
    I64,
    /// `usize` (an index).
    Usize,
    /// `&[String]`.
    Strings,
    /// `&[(String, String)]`: name/value pairs.
    Pairs,
    /// `Callback<T>`: a completion callback with a `T` on success.
    Callback(String),
    /// `Option<Callback<T>>`: as `Callback<T>`, and C NULL / Java null
    /// pass `None` (the call then needs no completion at all).
    OptCallback(String),
    /// `Option<Listener<T>>`: a repeating callback with a `T` handle per
    /// event (lent for the call); `None` clears it.
    Listener(String),
}

/// A result type the bridge knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetType {
    /// `()`.
    Unit,
    /// `bool`.
    Bool,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// `i64`.
    I64,
    /// `usize`.
    Usize,
    /// `&str`, lent by the handle.
    Str,
    /// `Option<&str>`.
    OptStr,
    /// `String`.
    String,
    /// `Option<String>`.
    OptString,
    /// `&[u8]`, lent by the handle.
    ByteSlice,
    /// `Vec<u8>`.
    ByteVec,
    /// `Vec<String>`.
    Strings,
    /// A new handle of type `T`.
    Handle(String),
    /// A new handle of type `T`, or none.
    OptHandle(String),
    /// One of the bridge's C-like enums (`Status`, `ErrorClass`).
    Enum(String),
    /// `RecordMetadata` (C only: a struct).
    RecordMetadata,
}

/// One `#[bridge_fn]`.
#[derive(Debug, Clone)]
pub struct BridgeFn {
    /// Function name, e.g. `producer_flush`.
    pub name: String,
    /// The `api` module it is declared in.
    pub module: String,
    /// Documentation lines (without the leading `///`).
    pub docs: Vec<String>,
    /// Arguments in order.
    pub args: Vec<(String, ArgType)>,
    /// The result: `Ok(T)` of a call, or an accessor's value.
    pub ret: RetType,
    /// True for `Result<T>` functions (calls); false for accessors.
    pub fallible: bool,
    /// `out = "..."`: name of the C out-parameter.
    pub out: Option<String>,
    /// `fallback = "..."`: an accessor's value for an invalid handle.
    pub fallback: Option<String>,
    /// `langs = "..."`: the languages it is generated for (default all).
    pub langs: Option<String>,
}

impl BridgeFn {
    /// Whether it is generated for `lang` (`"c"` or `"jni"`).
    pub fn for_lang(&self, lang: &str) -> bool {
        self.langs
            .as_deref()
            .map_or(true, |l| l.split(',').any(|x| x.trim() == lang))
    }

    /// The Rust path of the function.
    pub fn path(&self) -> String {
        format!("::cursus_bridge::api::{}::{}", self.module, self.name)
    }
}

/// Every bridge function of the `api` directory, in file then source order,
/// plus the handle types they use (sorted) and the declared results.
pub struct Api {
    /// The functions (the results' accessors included).
    pub fns: Vec<BridgeFn>,
    /// Handle type names (`Producer`, `TopicInfo`, ...).
    pub handles: Vec<String>,
    /// The `bridge_results!` declarations.
    pub results: results::Results,
}

/// Reads `dir/*.rs`.
pub fn read_api(dir: &Path) -> Result<Api, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    let mut fns = Vec::new();
    let mut declared = Vec::new();
    for file in files {
        let module = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        for item in parsed.items {
            match item {
                syn::Item::Fn(f) => {
                    if let Some(attr) = f.attrs.iter().find(|a| a.path().is_ident("bridge_fn")) {
                        fns.push(parse_fn(&module, &f, attr).map_err(|e| {
                            format!("{}: bridge_fn {}: {e}", file.display(), f.sig.ident)
                        })?);
                    }
                }
                syn::Item::Macro(m) if m.mac.path.is_ident("bridge_results") => {
                    let block = results::parse_block(&module, m.mac.tokens.clone())
                        .map_err(|e| format!("{}: bridge_results: {e}", file.display()))?;
                    results::check_block(&block)
                        .map_err(|e| format!("{}: bridge_results: {e}", file.display()))?;
                    fns.extend(results::accessors(&block).into_iter().map(|a| a.f));
                    declared.extend(block);
                }
                _ => {}
            }
        }
    }
    results::check(&declared)?;
    let mut handles: Vec<String> = Vec::new();
    for f in &fns {
        let used = f
            .args
            .iter()
            .filter_map(|(_, t)| match t {
                ArgType::Handle(h) | ArgType::Listener(h) => Some(h.clone()),
                ArgType::Callback(p) | ArgType::OptCallback(p) => {
                    callback_handle(p).map(str::to_owned)
                }
                _ => None,
            })
            .chain(match &f.ret {
                RetType::Handle(h) | RetType::OptHandle(h) => Some(h.clone()),
                _ => None,
            });
        for h in used {
            if !handles.contains(&h) {
                handles.push(h);
            }
        }
    }
    handles.sort();
    Ok(Api {
        fns,
        handles,
        results: declared,
    })
}

/// A type as compact text, lifetimes removed (`&'a str` -> `&str`).
pub(crate) fn tokens(ty: &syn::Type) -> String {
    let text = quote::ToTokens::to_token_stream(ty).to_string();
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            while chars
                .peek()
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                chars.next();
            }
        } else if c != ' ' {
            out.push(c);
        }
    }
    out
}

/// The handle type a `Callback<T>` completes with, when `T` is a handle
/// (not `RecordMetadata` or `()`, which have their own callback shapes):
/// the outcome is lent to the callback as a handle valid during the call.
pub fn callback_handle(payload: &str) -> Option<&str> {
    (payload != "RecordMetadata" && is_ident(payload)).then_some(payload)
}

pub(crate) fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.starts_with(|c: char| c.is_ascii_uppercase())
}

fn arg_type(t: &str) -> Option<ArgType> {
    Some(match t {
        "&str" => ArgType::Str,
        "Option<&str>" => ArgType::OptStr,
        "&[u8]" => ArgType::Bytes,
        "Option<&[u8]>" => ArgType::OptBytes,
        "bool" => ArgType::Bool,
        "u32" => ArgType::U32,
        "i32" => ArgType::I32,
        "u64" => ArgType::U64,
        "i64" => ArgType::I64,
        "usize" => ArgType::Usize,
        "&[String]" => ArgType::Strings,
        "&[(String,String)]" => ArgType::Pairs,
        _ => {
            if let Some(inner) = t
                .strip_prefix("Option<Callback<")
                .and_then(|s| s.strip_suffix(">>"))
            {
                return Some(ArgType::OptCallback(inner.to_owned()));
            }
            if let Some(inner) = t
                .strip_prefix("Callback<")
                .and_then(|s| s.strip_suffix('>'))
            {
                return Some(ArgType::Callback(inner.to_owned()));
            }
            if let Some(inner) = t
                .strip_prefix("Option<Listener<")
                .and_then(|s| s.strip_suffix(">>"))
            {
                return is_ident(inner).then(|| ArgType::Listener(inner.to_owned()));
            }
            let name = t.strip_prefix('&')?;
            if !is_ident(name) {
                return None;
            }
            ArgType::Handle(name.to_owned())
        }
    })
}

const ENUMS: &[&str] = &["Status", "ErrorClass"];

fn ret_type(t: &str) -> Option<RetType> {
    Some(match t {
        "()" | "" => RetType::Unit,
        "bool" => RetType::Bool,
        "u32" => RetType::U32,
        "i32" => RetType::I32,
        "u64" => RetType::U64,
        "i64" => RetType::I64,
        "usize" => RetType::Usize,
        "&str" => RetType::Str,
        "Option<&str>" => RetType::OptStr,
        "String" => RetType::String,
        "Option<String>" => RetType::OptString,
        "&[u8]" => RetType::ByteSlice,
        "Vec<u8>" => RetType::ByteVec,
        "Vec<String>" => RetType::Strings,
        "RecordMetadata" => RetType::RecordMetadata,
        _ => {
            if let Some(inner) = t.strip_prefix("Option<").and_then(|s| s.strip_suffix('>')) {
                return is_ident(inner).then(|| RetType::OptHandle(inner.to_owned()));
            }
            if ENUMS.contains(&t) {
                return Some(RetType::Enum(t.to_owned()));
            }
            if !is_ident(t) {
                return None;
            }
            RetType::Handle(t.to_owned())
        }
    })
}

fn parse_fn(module: &str, f: &syn::ItemFn, attr: &syn::Attribute) -> Result<BridgeFn, String> {
    let mut out = None;
    let mut fallback = None;
    let mut langs = None;
    if matches!(attr.meta, syn::Meta::List(_)) {
        attr.parse_nested_meta(|meta| {
            let value: syn::LitStr = meta.value()?.parse()?;
            if meta.path.is_ident("out") {
                out = Some(value.value());
            } else if meta.path.is_ident("fallback") {
                fallback = Some(value.value());
            } else if meta.path.is_ident("langs") {
                langs = Some(value.value());
            } else {
                return Err(meta.error("unknown bridge_fn argument"));
            }
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    }
    let docs = results::docs_of(&f.attrs);
    if docs.is_empty() {
        return Err("needs documentation (it becomes the C and Java docs)".into());
    }
    let mut args = Vec::new();
    for input in &f.sig.inputs {
        let syn::FnArg::Typed(pt) = input else {
            return Err("takes no self".into());
        };
        let name = match &*pt.pat {
            syn::Pat::Ident(i) => i.ident.to_string(),
            _ => return Err("arguments must be plain names".into()),
        };
        let t = tokens(&pt.ty);
        let ty = arg_type(&t).ok_or_else(|| format!("argument {name}: unsupported type {t}"))?;
        args.push((name, ty));
    }
    let (fallible, ret) = match &f.sig.output {
        syn::ReturnType::Default => (false, RetType::Unit),
        syn::ReturnType::Type(_, ty) => {
            let t = tokens(ty);
            match t.strip_prefix("Result<").and_then(|s| s.strip_suffix('>')) {
                Some(inner) => (
                    true,
                    ret_type(inner).ok_or_else(|| format!("unsupported result type {inner}"))?,
                ),
                None => (
                    false,
                    ret_type(&t).ok_or_else(|| format!("unsupported result type {t}"))?,
                ),
            }
        }
    };
    if !fallible && !matches!(args.first(), Some((_, ArgType::Handle(_)))) {
        return Err("an accessor (no Result) takes a handle first".into());
    }
    Ok(BridgeFn {
        name: f.sig.ident.to_string(),
        module: module.to_owned(),
        docs,
        args,
        ret,
        fallible,
        out,
        fallback,
        langs,
    })
}

/// `TopicInfo` -> `topic_info`.
pub fn snake(name: &str) -> String {
    let mut s = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                s.push('_');
            }
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

/// `producer_send_cb` -> `producerSendCb`.
pub fn camel(name: &str) -> String {
    let mut s = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            s.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            s.push(c);
        }
    }
    s
}

/// The banner of every generated file.
pub fn banner(comment: &str, what: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{comment} Generated by cursus-bridge-gen from bridge/src/api ({what}) -- do not edit."
    );
    let _ = writeln!(
        s,
        "{comment} Change the #[bridge_fn] and bridge_results! declarations there instead, then run\n{comment} `make bridge-gen`; see bridge/README.md."
    );
    s
}

/// A one-function API taking a `Listener<event>`, for the generators' tests.
#[cfg(test)]
pub(crate) fn listener_api(event: &str) -> Api {
    Api {
        fns: vec![BridgeFn {
            name: "thing_set_listener".into(),
            module: "things".into(),
            docs: vec!["Sets it.".into()],
            args: vec![
                ("thing".into(), ArgType::Handle("Thing".into())),
                ("listener".into(), ArgType::Listener(event.into())),
            ],
            ret: RetType::Unit,
            fallible: true,
            out: None,
            fallback: None,
            langs: None,
        }],
        handles: vec![event.into(), "Thing".into()],
        results: Vec::new(),
    }
}

/// A one-function API taking a `Callback<payload>`, for the generators' tests.
#[cfg(test)]
pub(crate) fn callback_api(payload: &str) -> Api {
    let mut api = listener_api(payload);
    api.fns[0].name = "thing_do".into();
    api.fns[0].args[1] = ("callback".into(), ArgType::Callback(payload.into()));
    api
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_types() {
        assert_eq!(snake("TopicPartitionList"), "topic_partition_list");
        assert_eq!(camel("consumer_poll_batch"), "consumerPollBatch");
        assert_eq!(arg_type("&[(String,String)]"), Some(ArgType::Pairs));
        assert_eq!(
            arg_type("Callback<RecordMetadata>"),
            Some(ArgType::Callback("RecordMetadata".into()))
        );
        assert_eq!(
            arg_type("Option<Callback<RecordMetadata>>"),
            Some(ArgType::OptCallback("RecordMetadata".into()))
        );
        assert_eq!(
            arg_type("&Producer"),
            Some(ArgType::Handle("Producer".into()))
        );
        assert_eq!(arg_type("&mut Producer"), None);
        assert_eq!(
            arg_type("Option<Listener<Statistics>>"),
            Some(ArgType::Listener("Statistics".into()))
        );
        assert_eq!(arg_type("Option<Listener<Vec<u8>>>"), None);
        assert_eq!(
            arg_type("Listener<Error>"),
            None,
            "a listener must be clearable"
        );
        assert_eq!(
            ret_type("Option<Message>"),
            Some(RetType::OptHandle("Message".into()))
        );
        assert_eq!(ret_type("Status"), Some(RetType::Enum("Status".into())));
        assert_eq!(ret_type("HashMap<String,String>"), None);
    }

    #[test]
    fn reads_the_real_api() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src/api");
        let api = read_api(&dir).unwrap();
        assert!(api
            .fns
            .iter()
            .any(|f| f.name == "producer_flush" && f.fallible));
        assert!(api
            .fns
            .iter()
            .any(|f| f.name == "message_offset" && !f.fallible));
        assert!(api.handles.contains(&"Producer".to_owned()));
        assert!(api
            .fns
            .iter()
            .any(|f| f.name == "consumer_set_error_listener"
                && f.args
                    .iter()
                    .any(|(_, t)| *t == ArgType::Listener("Error".into()))));
        assert!(api.handles.contains(&"LogRecord".to_owned()));
        // Everything the generators emit parses as Rust.
        syn::parse_file(&c::generate(&api)).unwrap();
        syn::parse_file(&jni::generate_rust(&api)).unwrap();
    }
}
