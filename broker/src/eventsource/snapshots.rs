//! [`SnapshotStore`]: an event-sourcing topic's snapshots (the latest one
//! per aggregate) and stream-head floors, kept in
//! `<data_dir>/topics/<topic>/__snapshots.journal`.
//!
//! The file is a [`Journal`] (checksummed records, torn tail truncated on
//! open, mid-file corruption refuses the open). Each record is one JSON
//! object:
//!
//! * `{"version":1,"type":"snapshot","partition":P,"key":"k",
//!   "aggregate_version":N,"payload":"…"}` — the aggregate's snapshot; a
//!   later record for the same partition and key replaces an earlier one;
//! * `{"version":1,"type":"floor","partition":P,"heads":[["k",N],…]}` —
//!   the head versions of the partition's streams, written before a
//!   retention pass may remove events, so a stream whose every event was
//!   removed keeps its head across a restart (versions are never reused).
//!
//! When the journal holds many more records than live entries it is
//! rewritten with the live ones (compaction). TRUNCATE empties it; DELETE
//! removes it with the topic directory.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::storage::{Journal, StorageError};

/// File name of the journal inside the topic directory.
pub const SNAPSHOT_JOURNAL_FILE: &str = "__snapshots.journal";
/// The record format version this broker writes and accepts.
pub const SNAPSHOT_RECORD_VERSION: u64 = 1;
/// Records in the journal before compaction is considered.
pub const COMPACT_MIN_RECORDS: u64 = 1024;

/// A stored snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The aggregate version the snapshot represents.
    pub version: u64,
    /// The serialized aggregate state.
    pub payload: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Body {
    Snapshot {
        partition: u32,
        key: String,
        aggregate_version: u64,
        payload: String,
    },
    Floor {
        partition: u32,
        heads: Vec<(String, u64)>,
    },
}

#[derive(Debug, Serialize, Deserialize)]
struct JournalRecord {
    version: Option<u64>,
    #[serde(flatten)]
    body: Body,
}

fn encode(body: Body) -> Result<Vec<u8>, StorageError> {
    serde_json::to_vec(&JournalRecord {
        version: Some(SNAPSHOT_RECORD_VERSION),
        body,
    })
    .map_err(|e| StorageError::InvalidArgument(format!("encoding a snapshot record: {e}")))
}

#[derive(Debug, Default)]
struct State {
    snapshots: HashMap<(u32, String), Snapshot>,
    floors: BTreeMap<u32, HashMap<String, u64>>,
}

impl State {
    /// Every live entry as journal records (compaction).
    fn records(&self) -> Result<Vec<Vec<u8>>, StorageError> {
        let mut out = Vec::with_capacity(self.snapshots.len() + self.floors.len());
        for (partition, heads) in &self.floors {
            let mut heads: Vec<(String, u64)> =
                heads.iter().map(|(k, v)| (k.clone(), *v)).collect();
            heads.sort();
            out.push(encode(Body::Floor {
                partition: *partition,
                heads,
            })?);
        }
        for ((partition, key), s) in &self.snapshots {
            out.push(encode(Body::Snapshot {
                partition: *partition,
                key: key.clone(),
                aggregate_version: s.version,
                payload: s.payload.clone(),
            })?);
        }
        Ok(out)
    }
}

/// One event-sourcing topic's snapshots and floors; see the module docs.
/// Methods block (journal I/O); the broker calls them off the async
/// threads.
#[derive(Debug)]
pub struct SnapshotStore {
    journal: Journal,
    /// Held across each journal write so compaction sees every append.
    state: Mutex<State>,
}

impl SnapshotStore {
    /// Why the journal failed (it then refuses snapshots until a restart).
    pub fn failure(&self) -> Option<String> {
        self.journal.failure()
    }

    /// The journal path inside `topic_dir`.
    pub fn path(topic_dir: &Path) -> PathBuf {
        topic_dir.join(SNAPSHOT_JOURNAL_FILE)
    }

