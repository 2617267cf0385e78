//! One segment of a partition log: an append-only `.log` file of framed
//! entries plus its in-memory sparse [`OffsetIndex`].
//!
//! Entry layout (all integers big-endian):
//!
//! ```text
//! offset in entry:  0        4        8             16               24
//!                   +--------+--------+-------------+----------------+-------------+
//!                   | crc u32| len u32| offset u64  | timestamp i64  | data        |
//!                   +--------+--------+-------------+----------------+-------------+
//! ```
//!
//! `len` = 16 + data length; `crc` = CRC32C over `len`, `offset`, `timestamp`
//! and `data` (see [`frame`](super::frame)). File names are the segment's base
//! offset as 20 zero-padded decimal digits: `00000000000000000000.log` and
//! `00000000000000000000.index`.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use super::atomic_file;
use super::error::{IoContext, Result, StorageError};
use super::frame::{self, FRAME_HEADER_LEN, HARD_MAX_BODY};
use super::index::OffsetIndex;
use super::io;
use super::partition_log::StoredRecord;

/// Bytes of an entry's body before the record data: offset + timestamp.
pub(crate) const ENTRY_META_LEN: usize = 16;
/// Total per-entry overhead: frame header + offset + timestamp.
pub(crate) const ENTRY_OVERHEAD: usize = FRAME_HEADER_LEN + ENTRY_META_LEN;
/// Smallest valid entry body.
pub(crate) const MIN_BODY: usize = ENTRY_META_LEN;
/// Largest entry body readers accept.
pub(crate) const MAX_BODY: usize = HARD_MAX_BODY + ENTRY_META_LEN;

/// Size of the chunks reads fetch from a segment file.
const READ_CHUNK: usize = 64 * 1024;
/// Upper bound of a single read chunk (an entry larger than this is read whole).
const MAX_READ_CHUNK: usize = 8 * 1024 * 1024;

/// File name of the log file of the segment starting at `base`.
pub(crate) fn log_file_name(base: u64) -> String {
    format!("{base:020}.log")
}

/// File name of the index file of the segment starting at `base`.
pub(crate) fn index_file_name(base: u64) -> String {
    format!("{base:020}.index")
}

/// Kinds of files a partition directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SegmentFileKind {
    /// A `.log` file.
    Log,
    /// An `.index` file.
    Index,
}

/// Parses `00000000000000000042.log` / `.index` into `(42, kind)`.
pub(crate) fn parse_file_name(name: &str) -> Option<(u64, SegmentFileKind)> {
    let (stem, kind) = if let Some(stem) = name.strip_suffix(".log") {
        (stem, SegmentFileKind::Log)
    } else if let Some(stem) = name.strip_suffix(".index") {
        (stem, SegmentFileKind::Index)
    } else {
        return None;
    };
    if stem.len() != 20 || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem.parse().ok().map(|base| (base, kind))
}

/// Appends the framed entry for `(offset, timestamp, data)` to `out`.
pub(crate) fn encode_entry(out: &mut Vec<u8>, offset: u64, timestamp: i64, data: &[u8]) {
    frame::encode_frame(
        out,
        &[&offset.to_be_bytes(), &timestamp.to_be_bytes(), data],
    );
}

/// Splits a checksum-verified entry body into `(offset, timestamp)`; the
/// record data is `body[ENTRY_META_LEN..]`.
pub(crate) fn decode_entry_meta(body: &[u8]) -> (u64, i64) {
    let mut o = [0u8; 8];
    let mut t = [0u8; 8];
    o.copy_from_slice(&body[0..8]);
    t.copy_from_slice(&body[8..16]);
    (u64::from_be_bytes(o), i64::from_be_bytes(t))
}

/// Opens a segment log file for positional reads and writes.
pub(crate) fn open_log_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .ctx(path)
}

/// One segment of a partition log.
#[derive(Debug)]
pub(crate) struct Segment {
    /// Offset of the first entry (also the file name).
    pub base_offset: u64,
    /// Offset after the last entry.
    pub next_offset: u64,
    /// Valid bytes in the log file.
    pub size: u64,
    /// The log file, shared with in-flight reads.
    pub file: Arc<File>,
    /// Path of the `.log` file.
    pub log_path: PathBuf,
    /// Path of the `.index` file.
    pub index_path: PathBuf,
    /// Sparse offset index.
    pub index: OffsetIndex,
}

