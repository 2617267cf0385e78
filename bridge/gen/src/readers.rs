//! How a language reads a declared result from its accessors: one
//! [`Reader`] per handle, list and flattened list level, each field with the
//! accessor calls that give it ([`Read`]). The Java, Go and C++ backends
//! render these plans in their own syntax, so the accessor names are worked
//! out once (as [`crate::results::accessors`] names them).

use crate::results::{find, join, Field, FieldType, Int, ResultType, Shape};

/// How one field is read.
#[derive(Debug, Clone)]
pub enum Read {
    /// One accessor call with the reader's indexes (`indexed`: the value
    /// comes back as an entry of a list, integers as `i64`).
    Value {
        /// The C accessor.
        accessor: String,
        /// Whether the reader is indexed.
        indexed: bool,
    },
    /// A `Vec<String>` or `Vec<integer>`: a count, then one call per entry
    /// with one more index.
    Each {
        /// The count accessor.
        count: String,
        /// The entry accessor.
        get: String,
        /// The name of the entry index.
        index: String,
    },
    /// A nested result with a handle of its own: the accessor lends a new
    /// handle, read with `of`'s reader and destroyed.
    Handle {
        /// The accessor (a call with an out-parameter).
        accessor: String,
        /// The result type (a handle or a list).
        of: String,
    },
    /// A flattened list: a count, then the item reader per entry.
    Items {
        /// The count accessor.
        count: String,
        /// The name of the entry index.
        index: String,
        /// The item reader's name.
        reader: String,
    },
}

/// What a reader builds.
#[derive(Debug, Clone)]
pub enum Builds<'a> {
    /// A value of a handle or item result, field by field.
    Struct(Vec<(&'a Field, Read)>),
    /// A list handle's entries: the count accessor and the item reader.
    List {
        /// The count accessor.
        count: String,
        /// The item reader's name.
        reader: String,
    },
}

/// One reader function.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    /// Its name in snake case (`cluster_status`, `cluster_status_partition_at`).
    pub name: String,
    /// The handle type it reads from.
    pub root: &'a ResultType,
    /// The type it builds (for a list: the item).
    pub ty: &'a ResultType,
    /// Its index arguments, outermost first.
    pub indexes: Vec<String>,
    /// What it builds.
    pub builds: Builds<'a>,
}

impl Reader<'_> {
    /// Whether it reads a whole handle (not an entry of one).
    pub fn is_root(&self) -> bool {
        self.indexes.is_empty()
    }
}

/// Every reader, handle readers first in declaration order, each followed
/// by the readers of its flattened lists.
pub fn readers(results: &[ResultType]) -> Vec<Reader<'_>> {
    let mut out = Vec::new();
    for r in results {
        match &r.shape {
            Shape::Item(_) => {}
            Shape::Handle(_) => level(results, r, r, r.prefix(), Vec::new(), &mut out),
            Shape::List(item) => {
                let t = find(results, item).expect("checked");
                let reader = format!("{}_at", r.prefix());
                out.push(Reader {
                    name: r.prefix(),
                    root: r,
                    ty: t,
                    indexes: Vec::new(),
                    builds: Builds::List {
                        count: join(&r.prefix(), "count"),
                        reader,
                    },
                });
                level(
                    results,
                    r,
                    t,
                    r.prefix(),
                    vec!["index".to_owned()],
                    &mut out,
                );
            }
        }
    }
    out
}

