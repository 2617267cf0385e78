//! The blocking event store client.

use super::ProcessLocal;
use crate::config::ClientConfig;
use crate::error::Result;
use crate::eventstore::{
    Aggregate, Appended, Cursor, Event, EventStore as AsyncEventStore, Page, RangeEvent,
    ReplayProof, Snapshot, StoredEvent,
};
use crate::runtime::block_on;

/// Blocking event store client (see [`crate::eventstore::EventStore`]).
#[derive(Debug)]
pub struct EventStore {
    inner: ProcessLocal<AsyncEventStore>,
}

impl EventStore {
    /// Connects.
    pub fn connect(config: ClientConfig) -> Result<EventStore> {
        let inner = block_on(AsyncEventStore::connect(config))??;
        Ok(EventStore {
            inner: ProcessLocal::new(inner),
        })
    }

    /// The async event store this wraps (for bindings with an async API).
    pub fn as_async(&self) -> Result<&AsyncEventStore> {
        self.inner.get()
    }

    /// Appends `event` if the aggregate is at `expected_version`.
    pub fn append(
        &self,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: &Event,
    ) -> Result<Appended> {
        self.inner
            .run(|s| s.append(topic, key, expected_version, event))
    }

    /// The aggregate's current version (0 when it has no event).
    pub fn stream_version(&self, topic: &str, key: &str) -> Result<u64> {
        self.inner.run(|s| s.stream_version(topic, key))
    }

    /// Saves a snapshot at `version`.
    pub fn save_snapshot(&self, topic: &str, key: &str, version: u64, state: &str) -> Result<()> {
        self.inner
            .run(|s| s.save_snapshot(topic, key, version, state))
    }

    /// The latest snapshot, if any.
    pub fn read_snapshot(&self, topic: &str, key: &str) -> Result<Option<Snapshot>> {
        self.inner.run(|s| s.read_snapshot(topic, key))
    }

    /// Proves an aggregate's retained events (see
    /// [`AsyncEventStore::replay_proof`]).
    pub fn replay_proof(
        &self,
        topic: &str,
        match_id: &str,
        expected_last_sequence: Option<u64>,
    ) -> Result<ReplayProof> {
        self.inner
            .run(|s| s.replay_proof(topic, match_id, expected_last_sequence))
    }

    /// Reads a range of an aggregate's events under a proof (see
    /// [`AsyncEventStore::event_range`]).
    pub fn event_range(
        &self,
        topic: &str,
        match_id: &str,
        from_sequence: u64,
        to_sequence: u64,
        max_records: Option<u32>,
    ) -> Result<(ReplayProof, Vec<RangeEvent>)> {
        self.inner
            .run(|s| s.event_range(topic, match_id, from_sequence, to_sequence, max_records))
    }

    /// The next page of `cursor` (`None` once it is done).
    pub fn next_page(&self, cursor: &mut Cursor) -> Result<Option<Page>> {
        self.inner.run(|s| s.next_page(cursor))
    }

    /// Every page of a stream read: the snapshot and the events after it.
    pub fn read_stream(
        &self,
        topic: &str,
        key: &str,
        from_version: u64,
    ) -> Result<(Option<Snapshot>, Vec<StoredEvent>)> {
        self.inner.run(|s| s.read_stream(topic, key, from_version))
    }

    /// Loads an aggregate (see [`Aggregate::load`]).
    pub fn load_aggregate(
        &self,
        topic: &str,
        key: &str,
        snapshot_every: u64,
    ) -> Result<(Aggregate, Option<Snapshot>, Vec<StoredEvent>)> {
        self.inner
            .run(|s| Aggregate::load(s, topic, key, snapshot_every))
    }

    /// Appends at the aggregate's version (see [`Aggregate::append`]).
    pub fn append_to(&self, aggregate: &mut Aggregate, event: &Event) -> Result<Appended> {
        self.inner.run(|s| aggregate.append(s, event))
    }

    /// Saves the aggregate's snapshot (see [`Aggregate::save_snapshot`]).
    pub fn save_aggregate_snapshot(&self, aggregate: &mut Aggregate, state: &str) -> Result<()> {
        self.inner.run(|s| aggregate.save_snapshot(s, state))
    }

    /// Closes; later calls fail with `closed`.
    pub fn close(&self) -> Result<()> {
        self.inner.run(|s| async {
            s.close().await;
            Ok(())
        })
    }
}
