//! [`PartitionLog`]: the durable, segmented, append-only log of one partition.

use std::collections::VecDeque;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bytes::Bytes;
use tracing::{info, warn};

use super::atomic_file;
use super::error::{IoContext, Result, StorageError};
use super::frame::HARD_MAX_BODY;
use super::group_commit::{lock, GroupCommit};
use super::io;
use super::recovery;
use super::retention::{self, RetentionOutcome, SegmentStats};
use super::segment::{self, ReadLimits, Segment, ENTRY_OVERHEAD};

/// Default segment size: 64 MiB.
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 * 1024 * 1024;
/// Largest allowed `segment_bytes`: 1 GiB.
pub const MAX_SEGMENT_BYTES: u64 = 1024 * 1024 * 1024;
/// Default distance between sparse index entries: 4 KiB.
pub const DEFAULT_INDEX_INTERVAL_BYTES: u32 = 4096;
/// Default largest record: 64 MiB (the Wire v2 frame limit).
pub const DEFAULT_MAX_RECORD_BYTES: u32 = 64 * 1024 * 1024;
/// Largest encoded size of one `append` call: 1 GiB.
pub const MAX_APPEND_BYTES: u64 = 1024 * 1024 * 1024;

/// Configuration of a [`PartitionLog`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// Roll to a new segment when an append would grow the active segment
    /// beyond this many bytes (an append larger than this gets a segment of
    /// its own). 1 byte ..= [`MAX_SEGMENT_BYTES`]; default
    /// [`DEFAULT_SEGMENT_BYTES`].
    pub segment_bytes: u64,
    /// Bytes of log between sparse index entries; bounds the scan a lookup
    /// needs. At least 1; default [`DEFAULT_INDEX_INTERVAL_BYTES`].
    pub index_interval_bytes: u32,
    /// Largest record data accepted by `append`; at most 1 GiB; default
    /// [`DEFAULT_MAX_RECORD_BYTES`]. Reading is not limited by it.
    pub max_record_bytes: u32,
    /// Checksum-verify every sealed segment on open (default `true`). When
    /// `false`, a sealed segment with a consistent index is verified only from
    /// its last index entry to its end, which makes opening large logs fast;
    /// damage elsewhere then surfaces as `Corruption` when it is read.
    pub verify_sealed_segments: bool,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: DEFAULT_SEGMENT_BYTES,
            index_interval_bytes: DEFAULT_INDEX_INTERVAL_BYTES,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            verify_sealed_segments: true,
        }
    }
}

impl LogConfig {
    /// Checks the limits documented on each field.
    pub fn validate(&self) -> Result<()> {
        if self.segment_bytes == 0 || self.segment_bytes > MAX_SEGMENT_BYTES {
            return Err(StorageError::InvalidArgument(format!(
                "segment_bytes must be 1..={MAX_SEGMENT_BYTES}, got {}",
                self.segment_bytes
            )));
        }
        if self.index_interval_bytes == 0 {
            return Err(StorageError::InvalidArgument(
                "index_interval_bytes must be at least 1".into(),
            ));
        }
        if self.max_record_bytes as usize > HARD_MAX_BODY {
            return Err(StorageError::InvalidArgument(format!(
                "max_record_bytes must be at most {HARD_MAX_BODY}, got {}",
                self.max_record_bytes
            )));
        }
        Ok(())
    }
}

/// Offsets assigned by [`PartitionLog::append`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendInfo {
    /// Offset of the first appended entry.
    pub base_offset: u64,
    /// Offset of the last appended entry.
    pub last_offset: u64,
}

/// One entry read back from a [`PartitionLog`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    /// The entry's offset.
    pub offset: u64,
    /// The timestamp given at append, in milliseconds.
    pub timestamp: i64,
    /// The opaque record bytes (a slice of the read buffer, not a copy).
    pub data: Bytes,
}

#[derive(Debug)]
struct Inner {
    /// Oldest first; never empty while the log is not deleted; the last one
    /// is the active segment.
    segments: VecDeque<Segment>,
    deleted: bool,
}

impl Inner {
    /// The active segment. The list is only empty after a failed
    /// `truncate_all`, which poisons the log, so callers that passed
    /// `check_open` always find one; the error is a second line of defence.
    fn active(&self, dir: &Path) -> Result<&Segment> {
        self.segments.back().ok_or_else(|| no_segment(dir))
    }

    fn active_mut(&mut self, dir: &Path) -> Result<&mut Segment> {
        self.segments.back_mut().ok_or_else(|| no_segment(dir))
    }
}

