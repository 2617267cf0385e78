//! The event store (`docs/event-sourcing.md`): appends with optimistic
//! concurrency, snapshots, paged reads through cursors, and the aggregate
//! cycle.
//!
//! Payloads, metadata and snapshot states are UTF-8 text (the commands
//! carry them as the trailing `message=`); aggregate keys are text without
//! whitespace. A read is a cursor: `event_store_next_page` returns its
//! pages until it is done.

use super::Config;
use crate::registry::Handle;
use cursus::eventstore::{
    Aggregate as EngineAggregate, Cursor, Event, Page, PageLimits, StoredEvent,
};
use cursus::{Error, Result};
use cursus_bridge_macros::{bridge_fn, bridge_results};
use std::sync::{Arc, Mutex, MutexGuard};

pub use cursus::blocking::EventStore;

impl Handle for EventStore {
    const KIND: &'static str = "event store";
}

bridge_results! {
    /// Where an appended event was stored.
    #[result(engine = "cursus::eventstore::Appended", kind = "appended event")]
    pub struct Appended {
        /// The version the appended event got (`expected_version + 1`).
        pub version: u64,
        /// The offset the appended event got.
        pub offset: u64,
        /// The partition of the appended event (its aggregate's).
        pub partition: u32,
    }

    /// An aggregate's snapshot: its serialised state as of `version`.
    #[result(engine = "cursus::eventstore::Snapshot")]
    pub struct Snapshot {
        /// The aggregate version the snapshot's state includes.
        pub version: u64,
        /// The snapshot's serialised state.
        #[field(c = "state", java = "state", go = "State", cpp = "state", py = "state")]
        pub payload: String,
    }
}

/// One page of a read (an event page handle).
#[derive(Debug, Clone)]
pub struct EventPage(pub Page);

impl Handle for EventPage {
    const KIND: &'static str = "event page";
}

/// A paged read's position (a cursor handle).
#[derive(Debug)]
pub struct EventCursor(Mutex<Cursor>);

impl Handle for EventCursor {
    const KIND: &'static str = "event cursor";
}

/// An aggregate's position in its stream, with what loading it read.
/// Clones (`aggregate_share`) share the position.
#[derive(Debug, Clone)]
pub struct Aggregate {
    pub(crate) aggregate: Arc<Mutex<EngineAggregate>>,
    loaded: Page,
}

impl Handle for Aggregate {
    const KIND: &'static str = "aggregate";
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An event from the flat arguments C, cgo and JNI pass (`schema_version`
/// 0: the broker's 1; no `event_id`: a generated one). The engine checks
/// the id when it appends.
pub(crate) fn event(
    event_type: &str,
    payload: &str,
    metadata: Option<&str>,
    schema_version: u32,
    event_id: Option<&str>,
) -> Event {
    Event {
        event_type: event_type.to_owned(),
        payload: payload.to_owned(),
        metadata: metadata.unwrap_or_default().to_owned(),
        schema_version: (schema_version != 0).then_some(schema_version),
        event_id: event_id.map(str::to_owned),
    }
}

fn limits(max_records: u32, max_bytes: u32) -> PageLimits {
    PageLimits {
        max_records: (max_records != 0).then_some(max_records),
        max_bytes: (max_bytes != 0).then_some(max_bytes),
    }
}

/// Connects an event store client with `config` (the client options:
/// `bootstrap_servers`, TLS, timeouts, ...).
///
/// Thread-safety: safe from any thread; a store may be used from several
/// threads at once.
#[bridge_fn(out = "store")]
pub fn event_store_new(config: &Config) -> Result<EventStore> {
    let config = config.builder().admin()?;
    EventStore::connect(config)
}

/// Appends an event to aggregate `key` of an event-sourcing topic if the
/// aggregate's version is `expected_version` (0 for a new one): the event
/// gets `expected_version + 1`. Otherwise fails with `version_conflict`
/// (class conflict; fields `current` and `expected`). `metadata` may be
/// absent; `schema_version` 0 lets the broker use 1.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "appended")]
// A flat signature is what C, cgo and JNI call best; an event struct would
// need a builder handle per append.
#[allow(clippy::too_many_arguments)]
pub fn event_store_append(
    store: &EventStore,
    topic: &str,
    key: &str,
    expected_version: u64,
    event_type: &str,
    payload: &str,
    metadata: Option<&str>,
    schema_version: u32,
) -> Result<Appended> {
    store.append(
        topic,
        key,
        expected_version,
        &event(event_type, payload, metadata, schema_version, None),
    )
}

/// The aggregate's current version (0 when it has no event).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "version")]
pub fn event_store_stream_version(store: &EventStore, topic: &str, key: &str) -> Result<u64> {
    store.stream_version(topic, key)
}

/// Saves `state` as the aggregate's snapshot at `version` (at most its
/// current version, else `snapshot_version_exceeds_stream`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_store_save_snapshot(
    store: &EventStore,
    topic: &str,
    key: &str,
    version: u64,
    state: &str,
) -> Result<()> {
    store.save_snapshot(topic, key, version, state)
}

/// The aggregate's latest snapshot, or none.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "snapshot")]
pub fn event_store_read_snapshot(
    store: &EventStore,
    topic: &str,
    key: &str,
) -> Result<Option<Snapshot>> {
    store.read_snapshot(topic, key)
}

/// Closes the store; later calls fail with `closed`. The handle must still
/// be destroyed.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_store_close(store: &EventStore) -> Result<()> {
    store.close()
}

