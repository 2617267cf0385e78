//! Generates the JNI entry points from the bridge declarations
//! (`$OUT_DIR/bridge_jni.rs`, included by `src/lib.rs`) and the Java class
//! that declares them (`$OUT_DIR/NativeBridge.java`).
//!
//! The checked-in `src/main/java/io/cursus/NativeBridge.java` must equal the
//! generated one: `tests/generated.rs` fails otherwise, and
//! `make java-bridge` rewrites it.

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("out dir"));
    let api_dir = crate_dir.join("../../bridge/src/api");
    println!("cargo:rerun-if-changed={}", api_dir.display());
    // Never unmapped: its fork hook stays registered with pthread_atfork for
    // the life of the process (src/fork_watch.rs).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    let api = cursus_bridge_gen::read_api(&api_dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        out_dir.join("bridge_jni.rs"),
        cursus_bridge_gen::jni::generate_rust(&api),
    )
    .expect("write bridge_jni.rs");
    std::fs::write(
        out_dir.join("NativeBridge.java"),
        cursus_bridge_gen::jni::generate_java(&api),
    )
    .expect("write NativeBridge.java");
}
