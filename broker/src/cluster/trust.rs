//! How much of each partition replica's log is known to be the partition's
//! history: the **trusted offset**. Every record below it on this broker
//! is the record every leader since has at that offset.
//!
//! A replica's log may hold records no other replica has: a leader cut off
//! from its followers (or killed) keeps what it appended but never
//! committed, and a new leader writes other records at those offsets.
//! Truncating a returning replica to the committed high-water mark is not
//! enough: the mark may have moved past those offsets under the new
//! leader (docs/cluster.md, "Replication"). Below the trusted offset,
//! though, the log was committed while this replica led or followed in
//! sync: those records are the history.
//!
//! The offset rises, in the reconciler, to the committed high-water mark
//! of the epoch this broker leads, or to the part of it a follower has
//! verified against its leader. It is persisted lazily
//! (`<data_dir>/replica_trust.json`, replaced atomically about once a
//! second): a value read back after a crash is one that was true earlier,
//! and an earlier trusted offset is still trusted (the log below it only
//! changes when the topic is truncated or deleted, and then the topic's
//! offsets are forgotten at once, on disk too).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tracing::warn;

use crate::storage::atomic_file::write_atomic;

/// The file name in the data directory.
pub const FILE_NAME: &str = "replica_trust.json";

/// One partition's entry in the file.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    topic: String,
    partition: u32,
    trusted: u64,
}

/// The file's contents.
#[derive(Debug, Serialize, Deserialize)]
struct File {
    version: u32,
    replicas: Vec<Entry>,
}

/// This broker's trusted offsets, by (topic, partition).
#[derive(Debug)]
pub struct ReplicaTrust {
    path: PathBuf,
    offsets: Mutex<BTreeMap<(String, u32), u64>>,
    /// Raised since the last write.
    dirty: AtomicBool,
}

impl ReplicaTrust {
    /// The offsets persisted in `data_dir` (none when the file is missing;
    /// an unreadable file is logged and trusts nothing, which is safe:
    /// a replica then compares its whole log with its leader's).
    pub fn open(data_dir: &Path) -> ReplicaTrust {
        let path = data_dir.join(FILE_NAME);
        let offsets = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<File>(&bytes) {
                Ok(file) => file
                    .replicas
                    .into_iter()
                    .map(|e| ((e.topic, e.partition), e.trusted))
                    .collect(),
                Err(e) => {
                    warn!(path = %path.display(), error = %e, "unreadable replica trust file; trusting nothing");
                    BTreeMap::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => {
                warn!(path = %path.display(), error = %e, "cannot read the replica trust file; trusting nothing");
                BTreeMap::new()
            }
        };
        ReplicaTrust {
            path,
            offsets: Mutex::new(offsets),
            dirty: AtomicBool::new(false),
        }
    }

    /// The trusted offset of `topic`/`partition` (0: nothing known).
    pub fn get(&self, topic: &str, partition: u32) -> u64 {
        lock(&self.offsets)
            .get(&(topic.to_owned(), partition))
            .copied()
            .unwrap_or(0)
    }

    /// Raises the trusted offset of `topic`/`partition` to `offset` (a
    /// lower value changes nothing).
    pub fn raise(&self, topic: &str, partition: u32, offset: u64) {
        let mut offsets = lock(&self.offsets);
        let entry = offsets.entry((topic.to_owned(), partition)).or_default();
        if offset > *entry {
            *entry = offset;
            self.dirty.store(true, Ordering::Release);
        }
    }

    /// Forgets every partition of `topic` (truncated or deleted: its log
    /// below the old offsets is gone) and writes the file at once.
    pub fn forget_topic(&self, topic: &str) -> std::io::Result<()> {
        let had = {
            let mut offsets = lock(&self.offsets);
            let before = offsets.len();
            offsets.retain(|(t, _), _| t != topic);
            offsets.len() != before
        };
        if had {
            self.dirty.store(true, Ordering::Release);
            self.persist()?;
        }
        Ok(())
    }

    /// Writes the file if an offset changed since the last write (blocking
    /// I/O: a small file, replaced atomically).
    pub fn persist(&self) -> std::io::Result<()> {
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let file = File {
            version: 1,
            replicas: lock(&self.offsets)
                .iter()
                .map(|((topic, partition), trusted)| Entry {
                    topic: topic.clone(),
                    partition: *partition,
                    trusted: *trusted,
                })
                .collect(),
        };
        let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
        write_atomic(&self.path, &bytes).map_err(|e| {
            self.dirty.store(true, Ordering::Release);
            std::io::Error::other(e.to_string())
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_rise_persist_and_are_forgotten_with_their_topic() {
        let dir = tempfile::tempdir().unwrap();
        let trust = ReplicaTrust::open(dir.path());
        assert_eq!(trust.get("t", 0), 0);
        trust.raise("t", 0, 10);
        trust.raise("t", 0, 7);
        trust.raise("t", 1, 3);
        trust.raise("u", 0, 5);
        assert_eq!(trust.get("t", 0), 10, "never lowered");
        trust.persist().unwrap();
        let back = ReplicaTrust::open(dir.path());
        assert_eq!((back.get("t", 0), back.get("t", 1)), (10, 3));
        back.forget_topic("t").unwrap();
        let again = ReplicaTrust::open(dir.path());
        assert_eq!((again.get("t", 0), again.get("u", 0)), (0, 5));
    }

    #[test]
    fn an_unreadable_file_trusts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), b"{not json").unwrap();
        assert_eq!(ReplicaTrust::open(dir.path()).get("t", 0), 0);
    }
}
