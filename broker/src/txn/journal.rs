//! `<data_dir>/__transaction_state.journal`: one JSON snapshot of a
//! transactional id per accepted transition, appended and synced before the
//! command is answered (a [`Journal`], so a torn tail is truncated on open
//! and mid-file corruption refuses the open).
//!
//! Each record is `{"version":1,"type":"transaction","next_producer_id":N,
//! "transaction":{...snapshot}}`; the latest record of an id is its state, and
//! `next_producer_id` (the largest seen) is the producer-id counter. When
//! the journal holds many more records than ids it is rewritten with the
//! latest snapshot of each id (compaction).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use serde::{Deserialize, Serialize};
use tracing::{info, warn};

use super::state::TxnSnapshot;
use crate::storage::{Journal, StorageError};

/// File name of the journal inside the data directory.
pub const TXN_JOURNAL_FILE: &str = "__transaction_state.journal";
/// The record format version this broker writes and accepts.
pub const TXN_RECORD_VERSION: u64 = 1;
/// Records in the journal before compaction is considered.
pub const COMPACT_MIN_RECORDS: u64 = 1024;

/// Why the transaction state could not be recovered; the broker stays not
/// ready.
#[derive(Debug, thiserror::Error)]
pub enum TxnReplayError {
    /// The journal could not be opened or is corrupt.
    #[error("__transaction_state storage: {0}")]
    Storage(#[from] StorageError),
    /// A record is unversioned or malformed.
    #[error("__transaction_state record {index} in {path}: {reason}")]
    Record {
        /// The journal.
        path: PathBuf,
        /// Zero-based record number.
        index: usize,
        /// What is wrong.
        reason: String,
    },
}

#[derive(Debug, Serialize, Deserialize)]
struct JournalRecord {
    version: Option<u64>,
    #[serde(rename = "type")]
    kind: String,
    next_producer_id: u64,
    transaction: TxnSnapshot,
}

/// Encodes one journal record.
pub fn encode_record(snapshot: &TxnSnapshot, next_producer_id: u64) -> Result<Vec<u8>, String> {
    serde_json::to_vec(&JournalRecord {
        version: Some(TXN_RECORD_VERSION),
        kind: "transaction".into(),
        next_producer_id,
        transaction: snapshot.clone(),
    })
    .map_err(|e| e.to_string())
}

/// Decodes one journal record into its snapshot and counter.
pub fn decode_record(bytes: &[u8]) -> Result<(TxnSnapshot, u64), String> {
    let record: JournalRecord =
        serde_json::from_slice(bytes).map_err(|e| format!("not a transaction record: {e}"))?;
    match record.version {
        None => return Err("unversioned record".into()),
        Some(TXN_RECORD_VERSION) => {}
        Some(v) => return Err(format!("unsupported record version {v}")),
    }
    if record.kind != "transaction" {
        return Err(format!("unknown record type {:?}", record.kind));
    }
    Ok((record.transaction, record.next_producer_id))
}

/// The number `n` of a `txn-<n>` producer id.
pub fn producer_number(producer_id: &str) -> Option<u64> {
    producer_id.strip_prefix("txn-")?.parse().ok()
}

#[derive(Debug, Default)]
struct Latest {
    snapshots: BTreeMap<String, TxnSnapshot>,
    next_producer_id: u64,
}

/// The open transaction-state journal with the latest snapshot of every id.
#[derive(Debug)]
pub struct TxnJournal {
    journal: Journal,
    /// Appends share it; compaction holds it exclusively so the rewrite
    /// reflects every append.
    rewrite: RwLock<()>,
    latest: Mutex<Latest>,
    compact_min_records: u64,
}

impl TxnJournal {
    /// Why the journal failed (it then refuses transitions until a restart).
    pub fn failure(&self) -> Option<String> {
        self.journal.failure()
    }

