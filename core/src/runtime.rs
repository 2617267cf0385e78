//! The process-wide I/O runtime of the blocking API, and what `fork()` does
//! to it.
//!
//! One multi-threaded tokio runtime (two `cursus-io` worker threads) serves
//! every blocking client of the process; it starts on first use. Only engine
//! work runs on it: user callbacks go to a [`crate::dispatch::Dispatcher`].
//!
//! `fork()` copies the runtime's memory into the child but none of its
//! threads, so the child must never use or drop the parent's runtime:
//!
//! - the first blocking call in a child starts a fresh runtime for the
//!   child's own clients (the parent's is leaked, since dropping it would
//!   wait for threads that do not exist there);
//! - every object remembers the process that created it ([`Owner`]); used in
//!   another process it fails with `used_after_fork` (kind `Closed`), and
//!   dropped there it leaks its engine state instead of tearing it down
//!   (closing its sockets would deregister them from the epoll instance the
//!   parent still shares).
//!
//! Knowing the process costs a system call (glibc does not cache `getpid`),
//! which was a fifth of a binding's `send`. A binding that can hook `fork()`
//! calls [`watch_forks`] once: from then on an object knows it is still in
//! the process that made it while no `fork()` happened since (a generation
//! the child handler bumps), and asks for the pid only after one.

use crate::error::{Error, ErrorKind, Result};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use tokio::runtime::{Handle, Runtime};

struct Engine {
    runtime: Runtime,
    owner: Owner,
}

/// Bumped in every `fork()`ed child, by [`fork_child_hook`].
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);
/// True once [`fork_child_hook`] is registered for this process.
static FORKS_WATCHED: AtomicBool = AtomicBool::new(false);

/// The `fork()` child handler: one atomic add (async-signal-safe, as a
/// child of a multithreaded process requires).
extern "C" fn fork_child_hook() {
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Lets objects made from now on know their process without a system call.
/// `register` must arrange for the given handler to run in every `fork()`ed
/// child before `fork()` returns there (`pthread_atfork(NULL, NULL,
/// handler)`) and say whether it did; only the first call registers. A
/// binding that cannot hook `fork()` never calls this and keeps the pid
/// check. (A child made by a raw `fork` system call, bypassing libc's
/// handlers, is not seen: it must `exec` or not use Cursus.)
pub fn watch_forks(register: impl FnOnce(extern "C" fn()) -> bool) {
    static REGISTERED: OnceLock<()> = OnceLock::new();
    REGISTERED.get_or_init(|| {
        if register(fork_child_hook) {
            FORKS_WATCHED.store(true, Ordering::SeqCst);
        }
    });
}

/// Keeps what a forked child inherited but must not tear down, reachable
/// (so leak checkers see it as kept, not lost) until the process ends.
fn keep_forever(value: Box<dyn std::any::Any + Send>) {
    static KEPT: Mutex<Vec<Box<dyn std::any::Any + Send>>> = Mutex::new(Vec::new());
    KEPT.lock().unwrap_or_else(|p| p.into_inner()).push(value);
}

/// The current process's runtime, started if this process has none yet.
fn engine() -> Result<Arc<Engine>> {
    static ENGINE: Mutex<Option<Arc<Engine>>> = Mutex::new(None);
    let mut slot = ENGINE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = slot.as_ref().filter(|e| e.owner.is_current()) {
        return Ok(Arc::clone(e));
    }
    if let Some(inherited) = slot.take() {
        // A parent's runtime: its threads are gone; never drop it here.
        keep_forever(Box::new(inherited));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("cursus-io")
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("cannot start the engine runtime: {e}")))?;
    let e = Arc::new(Engine {
        runtime,
        owner: Owner::current(),
    });
    *slot = Some(Arc::clone(&e));
    Ok(e)
}