/// A cursor over aggregate `key`'s stream from `from_version` (1: the
/// start): its first page carries the latest snapshot at or after
/// `from_version`, and the events after it. `max_events` and `max_bytes`
/// bound a page (0: the broker's defaults, 256 events and 8 MiB).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "cursor")]
pub fn event_cursor_stream(
    topic: &str,
    key: &str,
    from_version: u64,
    max_events: u32,
    max_bytes: u32,
) -> Result<EventCursor> {
    Ok(EventCursor(Mutex::new(
        Cursor::stream(topic, key, from_version).with_limits(limits(max_events, max_bytes)),
    )))
}

/// A cursor over aggregate `key`'s original events (no snapshot) from
/// `from_version` to `to_version` (0: its current version); each page
/// reports its completeness. `max_records`/`max_bytes` 0: the defaults
/// (100 and 1 MiB).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "cursor")]
pub fn event_cursor_history(
    topic: &str,
    key: &str,
    from_version: u64,
    to_version: u64,
    max_records: u32,
    max_bytes: u32,
) -> Result<EventCursor> {
    let to = (to_version != 0).then_some(to_version);
    Ok(EventCursor(Mutex::new(
        Cursor::history(topic, key, from_version, to).with_limits(limits(max_records, max_bytes)),
    )))
}

/// A cursor over the committed records of any topic's partition from
/// `from_offset` up to `to_offset` (exclusive; -1: the readable end).
/// `max_records`/`max_bytes` 0: the defaults (100 and 1 MiB).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "cursor")]
pub fn event_cursor_browse(
    topic: &str,
    partition: u32,
    from_offset: u64,
    to_offset: i64,
    max_records: u32,
    max_bytes: u32,
) -> Result<EventCursor> {
    let to = match to_offset {
        -1 => None,
        n => Some(u64::try_from(n).map_err(|_| {
            Error::invalid_argument(format!("to_offset must be -1 or an offset, got {n}"))
        })?),
    };
    Ok(EventCursor(Mutex::new(
        Cursor::browse(topic, partition, from_offset, to)
            .with_limits(limits(max_records, max_bytes)),
    )))
}

/// True once every page of the cursor was read.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_cursor_done(cursor: &EventCursor) -> bool {
    lock(&cursor.0).is_done()
}

/// Reads the cursor's next page and moves it on; none once it is done.
/// A failed read leaves the cursor where it was (the call may be repeated).
///
/// Thread-safety: safe from any thread; calls on one cursor run one at a
/// time.
#[bridge_fn(out = "page")]
pub fn event_store_next_page(
    store: &EventStore,
    cursor: &EventCursor,
) -> Result<Option<EventPage>> {
    let mut guard = lock(&cursor.0);
    let mut next = guard.clone();
    let page = store.next_page(&mut next)?;
    *guard = next;
    Ok(page.map(EventPage))
}