fn no_segment(dir: &Path) -> StorageError {
    StorageError::Failed {
        path: dir.to_path_buf(),
        reason: "the log has no active segment".into(),
    }
}

/// The durable log of one partition: a directory of segment files named by
/// their base offset, each with a sparse offset index.
///
/// * `append` assigns consecutive offsets and writes (no sync);
/// * `sync_to` makes a prefix durable, sharing fdatasyncs between concurrent
///   callers (group commit);
/// * `read` returns only durable entries (below [`durable_offset`]);
/// * opening runs recovery (torn-tail truncation, corruption detection,
///   index rebuild).
///
/// All methods take `&self`; the type is `Send + Sync` and meant to be shared
/// in an `Arc`. Appends are serialized by an internal mutex; fdatasync and
/// file reads happen outside it.
///
/// Atomicity: one `append` call is written with one positional write and cut
/// back if that write fails, but it is not crash-atomic: after a crash,
/// recovery may keep a prefix of an unsynced append.
///
/// [`durable_offset`]: PartitionLog::durable_offset
#[derive(Debug)]
pub struct PartitionLog {
    dir: PathBuf,
    config: LogConfig,
    inner: Mutex<Inner>,
    commit: GroupCommit,
}

impl PartitionLog {
    /// Opens the partition directory `dir` (creating it if missing), runs
    /// recovery and returns the log with LEO = HWM = the end of the recovered
    /// data.
    pub fn open(dir: impl AsRef<Path>, config: LogConfig) -> Result<PartitionLog> {
        config.validate()?;
        let dir = dir.as_ref().to_path_buf();
        let segments = recovery::recover(&dir, &config)?;
        let leo = segments.back().map_or(0, |s| s.next_offset);
        Ok(PartitionLog {
            commit: GroupCommit::new(&dir, leo),
            dir,
            config,
            inner: Mutex::new(Inner {
                segments,
                deleted: false,
            }),
        })
    }

    /// The partition directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The configuration the log was opened with.
    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    /// Appends `entries` (`(timestamp_ms, record bytes)`) with consecutive
    /// offsets starting at the current log end offset. The data is written
    /// but not synced: call [`sync_to`](Self::sync_to) for durability.
    pub fn append(&self, entries: &[(i64, Bytes)]) -> Result<AppendInfo> {
        if entries.is_empty() {
            return Err(StorageError::InvalidArgument(
                "append needs at least one entry".into(),
            ));
        }
        let mut batch_bytes: u64 = 0;
        for (_, data) in entries {
            if data.len() > self.config.max_record_bytes as usize {
                return Err(StorageError::InvalidArgument(format!(
                    "record of {} bytes exceeds max_record_bytes {}",
                    data.len(),
                    self.config.max_record_bytes
                )));
            }
            batch_bytes += (ENTRY_OVERHEAD + data.len()) as u64;
        }
        if batch_bytes > MAX_APPEND_BYTES {
            return Err(StorageError::InvalidArgument(format!(
                "append of {batch_bytes} encoded bytes exceeds {MAX_APPEND_BYTES}"
            )));
        }

        let mut inner = lock(&self.inner);
        self.check_open(&inner)?;
        {
            let active = inner.active(&self.dir)?;
            if active.size > 0 && active.size + batch_bytes > self.config.segment_bytes {
                self.roll(&mut inner)?;
            }
        }
        let active = inner.active_mut(&self.dir)?;
        let base_offset = active.next_offset;
        let mut buf = Vec::with_capacity(batch_bytes as usize);
        let mut metas = Vec::with_capacity(entries.len());
        for (i, (timestamp, data)) in entries.iter().enumerate() {
            let offset = base_offset + i as u64;
            metas.push((offset, active.size + buf.len() as u64, *timestamp));
            segment::encode_entry(&mut buf, offset, *timestamp, data);
        }
        if let Err((err, rolled_back)) = active.append_encoded(&buf, &metas) {
            if rolled_back {
                return Err(err);
            }
            return Err(self
                .commit
                .fail(format!("append failed and could not be undone: {err}")));
        }
        self.commit.record_written(active.next_offset);
        Ok(AppendInfo {
            base_offset,
            last_offset: base_offset + entries.len() as u64 - 1,
        })
    }

