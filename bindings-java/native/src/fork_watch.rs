//! Registers the engine's `fork()` hook when the JVM loads the library, so
//! an engine call knows it runs in the process that made its object
//! without asking the kernel for the pid (glibc does not cache `getpid`; it
//! was 8–9 % of a Java send). See `cursus::blocking::watch_forks`.
//!
//! The hook is a function of this library registered with `pthread_atfork`,
//! so the library must never be unmapped while the process lives: build.rs
//! links it with `-z nodelete` (the JVM may unload a native library with
//! its class loader; the mapping then stays).

/// Hooks `fork()` for the engine (once). Where it cannot, calls keep the
/// engine's pid check.
pub(crate) fn watch() {
    cursus_bridge::watch_forks(|hook| {
        // SAFETY: pthread_atfork only records the pointers; `hook` is a plain
        // function of this library, which is never unmapped (see the module
        // doc), and does one atomic add, which is safe in the child of a
        // multithreaded process.
        unsafe { libc::pthread_atfork(None, None, Some(hook)) == 0 }
    });
}
