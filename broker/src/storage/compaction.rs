//! Log compaction: rewrites sealed segments keeping, per non-null key, only
//! the newest record visible to read_committed readers.
//!
//! The rules (docs/standalone-rules.md "Compaction"):
//!
//! * only **sealed** segments lying wholly below the partition's last stable
//!   offset (`below`) are rewritten, never the active one;
//! * a keyed record is removed when a later record of the partition with the
//!   same key is visible (committed or non-transactional) below `below`;
//!   records without a key are kept; records of aborted transactions are
//!   removed; control markers are kept;
//! * a tombstone (a key with an empty value) that is the newest record of its
//!   key is removed once its timestamp is older than the tombstone
//!   retention;
//! * **offsets are preserved**: a rewritten segment keeps its file name
//!   (base offset) and has gaps, which readers and recovery skip; when the
//!   record at its last offset goes, a placeholder entry without data (see
//!   [`PLACEHOLDER_TIMESTAMP`]) keeps that offset, so the segment still ends
//!   where the next one begins and recovery still detects a missing
//!   segment. [`PartitionLog::read`] returns placeholders like any entry;
//!   topic readers skip entries without data (no topic record is empty).
//!
//! What a record *is* (its key, whether it is a marker or aborted) is decided
//! by the caller's `classify` closure, so this module knows nothing of the
//! record format.
//!
//! Crash safety: the cleaned segment is written to a temporary file beside
//! the old one (`.<base>.log.tmp.compact`, which recovery deletes) and
//! fsynced; then, under the log lock, the old index is removed (directory
//! synced), the temporary file is renamed over the `.log` (directory synced)
//! and the new index is written atomically. A crash at any point leaves the
//! old segment (maybe without its index, which recovery rebuilds) or the new
//! one (likewise), never a mix.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use tracing::info;

use super::atomic_file;
use super::error::{IoContext, Result, StorageError};
use super::index::OffsetIndex;
use super::partition_log::{PartitionLog, StoredRecord};
use super::segment::{encode_entry, log_file_name};

/// Timestamp of the placeholder entry (no data) compaction leaves at a
/// sealed segment's last offset when it removes the record there. Its
/// timestamp never holds time-based retention back.
pub const PLACEHOLDER_TIMESTAMP: i64 = i64::MIN;

/// Records read per chunk while scanning.
const SCAN_RECORDS: usize = 4096;
/// Record bytes read per chunk while scanning.
const SCAN_BYTES: usize = 16 << 20;

/// What a stored record is to the cleaner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordClass {
    /// A visible record with a non-empty key; `tombstone` when its value is
    /// empty.
    Keyed {
        /// The key bytes.
        key: Vec<u8>,
        /// The value is empty (a delete).
        tombstone: bool,
    },
    /// A visible record without a key: always kept.
    Keyless,
    /// A transaction control marker: always kept.
    Marker,
    /// A record of an aborted transaction: removed.
    Aborted,
}

/// Parameters of one compaction pass of a partition.
#[derive(Debug, Clone, Copy)]
pub struct CompactionPolicy {
    /// The last stable offset: only segments ending at or below it are
    /// rewritten, and only records below it count as "later".
    pub below: u64,
    /// Current time in milliseconds.
    pub now_ms: i64,
    /// Age after which a newest-of-its-key tombstone is removed.
    pub tombstone_retention_ms: i64,
}

/// Result of a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionOutcome {
    /// Segments rewritten.
    pub segments_rewritten: usize,
    /// Records removed.
    pub records_removed: u64,
    /// Log bytes freed.
    pub bytes_freed: u64,
}

/// A sealed segment chosen for a pass, identified by its open file so a
/// segment replaced meanwhile (retention, TRUNCATE) is left alone.
#[derive(Debug, Clone)]
struct Candidate {
    base: u64,
    end: u64,
    size: u64,
    file: Arc<File>,
}

/// A cleaned segment written to its temporary file, not yet installed.
#[derive(Debug)]
struct Staged {
    tmp_path: PathBuf,
    file: File,
    size: u64,
    index: OffsetIndex,
}