/// The partition the page was read from.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_page_partition(page: &EventPage) -> u32 {
    page.0.partition
}

/// True when more pages follow.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_page_has_more(page: &EventPage) -> bool {
    page.0.has_more
}

/// The number of events (or browsed records) in the page.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_page_count(page: &EventPage) -> usize {
    page.0.events.len()
}

/// History pages: `complete`, `partial` or `unknown`; other pages: empty.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_page_completeness(page: &EventPage) -> &str {
    page.0.completeness.map_or("", |c| c.as_str())
}

/// History pages: the aggregate's current version; other pages: 0.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_page_head_version(page: &EventPage) -> u64 {
    page.0.head_version.unwrap_or(0)
}

/// Browse pages: the end of what is readable in the partition; other
/// pages: -1.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn event_page_readable_end_offset(page: &EventPage) -> i64 {
    page.0.readable_end_offset.map_or(-1, |o| o as i64)
}

/// The snapshot the page starts from (first page of a stream read), or
/// none.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "snapshot")]
pub fn event_page_snapshot(page: &EventPage) -> Result<Option<Snapshot>> {
    Ok(page.0.snapshot.clone())
}

fn at(page: &EventPage, index: usize) -> Option<&StoredEvent> {
    page.0.events.get(index)
}

/// The version of event `index` (0 for a browsed record that is no
/// event, or an index out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_page_version(page: &EventPage, index: usize) -> u64 {
    at(page, index).map_or(0, |e| e.version)
}

/// The offset of event `index` (-1 for an index out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn event_page_offset(page: &EventPage, index: usize) -> i64 {
    at(page, index).map_or(-1, |e| e.offset as i64)
}

/// The timestamp of event `index` in milliseconds since the epoch.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_page_timestamp(page: &EventPage, index: usize) -> i64 {
    at(page, index).map_or(0, |e| e.timestamp)
}

/// The aggregate key of event `index` (empty for none).
///
/// Thread-safety: safe from any thread while the page is alive.
#[bridge_fn]
pub fn event_page_key(page: &EventPage, index: usize) -> &[u8] {
    at(page, index).map_or(&[], |e| &e.key)
}

/// The event type of event `index`.
///
/// Thread-safety: safe from any thread while the page is alive.
#[bridge_fn]
pub fn event_page_event_type(page: &EventPage, index: usize) -> &str {
    at(page, index).map_or("", |e| &e.event_type)
}

/// The schema version of event `index`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_page_schema_version(page: &EventPage, index: usize) -> u32 {
    at(page, index).map_or(0, |e| e.schema_version)
}

/// The metadata of event `index`.
///
/// Thread-safety: safe from any thread while the page is alive.
#[bridge_fn]
pub fn event_page_metadata(page: &EventPage, index: usize) -> &str {
    at(page, index).map_or("", |e| &e.metadata)
}

/// The payload of event `index`.
///
/// Thread-safety: safe from any thread while the page is alive.
#[bridge_fn]
pub fn event_page_payload(page: &EventPage, index: usize) -> &[u8] {
    at(page, index).map_or(&[], |e| &e.payload)
}

/// Loads aggregate `key`: reads its latest snapshot and every event after
/// it. `aggregate_loaded` gives them to fold into the application's
/// state; `snapshot_every` (0: never) sets when `aggregate_snapshot_due`
/// says a snapshot should be saved (500 is the recommended value).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "aggregate")]
pub fn event_store_load_aggregate(
    store: &EventStore,
    topic: &str,
    key: &str,
    snapshot_every: u64,
) -> Result<Aggregate> {
    let (aggregate, snapshot, events) = store.load_aggregate(topic, key, snapshot_every)?;
    Ok(Aggregate::loaded(aggregate, snapshot, events))
}

impl Aggregate {
    /// A loaded aggregate and what loading read.
    pub(crate) fn loaded(
        aggregate: EngineAggregate,
        snapshot: Option<Snapshot>,
        events: Vec<StoredEvent>,
    ) -> Aggregate {
        Aggregate {
            aggregate: Arc::new(Mutex::new(aggregate)),
            loaded: EventPage::whole(snapshot, events).0,
        }
    }
}

