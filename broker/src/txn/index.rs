//! The per-partition transaction index: which transactions have records in
//! the partition and are not resolved yet (they hold the last stable
//! offset), which ranges belong to aborted transactions, and where the
//! control markers are.
//!
//! It lives in memory beside the partition's producer state and is rebuilt
//! from the log at startup (in the same scan). At run time a marker is
//! recorded when it is appended, but the transaction stays unresolved (and
//! the stable offset held) until the coordinator's decision is durable and
//! [`TxnIndex::resolve`] is called; during the startup scan a marker
//! resolves at once, the durable marker being authoritative for the past.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use cursus_wire::Record;

use super::markers::MarkerKind;
use crate::storage::StoredRecord;

/// An unresolved transaction's records in this partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OngoingTxn {
    /// The transactional id the records carry.
    pub transactional_id: String,
    /// Offset of its first record here.
    pub first_offset: u64,
    /// `(seqNum, offset)` of its records, in append order.
    records: Vec<(u64, u64)>,
}

/// The records of an aborted transaction: those of `producer_id`/`epoch`
/// between `first` and the abort marker at `last`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortedRange {
    /// Producer id.
    pub producer_id: String,
    /// Producer epoch.
    pub epoch: i64,
    /// First record offset.
    pub first: u64,
    /// Offset of the abort marker.
    pub last: u64,
}

/// The newest marker written for a producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenMarker {
    /// Epoch of the transaction it resolves.
    pub epoch: i64,
    /// Commit or abort.
    pub kind: MarkerKind,
    /// Its offset.
    pub offset: u64,
}

/// An unresolved transaction, as [`TxnIndex::ongoing`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OngoingEntry {
    /// Producer id.
    pub producer_id: String,
    /// Producer epoch.
    pub epoch: i64,
    /// Transactional id.
    pub transactional_id: String,
    /// First record offset.
    pub first_offset: u64,
}

/// See the module docs.
#[derive(Debug, Clone, Default)]
pub struct TxnIndex {
    ongoing: BTreeMap<(String, i64), OngoingTxn>,
    /// Aborted ranges by the offset of their marker (the end of the range).
    aborted: BTreeMap<u64, AbortedRange>,
    markers: BTreeSet<u64>,
    last_markers: HashMap<String, WrittenMarker>,
}

impl TxnIndex {
    /// An empty index.
    pub fn new() -> TxnIndex {
        TxnIndex::default()
    }

    /// A transactional data record was appended at `offset`.
    pub fn record(
        &mut self,
        producer_id: &str,
        epoch: i64,
        transactional_id: &str,
        seq: u64,
        offset: u64,
    ) {
        let entry = self
            .ongoing
            .entry((producer_id.to_owned(), epoch))
            .or_insert_with(|| OngoingTxn {
                transactional_id: transactional_id.to_owned(),
                first_offset: offset,
                records: Vec::new(),
            });
        entry.records.push((seq, offset));
    }

    /// A control marker was appended at `offset` (the transaction stays
    /// unresolved until [`resolve`](Self::resolve)).
    pub fn marker(&mut self, producer_id: &str, epoch: i64, kind: MarkerKind, offset: u64) {
        self.markers.insert(offset);
        let newer = self
            .last_markers
            .get(producer_id)
            .map_or(true, |m| m.epoch <= epoch);
        if newer {
            self.last_markers.insert(
                producer_id.to_owned(),
                WrittenMarker {
                    epoch,
                    kind,
                    offset,
                },
            );
        }
    }

    /// Undoes [`record`](Self::record) of a record whose append failed.
    pub fn forget(&mut self, producer_id: &str, epoch: i64, offset: u64) {
        let key = (producer_id.to_owned(), epoch);
        if let Some(txn) = self.ongoing.get_mut(&key) {
            txn.records.retain(|(_, o)| *o != offset);
            if txn.records.is_empty() {
                self.ongoing.remove(&key);
            }
        }
    }

    /// Undoes [`marker`](Self::marker) of a marker whose append failed;
    /// `previous` is what [`last_marker`](Self::last_marker) said before.
    pub fn forget_marker(
        &mut self,
        producer_id: &str,
        offset: u64,
        previous: Option<WrittenMarker>,
    ) {
        self.markers.remove(&offset);
        match previous {
            Some(m) => {
                self.last_markers.insert(producer_id.to_owned(), m);
            }
            None => {
                self.last_markers.remove(producer_id);
            }
        }
    }

