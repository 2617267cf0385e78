//! The Raft state machine: applies committed [`FsmCommand`]s to the shared
//! [`ClusterState`] and snapshots it.
//!
//! The state lives in an `Arc<std::sync::RwLock<ClusterState>>` shared with
//! the broker; after every applied batch the applied index is published on a
//! `watch` channel. A snapshot is the JSON of [`SnapshotFile`] (`version` 9,
//! the state, the last applied log id and the membership), kept in
//! `<data_dir>/raft/snapshot.json` (replaced atomically) and loaded on open;
//! openraft replays the committed log after it.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use openraft::{EntryPayload, RaftSnapshotBuilder, StorageIOError};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::log_store::{StoreError, SNAPSHOT_FILE};
use super::types::{
    Entry, LogId, Snapshot, SnapshotMeta, StorageError, StoredMembership, TypeConfig,
};
use crate::cluster::fsm::{ClusterState, FsmReply, SNAPSHOT_VERSION};

/// The snapshot document (also what is sent to a follower).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotFile {
    /// Format version, [`SNAPSHOT_VERSION`] (9).
    pub version: u32,
    /// The cluster state after `last_applied`.
    pub state: ClusterState,
    /// The last log id applied to `state`.
    pub last_applied: Option<LogId>,
    /// The membership as of `last_applied`.
    pub membership: StoredMembership,
    /// openraft's snapshot id.
    pub snapshot_id: String,
}

impl SnapshotFile {
    fn meta(&self) -> SnapshotMeta {
        SnapshotMeta {
            last_log_id: self.last_applied,
            last_membership: self.membership.clone(),
            snapshot_id: self.snapshot_id.clone(),
        }
    }

    fn decode(bytes: &[u8], path: &Path) -> Result<SnapshotFile, StoreError> {
        let file: SnapshotFile =
            serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
                path: path.to_path_buf(),
                offset: 0,
                reason: format!("undecodable snapshot: {e}"),
            })?;
        if file.version != SNAPSHOT_VERSION {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                offset: 0,
                reason: format!(
                    "snapshot version {}, expected {SNAPSHOT_VERSION}",
                    file.version
                ),
            });
        }
        Ok(file)
    }
}

/// The latest snapshot: its metadata and encoded bytes.
#[derive(Debug, Clone)]
struct Current {
    meta: SnapshotMeta,
    data: Vec<u8>,
}

/// The state machine half of the Raft store.
#[derive(Debug)]
pub struct StateMachine {
    path: PathBuf,
    state: Arc<RwLock<ClusterState>>,
    last_applied: Option<LogId>,
    membership: StoredMembership,
    applied: watch::Sender<u64>,
    current: Arc<Mutex<Option<Current>>>,
    seq: Arc<AtomicU64>,
}

fn index_of(id: Option<LogId>) -> u64 {
    id.map_or(0, |id| id.index)
}

