//! The Java shapes of the declared results: one record per result (items
//! named `Parent.Child` are nested records of their parent), and
//! `ResultReaders`, which reads them from their handles through
//! `NativeBridge`'s accessors.

use crate::readers::{pascal, readers, type_name, Builds, Read, Reader, Spelling};
use crate::results::{FieldType, Int, ResultType, Shape};
use crate::{banner, camel};
use std::fmt::Write as _;

/// The Java name of a result (`ClusterStatus.Partition` for a nested one).
pub fn name(r: &ResultType) -> &str {
    type_name(r, &r.names.java)
}

fn field_name(f: &crate::results::Field) -> String {
    f.names.java.clone().unwrap_or_else(|| camel(&f.name))
}

const SPELLING: Spelling = Spelling {
    ints: ["int", "int", "long", "long"],
    boolean: "boolean",
    string: "String",
    opt_string: "String",
    opt_int: boxed,
    int_element: boxed,
    list: "List<{}>",
    name,
};

/// An integer as an object (nullable, or an element of a list).
fn boxed(i: Int) -> String {
    if i.narrow() { "Integer" } else { "Long" }.to_owned()
}

/// Rust docs as one Javadoc line (backticks become `{@code}`).
fn doc_text(lines: &[String]) -> String {
    let text = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    crate::jni::javadoc_line(&text)
}

fn record(s: &mut String, results: &[ResultType], r: &ResultType, indent: &str) {
    let simple = name(r).rsplit('.').next().unwrap_or_default().to_owned();
    let _ = writeln!(s, "{indent}/**");
    let _ = writeln!(s, "{indent} * {}", doc_text(&r.docs));
    let _ = writeln!(s, "{indent} *");
    for f in &r.fields {
        let _ = writeln!(
            s,
            "{indent} * @param {} {}",
            field_name(f),
            doc_text(&f.docs)
        );
    }
    let _ = writeln!(s, "{indent} */");
    let params: Vec<String> = r
        .fields
        .iter()
        .map(|f| format!("{} {}", SPELLING.field(results, &f.ty), field_name(f)))
        .collect();
    let _ = write!(s, "{indent}public record {simple}(");
    let _ = write!(
        s,
        "\n{indent}        {}",
        params.join(&format!(",\n{indent}        "))
    );
    let nested: Vec<&ResultType> = results
        .iter()
        .filter(|n| name(n).rsplit_once('.').map(|(p, _)| p) == Some(name(r)))
        .collect();
    if nested.is_empty() {
        let _ = writeln!(s, ") {{}}");
        return;
    }
    let _ = writeln!(s, ") {{");
    for n in nested {
        record(s, results, n, &format!("{indent}    "));
    }
    let _ = writeln!(s, "{indent}}}");
}

/// Every generated Java file: (file name, source). One record file per
/// top-level result, and `ResultReaders.java`.
pub fn generate(api: &crate::Api) -> Vec<(String, String)> {
    let results = &api.results;
    let mut files = Vec::new();
    for r in results
        .iter()
        .filter(|r| !matches!(r.shape, Shape::List(_)) && !name(r).contains('.'))
    {
        let mut s = banner("//", "a result record of the Java binding");
        s.push_str("package io.cursus;\n\n");
        let mut body = String::new();
        record(&mut body, results, r, "");
        if body.contains("List<") {
            s.push_str("import java.util.List;\n\n");
        }
        s.push_str(&body);
        files.push((format!("{}.java", name(r)), s));
    }
    files.push(("ResultReaders.java".to_owned(), reader_class(results)));
    files
}

fn accessor(c: &str) -> String {
    format!("NativeBridge.{}", camel(c))
}

fn call(c: &str, args: &[String]) -> String {
    format!("{}({})", accessor(c), args.join(", "))
}

fn value(ty: &FieldType, expr: String, indexed: bool) -> String {
    match ty {
        FieldType::Int(i) if indexed && i.narrow() => format!("(int) {expr}"),
        FieldType::OptInt(i) if i.narrow() => format!("optionalInt({expr})"),
        FieldType::OptInt(_) => format!("optionalLong({expr})"),
        _ => expr,
    }
}

