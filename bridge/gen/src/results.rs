//! Result types declared once: the `bridge_results! { ... }` blocks of
//! `bridge/src/api`, read here into [`ResultType`]s.
//!
//! A result is plain data the engine returns (a topic's definition, a
//! cluster's status, a replay proof). Its declaration lists the engine
//! fields every language shows, with their docs; from it come
//!
//! - the bridge's accessor entry points ([`accessors`], expanded by the
//!   `bridge_results!` macro and turned into C and JNI functions like any
//!   `#[bridge_fn]`), and
//! - each language's shape and its reading from those accessors
//!   ([`crate::java`], [`crate::golang`], [`crate::cpp`], [`crate::python`]).
//!
//! Three shapes: `#[result(engine = "path")]` is a handle of its own;
//! `#[result(engine = "path", item)]` is only reached through a parent's
//! list (its accessors take the parent handle and one index per level);
//! `#[result(list)] struct XList(pub Vec<Item>);` is a list handle.

use crate::{snake, ArgType, BridgeFn, RetType};
use std::fmt::Write as _;

/// An integer field type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int {
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// `i64`.
    I64,
}

impl Int {
    fn parse(t: &str) -> Option<Int> {
        Some(match t {
            "u32" => Int::U32,
            "i32" => Int::I32,
            "u64" => Int::U64,
            "i64" => Int::I64,
            _ => return None,
        })
    }

    /// The Rust name.
    pub fn rust(self) -> &'static str {
        match self {
            Int::U32 => "u32",
            Int::I32 => "i32",
            Int::U64 => "u64",
            Int::I64 => "i64",
        }
    }

    fn ret(self) -> RetType {
        match self {
            Int::U32 => RetType::U32,
            Int::I32 => RetType::I32,
            Int::U64 => RetType::U64,
            Int::I64 => RetType::I64,
        }
    }

    /// Whether it has 32 bits (Java `int`).
    pub fn narrow(self) -> bool {
        matches!(self, Int::U32 | Int::I32)
    }
}

/// The type of a declared field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    /// An integer.
    Int(Int),
    /// `bool`.
    Bool,
    /// `String`.
    Str,
    /// `Option<String>`.
    OptStr,
    /// `Option<integer>`.
    OptInt(Int),
    /// `Vec<String>`.
    Strings,
    /// `Vec<integer>`.
    Ints(Int),
    /// Another result with a handle of its own (a clone is lent as a new
    /// handle).
    Result(String),
    /// `Vec<Item>` of an item (or handle) result.
    Results(String),
}

/// One declared field.
#[derive(Debug, Clone)]
pub struct Field {
    /// The engine's field name (Python's name too).
    pub name: String,
    /// Its documentation.
    pub docs: Vec<String>,
    /// Its type.
    pub ty: FieldType,
    /// `c = "..."`: the name in C accessor names (default: `name`).
    pub c: Option<String>,
    /// `item = "..."`: the name of one element of a list in C accessor
    /// names (default: `name` without a final `s`).
    pub item: Option<String>,
    /// `handle = "XList"`: a `Vec<Item>` lent as a list handle of that type
    /// (instead of flattened accessors with an index).
    pub handle: Option<String>,
    /// Per-language names (`java`, `go`, `cpp`, `py`).
    pub names: Names,
}

/// Names in one language, where they differ from the default.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Java.
    pub java: Option<String>,
    /// Go.
    pub go: Option<String>,
    /// C++.
    pub cpp: Option<String>,
    /// Python.
    pub py: Option<String>,
}

/// What a declaration is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A handle of its own, read from the engine type at this path.
    Handle(String),
    /// Only reached through a parent's list.
    Item(String),
    /// A list handle of this item type.
    List(String),
}

/// One declared result.
#[derive(Debug, Clone)]
pub struct ResultType {
    /// The bridge's name (`ClusterStatus`).
    pub name: String,
    /// The `api` module it is declared in.
    pub module: String,
    /// Its documentation.
    pub docs: Vec<String>,
    /// What it is.
    pub shape: Shape,
    /// `kind = "..."`: the handle kind in error messages (default: the
    /// name's words).
    pub kind: Option<String>,
    /// Per-language type names.
    pub names: Names,
    /// The fields (none for a list).
    pub fields: Vec<Field>,
}

