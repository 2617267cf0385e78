//! Knowing, without a system call, that no `fork()` happened since an
//! object was made (issue #20: the engine's own check, `ProcessLocal`,
//! asks the kernel for the pid on every call, which cost a quarter of a
//! `send`).
//!
//! A `pthread_atfork` child handler bumps a process-wide generation; an
//! object remembers the generation it was made in. While they match, this
//! is the process that made it. Once they differ the binding goes through
//! the engine's checked path again, so the engine still decides what a
//! forked child gets (`used_after_fork`); this only skips a check whose
//! answer is known.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped in every `fork()`ed child, before `fork()` returns there.
static GENERATION: AtomicU64 = AtomicU64::new(0);

#[cfg(unix)]
extern "C" fn forked_child() {
    // Async-signal-safe: one atomic add.
    GENERATION.fetch_add(1, Ordering::SeqCst);
}

#[cfg(unix)]
extern "C" {
    fn pthread_atfork(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
    ) -> std::os::raw::c_int;
}

/// Registers the child handler once; false when it could not be
/// registered (then no object ever takes the unchecked path).
fn watching() -> bool {
    static WATCHING: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WATCHING.get_or_init(|| {
        #[cfg(unix)]
        {
            // SAFETY: `pthread_atfork` only records the handler; the handler
            // is a plain function that lives as long as the process (this
            // library is never unloaded by CPython) and does one atomic add,
            // which is safe in a child of a multithreaded process.
            unsafe { pthread_atfork(None, None, Some(forked_child)) == 0 }
        }
        #[cfg(not(unix))]
        {
            true // no fork() there
        }
    })
}

/// A value usable without the engine's pid check while no `fork()`
/// happened since it was made. Dropped in a forked child, it is leaked, as
/// the engine's `ProcessLocal` leaks its own (tearing engine state down
/// there would reach into the parent's runtime).
pub(crate) struct SameProcess<T> {
    value: Option<T>,
    /// The fork generation it was made in (`None`: forks not watched).
    generation: Option<u64>,
    /// The process that made it (checked only when dropped).
    pid: u32,
}

impl<T> SameProcess<T> {
    /// Wraps a value made by this process, now.
    pub(crate) fn new(value: T) -> Self {
        let generation = watching().then(|| GENERATION.load(Ordering::SeqCst));
        SameProcess {
            value: Some(value),
            generation,
            pid: std::process::id(),
        }
    }

    /// The value, or `None` once a `fork()` happened since it was made (or
    /// when forks cannot be watched): then use the engine's checked path.
    pub(crate) fn get(&self) -> Option<&T> {
        match self.generation {
            Some(g) if g == GENERATION.load(Ordering::Relaxed) => self.value.as_ref(),
            _ => None,
        }
    }
}

impl<T> Drop for SameProcess<T> {
    fn drop(&mut self) {
        if std::process::id() != self.pid {
            // Possibly another process's: leak it (see the type's doc).
            std::mem::forget(self.value.take());
        }
    }
}