    /// The newest marker written for `producer_id`, of any epoch.
    pub fn last_marker(&self, producer_id: &str) -> Option<WrittenMarker> {
        self.last_markers.get(producer_id).copied()
    }

    /// The marker already written for `(producer_id, epoch)`, if any.
    pub fn marker_for(&self, producer_id: &str, epoch: i64) -> Option<WrittenMarker> {
        self.last_markers
            .get(producer_id)
            .filter(|m| m.epoch == epoch)
            .copied()
    }

    /// Resolves `(producer_id, epoch)` by its written marker: its records
    /// stop holding the stable offset; aborted ones are hidden for good.
    /// Returns false when no marker was written (nothing changes).
    pub fn resolve(&mut self, producer_id: &str, epoch: i64) -> bool {
        let Some(marker) = self.marker_for(producer_id, epoch) else {
            return false;
        };
        if let Some(txn) = self.ongoing.remove(&(producer_id.to_owned(), epoch)) {
            if marker.kind == MarkerKind::Abort {
                self.aborted.insert(
                    marker.offset,
                    AbortedRange {
                        producer_id: producer_id.to_owned(),
                        epoch,
                        first: txn.first_offset,
                        last: marker.offset,
                    },
                );
            }
        }
        true
    }

    /// Startup scan: a marker found in the log resolves its transaction.
    pub fn replay_marker(&mut self, producer_id: &str, epoch: i64, kind: MarkerKind, offset: u64) {
        self.marker(producer_id, epoch, kind, offset);
        self.resolve(producer_id, epoch);
    }

    /// Offset of the record `seq` of the unresolved `(producer_id, epoch)`.
    pub fn offset_of(&self, producer_id: &str, epoch: i64, seq: u64) -> Option<u64> {
        let txn = self.ongoing.get(&(producer_id.to_owned(), epoch))?;
        txn.records
            .iter()
            .find(|(s, _)| *s == seq)
            .map(|(_, offset)| *offset)
    }

    /// First offset of the earliest unresolved transaction.
    pub fn first_unstable(&self) -> Option<u64> {
        self.ongoing.values().map(|t| t.first_offset).min()
    }

    /// The last stable offset given the high-water mark.
    pub fn stable_offset(&self, hwm: u64) -> u64 {
        self.first_unstable().map_or(hwm, |first| first.min(hwm))
    }

    /// Every unresolved transaction.
    pub fn ongoing(&self) -> Vec<OngoingEntry> {
        self.ongoing
            .iter()
            .map(|((pid, epoch), t)| OngoingEntry {
                producer_id: pid.clone(),
                epoch: *epoch,
                transactional_id: t.transactional_id.clone(),
                first_offset: t.first_offset,
            })
            .collect()
    }

    /// What a read_committed read of `[from, to)` must leave out.
    pub fn filter(&self, from: u64, to: u64) -> ReadFilter {
        ReadFilter {
            markers: self.markers.range(from..to).copied().collect(),
            aborted: self
                .aborted
                .range(from..)
                .map(|(_, r)| r)
                .filter(|r| r.first < to)
                .cloned()
                .collect(),
        }
    }
}

/// The markers and aborted ranges of one read range; see
/// [`TxnIndex::filter`].
#[derive(Debug, Clone, Default)]
pub struct ReadFilter {
    markers: BTreeSet<u64>,
    aborted: Vec<AbortedRange>,
}