    /// Returns once every entry up to and including `offset` is durable
    /// (fdatasynced). Concurrent callers share syncs: one fdatasync covers
    /// every append made before it started.
    pub fn sync_to(&self, offset: u64) -> Result<()> {
        let target = offset.checked_add(1).ok_or_else(|| {
            StorageError::InvalidArgument(format!("offset {offset} out of range"))
        })?;
        self.commit.wait_durable(target, || self.flush_active())
    }

    /// Makes everything appended so far durable if it is not yet; returns
    /// whether a sync was needed. Meant to be called periodically by the
    /// broker so acks=0 data becomes durable and readable.
    pub fn flush_if_dirty(&self) -> Result<bool> {
        let written = self.commit.written();
        if self.commit.durable() >= written {
            self.commit.check()?;
            return Ok(false);
        }
        self.commit.wait_durable(written, || self.flush_active())?;
        Ok(true)
    }

    /// Leader side of a group commit: capture the log end and the active
    /// file, then fdatasync it outside the lock. Earlier segments were synced
    /// when they were sealed.
    fn flush_active(&self) -> Result<u64> {
        let (file, path, covered) = {
            let inner = lock(&self.inner);
            self.check_open(&inner)?;
            let active = inner.active(&self.dir)?;
            (
                active.file.clone(),
                active.log_path.clone(),
                active.next_offset,
            )
        };
        io::sync_data(&file, &path).ctx(&path)?;
        Ok(covered)
    }

    /// Seals the active segment (fdatasync + index file) and starts a new one.
    fn roll(&self, inner: &mut Inner) -> Result<()> {
        let active = inner.active(&self.dir)?;
        if let Err(e) = active.sync() {
            return Err(self
                .commit
                .fail(format!("fdatasync on segment roll failed: {e}")));
        }
        self.commit.count_sync();
        active.write_index_file()?;
        let new_base = active.next_offset;
        let segment = Segment::create(&self.dir, new_base, self.config.index_interval_bytes)?;
        if let Err(e) = atomic_file::sync_dir(&self.dir) {
            return Err(self
                .commit
                .fail(format!("directory sync on segment roll failed: {e}")));
        }
        inner.segments.push_back(segment);
        // Everything before the new segment is now durable.
        self.commit.mark_durable(new_base);
        Ok(())
    }

    /// Reads durable entries starting at `from_offset`: at most `max_records`
    /// entries and, softly, at most `max_bytes` record bytes (at least one
    /// entry is returned whenever one is available). Returns an empty vector
    /// when `from_offset` is at or beyond the durable offset but not beyond
    /// the log end; fails with [`StorageError::OffsetOutOfRange`] (whose
    /// `latest` is the durable offset) below the earliest retained offset or
    /// beyond the log end offset.
    pub fn read(
        &self,
        from_offset: u64,
        max_records: usize,
        max_bytes: usize,
    ) -> Result<Vec<StoredRecord>> {
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let mut next = from_offset;
        let mut first = true;
        loop {
            let (cursor, end) = {
                let inner = lock(&self.inner);
                // A failed log still serves what was durable before.
                if inner.deleted {
                    return Err(StorageError::Deleted {
                        path: self.dir.clone(),
                    });
                }
                let hwm = self.commit.durable();
                if first {
                    let earliest = inner.segments.front().map_or(0, |s| s.base_offset);
                    let leo = inner.active(&self.dir)?.next_offset;
                    if from_offset < earliest || from_offset > leo {
                        return Err(StorageError::OffsetOutOfRange {
                            requested: from_offset,
                            earliest,
                            latest: hwm,
                        });
                    }
                    first = false;
                }
                if next >= hwm || out.len() >= max_records {
                    break;
                }
                let idx = inner.segments.partition_point(|s| s.base_offset <= next);
                let Some(seg) = idx.checked_sub(1).and_then(|i| inner.segments.get(i)) else {
                    // Retention removed the rest of a multi-segment read.
                    break;
                };
                if next >= seg.next_offset {
                    break;
                }
                (seg.cursor(next), hwm)
            };
            let limits = ReadLimits {
                from: next,
                end,
                max_records,
                max_bytes,
            };
            match segment::read_segment(&cursor, &limits, &mut out, &mut bytes)? {
                Some(segment_end) => next = segment_end,
                None => break,
            }
        }
        Ok(out)
    }

    /// First retained offset (equals the log end offset when the log is
    /// empty).
    pub fn earliest_offset(&self) -> u64 {
        lock(&self.inner)
            .segments
            .front()
            .map_or(0, |s| s.base_offset)
    }

    /// Log end offset (LEO): the offset the next appended entry gets.
    pub fn log_end_offset(&self) -> u64 {
        self.commit.written()
    }

