//! The Go shapes of the declared results (`ffi-c/go/results_gen.go`): one
//! struct per result and a `read<Name>` function that fills it from the C
//! accessors. Go conventions: exported PascalCase fields with initialisms
//! (`ID`, `HWM`), `""` for a string that is absent and `-1` for a number
//! that is absent.

use crate::readers::{pascal, readers, type_name, Builds, Read, Reader, Spelling};
use crate::results::{Field, FieldType, Int, ResultType, Shape};
use crate::{banner, c::handle_type};
use std::fmt::Write as _;

const INITIALISMS: &[&str] = &["id", "hwm", "isr", "leo", "acl", "json", "url"];

/// `member_id` -> `MemberID`.
pub fn exported(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            if INITIALISMS.contains(&w) {
                w.to_ascii_uppercase()
            } else {
                pascal(w)
            }
        })
        .collect()
}

/// The Go name of a result.
pub fn name(r: &ResultType) -> &str {
    type_name(r, &r.names.go)
}

fn field_name(f: &Field) -> String {
    f.names.go.clone().unwrap_or_else(|| exported(&f.name))
}

const SPELLING: Spelling = Spelling {
    ints: ["uint32", "int32", "uint64", "int64"],
    boolean: "bool",
    string: "string",
    opt_string: "string",
    opt_int: |_| "int64".to_owned(),
    int_element: |i| SPELLING.int(i).to_owned(),
    list: "[]{}",
    name,
};

fn int(i: Int) -> &'static str {
    SPELLING.int(i)
}

fn shape_of(results: &[ResultType], of: &str) -> String {
    SPELLING.field(results, &FieldType::Result(of.to_owned()))
}

/// A Go doc comment: `Name is the ...` when the docs start with an
/// article, `Name: ...` otherwise.
fn comment(s: &mut String, indent: &str, lead: &str, lines: &[String], plural: bool) {
    let text = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .replace('`', "");
    let verb = if plural { "are" } else { "is" };
    let sentence = match text.split_once(' ') {
        Some((first, _)) if ["The", "A", "An", "One", "When"].contains(&first) => {
            format!(
                "{lead} {verb} {}{}",
                first.to_ascii_lowercase(),
                &text[first.len()..]
            )
        }
        Some(("Whether", _)) => format!("{lead} reports w{}", &text[1..]),
        _ => format!("{lead}: {text}"),
    };
    let mut line = format!("{indent}//");
    for word in sentence.split_whitespace() {
        if line.len() + word.len() > 76 && line.len() > indent.len() + 2 {
            let _ = writeln!(s, "{line}");
            line = format!("{indent}//");
        }
        line.push(' ');
        line.push_str(word);
    }
    let _ = writeln!(s, "{line}");
}

fn call(c: &str, args: &[String]) -> String {
    format!("C.cursus_{c}({})", args.join(", "))
}

fn convert(ty: &FieldType, expr: String) -> String {
    match ty {
        FieldType::Int(i) => format!("{}({expr})", int(*i)),
        FieldType::Bool => format!("bool({expr})"),
        FieldType::Str | FieldType::OptStr => format!("goString({expr})"),
        FieldType::OptInt(_) => format!("int64({expr})"),
        _ => expr,
    }
}

