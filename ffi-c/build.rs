//! Generates the C header with cbindgen (`$OUT_DIR/cursus.h`) from the C
//! entry points (`src/bridge_c.rs`, checked in: written by
//! cursus-bridge-gen from the bridge declarations, `make bridge-gen`) and
//! the version constants (`$OUT_DIR/version.rs`).
//!
//! The checked-in `include/cursus.h` must equal the generated one:
//! `tests/header.rs` fails otherwise, and `make ffi-header` rewrites it.

use std::fmt::Write as _;
use std::path::PathBuf;

/// The ABI version in the SONAME: `0.<minor>` before 1.0 (a minor release
/// may break the ABI then), the major version after.
fn abi_version(major: &str, minor: &str) -> String {
    if major == "0" {
        format!("0.{minor}")
    } else {
        major.to_owned()
    }
}

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("out dir"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");

    let mut code = String::new();
    let package_version = std::env::var("CARGO_PKG_VERSION").expect("version");
    let [major, minor, patch] = ["MAJOR", "MINOR", "PATCH"]
        .map(|p| std::env::var(format!("CARGO_PKG_VERSION_{p}")).expect("version part"));
    let abi = abi_version(&major, &minor);
    for (name, value, what) in [
        ("MAJOR", &major, "Major"),
        ("MINOR", &minor, "Minor"),
        ("PATCH", &patch, "Patch"),
    ] {
        let _ = writeln!(
            code,
            "/// {what} version of the library this header belongs to.\npub const CURSUS_VERSION_{name}: u32 = {value};"
        );
    }
    let version = out_dir.join("version.rs");
    std::fs::write(&version, code).expect("write version.rs");

    // The shared library's soname carries the ABI version, so a program
    // linked against 0.1 never loads an incompatible 0.2.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcursus.so.{abi}");
    // Never unmapped by dlclose: its fork hook stays registered with
    // pthread_atfork for the life of the process (src/fork_watch.rs).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!("cargo:rustc-env=CURSUS_ABI_VERSION={abi}");

    let mut config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    // cbindgen has no string constants: the version string is written here.
    config.after_includes = Some(format!(
        "\n// The version this header belongs to; cursus_version() gives the library's.\n\
         #define CURSUS_VERSION_STRING \"{package_version}\"\n\
         // The ABI version in the library's SONAME (`libcursus.so.<abi>`).\n\
         #define CURSUS_ABI_VERSION \"{abi}\""
    ));
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_src(crate_dir.join("src/bridge_c.rs"))
        .with_src(&version)
        .with_config(config)
        .generate()
        .expect("cbindgen could not generate the header")
        .write_to_file(out_dir.join("cursus.h"));
}