impl StateMachine {
    /// Opens the state machine of the raft directory `dir`: the state of
    /// `snapshot.json` if there is one, else the empty state.
    pub fn open(dir: &Path) -> Result<StateMachine, StoreError> {
        let path = dir.join(SNAPSHOT_FILE);
        let raw = match std::fs::read(&path) {
            Ok(data) => Some(data),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(StoreError::Io { path, source }),
        };
        let (state, last_applied, membership, current) = match raw {
            Some(data) => {
                let file = SnapshotFile::decode(&data, &path)?;
                let current = Current {
                    meta: file.meta(),
                    data,
                };
                (
                    file.state,
                    file.last_applied,
                    file.membership,
                    Some(current),
                )
            }
            None => (
                ClusterState::default(),
                None,
                StoredMembership::default(),
                None,
            ),
        };
        let (applied, _) = watch::channel(index_of(last_applied));
        Ok(StateMachine {
            path,
            state: Arc::new(RwLock::new(state)),
            last_applied,
            membership,
            applied,
            current: Arc::new(Mutex::new(current)),
            seq: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The shared cluster state.
    pub fn state(&self) -> Arc<RwLock<ClusterState>> {
        self.state.clone()
    }

    /// The applied index (0 before anything is applied), updated after every
    /// applied batch and installed snapshot.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.applied.subscribe()
    }

    /// The last applied log id and membership.
    pub fn applied_state(&self) -> (Option<LogId>, StoredMembership) {
        (self.last_applied, self.membership.clone())
    }

    /// Applies committed entries in order; one reply per entry.
    pub fn apply(&mut self, entries: &[Entry]) -> Vec<FsmReply> {
        let mut replies = Vec::with_capacity(entries.len());
        if entries.is_empty() {
            return replies;
        }
        {
            // `apply` does not panic half-way; a poisoned lock still holds a
            // whole state.
            let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
            for entry in entries {
                self.last_applied = Some(entry.log_id);
                replies.push(match &entry.payload {
                    EntryPayload::Blank => FsmReply::Done,
                    EntryPayload::Normal(cmd) => state.apply(cmd),
                    EntryPayload::Membership(m) => {
                        self.membership = StoredMembership::new(Some(entry.log_id), m.clone());
                        FsmReply::Done
                    }
                });
            }
        }
        self.applied.send_replace(index_of(self.last_applied));
        replies
    }

    /// A builder holding a copy of the current state.
    pub fn snapshot_builder(&self) -> SnapshotBuilder {
        let state = self
            .state
            .read()
            .map(|s| s.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        SnapshotBuilder {
            path: self.path.clone(),
            state,
            last_applied: self.last_applied,
            membership: self.membership.clone(),
            current: self.current.clone(),
            seq: self.seq.clone(),
        }
    }

    /// A buffer to receive a snapshot into.
    pub fn begin_receiving(&self) -> Box<Cursor<Vec<u8>>> {
        Box::new(Cursor::new(Vec::new()))
    }

    /// Replaces the state with a snapshot received from the leader and keeps
    /// it as the current snapshot.
    pub fn install(&mut self, meta: &SnapshotMeta, data: Vec<u8>) -> Result<(), StoreError> {
        let file = SnapshotFile::decode(&data, &self.path)?;
        store_current(&self.path, &self.current, meta.clone(), data)?;
        {
            let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
            *state = file.state;
        }
        self.last_applied = meta.last_log_id;
        self.membership = meta.last_membership.clone();
        self.applied.send_replace(index_of(self.last_applied));
        Ok(())
    }

    /// The current snapshot, if any.
    pub fn current_snapshot(&self) -> Option<Snapshot> {
        let current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        current.as_ref().map(|c| Snapshot {
            meta: c.meta.clone(),
            snapshot: Box::new(Cursor::new(c.data.clone())),
        })
    }
}

/// Writes `data` to `snapshot.json` and makes it the current snapshot, unless
/// the current one is already newer.
fn store_current(
    path: &Path,
    current: &Mutex<Option<Current>>,
    meta: SnapshotMeta,
    data: Vec<u8>,
) -> Result<(), StoreError> {
    let mut current = current.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = current.as_ref() {
        if c.meta.last_log_id > meta.last_log_id {
            return Ok(());
        }
    }
    crate::storage::atomic_file::write_atomic(path, &data)?;
    *current = Some(Current { meta, data });
    Ok(())
}

/// Builds a snapshot from a copy of the state taken when it was created.
#[derive(Debug)]
pub struct SnapshotBuilder {
    path: PathBuf,
    state: ClusterState,
    last_applied: Option<LogId>,
    membership: StoredMembership,
    current: Arc<Mutex<Option<Current>>>,
    seq: Arc<AtomicU64>,
}

impl SnapshotBuilder {
    fn build(&mut self) -> Result<Snapshot, StoreError> {
        let snapshot_id = format!(
            "{}-{}-{}",
            self.last_applied.map_or(0, |id| id.leader_id.term),
            index_of(self.last_applied),
            self.seq.fetch_add(1, Ordering::Relaxed)
        );
        let file = SnapshotFile {
            version: SNAPSHOT_VERSION,
            state: std::mem::take(&mut self.state),
            last_applied: self.last_applied,
            membership: self.membership.clone(),
            snapshot_id,
        };
        let meta = file.meta();
        let data = serde_json::to_vec(&file).map_err(|e| StoreError::Encode(e.to_string()))?;
        store_current(&self.path, &self.current, meta.clone(), data.clone())?;
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(data)),
        })
    }
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> Result<Snapshot, StorageError> {
        self.build()
            .map_err(|e| StorageIOError::write_snapshot(None, &e).into())
    }
}

