//! [`StreamIndex`]: a partition's event streams, aggregate key → the
//! (version, offset) of each retained event and the stream's head version.
//!
//! The index lives in memory. It is rebuilt from the log at startup, in the
//! scan that also rebuilds the producer and transaction state, and updated
//! by APPEND_STREAM under the partition's writer lock, right after the
//! append, so the version check and the append are one atomic step per
//! partition.
//!
//! Only committed event records are indexed: plain (non-transactional)
//! records carrying a key and an `aggregate_version`. A transactional event
//! (TXN_APPEND_STREAM, a later issue) is to be added when its commit marker
//! is written (and, at rebuild, when the marker is replayed), so open and
//! aborted transactional records never enter the index.
//!
//! Entries may be missing at the front (retention removed their records):
//! the head version is kept anyway, and a floor recorded in the snapshot
//! journal before retention runs restores it across a restart when every
//! event of a stream was removed (see
//! [`SnapshotStore`](super::SnapshotStore)).

use std::collections::{HashMap, VecDeque};

/// One indexed event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Aggregate version (1, 2, 3, …).
    pub version: u64,
    /// Offset of its record in the partition log.
    pub offset: u64,
}

/// One aggregate's stream.
#[derive(Debug, Clone, Default)]
struct Stream {
    /// Highest version assigned (durable or not yet).
    head: u64,
    /// Retained events in version (and offset) order.
    entries: VecDeque<Entry>,
}

impl Stream {
    /// The highest version whose record is below `durable`.
    fn visible_head(&self, durable: u64) -> u64 {
        match self.entries.back() {
            None => self.head,
            Some(last) if last.offset < durable => self.head,
            Some(_) => {
                let first_hidden = self.entries.partition_point(|e| e.offset < durable);
                self.entries[first_hidden].version - 1
            }
        }
    }
}

/// A partition's event streams; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct StreamIndex {
    streams: HashMap<String, Stream>,
}

impl StreamIndex {
    /// An empty index.
    pub fn new() -> StreamIndex {
        StreamIndex::default()
    }

    /// Number of streams known.
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// True when no stream is known.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// The highest version assigned to `key`, including an event whose
    /// append is not durable yet (0 for an unknown aggregate). This is what
    /// the next APPEND_STREAM must exceed by one.
    pub fn head(&self, key: &str) -> u64 {
        self.streams.get(key).map_or(0, |s| s.head)
    }

    /// The highest version of `key` whose record is below `durable` (what
    /// readers may see).
    pub fn visible_head(&self, key: &str, durable: u64) -> u64 {
        self.streams.get(key).map_or(0, |s| s.visible_head(durable))
    }

    /// Records the event `version` of `key` appended at `offset`. The caller
    /// holds the writer lock and checked `version == head(key) + 1`.
    pub fn append(&mut self, key: &str, version: u64, offset: u64) {
        let stream = self.streams.entry(key.to_owned()).or_default();
        debug_assert_eq!(version, stream.head + 1, "versions are assigned in order");
        stream.head = version;
        stream.entries.push_back(Entry { version, offset });
    }

    /// Replays a stored event record at startup. The first retained event
    /// of a key may have any version (retention may have removed earlier
    /// ones); later ones must continue the stream. Returns false (and
    /// indexes nothing) for an event that does not.
    pub fn replay(&mut self, key: &str, version: u64, offset: u64) -> bool {
        let stream = self.streams.entry(key.to_owned()).or_default();
        let continues = match stream.entries.back() {
            None => version > stream.head,
            Some(_) => version == stream.head + 1,
        };
        if !continues {
            return false;
        }
        stream.head = version;
        stream.entries.push_back(Entry { version, offset });
        true
    }

    /// Raises the head of `key` to at least `floor` (a head recorded before
    /// retention removed the stream's events).
    pub fn raise_floor(&mut self, key: &str, floor: u64) {
        let stream = self.streams.entry(key.to_owned()).or_default();
        stream.head = stream.head.max(floor);
    }

    /// Visible entries of `key` (records below `durable`) with a version of
    /// at least `from`, at most `limit` of them, in version order.
    pub fn entries(&self, key: &str, from: u64, durable: u64, limit: usize) -> Vec<Entry> {
        let Some(stream) = self.streams.get(key) else {
            return Vec::new();
        };
        let start = stream.entries.partition_point(|e| e.version < from);
        stream
            .entries
            .range(start..)
            .take_while(|e| e.offset < durable)
            .take(limit)
            .copied()
            .collect()
    }

    /// Version of the first retained entry of `key`, if any.
    pub fn first_version(&self, key: &str) -> Option<u64> {
        self.streams
            .get(key)
            .and_then(|s| s.entries.front())
            .map(|e| e.version)
    }

    /// Drops entries whose records lie below `earliest` (removed by
    /// retention); heads are kept.
    pub fn prune_below(&mut self, earliest: u64) {
        for stream in self.streams.values_mut() {
            while stream.entries.front().is_some_and(|e| e.offset < earliest) {
                stream.entries.pop_front();
            }
        }
    }

    /// Every stream with its visible head (see
    /// [`visible_head`](Self::visible_head)).
    pub fn visible_heads(&self, durable: u64) -> Vec<(String, u64)> {
        self.streams
            .iter()
            .map(|(k, s)| (k.clone(), s.visible_head(durable)))
            .filter(|(_, v)| *v > 0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_and_visibility() {
        let mut i = StreamIndex::new();
        assert_eq!(i.head("a"), 0);
        i.append("a", 1, 10);
        i.append("a", 2, 12);
        i.append("b", 1, 11);
        assert_eq!(i.head("a"), 2);
        assert_eq!(i.visible_head("a", 13), 2);
        assert_eq!(i.visible_head("a", 12), 1);
        assert_eq!(i.visible_head("a", 10), 0);
        assert_eq!(i.entries("a", 1, 13, 10).len(), 2);
        assert_eq!(i.entries("a", 2, 13, 10)[0].offset, 12);
        assert_eq!(i.entries("a", 1, 12, 10).len(), 1);
        assert_eq!(i.entries("a", 1, 13, 1).len(), 1);
    }

    #[test]
    fn replay_keeps_streams_contiguous() {
        let mut i = StreamIndex::new();
        // Retention removed versions 1..4.
        assert!(i.replay("a", 5, 0));
        assert!(i.replay("a", 6, 1));
        assert!(!i.replay("a", 6, 2));
        assert!(!i.replay("a", 8, 3));
        assert!(i.replay("a", 7, 4));
        assert_eq!(i.head("a"), 7);
        assert_eq!(i.first_version("a"), Some(5));
    }

    #[test]
    fn pruning_keeps_heads_and_floors_raise_them() {
        let mut i = StreamIndex::new();
        i.append("a", 1, 0);
        i.append("a", 2, 5);
        i.prune_below(3);
        assert_eq!(i.first_version("a"), Some(2));
        i.prune_below(6);
        assert_eq!(i.first_version("a"), None);
        assert_eq!(i.head("a"), 2);
        assert_eq!(i.visible_head("a", 6), 2);
        i.raise_floor("b", 9);
        assert_eq!(i.head("b"), 9);
        i.raise_floor("a", 1);
        assert_eq!(i.head("a"), 2);
        assert!(!i.replay("b", 9, 7));
        assert!(i.replay("b", 10, 8));
    }
}
