//! Events built field by field, transactional stream appends, and aggregate
//! replay proofs and range reads (`docs/aggregate-replay.md`).

use super::{EventStore, Producer};
use crate::registry::Handle;
use cursus::eventstore::{Appended, Event, RangeEvent, ReplayProof};
use cursus::{Error, Result};
use cursus_bridge_macros::bridge_fn;
use std::sync::{Mutex, MutexGuard};

/// An event being built (an event builder handle).
#[derive(Debug)]
pub struct EventBuilder(Mutex<Event>);

impl Handle for EventBuilder {
    const KIND: &'static str = "event builder";
}
impl Handle for ReplayProof {
    const KIND: &'static str = "replay proof";
}

/// The proof and events of a range read (an event range handle).
#[derive(Debug)]
pub struct EventRange {
    pub(crate) proof: ReplayProof,
    pub(crate) events: Vec<RangeEvent>,
}

impl Handle for EventRange {
    const KIND: &'static str = "event range";
}

fn lock(b: &EventBuilder) -> MutexGuard<'_, Event> {
    b.0.lock().unwrap_or_else(|p| p.into_inner())
}

/// A copy of the event built so far (what an append sends).
pub(crate) fn built(b: &EventBuilder) -> Event {
    lock(b).clone()
}

/// The expected last sequence of a proof as the flat signatures pass it:
/// -1 for none, else at least 1 (the engine refuses 0).
pub(crate) fn expected_last_sequence_arg(n: i64) -> Result<Option<u64>> {
    match n {
        -1 => Ok(None),
        n => u64::try_from(n).map(Some).map_err(|_| {
            Error::invalid_argument(format!(
                "expected_last_sequence must be -1 (none) or at least 1, got {n}"
            ))
        }),
    }
}

/// Starts an event of `event_type` (may be empty) carrying `payload`
/// (UTF-8 text). Without an event id one is generated at append.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "event")]
pub fn event_builder_new(event_type: &str, payload: &str) -> Result<EventBuilder> {
    Ok(EventBuilder(Mutex::new(Event::new(event_type, payload))))
}

/// Sets the event's metadata text.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_builder_set_metadata(event: &EventBuilder, metadata: &str) -> Result<()> {
    lock(event).metadata = metadata.to_owned();
    Ok(())
}

/// Sets the event's schema version (the broker's default is 1).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_builder_set_schema_version(event: &EventBuilder, schema_version: u32) -> Result<()> {
    lock(event).schema_version = Some(schema_version);
    Ok(())
}

/// Sets the event's id (unique per aggregate replay topic; text without
/// whitespace). An append retried with the same id on a replay topic is
/// answered with the original offset.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_builder_set_event_id(event: &EventBuilder, event_id: &str) -> Result<()> {
    cursus::eventstore::check_event_id(event_id)?;
    lock(event).event_id = Some(event_id.to_owned());
    Ok(())
}

/// Appends a built event to aggregate `key` if the aggregate is at
/// `expected_version` (as `event_store_append`). On an aggregate replay
/// topic an append whose outcome is unknown is retried with the same event
/// id, so it is stored once.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "appended")]
pub fn event_store_append_event(
    store: &EventStore,
    topic: &str,
    key: &str,
    expected_version: u64,
    event: &EventBuilder,
) -> Result<Appended> {
    store.append(topic, key, expected_version, &built(event))
}

/// Appends a built event to aggregate `key` inside the producer's open
/// transaction (TXN_APPEND_STREAM): it becomes the version after
/// `expected_version` when the transaction commits, together with the transaction's
/// records and offsets, and never if it aborts. The aggregate is reserved
/// until then (`stream_version_reserved` for other writers).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "appended")]
pub fn producer_append_stream(
    producer: &Producer,
    topic: &str,
    key: &str,
    expected_version: u64,
    event: &EventBuilder,
) -> Result<Appended> {
    producer.append_stream(topic, key, expected_version, &built(event))
}

/// Proves that aggregate `match_id`'s retained events on a replay topic
/// are exactly sequences 1..last with verified digests and unique ids (and
/// that last is `expected_last_sequence`, unless it is -1: no expectation;
/// 0 and other negatives are `invalid_argument`, as in every language). A
/// proof that is not complete fails with `aggregate_proof_<status>`;
/// `replay_proof_from_error` reads its proof.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "proof")]
pub fn event_store_replay_proof(
    store: &EventStore,
    topic: &str,
    match_id: &str,
    expected_last_sequence: i64,
) -> Result<ReplayProof> {
    let expected = expected_last_sequence_arg(expected_last_sequence)?;
    store.replay_proof(topic, match_id, expected)
}

/// The proof a failed replay proof or range read carries, or none.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "proof")]
pub fn replay_proof_from_error(error: &Error) -> Result<Option<ReplayProof>> {
    Ok(ReplayProof::from_error(error))
}