    /// High-water mark: the offset after the durable (synced) tail. Reads
    /// never return entries at or beyond it.
    pub fn durable_offset(&self) -> u64 {
        self.commit.durable()
    }

    /// Total bytes of all segment log files (index files not included).
    pub fn size_bytes(&self) -> u64 {
        lock(&self.inner).segments.iter().map(|s| s.size).sum()
    }

    /// Number of segments, including the active one.
    pub fn segment_count(&self) -> usize {
        lock(&self.inner).segments.len()
    }

    /// Why the log failed (a failed fsync, or a write that could not be
    /// undone), if it did: it then refuses appends until reopened, while
    /// reads keep serving the durable prefix.
    pub fn failure(&self) -> Option<String> {
        self.commit.failure()
    }

    /// Number of fdatasync calls on segment files so far (group-commit
    /// flushes plus syncs when sealing a segment). For tests and metrics.
    pub fn sync_count(&self) -> u64 {
        self.commit.sync_count()
    }

    /// Drops every entry and restarts the log at `new_start_offset`
    /// (TRUNCATE uses 0): afterwards earliest = LEO = HWM = `new_start_offset`.
    ///
    /// Not crash-atomic: a crash part-way leaves a shorter but consistent log,
    /// so the caller must record its intent durably first (the broker's
    /// lifecycle epoch) and call this again after restart. Clears an earlier
    /// I/O failure; a failure here poisons the log until reopened.
    pub fn truncate_all(&self, new_start_offset: u64) -> Result<()> {
        let mut inner = lock(&self.inner);
        if inner.deleted {
            return Err(StorageError::Deleted {
                path: self.dir.clone(),
            });
        }
        self.truncate_all_locked(&mut inner, new_start_offset)
    }

    fn truncate_all_locked(&self, inner: &mut Inner, new_start_offset: u64) -> Result<()> {
        let result = (|| -> Result<Segment> {
            while let Some(seg) = inner.segments.back() {
                remove_if_exists(&seg.log_path)?;
                remove_if_exists(&seg.index_path)?;
                inner.segments.pop_back();
            }
            let seg = Segment::create(
                &self.dir,
                new_start_offset,
                self.config.index_interval_bytes,
            )?;
            atomic_file::sync_dir(&self.dir)?;
            Ok(seg)
        })();
        match result {
            Ok(seg) => {
                inner.segments.push_back(seg);
                self.commit.reset(new_start_offset);
                info!(dir = %self.dir.display(), new_start_offset, "partition log truncated");
                Ok(())
            }
            // Poisoned: every call but `truncate_all` and `delete` fails until
            // a retry succeeds or the log is reopened.
            Err(e) => Err(self.commit.fail(format!("truncate failed: {e}"))),
        }
    }

    /// Removes every entry at or above `offset` (a replica dropping a tail
    /// its new leader does not have): afterwards LEO = HWM = `offset` and
    /// appends continue there. Later segments are deleted whole, the segment
    /// holding `offset` is cut and its sparse index trimmed; the kept entries
    /// are durable when this returns.
    ///
    /// `offset >= log_end_offset()` changes nothing; `offset <
    /// earliest_offset()` empties the log like
    /// [`truncate_all(offset)`](Self::truncate_all). Fails on a failed log
    /// (reopen it first). Reads running at the same time may still return
    /// removed entries or fail with an I/O error; the broker ends the
    /// partition generation around it. A failure part-way poisons the log
    /// until it is reopened.
    ///
    /// Crash safety (a crash part-way leaves a log that opens, holding the
    /// kept entries and maybe some of the removed tail; the caller truncates
    /// again after restart, as replicas do before every fetch from a new
    /// leader). The steps, in order:
    ///
    /// 1. If the segment to cut is sealed and compaction left gaps in it,
    ///    they are filled with placeholders first ([`Segment::fill_gaps`],
    ///    as crash-safe as compaction): the cut segment becomes the last one,
    ///    and recovery accepts no gap in the last segment.
    /// 2. Later segments are deleted newest first (log file, then index
    ///    file): at every moment the files on disk are a contiguous prefix of
    ///    the segments, whose last one is complete (sealed segments were
    ///    fdatasynced when sealed), and an index without its log is removed
    ///    by recovery.
    /// 3. The directory is synced, so no deleted segment can reappear: a
    ///    segment coming back after the cut of step 4 was durable would start
    ///    past the cut segment's new end, a gap recovery refuses.
    /// 4. The segment is cut (`set_len`) and fsynced. Before the fsync a
    ///    crash leaves the old length or a shorter one; the cut falls on an
    ///    entry boundary, and anything else is a torn tail of the last
    ///    segment, which recovery truncates.
    /// 5. Its index file, now stale, is removed: the last segment's index
    ///    lives in memory, recovery never reads it (and a roll rewrites it).
    pub fn truncate_to(&self, offset: u64) -> Result<()> {
        let mut inner = lock(&self.inner);
        self.check_open(&inner)?;
        let leo = inner.active(&self.dir)?.next_offset;
        if offset >= leo {
            return Ok(());
        }
        let earliest = inner.segments.front().map_or(0, |s| s.base_offset);
        if offset < earliest {
            return self.truncate_all_locked(&mut inner, offset);
        }
        let result = self.cut_locked(&mut inner, offset);
        match result {
            Ok(()) => {
                self.commit.reset(offset);
                info!(dir = %self.dir.display(), offset, previous_end = leo, "partition log truncated to offset");
                Ok(())
            }
            Err(e) => Err(self
                .commit
                .fail(format!("truncate to {offset} failed: {e}"))),
        }
    }

