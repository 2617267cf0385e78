//! The event store: per-aggregate event streams with optimistic
//! concurrency and snapshots on event-sourcing topics
//! (`docs/event-sourcing.md`).
//!
//! Every command goes to the leader of the aggregate's partition (the
//! FNV-1a key partition). Reads come in pages; a [`Cursor`] remembers
//! where the next page starts, so a language only loops on
//! [`EventStore::next_page`]. [`Aggregate`] adds the load/save cycle.

mod aggregate;

pub use crate::protocol::eventsource::{Appended, Snapshot, StoredEvent};
pub use crate::protocol::replay::{RangeEvent, ReplayProof};
pub use aggregate::{Aggregate, DEFAULT_SNAPSHOT_EVERY};

use crate::client::{Cluster, Idempotence, Lane};
use crate::config::ClientConfig;
use crate::error::{Error, Result};
use crate::protocol::eventsource::{
    self as proto, BrowseEnvelope, HistoryEnvelope, StreamEnvelope,
};
use crate::protocol::reply::OkReply;
use crate::wire::partitioner::partition_for_key;
use crate::wire::{Command, CommandPayload};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// An event to append.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// Event type name (e.g. `OrderCreated`); may be empty.
    pub event_type: String,
    /// Payload (text: the trailing `message=` of APPEND_STREAM).
    pub payload: String,
    /// Metadata text (e.g. JSON); may be empty.
    pub metadata: String,
    /// Schema version of the payload; `None` lets the broker use 1.
    pub schema_version: Option<u32>,
    /// Unique id of the event; `None` lets the engine generate one. It
    /// makes a retried append safe: the broker answers a retry whose id is
    /// the one stored at that version with the original append instead of
    /// appending twice or answering `version_conflict`.
    pub event_id: Option<String>,
}

impl Event {
    /// An event of `event_type` carrying `payload`.
    pub fn new(event_type: impl Into<String>, payload: impl Into<String>) -> Event {
        Event {
            event_type: event_type.into(),
            payload: payload.into(),
            ..Default::default()
        }
    }

    /// Sets the metadata.
    pub fn metadata(mut self, metadata: impl Into<String>) -> Event {
        self.metadata = metadata.into();
        self
    }

    /// Sets the schema version.
    pub fn schema_version(mut self, version: u32) -> Event {
        self.schema_version = Some(version);
        self
    }

    /// Sets the event id.
    pub fn event_id(mut self, id: impl Into<String>) -> Event {
        self.event_id = Some(id.into());
        self
    }

    /// Checks what the engine checks before appending the event: its id,
    /// when it has one ([`check_event_id`]).
    pub fn check(&self) -> Result<()> {
        self.event_id.as_deref().map_or(Ok(()), check_event_id)
    }
}

/// Adds `event`'s fields to an APPEND_STREAM or TXN_APPEND_STREAM payload:
/// type, schema version and id (the event's, or a generated one), then the
/// trailing `metadata` and `message`, last and in that order as the command
/// line requires. The event was [`checked`](Event::check) before.
pub(crate) fn event_fields(mut p: CommandPayload, event: &Event) -> CommandPayload {
    if !event.event_type.is_empty() {
        p = p.field("event_type", &event.event_type);
    }
    if let Some(v) = event.schema_version {
        p = p.field("schema_version", v);
    }
    let event_id = event.event_id.clone().unwrap_or_else(new_event_id);
    p = p.field("event_id", event_id);
    if !event.metadata.is_empty() {
        p = p.field("metadata", &event.metadata);
    }
    p.field("message", &event.payload)
}

/// The one event-id rule, for every append path and every language: an id
/// is a word of the command line (APPEND_STREAM `event_id=<s>`), so it must
/// be non-empty and hold no whitespace or control character. Fails with
/// `invalid_argument` before anything is sent.
pub fn check_event_id(id: &str) -> Result<()> {
    if id.is_empty() || id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::invalid_argument(format!(
            "event id {id:?} must be non-empty text without whitespace"
        )));
    }
    Ok(())
}

/// The one `expected_last_sequence` rule of a replay proof: `None` asks for
/// no expectation; a value must be at least 1 (an aggregate's sequences
/// start at 1, and the broker refuses 0 as `invalid_expected_last_sequence`).
/// 0 fails with `invalid_argument` before anything is sent, in every
/// language (none is each language's "absent": `None`, `nullopt`, an
/// overload without it, or -1 across the C ABI).
pub fn check_expected_last_sequence(expected: Option<u64>) -> Result<()> {
    if expected == Some(0) {
        return Err(Error::invalid_argument(
            "expected_last_sequence must be at least 1 (leave it out for no expectation)",
        ));
    }
    Ok(())
}

