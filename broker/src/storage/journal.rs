//! [`Journal`]: a generic durable append-only record file for coordinator
//! state (consumer offsets, transaction state).
//!
//! The file is a plain sequence of frames (`crc u32 BE | len u32 BE |
//! record`, CRC32C over `len` + record; see [`frame`](super::frame)) with no
//! file header; record contents (and their versioning) belong to the caller.
//! Recovery follows the partition-log rules: a torn or checksum-failing final
//! record with nothing valid after it is truncated with a warning; a bad
//! record followed by a valid one fails the open with
//! [`StorageError::Corruption`].

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tracing::warn;

use super::atomic_file;
use super::error::{IoContext, Result, StorageError};
use super::frame::{self, HARD_MAX_BODY};
use super::group_commit::{lock, GroupCommit};
use super::io;

/// Default largest journal record: 32 MiB (the specification's limit for one
/// encoded transaction-state snapshot).
pub const DEFAULT_MAX_JOURNAL_RECORD_BYTES: usize = 32 * 1024 * 1024;

#[derive(Debug)]
struct Inner {
    file: Arc<File>,
    /// Valid bytes in the file.
    len: u64,
    /// Records in the current file.
    records: u64,
    /// Records appended since open (group-commit position).
    sequence: u64,
}

/// A durable, checksummed, append-only record journal; see the module docs.
///
/// `Send + Sync`; concurrent [`append_sync`](Journal::append_sync) calls
/// share fdatasyncs (group commit).
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    max_record_bytes: usize,
    inner: Mutex<Inner>,
    commit: GroupCommit,
}

impl Journal {
    /// Opens (creating if missing) the journal at `path`, recovers it and
    /// returns it with every valid record in order. Records are limited to
    /// [`DEFAULT_MAX_JOURNAL_RECORD_BYTES`].
    pub fn open(path: impl AsRef<Path>) -> Result<(Journal, Vec<Bytes>)> {
        Self::open_with_limit(path, DEFAULT_MAX_JOURNAL_RECORD_BYTES)
    }

    /// [`open`](Self::open) with a different per-record append limit (at most
    /// 1 GiB). Existing records are read whatever their size.
    pub fn open_with_limit(
        path: impl AsRef<Path>,
        max_record_bytes: usize,
    ) -> Result<(Journal, Vec<Bytes>)> {
        let path = path.as_ref().to_path_buf();
        if max_record_bytes > HARD_MAX_BODY {
            return Err(StorageError::InvalidArgument(format!(
                "journal max_record_bytes must be at most {HARD_MAX_BODY}"
            )));
        }
        atomic_file::remove_stale_temp_files(&path)?;
        let file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => create_empty(&path)?,
            Err(e) => return Err(StorageError::io(&path, e)),
        };
        let size = file.metadata().ctx(&path)?.len();
        let size_usize = usize::try_from(size)
            .map_err(|_| StorageError::corruption(&path, 0, "journal too large"))?;
        let mut buf = vec![0u8; size_usize];
        file.read_exact_at(&mut buf, 0).ctx(&path)?;
        let buf = Bytes::from(buf);