    /// Opens (creating if missing) and replays the topic's journal.
    pub fn open(topic_dir: &Path) -> Result<SnapshotStore, StorageError> {
        let path = Self::path(topic_dir);
        let (journal, records) = Journal::open(&path)?;
        let mut state = State::default();
        for (index, bytes) in records.iter().enumerate() {
            let bad = |reason: String| {
                StorageError::corruption(&path, index as u64, format!("snapshot record: {reason}"))
            };
            let record: JournalRecord =
                serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
            match record.version {
                Some(SNAPSHOT_RECORD_VERSION) => {}
                None => return Err(bad("unversioned record".into())),
                Some(v) => return Err(bad(format!("unsupported record version {v}"))),
            }
            match record.body {
                Body::Snapshot {
                    partition,
                    key,
                    aggregate_version,
                    payload,
                } => {
                    state.snapshots.insert(
                        (partition, key),
                        Snapshot {
                            version: aggregate_version,
                            payload,
                        },
                    );
                }
                Body::Floor { partition, heads } => {
                    let floors = state.floors.entry(partition).or_default();
                    for (key, head) in heads {
                        let floor = floors.entry(key).or_default();
                        *floor = (*floor).max(head);
                    }
                }
            }
        }
        Ok(SnapshotStore {
            journal,
            state: Mutex::new(state),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The latest snapshot of `key` on `partition`.
    pub fn get(&self, partition: u32, key: &str) -> Option<Snapshot> {
        self.lock()
            .snapshots
            .get(&(partition, key.to_owned()))
            .cloned()
    }

    /// Stores `snapshot` as the latest of `key` (durable on return).
    pub fn save(&self, partition: u32, key: &str, snapshot: Snapshot) -> Result<(), StorageError> {
        let record = encode(Body::Snapshot {
            partition,
            key: key.to_owned(),
            aggregate_version: snapshot.version,
            payload: snapshot.payload.clone(),
        })?;
        let mut state = self.lock();
        self.journal.append_sync(&record)?;
        state
            .snapshots
            .insert((partition, key.to_owned()), snapshot);
        self.maybe_compact(&state)
    }

    /// The head floors recorded for `partition`.
    pub fn floors(&self, partition: u32) -> Vec<(String, u64)> {
        self.lock()
            .floors
            .get(&partition)
            .map(|f| f.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default()
    }

    /// Records the heads of `partition` that exceed their recorded floor
    /// (durable on return; nothing is written when none does).
    pub fn record_floors(
        &self,
        partition: u32,
        heads: &[(String, u64)],
    ) -> Result<(), StorageError> {
        let mut state = self.lock();
        let known = state.floors.get(&partition);
        let mut raised: Vec<(String, u64)> = heads
            .iter()
            .filter(|(k, v)| known.and_then(|f| f.get(k)).map_or(true, |f| v > f))
            .cloned()
            .collect();
        if raised.is_empty() {
            return Ok(());
        }
        raised.sort();
        let record = encode(Body::Floor {
            partition,
            heads: raised.clone(),
        })?;
        self.journal.append_sync(&record)?;
        let floors = state.floors.entry(partition).or_default();
        for (key, head) in raised {
            floors.insert(key, head);
        }
        self.maybe_compact(&state)
    }

    /// Removes every snapshot and floor (TRUNCATE); durable on return.
    pub fn clear(&self) -> Result<(), StorageError> {
        let mut state = self.lock();
        self.journal.rewrite::<&[u8]>(&[])?;
        *state = State::default();
        Ok(())
    }

    /// Number of snapshots kept.
    pub fn len(&self) -> usize {
        self.lock().snapshots.len()
    }

    /// True when no snapshot is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn maybe_compact(&self, state: &State) -> Result<(), StorageError> {
        let live = (state.snapshots.len() + state.floors.len()) as u64;
        if self.journal.record_count() <= COMPACT_MIN_RECORDS.max(2 * live) {
            return Ok(());
        }
        self.journal.rewrite(&state.records()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(version: u64, payload: &str) -> Snapshot {
        Snapshot {
            version,
            payload: payload.into(),
        }
    }

    #[test]
    fn snapshots_and_floors_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = SnapshotStore::open(dir.path()).unwrap();
            s.save(0, "a", snap(3, "three")).unwrap();
            s.save(0, "a", snap(5, "five \"quoted\"")).unwrap();
            s.save(1, "a", snap(1, "other partition")).unwrap();
            s.record_floors(0, &[("a".into(), 7), ("b".into(), 2)])
                .unwrap();
            s.record_floors(0, &[("a".into(), 7)]).unwrap();
        }
        let s = SnapshotStore::open(dir.path()).unwrap();
        assert_eq!(s.get(0, "a"), Some(snap(5, "five \"quoted\"")));
        assert_eq!(s.get(1, "a"), Some(snap(1, "other partition")));
        assert_eq!(s.get(0, "b"), None);
        let mut floors = s.floors(0);
        floors.sort();
        assert_eq!(floors, vec![("a".into(), 7), ("b".into(), 2)]);
        s.clear().unwrap();
        drop(s);
        let s = SnapshotStore::open(dir.path()).unwrap();
        assert!(s.is_empty());
        assert!(s.floors(0).is_empty());
    }

    #[test]
    fn compaction_keeps_the_latest() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = SnapshotStore::open(dir.path()).unwrap();
            for v in 1..=(COMPACT_MIN_RECORDS + 10) {
                s.save(0, "a", snap(v, &v.to_string())).unwrap();
            }
            assert!(s.journal.record_count() < COMPACT_MIN_RECORDS);
        }
        let s = SnapshotStore::open(dir.path()).unwrap();
        let last = COMPACT_MIN_RECORDS + 10;
        assert_eq!(s.get(0, "a"), Some(snap(last, &last.to_string())));
    }
}
