//! The aggregate cycle on top of the event store: load the latest
//! snapshot and the events after it, append new events at the loaded
//! version, and save a snapshot every `snapshot_every` events.
//!
//! The engine owns the bookkeeping (which version to append at, when a
//! snapshot is due); folding events into state and serialising it are the
//! application's, so each language passes its own functions.

use super::{Appended, Event, EventStore, Snapshot, StoredEvent};
use crate::error::Result;

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

    /// Appends `event` at the next version. On `version_conflict` another
    /// writer got there first: reload and decide again (the error's
    /// `current` field says how far the stream is).
    pub async fn append(&mut self, store: &EventStore, event: &Event) -> Result<Appended> {
        let appended = store
            .append(&self.topic, &self.key, self.version, event)
            .await?;
        self.version = appended.version;
        Ok(appended)
    }

    /// True when `snapshot_every` events were appended since the last
    /// snapshot: the caller should serialise its state and call
    /// [`save_snapshot`](Self::save_snapshot).
    pub fn snapshot_due(&self) -> bool {
        self.snapshot_every > 0 && self.version - self.snapshot_version >= self.snapshot_every
    }

    /// Saves `state` as the snapshot at the current version.
    pub async fn save_snapshot(&mut self, store: &EventStore, state: &str) -> Result<()> {
        store
            .save_snapshot(&self.topic, &self.key, self.version, state)
            .await?;
        self.snapshot_version = self.version;
        Ok(())
    }
}