impl ReadFilter {
    /// True when a read_committed reader may see `stored`.
    pub fn visible(&self, stored: &StoredRecord) -> bool {
        let offset = stored.offset;
        if self.markers.contains(&offset) {
            return false;
        }
        let mut candidates = self
            .aborted
            .iter()
            .filter(|r| r.first <= offset && offset <= r.last)
            .peekable();
        if candidates.peek().is_none() {
            return true;
        }
        let Ok(record) = Record::decode(stored.data.clone()) else {
            return true;
        };
        if record.transactional_id.is_empty() {
            return true;
        }
        !candidates.any(|r| r.producer_id == record.producer_id && r.epoch == record.epoch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use cursus_wire::RecordVersion;

    fn stored(offset: u64, pid: &str, epoch: i64, txn: &str) -> StoredRecord {
        let r = Record {
            offset,
            producer_id: pid.into(),
            epoch,
            transactional_id: txn.into(),
            ..Record::new("x")
        };
        let mut buf = BytesMut::new();
        r.encode(RecordVersion::V3, &mut buf).unwrap();
        StoredRecord {
            offset,
            timestamp: 0,
            data: buf.freeze(),
        }
    }

    #[test]
    fn the_stable_offset_waits_for_the_decision_not_the_marker() {
        let mut ix = TxnIndex::new();
        assert_eq!(ix.stable_offset(10), 10);
        ix.record("txn-1", 0, "a", 1, 3);
        ix.record("txn-2", 0, "b", 1, 5);
        ix.record("txn-1", 0, "a", 2, 6);
        assert_eq!(ix.stable_offset(10), 3);
        assert_eq!(ix.offset_of("txn-1", 0, 2), Some(6));
        ix.marker("txn-1", 0, MarkerKind::Commit, 7);
        assert_eq!(ix.stable_offset(10), 3, "marker alone does not release");
        assert!(ix.resolve("txn-1", 0));
        assert_eq!(ix.stable_offset(10), 5);
        assert!(!ix.resolve("txn-2", 0), "no marker yet");
        ix.marker("txn-2", 0, MarkerKind::Abort, 8);
        assert_eq!(
            ix.marker_for("txn-2", 0).map(|m| m.kind),
            Some(MarkerKind::Abort)
        );
        assert!(ix.resolve("txn-2", 0));
        assert_eq!(ix.stable_offset(10), 10);
        assert!(ix.ongoing().is_empty());
    }

    #[test]
    fn failed_appends_are_forgotten() {
        let mut ix = TxnIndex::new();
        ix.record("txn-1", 0, "a", 1, 0);
        ix.record("txn-1", 0, "a", 2, 1);
        ix.forget("txn-1", 0, 1);
        assert_eq!(ix.offset_of("txn-1", 0, 2), None);
        assert_eq!(ix.stable_offset(5), 0);
        ix.forget("txn-1", 0, 0);
        assert_eq!(ix.stable_offset(5), 5);
        ix.replay_marker("txn-1", 0, MarkerKind::Abort, 2);
        let previous = ix.last_marker("txn-1");
        ix.marker("txn-1", 1, MarkerKind::Commit, 3);
        ix.forget_marker("txn-1", 3, previous);
        assert_eq!(ix.marker_for("txn-1", 1), None);
        assert_eq!(ix.last_marker("txn-1"), previous);
        assert!(ix.filter(0, 5).visible(&stored(3, "p", 0, "")));
    }

    #[test]
    fn filters_markers_and_aborted_records_only() {
        let mut ix = TxnIndex::new();
        ix.record("txn-1", 0, "a", 1, 1);
        ix.record("txn-2", 0, "b", 1, 2);
        ix.replay_marker("txn-1", 0, MarkerKind::Abort, 3);
        ix.replay_marker("txn-2", 0, MarkerKind::Commit, 4);
        let f = ix.filter(0, 5);
        assert!(f.visible(&stored(0, "p", 0, "")));
        assert!(!f.visible(&stored(1, "txn-1", 0, "a")));
        assert!(f.visible(&stored(2, "txn-2", 0, "b")));
        assert!(!f.visible(&stored(3, "txn-1", 0, "a")));
        assert!(!f.visible(&stored(4, "txn-2", 0, "b")));
        // A plain record inside an aborted range stays visible.
        assert!(f.visible(&stored(2, "p", 0, "")));
        // Ranges outside the read are not carried.
        let later = ix.filter(5, 9);
        assert!(later.visible(&stored(5, "txn-1", 0, "a")));
    }

    #[test]
    fn epochs_are_separate_transactions() {
        let mut ix = TxnIndex::new();
        ix.record("txn-1", 0, "a", 1, 0);
        ix.replay_marker("txn-1", 0, MarkerKind::Abort, 1);
        ix.record("txn-1", 1, "a", 1, 2);
        assert_eq!(ix.marker_for("txn-1", 1), None);
        assert_eq!(ix.stable_offset(3), 2);
        ix.replay_marker("txn-1", 1, MarkerKind::Commit, 3);
        let f = ix.filter(0, 4);
        assert!(!f.visible(&stored(0, "txn-1", 0, "a")));
        assert!(f.visible(&stored(2, "txn-1", 1, "a")));
    }
}