impl EventPage {
    /// A page holding a whole read: `snapshot` and `events`, nothing after.
    pub(crate) fn whole(snapshot: Option<Snapshot>, events: Vec<StoredEvent>) -> EventPage {
        EventPage(Page {
            partition: events.first().map_or(0, |e| e.partition),
            snapshot,
            events,
            has_more: false,
            completeness: None,
            head_version: None,
            readable_end_offset: None,
            earliest_offset: None,
        })
    }
}

/// A second handle to the same aggregate: appends through either move
/// both. What keeps an aggregate a callback was lent
/// (`event_store_load_aggregate_async`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "aggregate")]
pub fn aggregate_share(aggregate: &Aggregate) -> Result<Aggregate> {
    Ok(aggregate.clone())
}

/// What loading read: a page with the snapshot (if any) and the events
/// after it, in order.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "page")]
pub fn aggregate_loaded(aggregate: &Aggregate) -> Result<EventPage> {
    Ok(EventPage(aggregate.loaded.clone()))
}

/// The version loaded or last appended.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn aggregate_version(aggregate: &Aggregate) -> u64 {
    lock(&aggregate.aggregate).version()
}

/// Appends an event at the aggregate's next version, with `event_id` as its
/// id (absent: a generated one; an empty id or one holding whitespace is
/// `invalid_argument`). Returns the event as stored: a page holding that
/// one event, with its version, offset and partition (its timestamp is 0:
/// the broker's reply does not carry it). Fold it into the application's
/// state only now, so a failed append leaves the state unchanged; then call
/// `event_store_aggregate_auto_snapshot`. On `version_conflict` another
/// writer got there first: load the aggregate again and decide again.
///
/// Thread-safety: safe from any thread; appends to one aggregate handle
/// run one at a time.
#[bridge_fn(out = "stored")]
// Flat, as event_store_append (see there).
#[allow(clippy::too_many_arguments)]
pub fn event_store_aggregate_append(
    store: &EventStore,
    aggregate: &Aggregate,
    event_type: &str,
    payload: &str,
    metadata: Option<&str>,
    schema_version: u32,
    event_id: Option<&str>,
) -> Result<EventPage> {
    let mut guard = lock(&aggregate.aggregate);
    let stored = store.append_to(
        &mut guard,
        &event(event_type, payload, metadata, schema_version, event_id),
    )?;
    Ok(EventPage::whole(None, vec![stored]))
}

/// The automatic snapshot after an append: when a snapshot is due, saves
/// `state` (the application's state with the appended event folded in) and
/// says whether it did. A failed save is not this call's error (the append
/// before it is durable, and an error would invite retrying it): it is
/// reported through the engine log at warn and the snapshot stays due, so
/// the next append tries again.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "saved")]
pub fn event_store_aggregate_auto_snapshot(
    store: &EventStore,
    aggregate: &Aggregate,
    state: &str,
) -> Result<bool> {
    let mut guard = lock(&aggregate.aggregate);
    store.auto_snapshot(&mut guard, state)
}

/// Reports an automatic snapshot the application could not serialise
/// (`reason`) as the engine reports a failed save: through the engine log
/// at warn; the snapshot stays due.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn aggregate_snapshot_failed(aggregate: &Aggregate, reason: &str) -> Result<()> {
    lock(&aggregate.aggregate).snapshot_failed(&Error::invalid_argument(format!(
        "the state could not be serialised: {reason}"
    )));
    Ok(())
}

/// True when `snapshot_every` events were appended since the last
/// snapshot: serialise the state and call
/// `event_store_aggregate_save_snapshot`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn aggregate_snapshot_due(aggregate: &Aggregate) -> bool {
    lock(&aggregate.aggregate).snapshot_due()
}

/// Saves `state` as the aggregate's snapshot at its current version.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_store_aggregate_save_snapshot(
    store: &EventStore,
    aggregate: &Aggregate,
    state: &str,
) -> Result<()> {
    let mut guard = lock(&aggregate.aggregate);
    store.save_aggregate_snapshot(&mut guard, state)
}
