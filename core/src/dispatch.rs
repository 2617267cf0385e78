//! Where user callbacks run: a dispatcher thread per client.
//!
//! Delivery reports, commit outcomes and (in bindings) asyncio resolutions
//! are user code: a slow one (a GIL wait, a cgo or JVM attach, a sleep) must
//! not stall the engine's I/O threads, which every client of the process
//! shares, and a callback must be free to call the SDK again (`send`,
//! `flush`, `commit`), which blocks. So the I/O side never runs a callback:
//! it hands a job to the client's [`Dispatcher`], whose own thread runs the
//! jobs one at a time, in the order they were handed over.
//!
//! A job is announced before it exists: a [`Promise`] counts as pending from
//! the moment a record with a callback is queued, so "wait until every
//! callback of what was sent so far has returned" ([`Dispatcher::wait_idle`])
//! is exact. A promise dropped unfulfilled stops counting.
//!
//! The thread starts with the first job and ends when the dispatcher and
//! every promise are gone and the queue is empty. A panicking job is caught
//! and logged; the thread goes on.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::Instant;

type Job = Box<dyn FnOnce() + Send + 'static>;

struct State {
    jobs: VecDeque<Job>,
    /// Promises not yet fulfilled, plus jobs queued or running.
    pending: usize,
    /// The dispatcher thread, while it runs.
    thread: Option<ThreadId>,
    /// Set when the last `Dispatcher` and `Promise` are gone.
    orphaned: bool,
}

struct Inner {
    name: String,
    state: Mutex<State>,
    /// Signalled when a job is queued or the dispatcher is orphaned.
    work: Condvar,
    /// Signalled when `pending` drops to zero.
    idle: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn done_one(&self, state: &mut State) {
        state.pending = state.pending.saturating_sub(1);
        if state.pending == 0 {
            self.idle.notify_all();
        }
    }
}

/// Marks the dispatcher orphaned when the last handle goes away.
struct Handles(Arc<Inner>);

impl Drop for Handles {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.orphaned = true;
        self.0.work.notify_all();
    }
}

/// Runs callbacks, in order, on a thread of its own (one per client).
/// Cheap to clone; clones share the thread and the queue.
#[derive(Clone)]
pub struct Dispatcher {
    inner: Arc<Inner>,
    _handles: Arc<Handles>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("name", &self.inner.name)
            .finish()
    }
}

impl Dispatcher {
    /// A dispatcher whose thread (started on the first job) is named `name`.
    pub fn new(name: impl Into<String>) -> Dispatcher {
        let inner = Arc::new(Inner {
            name: name.into(),
            state: Mutex::new(State {
                jobs: VecDeque::new(),
                pending: 0,
                thread: None,
                orphaned: false,
            }),
            work: Condvar::new(),
            idle: Condvar::new(),
        });
        Dispatcher {
            _handles: Arc::new(Handles(Arc::clone(&inner))),
            inner,
        }
    }

    /// Announces a job that will be handed over later: counted as pending
    /// (see [`Dispatcher::wait_idle`]) until fulfilled or dropped.
    pub fn promise(&self) -> Promise {
        self.inner.lock().pending += 1;
        Promise {
            dispatcher: Some(self.clone()),
        }
    }

    /// Runs `job` on the dispatcher thread after every job handed over
    /// before it.
    pub fn run(&self, job: impl FnOnce() + Send + 'static) {
        self.promise().fulfil(job);
    }

    /// Runs `callback(outcome)` on the dispatcher thread once `future`
    /// resolved; the future itself runs on the current tokio runtime, or on
    /// the engine runtime outside one. Counted as pending from this call.
    pub fn run_after<F, C>(&self, future: F, callback: C) -> crate::Result<()>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
        C: FnOnce(F::Output) + Send + 'static,
    {
        let promise = self.promise();
        let handle = match tokio::runtime::Handle::try_current() {
            Ok(h) => h,
            Err(_) => crate::runtime::handle()?,
        };
        handle.spawn(async move {
            let outcome = future.await;
            promise.fulfil(move || callback(outcome));
        });
        Ok(())
    }

    /// True on this dispatcher's own thread (inside a callback).
    pub fn is_current_thread(&self) -> bool {
        self.inner.lock().thread == Some(std::thread::current().id())
    }

