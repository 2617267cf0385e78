//! The aggregate cycle on top of the event store: load the latest
//! snapshot and the events after it, append new events at the loaded
//! version, and save a snapshot every `snapshot_every` events.
//!
//! The engine owns the bookkeeping (which version to append at, when a
//! snapshot is due) and the rules every language's aggregate helper follows;
//! folding events into state and serialising it are the application's, so
//! each language passes its own functions. The cycle, the same everywhere:
//!
//! 1. [`Aggregate::append`] appends the event (its id included, when the
//!    caller gave one) and returns it as stored, with its real offset;
//! 2. only then does the helper fold that stored event into its state, so a
//!    failed append leaves the state unchanged;
//! 3. when [`Aggregate::snapshot_due`], the helper serialises the state and
//!    calls [`Aggregate::auto_snapshot`]. The append is durable by then, so
//!    a failed automatic snapshot never fails the append (a caller would
//!    retry a committed append and append twice): it is reported through the
//!    engine log at warn and the snapshot stays due, so the next append tries
//!    again. A serialiser that fails is reported the same way
//!    ([`Aggregate::snapshot_failed`]).

use super::{Event, EventStore, Snapshot, StoredEvent};
use crate::error::{Error, Result};
use bytes::Bytes;

/// Snapshots every 500 events unless configured otherwise (the SDK
/// checklist's recommendation).
pub const DEFAULT_SNAPSHOT_EVERY: u64 = 500;

/// One aggregate's position in its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    topic: String,
    key: String,
    version: u64,
    snapshot_version: u64,
    snapshot_every: u64,
}

impl Aggregate {
    /// An aggregate not loaded yet: at version 0, no snapshot. Appending
    /// to it appends the stream's first event; [`load`](Self::load) reads
    /// where the stream is.
    pub fn new(topic: &str, key: &str, snapshot_every: u64) -> Aggregate {
        Aggregate {
            topic: topic.to_owned(),
            key: key.to_owned(),
            version: 0,
            snapshot_version: 0,
            snapshot_every,
        }
    }

    /// Loads `key`: returns the aggregate with the snapshot (if any) and the
    /// events after it, which the caller folds into its state in order.
    /// `snapshot_every` 0 disables automatic snapshots.
    pub async fn load(
        store: &EventStore,
        topic: &str,
        key: &str,
        snapshot_every: u64,
    ) -> Result<(Aggregate, Option<Snapshot>, Vec<StoredEvent>)> {
        let (snapshot, events) = store.read_stream(topic, key, 1).await?;
        let snapshot_version = snapshot.as_ref().map_or(0, |s| s.version);
        let version = events.last().map_or(snapshot_version, |e| e.version);
        Ok((
            Aggregate {
                topic: topic.to_owned(),
                key: key.to_owned(),
                version,
                snapshot_version,
                snapshot_every,
            },
            snapshot,
            events,
        ))
    }

    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The aggregate key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The version loaded or last appended.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The version of the last snapshot loaded or saved (0: none).
    pub fn snapshot_version(&self) -> u64 {
        self.snapshot_version
    }

    /// Events between automatic snapshots (0: never).
    pub fn snapshot_every(&self) -> u64 {
        self.snapshot_every
    }

    /// Appends `event` (with its event id, when it has one; else a
    /// generated one) at the next version and returns it as stored: its
    /// version, offset and partition from the broker's reply, the rest from
    /// `event` (schema version 1 when it had none; timestamp 0, which the
    /// reply does not carry). On `version_conflict` another writer got there
    /// first: reload and decide again (the error's `current` field says how
    /// far the stream is). A failed append changes nothing.
    pub async fn append(&mut self, store: &EventStore, event: &Event) -> Result<StoredEvent> {
        let appended = store
            .append(&self.topic, &self.key, self.version, event)
            .await?;
        self.version = appended.version;
        Ok(StoredEvent {
            topic: self.topic.clone(),
            partition: appended.partition,
            offset: appended.offset,
            key: Bytes::copy_from_slice(self.key.as_bytes()),
            version: appended.version,
            event_type: event.event_type.clone(),
            schema_version: event.schema_version.unwrap_or(1),
            metadata: event.metadata.clone(),
            payload: Bytes::copy_from_slice(event.payload.as_bytes()),
            timestamp: 0,
        })
    }

    /// True when `snapshot_every` events were appended since the last
    /// snapshot: the caller should serialise its state and call
    /// [`save_snapshot`](Self::save_snapshot).
    pub fn snapshot_due(&self) -> bool {
        self.snapshot_every > 0 && self.version - self.snapshot_version >= self.snapshot_every
    }

    /// Saves `state` as the snapshot at the current version (an explicit
    /// save: its failure is the caller's error).
    pub async fn save_snapshot(&mut self, store: &EventStore, state: &str) -> Result<()> {
        store
            .save_snapshot(&self.topic, &self.key, self.version, state)
            .await?;
        self.snapshot_version = self.version;
        Ok(())
    }

    /// The automatic snapshot after an append: saves `state` when a snapshot
    /// is due and says whether one was saved. It never fails: a failed save
    /// is [reported](Self::snapshot_failed) and the snapshot stays due (the
    /// next append tries again), since the append before it is durable.
    pub async fn auto_snapshot(&mut self, store: &EventStore, state: &str) -> bool {
        if !self.snapshot_due() {
            return false;
        }
        match self.save_snapshot(store, state).await {
            Ok(()) => true,
            Err(e) => {
                self.snapshot_failed(&e);
                false
            }
        }
    }

    /// Reports an automatic snapshot that could not be made (the save
    /// failed, or the application's serialiser did) through the engine log
    /// at warn; the snapshot stays due.
    pub fn snapshot_failed(&self, error: &Error) {
        tracing::warn!(
            topic = %self.topic,
            key = %self.key,
            version = self.version,
            error = %error,
            "automatic snapshot failed; the append stands and the snapshot is tried again after the next append"
        );
    }
}