    /// Steps of [`truncate_to`](Self::truncate_to) for `earliest <= offset <
    /// LEO`.
    fn cut_locked(&self, inner: &mut Inner, offset: u64) -> Result<()> {
        let interval = self.config.index_interval_bytes;
        // The segment holding `offset`: the last one starting at or before it.
        let keep = inner
            .segments
            .partition_point(|s| s.base_offset <= offset)
            .checked_sub(1)
            .ok_or_else(|| no_segment(&self.dir))?;
        let last = inner.segments.len() - 1;
        let mut plan = inner.segments[keep].plan_cut(offset, interval)?;
        if !plan.consecutive && keep < last {
            inner.segments[keep].fill_gaps(&self.dir, interval)?;
            plan = inner.segments[keep].plan_cut(offset, interval)?;
        }
        let deleted = inner.segments.len() - 1 - keep;
        while inner.segments.len() > keep + 1 {
            let Some(seg) = inner.segments.back() else {
                break;
            };
            remove_if_exists(&seg.log_path)?;
            remove_if_exists(&seg.index_path)?;
            inner.segments.pop_back();
        }
        if deleted > 0 {
            atomic_file::sync_dir(&self.dir)?;
        }
        let seg = inner.active_mut(&self.dir)?;
        seg.file.set_len(plan.position).ctx(&seg.log_path)?;
        io::sync_all(&seg.file, &seg.log_path).ctx(&seg.log_path)?;
        seg.size = plan.position;
        seg.next_offset = offset;
        seg.index = plan.index;
        remove_if_exists(&seg.index_path)?;
        self.commit.count_sync();
        Ok(())
    }

