//! The blocking event store client.

use super::ProcessLocal;
use crate::config::ClientConfig;
use crate::dispatch::Dispatcher;
use crate::error::Result;
use crate::eventstore::{
    Aggregate, Appended, Cursor, Event, EventStore as AsyncEventStore, Page, RangeEvent,
    ReplayProof, Snapshot, StoredEvent,
};
use crate::runtime::block_on;
use std::future::Future;
use std::sync::Arc;

/// Blocking event store client (see [`crate::eventstore::EventStore`]),
/// with background variants of its calls ([`EventStore::run_async`]).
#[derive(Debug)]
pub struct EventStore {
    inner: ProcessLocal<Arc<AsyncEventStore>>,
    /// Where the outcomes of background calls run: a thread of this
    /// store's own, never an I/O thread (see [`crate::dispatch`]).
    dispatcher: ProcessLocal<Dispatcher>,
}

impl EventStore {
    /// Connects.
    pub fn connect(config: ClientConfig) -> Result<EventStore> {
        let inner = block_on(AsyncEventStore::connect(config))??;
        Ok(EventStore {
            inner: ProcessLocal::new(Arc::new(inner)),
            dispatcher: ProcessLocal::new(Dispatcher::new("cursus-event-store-cb")),
        })
    }

    /// The async event store this wraps (for bindings with an async API).
    pub fn as_async(&self) -> Result<&AsyncEventStore> {
        self.inner.get().map(|s| &**s)
    }

    /// Runs `work` (an async call of the store `work` is given) in the
    /// background on the engine runtime, without a thread per call;
    /// `callback` is then called exactly once with its outcome, on this
    /// store's callback thread (as a consumer's `commit_async`). If
    /// starting fails (a closed store, a forked process), the error is
    /// returned and the callback is never called.
    pub fn run_async<T, W, F, C>(&self, work: W, callback: C) -> Result<()>
    where
        W: FnOnce(Arc<AsyncEventStore>) -> F,
        F: Future<Output = Result<T>> + Send + 'static,
        T: Send + 'static,
        C: FnOnce(Result<T>) + Send + 'static,
    {
        let store = Arc::clone(self.inner.get()?);
        store.check_open()?;
        self.dispatcher.get()?.run_after(work(store), callback)
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

    /// Appends at the aggregate's version and returns the stored event (see
    /// [`Aggregate::append`]).
    pub fn append_to(&self, aggregate: &mut Aggregate, event: &Event) -> Result<StoredEvent> {
        self.inner.run(|s| aggregate.append(s, event))
    }

    /// The automatic snapshot after an append (see
    /// [`Aggregate::auto_snapshot`]): never fails the append.
    pub fn auto_snapshot(&self, aggregate: &mut Aggregate, state: &str) -> Result<bool> {
        self.inner
            .run(|s| async { Ok(aggregate.auto_snapshot(s, state).await) })
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