impl ResultType {
    /// The C prefix of its accessors (`cluster_status`).
    pub fn prefix(&self) -> String {
        snake(&self.name)
    }

    /// The name of its handle argument (`status` for `ClusterStatus`).
    pub fn param(&self) -> String {
        let s = self.prefix();
        s.rsplit('_').next().unwrap_or(&s).to_owned()
    }

    /// The engine path of a handle or item.
    pub fn engine(&self) -> Option<&str> {
        match &self.shape {
            Shape::Handle(p) | Shape::Item(p) => Some(p),
            Shape::List(_) => None,
        }
    }
}

impl Field {
    /// The name in C accessor names.
    pub fn c_name(&self) -> &str {
        self.c.as_deref().unwrap_or(&self.name)
    }

    /// The C name of one element of a list field.
    pub fn item_name(&self) -> String {
        self.item.clone().unwrap_or_else(|| {
            let n = self.c_name();
            n.strip_suffix('s').unwrap_or(n).to_owned()
        })
    }
}

/// `a` and `b` joined by `_`, either may be empty.
pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}_{b}"),
    }
}

/// Every `bridge_results!` declaration, in order.
pub type Results = Vec<ResultType>;

/// Finds a declaration by name.
pub fn find<'a>(results: &'a [ResultType], name: &str) -> Option<&'a ResultType> {
    results.iter().find(|r| r.name == name)
}

/// The `///` lines of an item, without their leading space.
pub(crate) fn docs_of(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => {
                    let v = s.value();
                    Some(v.strip_prefix(' ').map(str::to_owned).unwrap_or(v))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The `name = "value"` pairs and bare flags of `#[attr(...)]`.
fn attr_args(attrs: &[syn::Attribute], attr: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident(attr)) {
        if matches!(a.meta, syn::Meta::Path(_)) {
            continue;
        }
        a.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            let value = if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::LitStr>()?.value()
            } else {
                String::new()
            };
            out.push((key, value));
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    }
    Ok(out)
}

fn field_type(t: &str) -> Option<FieldType> {
    if let Some(i) = Int::parse(t) {
        return Some(FieldType::Int(i));
    }
    Some(match t {
        "bool" => FieldType::Bool,
        "String" => FieldType::Str,
        "Option<String>" => FieldType::OptStr,
        "Vec<String>" => FieldType::Strings,
        _ => {
            if let Some(inner) = t.strip_prefix("Option<").and_then(|s| s.strip_suffix('>')) {
                return Int::parse(inner).map(FieldType::OptInt);
            }
            if let Some(inner) = t.strip_prefix("Vec<").and_then(|s| s.strip_suffix('>')) {
                return Int::parse(inner).map(FieldType::Ints).or_else(|| {
                    crate::is_ident(inner).then(|| FieldType::Results(inner.to_owned()))
                });
            }
            return crate::is_ident(t).then(|| FieldType::Result(t.to_owned()));
        }
    })
}

fn names(args: &[(String, String)]) -> Names {
    let get = |k: &str| args.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    Names {
        java: get("java"),
        go: get("go"),
        cpp: get("cpp"),
        py: get("py"),
    }
}

const RESULT_ARGS: &[&str] = &["engine", "item", "list", "kind", "java", "go", "cpp", "py"];
const FIELD_ARGS: &[&str] = &["c", "item", "handle", "java", "go", "cpp", "py"];

fn check_args(args: &[(String, String)], known: &[&str], what: &str) -> Result<(), String> {
    match args.iter().find(|(k, _)| !known.contains(&k.as_str())) {
        Some((k, _)) => Err(format!("unknown {what} argument {k:?} (known: {known:?})")),
        None => Ok(()),
    }
}

