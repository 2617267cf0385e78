//! Generates the C header with cbindgen into `$OUT_DIR/cursus.h`.
//!
//! The checked-in `include/cursus.h` must equal it: `tests/header.rs` fails
//! otherwise, and `CURSUS_UPDATE_HEADER=1 cargo test -p cursus-ffi --test header`
//! (or `make ffi-header`) rewrites the checked-in copy.

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("cursus.h");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    // The shared library's soname, so programs linked with -lcursus need libcursus.so.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcursus.so");
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not generate the header")
        .write_to_file(&out);
}
