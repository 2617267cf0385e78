//! The C++ shapes of the declared results (`include/cursus/results.hpp`):
//! one struct per result (`std::optional` for what may be absent) and, in
//! `cursus::detail`, a `read_<name>` function that fills it from the C
//! accessors.

use crate::readers::{readers, type_name, Builds, Read, Reader, Spelling};
use crate::results::{find, Field, FieldType, Int, ResultType, Shape};
use crate::{banner, c::handle_type};
use std::fmt::Write as _;

/// The C++ name of a result.
pub fn name(r: &ResultType) -> &str {
    type_name(r, &r.names.cpp)
}

fn field_name(f: &Field) -> String {
    f.names.cpp.clone().unwrap_or_else(|| f.name.clone())
}

const SPELLING: Spelling = Spelling {
    ints: ["uint32_t", "int32_t", "uint64_t", "int64_t"],
    boolean: "bool",
    string: "std::string",
    opt_string: "std::optional<std::string>",
    opt_int: |i| format!("std::optional<{}>", SPELLING.int(i)),
    int_element: |i| SPELLING.int(i).to_owned(),
    list: "std::vector<{}>",
    name,
};

fn int(i: Int) -> &'static str {
    SPELLING.int(i)
}

fn shape_of(results: &[ResultType], of: &str) -> String {
    SPELLING.field(results, &FieldType::Result(of.to_owned()))
}

