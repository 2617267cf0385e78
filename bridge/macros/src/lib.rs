//! The markers of `cursus-bridge`'s `api` modules.
//!
//! - `#[bridge_fn]` marks a function as an entry point of every language
//!   binding. It changes nothing in the compiled function: the C and JNI
//!   entry points are generated from its signature and docs by
//!   `cursus-bridge-gen` (see `bridge/README.md`). Its arguments, read
//!   there:
//!   - `out = "name"`: the name of the C out-parameter that receives the
//!     result (`out_name`); default `out_value`, or the handle kind.
//!   - `fallback = "expr"`: for accessors, what C gets for an invalid handle
//!     (default: `0`, `false` or NULL by type; for an enum, a variant name).
//!   - `langs = "c"`: generate it for these languages only (`c`, `jni`).
//! - `bridge_results! { ... }` declares result types: structs naming the
//!   engine fields every language shows. It expands to the type names, their
//!   `Handle` impls and their accessor functions; the generator writes each
//!   language's shape from the same declarations (`bridge/README.md`).

use proc_macro::TokenStream;

/// Marks a bridge entry point (see the crate docs); expands to the item
/// unchanged.
#[proc_macro_attribute]
pub fn bridge_fn(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// Declares result types (see the crate docs): expands to their type
/// names, `Handle` impls and accessor functions.
#[proc_macro]
pub fn bridge_results(input: TokenStream) -> TokenStream {
    let expanded = cursus_bridge_gen::results::parse_block("", input.into()).and_then(|block| {
        cursus_bridge_gen::results::check_block(&block)?;
        Ok(cursus_bridge_gen::results::expand(&block))
    });
    match expanded {
        Ok(code) => code.parse().unwrap_or_else(|e| {
            panic!("bridge_results: generated code does not parse: {e}\n{code}")
        }),
        Err(e) => format!("compile_error!({:?});", format!("bridge_results: {e}"))
            .parse()
            .expect("compile_error"),
    }
}
