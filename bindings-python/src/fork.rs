//! Registers the engine's `fork()` hook (`cursus::blocking::watch_forks`)
//! when the module is loaded, so an engine call knows it runs in the
//! process that made its object without asking the kernel for the pid
//! (glibc does not cache `getpid`; before, it was a fifth of a `send`,
//! issue #20). After a `fork()` the engine asks for the pid again, so a
//! forked child still gets `used_after_fork`.
//!
//! The hook is a function of this extension registered with
//! `pthread_atfork`; CPython never unloads an extension module, so it stays
//! mapped while the process lives.

/// Hooks `fork()` for the engine (once; later calls do nothing). Where it
/// cannot, calls keep the engine's pid check.
pub(crate) fn watch() {
    #[cfg(unix)]
    cursus::blocking::watch_forks(|hook| {
        // SAFETY: pthread_atfork only records the pointers; `hook` is a plain
        // function of the engine linked into this extension, which CPython
        // never unloads (see the module doc), and does one atomic add, which
        // is safe in the child of a multithreaded process.
        unsafe { libc::pthread_atfork(None, None, Some(hook)) == 0 }
    });
}
