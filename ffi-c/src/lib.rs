//! `libcursus`: the C ABI of the Cursus engine.
//!
//! Almost every function is generated: `cursus-bridge-gen` reads the
//! `#[bridge_fn]` and `bridge_results!` declarations of `bridge/src/api`
//! (see `bridge/README.md`) and writes one C entry point per declaration
//! and result accessor into `src/bridge_c.rs` (checked in, `make
//! bridge-gen`), included below; cbindgen turns the crate plus that file into
//! `include/cursus.h`. The hand-written part is the glue those entry points
//! call, one concern per module:
//!
//! - [`types`]: statuses, classes, delivery reports, callback types, constants;
//! - `guard`: the panic boundary and the error out-parameter;
//! - `args`: reading arguments, writing out-parameters;
//! - `lend`: NUL-terminated strings lent by handles;
//! - `callbacks`: C callbacks as bridge callbacks;
//! - `listeners`: C listeners (repeating callbacks) as bridge listeners;
//! - [`library`]: version, status names, freeing strings and buffers.
//!
//! Handles are ids into the bridge's registry, never pointers to Rust
//! objects: a NULL, destroyed or wrong-kind handle is reported as an error,
//! never dereferenced. Panics never cross the boundary.

#![warn(missing_docs)]
#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

mod args;
mod callbacks;
mod fork_watch;
mod guard;
mod lend;
pub mod library;
mod listeners;
pub mod types;

pub use library::*;
pub use types::*;

use std::ffi::{c_char, c_void};

// The entry points, generated from the bridge declarations by
// cursus-bridge-gen (checked in so reviews see them; `make bridge-gen`).
include!("bridge_c.rs");
include!(concat!(env!("OUT_DIR"), "/version.rs"));
