//! Background variants of the event store's calls: each starts the engine's
//! async call on its runtime (no thread per call in flight) and returns;
//! `callback` is then called exactly once, on the store's (or, for
//! `producer_append_stream_async`, the producer's) callback thread, never
//! on an I/O thread, with the result lent as a handle for the call (or
//! with the error). If starting fails (a closed client, a bad argument),
//! the error is returned and the callback is never called. Arguments are
//! copied before the call returns.

use super::eventstore::{event, lock};
use super::replay::{built, expected_last_sequence_arg};
use super::{
    Aggregate, Appended, Callback, EventBuilder, EventPage, EventRange, EventStore, Producer,
    Snapshot,
};
use crate::registry::Handle;
use cursus::eventstore::ReplayProof;
use cursus::Result;
use cursus_bridge_macros::bridge_fn;

/// An aggregate's current version (a stream version handle), as
/// `event_store_stream_version_async` lends it.
#[derive(Debug)]
pub struct StreamVersion(u64);

impl Handle for StreamVersion {
    const KIND: &'static str = "stream version";
}

/// The outcome of a snapshot lookup (a snapshot read handle), as
/// `event_store_read_snapshot_async` lends it: a snapshot or none.
#[derive(Debug)]
pub struct SnapshotRead(Option<Snapshot>);

impl Handle for SnapshotRead {
    const KIND: &'static str = "snapshot read";
}

/// The version (0 when the aggregate has no event).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn stream_version_value(version: &StreamVersion) -> u64 {
    version.0
}

/// The snapshot found, or none.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "snapshot")]
pub fn snapshot_read_snapshot(read: &SnapshotRead) -> Result<Option<Snapshot>> {
    Ok(read.0.clone())
}

/// `event_store_append_event` in the background (see the module): the
/// callback gets the appended event, or the error (`version_conflict`, ...).
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_append_event_async(
    store: &EventStore,
    topic: &str,
    key: &str,
    expected_version: u64,
    event: &EventBuilder,
    callback: Callback<Appended>,
) -> Result<()> {
    let event = built(event);
    let (topic, key) = (topic.to_owned(), key.to_owned());
    store.run_async(
        move |s| async move { s.append(&topic, &key, expected_version, &event).await },
        callback,
    )
}

/// `event_store_stream_version` in the background (see the module).
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_stream_version_async(
    store: &EventStore,
    topic: &str,
    key: &str,
    callback: Callback<StreamVersion>,
) -> Result<()> {
    let (topic, key) = (topic.to_owned(), key.to_owned());
    store.run_async(
        move |s| async move { s.stream_version(&topic, &key).await.map(StreamVersion) },
        callback,
    )
}

/// `event_store_save_snapshot` in the background (see the module).
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_save_snapshot_async(
    store: &EventStore,
    topic: &str,
    key: &str,
    version: u64,
    state: &str,
    callback: Callback<()>,
) -> Result<()> {
    let (topic, key, state) = (topic.to_owned(), key.to_owned(), state.to_owned());
    store.run_async(
        move |s| async move { s.save_snapshot(&topic, &key, version, &state).await },
        callback,
    )
}

/// `event_store_read_snapshot` in the background (see the module): the
/// callback gets the snapshot or none.
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_read_snapshot_async(
    store: &EventStore,
    topic: &str,
    key: &str,
    callback: Callback<SnapshotRead>,
) -> Result<()> {
    let (topic, key) = (topic.to_owned(), key.to_owned());
    store.run_async(
        move |s| async move { s.read_snapshot(&topic, &key).await.map(SnapshotRead) },
        callback,
    )
}

/// Reads aggregate `key`'s whole stream from `from_version` (1: the
/// start) in the background, page after page (see the module): the
/// callback gets one page with the latest snapshot at or after
/// `from_version`, if any, and every event after it.
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_read_stream_async(
    store: &EventStore,
    topic: &str,
    key: &str,
    from_version: u64,
    callback: Callback<EventPage>,
) -> Result<()> {
    let (topic, key) = (topic.to_owned(), key.to_owned());
    store.run_async(
        move |s| async move {
            let (snapshot, events) = s.read_stream(&topic, &key, from_version).await?;
            Ok(EventPage::whole(snapshot, events))
        },
        callback,
    )
}

/// `event_store_replay_proof` in the background (see the module): the
/// callback gets the complete proof, or the error `aggregate_proof_<status>`
/// (`replay_proof_from_error` reads its proof). `expected_last_sequence`
/// as there (-1: none); a bad one fails the call.
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_replay_proof_async(
    store: &EventStore,
    topic: &str,
    match_id: &str,
    expected_last_sequence: i64,
    callback: Callback<ReplayProof>,
) -> Result<()> {
    let expected = expected_last_sequence_arg(expected_last_sequence)?;
    let (topic, match_id) = (topic.to_owned(), match_id.to_owned());
    store.run_async(
        move |s| async move { s.replay_proof(&topic, &match_id, expected).await },
        callback,
    )
}