/// Reads one declaration.
pub fn parse_struct(module: &str, s: &syn::ItemStruct) -> Result<ResultType, String> {
    let name = s.ident.to_string();
    let args = attr_args(&s.attrs, "result").map_err(|e| format!("{name}: {e}"))?;
    check_args(&args, RESULT_ARGS, "#[result]").map_err(|e| format!("{name}: {e}"))?;
    let get = |k: &str| args.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let docs = docs_of(&s.attrs);
    if docs.is_empty() {
        return Err(format!("{name}: needs documentation"));
    }
    let mut fields = Vec::new();
    let shape = if get("list").is_some() {
        let syn::Fields::Unnamed(u) = &s.fields else {
            return Err(format!("{name}: a list is `struct {name}(pub Vec<Item>);`"));
        };
        let t = u
            .unnamed
            .first()
            .map(|f| crate::tokens(&f.ty))
            .unwrap_or_default();
        match field_type(&t) {
            Some(FieldType::Results(item)) if u.unnamed.len() == 1 => Shape::List(item),
            _ => return Err(format!("{name}: a list holds one Vec<Item>, not {t}")),
        }
    } else {
        let engine = get("engine").ok_or_else(|| format!("{name}: #[result(engine = ...)]"))?;
        for f in &s.fields {
            let fname = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
            let t = crate::tokens(&f.ty);
            let ty = field_type(&t)
                .ok_or_else(|| format!("{name}.{fname}: unsupported field type {t}"))?;
            let fargs = attr_args(&f.attrs, "field").map_err(|e| format!("{name}.{fname}: {e}"))?;
            check_args(&fargs, FIELD_ARGS, "#[field]")
                .map_err(|e| format!("{name}.{fname}: {e}"))?;
            let fget = |k: &str| fargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            let docs = docs_of(&f.attrs);
            if docs.is_empty() {
                return Err(format!("{name}.{fname}: needs documentation"));
            }
            let handle = fget("handle");
            if handle.is_some() && !matches!(ty, FieldType::Results(_)) {
                return Err(format!(
                    "{name}.{fname}: handle = ... is for Vec<Item> fields"
                ));
            }
            fields.push(Field {
                name: fname,
                docs,
                ty,
                c: fget("c"),
                item: fget("item"),
                handle,
                names: names(&fargs),
            });
        }
        if get("item").is_some() {
            Shape::Item(engine)
        } else {
            Shape::Handle(engine)
        }
    };
    Ok(ResultType {
        name,
        module: module.to_owned(),
        docs,
        shape,
        kind: get("kind"),
        names: names(&args),
        fields,
    })
}

/// Reads the structs of one `bridge_results! { ... }` block.
pub fn parse_block(module: &str, tokens: proc_macro2::TokenStream) -> Result<Results, String> {
    let structs = syn::parse::Parser::parse2(
        |input: syn::parse::ParseStream<'_>| {
            let mut out = Vec::new();
            while !input.is_empty() {
                out.push(input.parse::<syn::ItemStruct>()?);
            }
            Ok(out)
        },
        tokens,
    )
    .map_err(|e| e.to_string())?;
    structs.iter().map(|s| parse_struct(module, s)).collect()
}

/// Checks that every referenced result is declared with a fitting shape.
pub fn check(results: &[ResultType]) -> Result<(), String> {
    for r in results {
        for f in &r.fields {
            let at = format!("{}.{}", r.name, f.name);
            match &f.ty {
                FieldType::Result(t) => match find(results, t).map(|t| &t.shape) {
                    Some(Shape::Handle(_)) => {}
                    _ => return Err(format!("{at}: {t} is not a declared handle result")),
                },
                FieldType::Results(t) => {
                    if find(results, t).is_none() {
                        return Err(format!("{at}: {t} is not a declared result"));
                    }
                    if let Some(h) = &f.handle {
                        match find(results, h).map(|l| &l.shape) {
                            Some(Shape::List(item)) if item == t => {}
                            _ => return Err(format!("{at}: {h} is not a list of {t}")),
                        }
                    }
                }
                _ => {}
            }
        }
        if let Shape::List(item) = &r.shape {
            if find(results, item).is_none() {
                return Err(format!("{}: {item} is not a declared result", r.name));
            }
        }
    }
    Ok(())
}