        let mut ranges = Vec::new();
        let scan = frame::scan_frames(&buf, 0, 0, HARD_MAX_BODY, |pos, body| {
            let start = pos + frame::FRAME_HEADER_LEN;
            ranges.push(start..start + body.len());
            Ok(())
        });
        let mut len = size;
        if let Some(d) = scan.damage {
            if let Some(valid_at) =
                frame::find_valid_frame_after(&buf, d.position + 1, 0, HARD_MAX_BODY, |_| true)
            {
                return Err(StorageError::corruption(
                    &path,
                    d.position as u64,
                    format!(
                        "{}; a valid record follows at byte {valid_at}, so this is not a torn tail",
                        d.reason
                    ),
                ));
            }
            len = scan.valid_end as u64;
            warn!(
                path = %path.display(),
                position = len,
                dropped_bytes = size - len,
                reason = %d.reason,
                "truncating torn tail of journal"
            );
            file.set_len(len).ctx(&path)?;
            io::sync_all(&file, &path).ctx(&path)?;
        }
        let records: Vec<Bytes> = ranges.into_iter().map(|r| buf.slice(r)).collect();
        let journal = Journal {
            commit: GroupCommit::new(&path, 0),
            path,
            max_record_bytes,
            inner: Mutex::new(Inner {
                file: Arc::new(file),
                len,
                records: records.len() as u64,
                sequence: 0,
            }),
        };
        Ok((journal, records))
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` and returns once it is durable (fdatasync; concurrent
    /// callers share syncs).
    pub fn append_sync(&self, record: &[u8]) -> Result<()> {
        self.check_size(record.len())?;
        let mut framed = Vec::with_capacity(frame::FRAME_HEADER_LEN + record.len());
        frame::encode_frame(&mut framed, &[record]);
        let sequence = {
            let mut inner = lock(&self.inner);
            self.commit.check()?;
            if let Err(e) = io::write_all_at(&inner.file, &self.path, &framed, inner.len) {
                let err = StorageError::io(&self.path, e);
                if inner.file.set_len(inner.len).is_ok() {
                    return Err(err);
                }
                return Err(self
                    .commit
                    .fail(format!("append failed and could not be undone: {err}")));
            }
            inner.len += framed.len() as u64;
            inner.records += 1;
            inner.sequence += 1;
            self.commit.record_written(inner.sequence);
            inner.sequence
        };
        self.commit.wait_durable(sequence, || {
            let (file, covered) = {
                let inner = lock(&self.inner);
                (inner.file.clone(), inner.sequence)
            };
            io::sync_data(&file, &self.path).ctx(&self.path)?;
            Ok(covered)
        })
    }

    /// Atomically replaces the journal's contents with `records` (compaction):
    /// the new file is written beside the old one, synced and renamed over it.
    /// Records appended earlier are made durable first, so no `append_sync`
    /// in flight is left waiting; the caller must make sure `records` reflects
    /// every append whose effect should survive (the broker serializes
    /// compaction with appends under its coordinator lock).
    pub fn rewrite<R: AsRef<[u8]>>(&self, records: &[R]) -> Result<()> {
        let mut buf = Vec::new();
        for r in records {
            let r = r.as_ref();
            self.check_size(r.len())?;
            frame::encode_frame(&mut buf, &[r]);
        }
        let mut inner = lock(&self.inner);
        self.commit.check()?;
        if let Err(e) = io::sync_data(&inner.file, &self.path) {
            return Err(self
                .commit
                .fail(format!("fdatasync before rewrite failed: {e}")));
        }
        self.commit.count_sync();
        self.commit.mark_durable(inner.sequence);
        if let Err(e) = atomic_file::write_atomic(&self.path, &buf) {
            // The rename may or may not have happened: appending to the old
            // handle could write to an unlinked file, so refuse until reopened.
            return Err(self.commit.fail(format!("rewrite failed: {e}")));
        }
        let file = match OpenOptions::new().read(true).write(true).open(&self.path) {
            Ok(f) => f,
            Err(e) => {
                return Err(self
                    .commit
                    .fail(format!("reopening rewritten journal failed: {e}")))
            }
        };
        inner.file = Arc::new(file);
        inner.len = buf.len() as u64;
        inner.records = records.len() as u64;
        Ok(())
    }

    /// Valid bytes in the journal file.
    pub fn size_bytes(&self) -> u64 {
        lock(&self.inner).len
    }

    /// Records in the journal file (those returned by `open` or written by
    /// `rewrite`, plus later appends).
    pub fn record_count(&self) -> u64 {
        lock(&self.inner).records
    }

    /// Why the journal failed (a failed fsync or an append that could not be
    /// undone), if it did; it refuses work until reopened.
    pub fn failure(&self) -> Option<String> {
        self.commit.failure()
    }

    /// Number of fdatasync calls so far. For tests and metrics.
    pub fn sync_count(&self) -> u64 {
        self.commit.sync_count()
    }

    fn check_size(&self, len: usize) -> Result<()> {
        if len > self.max_record_bytes {
            return Err(StorageError::InvalidArgument(format!(
                "journal record of {len} bytes exceeds the limit of {}",
                self.max_record_bytes
            )));
        }
        Ok(())
    }
}

fn create_empty(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .ctx(path)?;
    io::sync_all(&file, path).ctx(path)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        atomic_file::sync_dir(parent)?;
    }
    Ok(file)
}
