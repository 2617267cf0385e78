//! Registers the engine's `fork()` hook when the library is loaded, so a
//! call knows it runs in the process that made its object without asking
//! the kernel for the pid (glibc does not cache `getpid`; it was about a
//! tenth of a Go `SendAsync`). See `cursus::blocking::watch_forks`.
//!
//! The hook is a function of this library registered with `pthread_atfork`,
//! so the library must never be unmapped while the process lives: build.rs
//! links it with `-z nodelete` (a `dlclose` keeps it loaded).

/// Run by the dynamic loader when the library is loaded (an ELF
/// constructor). A static link may drop it; calls then keep the pid check.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static WATCH_FORKS_AT_LOAD: extern "C" fn() = watch_forks_at_load;

extern "C" fn watch_forks_at_load() {
    // A panic must not unwind into the loader.
    let _ = std::panic::catch_unwind(|| {
        cursus_bridge::watch_forks(|hook| {
            // SAFETY: pthread_atfork only records the pointers; `hook` is a
            // plain function of this library, which is never unloaded (see
            // the module doc), and does one atomic add, which is safe in
            // the child of a multithreaded process.
            unsafe { libc::pthread_atfork(None, None, Some(hook)) == 0 }
        })
    });
}