/// Writes a JSON value next to the snapshot (used by tests).
#[cfg(test)]
pub(crate) fn write_snapshot_file(dir: &Path, file: &SnapshotFile) -> Result<(), StoreError> {
    super::log_store::write_json(&dir.join(SNAPSHOT_FILE), file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::{BasicNode, CommittedLeaderId, Membership};
    use std::collections::{BTreeMap, BTreeSet};

    fn register(index: u64) -> Entry {
        Entry {
            log_id: LogId::new(CommittedLeaderId::new(1, 1), index),
            payload: EntryPayload::Normal(super::super::test_register(index)),
        }
    }

    #[tokio::test]
    async fn apply_snapshot_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut sm = StateMachine::open(dir.path()).unwrap();
        let mut applied = sm.subscribe();
        let members = Membership::new(
            vec![BTreeSet::from([1])],
            BTreeMap::from([(1, BasicNode::new("127.0.0.1:1"))]),
        );
        let entries = vec![
            Entry {
                log_id: LogId::new(CommittedLeaderId::new(1, 1), 0),
                payload: EntryPayload::Membership(members),
            },
            register(1),
            register(2),
        ];
        let replies = sm.apply(&entries);
        assert_eq!(replies, vec![FsmReply::Done; 3]);
        applied.changed().await.unwrap();
        assert_eq!(*applied.borrow(), 2);
        assert_eq!(sm.state().read().unwrap().brokers.len(), 2);

        let snap = sm.snapshot_builder().build_snapshot().await.unwrap();
        assert_eq!(snap.meta.last_log_id, Some(register(2).log_id));
        // Applied after the snapshot: not in it.
        sm.apply(&[register(3)]);
        drop(sm);

        let sm = StateMachine::open(dir.path()).unwrap();
        let (last, membership) = sm.applied_state();
        assert_eq!(last, Some(register(2).log_id));
        assert_eq!(membership.log_id(), &Some(entries[0].log_id));
        assert_eq!(sm.state().read().unwrap().brokers.len(), 2);
        assert_eq!(*sm.subscribe().borrow(), 2);
        let current = sm.current_snapshot().unwrap();
        assert_eq!(current.meta, snap.meta);

        // Installing it elsewhere gives the same state.
        let other = tempfile::tempdir().unwrap();
        let mut sm2 = StateMachine::open(other.path()).unwrap();
        sm2.install(&current.meta, current.snapshot.into_inner())
            .unwrap();
        assert_eq!(*sm2.state().read().unwrap(), *sm.state().read().unwrap());
        assert_eq!(sm2.applied_state().0, Some(register(2).log_id));
    }

    #[test]
    fn wrong_snapshot_version_fails_open() {
        let dir = tempfile::tempdir().unwrap();
        let file = SnapshotFile {
            version: 8,
            state: ClusterState::default(),
            last_applied: None,
            membership: StoredMembership::default(),
            snapshot_id: "x".into(),
        };
        write_snapshot_file(dir.path(), &file).unwrap();
        assert!(matches!(
            StateMachine::open(dir.path()),
            Err(StoreError::Corrupt { .. })
        ));
    }
}