/// One compaction pass over `log` (blocking). `classify` is called for each
/// record below `policy.below`, twice per record of a candidate segment.
pub fn compact(
    log: &PartitionLog,
    policy: &CompactionPolicy,
    mut classify: impl FnMut(&StoredRecord) -> RecordClass,
) -> Result<CompactionOutcome> {
    let mut outcome = CompactionOutcome::default();
    let candidates = candidates(log, policy.below)?;
    if candidates.is_empty() {
        return Ok(outcome);
    }
    // Pass 1: the newest visible offset of every key below the LSO.
    let mut latest: HashMap<Vec<u8>, u64> = HashMap::new();
    scan(log, log.earliest_offset(), policy.below, |r| {
        if let RecordClass::Keyed { key, .. } = classify(r) {
            latest.insert(key, r.offset);
        }
    })?;
    let tombstone_cutoff = policy.now_ms.saturating_sub(policy.tombstone_retention_ms);
    // Pass 2: rewrite each candidate that loses records.
    for c in candidates {
        let mut kept = Vec::new();
        let mut removed = 0u64;
        scan(log, c.base, c.end, |r| {
            let keep = match classify(r) {
                RecordClass::Marker | RecordClass::Keyless => true,
                RecordClass::Aborted => false,
                RecordClass::Keyed { key, tombstone } => {
                    latest.get(&key) == Some(&r.offset)
                        && !(tombstone && r.timestamp < tombstone_cutoff)
                }
            };
            if keep {
                kept.push(r.clone());
            } else {
                removed += 1;
            }
        })?;
        if removed == 0 {
            continue;
        }
        // The segment must still end at `end`: a placeholder takes the last
        // offset's place when its record goes.
        if kept.last().map(|r| r.offset + 1) != Some(c.end) {
            kept.push(StoredRecord {
                offset: c.end - 1,
                timestamp: PLACEHOLDER_TIMESTAMP,
                data: Bytes::new(),
            });
        }
        let staged = stage(log.dir(), c.base, &kept, log.config().index_interval_bytes)?;
        let new_size = staged.size;
        let tmp_path = staged.tmp_path.clone();
        let installed = install(log, &c, staged);
        // Gone after a successful rename; otherwise never needed again.
        let _ = fs::remove_file(&tmp_path);
        if installed? {
            outcome.segments_rewritten += 1;
            outcome.records_removed += removed;
            outcome.bytes_freed += c.size.saturating_sub(new_size);
        }
    }
    if outcome.segments_rewritten > 0 {
        info!(
            dir = %log.dir().display(),
            segments = outcome.segments_rewritten,
            records = outcome.records_removed,
            bytes = outcome.bytes_freed,
            "compacted segments"
        );
    }
    Ok(outcome)
}

/// Sealed segments ending at or below `below`.
fn candidates(log: &PartitionLog, below: u64) -> Result<Vec<Candidate>> {
    log.with_segments(|segments| {
        let sealed = segments.len().saturating_sub(1);
        Ok(segments
            .iter()
            .take(sealed)
            .filter(|s| s.next_offset <= below)
            .map(|s| Candidate {
                base: s.base_offset,
                end: s.next_offset,
                size: s.size,
                file: Arc::clone(&s.file),
            })
            .collect())
    })
}

/// Calls `f` for every durable record in `[from, to)`.
fn scan(log: &PartitionLog, from: u64, to: u64, mut f: impl FnMut(&StoredRecord)) -> Result<()> {
    let mut next = from;
    while next < to {
        let chunk = log.read(next, SCAN_RECORDS, SCAN_BYTES)?;
        let Some(last) = chunk.last().map(|r| r.offset) else {
            break;
        };
        for r in chunk.iter().take_while(|r| r.offset < to) {
            f(r);
        }
        next = last + 1;
    }
    Ok(())
}

/// Path of the temporary file a cleaned segment is written to (recovery
/// removes leftovers: see [`atomic_file::is_temp_file_name`]).
fn temp_path(dir: &Path, base: u64) -> PathBuf {
    dir.join(format!(".{}.tmp.compact", log_file_name(base)))
}

/// Writes `records` (with their original offsets) as the segment `base`
/// into its temporary file, fsynced, and builds its index.
fn stage(dir: &Path, base: u64, records: &[StoredRecord], index_interval: u32) -> Result<Staged> {
    let tmp_path = temp_path(dir, base);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp_path)
        .ctx(&tmp_path)?;
    let mut index = OffsetIndex::new(index_interval);
    let mut size = 0u64;
    let mut entry = Vec::new();
    {
        let mut out = BufWriter::new(&file);
        for r in records {
            entry.clear();
            encode_entry(&mut entry, r.offset, r.timestamp, &r.data);
            let rel = u32::try_from(r.offset - base).map_err(|_| {
                StorageError::InvalidArgument(format!(
                    "offset {} too far from base {base}",
                    r.offset
                ))
            })?;
            index.observe(rel, size, r.timestamp);
            out.write_all(&entry).ctx(&tmp_path)?;
            size += entry.len() as u64;
        }
        out.flush().ctx(&tmp_path)?;
    }
    file.sync_all().ctx(&tmp_path)?;
    Ok(Staged {
        tmp_path,
        file,
        size,
        index,
    })
}