fn level<'a>(
    results: &'a [ResultType],
    root: &'a ResultType,
    t: &'a ResultType,
    prefix: String,
    indexes: Vec<String>,
    out: &mut Vec<Reader<'a>>,
) {
    let at = out.len();
    let name = if indexes.is_empty() {
        prefix.clone()
    } else {
        format!("{prefix}_at")
    };
    let mut fields = Vec::new();
    let mut nested = Vec::new();
    for f in &t.fields {
        let accessor = join(&prefix, f.c_name());
        let read = match &f.ty {
            FieldType::Strings | FieldType::Ints(_) => {
                let item = f.item_name();
                let get = join(&prefix, &item);
                Read::Each {
                    count: join(&get, "count"),
                    index: crate::results::index_name(&item, &indexes, &root.param()),
                    get,
                }
            }
            FieldType::Result(of) => Read::Handle {
                accessor,
                of: of.clone(),
            },
            FieldType::Results(of) => match &f.handle {
                Some(list) => Read::Handle {
                    accessor,
                    of: list.clone(),
                },
                None => {
                    let item = f.item_name();
                    let sub = join(&prefix, &item);
                    let index = crate::results::index_name(&item, &indexes, &root.param());
                    let mut inner = indexes.clone();
                    inner.push(index.clone());
                    nested.push((find(results, of).expect("checked"), sub.clone(), inner));
                    Read::Items {
                        count: join(&sub, "count"),
                        index,
                        reader: format!("{sub}_at"),
                    }
                }
            },
            _ => Read::Value {
                accessor,
                indexed: !indexes.is_empty(),
            },
        };
        fields.push((f, read));
    }
    out.insert(
        at,
        Reader {
            name,
            root,
            ty: t,
            indexes: indexes.clone(),
            builds: Builds::Struct(fields),
        },
    );
    for (t, sub, inner) in nested {
        level(results, root, t, sub, inner, out);
    }
}

/// What values of result `of` are in a language: its item type, and
/// whether they are a list of it (`of` a list handle).
pub fn values_of<'a>(results: &'a [ResultType], of: &str) -> (&'a ResultType, bool) {
    let t = find(results, of).expect("checked");
    match &t.shape {
        Shape::List(item) => (find(results, item).expect("checked"), true),
        _ => (t, false),
    }
}

/// How one language spells the declared field types.
pub struct Spelling {
    /// `u32`, `i32`, `u64`, `i64`.
    pub ints: [&'static str; 4],
    /// `bool`.
    pub boolean: &'static str,
    /// `String`.
    pub string: &'static str,
    /// `Option<String>`.
    pub opt_string: &'static str,
    /// `Option<integer>`.
    pub opt_int: fn(Int) -> String,
    /// An integer as an element of a list (Java boxes it).
    pub int_element: fn(Int) -> String,
    /// A list, `{}` standing for its element.
    pub list: &'static str,
    /// A result's name.
    pub name: fn(&ResultType) -> &str,
}

impl Spelling {
    /// An integer type.
    pub fn int(&self, i: Int) -> &'static str {
        self.ints[match i {
            Int::U32 => 0,
            Int::I32 => 1,
            Int::U64 => 2,
            Int::I64 => 3,
        }]
    }

    /// A field's type.
    pub fn field(&self, results: &[ResultType], ty: &FieldType) -> String {
        let list = |element: &str| self.list.replace("{}", element);
        let values = |of: &str| match values_of(results, of) {
            (t, true) => list((self.name)(t)),
            (t, false) => (self.name)(t).to_owned(),
        };
        match ty {
            FieldType::Int(i) => self.int(*i).to_owned(),
            FieldType::Bool => self.boolean.to_owned(),
            FieldType::Str => self.string.to_owned(),
            FieldType::OptStr => self.opt_string.to_owned(),
            FieldType::OptInt(i) => (self.opt_int)(*i),
            FieldType::Strings => list(self.string),
            FieldType::Ints(i) => list(&(self.int_element)(*i)),
            FieldType::Result(of) => values(of),
            FieldType::Results(of) => list(&values(of)),
        }
    }
}

/// `cluster_status_partition_at` -> `ClusterStatusPartitionAt`.
pub fn pascal(snake: &str) -> String {
    let c = crate::camel(snake);
    let mut chars = c.chars();
    chars
        .next()
        .map(|f| f.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// The type a language names: its own name, else the declaration's.
pub fn type_name<'a>(r: &'a ResultType, own: &'a Option<String>) -> &'a str {
    own.as_deref().unwrap_or(&r.name)
}