/// `event_store_event_range` in the background (see the module).
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_event_range_async(
    store: &EventStore,
    topic: &str,
    match_id: &str,
    from_sequence: u64,
    to_sequence: u64,
    max_records: u32,
    callback: Callback<EventRange>,
) -> Result<()> {
    let max = (max_records != 0).then_some(max_records);
    let (topic, match_id) = (topic.to_owned(), match_id.to_owned());
    store.run_async(
        move |s| async move {
            let (proof, events) = s
                .event_range(&topic, &match_id, from_sequence, to_sequence, max)
                .await?;
            Ok(EventRange { proof, events })
        },
        callback,
    )
}

/// `event_store_load_aggregate` in the background (see the module): the
/// callback gets the aggregate lent for the call; `aggregate_share` keeps
/// it.
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_load_aggregate_async(
    store: &EventStore,
    topic: &str,
    key: &str,
    snapshot_every: u64,
    callback: Callback<Aggregate>,
) -> Result<()> {
    let (topic, key) = (topic.to_owned(), key.to_owned());
    store.run_async(
        move |s| async move {
            let (aggregate, snapshot, events) =
                cursus::eventstore::Aggregate::load(&s, &topic, &key, snapshot_every).await?;
            Ok(Aggregate::loaded(aggregate, snapshot, events))
        },
        callback,
    )
}

/// `event_store_aggregate_append` in the background (see the module): the
/// callback gets the stored event (a page holding it); the aggregate's
/// version moves only when the append succeeded. Start the next call on
/// this aggregate only once the callback ran: calls started before would
/// work from the version before this append.
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
// Flat, as event_store_append (see there).
#[allow(clippy::too_many_arguments)]
pub fn event_store_aggregate_append_async(
    store: &EventStore,
    aggregate: &Aggregate,
    event_type: &str,
    payload: &str,
    metadata: Option<&str>,
    schema_version: u32,
    event_id: Option<&str>,
    callback: Callback<EventPage>,
) -> Result<()> {
    let event = event(event_type, payload, metadata, schema_version, event_id);
    let shared = aggregate.aggregate.clone();
    store.run_async(
        move |s| async move {
            // The engine's aggregate moves on a copy, kept only on success.
            let mut next = lock(&shared).clone();
            let stored = next.append(&s, &event).await?;
            *lock(&shared) = next;
            Ok(EventPage::whole(None, vec![stored]))
        },
        callback,
    )
}

/// `event_store_aggregate_auto_snapshot` in the background (see the
/// module and `event_store_aggregate_append_async`): the callback is
/// called once the due snapshot, if any, was saved or its failure logged;
/// it gets no error for a failed save (that stays due, as there).
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_aggregate_auto_snapshot_async(
    store: &EventStore,
    aggregate: &Aggregate,
    state: &str,
    callback: Callback<()>,
) -> Result<()> {
    let (shared, state) = (aggregate.aggregate.clone(), state.to_owned());
    store.run_async(
        move |s| async move {
            let mut next = lock(&shared).clone();
            next.auto_snapshot(&s, &state).await;
            *lock(&shared) = next;
            Ok(())
        },
        callback,
    )
}

/// `event_store_aggregate_save_snapshot` in the background (see the
/// module and `event_store_aggregate_append_async`).
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn event_store_aggregate_save_snapshot_async(
    store: &EventStore,
    aggregate: &Aggregate,
    state: &str,
    callback: Callback<()>,
) -> Result<()> {
    let (shared, state) = (aggregate.aggregate.clone(), state.to_owned());
    store.run_async(
        move |s| async move {
            let mut next = lock(&shared).clone();
            next.save_snapshot(&s, &state).await?;
            *lock(&shared) = next;
            Ok(())
        },
        callback,
    )
}

/// `producer_append_stream` in the background (see the module; the
/// callback runs on the producer's callback thread, in order with its
/// delivery callbacks): the callback gets what the event becomes when the
/// transaction commits. Start the commit only once the callback ran.
///
/// Thread-safety: safe from any thread, also from a callback.
#[bridge_fn]
pub fn producer_append_stream_async(
    producer: &Producer,
    topic: &str,
    key: &str,
    expected_version: u64,
    event: &EventBuilder,
    callback: Callback<Appended>,
) -> Result<()> {
    producer.append_stream_async(topic, key, expected_version, built(event), callback)
}