/// A fresh event id: 128 random bits in lowercase hex.
pub fn new_event_id() -> String {
    format!(
        "{:016x}{:016x}",
        crate::producer::unique_u64(),
        crate::producer::unique_u64()
    )
}

/// How much one page may hold; `None` takes the broker's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageLimits {
    /// Most records (READ_STREAM `max_events`, otherwise `max_records`).
    pub max_records: Option<u32>,
    /// Most bytes.
    pub max_bytes: Option<u32>,
}

/// How complete a history page is (READ_STREAM_HISTORY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completeness {
    /// Versions are contiguous and verified against the log.
    Complete,
    /// A gap or mismatch was found; what was returned is verified.
    Partial,
    /// The index holds nothing for the range (e.g. retention removed it).
    Unknown,
}

impl Completeness {
    fn parse(s: &str) -> Result<Completeness> {
        match s {
            "complete" => Ok(Completeness::Complete),
            "partial" => Ok(Completeness::Partial),
            "unknown" => Ok(Completeness::Unknown),
            other => Err(Error::protocol(format!("unknown completeness {other:?}"))),
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Completeness::Complete => "complete",
            Completeness::Partial => "partial",
            Completeness::Unknown => "unknown",
        }
    }
}

/// One page of a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The partition read.
    pub partition: u32,
    /// The aggregate's snapshot (first page of a stream read only).
    pub snapshot: Option<Snapshot>,
    /// The events (or, for browse, records), in order.
    pub events: Vec<StoredEvent>,
    /// More pages follow.
    pub has_more: bool,
    /// History reads: how complete the page is.
    pub completeness: Option<Completeness>,
    /// History reads: the aggregate's current version.
    pub head_version: Option<u64>,
    /// Browse reads: the end of what is readable in the partition.
    pub readable_end_offset: Option<u64>,
    /// Browse reads: the partition's earliest retained offset.
    pub earliest_offset: Option<u64>,
}

/// What a paged read reads and where its next page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cursor {
    /// An aggregate's events with its snapshot (READ_STREAM).
    Stream {
        /// Topic.
        topic: String,
        /// Aggregate key.
        key: String,
        /// Next version to read; `None` once done.
        next_version: Option<u64>,
        /// Page limits.
        limits: PageLimits,
    },
    /// An aggregate's original events without snapshots
    /// (READ_STREAM_HISTORY).
    History {
        /// Topic.
        topic: String,
        /// Aggregate key.
        key: String,
        /// Next version to read; `None` once done.
        next_version: Option<u64>,
        /// Last version wanted (`None`: the head).
        to_version: Option<u64>,
        /// Page limits.
        limits: PageLimits,
    },
    /// Any partition's committed records (BROWSE_MESSAGES).
    Browse {
        /// Topic.
        topic: String,
        /// Partition.
        partition: u32,
        /// Next offset to read; `None` once done.
        next_offset: Option<u64>,
        /// Exclusive end (`None`: the readable end).
        to_offset: Option<u64>,
        /// Page limits.
        limits: PageLimits,
    },
}

impl Cursor {
    /// Reads an aggregate's stream from `from_version` (1: the start; a
    /// snapshot at or after it comes with the first page).
    pub fn stream(topic: impl Into<String>, key: impl Into<String>, from_version: u64) -> Cursor {
        Cursor::Stream {
            topic: topic.into(),
            key: key.into(),
            next_version: Some(from_version),
            limits: PageLimits::default(),
        }
    }

    /// Reads an aggregate's original events from `from_version` to
    /// `to_version` (`None`: its head).
    pub fn history(
        topic: impl Into<String>,
        key: impl Into<String>,
        from_version: u64,
        to_version: Option<u64>,
    ) -> Cursor {
        Cursor::History {
            topic: topic.into(),
            key: key.into(),
            next_version: Some(from_version),
            to_version,
            limits: PageLimits::default(),
        }
    }

    /// Browses a partition from `from_offset` up to `to_offset` (exclusive;
    /// `None`: the readable end).
    pub fn browse(
        topic: impl Into<String>,
        partition: u32,
        from_offset: u64,
        to_offset: Option<u64>,
    ) -> Cursor {
        Cursor::Browse {
            topic: topic.into(),
            partition,
            next_offset: Some(from_offset),
            to_offset,
            limits: PageLimits::default(),
        }
    }