/// Position from which a read of one segment starts, captured under the log
/// lock so the file can be read without it.
#[derive(Debug, Clone)]
pub(crate) struct ReadCursor {
    pub file: Arc<File>,
    pub path: PathBuf,
    /// Valid bytes in the file when the cursor was taken.
    pub size: u64,
    /// Byte position of the entry with offset `offset`.
    pub position: u64,
    /// Offset of the entry at `position`.
    pub offset: u64,
}

/// Limits of one read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadLimits {
    /// First offset to return.
    pub from: u64,
    /// Offsets at or after this are not returned (the durable tail).
    pub end: u64,
    /// Maximum number of records.
    pub max_records: usize,
    /// Soft maximum of record data bytes.
    pub max_bytes: usize,
}

impl Segment {
    /// Creates a new, empty segment file for `base` in `dir` (the caller
    /// syncs the directory).
    pub(crate) fn create(dir: &Path, base: u64, index_interval: u32) -> Result<Segment> {
        let log_path = dir.join(log_file_name(base));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&log_path)
            .ctx(&log_path)?;
        Ok(Segment {
            base_offset: base,
            next_offset: base,
            size: 0,
            file: Arc::new(file),
            index_path: dir.join(index_file_name(base)),
            log_path,
            index: OffsetIndex::new(index_interval),
        })
    }

    /// Newest timestamp in the segment.
    pub(crate) fn max_timestamp(&self) -> Option<i64> {
        self.index.max_timestamp()
    }

    /// Writes `buf` (already framed entries, described by `metas` as
    /// `(offset, position, timestamp)`) at the end of the file. On failure the
    /// file is cut back to its previous size; the returned flag tells whether
    /// that rollback succeeded (if not, the segment's contents are unknown).
    pub(crate) fn append_encoded(
        &mut self,
        buf: &[u8],
        metas: &[(u64, u64, i64)],
    ) -> std::result::Result<(), (StorageError, bool)> {
        if let Err(e) = io::write_all_at(&self.file, &self.log_path, buf, self.size) {
            // A partial write (a full disk) is cut back to the last whole
            // entry, so nothing acknowledged is touched and appends can resume.
            let rolled_back = self.file.set_len(self.size).is_ok();
            return Err((StorageError::io(&self.log_path, e), rolled_back));
        }
        for &(offset, position, timestamp) in metas {
            // A segment holds far fewer than 2^32 entries (each is >= 24 bytes
            // and segments are < 4 GiB).
            let rel = u32::try_from(offset - self.base_offset).unwrap_or(u32::MAX);
            self.index.observe(rel, position, timestamp);
        }
        self.size += buf.len() as u64;
        self.next_offset += metas.len() as u64;
        Ok(())
    }

    /// fdatasyncs the log file.
    pub(crate) fn sync(&self) -> Result<()> {
        io::sync_data(&self.file, &self.log_path).ctx(&self.log_path)
    }

    /// Writes the index file (atomically, without syncing the directory).
    pub(crate) fn write_index_file(&self) -> Result<()> {
        atomic_file::replace_file(&self.index_path, &self.index.encode(), false)
    }

    /// Calls `f` with the location of every entry of the segment in file
    /// order, reading only entry headers (checksums are not verified: the
    /// entries were checked when the segment was opened or written).
    /// Structural damage is [`StorageError::Corruption`].
    pub(crate) fn scan_headers(&self, mut f: impl FnMut(EntryLocation)) -> Result<()> {
        let mut chunk: Vec<u8> = Vec::new();
        let mut chunk_start = 0u64;
        let mut pos = 0u64;
        let mut expected = self.base_offset;
        while pos < self.size {
            if chunk_start + (chunk.len() as u64) < pos + ENTRY_OVERHEAD as u64 {
                let len = (HEADER_SCAN_CHUNK as u64).min(self.size - pos) as usize;
                chunk.resize(len, 0);
                self.file
                    .read_exact_at(&mut chunk, pos)
                    .ctx(&self.log_path)?;
                chunk_start = pos;
            }
            let rel = (pos - chunk_start) as usize;
            let Some(header) = chunk.get(rel..rel + ENTRY_OVERHEAD) else {
                return Err(StorageError::corruption(
                    &self.log_path,
                    pos,
                    "entry header extends past the end of the segment",
                ));
            };
            let body_len =
                u32::from_be_bytes([header[4], header[5], header[6], header[7]]) as usize;
            let len = (FRAME_HEADER_LEN + body_len) as u64;
            if !(MIN_BODY..=MAX_BODY).contains(&body_len) || pos + len > self.size {
                return Err(StorageError::corruption(
                    &self.log_path,
                    pos,
                    format!("implausible entry length {body_len}"),
                ));
            }
            let (offset, timestamp) = decode_entry_meta(&header[FRAME_HEADER_LEN..]);
            if offset < expected {
                return Err(StorageError::corruption(
                    &self.log_path,
                    pos,
                    format!("entry has offset {offset}, expected at least {expected}"),
                ));
            }
            f(EntryLocation {
                position: pos,
                len,
                offset,
                timestamp,
            });
            expected = offset + 1;
            pos += len;
        }
        Ok(())
    }

    /// Plans cutting the segment so that it keeps only the entries below
    /// `offset`; scans the whole segment (see [`CutPlan::consecutive`]).
    pub(crate) fn plan_cut(&self, offset: u64, index_interval: u32) -> Result<CutPlan> {
        let mut plan = CutPlan {
            position: self.size,
            index: OffsetIndex::new(index_interval),
            consecutive: true,
        };
        let mut expected = self.base_offset;
        let mut cut_found = false;
        self.scan_headers(|e| {
            plan.consecutive &= e.offset == expected;
            expected = e.offset + 1;
            if e.offset >= offset {
                if !cut_found {
                    plan.position = e.position;
                    cut_found = true;
                }
                return;
            }
            // Within a segment relative offsets fit in u32 (see append).
            let rel = u32::try_from(e.offset - self.base_offset).unwrap_or(u32::MAX);
            plan.index.observe(rel, e.position, e.timestamp);
        })?;
        plan.consecutive &= expected == self.next_offset;
        Ok(plan)
    }

    /// Rewrites a sealed segment that compaction left with gaps so that every
    /// offset from its base to its end has an entry again: each missing
    /// offset gets a data-less placeholder entry (as compaction leaves at a
    /// segment's last offset; topic readers skip them). The offsets and the
    /// data of existing entries are unchanged. Crash-safe like compaction's
    /// swap: the new file is written and fsynced beside the old one (a
    /// temporary file recovery deletes), the old index file is removed
    /// (directory synced), the new file renamed over the old one (directory
    /// synced) and the new index written; a crash leaves either file, with
    /// or without an index, which recovery rebuilds.
    pub(crate) fn fill_gaps(&mut self, dir: &Path, index_interval: u32) -> Result<()> {
        let mut entries = Vec::new();
        self.scan_headers(|e| entries.push(e))?;
        let tmp_path = dir.join(format!(".{}.tmp.fill", log_file_name(self.base_offset)));
        let staged = (|| -> Result<(File, u64, OffsetIndex)> {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp_path)
                .ctx(&tmp_path)?;
            let mut index = OffsetIndex::new(index_interval);
            let mut size = 0u64;
            let mut buf = Vec::new();
            let mut next = self.base_offset;
            let placeholder = crate::storage::compaction::PLACEHOLDER_TIMESTAMP;
            {
                let mut out = BufWriter::new(&file);
                let mut put = |buf: &[u8], offset: u64, timestamp: i64| {
                    let rel = u32::try_from(offset - self.base_offset).unwrap_or(u32::MAX);
                    index.observe(rel, size, timestamp);
                    out.write_all(buf).ctx(&tmp_path)?;
                    size += buf.len() as u64;
                    Ok::<(), StorageError>(())
                };
                for e in &entries {
                    while next < e.offset {
                        buf.clear();
                        encode_entry(&mut buf, next, placeholder, &[]);
                        put(&buf, next, placeholder)?;
                        next += 1;
                    }
                    buf.resize(e.len as usize, 0);
                    self.file
                        .read_exact_at(&mut buf, e.position)
                        .ctx(&self.log_path)?;
                    put(&buf, e.offset, e.timestamp)?;
                    next = e.offset + 1;
                }
                while next < self.next_offset {
                    buf.clear();
                    encode_entry(&mut buf, next, placeholder, &[]);
                    put(&buf, next, placeholder)?;
                    next += 1;
                }
                out.flush().ctx(&tmp_path)?;
            }
            io::sync_all(&file, &tmp_path).ctx(&tmp_path)?;
            Ok((file, size, index))
        })();
        let (file, size, index) = match staged {
            Ok(staged) => staged,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp_path);
                return Err(e);
            }
        };
        // The old index must never describe the new log file.
        match std::fs::remove_file(&self.index_path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StorageError::io(&self.index_path, e)),
        }
        atomic_file::sync_dir(dir)?;
        std::fs::rename(&tmp_path, &self.log_path).ctx(&self.log_path)?;
        self.file = Arc::new(file);
        self.size = size;
        self.index = index;
        atomic_file::sync_dir(dir)?;
        self.write_index_file()?;
        atomic_file::sync_dir(dir)
    }

    /// A cursor for reading from `offset` (which must lie in this segment).
    pub(crate) fn cursor(&self, offset: u64) -> ReadCursor {
        let rel = u32::try_from(offset.saturating_sub(self.base_offset)).unwrap_or(u32::MAX);
        let (found_rel, position) = self.index.lookup(rel);
        ReadCursor {
            file: self.file.clone(),
            path: self.log_path.clone(),
            size: self.size,
            position,
            offset: self.base_offset + u64::from(found_rel),
        }
    }
}

