//! The durable Raft log of the cluster group, in `<data_dir>/raft/`.
//!
//! Files:
//!
//! * `log`: append-only records, each `u32 len | u32 crc32c(len) |
//!   u32 crc32c(payload) | payload` (big-endian), the payload the JSON of
//!   one [`Entry`]; records hold consecutive indexes. An append is
//!   fdatasync'ed before it is acknowledged.
//! * `vote.json`, `committed.json`, `purged.json`: the vote, the last
//!   committed and the last purged log id, each replaced atomically
//!   ([`write_atomic`]).
//! * `.cursus-raft-format`: the marker, `9`, written when the directory is
//!   created. A non-empty directory without it, or with another value, is
//!   refused ("unsupported recovery protocol").
//!
//! Truncation (conflicting entries) cuts the file at the first removed
//! record; a purge records the purged id first, then rewrites the file with
//! the entries kept (atomically). On open, a torn or checksum-bad last record
//! (a crash in the middle of an append) is cut off; a bad record with data
//! after it fails the open with [`StoreError::Corrupt`].
//!
//! All entries are also kept in memory: the cluster log is metadata and is
//! purged after every snapshot.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use openraft::{RaftLogId, RaftLogReader, StorageIOError};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::types::{Entry, LogId, StorageError, TypeConfig, Vote};
use crate::storage::atomic_file::{remove_stale_temp_files, sync_dir, write_atomic};

/// The marker file's name.
pub const FORMAT_MARKER: &str = ".cursus-raft-format";
/// The only recovery protocol (marker value) this code reads.
pub const FORMAT_VERSION: &str = "9";

const LOG_FILE: &str = "log";
const VOTE_FILE: &str = "vote.json";
const COMMITTED_FILE: &str = "committed.json";
const PURGED_FILE: &str = "purged.json";
/// The state machine's snapshot file (written by `state_machine`).
pub(crate) const SNAPSHOT_FILE: &str = "snapshot.json";

const HEADER: usize = 12;
/// Largest record payload accepted on append and on open.
const MAX_RECORD: usize = 64 * 1024 * 1024;

/// Why the Raft storage failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An I/O error on `path`.
    #[error("raft storage i/o on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A durable file helper failed.
    #[error("raft storage: {0}")]
    Storage(#[from] crate::storage::StorageError),
    /// A record in the middle of the log (or a small state file) is bad.
    #[error("raft storage corrupt: {path} at offset {offset}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte offset of the bad record (0 for whole files).
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The directory was written by another recovery protocol.
    #[error(
        "unsupported recovery protocol in {path}: marker {found:?}, expected {FORMAT_VERSION:?}"
    )]
    UnsupportedFormat {
        /// The raft directory.
        path: PathBuf,
        /// The marker's contents (`None`: no marker in a non-empty directory).
        found: Option<String>,
    },
    /// A batch of entries whose indexes do not increase.
    #[error("raft log append out of order: index {index} after {last:?}")]
    OutOfOrder {
        /// The entry's index.
        index: u64,
        /// The last index in the log.
        last: Option<u64>,
    },
    /// An entry that cannot be encoded.
    #[error("raft log entry cannot be encoded: {0}")]
    Encode(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Opens (creating if needed) the raft directory and checks its marker.
pub(crate) fn open_dir(dir: &Path) -> Result<(), StoreError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let marker = dir.join(FORMAT_MARKER);
    match fs::read_to_string(&marker) {
        Ok(found) => {
            if found.trim() != FORMAT_VERSION {
                return Err(StoreError::UnsupportedFormat {
                    path: dir.to_path_buf(),
                    found: Some(found.trim().to_owned()),
                });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let non_empty = fs::read_dir(dir).map_err(io_err(dir))?.next().is_some();
            if non_empty {
                return Err(StoreError::UnsupportedFormat {
                    path: dir.to_path_buf(),
                    found: None,
                });
            }
            write_atomic(&marker, format!("{FORMAT_VERSION}\n").as_bytes())?;
        }
        Err(e) => return Err(io_err(&marker)(e)),
    }
    for name in [
        LOG_FILE,
        VOTE_FILE,
        COMMITTED_FILE,
        PURGED_FILE,
        SNAPSHOT_FILE,
    ] {
        remove_stale_temp_files(&dir.join(name))?;
    }
    Ok(())
}

/// Reads a small JSON state file; `None` when it does not exist.
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, StoreError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                path: path.to_path_buf(),
                offset: 0,
                reason: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// Replaces a small JSON state file atomically.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(value).map_err(|e| StoreError::Encode(e.to_string()))?;
    write_atomic(path, &bytes)?;
    Ok(())
}

