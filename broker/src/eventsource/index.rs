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
//! records carrying a key and an `aggregate_version`, and transactional
//! events (TXN_APPEND_STREAM) once their transaction is committed. A
//! transactional event is *pending* until then: its key is *reserved* by
//! the transaction (no other append may take it), and the commit indexes it
//! (at run time when the commit decision is durable, at rebuild when the
//! commit marker is replayed); an abort drops it. Open and aborted
//! transactional records never enter the index.
//!
//! The index also maps the `event_id` of every retained committed event to
//! its offset, so an aggregate replay topic can refuse an event id used
//! twice in a partition.
//!
//! Entries may be missing at the front (retention removed their records):
//! the head version is kept anyway, and a floor recorded in the snapshot
//! journal before retention runs restores it across a restart when every
//! event of a stream was removed (see
//! [`SnapshotStore`](super::SnapshotStore)).

use std::collections::{HashMap, VecDeque};

/// The transaction holding a key's reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// Its transactional id.
    pub transactional_id: String,
    /// Its producer id.
    pub producer_id: String,
    /// Its epoch.
    pub epoch: i64,
}

/// A transactional event appended but not committed yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingEvent {
    /// Aggregate key.
    pub key: String,
    /// The version it gets at the commit.
    pub version: u64,
    /// Offset of its record.
    pub offset: u64,
    /// Its event id (may be empty).
    pub event_id: String,
}