/// Where one entry lies in a segment file, read from its header only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryLocation {
    /// Byte position of the entry in the file.
    pub position: u64,
    /// Encoded size of the entry (frame header included).
    pub len: u64,
    /// The entry's offset.
    pub offset: u64,
    /// The entry's timestamp.
    pub timestamp: i64,
}

/// What cutting a segment at an offset leaves (see [`Segment::plan_cut`]).
#[derive(Debug)]
pub(crate) struct CutPlan {
    /// Byte position of the first entry at or above the cut offset (the
    /// segment size when there is none): the new file length.
    pub position: u64,
    /// The sparse index of the entries below the cut.
    pub index: OffsetIndex,
    /// Every offset from the base to the segment's end has an entry (no
    /// compaction gap anywhere in the segment, above the cut included).
    pub consecutive: bool,
}

/// Bytes read per chunk by [`Segment::scan_headers`].
const HEADER_SCAN_CHUNK: usize = 1 << 20;

/// Reads entries from `cursor` into `out` within `limits`, counting record
/// bytes in `bytes`. Returns `Ok(Some(next))` with the offset after the last
/// entry of the segment when the end of the segment was reached without
/// hitting a limit (a compacted segment may end before its successor's base
/// offset; the caller continues from there), `Ok(None)` when a limit (or `limits.end`) stopped the read.
pub(crate) fn read_segment(
    cursor: &ReadCursor,
    limits: &ReadLimits,
    out: &mut Vec<StoredRecord>,
    bytes: &mut usize,
) -> Result<Option<u64>> {
    let mut pos = cursor.position;
    let mut expected = cursor.offset;
    let mut chunk = Bytes::new();
    let mut chunk_start = pos;
    loop {
        if expected >= limits.end || out.len() >= limits.max_records {
            return Ok(None);
        }
        if pos >= cursor.size {
            return Ok(Some(expected));
        }
        // Make sure the header is buffered, then the whole entry.
        let mut rel = (pos - chunk_start) as usize;
        if chunk.len() < rel + FRAME_HEADER_LEN {
            let want = read_size(
                limits,
                *bytes,
                FRAME_HEADER_LEN,
                cursor,
                pos,
                expected,
                out.len(),
            );
            chunk = read_chunk(cursor, pos, want)?;
            chunk_start = pos;
            rel = 0;
        }
        if chunk.len() < rel + FRAME_HEADER_LEN {
            return Err(StorageError::corruption(
                &cursor.path,
                pos,
                "entry header extends past the end of the segment",
            ));
        }
        let len = u32::from_be_bytes([
            chunk[rel + 4],
            chunk[rel + 5],
            chunk[rel + 6],
            chunk[rel + 7],
        ]) as usize;
        if !(MIN_BODY..=MAX_BODY).contains(&len) {
            return Err(StorageError::corruption(
                &cursor.path,
                pos,
                format!("implausible entry length {len}"),
            ));
        }
        let total = FRAME_HEADER_LEN + len;
        if chunk.len() < rel + total {
            let want = read_size(limits, *bytes, total, cursor, pos, expected, out.len());
            chunk = read_chunk(cursor, pos, want)?;
            chunk_start = pos;
            rel = 0;
            if chunk.len() < total {
                return Err(StorageError::corruption(
                    &cursor.path,
                    pos,
                    "entry extends past the end of the segment",
                ));
            }
        }
        let body = frame::decode_frame(&chunk, rel, MIN_BODY, MAX_BODY)
            .map_err(|e| StorageError::corruption(&cursor.path, pos, e.to_string()))?;
        let (offset, timestamp) = decode_entry_meta(body);
        // Offsets increase; a compacted segment has gaps between them.
        if offset < expected {
            return Err(StorageError::corruption(
                &cursor.path,
                pos,
                format!("entry has offset {offset}, expected at least {expected}"),
            ));
        }
        if offset >= limits.end {
            return Ok(None);
        }
        if offset >= limits.from {
            let data_len = len - ENTRY_META_LEN;
            if !out.is_empty() && bytes.saturating_add(data_len) > limits.max_bytes {
                return Ok(None);
            }
            let data_start = rel + FRAME_HEADER_LEN + ENTRY_META_LEN;
            out.push(StoredRecord {
                offset,
                timestamp,
                data: chunk.slice(data_start..data_start + data_len),
            });
            *bytes += data_len;
        }
        expected = offset + 1;
        pos += total as u64;
    }
}