/// Checks what one block can expand alone: the items it flattens and the
/// lists' items are declared in the same block (handles it only names may
/// be declared elsewhere).
pub fn check_block(block: &[ResultType]) -> Result<(), String> {
    for r in block {
        let missing = |t: &str| find(block, t).is_none();
        if let Shape::List(item) = &r.shape {
            if missing(item) {
                return Err(format!(
                    "{}: its item {item} must be declared in the same block",
                    r.name
                ));
            }
        }
        for f in &r.fields {
            if let (FieldType::Results(t), None) = (&f.ty, &f.handle) {
                if missing(t) {
                    return Err(format!(
                        "{}.{}: {t} must be declared in the same block",
                        r.name, f.name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// One accessor entry point of a result, with the Rust body the macro
/// writes for it.
#[derive(Debug, Clone)]
pub struct Accessor {
    /// The entry point, as the C and JNI generators see it.
    pub f: BridgeFn,
    /// The Rust type of its handle argument (`crate::api::ClusterStatus`).
    pub handle_type: String,
    /// The Rust result type.
    pub rust_ret: String,
    /// The body expression.
    pub body: String,
}

/// Where the fields being read are: the handle itself, or an element
/// reached through indexes (`base` is then an `Option<&T>` expression).
struct Level<'a> {
    prefix: String,
    indexes: Vec<String>,
    base: Option<String>,
    item: &'a str,
}

/// The accessors of every handle and list declaration.
pub fn accessors(results: &[ResultType]) -> Vec<Accessor> {
    let mut out = Vec::new();
    for r in results {
        match &r.shape {
            Shape::Item(_) => {}
            Shape::Handle(_) => {
                let level = Level {
                    prefix: r.prefix(),
                    indexes: Vec::new(),
                    base: None,
                    item: "",
                };
                fields(results, r, r, &level, &mut out);
            }
            Shape::List(item) => {
                let p = r.param();
                let t = find(results, item).expect("checked");
                push(
                    &mut out,
                    r,
                    &join(&r.prefix(), "count"),
                    &[],
                    vec![format!("The number of {} entries.", words(item))],
                    RetType::Usize,
                    None,
                    format!("{p}.0.len()"),
                );
                let level = Level {
                    prefix: r.prefix(),
                    indexes: vec!["index".to_owned()],
                    base: Some(format!("{p}.0.get(index)")),
                    item: "",
                };
                fields(results, r, t, &level, &mut out);
            }
        }
    }
    out
}

/// `ClusterBroker` -> `cluster broker`.
pub fn words(name: &str) -> String {
    snake(name).replace('_', " ")
}

#[allow(clippy::too_many_arguments)]
fn push(
    out: &mut Vec<Accessor>,
    root: &ResultType,
    name: &str,
    indexes: &[String],
    mut docs: Vec<String>,
    ret: RetType,
    fallback: Option<&str>,
    body: String,
) {
    let fallible = matches!(ret, RetType::Handle(_));
    let rust_ret = match &ret {
        RetType::Bool => "bool".to_owned(),
        RetType::U32 => "u32".to_owned(),
        RetType::I32 => "i32".to_owned(),
        RetType::U64 => "u64".to_owned(),
        RetType::I64 => "i64".to_owned(),
        RetType::Usize => "usize".to_owned(),
        RetType::Str => "&str".to_owned(),
        RetType::OptStr => "Option<&str>".to_owned(),
        RetType::Handle(h) => format!("::cursus::Result<crate::api::{h}>"),
        other => unreachable!("no result accessor returns {other:?}"),
    };
    docs.push(String::new());
    docs.push(
        if matches!(ret, RetType::Str | RetType::OptStr) {
            "Thread-safety: safe from any thread while the handle is alive."
        } else {
            "Thread-safety: safe from any thread."
        }
        .to_owned(),
    );
    let param = root.param();
    let mut args = vec![(param, ArgType::Handle(root.name.clone()))];
    args.extend(indexes.iter().map(|i| (i.clone(), ArgType::Usize)));
    out.push(Accessor {
        f: BridgeFn {
            name: name.to_owned(),
            module: root.module.clone(),
            docs,
            args,
            ret,
            fallible,
            out: None,
            fallback: fallback.map(str::to_owned),
            langs: None,
        },
        handle_type: format!("crate::api::{}", root.name),
        rust_ret,
        body,
    });
}

fn fields(
    results: &[ResultType],
    root: &ResultType,
    t: &ResultType,
    level: &Level<'_>,
    out: &mut Vec<Accessor>,
) {
    let root_var = root.param();
    let indexed = level.base.is_some();
    let base = level.base.as_deref().unwrap_or_default();
    // How an entry of a list says it is out of range, as a docs paragraph.
    let range_note = |docs: &mut Vec<String>, none: &str| {
        if indexed {
            let list = match level.item {
                "" => "the".to_owned(),
                item => format!("the {}", item.replace('_', " ")),
            };
            let index = level.indexes.last().map_or("index", String::as_str);
            docs.push(String::new());
            docs.push(format!(
                "Of {list} entry `{index}` ({none} when out of range)."
            ));
        }
    };
    for f in &t.fields {
        let name = join(&level.prefix, f.c_name());
        let mut docs = f.docs.clone();
        // `<root>.<field>` of the handle, or `e.<field>` of the entry.
        let top = |expr: &str| expr.replace("{v}", &format!("{root_var}.{}", f.name));
        let elem = |map: &str, expr: &str| {
            format!(
                "{base}.{map}(|e| {})",
                expr.replace("{v}", &format!("e.{}", f.name))
            )
        };
        // A value read by one accessor: (result, fallback, "none" in the
        // docs, body).
        let scalar = match &f.ty {
            FieldType::Int(_) if indexed => Some((
                RetType::I64,
                Some("-1"),
                "-1",
                format!("{base}.map_or(-1, |e| e.{} as i64)", f.name),
            )),
            FieldType::Int(i) => Some((i.ret(), None, "", top("{v}"))),
            FieldType::Bool if indexed => {
                Some((RetType::Bool, None, "false", elem("is_some_and", "{v}")))
            }
            FieldType::Bool => Some((RetType::Bool, None, "", top("{v}"))),
            FieldType::Str if indexed => {
                Some((RetType::OptStr, None, "none", elem("map", "{v}.as_str()")))
            }
            FieldType::Str => Some((RetType::Str, None, "", top("&{v}"))),
            FieldType::OptStr if indexed => Some((
                RetType::OptStr,
                None,
                "none",
                elem("and_then", "{v}.as_deref()"),
            )),
            FieldType::OptStr => Some((RetType::OptStr, None, "", top("{v}.as_deref()"))),
            FieldType::OptInt(_) => {
                docs.push(String::new());
                docs.push("-1 when there is none.".to_owned());
                let body = if indexed {
                    format!("{}.map_or(-1, |v| v as i64)", elem("and_then", "{v}"))
                } else {
                    top("{v}.map_or(-1, |v| v as i64)")
                };
                Some((RetType::I64, Some("-1"), "-1", body))
            }
            _ => None,
        };
        if let Some((ret, fallback, none, body)) = scalar {
            range_note(&mut docs, none);
            push(out, root, &name, &level.indexes, docs, ret, fallback, body);
            continue;
        }
        match &f.ty {
            FieldType::Result(_) | FieldType::Results(_)
                if matches!(f.ty, FieldType::Result(_)) || f.handle.is_some() =>
            {
                // A nested handle, or a list lent as a list handle.
                assert!(
                    !indexed,
                    "{}.{}: a nested handle inside a list",
                    t.name, f.name
                );
                let (of, body) = match (&f.ty, &f.handle) {
                    (_, Some(list)) => {
                        (list, top(&format!("Ok(crate::api::{list}({{v}}.clone()))")))
                    }
                    (FieldType::Result(of), None) => (of, top("Ok({v}.clone())")),
                    _ => unreachable!(),
                };
                docs.push(String::new());
                docs.push(format!(
                    "A {} handle of its own (destroy it too).",
                    words(of)
                ));
                push(
                    out,
                    root,
                    &name,
                    &[],
                    docs,
                    RetType::Handle(of.clone()),
                    None,
                    body,
                );
                name_out(out, f);
            }
            _ => {
                // A list: its count, then its entries with one more index.
                let item = f.item_name();
                let sub = join(&level.prefix, &item);
                let mut count_docs = vec![format!(
                    "The number of {} entries: {}",
                    item.replace('_', " "),
                    f.docs.join(" ")
                )];
                range_note(&mut count_docs, "0");
                let len = if indexed {
                    format!("{base}.map_or(0, |e| e.{}.len())", f.name)
                } else {
                    top("{v}.len()")
                };
                let count = join(&sub, "count");
                push(
                    out,
                    root,
                    &count,
                    &level.indexes,
                    count_docs,
                    RetType::Usize,
                    None,
                    len,
                );
                let n = index_name(&item, &level.indexes, &root_var);
                let mut indexes = level.indexes.clone();
                indexes.push(n.clone());
                let get = if indexed {
                    elem("and_then", &format!("{{v}}.get({n})"))
                } else {
                    top(&format!("{{v}}.get({n})"))
                };
                match &f.ty {
                    FieldType::Results(item_type) => {
                        let inner = Level {
                            prefix: sub,
                            indexes,
                            base: Some(get),
                            item: &item,
                        };
                        let t = find(results, item_type).expect("checked");
                        fields(results, root, t, &inner, out);
                    }
                    ty => {
                        let (ret, fallback, none, body) = match ty {
                            FieldType::Ints(_) => (
                                RetType::I64,
                                Some("-1"),
                                "-1",
                                format!("{get}.map_or(-1, |v| *v as i64)"),
                            ),
                            _ => (
                                RetType::OptStr,
                                None,
                                "None",
                                format!("{get}.map(String::as_str)"),
                            ),
                        };
                        let entry_docs = vec![
                            format!(
                                "Entry `{n}` of the {} entries: {}",
                                item.replace('_', " "),
                                f.docs.join(" ")
                            ),
                            String::new(),
                            format!("{none} when out of range."),
                        ];
                        push(out, root, &sub, &indexes, entry_docs, ret, fallback, body);
                    }
                }
            }
        }
    }
}

/// A sub-handle's C out-parameter is named after its field.
fn name_out(out: &mut [Accessor], f: &Field) {
    if let Some(a) = out.last_mut() {
        a.f.out = Some(f.name.clone());
    }
}

/// The name of the index argument of a list's elements: `index` first,
/// then the item's name.
pub fn index_name(item: &str, taken: &[String], root: &str) -> String {
    let candidate = if taken.is_empty() {
        "index".to_owned()
    } else {
        item.to_owned()
    };
    if candidate == root || taken.contains(&candidate) {
        format!("{candidate}_index")
    } else {
        candidate
    }
}

/// The Rust the `bridge_results!` macro expands a block to: the type
/// names, the `Handle` impls and the accessor functions.
pub fn expand(results: &[ResultType]) -> String {
    let mut s = String::new();
    for r in results {
        for d in &r.docs {
            let _ = writeln!(s, "#[doc = {d:?}]");
        }
        match &r.shape {
            Shape::Handle(engine) | Shape::Item(engine) => {
                let _ = writeln!(s, "pub type {} = {engine};", r.name);
            }
            Shape::List(item) => {
                let _ = writeln!(
                    s,
                    "#[derive(Debug, Clone, Default, PartialEq, Eq)]\npub struct {}(pub Vec<{item}>);",
                    r.name
                );
            }
        }
        if !matches!(r.shape, Shape::Item(_)) {
            let kind = r.kind.clone().unwrap_or_else(|| words(&r.name));
            let _ = writeln!(
                s,
                "impl crate::registry::Handle for {} {{ const KIND: &'static str = {kind:?}; }}",
                r.name
            );
        }
    }
    for a in accessors(results) {
        for d in &a.f.docs {
            let _ = writeln!(s, "#[doc = {d:?}]");
        }
        let params: Vec<String> =
            a.f.args
                .iter()
                .map(|(n, t)| match t {
                    ArgType::Handle(_) => format!("{n}: &{}", a.handle_type),
                    _ => format!("{n}: usize"),
                })
                .collect();
        let _ = writeln!(
            s,
            "pub fn {}({}) -> {} {{ {} }}",
            a.f.name,
            params.join(", "),
            a.rust_ret,
            a.body
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(src: &str) -> Result<Results, String> {
        let tokens: proc_macro2::TokenStream = src.parse().unwrap();
        let block = parse_block("m", tokens)?;
        check_block(&block)?;
        check(&block)?;
        Ok(block)
    }

    #[test]
    fn a_declaration_needs_docs_a_known_type_and_known_arguments() {
        let undocumented = "#[result(engine = \"e::T\")] /// T.\n pub struct T { pub a: u32 }";
        assert!(block(undocumented)
            .unwrap_err()
            .contains("T.a: needs documentation"));
        let float = "/// T.\n #[result(engine = \"e::T\")] pub struct T { /// A.\n pub a: f64 }";
        assert!(block(float)
            .unwrap_err()
            .contains("unsupported field type f64"));
        let unknown = "/// T.\n #[result(engine = \"e::T\", colour = \"red\")] pub struct T {}";
        assert!(block(unknown)
            .unwrap_err()
            .contains("unknown #[result] argument"));
        let no_engine = "/// T.\n #[result] pub struct T {}";
        assert!(block(no_engine).unwrap_err().contains("engine"));
    }

    #[test]
    fn a_flattened_item_must_be_in_the_same_block() {
        let src = "/// T.\n #[result(engine = \"e::T\")] pub struct T { /// Xs.\n pub xs: Vec<X> }";
        assert!(block(src)
            .unwrap_err()
            .contains("X must be declared in the same block"));
        let handle = "/// T.\n #[result(engine = \"e::T\")] pub struct T { /// U.\n pub u: U }";
        assert!(block(handle)
            .unwrap_err()
            .contains("U is not a declared handle result"));
    }

    #[test]
    fn accessors_flatten_lists_with_one_index_per_level() {
        let b = block(
            "/// T.\n #[result(engine = \"e::T\")] pub struct T {
                /// Rows.\n pub rows: Vec<Row>,
                /// Limit.\n pub limit: Option<u32>,
             }
             /// Row.\n #[result(engine = \"e::Row\", item)] pub struct Row {
                /// Cells.\n pub cells: Vec<String>,
                /// Id.\n #[field(c = \"id\")] pub row_id: u64,
             }",
        )
        .unwrap();
        let names: Vec<(String, usize)> = accessors(&b)
            .iter()
            .map(|a| (a.f.name.clone(), a.f.args.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("t_row_count".to_owned(), 1),
                ("t_row_cell_count".to_owned(), 2),
                ("t_row_cell".to_owned(), 3),
                ("t_row_id".to_owned(), 2),
                ("t_limit".to_owned(), 1),
            ]
        );
        let a = accessors(&b);
        // Entries of a list come back as i64, -1 out of range; an optional
        // number as i64, -1 for none.
        assert_eq!(a[3].f.ret, RetType::I64);
        assert_eq!(a[3].f.fallback.as_deref(), Some("-1"));
        assert_eq!(a[4].body, "t.limit.map_or(-1, |v| v as i64)");
        assert_eq!(
            a[2].body,
            "t.rows.get(index).and_then(|e| e.cells.get(cell)).map(String::as_str)"
        );
        syn::parse_file(&expand(&b)).unwrap();
    }
}
