//! Sparse offset index of one segment.
//!
//! An index entry is written for a log entry when at least
//! `index_interval_bytes` bytes of the segment lie between it and the previous
//! indexed position (position 0, the segment's base offset, is implicitly
//! indexed). Looking an offset up is a binary search over the entries followed
//! by a scan of at most one interval of the segment.
//!
//! On disk (`<base offset, 20 digits>.index`) the index is a sequence of
//! 16-byte entries, big-endian:
//!
//! ```text
//! +-----------------------+-----------------+---------------------------+
//! | relative_offset: u32  | position: u32   | max_timestamp_ms: i64     |
//! +-----------------------+-----------------+---------------------------+
//! ```
//!
//! `relative_offset` is the entry's offset minus the segment's base offset,
//! `position` the byte position of the entry in the `.log` file and
//! `max_timestamp_ms` the largest timestamp of all entries of the segment up to
//! and including this one (so time-based retention needs only the last index
//! entry plus a short tail scan). The index is a pure function of the log and
//! the interval, so it can always be rebuilt.

/// Size of one on-disk index entry.
pub(crate) const INDEX_ENTRY_LEN: usize = 16;

/// One index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    /// Offset minus the segment's base offset.
    pub relative_offset: u32,
    /// Byte position of the entry in the segment file.
    pub position: u32,
    /// Largest timestamp among entries up to and including this one.
    pub max_timestamp: i64,
}

/// In-memory sparse index of one segment, fed with every entry in order.
#[derive(Debug, Clone)]
pub(crate) struct OffsetIndex {
    entries: Vec<IndexEntry>,
    interval: u64,
    last_indexed_position: u64,
    max_timestamp: Option<i64>,
}

impl OffsetIndex {
    /// An empty index for a new segment.
    pub(crate) fn new(interval: u32) -> Self {
        OffsetIndex {
            entries: Vec::new(),
            interval: u64::from(interval.max(1)),
            last_indexed_position: 0,
            max_timestamp: None,
        }
    }

    /// Starts from entries loaded from disk; the caller must then
    /// [`observe`](Self::observe) every entry from the last indexed position
    /// to the end of the segment.
    pub(crate) fn from_loaded(interval: u32, entries: Vec<IndexEntry>) -> Self {
        let last_indexed_position = entries.last().map_or(0, |e| u64::from(e.position));
        let max_timestamp = entries.last().map(|e| e.max_timestamp);
        OffsetIndex {
            entries,
            interval: u64::from(interval.max(1)),
            last_indexed_position,
            max_timestamp,
        }
    }

    /// Records the entry with `relative_offset` at byte `position` with
    /// `timestamp`. Entries must be observed in order.
    pub(crate) fn observe(&mut self, relative_offset: u32, position: u64, timestamp: i64) {
        let max = self.max_timestamp.map_or(timestamp, |m| m.max(timestamp));
        self.max_timestamp = Some(max);
        if position >= self.last_indexed_position + self.interval {
            // Positions are < 2^32 by construction (segment size limits).
            if let Ok(pos32) = u32::try_from(position) {
                self.entries.push(IndexEntry {
                    relative_offset,
                    position: pos32,
                    max_timestamp: max,
                });
                self.last_indexed_position = position;
            }
        }
    }

    /// Byte position from which to scan for `relative_offset`: the position of
    /// the last indexed entry at or before it, or 0.
    pub(crate) fn lookup(&self, relative_offset: u32) -> (u32, u64) {
        let idx = self
            .entries
            .partition_point(|e| e.relative_offset <= relative_offset);
        if idx == 0 {
            (0, 0)
        } else {
            let e = self.entries[idx - 1];
            (e.relative_offset, u64::from(e.position))
        }
    }

    /// Position of the last indexed entry and its relative offset
    /// (`(0, 0)` when nothing is indexed).
    pub(crate) fn last(&self) -> (u32, u64) {
        self.entries
            .last()
            .map_or((0, 0), |e| (e.relative_offset, u64::from(e.position)))
    }

    /// Largest timestamp observed, `None` for an empty segment.
    pub(crate) fn max_timestamp(&self) -> Option<i64> {
        self.max_timestamp
    }

    /// Number of index entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The on-disk encoding.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.entries.len() * INDEX_ENTRY_LEN);
        for e in &self.entries {
            out.extend_from_slice(&e.relative_offset.to_be_bytes());
            out.extend_from_slice(&e.position.to_be_bytes());
            out.extend_from_slice(&e.max_timestamp.to_be_bytes());
        }
        out
    }

    /// Decodes and structurally validates an index file of a segment whose log
    /// file is `log_size` bytes long. Returns a reason on failure.
    pub(crate) fn decode(bytes: &[u8], log_size: u64) -> Result<Vec<IndexEntry>, String> {
        if bytes.len() % INDEX_ENTRY_LEN != 0 {
            return Err(format!(
                "index length {} is not a multiple of {INDEX_ENTRY_LEN}",
                bytes.len()
            ));
        }
        let mut entries = Vec::with_capacity(bytes.len() / INDEX_ENTRY_LEN);
        let mut prev: Option<IndexEntry> = None;
        for chunk in bytes.chunks_exact(INDEX_ENTRY_LEN) {
            let e = IndexEntry {
                relative_offset: u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]),
                position: u32::from_be_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]),
                max_timestamp: i64::from_be_bytes([
                    chunk[8], chunk[9], chunk[10], chunk[11], chunk[12], chunk[13], chunk[14],
                    chunk[15],
                ]),
            };
            let ordered = match prev {
                None => e.relative_offset > 0 && e.position > 0,
                Some(p) => {
                    e.relative_offset > p.relative_offset
                        && e.position > p.position
                        && e.max_timestamp >= p.max_timestamp
                }
            };
            if !ordered {
                return Err(format!("index entry {} is out of order", entries.len()));
            }
            if u64::from(e.position) >= log_size {
                return Err(format!(
                    "index entry {} points past the end of the log",
                    entries.len()
                ));
            }
            entries.push(e);
            prev = Some(e);
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_lookup() {
        let mut idx = OffsetIndex::new(100);
        // 10 entries of 40 bytes each
        for i in 0..10u32 {
            idx.observe(i, u64::from(i) * 40, i64::from(i));
        }
        // indexed at positions 120 (rel 3), 240 (rel 6), 360 (rel 9)
        assert_eq!(idx.len(), 3);
        assert_eq!(idx.lookup(0), (0, 0));
        assert_eq!(idx.lookup(2), (0, 0));
        assert_eq!(idx.lookup(3), (3, 120));
        assert_eq!(idx.lookup(8), (6, 240));
        assert_eq!(idx.lookup(100), (9, 360));
        assert_eq!(idx.max_timestamp(), Some(9));
    }

    #[test]
    fn encode_decode_and_validate() {
        let mut idx = OffsetIndex::new(1);
        for i in 0..5u32 {
            idx.observe(i, u64::from(i) * 30, 100 - i64::from(i));
        }
        let bytes = idx.encode();
        let decoded = OffsetIndex::decode(&bytes, 150).unwrap();
        assert_eq!(decoded.len(), 4);
        assert!(decoded.iter().all(|e| e.max_timestamp == 100));
        assert!(OffsetIndex::decode(&bytes, 100).is_err());
        assert!(OffsetIndex::decode(&bytes[..bytes.len() - 1], 150).is_err());
        assert!(OffsetIndex::decode(&[0u8; 32], 150).is_err());
        let reloaded = OffsetIndex::from_loaded(1, decoded);
        assert_eq!(reloaded.last(), (4, 120));
        assert_eq!(reloaded.max_timestamp(), Some(100));
    }
}