/// How many bytes to fetch at file position `pos` (entry `next`): enough for
/// the byte budget, but no more than the entries still wanted need, judged by
/// the average entry size seen so far in this read (the first chunk, with
/// nothing seen yet, is [`READ_CHUNK`]). Reading (and zeroing) the whole
/// byte budget for a fetch limited by its record count would waste most of
/// it.
#[allow(clippy::too_many_arguments)]
fn read_size(
    limits: &ReadLimits,
    bytes_so_far: usize,
    at_least: usize,
    cursor: &ReadCursor,
    pos: u64,
    next: u64,
    records_so_far: usize,
) -> usize {
    let budget = limits
        .max_bytes
        .saturating_sub(bytes_so_far)
        .saturating_add(ENTRY_OVERHEAD * 4)
        .clamp(READ_CHUNK, MAX_READ_CHUNK);
    let scanned_entries = next.saturating_sub(cursor.offset);
    let estimate = match pos
        .saturating_sub(cursor.position)
        .checked_div(scanned_entries)
    {
        None => READ_CHUNK,
        Some(average) => {
            let average = average.max(1);
            // Entries still to skip before `from`, plus those still wanted.
            let skip = limits.from.saturating_sub(next);
            let wanted = limits.max_records.saturating_sub(records_so_far).min(
                limits
                    .end
                    .saturating_sub(next)
                    .try_into()
                    .unwrap_or(usize::MAX),
            );
            let entries = (skip as usize).saturating_add(wanted).saturating_add(4);
            (entries as u64).saturating_mul(average) as usize
        }
    };
    estimate.clamp(READ_CHUNK, budget).max(at_least)
}