    /// Opens (creating if missing) and replays the journal (blocking).
    pub fn open(data_dir: &Path) -> Result<TxnJournal, TxnReplayError> {
        Self::open_with_threshold(data_dir, COMPACT_MIN_RECORDS)
    }

    /// [`open`](Self::open) compacting from `compact_min_records` on.
    pub fn open_with_threshold(
        data_dir: &Path,
        compact_min_records: u64,
    ) -> Result<TxnJournal, TxnReplayError> {
        let path = data_dir.join(TXN_JOURNAL_FILE);
        let (journal, records) = Journal::open(&path)?;
        let mut latest = Latest {
            snapshots: BTreeMap::new(),
            next_producer_id: 1,
        };
        for (index, bytes) in records.iter().enumerate() {
            let (snapshot, next) =
                decode_record(bytes).map_err(|reason| TxnReplayError::Record {
                    path: path.clone(),
                    index,
                    reason,
                })?;
            let own = producer_number(&snapshot.producer_id).map_or(0, |n| n + 1);
            latest.next_producer_id = latest.next_producer_id.max(next).max(own);
            latest
                .snapshots
                .insert(snapshot.transactional_id.clone(), snapshot);
        }
        info!(
            records = records.len(),
            transactional_ids = latest.snapshots.len(),
            "__transaction_state replayed"
        );
        let compact = records.len() > latest.snapshots.len();
        let store = TxnJournal {
            journal,
            rewrite: RwLock::new(()),
            latest: Mutex::new(latest),
            compact_min_records,
        };
        if compact {
            store.compact()?;
        }
        Ok(store)
    }

    fn latest(&self) -> std::sync::MutexGuard<'_, Latest> {
        self.latest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The latest durable snapshot of every transactional id.
    pub fn snapshots(&self) -> Vec<TxnSnapshot> {
        self.latest().snapshots.values().cloned().collect()
    }

    /// The latest durable snapshot of `id`.
    pub fn get(&self, id: &str) -> Option<TxnSnapshot> {
        self.latest().snapshots.get(id).cloned()
    }

    /// A fresh broker-managed producer id, `txn-<n>`. The counter is made
    /// durable with the next persisted snapshot.
    pub fn allocate_producer_id(&self) -> String {
        let mut latest = self.latest();
        let n = latest.next_producer_id;
        latest.next_producer_id += 1;
        format!("txn-{n}")
    }

    /// Appends `snapshot` and returns once it is durable (blocking); then
    /// it is the id's latest state. Compacts when the journal grew.
    pub fn persist(&self, snapshot: &TxnSnapshot) -> Result<(), StorageError> {
        {
            let _shared = self.rewrite.read().unwrap_or_else(|e| e.into_inner());
            let next = self.latest().next_producer_id;
            let bytes = encode_record(snapshot, next).map_err(StorageError::InvalidArgument)?;
            self.journal.append_sync(&bytes)?;
            self.latest()
                .snapshots
                .insert(snapshot.transactional_id.clone(), snapshot.clone());
        }
        let ids = self.latest().snapshots.len() as u64;
        let records = self.journal.record_count();
        if records >= self.compact_min_records && records > ids.saturating_mul(4) {
            if let Err(e) = self.compact() {
                warn!(error = %e, "__transaction_state compaction failed");
            }
        }
        Ok(())
    }

    /// Rewrites the journal with the latest snapshot of every id.
    pub fn compact(&self) -> Result<(), StorageError> {
        let _exclusive = self.rewrite.write().unwrap_or_else(|e| e.into_inner());
        let encoded = {
            let latest = self.latest();
            latest
                .snapshots
                .values()
                .map(|s| encode_record(s, latest.next_producer_id))
                .collect::<Result<Vec<_>, _>>()
                .map_err(StorageError::InvalidArgument)?
        };
        let before = self.journal.record_count();
        self.journal.rewrite(&encoded)?;
        info!(
            before,
            after = encoded.len(),
            "__transaction_state compacted"
        );
        Ok(())
    }