    /// Waits until no job is pending, at most until `deadline` (`None`: no
    /// limit); false when the deadline passed first. On the dispatcher
    /// thread itself (a callback waiting for callbacks) it returns true at
    /// once: the jobs behind the running one cannot run before it returns.
    pub fn wait_idle(&self, deadline: Option<Instant>) -> bool {
        let mut state = self.inner.lock();
        if state.thread == Some(std::thread::current().id()) {
            return true;
        }
        while state.pending > 0 {
            match deadline {
                None => {
                    state = self
                        .inner
                        .idle
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner())
                }
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return false;
                    }
                    state = self
                        .inner
                        .idle
                        .wait_timeout(state, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
        true
    }

    fn push(&self, job: Job) {
        let mut state = self.inner.lock();
        state.jobs.push_back(job);
        if state.thread.is_none() {
            match self.start(&mut state) {
                Ok(()) => {}
                Err(e) => {
                    // No thread can be had: run it here rather than lose it.
                    tracing::error!(error = %e, "cannot start the callback thread");
                    let job = state.jobs.pop_back().expect("just pushed");
                    drop(state);
                    run_job(&self.inner.name, job);
                    let mut state = self.inner.lock();
                    self.inner.done_one(&mut state);
                    return;
                }
            }
        }
        self.inner.work.notify_one();
    }

    fn start(&self, state: &mut State) -> std::io::Result<()> {
        let inner = Arc::clone(&self.inner);
        let handle = std::thread::Builder::new()
            .name(self.inner.name.clone())
            .spawn(move || worker(inner))?;
        state.thread = Some(handle.thread().id());
        Ok(())
    }
}

fn run_job(name: &str, job: Job) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(job)) {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        tracing::error!(dispatcher = name, panic = %what, "a callback panicked");
    }
}

fn worker(inner: Arc<Inner>) {
    let mut state = inner.lock();
    loop {
        match state.jobs.pop_front() {
            Some(job) => {
                drop(state);
                run_job(&inner.name, job);
                state = inner.lock();
                inner.done_one(&mut state);
            }
            None if state.orphaned => {
                state.thread = None;
                return;
            }
            None => state = inner.work.wait(state).unwrap_or_else(|p| p.into_inner()),
        }
    }
}

/// A job announced to a [`Dispatcher`] but not handed over yet.
pub struct Promise {
    dispatcher: Option<Dispatcher>,
}

impl std::fmt::Debug for Promise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Promise").finish_non_exhaustive()
    }
}

impl Promise {
    /// Hands the job over: it runs after every job handed over before it.
    pub fn fulfil(mut self, job: impl FnOnce() + Send + 'static) {
        if let Some(d) = self.dispatcher.take() {
            d.push(Box::new(job));
        }
    }
}

impl Drop for Promise {
    fn drop(&mut self) {
        if let Some(d) = self.dispatcher.take() {
            let mut state = d.inner.lock();
            d.inner.done_one(&mut state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn jobs_run_in_order_off_the_caller_thread() {
        let d = Dispatcher::new("test-cb");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let caller = std::thread::current().id();
        for i in 0..100 {
            let seen = Arc::clone(&seen);
            d.run(move || {
                assert_ne!(std::thread::current().id(), caller);
                seen.lock().unwrap().push(i);
            });
        }
        assert!(d.wait_idle(None));
        assert_eq!(*seen.lock().unwrap(), (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn promises_count_until_fulfilled_or_dropped() {
        let d = Dispatcher::new("test-cb");
        let p = d.promise();
        let q = d.promise();
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(!d.wait_idle(Some(soon)), "two promises are pending");
        drop(q);
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        p.fulfil(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        assert!(d.wait_idle(None));
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_panicking_job_does_not_stop_the_thread() {
        let d = Dispatcher::new("test-cb");
        d.run(|| panic!("boom"));
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        d.run(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        assert!(d.wait_idle(None));
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_job_may_wait_for_idle_without_deadlock() {
        let d = Dispatcher::new("test-cb");
        let inner = d.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        d.run(move || {
            inner.run(|| {});
            tx.send(inner.wait_idle(None) && inner.is_current_thread())
                .unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_secs(5)).unwrap());
        assert!(d.wait_idle(None));
    }
}