/// Runs `future` to completion on the engine runtime, blocking this thread.
/// Refused (instead of panicking) inside an async runtime.
///
/// Most calls (a send with room in its buffer) are done on their first
/// poll: that poll is tried first, inside the runtime's context, and only a
/// future still pending goes through `Runtime::block_on`, whose parking
/// machinery costs more than such a call itself (≈16 % of a Java send).
/// The future is polled again with a real waker there, and a future must
/// only rely on the waker of its latest poll, so nothing is missed.
pub(crate) fn block_on<F: Future>(future: F) -> Result<F::Output> {
    if Handle::try_current().is_ok() {
        return Err(Error::invalid_argument(
            "a blocking Cursus call was made from inside an async runtime; use the async API there",
        ));
    }
    let engine = engine()?;
    let mut future = std::pin::pin!(future);
    if let Poll::Ready(output) = poll_once(engine.runtime.handle(), future.as_mut()) {
        return Ok(output);
    }
    Ok(engine.runtime.block_on(future))
}

/// Polls `future` once on this thread, inside `runtime`'s context, with a
/// waker that does nothing: the first step of a blocking call that is
/// usually done at once (every blocking call of the engine takes it first;
/// Python's `send` takes it with the GIL held). A future still pending must
/// be polled again with a real waker; a future relies only on the waker of
/// its latest poll, so nothing is missed.
pub fn poll_once<F: Future + ?Sized>(
    runtime: &Handle,
    future: std::pin::Pin<&mut F>,
) -> Poll<F::Output> {
    let _entered = runtime.enter();
    future.poll(&mut Context::from_waker(
        futures_util::task::noop_waker_ref(),
    ))
}

/// A handle to this process's engine runtime.
pub(crate) fn handle() -> Result<Handle> {
    Ok(engine()?.runtime.handle().clone())
}

/// The process that created an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner {
    pid: u32,
    /// The fork generation at creation, when forks are watched: while it is
    /// still current, no `fork()` happened since, so this is the process.
    generation: Option<u64>,
}

impl Owner {
    /// The current process.
    pub(crate) fn current() -> Owner {
        // The generation is read before the pid: a fork in between leaves
        // a generation that is already stale in the child.
        let generation = FORKS_WATCHED
            .load(Ordering::SeqCst)
            .then(|| FORK_GENERATION.load(Ordering::SeqCst));
        Owner {
            pid: std::process::id(),
            generation,
        }
    }

    /// True in the process that created the object.
    pub(crate) fn is_current(self) -> bool {
        if self.generation == Some(FORK_GENERATION.load(Ordering::SeqCst)) {
            return true;
        }
        self.pid == std::process::id()
    }

    /// `used_after_fork` unless this is the creating process.
    pub(crate) fn check(self) -> Result<()> {
        if self.is_current() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::Closed,
                "this object was created before fork(); create a new client in the child process",
            )
            .with_code("used_after_fork"))
        }
    }
}

/// A value owned by the process that created it: used from another process
/// (a `fork()`ed child) it is `used_after_fork`; dropped there, it is leaked
/// instead of torn down, since tearing down engine state (sockets, tasks,
/// wakers) would reach into the parent's runtime through memory the child
/// only has a copy of. The blocking API wraps every client in one; a
/// binding that holds async engine objects across a possible fork (Python's
/// asyncio clients) wraps them too.
pub struct ProcessLocal<T: Send + 'static> {
    value: Option<T>,
    owner: Owner,
}

impl<T: Send + 'static> ProcessLocal<T> {
    /// Wraps a value created by this process.
    pub fn new(value: T) -> ProcessLocal<T> {
        ProcessLocal {
            value: Some(value),
            owner: Owner::current(),
        }
    }

    /// The value, or `used_after_fork` in another process.
    pub fn get(&self) -> Result<&T> {
        self.owner.check()?;
        Ok(self.value.as_ref().expect("present until dropped"))
    }

    /// Blocks on `f(object)`, after the process check.
    pub(crate) fn run<'a, F, R>(&'a self, f: impl FnOnce(&'a T) -> F) -> Result<R>
    where
        F: Future<Output = Result<R>>,
    {
        let value = self.get()?;
        block_on(f(value))?
    }
}

impl<T: Send + 'static> Drop for ProcessLocal<T> {
    fn drop(&mut self) {
        if !self.owner.is_current() {
            if let Some(value) = self.value.take() {
                keep_forever(Box::new(value));
            }
        }
    }
}

impl<T: Send + 'static + std::fmt::Debug> std::fmt::Debug for ProcessLocal<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}
