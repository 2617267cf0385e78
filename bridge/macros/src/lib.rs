//! `#[bridge_fn]`: marks a function of `cursus-bridge`'s `api` modules as an
//! entry point of every language binding.
//!
//! The attribute changes nothing in the compiled function: the build
//! scripts of the C ABI (`ffi-c`) and of the JNI library read the marked
//! functions from source with `cursus-bridge-gen` and generate their entry
//! points from the signature and the documentation (see
//! `bridge/README.md`). Its arguments are read there:
//!
//! - `out = "name"`: the name of the C out-parameter that receives the
//!   result (`out_name`); default `out_value`, or the handle kind.
//! - `fallback = "expr"`: for accessors, what C gets for an invalid handle
//!   (default: `0`, `false` or NULL by type).
//! - `destroy`: the function releases its handle (C `*_destroy`).

use proc_macro::TokenStream;

/// Marks a bridge entry point (see the crate docs); expands to the item
/// unchanged.
#[proc_macro_attribute]
pub fn bridge_fn(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