fn reader_fn(s: &mut String, results: &[ResultType], r: &Reader<'_>) {
    let handle = format!("*C.{}", handle_type(&r.root.name));
    let mut args = vec!["h".to_owned()];
    args.extend(r.indexes.iter().cloned());
    let mut params = vec![format!("h {handle}")];
    params.extend(r.indexes.iter().map(|i| format!("{i} C.size_t")));
    let fname = format!("read{}", pascal(&r.name));
    let what = crate::results::words(&r.root.name);
    // Statements, not a composite literal: gofmt leaves them as written.
    let mut body = String::new();
    let ret = match &r.builds {
        Builds::List { count, reader } => {
            let _ = writeln!(
                body,
                "\treturn readEntries({}, func(index C.size_t) {} {{\n\t\treturn read{}(h, index)\n\t}})",
                call(count, &args),
                name(r.ty),
                pascal(reader)
            );
            format!("[]{}", name(r.ty))
        }
        Builds::Struct(fields) => {
            let _ = writeln!(body, "\tvar out {}", name(r.ty));
            for (f, read) in fields {
                let v = match read {
                    Read::Value { accessor, .. } => convert(&f.ty, call(accessor, &args)),
                    Read::Each { count, get, index } => {
                        let mut more = args.clone();
                        more.push(index.clone());
                        let (elem, entry) = match &f.ty {
                            FieldType::Ints(i) => {
                                (int(*i), format!("{}({})", int(*i), call(get, &more)))
                            }
                            _ => ("string", format!("goString({})", call(get, &more))),
                        };
                        format!(
                            "readEntries({}, func({index} C.size_t) {elem} {{\n\t\treturn {entry}\n\t}})",
                            call(count, &args)
                        )
                    }
                    Read::Handle { accessor, of } => {
                        let sub = crate::camel(&f.name);
                        let _ = writeln!(body, "\tvar {sub} *C.{}", handle_type(of));
                        let _ = writeln!(
                            body,
                            "\t{}",
                            call(
                                accessor,
                                &[args.join(", "), format!("&{sub}"), "nil".into()]
                            )
                        );
                        let _ =
                            writeln!(body, "\tdefer C.cursus_{}_destroy({sub})", crate::snake(of));
                        format!("read{}({sub})", pascal(&crate::snake(of)))
                    }
                    Read::Items {
                        count,
                        index,
                        reader,
                    } => {
                        let mut more = args.clone();
                        more.push(index.clone());
                        let item = match &f.ty {
                            FieldType::Results(of) => shape_of(results, of),
                            _ => unreachable!(),
                        };
                        format!(
                            "readEntries({}, func({index} C.size_t) {item} {{\n\t\treturn read{}({})\n\t}})",
                            call(count, &args),
                            pascal(reader),
                            more.join(", ")
                        )
                    }
                };
                let _ = writeln!(body, "\tout.{} = {v}", field_name(f));
            }
            body.push_str("\treturn out\n");
            name(r.ty).to_owned()
        }
    };
    if r.is_root() {
        let _ = writeln!(
            s,
            "// {fname} reads a {what} handle (without destroying it)."
        );
    } else {
        let _ = writeln!(s, "// {fname} reads one entry of a {what} handle.");
    }
    let _ = writeln!(
        s,
        "func {fname}({}) {ret} {{\n{body}}}\n",
        params.join(", ")
    );
}

/// The Go source of `results_gen.go`.
pub fn generate(api: &crate::Api) -> String {
    let results = &api.results;
    let mut s = banner("//", "the result types of the Go binding");
    s.push_str(
        "\npackage cursus\n\n// #include \"cursus.h\"\nimport \"C\"\n\n\
         // readEntries reads count entries by index (an empty, non-nil slice for none).\n\
         func readEntries[T any](count C.size_t, entry func(C.size_t) T) []T {\n\
         \tout := make([]T, 0, int(count))\n\
         \tfor i := C.size_t(0); i < count; i++ {\n\
         \t\tout = append(out, entry(i))\n\
         \t}\n\
         \treturn out\n\
         }\n\n",
    );
    for r in results
        .iter()
        .filter(|r| !matches!(r.shape, Shape::List(_)))
    {
        comment(&mut s, "", name(r), &r.docs, false);
        let _ = writeln!(s, "type {} struct {{", name(r));
        for f in &r.fields {
            let ty = SPELLING.field(results, &f.ty);
            comment(&mut s, "\t", &field_name(f), &f.docs, ty.starts_with("[]"));
            let _ = writeln!(s, "\t{} {}", field_name(f), SPELLING.field(results, &f.ty));
        }
        let _ = writeln!(s, "}}\n");
    }
    for r in readers(results) {
        reader_fn(&mut s, results, &r);
    }
    s.pop();
    s
}