fn encode_record(entry: &Entry, out: &mut Vec<u8>) -> Result<(), StoreError> {
    let payload = serde_json::to_vec(entry).map_err(|e| StoreError::Encode(e.to_string()))?;
    if payload.len() > MAX_RECORD {
        return Err(StoreError::Encode(format!(
            "entry {} is {} bytes, over {MAX_RECORD}",
            entry.get_log_id().index,
            payload.len()
        )));
    }
    let len = (payload.len() as u32).to_be_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&crc32c::crc32c(&len).to_be_bytes());
    out.extend_from_slice(&crc32c::crc32c(&payload).to_be_bytes());
    out.extend_from_slice(&payload);
    Ok(())
}

/// What scanning the log file found.
struct Scan {
    /// Entries with their record offsets.
    entries: BTreeMap<u64, (Entry, u64)>,
    /// Where the valid records end (the file is cut here if longer).
    end: u64,
}

fn scan(path: &Path, data: &[u8]) -> Result<Scan, StoreError> {
    let corrupt = |offset: usize, reason: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        offset: offset as u64,
        reason,
    };
    let be32 = |at: usize| u32::from_be_bytes(data[at..at + 4].try_into().expect("4 bytes"));
    let mut entries = BTreeMap::new();
    let mut pos = 0usize;
    let mut last: Option<u64> = None;
    while pos < data.len() {
        if data.len() - pos < HEADER {
            break; // torn header
        }
        let len = be32(pos) as usize;
        if crc32c::crc32c(&data[pos..pos + 4]) != be32(pos + 4) {
            if data[pos..].iter().all(|b| *b == 0) {
                break; // the file was extended but the record not written
            }
            return Err(corrupt(pos, "record length checksum mismatch".into()));
        }
        if len > MAX_RECORD {
            return Err(corrupt(
                pos,
                format!("record length {len} over {MAX_RECORD}"),
            ));
        }
        let end = pos + HEADER + len;
        if end > data.len() {
            break; // torn payload
        }
        let payload = &data[pos + HEADER..end];
        if crc32c::crc32c(payload) != be32(pos + 8) {
            if end == data.len() {
                break; // a torn last record
            }
            return Err(corrupt(pos, "record checksum mismatch".into()));
        }
        let entry: Entry = serde_json::from_slice(payload)
            .map_err(|e| corrupt(pos, format!("undecodable entry: {e}")))?;
        let index = entry.get_log_id().index;
        if let Some(prev) = last {
            if index <= prev {
                return Err(corrupt(pos, format!("entry index {index} follows {prev}")));
            }
        }
        last = Some(index);
        entries.insert(index, (entry, pos as u64));
        pos = end;
    }
    Ok(Scan {
        entries,
        end: pos as u64,
    })
}

/// The durable log, vote and committed id (shared behind a mutex by the
/// store and its log readers).
#[derive(Debug)]
pub struct LogFile {
    dir: PathBuf,
    file: File,
    /// Entries by index, with their record offsets in `file`.
    entries: BTreeMap<u64, (Entry, u64)>,
    end: u64,
    purged: Option<LogId>,
    vote: Option<Vote>,
    committed: Option<LogId>,
}

