//! Opening a partition directory: listing segments, verifying them,
//! truncating a torn tail and rebuilding index files.
//!
//! Rules:
//!
//! * Only the last segment can legitimately end in a torn write: a segment is
//!   fdatasynced before the next one is created, so sealed segments are fully
//!   durable.
//! * In the last segment, the first bad entry (incomplete, bad length,
//!   checksum mismatch or wrong offset) is a *torn tail* when no valid entry
//!   follows it anywhere in the file; the file is then truncated at that entry
//!   with a warning. If a checksum-valid entry with a plausible offset follows,
//!   the damage is in the middle of durable data and opening fails with
//!   [`StorageError::Corruption`].
//! * Any bad entry in a sealed segment fails the open. With
//!   `verify_sealed_segments` (the default) every sealed segment is checksum
//!   verified; otherwise a sealed segment with a consistent index is checked
//!   only from its last index entry to its end, and later damage surfaces as
//!   `Corruption` when it is read.
//! * Segments must be contiguous: each base offset equals the previous
//!   segment's end offset.
//! * Index files are a function of the log: a missing, malformed or stale
//!   index of a sealed segment is rebuilt and rewritten. The last (active)
//!   segment's index lives in memory and is written when the segment is sealed.
//! * Leftover temporary files and index files without a log are removed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tracing::{info, warn};

use super::atomic_file::{self, is_temp_file_name};
use super::error::{IoContext, Result, StorageError};
use super::frame::{self, Scan};
use super::index::OffsetIndex;
use super::partition_log::LogConfig;
use super::segment::{
    self, decode_entry_meta, index_file_name, open_log_file, parse_file_name, Segment,
    SegmentFileKind, ENTRY_OVERHEAD, MAX_BODY, MIN_BODY,
};

/// Opens (creating if needed) the partition directory `dir` and returns its
/// segments in offset order; there is always at least one.
pub(crate) fn recover(dir: &Path, config: &LogConfig) -> Result<VecDeque<Segment>> {
    if !dir.exists() {
        fs::create_dir_all(dir).ctx(dir)?;
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            atomic_file::sync_dir(parent)?;
        }
    }
    let mut logs: BTreeMap<u64, PathBuf> = BTreeMap::new();
    let mut indexes: BTreeSet<u64> = BTreeSet::new();
    let mut dir_changed = false;
    for entry in fs::read_dir(dir).ctx(dir)? {
        let entry = entry.ctx(dir)?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        match parse_file_name(&name) {
            Some((base, SegmentFileKind::Log)) => {
                logs.insert(base, path);
            }
            Some((base, SegmentFileKind::Index)) => {
                indexes.insert(base);
            }
            None if is_temp_file_name(&name) => {
                fs::remove_file(&path).ctx(&path)?;
                dir_changed = true;
            }
            None => warn!(path = %path.display(), "ignoring unknown file in partition directory"),
        }
    }
    for base in indexes.iter().filter(|b| !logs.contains_key(b)) {
        let path = dir.join(index_file_name(*base));
        warn!(path = %path.display(), "removing index file without a log file");
        fs::remove_file(&path).ctx(&path)?;
        dir_changed = true;
    }

    let mut segments = VecDeque::with_capacity(logs.len().max(1));
    if logs.is_empty() {
        segments.push_back(Segment::create(dir, 0, config.index_interval_bytes)?);
        dir_changed = true;
    } else {
        let count = logs.len();
        let mut expected_base: Option<u64> = None;
        for (i, (base, path)) in logs.into_iter().enumerate() {
            if let Some(expected) = expected_base {
                if base != expected {
                    return Err(StorageError::corruption(
                        &path,
                        0,
                        format!(
                            "segment starts at offset {base} but the previous segment ends at \
                             offset {expected} (missing or overlapping segment)"
                        ),
                    ));
                }
            }
            let seg = if i + 1 == count {
                open_last(dir, base, &path, config)?
            } else {
                open_sealed(dir, base, &path, indexes.contains(&base), config)?
            };
            expected_base = Some(seg.next_offset);
            segments.push_back(seg);
        }
    }
    if dir_changed {
        atomic_file::sync_dir(dir)?;
    }
    Ok(segments)
}

fn read_file(file: &File, path: &Path, from: u64, to: u64) -> Result<Vec<u8>> {
    let len = usize::try_from(to.saturating_sub(from))
        .map_err(|_| StorageError::corruption(path, from, "segment file too large to scan"))?;
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, from).ctx(path)?;
    Ok(buf)
}

/// Scans `buf` (the bytes of a segment file from `file_pos` on) expecting the
/// first entry to carry `first_offset`, feeding `index`. Returns the scan and
/// the offset after the last valid entry. With `allow_gaps` (sealed segments,
/// which compaction may have rewritten) offsets need only increase.
fn scan_entries(
    buf: &[u8],
    file_pos: u64,
    base: u64,
    first_offset: u64,
    index: &mut OffsetIndex,
    allow_gaps: bool,
) -> (Scan, u64) {
    let mut expected = first_offset;
    let scan = frame::scan_frames(buf, 0, MIN_BODY, MAX_BODY, |pos, body| {
        let (offset, timestamp) = decode_entry_meta(body);
        if offset < expected || (offset != expected && !allow_gaps) {
            return Err(format!("entry has offset {offset}, expected {expected}"));
        }
        let rel = u32::try_from(offset - base)
            .map_err(|_| format!("offset {offset} too far from segment base {base}"))?;
        index.observe(rel, file_pos + pos as u64, timestamp);
        expected = offset + 1;
        Ok(())
    });
    (scan, expected)
}