fn doc_line(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn call(c: &str, args: &[String]) -> String {
    format!("cursus_{c}({})", args.join(", "))
}

fn convert(ty: &FieldType, expr: String) -> String {
    match ty {
        FieldType::Int(i) => format!("static_cast<{}>({expr})", int(*i)),
        FieldType::Str => format!("str({expr})"),
        FieldType::OptStr => format!("opt_str({expr})"),
        FieldType::OptInt(i) => format!("opt_int<{}>({expr})", int(*i)),
        _ => expr,
    }
}

fn signature(r: &Reader<'_>) -> String {
    let mut params = vec![format!("{} *h", handle_type(&r.root.name))];
    params.extend(r.indexes.iter().map(|i| format!("size_t {i}")));
    let ret = match &r.builds {
        Builds::List { .. } => format!("std::vector<{}>", name(r.ty)),
        Builds::Struct(_) => name(r.ty).to_owned(),
    };
    format!("inline {ret} read_{}({})", r.name, params.join(", "))
}

fn reader_fn(s: &mut String, results: &[ResultType], r: &Reader<'_>) {
    let mut args = vec!["h".to_owned()];
    args.extend(r.indexes.iter().cloned());
    let what = crate::results::words(&r.root.name);
    let body = match &r.builds {
        Builds::List { count, reader } => format!(
                "  return read_entries<{}>({}, [&](size_t index) {{ return read_{reader}(h, index); }});\n",
                name(r.ty),
                call(count, &args)
            ),
        Builds::Struct(fields) => {
            let mut b = format!("  {} out{{}};\n", name(r.ty));
            for (f, read) in fields {
                let v = match read {
                    Read::Value { accessor, .. } => convert(&f.ty, call(accessor, &args)),
                    Read::Each { count, get, index } => {
                        let mut more = args.clone();
                        more.push(index.clone());
                        let (elem, entry) = match &f.ty {
                            FieldType::Ints(i) => (
                                int(*i).to_owned(),
                                format!("static_cast<{}>({})", int(*i), call(get, &more)),
                            ),
                            _ => ("std::string".to_owned(), format!("str({})", call(get, &more))),
                        };
                        format!(
                            "read_entries<{elem}>({}, [&](size_t {index}) {{ return {entry}; }})",
                            call(count, &args)
                        )
                    }
                    Read::Handle { accessor, of } => {
                        let t = handle_type(of);
                        format!(
                            "[&] {{\n    {t} *sub = nullptr;\n    {};\n    Handle<{t}, cursus_{}_destroy> owned(sub);\n    return read_{}(sub);\n  }}()",
                            call(accessor, &[args.join(", "), "&sub".into(), "nullptr".into()]),
                            crate::snake(of),
                            crate::snake(of)
                        )
                    }
                    Read::Items { count, index, reader } => {
                        let mut more = args.clone();
                        more.push(index.clone());
                        let item = match &f.ty {
                            FieldType::Results(of) => shape_of(results, of),
                            _ => unreachable!(),
                        };
                        format!(
                            "read_entries<{item}>({}, [&](size_t {index}) {{ return read_{reader}({}); }})",
                            call(count, &args),
                            more.join(", ")
                        )
                    }
                };
                let _ = writeln!(b, "  out.{} = {v};", field_name(f));
            }
            b.push_str("  return out;\n");
            b
        }
    };
    if r.is_root() {
        let _ = writeln!(s, "/// Reads a {what} handle (without destroying it).");
    } else {
        let _ = writeln!(s, "/// Reads one entry of a {what} handle.");
    }
    let _ = writeln!(s, "{} {{\n{body}}}\n", signature(r));
}

/// The C++ source of `include/cursus/results.hpp`.
pub fn generate(api: &crate::Api) -> String {
    let results = &api.results;
    let mut s = banner("//", "the result types of the C++ wrapper");
    s.push_str(
        "// cursus/results.hpp: the admin, cluster and event-store result types (part of cursus.hpp; include that).\n\
         #ifndef CURSUS_RESULTS_HPP\n#define CURSUS_RESULTS_HPP\n\n\
         #include \"error.hpp\"\n\n\
         #include <optional>\n#include <string>\n#include <vector>\n\n\
         namespace cursus {\n\n",
    );
    // Declaration order may use a type before the one it holds: items
    // first, then the rest, each kind in declaration order.
    let mut order: Vec<&ResultType> = results
        .iter()
        .filter(|r| matches!(r.shape, Shape::Item(_)))
        .collect();
    order.extend(
        results
            .iter()
            .filter(|r| matches!(r.shape, Shape::Handle(_))),
    );
    let mut emitted: Vec<&str> = Vec::new();
    while emitted.len() < order.len() {
        let before = emitted.len();
        for r in &order {
            if emitted.contains(&r.name.as_str()) {
                continue;
            }
            let ready = r.fields.iter().all(|f| match &f.ty {
                FieldType::Result(of) | FieldType::Results(of) => {
                    let of = match &find(results, of).expect("checked").shape {
                        Shape::List(item) => item.as_str(),
                        _ => of.as_str(),
                    };
                    emitted.contains(&of)
                }
                _ => true,
            });
            if !ready {
                continue;
            }
            let _ = writeln!(s, "/// {}", doc_line(&r.docs));
            let _ = writeln!(s, "struct {} {{", name(r));
            for f in &r.fields {
                let _ = writeln!(
                    s,
                    "  {} {}{{}}; ///< {}",
                    SPELLING.field(results, &f.ty),
                    field_name(f),
                    doc_line(&f.docs)
                );
            }
            let _ = writeln!(s, "}};\n");
            emitted.push(&r.name);
        }
        assert!(
            emitted.len() > before,
            "results.hpp: a cycle of nested results"
        );
    }
    s.push_str(
        "namespace detail {\n\n\
         /// A C string that may be NULL, as an optional.\n\
         inline std::optional<std::string> opt_str(const char *s) {\n  \
         return s ? std::optional<std::string>(s) : std::nullopt;\n}\n\n\
         /// A `-1 = none` number as an optional.\n\
         template <class T>\ninline std::optional<T> opt_int(int64_t v) {\n  \
         return v < 0 ? std::nullopt : std::optional<T>(static_cast<T>(v));\n}\n\n\
         /// `count` entries read by index.\n\
         template <class T, class F>\ninline std::vector<T> read_entries(size_t count, F entry) {\n  \
         std::vector<T> out;\n  out.reserve(count);\n  \
         for (size_t i = 0; i < count; i++) out.push_back(entry(i));\n  return out;\n}\n\n",
    );
    // Readers call each other in any order: declare them all first.
    let all = readers(results);
    for r in &all {
        let _ = writeln!(s, "{};", signature(r));
    }
    s.push('\n');
    for r in &all {
        reader_fn(&mut s, results, r);
    }
    s.push_str(
        "}  // namespace detail\n\n}  // namespace cursus\n\n#endif  // CURSUS_RESULTS_HPP\n",
    );
    s
}
