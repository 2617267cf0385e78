//! The durable store of the internal `__consumer_offsets` topic: a single
//! partition kept as a checksummed [`Journal`] at
//! `{data_dir}/__consumer_offsets/0.journal`, with synchronous appends,
//! replay on open and compaction (unlimited retention: compaction keeps the
//! latest state of every key, nothing expires).

use std::path::{Path, PathBuf};

use tracing::info;

use super::records::{DurableState, RecordBody};
use crate::storage::{Journal, StorageError};

/// Directory of the internal topic inside the data directory.
pub const OFFSETS_TOPIC_DIR: &str = "__consumer_offsets";
/// The journal file of its single partition.
pub const OFFSETS_JOURNAL_FILE: &str = "0.journal";
/// Records appended before compaction is considered.
pub const COMPACT_MIN_RECORDS: u64 = 4096;

/// Why the coordinator state could not be recovered; the broker stays not
/// ready.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The journal could not be opened or is corrupt.
    #[error("__consumer_offsets storage: {0}")]
    Storage(#[from] StorageError),
    /// A record is unversioned, malformed or inconsistent.
    #[error("__consumer_offsets record {index} in {path}: {reason}")]
    Record {
        /// The journal.
        path: PathBuf,
        /// Zero-based record number.
        index: usize,
        /// What is wrong.
        reason: String,
    },
}

/// True when a journal of `records` records for `groups` groups should be
/// compacted once it holds at least `min_records`: the live state needs at
/// most two records per group, so this waits until at least half of the
/// journal is obsolete.
pub fn should_compact(records: u64, groups: usize, min_records: u64) -> bool {
    records >= min_records && records > (groups as u64).saturating_mul(4)
}

/// The open `__consumer_offsets` journal.
#[derive(Debug)]
pub struct OffsetsStore {
    journal: Journal,
    compact_min_records: u64,
}

impl OffsetsStore {
    /// Why the journal failed (it then refuses commits until a restart).
    pub fn failure(&self) -> Option<String> {
        self.journal.failure()
    }

    /// Opens (creating if missing) and replays the store (blocking). The
    /// journal is compacted when it holds more records than the state needs.
    pub fn open(data_dir: &Path) -> Result<(OffsetsStore, DurableState), ReplayError> {
        Self::open_with_threshold(data_dir, COMPACT_MIN_RECORDS)
    }

    /// [`open`](Self::open) with runtime compaction considered from
    /// `compact_min_records` records on.
    pub fn open_with_threshold(
        data_dir: &Path,
        compact_min_records: u64,
    ) -> Result<(OffsetsStore, DurableState), ReplayError> {
        let dir = data_dir.join(OFFSETS_TOPIC_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
        let path = dir.join(OFFSETS_JOURNAL_FILE);
        let (journal, records) = Journal::open(&path)?;
        let mut state = DurableState::default();
        for (index, bytes) in records.iter().enumerate() {
            let record = RecordBody::decode(bytes).map_err(|reason| ReplayError::Record {
                path: path.clone(),
                index,
                reason,
            })?;
            state.apply(&record).map_err(|reason| ReplayError::Record {
                path: path.clone(),
                index,
                reason,
            })?;
        }
        let store = OffsetsStore {
            journal,
            compact_min_records,
        };
        info!(
            records = records.len(),
            groups = state.groups.len(),
            offsets = state.offsets.len(),
            "__consumer_offsets replayed"
        );
        if records.len() as u64 > state.snapshot().len() as u64 {
            store.compact(&state)?;
        }
        Ok((store, state))
    }

    /// Appends one record and returns once it is durable (blocking).
    pub fn append(&self, record: &RecordBody) -> Result<(), StorageError> {
        let bytes = record.encode().map_err(StorageError::InvalidArgument)?;
        self.journal.append_sync(&bytes)
    }

    /// Atomically rewrites the journal as the snapshot of `state`.
    pub fn compact(&self, state: &DurableState) -> Result<(), StorageError> {
        let encoded = state
            .snapshot()
            .iter()
            .map(RecordBody::encode)
            .collect::<Result<Vec<_>, _>>()
            .map_err(StorageError::InvalidArgument)?;
        let before = self.journal.record_count();
        self.journal.rewrite(&encoded)?;
        info!(
            before,
            after = encoded.len(),
            "__consumer_offsets compacted"
        );
        Ok(())
    }

    /// True when one more append should be followed by a compaction of a
    /// state with `groups` groups.
    pub fn should_compact_after_append(&self, groups: usize) -> bool {
        should_compact(
            self.journal.record_count() + 1,
            groups,
            self.compact_min_records,
        )
    }

    /// Records currently in the journal.
    pub fn record_count(&self) -> u64 {
        self.journal.record_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groups::records::OffsetEntry;
    use crate::groups::selector::Selector;

    fn registration() -> RecordBody {
        RecordBody::Registration {
            group: "g".into(),
            selector: Selector::Topic("t".into()),
            expansion: [("t".to_owned(), 1)].into_iter().collect(),
        }
    }

    fn commit(offset: u64) -> RecordBody {
        RecordBody::Commit {
            group: "g".into(),
            offsets: vec![OffsetEntry {
                topic: "t".into(),
                partition: 0,
                offset,
            }],
        }
    }

    #[test]
    fn compaction_threshold() {
        assert!(!should_compact(10, 0, COMPACT_MIN_RECORDS));
        assert!(should_compact(COMPACT_MIN_RECORDS, 1, COMPACT_MIN_RECORDS));
        assert!(!should_compact(
            COMPACT_MIN_RECORDS,
            5000,
            COMPACT_MIN_RECORDS
        ));
    }

    #[test]
    fn replays_and_compacts_on_open() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (store, state) = OffsetsStore::open(dir.path()).unwrap();
            assert_eq!(state, DurableState::default());
            store.append(&registration()).unwrap();
            for o in 1..=10 {
                store.append(&commit(o)).unwrap();
            }
        }
        let (store, state) = OffsetsStore::open(dir.path()).unwrap();
        assert_eq!(state.offsets[&("g".into(), "t".into(), 0)], 10);
        assert_eq!(store.record_count(), 2);
        let (_, again) = OffsetsStore::open(dir.path()).unwrap();
        assert_eq!(again, state);
    }

    #[test]
    fn unversioned_record_fails_replay() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (store, _) = OffsetsStore::open(dir.path()).unwrap();
            store.append(&registration()).unwrap();
        }
        let path = dir
            .path()
            .join(OFFSETS_TOPIC_DIR)
            .join(OFFSETS_JOURNAL_FILE);
        {
            let (journal, _) = Journal::open(&path).unwrap();
            journal
                .append_sync(br#"{"type":"commit","group":"g","offsets":[]}"#)
                .unwrap();
        }
        let err = OffsetsStore::open(dir.path()).unwrap_err();
        assert!(err.to_string().contains("unversioned"), "{err}");
    }
}