/// A pending event that no longer continues its stream at the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingConflict {
    /// Aggregate key.
    pub key: String,
    /// The version the event was appended as.
    pub version: u64,
    /// The stream's head version now.
    pub current: u64,
}

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
    /// Event id → offset of the retained committed event carrying it.
    event_ids: HashMap<String, u64>,
    /// Key → the transaction whose pending events hold it.
    reserved: HashMap<String, Reservation>,
    /// Pending events by (producer id, epoch), in append order.
    pending: HashMap<(String, i64), Vec<PendingEvent>>,
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

    /// [`append`](Self::append), also recording a non-empty `event_id`.
    pub fn append_event(&mut self, key: &str, version: u64, offset: u64, event_id: &str) {
        self.append(key, version, offset);
        if !event_id.is_empty() {
            self.event_ids.insert(event_id.to_owned(), offset);
        }
    }

    /// Offset of the retained committed event carrying `event_id`, if any.
    pub fn event_id_offset(&self, event_id: &str) -> Option<u64> {
        self.event_ids.get(event_id).copied()
    }

    /// True when a pending (uncommitted) event carries `event_id`.
    pub fn event_id_pending(&self, event_id: &str) -> bool {
        self.pending
            .values()
            .flatten()
            .any(|e| e.event_id == event_id)
    }

    /// The retained entry of `key` at `version`, if any.
    pub fn entry_at(&self, key: &str, version: u64) -> Option<Entry> {
        let stream = self.streams.get(key)?;
        let i = stream.entries.partition_point(|e| e.version < version);
        stream
            .entries
            .get(i)
            .filter(|e| e.version == version)
            .copied()
    }

    /// The transaction holding `key`, if one does.
    pub fn reservation(&self, key: &str) -> Option<&Reservation> {
        self.reserved.get(key)
    }

    /// The version the next event of `key` gets in the transaction of
    /// `(producer_id, epoch)`: one past its own pending events of the key,
    /// else one past the head.
    pub fn next_version_for(&self, key: &str, producer_id: &str, epoch: i64) -> u64 {
        let own = self
            .pending
            .get(&(producer_id.to_owned(), epoch))
            .and_then(|events| events.iter().rev().find(|e| e.key == key))
            .map(|e| e.version);
        own.unwrap_or_else(|| self.head(key)) + 1
    }

    /// A transactional event was appended: `owner` reserves its key until
    /// the transaction is resolved.
    pub fn stage(&mut self, owner: &Reservation, event: PendingEvent) {
        self.reserved
            .entry(event.key.clone())
            .or_insert_with(|| owner.clone());
        self.pending
            .entry((owner.producer_id.clone(), owner.epoch))
            .or_default()
            .push(event);
    }

    /// Checks that every pending event of `(producer_id, epoch)` still
    /// continues its stream (the commit's re-check).
    pub fn check_pending(&self, producer_id: &str, epoch: i64) -> Result<(), PendingConflict> {
        let Some(events) = self.pending.get(&(producer_id.to_owned(), epoch)) else {
            return Ok(());
        };
        let mut heads: HashMap<&str, u64> = HashMap::new();
        for e in events {
            let head = *heads.entry(&e.key).or_insert_with(|| self.head(&e.key));
            if e.version != head + 1 {
                return Err(PendingConflict {
                    key: e.key.clone(),
                    version: e.version,
                    current: head,
                });
            }
            heads.insert(&e.key, e.version);
        }
        Ok(())
    }

    /// The transaction of `(producer_id, epoch)` committed: its pending
    /// events enter the index (each that continues its stream; see
    /// [`replay`](Self::replay)) and its reservations end. Returns the
    /// events that did not continue their stream (not indexed).
    pub fn commit_pending(&mut self, producer_id: &str, epoch: i64) -> Vec<PendingEvent> {
        let events = self.release_pending(producer_id, epoch);
        let mut skipped = Vec::new();
        for e in events {
            if self.replay(&e.key, e.version, e.offset) {
                if !e.event_id.is_empty() {
                    self.event_ids.insert(e.event_id.clone(), e.offset);
                }
            } else {
                skipped.push(e);
            }
        }
        skipped
    }

    /// The transaction of `(producer_id, epoch)` aborted: its pending events
    /// are dropped and its reservations end.
    pub fn abort_pending(&mut self, producer_id: &str, epoch: i64) {
        self.release_pending(producer_id, epoch);
    }

    fn release_pending(&mut self, producer_id: &str, epoch: i64) -> Vec<PendingEvent> {
        let events = self
            .pending
            .remove(&(producer_id.to_owned(), epoch))
            .unwrap_or_default();
        self.reserved
            .retain(|_, r| !(r.producer_id == producer_id && r.epoch == epoch));
        events
    }

    /// [`replay`](Self::replay), also recording a non-empty `event_id`.
    pub fn replay_event(&mut self, key: &str, version: u64, offset: u64, event_id: &str) -> bool {
        let indexed = self.replay(key, version, offset);
        if indexed && !event_id.is_empty() {
            self.event_ids.insert(event_id.to_owned(), offset);
        }
        indexed
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
        self.event_ids.retain(|_, offset| *offset >= earliest);
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

    fn owner(id: &str, pid: &str) -> Reservation {
        Reservation {
            transactional_id: id.into(),
            producer_id: pid.into(),
            epoch: 0,
        }
    }

    fn pending(key: &str, version: u64, offset: u64, id: &str) -> PendingEvent {
        PendingEvent {
            key: key.into(),
            version,
            offset,
            event_id: id.into(),
        }
    }

    #[test]
    fn pending_events_reserve_until_commit_or_abort() {
        let mut i = StreamIndex::new();
        i.append_event("a", 1, 0, "e1");
        let t = owner("t", "txn-1");
        assert_eq!(i.next_version_for("a", "txn-1", 0), 2);
        i.stage(&t, pending("a", 2, 1, "e2"));
        assert_eq!(i.next_version_for("a", "txn-1", 0), 3);
        i.stage(&t, pending("a", 3, 2, "e3"));
        assert_eq!(i.reservation("a"), Some(&t));
        assert_eq!(i.head("a"), 1, "pending events are not indexed");
        assert!(i.event_id_pending("e3"));
        assert_eq!(i.event_id_offset("e3"), None);
        assert!(i.check_pending("txn-1", 0).is_ok());
        assert!(i.commit_pending("txn-1", 0).is_empty());
        assert_eq!(i.head("a"), 3);
        assert_eq!(i.reservation("a"), None);
        assert_eq!(i.event_id_offset("e3"), Some(2));
        assert_eq!(
            i.entry_at("a", 2),
            Some(Entry {
                version: 2,
                offset: 1
            })
        );

        i.stage(&owner("u", "txn-2"), pending("b", 1, 5, "x"));
        assert!(i.reservation("b").is_some());
        i.abort_pending("txn-2", 0);
        assert_eq!(i.reservation("b"), None);
        assert_eq!(i.head("b"), 0);
        assert!(!i.event_id_pending("x"));
    }

    #[test]
    fn the_commit_recheck_finds_a_moved_head() {
        let mut i = StreamIndex::new();
        i.stage(&owner("t", "txn-1"), pending("a", 1, 0, ""));
        i.raise_floor("a", 1);
        let c = i.check_pending("txn-1", 0).unwrap_err();
        assert_eq!((c.key.as_str(), c.version, c.current), ("a", 1, 1));
        i.prune_below(1);
        assert_eq!(i.event_id_offset("e"), None);
    }
}