    /// Sets the page limits.
    pub fn with_limits(mut self, new: PageLimits) -> Cursor {
        match &mut self {
            Cursor::Stream { limits, .. }
            | Cursor::History { limits, .. }
            | Cursor::Browse { limits, .. } => *limits = new,
        }
        self
    }

    /// True once every page was read.
    pub fn is_done(&self) -> bool {
        match self {
            Cursor::Stream { next_version, .. } | Cursor::History { next_version, .. } => {
                next_version.is_none()
            }
            Cursor::Browse { next_offset, .. } => next_offset.is_none(),
        }
    }
}

/// Where an event-sourcing command goes: the leader of this partition,
/// looked up again (fresh metadata) when a retry follows a failover.
struct Leader {
    topic: String,
    partition: u32,
}

/// Event store client. Cheap to share (`Arc`); `close` ends it.
#[derive(Debug)]
pub struct EventStore {
    cluster: Arc<Cluster>,
    closed: AtomicBool,
    /// Producer id of appends to aggregate replay topics.
    producer_id: String,
    /// Next sequence per replay topic (the broker stores it with the event).
    sequences: std::sync::Mutex<std::collections::HashMap<String, u64>>,
}

impl EventStore {
    /// Connects to a bootstrap broker.
    pub async fn connect(config: ClientConfig) -> Result<EventStore> {
        let cluster = Cluster::new(config)?;
        cluster.any_broker(Lane::CONTROL).await?;
        let producer_id = format!(
            "{}-es-{:016x}",
            cluster.config().client_id,
            crate::producer::unique_u64()
        );
        Ok(EventStore {
            cluster,
            closed: AtomicBool::new(false),
            producer_id,
            sequences: Default::default(),
        })
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            Err(Error::closed("event store"))
        } else {
            Ok(())
        }
    }

    /// Closes the connections; later calls fail with `closed`.
    pub async fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.cluster.close().await;
    }

    /// The aggregate's partition, whose leader serves its commands.
    async fn leader_of_key(&self, topic: &str, key: &str) -> Result<Leader> {
        check_key(key)?;
        let metadata = self.cluster.metadata(topic, false).await?;
        let count = metadata.topic.partitions;
        if count == 0 {
            return Err(Error::protocol(format!(
                "topic {topic} reports no partitions"
            )));
        }
        Ok(Leader {
            topic: topic.to_owned(),
            partition: partition_for_key(key.as_bytes(), count),
        })
    }

    async fn text(
        &self,
        target: &Leader,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<OkReply> {
        self.check_open()?;
        let reply = self
            .cluster
            .request_leader(
                &target.topic,
                target.partition,
                Lane::CONTROL,
                command,
                payload,
                idempotence,
            )
            .await?;
        OkReply::parse(&reply)
    }

    /// Appends `event` to the aggregate `key` if its current version is
    /// `expected_version` (0 for a new aggregate): the event gets
    /// `expected_version + 1`. Otherwise fails with `version_conflict`
    /// (class conflict; fields `current` and `expected`).
    ///
    /// Every append carries an event id (the event's, or a generated one).
    /// An append whose outcome is unknown (a lost reply, a leader change
    /// during its replication) is retried with the same id (and, on an
    /// aggregate replay topic, the same sequence), which the broker answers
    /// with the original append instead of a `version_conflict`.
    pub async fn append(
        &self,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: &Event,
    ) -> Result<Appended> {
        check_key(key)?;
        event.check()?;
        let metadata = self.cluster.metadata(topic, false).await?;
        let target = self.leader_of_key(topic, key).await?;
        let replay = metadata.topic.aggregate_replay;
        let mut p = CommandPayload::new()
            .field("topic", topic)
            .field("key", key)
            .field("version", expected_version + 1);
        if replay {
            let seq = {
                let mut seqs = self.sequences.lock().unwrap_or_else(|e| e.into_inner());
                let next = seqs.entry(topic.to_owned()).or_insert(0);
                *next += 1;
                *next
            };
            p = p
                .field("producerId", &self.producer_id)
                .field("seqNum", seq);
        }
        let p = event_fields(p, event);
        self.check_open()?;
        // Concurrent appends (many aggregates) go out together and the
        // broker appends each partition's run in one write and one sync.
        let reply = self
            .cluster
            .request_leader_coalesced(
                &target.topic,
                target.partition,
                Lane::CONTROL,
                Command::AppendStream,
                &p,
                Idempotence::Safe,
            )
            .await?;
        Appended::from_reply(&OkReply::parse(&reply)?)
    }

    /// Proves that the retained events of aggregate `match_id` on a replay
    /// topic are exactly sequences 1..last, each with a verified payload
    /// digest and a unique event id (and that last is
    /// `expected_last_sequence`, when given; 0 is refused, see
    /// [`check_expected_last_sequence`]). A proof that is not complete
    /// is an error with code `aggregate_proof_<status>` whose proof
    /// [`ReplayProof::from_error`] reads.
    pub async fn replay_proof(
        &self,
        topic: &str,
        match_id: &str,
        expected_last_sequence: Option<u64>,
    ) -> Result<ReplayProof> {
        check_expected_last_sequence(expected_last_sequence)?;
        let target = self.leader_of_key(topic, match_id).await?;
        let mut p = CommandPayload::new()
            .field("topic", topic)
            .field("match_id", match_id);
        if let Some(n) = expected_last_sequence {
            p = p.field("expected_last_sequence", n);
        }
        let reply = self.raw(&target, Command::AggregateReplayProof, &p).await?;
        crate::protocol::replay::json_after(&reply, "proof")
    }

    /// Reads the events of aggregate `match_id` with sequences `from..=to`
    /// (at most `max_records`; `None`: the broker's 1,000) under a complete
    /// proof. Fails with `aggregate_range_<status>` when the proof is not
    /// complete and `aggregate_range_incomplete` when fewer events exist.
    pub async fn event_range(
        &self,
        topic: &str,
        match_id: &str,
        from_sequence: u64,
        to_sequence: u64,
        max_records: Option<u32>,
    ) -> Result<(ReplayProof, Vec<RangeEvent>)> {
        let target = self.leader_of_key(topic, match_id).await?;
        let mut p = CommandPayload::new()
            .field("topic", topic)
            .field("match_id", match_id)
            .field("from_sequence", from_sequence)
            .field("to_sequence", to_sequence);
        if let Some(n) = max_records {
            p = p.field("max_records", n);
        }
        let reply = self
            .raw(&target, Command::AggregateEventRangeRead, &p)
            .await?;
        let range: crate::protocol::replay::RangeRead =
            crate::protocol::replay::json_after(&reply, "range")?;
        Ok((range.proof, range.events))
    }

    /// A read-only request whose reply is taken raw (JSON after `OK x=`).
    async fn raw(
        &self,
        target: &Leader,
        command: Command,
        payload: &CommandPayload,
    ) -> Result<bytes::Bytes> {
        self.check_open()?;
        self.cluster
            .request_leader(
                &target.topic,
                target.partition,
                Lane::CONTROL,
                command,
                payload,
                Idempotence::Safe,
            )
            .await
    }

    /// The aggregate's current version (0 when it has no event).
    pub async fn stream_version(&self, topic: &str, key: &str) -> Result<u64> {
        let target = self.leader_of_key(topic, key).await?;
        let p = CommandPayload::new()
            .field("topic", topic)
            .field("key", key);
        self.text(&target, Command::StreamVersion, &p, Idempotence::Safe)
            .await?
            .parse_field("version")
    }

    /// Saves `state` as the aggregate's snapshot at `version` (at most its
    /// current version, else `snapshot_version_exceeds_stream`).
    pub async fn save_snapshot(
        &self,
        topic: &str,
        key: &str,
        version: u64,
        state: &str,
    ) -> Result<()> {
        let target = self.leader_of_key(topic, key).await?;
        let p = CommandPayload::new()
            .field("topic", topic)
            .field("key", key)
            .field("version", version)
            .field("message", state);
        self.text(&target, Command::SaveSnapshot, &p, Idempotence::Safe)
            .await?;
        Ok(())
    }

    /// The aggregate's latest snapshot, if any.
    pub async fn read_snapshot(&self, topic: &str, key: &str) -> Result<Option<Snapshot>> {
        let target = self.leader_of_key(topic, key).await?;
        let p = CommandPayload::new()
            .field("topic", topic)
            .field("key", key);
        self.check_open()?;
        // Not `text`: the JSON may hold spaces a key=value split would cut.
        let reply = self
            .cluster
            .request_leader(
                &target.topic,
                target.partition,
                Lane::CONTROL,
                Command::ReadSnapshot,
                &p,
                Idempotence::Safe,
            )
            .await?;
        proto::snapshot_from_reply(&reply)
    }

    /// Reads the next page of `cursor` and moves it on; `None` once it is
    /// done.
    pub async fn next_page(&self, cursor: &mut Cursor) -> Result<Option<Page>> {
        self.check_open()?;
        match cursor {
            Cursor::Stream {
                topic,
                key,
                next_version,
                limits,
            } => {
                let Some(from) = *next_version else {
                    return Ok(None);
                };
                let target = self.leader_of_key(topic, key).await?;
                let p = paged(
                    CommandPayload::new()
                        .field("topic", &*topic)
                        .field("key", &*key)
                        .field("from_version", from),
                    *limits,
                    "max_events",
                );
                let (head, events): (StreamEnvelope, _) =
                    self.pair(&target, Command::ReadStream, &p).await?;
                *next_version = continuation(head.has_more, head.next_version);
                Ok(Some(Page {
                    partition: head.partition,
                    snapshot: head.snapshot,
                    events,
                    has_more: head.has_more,
                    completeness: None,
                    head_version: None,
                    readable_end_offset: None,
                    earliest_offset: None,
                }))
            }
            Cursor::History {
                topic,
                key,
                next_version,
                to_version,
                limits,
            } => {
                let Some(from) = *next_version else {
                    return Ok(None);
                };
                let target = self.leader_of_key(topic, key).await?;
                let mut p = CommandPayload::new()
                    .field("topic", &*topic)
                    .field("key", &*key)
                    .field("from_version", from);
                if let Some(to) = to_version {
                    p = p.field("to_version", *to);
                }
                let p = paged(p, *limits, "max_records");
                let (head, events): (HistoryEnvelope, _) =
                    self.pair(&target, Command::ReadStreamHistory, &p).await?;
                *next_version = continuation(head.has_more, head.next_version);
                Ok(Some(Page {
                    partition: head.partition,
                    snapshot: None,
                    events,
                    has_more: head.has_more,
                    completeness: Some(Completeness::parse(&head.completeness)?),
                    head_version: Some(head.head_version),
                    readable_end_offset: None,
                    earliest_offset: None,
                }))
            }
            Cursor::Browse {
                topic,
                partition,
                next_offset,
                to_offset,
                limits,
            } => {
                let Some(from) = *next_offset else {
                    return Ok(None);
                };
                let target = Leader {
                    topic: topic.to_string(),
                    partition: *partition,
                };
                let mut p = CommandPayload::new()
                    .field("topic", &*topic)
                    .field("partition", *partition)
                    .field("from_offset", from);
                if let Some(to) = to_offset {
                    p = p.field("to_offset", *to);
                }
                let p = paged(p, *limits, "max_records");
                let (head, events): (BrowseEnvelope, _) =
                    self.pair(&target, Command::BrowseMessages, &p).await?;
                *next_offset = head.has_more.then_some(head.next_offset);
                Ok(Some(Page {
                    partition: *partition,
                    snapshot: None,
                    events,
                    has_more: head.has_more,
                    completeness: None,
                    head_version: None,
                    readable_end_offset: Some(head.readable_end_offset),
                    earliest_offset: Some(head.earliest_offset),
                }))
            }
        }
    }

    /// Reads every page of an aggregate's stream from `from_version`: the
    /// snapshot (if one is at or after it) and the events after it.
    pub async fn read_stream(
        &self,
        topic: &str,
        key: &str,
        from_version: u64,
    ) -> Result<(Option<Snapshot>, Vec<StoredEvent>)> {
        let mut cursor = Cursor::stream(topic, key, from_version);
        let mut snapshot = None;
        let mut events = Vec::new();
        while let Some(page) = self.next_page(&mut cursor).await? {
            if snapshot.is_none() {
                snapshot = page.snapshot;
            }
            events.extend(page.events);
        }
        Ok((snapshot, events))
    }

    async fn pair<T: for<'de> serde::Deserialize<'de>>(
        &self,
        target: &Leader,
        command: Command,
        payload: &CommandPayload,
    ) -> Result<(T, Vec<StoredEvent>)> {
        let (envelope, batch) = self
            .cluster
            .request_pair_leader(
                &target.topic,
                target.partition,
                Lane::CONTROL,
                command,
                payload,
                Idempotence::Safe,
            )
            .await?;
        proto::two_frames(&envelope, batch)
    }
}

/// Adds the page limits under the command's field names.
fn paged(mut p: CommandPayload, limits: PageLimits, records_field: &str) -> CommandPayload {
    if let Some(n) = limits.max_records {
        p = p.field(records_field, n);
    }
    if let Some(n) = limits.max_bytes {
        p = p.field("max_bytes", n);
    }
    p
}

/// The next version to read after a page.
fn continuation(has_more: bool, next_version: u64) -> Option<u64> {
    (has_more && next_version > 0).then_some(next_version)
}

/// Aggregate keys are command fields: text without whitespace.
pub(crate) fn check_key(key: &str) -> Result<()> {
    if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::invalid_argument(format!(
            "aggregate key {key:?} must be non-empty text without whitespace"
        )));
    }
    Ok(())
}