    /// Records currently in the journal file.
    pub fn record_count(&self) -> u64 {
        self.journal.record_count()
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        self.journal.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::state::TxnState;

    fn snap(id: &str, pid: &str, epoch: i64, state: TxnState) -> TxnSnapshot {
        TxnSnapshot {
            epoch,
            state,
            ..TxnSnapshot::new(id, pid.into(), 0)
        }
    }

    #[test]
    fn replays_latest_state_and_the_producer_counter() {
        let dir = tempfile::tempdir().unwrap();
        {
            let j = TxnJournal::open(dir.path()).unwrap();
            let a = j.allocate_producer_id();
            let b = j.allocate_producer_id();
            assert_eq!((a.as_str(), b.as_str()), ("txn-1", "txn-2"));
            j.persist(&snap("a", &a, 0, TxnState::Empty)).unwrap();
            let mut open = snap("a", &a, 0, TxnState::Open);
            open.offsets = Some(open.stage_offsets("g", "m", 1, "t", &[(3, 9)]).unwrap());
            j.persist(&open).unwrap();
            j.persist(&snap("b", &b, 3, TxnState::Committed)).unwrap();
        }
        let j = TxnJournal::open(dir.path()).unwrap();
        let a = j.get("a").unwrap();
        assert_eq!(a.state, TxnState::Open);
        assert_eq!(a.offsets.unwrap().flat(), vec![("t".to_owned(), 3, 9)]);
        assert_eq!(j.get("b").unwrap().epoch, 3);
        // Compacted on open: one record per id.
        assert_eq!(j.record_count(), 2);
        assert_eq!(j.allocate_producer_id(), "txn-3");
    }

    #[test]
    fn compacts_when_it_grows() {
        let dir = tempfile::tempdir().unwrap();
        let j = TxnJournal::open_with_threshold(dir.path(), 20).unwrap();
        let pid = j.allocate_producer_id();
        for epoch in 0..100 {
            j.persist(&snap("a", &pid, epoch, TxnState::Committed))
                .unwrap();
        }
        assert!(j.record_count() < 20, "{}", j.record_count());
        drop(j);
        let j = TxnJournal::open(dir.path()).unwrap();
        assert_eq!(j.get("a").unwrap().epoch, 99);
    }

    #[test]
    fn unversioned_records_fail_replay() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (journal, _) = Journal::open(dir.path().join(TXN_JOURNAL_FILE)).unwrap();
            journal
                .append_sync(br#"{"type":"transaction","next_producer_id":1}"#)
                .unwrap();
        }
        let err = TxnJournal::open(dir.path()).unwrap_err();
        assert!(matches!(err, TxnReplayError::Record { .. }), "{err}");
    }

    #[test]
    fn torn_tail_is_truncated_and_mid_file_corruption_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TXN_JOURNAL_FILE);
        {
            let j = TxnJournal::open(dir.path()).unwrap();
            for epoch in 0..2 {
                for id in ["a", "b"] {
                    j.persist(&snap(id, "txn-1", epoch, TxnState::Aborted))
                        .unwrap();
                }
            }
        }
        let full = std::fs::read(&path).unwrap();
        // A torn final record: the last transition is lost, the rest kept.
        std::fs::write(&path, &full[..full.len() - 5]).unwrap();
        let j = TxnJournal::open(dir.path()).unwrap();
        assert_eq!(j.get("a").unwrap().epoch, 1);
        assert_eq!(j.get("b").unwrap().epoch, 0);
        assert_eq!(j.record_count(), 2);
        drop(j);
        // A damaged first record followed by a valid one: refused.
        let mut damaged = std::fs::read(&path).unwrap();
        assert!(damaged.len() > 20);
        damaged[10] ^= 0xff;
        std::fs::write(&path, &damaged).unwrap();
        let err = TxnJournal::open(dir.path()).unwrap_err();
        assert!(err.to_string().contains("not a torn tail"), "{err}");
    }
}