fn reader_fn(s: &mut String, r: &Reader<'_>) {
    let mut args = vec!["h".to_owned()];
    args.extend(r.indexes.iter().map(|i| camel(i)));
    let mut params = vec!["long h".to_owned()];
    params.extend(r.indexes.iter().map(|i| format!("int {}", camel(i))));
    let (ret, body) = match &r.builds {
        Builds::List { count, reader } => (
            format!("List<{}>", name(r.ty)),
            format!(
                "list({}, index -> read{}(h, index))",
                call(count, &args),
                pascal(reader)
            ),
        ),
        Builds::Struct(fields) => {
            let reads: Vec<String> = fields
                .iter()
                .map(|(f, read)| match read {
                    Read::Value { accessor, indexed } => {
                        value(&f.ty, call(accessor, &args), *indexed)
                    }
                    Read::Each { count, get, index } => {
                        let mut more = args.clone();
                        more.push(camel(index));
                        let entry = match f.ty {
                            FieldType::Ints(i) if i.narrow() => {
                                format!("(int) {}", call(get, &more))
                            }
                            _ => call(get, &more),
                        };
                        format!("list({}, {} -> {entry})", call(count, &args), camel(index))
                    }
                    Read::Handle { accessor, of } => {
                        format!("{}({})", camel(&crate::snake(of)), call(accessor, &args))
                    }
                    Read::Items {
                        count,
                        index,
                        reader,
                    } => {
                        let mut more = args.clone();
                        more.push(camel(index));
                        format!(
                            "list({}, {} -> read{}({}))",
                            call(count, &args),
                            camel(index),
                            pascal(reader),
                            more.join(", ")
                        )
                    }
                })
                .collect();
            (
                name(r.ty).to_owned(),
                format!(
                    "new {}(\n                {})",
                    name(r.ty),
                    reads.join(",\n                ")
                ),
            )
        }
    };
    let what = crate::results::words(&r.root.name);
    if r.is_root() {
        let _ = writeln!(
            s,
            "    /** Reads a {what} handle and destroys it, even when reading fails. */"
        );
        let _ = writeln!(
            s,
            "    static {ret} {}(long handle) {{\n        try {{\n            return read{}(handle);\n        }} finally {{\n            NativeBridge.{}Destroy(handle);\n        }}\n    }}\n",
            camel(&r.name),
            pascal(&r.name),
            camel(&r.root.prefix())
        );
        let _ = writeln!(
            s,
            "    /** Reads a {what} handle (lent or owned: not destroyed). */"
        );
    } else {
        let _ = writeln!(s, "    /** Reads one entry of a {what} handle. */");
    }
    let _ = writeln!(
        s,
        "    static {ret} read{}({}) {{\n        return {body};\n    }}\n",
        pascal(&r.name),
        params.join(", ")
    );
}

fn reader_class(results: &[ResultType]) -> String {
    let mut s = banner("//", "the result readers of the Java binding");
    s.push_str(
        "package io.cursus;\n\n\
         import java.util.ArrayList;\n\
         import java.util.List;\n\
         import java.util.function.IntFunction;\n\n\
         /**\n \
         * Reads the declared results from their handles through {@link NativeBridge}'s\n \
         * accessors: {@code x(handle)} reads and destroys an owned handle, {@code readX(handle)}\n \
         * reads a lent one.\n \
         */\n\
         final class ResultReaders {\n    \
         private ResultReaders() {}\n\n    \
         /** {@code count} entries read by index, as an immutable list. */\n    \
         static <T> List<T> list(int count, IntFunction<T> entry) {\n        \
         List<T> out = new ArrayList<>(count);\n        \
         for (int i = 0; i < count; i++) {\n            \
         out.add(entry.apply(i));\n        \
         }\n        \
         return List.copyOf(out);\n    \
         }\n\n    \
         /** A {@code -1 = none} number as a nullable Integer. */\n    \
         static Integer optionalInt(long value) {\n        \
         return value < 0 ? null : (int) value;\n    \
         }\n\n    \
         /** A {@code -1 = none} number as a nullable Long. */\n    \
         static Long optionalLong(long value) {\n        \
         return value < 0 ? null : value;\n    \
         }\n\n",
    );
    for r in readers(results) {
        reader_fn(&mut s, &r);
    }
    s.push_str("}\n");
    s
}
