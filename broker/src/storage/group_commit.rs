//! Group commit: many writers share one fdatasync.
//!
//! Positions are abstract, monotonically growing `u64`s chosen by the owner
//! (the next offset for a partition log, a record sequence number for a
//! journal). Writers report how far they have written with
//! [`GroupCommit::record_written`] and then call
//! [`GroupCommit::wait_durable`]. Leader/follower scheme: the first waiter
//! that finds no sync in progress becomes the leader, releases the lock and
//! runs the owner's flush closure, which captures the current write position
//! *before* calling fdatasync; every write made before that capture is covered.
//! Waiters that arrive while a sync runs sleep on a condition variable and
//! re-check when it ends: if the finished sync covered them they return
//! without syncing, otherwise one of them leads the next sync, which then
//! covers everything written in the meantime. So N concurrent writers cost
//! far fewer than N syncs while no writer returns before its data is durable.
//!
//! A failed sync poisons the state: after an fdatasync error Linux may have
//! dropped the dirty pages, so a later successful fdatasync proves nothing.
//! Every later call fails until the owner is reopened (recovery).

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::error::{Result, StorageError};

/// Locks a mutex, ignoring poisoning (storage state stays consistent because
/// every mutation is completed before a call that could panic).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug)]
struct State {
    written: u64,
    durable: u64,
    syncing: bool,
    generation: u64,
    failure: Option<String>,
    deleted: bool,
    syncs: u64,
}

/// Shared durability state of one log or journal; see the module docs.
#[derive(Debug)]
pub(crate) struct GroupCommit {
    path: PathBuf,
    state: Mutex<State>,
    cv: Condvar,
}

impl GroupCommit {
    /// Starts with everything up to `position` written and durable.
    pub(crate) fn new(path: &Path, position: u64) -> Self {
        GroupCommit {
            path: path.to_path_buf(),
            state: Mutex::new(State {
                written: position,
                durable: position,
                syncing: false,
                generation: 0,
                failure: None,
                deleted: false,
                syncs: 0,
            }),
            cv: Condvar::new(),
        }
    }