    /// Removes the partition directory and everything in it. The log is
    /// unusable afterwards (calls fail with [`StorageError::Deleted`]);
    /// calling `delete` again retries the removal.
    pub fn delete(&self) -> Result<()> {
        let mut inner = lock(&self.inner);
        inner.deleted = true;
        inner.segments.clear();
        self.commit.mark_deleted();
        match fs::remove_dir_all(&self.dir) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(StorageError::io(&self.dir, e)),
        }
        if let Some(parent) = self.dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            atomic_file::sync_dir(parent)?;
        }
        Ok(())
    }

    /// Deletes whole sealed segments from the front while the partition is
    /// larger than `retention_bytes` or the segment's newest record is older
    /// than `retention_ms` relative to `now_ms` (`None` = no limit). Never
    /// deletes the active segment. The new earliest offset is durable (the
    /// directory is synced).
    pub fn enforce_retention(
        &self,
        retention_bytes: Option<u64>,
        retention_ms: Option<i64>,
        now_ms: i64,
    ) -> Result<RetentionOutcome> {
        if retention_ms.is_some_and(|ms| ms < 0) {
            return Err(StorageError::InvalidArgument(
                "retention_ms must not be negative".into(),
            ));
        }
        let mut inner = lock(&self.inner);
        self.check_open(&inner)?;
        let stats: Vec<SegmentStats> = inner
            .segments
            .iter()
            .map(|s| SegmentStats {
                size: s.size,
                max_timestamp: s.max_timestamp(),
            })
            .collect();
        let count = retention::segments_to_delete(&stats, retention_bytes, retention_ms, now_ms);
        let mut outcome = RetentionOutcome::default();
        let mut result = Ok(());
        for _ in 0..count {
            let Some(seg) = inner.segments.front() else {
                break;
            };
            if let Err(e) = remove_if_exists(&seg.log_path) {
                result = Err(e);
                break;
            }
            if let Err(e) = remove_if_exists(&seg.index_path) {
                // The log file is gone, so is the segment; recovery removes
                // the orphaned index.
                warn!(error = %e, "could not remove index of deleted segment");
            }
            outcome.deleted_segments += 1;
            outcome.deleted_bytes += seg.size;
            inner.segments.pop_front();
        }
        outcome.earliest_offset = inner.segments.front().map_or(0, |s| s.base_offset);
        if outcome.deleted_segments > 0 {
            info!(
                dir = %self.dir.display(),
                segments = outcome.deleted_segments,
                bytes = outcome.deleted_bytes,
                earliest = outcome.earliest_offset,
                "retention deleted segments"
            );
            atomic_file::sync_dir(&self.dir)?;
        }
        result.map(|()| outcome)
    }

    /// Runs `f` on the segments (oldest first, the last one active) under
    /// the log lock: compaction swaps a rewritten sealed segment in here.
    pub(crate) fn with_segments<R>(
        &self,
        f: impl FnOnce(&mut VecDeque<Segment>) -> Result<R>,
    ) -> Result<R> {
        let mut inner = lock(&self.inner);
        self.check_open(&inner)?;
        f(&mut inner.segments)
    }

    fn check_open(&self, inner: &Inner) -> Result<()> {
        if inner.deleted {
            return Err(StorageError::Deleted {
                path: self.dir.clone(),
            });
        }
        self.commit.check()
    }
}