impl LogFile {
    /// Opens the log in `dir` (the raft directory), creating it with its
    /// marker if it does not exist. Cuts a torn tail; fails on a corrupt
    /// middle record or a foreign marker.
    pub fn open(dir: &Path) -> Result<LogFile, StoreError> {
        open_dir(dir)?;
        let path = dir.join(LOG_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io_err(&path))?;
        let data = fs::read(&path).map_err(io_err(&path))?;
        let Scan { mut entries, end } = scan(&path, &data)?;
        if end < data.len() as u64 {
            tracing::debug!(
                path = %path.display(),
                cut = data.len() as u64 - end,
                "raft log: cutting a torn tail"
            );
            file.set_len(end).map_err(io_err(&path))?;
            file.sync_data().map_err(io_err(&path))?;
        }
        file.flush().map_err(io_err(&path))?;
        let purged: Option<LogId> = read_json(&dir.join(PURGED_FILE))?;
        if let Some(purged) = &purged {
            // A crash between recording the purge and rewriting the file
            // leaves purged entries in it: forget them.
            entries.retain(|index, _| *index > purged.index);
        }
        let mut committed: Option<LogId> = read_json(&dir.join(COMMITTED_FILE))?;
        let last = entries
            .last_key_value()
            .map(|(_, (e, _))| *e.get_log_id())
            .or(purged);
        if committed.map(|c| c.index) > last.map(|l| l.index) {
            // The log lost its tail (cut by hand, or a disk that lied about
            // a sync): what is not here cannot be re-applied; the leader
            // sends it again.
            tracing::debug!(?committed, ?last, "raft log: committed id past the log end");
            committed = last;
        }
        Ok(LogFile {
            vote: read_json(&dir.join(VOTE_FILE))?,
            committed,
            dir: dir.to_path_buf(),
            file,
            entries,
            end,
            purged,
        })
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join(LOG_FILE)
    }

    /// The last purged log id.
    pub fn purged(&self) -> Option<LogId> {
        self.purged
    }

    /// The last log id (of the last entry, else the last purged).
    pub fn last_log_id(&self) -> Option<LogId> {
        self.entries
            .last_key_value()
            .map(|(_, (e, _))| *e.get_log_id())
            .or(self.purged)
    }

    /// The entries whose indexes are in `range`.
    pub fn entries(&self, range: impl RangeBounds<u64>) -> Vec<Entry> {
        self.entries
            .range(range)
            .map(|(_, (e, _))| e.clone())
            .collect()
    }

    /// Appends `entries` (in increasing index order) and fdatasyncs the file
    /// before returning. Entries at or after the first appended index are
    /// replaced (openraft truncates conflicts itself first; this keeps the
    /// file free of dead records whatever the caller does).
    pub fn append(&mut self, entries: impl IntoIterator<Item = Entry>) -> Result<(), StoreError> {
        let mut buf = Vec::new();
        let mut added = Vec::new();
        let mut last: Option<u64> = None;
        for entry in entries {
            let index = entry.get_log_id().index;
            match last {
                Some(prev) if index <= prev => {
                    return Err(StoreError::OutOfOrder {
                        index,
                        last: Some(prev),
                    });
                }
                None => self.truncate(index)?,
                Some(_) => {}
            }
            last = Some(index);
            let offset = self.end + buf.len() as u64;
            encode_record(&entry, &mut buf)?;
            added.push((index, entry, offset));
        }
        if buf.is_empty() {
            return Ok(());
        }
        let path = self.log_path();
        let written = self
            .file
            .write_all(&buf)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            // Do not leave half a record before the next append.
            let _ = self.file.set_len(self.end);
            return Err(io_err(&path)(e));
        }
        self.end += buf.len() as u64;
        for (index, entry, offset) in added {
            self.entries.insert(index, (entry, offset));
        }
        Ok(())
    }

    /// Removes the entries at `index` and after (a conflict with the leader).
    pub fn truncate(&mut self, index: u64) -> Result<(), StoreError> {
        let Some(offset) = self.entries.range(index..).next().map(|(_, (_, o))| *o) else {
            return Ok(());
        };
        let path = self.log_path();
        self.file.set_len(offset).map_err(io_err(&path))?;
        self.file.sync_data().map_err(io_err(&path))?;
        self.end = offset;
        self.entries.split_off(&index);
        Ok(())
    }

    /// Forgets the entries up to and including `log_id`: records it in
    /// `purged.json`, then rewrites the log with the entries after it.
    pub fn purge(&mut self, log_id: LogId) -> Result<(), StoreError> {
        if self.purged.is_some_and(|p| p.index >= log_id.index) {
            return Ok(());
        }
        write_json(&self.dir.join(PURGED_FILE), &log_id)?;
        self.purged = Some(log_id);
        let kept = self.entries.split_off(&(log_id.index + 1));
        let mut buf = Vec::new();
        let mut entries = BTreeMap::new();
        for (index, (entry, _)) in kept {
            let offset = buf.len() as u64;
            encode_record(&entry, &mut buf)?;
            entries.insert(index, (entry, offset));
        }
        let path = self.log_path();
        write_atomic(&path, &buf)?;
        self.file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        self.entries = entries;
        self.end = buf.len() as u64;
        Ok(())
    }

    /// Persists the vote (atomically, synced).
    pub fn save_vote(&mut self, vote: &Vote) -> Result<(), StoreError> {
        write_json(&self.dir.join(VOTE_FILE), vote)?;
        self.vote = Some(*vote);
        Ok(())
    }

    /// The persisted vote.
    pub fn vote(&self) -> Option<Vote> {
        self.vote
    }

    /// Persists the last committed log id.
    pub fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StoreError> {
        if committed == self.committed {
            return Ok(());
        }
        write_json(&self.dir.join(COMMITTED_FILE), &committed)?;
        self.committed = committed;
        Ok(())
    }

    /// The persisted last committed log id.
    pub fn committed(&self) -> Option<LogId> {
        self.committed
    }

    /// The raft directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Syncs the raft directory (after creating files in it).
    pub fn sync_dir(&self) -> Result<(), StoreError> {
        sync_dir(&self.dir)?;
        Ok(())
    }
}