fn read_chunk(cursor: &ReadCursor, pos: u64, want: usize) -> Result<Bytes> {
    let available = cursor.size.saturating_sub(pos);
    let len = (want as u64).min(available) as usize;
    let mut buf = vec![0u8; len];
    cursor.file.read_exact_at(&mut buf, pos).ctx(&cursor.path)?;
    Ok(Bytes::from(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(log_file_name(42), "00000000000000000042.log");
        assert_eq!(index_file_name(0), "00000000000000000000.index");
        assert_eq!(
            parse_file_name("00000000000000000042.log"),
            Some((42, SegmentFileKind::Log))
        );
        assert_eq!(
            parse_file_name("18446744073709551615.index"),
            Some((u64::MAX, SegmentFileKind::Index))
        );
        assert_eq!(parse_file_name("42.log"), None);
        assert_eq!(parse_file_name("0000000000000000004x.log"), None);
        assert_eq!(parse_file_name("99999999999999999999.log"), None);
        assert_eq!(parse_file_name("00000000000000000042.txt"), None);
    }

    #[test]
    fn entry_encoding() {
        let mut buf = Vec::new();
        encode_entry(&mut buf, 7, -5, b"abc");
        assert_eq!(buf.len(), ENTRY_OVERHEAD + 3);
        assert_eq!(&buf[4..8], &19u32.to_be_bytes());
        let body = frame::decode_frame(&buf, 0, MIN_BODY, MAX_BODY).unwrap();
        assert_eq!(decode_entry_meta(body), (7, -5));
        assert_eq!(&body[ENTRY_META_LEN..], b"abc");
    }
}
