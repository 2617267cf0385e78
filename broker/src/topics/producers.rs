//! Idempotent-producer sequence state of one partition.
//!
//! The broker remembers, per producer id, the newest `(epoch, seqNum)` it
//! appended and the offset it got. A retried sequence is answered with that
//! offset instead of being appended again; an older epoch is fenced; a
//! sequence that skips ahead is a gap. The state is rebuilt from the records
//! of the log on startup (every stored record carries its producer fields).

use std::collections::HashMap;

use cursus_wire::ErrorPayload;

/// What an idempotent publish of one sequence must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqCheck {
    /// The next sequence: append it.
    Append,
    /// Already appended: acknowledge `offset` without appending.
    Duplicate {
        /// Offset of the producer's newest appended record.
        offset: u64,
    },
}

/// Newest appended sequence of one producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerEntry {
    /// Producer epoch.
    pub epoch: i64,
    /// Newest sequence number.
    pub last_seq: u64,
    /// Offset of that record.
    pub last_offset: u64,
}

/// Sequence state of every producer that wrote to a partition.
#[derive(Debug, Clone, Default)]
pub struct ProducerTable {
    entries: HashMap<String, ProducerEntry>,
}

impl ProducerTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entry of `producer`, if any.
    pub fn get(&self, producer: &str) -> Option<ProducerEntry> {
        self.entries.get(producer).copied()
    }

    /// Number of producers tracked.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no producer is tracked.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Decides what to do with `(producer, epoch, seq)` (seq > 0) without
    /// changing anything.
    pub fn check(&self, producer: &str, epoch: i64, seq: u64) -> Result<SeqCheck, ErrorPayload> {
        let gap = |expected: u64| {
            Err(ErrorPayload::new("invalid_producer_sequence")
                .with_field("producer", producer)
                .with_field("epoch", epoch)
                .with_field("expected", expected)
                .with_field("got", seq))
        };
        match self.entries.get(producer) {
            None if seq == 1 => Ok(SeqCheck::Append),
            None => gap(1),
            Some(e) if epoch < e.epoch => Err(ErrorPayload::new("stale_producer_epoch")
                .with_field("producer", producer)
                .with_field("current", e.epoch)
                .with_field("got", epoch)),
            Some(e) if epoch > e.epoch => {
                if seq == 1 {
                    Ok(SeqCheck::Append)
                } else {
                    gap(1)
                }
            }
            Some(e) if seq <= e.last_seq => Ok(SeqCheck::Duplicate {
                offset: e.last_offset,
            }),
            Some(e) if seq == e.last_seq + 1 => Ok(SeqCheck::Append),
            Some(e) => gap(e.last_seq + 1),
        }
    }

    /// Records an appended sequence, keeping the newest `(epoch, seq)`.
    pub fn observe(&mut self, producer: &str, epoch: i64, seq: u64, offset: u64) {
        let entry = ProducerEntry {
            epoch,
            last_seq: seq,
            last_offset: offset,
        };
        match self.entries.get_mut(producer) {
            None => {
                self.entries.insert(producer.to_owned(), entry);
            }
            Some(e) if epoch > e.epoch || (epoch == e.epoch && seq > e.last_seq) => *e = entry,
            Some(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_start_at_one_and_advance_by_one() {
        let mut t = ProducerTable::new();
        assert_eq!(
            t.check("p", 0, 2).unwrap_err().code,
            "invalid_producer_sequence"
        );
        assert_eq!(t.check("p", 0, 1).unwrap(), SeqCheck::Append);
        t.observe("p", 0, 1, 10);
        assert_eq!(
            t.check("p", 0, 1).unwrap(),
            SeqCheck::Duplicate { offset: 10 }
        );
        assert_eq!(t.check("p", 0, 2).unwrap(), SeqCheck::Append);
        assert_eq!(
            t.check("p", 0, 3).unwrap_err().code,
            "invalid_producer_sequence"
        );
    }

    #[test]
    fn epochs_fence() {
        let mut t = ProducerTable::new();
        t.observe("p", 1, 5, 3);
        let e = t.check("p", 0, 6).unwrap_err();
        assert_eq!(e.code, "stale_producer_epoch");
        assert_eq!(e.fields["current"], "1");
        assert_eq!(t.check("p", 2, 1).unwrap(), SeqCheck::Append);
        assert_eq!(
            t.check("p", 2, 2).unwrap_err().code,
            "invalid_producer_sequence"
        );
        t.observe("p", 2, 1, 4);
        t.observe("p", 1, 9, 5); // older epoch never moves the state back
        assert_eq!(t.get("p").unwrap().epoch, 2);
    }
}