/// Swaps a staged segment in for `c` under the log lock; `false` when the
/// segment is no longer there (deleted by retention or TRUNCATE meanwhile).
fn install(log: &PartitionLog, c: &Candidate, staged: Staged) -> Result<bool> {
    let dir = log.dir().to_path_buf();
    log.with_segments(|segments| {
        let last = segments.len().saturating_sub(1);
        let Some(i) = segments.iter().position(|s| s.base_offset == c.base) else {
            return Ok(false);
        };
        let seg = &mut segments[i];
        if i >= last || !Arc::ptr_eq(&seg.file, &c.file) || seg.next_offset != c.end {
            return Ok(false);
        }
        // The old index must never describe the new log file.
        match fs::remove_file(&seg.index_path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(StorageError::io(&seg.index_path, e)),
        }
        atomic_file::sync_dir(&dir)?;
        fs::rename(&staged.tmp_path, &seg.log_path).ctx(&seg.log_path)?;
        // From here on the file on disk is the new one. Reads in flight keep
        // the old file open and finish on it.
        seg.file = Arc::new(staged.file);
        seg.size = staged.size;
        seg.index = staged.index;
        atomic_file::sync_dir(&dir)?;
        seg.write_index_file()?;
        atomic_file::sync_dir(&dir)?;
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::LogConfig;

    /// Test records: `key=value` (`=value` is keyless, `key=` a tombstone,
    /// `!...` aborted, `#` a marker).
    fn classify(r: &StoredRecord) -> RecordClass {
        let text = std::str::from_utf8(&r.data).unwrap();
        if text.is_empty() {
            return RecordClass::Keyless; // a placeholder
        }
        if text == "#" {
            return RecordClass::Marker;
        }
        if text.starts_with('!') {
            return RecordClass::Aborted;
        }
        let (key, value) = text.split_once('=').unwrap();
        if key.is_empty() {
            return RecordClass::Keyless;
        }
        RecordClass::Keyed {
            key: key.as_bytes().to_vec(),
            tombstone: value.is_empty(),
        }
    }

    fn config() -> LogConfig {
        LogConfig {
            segment_bytes: 100,
            index_interval_bytes: 30,
            ..LogConfig::default()
        }
    }

    fn open(dir: &Path) -> PartitionLog {
        PartitionLog::open(dir, config()).unwrap()
    }

    fn fill(log: &PartitionLog, records: &[&str]) {
        for (i, r) in records.iter().enumerate() {
            let info = log
                .append(&[(i as i64, Bytes::copy_from_slice(r.as_bytes()))])
                .unwrap();
            log.sync_to(info.last_offset).unwrap();
        }
    }

    /// The records from `from`, without placeholders.
    fn all(log: &PartitionLog, from: u64) -> Vec<(u64, String)> {
        log.read(from, 10_000, 1 << 20)
            .unwrap()
            .into_iter()
            .filter(|r| !r.data.is_empty())
            .map(|r| (r.offset, String::from_utf8(r.data.to_vec()).unwrap()))
            .collect()
    }

    fn policy(below: u64, now_ms: i64, tombstone_retention_ms: i64) -> CompactionPolicy {
        CompactionPolicy {
            below,
            now_ms,
            tombstone_retention_ms,
        }
    }

    const RECORDS: [&str; 12] = [
        "a=1", "b=1", "=x", "a=2", "!c=9", "#", "b=", "a=3", "=y", "c=1", "d=1", "d=2",
    ];

    fn expected_after() -> Vec<(u64, String)> {
        // a=1, b=1, a=2, !c=9 and d=1 go; the tombstone b= is young.
        [
            (2, "=x"),
            (5, "#"),
            (6, "b="),
            (7, "a=3"),
            (8, "=y"),
            (9, "c=1"),
            (11, "d=2"),
        ]
        .iter()
        .map(|(o, s)| (*o, s.to_string()))
        .collect()
    }

    #[test]
    fn keeps_the_newest_per_key_with_original_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        fill(&log, &RECORDS);
        // One more record so the last data records lie in sealed segments.
        let pad = "=padding-padding-padding-padding-padding-padding-padding";
        log.append(&[(99, Bytes::from(pad))]).unwrap();
        log.sync_to(12).unwrap();
        assert!(log.segment_count() > 3);
        let active_base = log
            .with_segments(|s| Ok(s.back().unwrap().base_offset))
            .unwrap();
        assert_eq!(active_base, 12, "record 12 alone in the active segment");
        let out = compact(&log, &policy(13, 100, 1000), classify).unwrap();
        assert_eq!(out.records_removed, 5);
        let mut want = expected_after();
        want.push((12, pad.to_string()));
        assert_eq!(all(&log, 0), want);
        // Offsets and the log's ends are untouched.
        assert_eq!((log.earliest_offset(), log.log_end_offset()), (0, 13));
        // A read from inside a gap starts at the next record.
        assert_eq!(all(&log, 3)[0], (5, "#".to_string()));
        assert_eq!(all(&log, 10)[0], (11, "d=2".to_string()));
        // Appends continue at the same offsets; a reopen sees the same log.
        drop(log);
        let log = open(dir.path());
        assert_eq!(all(&log, 0), want);
        assert_eq!(log.log_end_offset(), 13);
        let info = log.append(&[(1, Bytes::from_static(b"e=1"))]).unwrap();
        assert_eq!(info.base_offset, 13);
        // A second pass changes nothing; an old tombstone goes.
        assert_eq!(
            compact(&log, &policy(13, 100, 1000), classify)
                .unwrap()
                .records_removed,
            0
        );
        let out = compact(&log, &policy(13, 100_000, 1000), classify).unwrap();
        assert_eq!(out.records_removed, 1);
        assert!(!all(&log, 0).iter().any(|(o, _)| *o == 6));
    }

    #[test]
    fn a_removed_last_record_leaves_a_placeholder() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        // Segments of three: [b=1 c=1 a=1] [a=2 e=1 f=1] [g=1 ..
        fill(&log, &["b=1", "c=1", "a=1", "a=2", "e=1", "f=1", "g=1"]);
        let out = compact(&log, &policy(7, 100, 1000), classify).unwrap();
        assert_eq!(out.records_removed, 1);
        let want: Vec<(u64, String)> = [(0, "b=1"), (1, "c=1"), (3, "a=2")]
            .iter()
            .map(|(o, s)| (*o, s.to_string()))
            .collect();
        assert_eq!(all(&log, 0)[..3], want[..]);
        assert_eq!(all(&log, 2)[0], want[2]);
        drop(log);
        // Recovery still sees contiguous segments ...
        let log = open(dir.path());
        assert_eq!(all(&log, 0)[..3], want[..]);
        drop(log);
        // ... and still refuses a missing one.
        fs::remove_file(dir.path().join(log_file_name(3))).unwrap();
        assert!(matches!(
            PartitionLog::open(dir.path(), config()),
            Err(StorageError::Corruption { .. })
        ));
    }

    #[test]
    fn nothing_at_or_above_the_stable_offset_is_touched() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        fill(&log, &RECORDS);
        // Below 4 only a=1 is superseded by a=2 (offset 3); a=3 does not count.
        let out = compact(&log, &policy(4, 100, 1000), classify).unwrap();
        assert_eq!(out.records_removed, 1);
        let offsets: Vec<u64> = all(&log, 0).iter().map(|(o, _)| *o).collect();
        assert!(!offsets.contains(&0));
        assert!(offsets.contains(&3) && offsets.contains(&7));
        assert!(offsets.contains(&4), "records at or above LSO stay");
    }

    #[test]
    fn a_crash_before_the_rename_leaves_the_old_segment() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        fill(&log, &RECORDS);
        let before = all(&log, 0);
        let c = candidates(&log, 12).unwrap().remove(0);
        let staged = stage(dir.path(), c.base, &[], 30).unwrap();
        assert!(staged.tmp_path.exists());
        drop(staged);
        drop(log); // "crash": the temp file is left behind
        let log = open(dir.path());
        assert_eq!(all(&log, 0), before);
        assert!(
            !temp_path(dir.path(), c.base).exists(),
            "recovery removed it"
        );
    }

    #[test]
    fn a_crash_after_the_rename_leaves_the_new_segment() {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path());
        fill(&log, &RECORDS);
        let c = candidates(&log, 12).unwrap().remove(0);
        let (log_path, index_path) = log
            .with_segments(|s| Ok((s[0].log_path.clone(), s[0].index_path.clone())))
            .unwrap();
        let first = log.read(c.base, 10, 1 << 20).unwrap();
        // Keep only the segment's last record.
        let keep: Vec<StoredRecord> = first
            .iter()
            .filter(|r| r.offset + 1 == c.end)
            .cloned()
            .collect();
        let staged = stage(dir.path(), c.base, &keep, 30).unwrap();
        // The install steps up to the rename, then a "crash".
        let _ = fs::remove_file(&index_path);
        fs::rename(&staged.tmp_path, &log_path).unwrap();
        drop(log);
        let log = open(dir.path());
        let got = all(&log, 0);
        assert_eq!(got[0].0, c.end - 1);
        assert_eq!(got.len(), RECORDS.len() - (c.end - c.base - 1) as usize);
        assert!(index_path.exists(), "recovery rebuilt the index");
    }
}