/// The proof in `proof`: the JSON text a failed replay proof or range read
/// carries in its error field `proof` (the field `replay_proof_from_error`
/// reads, for a language that keeps only the error's fields), or none when
/// it is not a proof.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "proof")]
pub fn replay_proof_from_json(proof: &str) -> Result<Option<ReplayProof>> {
    Ok(ReplayProof::from_json(proof))
}

/// Reads the events of aggregate `match_id` with sequences
/// `from_sequence..=to_sequence` (at most `max_records`; 0: 1,000) under a
/// complete proof.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "range")]
pub fn event_store_event_range(
    store: &EventStore,
    topic: &str,
    match_id: &str,
    from_sequence: u64,
    to_sequence: u64,
    max_records: u32,
) -> Result<EventRange> {
    let max = (max_records != 0).then_some(max_records);
    let (proof, events) = store.event_range(topic, match_id, from_sequence, to_sequence, max)?;
    Ok(EventRange { proof, events })
}

/// The proof the range was read under.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "proof")]
pub fn event_range_proof(range: &EventRange) -> Result<ReplayProof> {
    Ok(range.proof.clone())
}

/// The number of events in the range.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_range_count(range: &EventRange) -> usize {
    range.events.len()
}

fn at(range: &EventRange, index: usize) -> Option<&RangeEvent> {
    range.events.get(index)
}

/// The offset of event `index` (-1 out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn event_range_offset(range: &EventRange, index: usize) -> i64 {
    at(range, index).map_or(-1, |e| e.offset as i64)
}

/// The sequence (aggregate version) of event `index`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn event_range_sequence(range: &EventRange, index: usize) -> u64 {
    at(range, index).map_or(0, |e| e.event_sequence)
}

/// The event id of event `index`.
///
/// Thread-safety: safe from any thread while the range is alive.
#[bridge_fn]
pub fn event_range_event_id(range: &EventRange, index: usize) -> &str {
    at(range, index).map_or("", |e| &e.event_id)
}

/// The event type of event `index`.
///
/// Thread-safety: safe from any thread while the range is alive.
#[bridge_fn]
pub fn event_range_event_type(range: &EventRange, index: usize) -> &str {
    at(range, index).map_or("", |e| &e.event_type)
}

/// The payload of event `index`.
///
/// Thread-safety: safe from any thread while the range is alive.
#[bridge_fn]
pub fn event_range_payload(range: &EventRange, index: usize) -> &str {
    at(range, index).map_or("", |e| &e.payload)
}

/// The topic the proof is about.
///
/// Thread-safety: safe from any thread while the proof is alive.
#[bridge_fn]
pub fn replay_proof_topic(proof: &ReplayProof) -> &str {
    &proof.topic
}

/// The aggregate (match) id the proof is about.
///
/// Thread-safety: safe from any thread while the proof is alive.
#[bridge_fn]
pub fn replay_proof_match_id(proof: &ReplayProof) -> &str {
    &proof.match_id
}

/// `complete`, `not_found`, `retention_gap`, `sequence_gap`,
/// `identity_conflict` or `proof_unavailable`.
///
/// Thread-safety: safe from any thread while the proof is alive.
#[bridge_fn]
pub fn replay_proof_status(proof: &ReplayProof) -> &str {
    &proof.status
}

/// Why the proof is not complete (empty when it is).
///
/// Thread-safety: safe from any thread while the proof is alive.
#[bridge_fn]
pub fn replay_proof_diagnostic(proof: &ReplayProof) -> &str {
    &proof.diagnostic
}

/// The aggregate's partition.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_partition(proof: &ReplayProof) -> u32 {
    proof.partition
}

/// The events found.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_event_count(proof: &ReplayProof) -> u64 {
    proof.event_count
}

/// The lowest retained sequence (0 when none).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_earliest_sequence(proof: &ReplayProof) -> u64 {
    proof.earliest_retained_sequence
}

/// The highest retained sequence (0 when none).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_latest_sequence(proof: &ReplayProof) -> u64 {
    proof.latest_retained_sequence
}

/// The offset of the first retained event.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_first_offset(proof: &ReplayProof) -> u64 {
    proof.first_offset
}

/// The offset of the last retained event.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_last_offset(proof: &ReplayProof) -> u64 {
    proof.last_offset
}

/// The first event's id.
///
/// Thread-safety: safe from any thread while the proof is alive.
#[bridge_fn]
pub fn replay_proof_first_event_id(proof: &ReplayProof) -> &str {
    &proof.first_event_id
}

/// The last event's id.
///
/// Thread-safety: safe from any thread while the proof is alive.
#[bridge_fn]
pub fn replay_proof_last_event_id(proof: &ReplayProof) -> &str {
    &proof.last_event_id
}

/// True when sequences increase by exactly one.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_sequence_complete(proof: &ReplayProof) -> bool {
    proof.sequence_complete
}

/// True when the retained events start at sequence 1.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_retention_complete(proof: &ReplayProof) -> bool {
    proof.retention_complete_from_sequence_one
}

/// The committed offset the proof covers.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn replay_proof_hwm(proof: &ReplayProof) -> u64 {
    proof.proof_hwm
}