/// A shared handle on the log, usable as openraft's log reader.
#[derive(Debug, Clone)]
pub struct LogReader(pub(crate) Arc<Mutex<LogFile>>);

impl RaftLogReader<TypeConfig> for LogReader {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        Ok(self.0.lock().map_err(poisoned)?.entries(range))
    }
}

/// A poisoned lock as a storage error.
pub(crate) fn poisoned<T>(_: T) -> StorageError {
    StorageIOError::read_logs(&std::io::Error::other("raft log lock poisoned")).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::{CommittedLeaderId, EntryPayload};

    fn entry(term: u64, index: u64) -> Entry {
        Entry {
            log_id: LogId::new(CommittedLeaderId::new(term, 1), index),
            payload: EntryPayload::Normal(super::super::test_register(index)),
        }
    }

    fn indexes(log: &LogFile) -> Vec<u64> {
        log.entries(..).iter().map(|e| e.log_id.index).collect()
    }

    #[test]
    fn append_read_truncate_purge_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let raft = dir.path().join("raft");
        let mut log = LogFile::open(&raft).unwrap();
        assert_eq!(log.last_log_id(), None);
        log.append((0..10).map(|i| entry(1, i))).unwrap();
        assert_eq!(log.entries(3..5), vec![entry(1, 3), entry(1, 4)]);
        log.truncate(7).unwrap();
        assert_eq!(indexes(&log), (0..7).collect::<Vec<_>>());
        log.append((7..9).map(|i| entry(2, i))).unwrap();
        log.purge(entry(1, 3).log_id).unwrap();
        assert_eq!(log.purged(), Some(entry(1, 3).log_id));
        assert!(matches!(
            log.append([entry(2, 11), entry(2, 10)]),
            Err(StoreError::OutOfOrder { index: 10, .. })
        ));
        // Appending over existing indexes replaces them and what follows.
        log.append([entry(3, 7)]).unwrap();
        assert_eq!(indexes(&log), (4..8).collect::<Vec<_>>());
        log.append([entry(3, 8)]).unwrap();
        assert_eq!(log.entries(7..), vec![entry(3, 7), entry(3, 8)]);
        drop(log);
        let mut log = LogFile::open(&raft).unwrap();
        assert_eq!(indexes(&log), (4..9).collect::<Vec<_>>());
        assert_eq!(log.entries(7..), vec![entry(3, 7), entry(3, 8)]);
        assert_eq!(log.last_log_id(), Some(entry(3, 8).log_id));
        // Purge past the end: the log is empty, its last id is the purged one.
        log.purge(entry(2, 12).log_id).unwrap();
        assert!(indexes(&log).is_empty());
        assert_eq!(log.last_log_id(), Some(entry(2, 12).log_id));
        log.append([entry(2, 13)]).unwrap();
        drop(log);
        let log = LogFile::open(&raft).unwrap();
        assert_eq!(indexes(&log), vec![13]);
        assert_eq!(log.purged(), Some(entry(2, 12).log_id));
    }

    #[test]
    fn vote_and_committed_persist() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = LogFile::open(dir.path()).unwrap();
        assert_eq!(log.vote(), None);
        let vote = Vote::new_committed(3, 2);
        log.save_vote(&vote).unwrap();
        log.append((0..6).map(|i| entry(3, i))).unwrap();
        log.save_committed(Some(entry(3, 5).log_id)).unwrap();
        drop(log);
        let log = LogFile::open(dir.path()).unwrap();
        assert_eq!(log.vote(), Some(vote));
        assert_eq!(log.committed(), Some(entry(3, 5).log_id));
    }

    #[test]
    fn torn_tail_is_cut_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = LogFile::open(dir.path()).unwrap();
        log.append((0..5).map(|i| entry(1, i))).unwrap();
        drop(log);
        let path = dir.path().join(LOG_FILE);
        let full = fs::read(&path).unwrap();
        let last_offset = {
            let data = &full;
            scan(&path, data).unwrap().entries[&4].1 as usize
        };
        // Half of the last record.
        let cut = last_offset + (full.len() - last_offset) / 2;
        fs::write(&path, &full[..cut]).unwrap();
        let mut log = LogFile::open(dir.path()).unwrap();
        assert_eq!(indexes(&log), (0..4).collect::<Vec<_>>());
        assert_eq!(fs::metadata(&path).unwrap().len(), last_offset as u64);
        log.append([entry(1, 4)]).unwrap();
        drop(log);
        // A last record with a flipped payload byte, and trailing zeros.
        let mut data = fs::read(&path).unwrap();
        let n = data.len();
        data[n - 2] ^= 0xFF;
        fs::write(&path, &data).unwrap();
        assert_eq!(
            indexes(&LogFile::open(dir.path()).unwrap()),
            (0..4).collect::<Vec<_>>()
        );
        let mut data = fs::read(&path).unwrap();
        data.extend_from_slice(&[0u8; 40]);
        fs::write(&path, &data).unwrap();
        assert_eq!(
            indexes(&LogFile::open(dir.path()).unwrap()),
            (0..4).collect::<Vec<_>>()
        );
        // A committed id past the cut end is brought back to the end.
        let mut log = LogFile::open(dir.path()).unwrap();
        log.save_committed(Some(entry(1, 9).log_id)).unwrap();
        drop(log);
        assert_eq!(
            LogFile::open(dir.path()).unwrap().committed(),
            Some(entry(1, 3).log_id)
        );
    }

    #[test]
    fn corrupt_middle_record_fails_open() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = LogFile::open(dir.path()).unwrap();
        log.append((0..5).map(|i| entry(1, i))).unwrap();
        drop(log);
        let path = dir.path().join(LOG_FILE);
        let mut data = fs::read(&path).unwrap();
        let second = scan(&path, &data).unwrap().entries[&1].1 as usize;
        data[second + HEADER + 3] ^= 0xFF;
        fs::write(&path, &data).unwrap();
        match LogFile::open(dir.path()) {
            Err(StoreError::Corrupt { offset, .. }) => assert_eq!(offset, second as u64),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn marker_rules() {
        let dir = tempfile::tempdir().unwrap();
        let raft = dir.path().join("raft");
        drop(LogFile::open(&raft).unwrap());
        assert_eq!(
            fs::read_to_string(raft.join(FORMAT_MARKER)).unwrap().trim(),
            "9"
        );
        fs::write(raft.join(FORMAT_MARKER), "8\n").unwrap();
        let err = LogFile::open(&raft).unwrap_err();
        assert!(
            matches!(err, StoreError::UnsupportedFormat { found: Some(ref f), .. } if f == "8")
        );
        assert!(err.to_string().contains("unsupported recovery protocol"));
        fs::remove_file(raft.join(FORMAT_MARKER)).unwrap();
        assert!(matches!(
            LogFile::open(&raft),
            Err(StoreError::UnsupportedFormat { found: None, .. })
        ));
        // An existing but empty directory is fresh.
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        drop(LogFile::open(&empty).unwrap());
        assert!(empty.join(FORMAT_MARKER).exists());
    }
}