fn remove_if_exists(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::compaction::{compact, CompactionPolicy, RecordClass};

    /// Entries of 16 data bytes are 40 bytes encoded: with these settings a
    /// segment holds 4 entries and every second entry is indexed.
    fn config() -> LogConfig {
        LogConfig {
            segment_bytes: 160,
            index_interval_bytes: 80,
            ..LogConfig::default()
        }
    }

    fn data(i: u64) -> Bytes {
        Bytes::from(format!("record-{i:09}"))
    }

    /// Appends entries until the log ends at `end`, syncing them when `sync`.
    fn fill_to(log: &PartitionLog, end: u64, sync: bool) {
        while log.log_end_offset() < end {
            let next = log.log_end_offset();
            log.append(&[(next as i64 * 10, data(next))]).unwrap();
        }
        if sync && end > 0 {
            log.sync_to(end - 1).unwrap();
        }
    }

    /// Every entry from the earliest offset, checked against `data`.
    fn offsets(log: &PartitionLog) -> Vec<u64> {
        let records = log
            .read(log.earliest_offset(), usize::MAX, usize::MAX)
            .unwrap();
        for r in &records {
            assert_eq!(r.data, data(r.offset));
            assert_eq!(r.timestamp, r.offset as i64 * 10);
        }
        records.iter().map(|r| r.offset).collect()
    }

    fn bases(log: &PartitionLog) -> Vec<u64> {
        log.with_segments(|s| Ok(s.iter().map(|s| s.base_offset).collect()))
            .unwrap()
    }

    fn index_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".index"))
            .collect();
        names.sort();
        names
    }

    /// After a truncation to `offset`: the ends, an append continuing at
    /// `offset`, and the same log after a reopen.
    fn check_truncated(dir: &Path, log: PartitionLog, earliest: u64, offset: u64) {
        assert_eq!(log.log_end_offset(), offset);
        assert_eq!(log.durable_offset(), offset);
        assert_eq!(log.earliest_offset(), earliest);
        assert_eq!(offsets(&log), (earliest..offset).collect::<Vec<_>>());
        // Reads at the new end wait; past it they are out of range.
        assert!(log.read(offset, 10, 1 << 20).unwrap().is_empty());
        assert!(matches!(
            log.read(offset + 1, 10, 1 << 20),
            Err(StorageError::OffsetOutOfRange { .. })
        ));
        let info = log.append(&[(offset as i64 * 10, data(offset))]).unwrap();
        assert_eq!(info.base_offset, offset);
        fill_to(&log, offset + 6, true);
        let want: Vec<u64> = (earliest..offset + 6).collect();
        assert_eq!(offsets(&log), want);
        let segments = bases(&log);
        drop(log);
        let log = PartitionLog::open(dir, config()).unwrap();
        assert_eq!(bases(&log), segments);
        assert_eq!(log.log_end_offset(), offset + 6);
        assert_eq!(offsets(&log), want);
        // The sparse indexes are right: a read from every offset starts there.
        for from in earliest..offset + 6 {
            assert_eq!(log.read(from, 1, 1 << 20).unwrap()[0].offset, from);
        }
    }

    #[test]
    fn truncate_in_the_middle_of_the_active_segment() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 11, true);
        assert_eq!(bases(&log), vec![0, 4, 8]);
        log.truncate_to(9).unwrap();
        assert_eq!(bases(&log), vec![0, 4, 8]);
        check_truncated(dir.path(), log, 0, 9);
    }

    #[test]
    fn truncate_in_the_middle_of_a_sealed_segment_trims_its_index() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 11, true);
        // Segment 4 is sealed with an index file; it becomes the active one.
        assert!(index_files(dir.path()).contains(&segment::index_file_name(4)));
        log.truncate_to(7).unwrap();
        assert_eq!(bases(&log), vec![0, 4]);
        assert_eq!(index_files(dir.path()), vec![segment::index_file_name(0)]);
        assert_eq!(log.size_bytes(), 7 * 40);
        check_truncated(dir.path(), log, 0, 7);
    }

    #[test]
    fn truncate_at_a_segment_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 14, true);
        log.truncate_to(8).unwrap();
        // The segment starting at the cut stays, empty.
        assert_eq!(bases(&log), vec![0, 4, 8]);
        assert_eq!(log.size_bytes(), 8 * 40);
        check_truncated(dir.path(), log, 0, 8);
    }

    #[test]
    fn truncate_across_several_segments() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 23, true);
        assert_eq!(bases(&log), vec![0, 4, 8, 12, 16, 20]);
        log.truncate_to(2).unwrap();
        assert_eq!(bases(&log), vec![0]);
        check_truncated(dir.path(), log, 0, 2);
    }

    #[test]
    fn truncate_to_the_earliest_offset_empties_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 10, true);
        log.truncate_to(0).unwrap();
        assert_eq!(bases(&log), vec![0]);
        check_truncated(dir.path(), log, 0, 0);
    }

    #[test]
    fn truncate_at_or_past_the_end_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 10, true);
        let syncs = log.sync_count();
        log.truncate_to(10).unwrap();
        log.truncate_to(u64::MAX).unwrap();
        assert_eq!(bases(&log), vec![0, 4, 8]);
        assert_eq!(log.sync_count(), syncs);
        check_truncated(dir.path(), log, 0, 10);
    }

    #[test]
    fn truncate_below_the_earliest_offset_restarts_the_log_there() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 14, true);
        let outcome = log.enforce_retention(Some(0), None, 0).unwrap();
        assert_eq!(outcome.earliest_offset, 12);
        log.truncate_to(5).unwrap();
        assert_eq!(bases(&log), vec![5]);
        check_truncated(dir.path(), log, 5, 5);
    }

    #[test]
    fn truncate_into_the_unsynced_tail_makes_the_kept_part_durable() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 5, true);
        fill_to(&log, 8, false);
        assert_eq!((log.durable_offset(), log.log_end_offset()), (5, 8));
        log.truncate_to(7).unwrap();
        check_truncated(dir.path(), log, 0, 7);
    }

    #[test]
    fn reopen_right_after_truncate() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 18, true);
        log.truncate_to(10).unwrap();
        drop(log);
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        assert_eq!(bases(&log), vec![0, 4, 8]);
        check_truncated(dir.path(), log, 0, 10);
    }

    #[test]
    fn truncate_into_a_compacted_segment_fills_its_gaps() {
        let dir = tempfile::tempdir().unwrap();
        // "k=<i>" entries are 27 bytes: 10 per segment.
        let config = LogConfig {
            segment_bytes: 270,
            index_interval_bytes: 60,
            ..LogConfig::default()
        };
        let log = PartitionLog::open(dir.path(), config.clone()).unwrap();
        for i in 0..12u64 {
            log.append(&[(i as i64, Bytes::from(format!("k={i}")))])
                .unwrap();
        }
        log.sync_to(11).unwrap();
        assert_eq!(bases(&log), vec![0, 10]);
        let policy = CompactionPolicy {
            below: 10,
            now_ms: 0,
            tombstone_retention_ms: 0,
        };
        let classify = |r: &StoredRecord| RecordClass::Keyed {
            key: r.data[..1].to_vec(),
            tombstone: false,
        };
        let outcome = compact(&log, &policy, classify).unwrap();
        assert_eq!(outcome.records_removed, 9);
        log.truncate_to(4).unwrap();
        assert_eq!(log.log_end_offset(), 4);
        let kept = log.read(0, 100, 1 << 20).unwrap();
        // The removed records' offsets hold data-less placeholders now.
        assert_eq!(
            kept.iter().map(|r| r.offset).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        assert!(kept.iter().all(|r| r.data.is_empty()));
        log.append(&[(4, Bytes::from("k=new"))]).unwrap();
        log.sync_to(4).unwrap();
        drop(log);
        let log = PartitionLog::open(dir.path(), config).unwrap();
        assert_eq!(log.log_end_offset(), 5);
        assert_eq!(log.read(4, 1, 1 << 20).unwrap()[0].data, "k=new");
        assert!(!fs::read_dir(dir.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".tmp.")));
    }

    /// The states a crash can leave part-way through `truncate_to` (see its
    /// steps) all open, hold the kept entries, and a second `truncate_to`
    /// finishes the job.
    #[test]
    fn every_state_a_crash_can_leave_opens() {
        type Damage = fn(&Path);
        fn remove_segments(dir: &Path, bases: &[u64]) {
            for base in bases {
                fs::remove_file(dir.join(segment::log_file_name(*base))).unwrap();
                // The last segment has no index file.
                let _ = fs::remove_file(dir.join(segment::index_file_name(*base)));
            }
        }
        fn cut_segment_4(dir: &Path, len: u64) {
            let f = fs::OpenOptions::new()
                .write(true)
                .open(dir.join(segment::log_file_name(4)))
                .unwrap();
            f.set_len(len).unwrap();
        }
        // 5 segments (bases 0, 4, 8, 12, 16), truncated to 6.
        let states: [(&str, Damage, u64); 5] = [
            (
                "step 2: newest segment gone, the next one's index left",
                |d| {
                    remove_segments(d, &[16]);
                    fs::remove_file(d.join(segment::log_file_name(12))).unwrap();
                    assert!(d.join(segment::index_file_name(12)).exists());
                },
                12,
            ),
            (
                "step 2: two newest segments gone",
                |d| {
                    remove_segments(d, &[16, 12]);
                    assert!(!d.join(segment::index_file_name(12)).exists());
                },
                12,
            ),
            (
                "step 3: every later segment gone, not cut yet",
                |d| {
                    remove_segments(d, &[16, 12, 8]);
                },
                8,
            ),
            (
                "step 4: cut inside an entry (a torn tail)",
                |d| {
                    remove_segments(d, &[16, 12, 8]);
                    cut_segment_4(d, 2 * 40 + 17);
                },
                6,
            ),
            (
                "step 5: cut, stale index left",
                |d| {
                    remove_segments(d, &[16, 12, 8]);
                    cut_segment_4(d, 2 * 40);
                },
                6,
            ),
        ];
        for (what, damage, end) in states {
            let dir = tempfile::tempdir().unwrap();
            let log = PartitionLog::open(dir.path(), config()).unwrap();
            fill_to(&log, 18, true);
            drop(log);
            damage(dir.path());
            let log = PartitionLog::open(dir.path(), config())
                .unwrap_or_else(|e| panic!("{what}: does not open: {e}"));
            assert_eq!(log.log_end_offset(), end, "{what}");
            assert_eq!(offsets(&log), (0..end).collect::<Vec<_>>(), "{what}");
            log.truncate_to(6).unwrap();
            check_truncated(dir.path(), log, 0, 6);
        }
        // Why the directory is synced before the cut: a cut segment followed
        // by a deleted one that came back is a gap recovery refuses.
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path(), config()).unwrap();
        fill_to(&log, 18, true);
        drop(log);
        remove_segments(dir.path(), &[16, 12]);
        cut_segment_4(dir.path(), 2 * 40);
        let err = PartitionLog::open(dir.path(), config()).unwrap_err();
        assert!(err.is_corruption(), "{err}");
    }

    #[test]
    fn truncate_refuses_a_failed_or_deleted_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = PartitionLog::open(dir.path().join("p"), config()).unwrap();
        fill_to(&log, 3, true);
        let _ = log.commit.fail("test failure".into());
        assert!(matches!(
            log.truncate_to(1),
            Err(StorageError::Failed { .. })
        ));
        log.delete().unwrap();
        assert!(matches!(
            log.truncate_to(1),
            Err(StorageError::Deleted { .. })
        ));
    }
}
