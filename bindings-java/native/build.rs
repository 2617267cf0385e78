//! Links the JNI library so it is never unmapped. Its entry points
//! (`src/bridge_jni.rs`) and the Java class that declares them
//! (`NativeBridge.java`) are generated from the bridge declarations by
//! cursus-bridge-gen and checked in (`make bridge-gen`; the generator's
//! `tests/generated.rs` fails when they are stale).

fn main() {
    // Never unmapped: its fork hook stays registered with pthread_atfork for
    // the life of the process (src/fork_watch.rs).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
