//! Idempotent-producer sequence state of one partition.
//!
//! The broker remembers, per producer id, the newest `(epoch, seqNum)` it
//! appended and the offset it got. A retried sequence is answered with that
//! offset instead of being appended again; an older epoch is fenced; a
//! sequence that skips ahead is a gap. The state is rebuilt from the records
//! of the log on startup (every stored record carries its producer fields)
//! and merged with the partition's durable checkpoint
//! ([`super::producer_checkpoint`]), which also answers for producers that
//! left memory after `producer_state_ttl_ms` ([`ProducerTable::expire`],
//! [`ProducerTable::fetch`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cursus_wire::ErrorPayload;

use super::producer_checkpoint;
use crate::storage::StorageError;

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
    /// When each producer in memory last published (or was loaded).
    touched: HashMap<String, Instant>,
    /// The partition directory holding the durable checkpoint, if any.
    checkpoint_dir: Option<PathBuf>,
}

impl ProducerTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entry of `producer` in memory, if any.
    pub fn get(&self, producer: &str) -> Option<ProducerEntry> {
        self.entries.get(producer).copied()
    }

    /// Every producer in memory.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &ProducerEntry)> {
        self.entries.iter().map(|(id, e)| (id.as_str(), e))
    }

    /// Uses the checkpoint in the partition directory `dir` for producers
    /// that are not in memory.
    pub fn set_checkpoint_dir(&mut self, dir: &Path) {
        self.checkpoint_dir = Some(dir.to_path_buf());
    }

    /// The partition directory of the checkpoint, if one is used.
    pub fn checkpoint_dir(&self) -> Option<&Path> {
        self.checkpoint_dir.as_deref()
    }

    /// The entry of `producer`: from memory, else from the durable
    /// checkpoint (then kept in memory again).
    pub fn fetch(&mut self, producer: &str) -> Result<Option<ProducerEntry>, StorageError> {
        if let Some(e) = self.entries.get(producer) {
            return Ok(Some(*e));
        }
        let Some(dir) = &self.checkpoint_dir else {
            return Ok(None);
        };
        let found = producer_checkpoint::lookup(dir, producer)?;
        if let Some(e) = found {
            self.entries.insert(producer.to_owned(), e);
            self.touched.insert(producer.to_owned(), Instant::now());
        }
        Ok(found)
    }

    /// [`check`](Self::check) after [`fetch`](Self::fetch)ing the producer.
    pub fn check_durable(
        &mut self,
        producer: &str,
        epoch: i64,
        seq: u64,
    ) -> Result<SeqCheck, ErrorPayload> {
        self.fetch(producer)
            .map_err(|e| ErrorPayload::new("broker_error").with_field("reason", e.to_string()))?;
        self.check(producer, epoch, seq)
    }

    /// Drops producers that did not publish for `ttl` (as of `now`) from
    /// memory, after writing them to the checkpoint; returns how many went.
    /// Without a checkpoint directory nothing is dropped.
    pub fn expire(&mut self, now: Instant, ttl: Duration) -> Result<usize, StorageError> {
        let idle = self.idle(now, ttl);
        if idle.is_empty() {
            return Ok(0);
        }
        if let Some(dir) = &self.checkpoint_dir {
            producer_checkpoint::write(dir, self)?;
        }
        self.forget(&idle);
        Ok(idle.len())
    }

    /// Producers in memory that did not publish for `ttl` (as of `now`);
    /// none without a checkpoint directory (they would be lost).
    pub fn idle(&self, now: Instant, ttl: Duration) -> Vec<String> {
        if self.checkpoint_dir.is_none() {
            return Vec::new();
        }
        self.entries
            .keys()
            .filter(|id| {
                self.touched
                    .get(*id)
                    .map_or(true, |t| now.saturating_duration_since(*t) >= ttl)
            })
            .cloned()
            .collect()
    }

    /// Drops `ids` from memory; the caller wrote the checkpoint first.
    pub fn forget(&mut self, ids: &[String]) {
        for id in ids {
            self.entries.remove(id);
            self.touched.remove(id);
        }
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
        self.touched.insert(producer.to_owned(), Instant::now());
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