    fn check_state(&self, st: &State) -> Result<()> {
        if st.deleted {
            return Err(StorageError::Deleted {
                path: self.path.clone(),
            });
        }
        if let Some(reason) = &st.failure {
            return Err(StorageError::Failed {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        Ok(())
    }

    /// Why the owner failed, if it did (until reopened or reset).
    pub(crate) fn failure(&self) -> Option<String> {
        lock(&self.state).failure.clone()
    }

    /// Fails if the owner is poisoned or deleted.
    pub(crate) fn check(&self) -> Result<()> {
        self.check_state(&lock(&self.state))
    }

    /// Records that everything before `position` has been written.
    pub(crate) fn record_written(&self, position: u64) {
        let mut st = lock(&self.state);
        st.written = st.written.max(position);
    }

    /// Records that everything before `position` is durable (for example
    /// after the owner synced a file itself) and wakes waiters.
    pub(crate) fn mark_durable(&self, position: u64) {
        let mut st = lock(&self.state);
        st.durable = st.durable.max(position);
        drop(st);
        self.cv.notify_all();
    }

    /// Resets both positions to `position` (after a truncation), clears a
    /// failure and invalidates syncs that are in flight.
    pub(crate) fn reset(&self, position: u64) {
        let mut st = lock(&self.state);
        st.written = position;
        st.durable = position;
        st.generation += 1;
        st.failure = None;
        drop(st);
        self.cv.notify_all();
    }

    /// Poisons the state with `reason` and returns the matching error.
    pub(crate) fn fail(&self, reason: String) -> StorageError {
        let mut st = lock(&self.state);
        if st.failure.is_none() {
            st.failure = Some(reason);
        }
        let err = StorageError::Failed {
            path: self.path.clone(),
            reason: st.failure.clone().unwrap_or_default(),
        };
        drop(st);
        self.cv.notify_all();
        err
    }

    /// Marks the owner deleted; every later call fails.
    pub(crate) fn mark_deleted(&self) {
        lock(&self.state).deleted = true;
        self.cv.notify_all();
    }

    /// Counts one fdatasync performed outside [`wait_durable`](Self::wait_durable).
    pub(crate) fn count_sync(&self) {
        lock(&self.state).syncs += 1;
    }

    /// Everything before this position is durable.
    pub(crate) fn durable(&self) -> u64 {
        lock(&self.state).durable
    }

    /// Everything before this position has been written.
    pub(crate) fn written(&self) -> u64 {
        lock(&self.state).written
    }

    /// Number of fdatasync calls made so far.
    pub(crate) fn sync_count(&self) -> u64 {
        lock(&self.state).syncs
    }

    /// Returns once everything before `target` is durable.
    ///
    /// `flush` runs on the leader thread without the state lock held; it must
    /// capture the owner's current written position, fdatasync and return that
    /// position. An error from `flush` poisons the state.
    pub(crate) fn wait_durable<F>(&self, target: u64, mut flush: F) -> Result<()>
    where
        F: FnMut() -> Result<u64>,
    {
        let mut st = lock(&self.state);
        loop {
            self.check_state(&st)?;
            if st.durable >= target {
                return Ok(());
            }
            if target > st.written {
                return Err(StorageError::InvalidArgument(format!(
                    "cannot sync to position {target}: only {} written in {}",
                    st.written,
                    self.path.display()
                )));
            }
            if st.syncing {
                st = self.cv.wait(st).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            st.syncing = true;
            let generation = st.generation;
            drop(st);
            let outcome = flush();
            st = lock(&self.state);
            st.syncing = false;
            match outcome {
                Ok(covered) => {
                    st.syncs += 1;
                    if st.generation == generation {
                        st.durable = st.durable.max(covered);
                    }
                    self.cv.notify_all();
                }
                Err(e) => {
                    // Never retried: the leader, like every waiter, learns
                    // that the owner failed (not, say, that the disk is
                    // full, which an append could recover from).
                    if st.failure.is_none() {
                        st.failure = Some(e.to_string());
                    }
                    let err = StorageError::Failed {
                        path: self.path.clone(),
                        reason: st.failure.clone().unwrap_or_default(),
                    };
                    drop(st);
                    self.cv.notify_all();
                    return Err(err);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Barrier};

    #[test]
    fn one_flush_covers_all_prior_writes() {
        let gc = Arc::new(GroupCommit::new(Path::new("x"), 0));
        let threads = 8;
        let barrier = Arc::new(Barrier::new(threads));
        let flushes = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..threads as u64)
            .map(|i| {
                let (gc, barrier, flushes) = (gc.clone(), barrier.clone(), flushes.clone());
                std::thread::spawn(move || {
                    gc.record_written(i + 1);
                    barrier.wait();
                    gc.wait_durable(i + 1, || {
                        flushes.fetch_add(1, Ordering::SeqCst);
                        Ok(gc.written())
                    })
                    .unwrap();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(flushes.load(Ordering::SeqCst), 1);
        assert_eq!(gc.sync_count(), 1);
        assert_eq!(gc.durable(), threads as u64);
    }

    #[test]
    fn failure_poisons_and_reset_clears() {
        let gc = GroupCommit::new(Path::new("x"), 0);
        gc.record_written(3);
        let err = gc
            .wait_durable(3, || Err(StorageError::InvalidArgument("boom".into())))
            .unwrap_err();
        assert!(
            matches!(&err, StorageError::Failed { reason, .. } if reason.contains("boom")),
            "{err}"
        );
        assert!(matches!(gc.check(), Err(StorageError::Failed { .. })));
        assert!(gc.failure().is_some());
        assert!(matches!(
            gc.wait_durable(3, || Ok(3)),
            Err(StorageError::Failed { .. })
        ));
        gc.reset(0);
        gc.check().unwrap();
        assert!(matches!(
            gc.wait_durable(1, || Ok(1)),
            Err(StorageError::InvalidArgument(_))
        ));
    }
}
