//! The Raft store handed to openraft: the durable log ([`LogFile`]) and the
//! state machine ([`StateMachine`]) behind openraft's `RaftStorage`, split by
//! `openraft::storage::Adaptor` into its `RaftLogStorage` and
//! `RaftStateMachine` halves.
//!
//! (The crate builds openraft without its `storage-v2` feature, under which
//! `RaftLogStorage`/`RaftStateMachine` can only be implemented through the
//! adaptor. An append returns after its fdatasync, and the adaptor calls
//! openraft's flush callback only then, which is the contract.)

use std::fmt::Debug;
use std::ops::RangeBounds;
use std::path::Path;
use std::sync::{Arc, Mutex};

use openraft::storage::{Adaptor, LogState, RaftStorage};
use openraft::{ErrorSubject, ErrorVerb, RaftLogReader, StorageIOError};

use super::log_store::{poisoned, LogFile, LogReader, StoreError};
use super::state_machine::{SnapshotBuilder, StateMachine};
use super::types::{
    Entry, LogId, Snapshot, SnapshotMeta, StorageError, StoredMembership, TypeConfig, Vote,
};
use crate::cluster::fsm::FsmReply;

/// The log store half as openraft sees it.
pub type LogStore = Adaptor<TypeConfig, RaftStore>;
/// The state machine half as openraft sees it.
pub type StateMachineStore = Adaptor<TypeConfig, RaftStore>;

/// Log plus state machine of one node.
#[derive(Debug)]
pub struct RaftStore {
    log: Arc<Mutex<LogFile>>,
    sm: StateMachine,
}

fn io(subject: ErrorSubject<u64>, verb: ErrorVerb) -> impl FnOnce(StoreError) -> StorageError {
    move |e| StorageIOError::new(subject, verb, &e).into()
}

impl RaftStore {
    /// Opens the log and the state machine in the raft directory `dir`.
    pub fn open(dir: &Path) -> Result<RaftStore, StoreError> {
        let log = LogFile::open(dir)?;
        let sm = StateMachine::open(dir)?;
        log.sync_dir()?;
        Ok(RaftStore {
            log: Arc::new(Mutex::new(log)),
            sm,
        })
    }

    /// The state machine.
    pub fn state_machine(&self) -> &StateMachine {
        &self.sm
    }

    /// True when the log holds nothing and no vote was ever cast (a node
    /// that was never part of a cluster).
    pub fn is_pristine(&self) -> bool {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.last_log_id().is_none() && log.vote().is_none() && self.sm.applied_state().0.is_none()
    }

    /// Splits the store into openraft's log store and state machine.
    pub fn into_adaptors(self) -> (LogStore, StateMachineStore) {
        Adaptor::new(self)
    }

    #[allow(clippy::result_large_err)] // openraft's error type
    fn with_log<T>(
        &self,
        f: impl FnOnce(&mut LogFile) -> Result<T, StoreError>,
        subject: ErrorSubject<u64>,
        verb: ErrorVerb,
    ) -> Result<T, StorageError> {
        let mut log = self.log.lock().map_err(poisoned)?;
        f(&mut log).map_err(io(subject, verb))
    }
}

impl RaftLogReader<TypeConfig> for RaftStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        Ok(self.log.lock().map_err(poisoned)?.entries(range))
    }
}

impl RaftStorage<TypeConfig> for RaftStore {
    type LogReader = LogReader;
    type SnapshotBuilder = SnapshotBuilder;

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        self.with_log(|l| l.save_vote(vote), ErrorSubject::Vote, ErrorVerb::Write)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        self.with_log(|l| Ok(l.vote()), ErrorSubject::Vote, ErrorVerb::Read)
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        self.with_log(
            |l| l.save_committed(committed),
            ErrorSubject::Store,
            ErrorVerb::Write,
        )
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        self.with_log(|l| Ok(l.committed()), ErrorSubject::Store, ErrorVerb::Read)
    }

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        self.with_log(
            |l| {
                Ok(LogState {
                    last_purged_log_id: l.purged(),
                    last_log_id: l.last_log_id(),
                })
            },
            ErrorSubject::Logs,
            ErrorVerb::Read,
        )
    }

    async fn get_log_reader(&mut self) -> LogReader {
        LogReader(self.log.clone())
    }

    async fn append_to_log<I>(&mut self, entries: I) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
    {
        self.with_log(|l| l.append(entries), ErrorSubject::Logs, ErrorVerb::Write)
    }

    async fn delete_conflict_logs_since(&mut self, log_id: LogId) -> Result<(), StorageError> {
        self.with_log(
            |l| l.truncate(log_id.index),
            ErrorSubject::Logs,
            ErrorVerb::Delete,
        )
    }

    async fn purge_logs_upto(&mut self, log_id: LogId) -> Result<(), StorageError> {
        self.with_log(|l| l.purge(log_id), ErrorSubject::Logs, ErrorVerb::Delete)
    }

    async fn last_applied_state(
        &mut self,
    ) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        Ok(self.sm.applied_state())
    }

    async fn apply_to_state_machine(
        &mut self,
        entries: &[Entry],
    ) -> Result<Vec<FsmReply>, StorageError> {
        Ok(self.sm.apply(entries))
    }

    async fn get_snapshot_builder(&mut self) -> SnapshotBuilder {
        self.sm.snapshot_builder()
    }

    async fn begin_receiving_snapshot(
        &mut self,
    ) -> Result<Box<std::io::Cursor<Vec<u8>>>, StorageError> {
        Ok(self.sm.begin_receiving())
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: Box<std::io::Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError> {
        self.sm
            .install(meta, snapshot.into_inner())
            .map_err(|e| StorageIOError::write_snapshot(Some(meta.signature()), &e).into())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot>, StorageError> {
        Ok(self.sm.current_snapshot())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::testing::{StoreBuilder, Suite};

    struct Builder;

    impl StoreBuilder<TypeConfig, LogStore, StateMachineStore, tempfile::TempDir> for Builder {
        async fn build(
            &self,
        ) -> Result<(tempfile::TempDir, LogStore, StateMachineStore), StorageError> {
            let dir = tempfile::tempdir().expect("temp dir");
            let store = RaftStore::open(&dir.path().join("raft")).expect("open store");
            let (log, sm) = store.into_adaptors();
            Ok((dir, log, sm))
        }
    }

    #[test]
    fn openraft_storage_suite() {
        Suite::test_all(Builder).unwrap();
    }
}
