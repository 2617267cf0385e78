//! The durable idempotent-producer checkpoint of a partition:
//! `producer_state.checkpoint` in the partition directory
//! (docs/standalone-rules.md "Idempotent producer state").
//!
//! It holds, per producer id, the newest `(epoch, last sequence, last
//! offset)` the partition appended. It is written atomically (temp file,
//! fsync, rename, directory fsync) when a segment is sealed, before
//! retention or compaction removes records, and before idle producers leave
//! memory (`producer_state_ttl_ms`). It is merged into the state rebuilt from
//! the log at startup and read when a publish names a producer that is not in
//! memory, so a late retry is deduplicated even after its records are gone.
//! Entries only leave it with the partition's data (DELETE removes the
//! directory, TRUNCATE removes the file).
//!
//! Format: JSON `{"format":1,"producers":{"<id>":{"epoch":E,"last_seq":S,
//! "last_offset":O},...}}`.

use std::collections::{BTreeMap, HashMap};
use std::io::ErrorKind;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::producers::{ProducerEntry, ProducerTable};
use crate::storage::{atomic_file, StorageError};

/// File name of the checkpoint in a partition directory.
pub const CHECKPOINT_FILE: &str = "producer_state.checkpoint";

const FORMAT: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    epoch: i64,
    last_seq: u64,
    last_offset: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Document {
    format: u32,
    producers: BTreeMap<String, Stored>,
}

/// The checkpointed producers of the partition in `dir` (empty when there is
/// no checkpoint).
pub fn load(dir: &Path) -> Result<HashMap<String, ProducerEntry>, StorageError> {
    let path = dir.join(CHECKPOINT_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(StorageError::io(&path, e)),
    };
    let doc: Document = serde_json::from_slice(&bytes)
        .map_err(|e| StorageError::corruption(&path, 0, format!("bad producer checkpoint: {e}")))?;
    if doc.format != FORMAT {
        return Err(StorageError::corruption(
            &path,
            0,
            format!("unknown producer checkpoint format {}", doc.format),
        ));
    }
    Ok(doc
        .producers
        .into_iter()
        .map(|(id, s)| {
            let entry = ProducerEntry {
                epoch: s.epoch,
                last_seq: s.last_seq,
                last_offset: s.last_offset,
            };
            (id, entry)
        })
        .collect())
}

/// The entry of `producer` in the checkpoint of `dir`, if any.
pub fn lookup(dir: &Path, producer: &str) -> Result<Option<ProducerEntry>, StorageError> {
    Ok(load(dir)?.remove(producer))
}

/// Writes the checkpoint of `dir`: what it held, updated with every producer
/// of `table` (the newer `(epoch, seq)` wins).
pub fn write(dir: &Path, table: &ProducerTable) -> Result<(), StorageError> {
    let mut merged = ProducerTable::new();
    for (id, e) in load(dir)? {
        merged.observe(&id, e.epoch, e.last_seq, e.last_offset);
    }
    for (id, e) in table.entries() {
        merged.observe(id, e.epoch, e.last_seq, e.last_offset);
    }
    let doc = Document {
        format: FORMAT,
        producers: merged
            .entries()
            .map(|(id, e)| {
                let stored = Stored {
                    epoch: e.epoch,
                    last_seq: e.last_seq,
                    last_offset: e.last_offset,
                };
                (id.to_owned(), stored)
            })
            .collect(),
    };
    let bytes = serde_json::to_vec(&doc)
        .map_err(|e| StorageError::InvalidArgument(format!("producer checkpoint: {e}")))?;
    atomic_file::write_atomic(&dir.join(CHECKPOINT_FILE), &bytes)
}

/// Removes the checkpoint of `dir` (TRUNCATE).
pub fn remove(dir: &Path) -> Result<(), StorageError> {
    let path = dir.join(CHECKPOINT_FILE);
    match std::fs::remove_file(&path) {
        Ok(()) => atomic_file::sync_dir(dir),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(&path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topics::SeqCheck;
    use std::time::{Duration, Instant};

    #[test]
    fn round_trip_and_merge() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path()).unwrap().is_empty());
        let mut t = ProducerTable::new();
        t.observe("a", 0, 3, 7);
        write(dir.path(), &t).unwrap();
        let mut t = ProducerTable::new();
        t.observe("b", 1, 1, 9);
        write(dir.path(), &t).unwrap();
        let got = load(dir.path()).unwrap();
        assert_eq!(got["a"].last_offset, 7);
        assert_eq!(got["b"].epoch, 1);
        remove(dir.path()).unwrap();
        assert!(load(dir.path()).unwrap().is_empty());
    }

    #[test]
    fn an_expired_producer_is_found_in_the_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = ProducerTable::new();
        t.set_checkpoint_dir(dir.path());
        t.observe("p", 0, 2, 41);
        let later = Instant::now() + Duration::from_secs(10);
        // Expiry checkpoints first, then forgets.
        assert_eq!(t.expire(later, Duration::from_secs(1)).unwrap(), 1);
        assert!(t.get("p").is_none());
        assert_eq!(
            t.check_durable("p", 0, 2).unwrap(),
            SeqCheck::Duplicate { offset: 41 }
        );
        assert_eq!(t.get("p").unwrap().last_offset, 41, "back in memory");
        assert_eq!(t.check_durable("p", 0, 3).unwrap(), SeqCheck::Append);
    }
}