/// Opens a sealed segment; any damage is an error.
fn open_sealed(
    dir: &Path,
    base: u64,
    path: &Path,
    has_index: bool,
    config: &LogConfig,
) -> Result<Segment> {
    let file = open_log_file(path)?;
    let size = file.metadata().ctx(path)?.len();
    let index_path = dir.join(index_file_name(base));
    let on_disk_index = if has_index {
        Some(fs::read(&index_path).ctx(&index_path)?)
    } else {
        None
    };

    let mut fast: Option<(OffsetIndex, u64)> = None;
    if !config.verify_sealed_segments {
        if let Some(bytes) = &on_disk_index {
            fast = open_from_index(&file, path, base, size, bytes, config)?;
        }
    }
    let (index, next_offset) = match fast {
        Some(found) => found,
        None => {
            let buf = read_file(&file, path, 0, size)?;
            let mut index = OffsetIndex::new(config.index_interval_bytes);
            let (scan, next) = scan_entries(&buf, 0, base, base, &mut index, true);
            if let Some(d) = scan.damage {
                return Err(StorageError::corruption(
                    path,
                    d.position as u64,
                    format!("{} (in a sealed segment)", d.reason),
                ));
            }
            (index, next)
        }
    };
    let seg = Segment {
        base_offset: base,
        next_offset,
        size,
        file: Arc::new(file),
        log_path: path.to_path_buf(),
        index_path,
        index,
    };
    let encoded = seg.index.encode();
    if on_disk_index.as_deref() != Some(&encoded[..]) {
        info!(
            path = %seg.index_path.display(),
            missing = on_disk_index.is_none(),
            "rebuilding segment index from the log"
        );
        seg.write_index_file()?;
    }
    Ok(seg)
}

/// Fast path for a sealed segment: trust a structurally valid index and scan
/// only from its last entry to the end of the file. `None` means the index
/// is unusable and the segment must be scanned fully.
fn open_from_index(
    file: &File,
    path: &Path,
    base: u64,
    size: u64,
    index_bytes: &[u8],
    config: &LogConfig,
) -> Result<Option<(OffsetIndex, u64)>> {
    let entries = match OffsetIndex::decode(index_bytes, size) {
        Ok(entries) => entries,
        Err(reason) => {
            warn!(path = %path.display(), %reason, "segment index is inconsistent; rebuilding");
            return Ok(None);
        }
    };
    let mut index = OffsetIndex::from_loaded(config.index_interval_bytes, entries);
    let (last_rel, last_pos) = index.last();
    let tail = read_file(file, path, last_pos, size)?;
    let (scan, next) = scan_entries(
        &tail,
        last_pos,
        base,
        base + u64::from(last_rel),
        &mut index,
        true,
    );
    if scan.damage.is_some() {
        warn!(path = %path.display(), "segment index does not match the log; rescanning");
        return Ok(None);
    }
    Ok(Some((index, next)))
}

/// Opens the last segment, truncating a torn tail.
fn open_last(dir: &Path, base: u64, path: &Path, config: &LogConfig) -> Result<Segment> {
    let file = open_log_file(path)?;
    let size = file.metadata().ctx(path)?.len();
    let buf = read_file(&file, path, 0, size)?;
    let mut index = OffsetIndex::new(config.index_interval_bytes);
    let (scan, next_offset) = scan_entries(&buf, 0, base, base, &mut index, false);
    let mut valid_size = size;
    if let Some(d) = scan.damage {
        let max_more = (buf.len() / ENTRY_OVERHEAD) as u64 + 1;
        let follows =
            frame::find_valid_frame_after(&buf, d.position + 1, MIN_BODY, MAX_BODY, |b| {
                let (offset, _) = decode_entry_meta(b);
                offset >= next_offset && offset - next_offset <= max_more
            });
        if let Some(valid_at) = follows {
            return Err(StorageError::corruption(
                path,
                d.position as u64,
                format!(
                    "{}; a valid entry follows at byte {valid_at}, so this is not a torn tail",
                    d.reason
                ),
            ));
        }
        valid_size = scan.valid_end as u64;
        warn!(
            path = %path.display(),
            position = valid_size,
            dropped_bytes = size - valid_size,
            reason = %d.reason,
            "truncating torn tail of segment"
        );
        file.set_len(valid_size).ctx(path)?;
        super::io::sync_all(&file, path).ctx(path)?;
    }
    Ok(Segment {
        base_offset: base,
        next_offset,
        size: valid_size,
        file: Arc::new(file),
        log_path: path.to_path_buf(),
        index_path: dir.join(segment::index_file_name(base)),
        index,
    })
}
