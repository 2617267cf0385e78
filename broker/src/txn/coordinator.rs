//! The transaction coordinator: one state machine per transactional id
//! (see [`state`](super::state)), every accepted transition journaled and
//! synced before it is applied and answered.
//!
//! Each transactional id has its own async lock, held for a whole command
//! (a TXN_PUBLISH's append, an END_TXN's markers), so commands of one id
//! never interleave. Handlers run these operations in their own task so a
//! request timeout cannot cancel them half-way.
//!
//! END_TXN's commit protocol and the abort are [`super::commit`]; the
//! parsed requests [`super::requests`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex as StdMutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cursus_wire::partitioner::partition_for_key;
use cursus_wire::ErrorPayload;
use tokio::sync::{Mutex, OwnedRwLockWriteGuard, RwLock};
use tracing::{info, warn};

use super::append::{sync_later, Appended, TxnEvent, TxnRecord};
use super::journal::TxnJournal;
use super::participants::GroupOffsets;
use super::requests::{OffsetsRequest, PublishRequest, StreamRequest};
use super::state::{
    not_found, BeginPlan, InitPlan, Participant, StreamAppend, TxnSnapshot, TxnState,
};
use super::TxnReplicator;
use crate::broker::Broker;
use crate::eventsource::replay::payload_digest;
use crate::storage::Partitioner;
use crate::topics::is_internal_topic;
use crate::topics::partition::blocking;

/// Coordinator settings from the broker configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnSettings {
    /// Deadline of an open transaction.
    pub transaction_timeout: Duration,
    /// Age after which a completed transaction keeps only its tombstone.
    pub transactional_id_expiration: Duration,
    /// Abort the process at this step of a commit (testing hook).
    pub crash_point: Option<String>,
}

impl Default for TxnSettings {
    fn default() -> Self {
        TxnSettings {
            transaction_timeout: Duration::from_millis(60_000),
            transactional_id_expiration: Duration::from_millis(604_800_000),
            crash_point: None,
        }
    }
}

/// One id's state; `None` until INIT_PRODUCER_ID.
type Entry = Arc<Mutex<Option<TxnSnapshot>>>;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The transaction coordinator; see the module docs.
#[derive(Debug)]
pub struct TxnCoordinator {
    journal: Arc<TxnJournal>,
    entries: StdMutex<HashMap<String, Entry>>,
    /// TXN_PUBLISH registers participants under a shared hold; DELETE and
    /// TRUNCATE check references under an exclusive one.
    topics_guard: Arc<RwLock<()>>,
    pub(super) settings: TxnSettings,
    /// Distributed mode: persists through the cluster (set at startup).
    replicator: OnceLock<Arc<dyn TxnReplicator>>,
}

impl TxnCoordinator {
    /// Why `__transaction_state.journal` failed, if it did.
    pub fn journal_failure(&self) -> Option<String> {
        self.journal.failure()
    }

    /// A coordinator over a replayed journal.
    pub fn new(journal: TxnJournal, settings: TxnSettings) -> TxnCoordinator {
        let entries = journal
            .snapshots()
            .into_iter()
            .map(|s| (s.transactional_id.clone(), Arc::new(Mutex::new(Some(s)))))
            .collect();
        TxnCoordinator {
            journal: Arc::new(journal),
            entries: StdMutex::new(entries),
            topics_guard: Arc::new(RwLock::new(())),
            settings,
            replicator: OnceLock::new(),
        }
    }

    /// Distributed mode: from now on state goes through `replicator`.
    pub fn set_replicator(&self, replicator: Arc<dyn TxnReplicator>) {
        let _ = self.replicator.set(replicator);
    }

    /// True unless another broker coordinates `id` (always in standalone
    /// mode).
    pub fn coordinates(&self, id: &str) -> bool {
        self.replicator.get().map_or(true, |r| r.coordinates(id))
    }

    /// Distributed mode: takes `snapshot` as `id`'s state, unless a
    /// command is busy with the id; returns false then, and the replicator
    /// hands the cluster's state over at the next lock of the id
    /// ([`TxnReplicator::take_deferred`]). (A command busy while the id
    /// moved away cannot change it any more: its TXN_SYNC is fenced.)
    pub fn adopt(&self, id: &str, snapshot: &TxnSnapshot) -> bool {
        let entry = self.entry_or_create(id);
        let Ok(mut guard) = entry.try_lock() else {
            return false;
        };
        if guard.as_ref() != Some(snapshot) {
            *guard = Some(snapshot.clone());
        }
        true
    }

    /// Locks `entry`, the entry of `id`, taking the cluster's state of
    /// `id` first when its adoption was deferred.
    async fn lock_entry(
        &self,
        id: &str,
        entry: Entry,
    ) -> tokio::sync::OwnedMutexGuard<Option<TxnSnapshot>> {
        let mut guard = entry.lock_owned().await;
        if let Some(snapshot) = self.replicator.get().and_then(|r| r.take_deferred(id)) {
            *guard = Some(snapshot);
        }
        guard
    }

    /// A new producer id: from the journal's counter, or the cluster's.
    async fn allocate_producer_id(&self) -> Result<String, ErrorPayload> {
        let Some(replicator) = self.replicator.get().cloned() else {
            return Ok(self.journal.allocate_producer_id());
        };
        let n = replicator.allocate_producer_id().await.map_err(|reason| {
            ErrorPayload::new("transaction_sync_failed").with_field("reason", reason)
        })?;
        Ok(format!("txn-{n}"))
    }

    /// The settings.
    pub fn settings(&self) -> &TxnSettings {
        &self.settings
    }

    /// The latest durable snapshot of every id.
    pub fn snapshots(&self) -> Vec<TxnSnapshot> {
        if let Some(replicator) = self.replicator.get() {
            return replicator.snapshots();
        }
        self.journal.snapshots()
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn entry_or_create(&self, id: &str) -> Entry {
        Arc::clone(self.entries().entry(id.to_owned()).or_default())
    }

    fn entry(&self, id: &str) -> Option<Entry> {
        self.entries().get(id).cloned()
    }

    /// Persists `snapshot` (synced) before the caller applies it.
    async fn persist(&self, snapshot: &TxnSnapshot) -> Result<(), ErrorPayload> {
        if let Some(replicator) = self.replicator.get().cloned() {
            let id = &snapshot.transactional_id;
            return replicator
                .sync(snapshot.clone())
                .await
                .map_err(|reason| self.sync_failed(id, &reason));
        }
        let journal = Arc::clone(&self.journal);
        let s = snapshot.clone();
        blocking(move || journal.persist(&s)).await.map_err(|e| {
            ErrorPayload::new("transaction_sync_failed")
                .with_field("transactional_id", &snapshot.transactional_id)
                .with_field("reason", e.to_string())
        })
    }

    /// A refused TXN_SYNC. A fenced one (this broker no longer owns the
    /// id's shard: `NOT_COORDINATOR` or `coordinator_not_available`) means
    /// ownership is lost: the refusal goes to the client as is (nothing
    /// after it is acknowledged) and the id's state is taken from the
    /// cluster again at the next sync.
    fn sync_failed(&self, id: &str, reason: &str) -> ErrorPayload {
        let refusal = ErrorPayload::from_error_text(reason).filter(|e| {
            matches!(
                e.code.as_str(),
                "NOT_COORDINATOR" | "coordinator_not_available"
            )
        });
        match refusal {
            Some(e) => {
                if let Some(replicator) = self.replicator.get() {
                    replicator.fenced(id);
                }
                e
            }
            None => ErrorPayload::new("transaction_sync_failed")
                .with_field("transactional_id", id)
                .with_field("reason", reason),
        }
    }

    /// Persists `next` and makes it the current state.
    pub(super) async fn transition(
        &self,
        current: &mut TxnSnapshot,
        next: TxnSnapshot,
    ) -> Result<(), ErrorPayload> {
        self.persist(&next).await?;
        *current = next;
        Ok(())
    }

    /// INIT_PRODUCER_ID: a new id gets `txn-<n>` and epoch 0; an existing
    /// one keeps its producer id with the next epoch, after its unresolved
    /// transaction (if any) is aborted.
    pub async fn init(&self, broker: &Broker, id: &str) -> Result<TxnSnapshot, ErrorPayload> {
        let entry = self.entry_or_create(id);
        let mut guard = self.lock_entry(id, entry).await;
        let next = match guard.as_mut() {
            None => TxnSnapshot::new(id, self.allocate_producer_id().await?, now_ms()),
            Some(current) => {
                if current.plan_init()? == InitPlan::AbortThenBump {
                    self.abort(broker, current, "reinitialized").await?;
                }
                current.next_epoch(now_ms())
            }
        };
        self.persist(&next).await?;
        info!(transactional_id = id, producer_id = %next.producer_id, epoch = next.epoch, "producer initialized");
        *guard = Some(next.clone());
        Ok(next)
    }

    /// Locks `id` and checks the session; aborts an open transaction past
    /// its deadline first.
    pub(super) async fn session(
        &self,
        broker: &Broker,
        id: &str,
        producer_id: &str,
        epoch: i64,
    ) -> Result<tokio::sync::OwnedMutexGuard<Option<TxnSnapshot>>, ErrorPayload> {
        let entry = self.entry(id).ok_or_else(|| not_found(id))?;
        let mut guard = self.lock_entry(id, entry).await;
        let current = guard.as_mut().ok_or_else(|| not_found(id))?;
        current.check_session(producer_id, epoch)?;
        self.abort_if_due(broker, current).await?;
        Ok(guard)
    }

    /// Aborts `current` when it is open past its deadline.
    async fn abort_if_due(
        &self,
        broker: &Broker,
        current: &mut TxnSnapshot,
    ) -> Result<(), ErrorPayload> {
        if current.state == TxnState::Open
            && current.deadline_ms > 0
            && now_ms() >= current.deadline_ms
        {
            self.abort(broker, current, "timeout").await?;
        }
        Ok(())
    }

    /// BEGIN_TXN.
    pub async fn begin(
        &self,
        broker: &Broker,
        id: &str,
        producer_id: &str,
        epoch: i64,
    ) -> Result<TxnSnapshot, ErrorPayload> {
        let mut guard = self.session(broker, id, producer_id, epoch).await?;
        let current = guard.as_mut().ok_or_else(|| not_found(id))?;
        if current.plan_begin()? == BeginPlan::Open {
            let now = now_ms();
            let timeout = self.settings.transaction_timeout.as_millis() as u64;
            let next = TxnSnapshot {
                state: TxnState::Open,
                deadline_ms: now.saturating_add(timeout).max(1),
                updated_ms: now,
                ..current.clone()
            };
            self.transition(current, next).await?;
        }
        Ok(current.clone())
    }

    /// TXN_PUBLISH: registers the partition as a participant (durably,
    /// before its first append), then appends the record durably. Returns
    /// the partition and the append.
    pub async fn publish(
        &self,
        broker: &Broker,
        req: &PublishRequest,
    ) -> Result<(u32, Appended), ErrorPayload> {
        self.publish_batch(broker, std::slice::from_ref(req))
            .await
            .pop()
            .unwrap_or_else(|| Err(not_found(&req.transactional_id)))
    }

    /// TXN_PUBLISH of consecutive requests (the records a client pipelined
    /// on one connection), each with its own outcome as if they came one
    /// by one. A run of one session takes the id's lock once, registers
    /// all its new participant partitions in one synced transition
    /// (before any append to them), and appends each partition's records
    /// in one write covered by one sync.
    pub async fn publish_batch(
        &self,
        broker: &Broker,
        reqs: &[PublishRequest],
    ) -> Vec<Result<(u32, Appended), ErrorPayload>> {
        let mut out = Vec::with_capacity(reqs.len());
        let mut rest = reqs;
        while let Some(first) = rest.first() {
            let len = rest
                .iter()
                .take_while(|r| {
                    r.transactional_id == first.transactional_id
                        && r.producer_id == first.producer_id
                        && r.epoch == first.epoch
                })
                .count();
            let (run, after) = rest.split_at(len);
            out.extend(self.publish_run(broker, run).await);
            rest = after;
        }
        out
    }

    /// [`publish_batch`](Self::publish_batch) of requests of one session.
    async fn publish_run(
        &self,
        broker: &Broker,
        run: &[PublishRequest],
    ) -> Vec<Result<(u32, Appended), ErrorPayload>> {
        let all = |e: ErrorPayload| run.iter().map(|_| Err(e.clone())).collect();
        let Some(first) = run.first() else {
            return Vec::new();
        };
        let id = first.transactional_id.as_str();
        let mut guard = match self
            .session(broker, id, &first.producer_id, first.epoch)
            .await
        {
            Ok(guard) => guard,
            Err(e) => return all(e),
        };
        let Some(current) = guard.as_mut() else {
            return all(not_found(id));
        };
        if let Err(e) = current.require_open() {
            return all(e);
        }
        let _topics = self.topics_guard.read().await;
        let placed: Vec<Result<u32, ErrorPayload>> =
            run.iter().map(|req| place(broker, req)).collect();
        let participants = run.iter().zip(&placed).filter_map(|(req, p)| {
            p.as_ref().ok().map(|&partition| Participant {
                topic: req.topic.clone(),
                partition,
            })
        });
        if let Err(e) = self.register_participants(current, participants).await {
            return all(e);
        }
        // Each partition's records, in arrival order (so in sequence order).
        let mut by_partition: BTreeMap<(&str, u32), Vec<usize>> = BTreeMap::new();
        for (i, (req, p)) in run.iter().zip(&placed).enumerate() {
            if let Ok(partition) = p {
                by_partition
                    .entry((req.topic.as_str(), *partition))
                    .or_default()
                    .push(i);
            }
        }
        let batches: Vec<PartitionRun<'_>> = by_partition
            .into_iter()
            .map(|((topic, partition), indexes)| {
                let records = indexes
                    .iter()
                    .map(|&i| {
                        let req = &run[i];
                        TxnRecord {
                            transactional_id: id,
                            producer_id: &req.producer_id,
                            epoch: req.epoch,
                            seq: req.seq,
                            key: req.key.clone(),
                            payload: req.payload.clone(),
                            metadata: &req.metadata,
                        }
                    })
                    .collect();
                PartitionRun {
                    topic,
                    partition,
                    indexes,
                    records,
                }
            })
            .collect();
        // The partitions are independent: their appends run together.
        let appended = futures_util::future::join_all(batches.iter().map(|b| {
            broker
                .participants()
                .data_batch(broker, b.topic, b.partition, &b.records)
        }))
        .await;
        let mut out: Vec<Result<(u32, Appended), ErrorPayload>> = placed
            .into_iter()
            .map(|p| p.and_then(|_| Err(not_found(id))))
            .collect();
        for (batch, results) in batches.iter().zip(appended) {
            for (&i, result) in batch.indexes.iter().zip(results) {
                if result.as_ref().is_ok_and(|a| a.new) {
                    current.messages += 1;
                }
                out[i] = result.map(|a| (batch.partition, a));
            }
        }
        out
    }

    /// TXN_APPEND_STREAM: checks the stream sequence (an identical resend
    /// of an accepted one answers it again), registers the aggregate's
    /// partition as a participant (durably, before its first append), then
    /// appends the event as an open transactional record. Returns the
    /// partition, the version and the append.
    pub async fn append_stream(
        &self,
        broker: &Broker,
        req: &StreamRequest,
    ) -> Result<(u32, u64, Appended), ErrorPayload> {
        let id = req.transactional_id.as_str();
        let mut guard = self
            .session(broker, id, &req.producer_id, req.epoch)
            .await?;
        let current = guard.as_mut().ok_or_else(|| not_found(id))?;
        current.require_open()?;
        let _topics = self.topics_guard.read().await;
        let topic = broker
            .topics
            .get(&req.topic)
            .ok_or_else(|| ErrorPayload::new("topic_not_found").with_field("topic", &req.topic))?;
        if !topic.def.event_sourcing {
            return Err(
                ErrorPayload::new("event_sourcing_not_enabled").with_field("topic", &req.topic)
            );
        }
        let replay = topic.def.aggregate_replay;
        if replay && req.event_id.is_empty() {
            return Err(ErrorPayload::new("missing_event_id")
                .with_field("command", "TXN_APPEND_STREAM")
                .with_field("topic", &req.topic));
        }
        let fingerprint = req.fingerprint();
        let accepted = current.stream_appends.get(&req.topic);
        if let Some(done) = accepted.and_then(|ops| ops.iter().find(|o| o.seq == req.seq)) {
            if done.fingerprint != fingerprint {
                return Err(ErrorPayload::new("invalid_seq_num")
                    .with_field("command", "TXN_APPEND_STREAM")
                    .with_field("seqNum", req.seq)
                    .with_field("reason", "sequence_reused_with_other_content"));
            }
            // An identical resend: the accepted append's reply again.
            let partition = topic.partition(done.partition).cloned().ok_or_else(|| {
                ErrorPayload::new("partition_not_found")
                    .with_field("topic", &req.topic)
                    .with_field("partition", done.partition)
            })?;
            let leader_epoch = partition.leader_epoch();
            let durable = sync_later(partition, &req.topic, done.partition, done.offset);
            return Ok((
                done.partition,
                done.version,
                Appended {
                    offset: done.offset,
                    leader_epoch,
                    new: false,
                    durable,
                },
            ));
        }
        let next_seq = accepted.and_then(|ops| ops.last()).map_or(1, |o| o.seq + 1);
        if req.seq != next_seq {
            return Err(ErrorPayload::new("invalid_seq_num")
                .with_field("command", "TXN_APPEND_STREAM")
                .with_field("topic", &req.topic)
                .with_field("expected", next_seq)
                .with_field("got", req.seq));
        }
        let count = topic.partitions.len() as u32;
        if count == 0 {
            return Err(
                ErrorPayload::new("no_partitions_available").with_field("topic", &req.topic)
            );
        }
        let partition = partition_for_key(req.key.as_bytes(), count);
        self.register_participant(current, &req.topic, partition)
            .await?;
        let event = TxnEvent {
            transactional_id: id,
            producer_id: &req.producer_id,
            epoch: req.epoch,
            seq: req.seq,
            key: &req.key,
            version: req.expected_version,
            schema_version: req.schema_version,
            event_type: &req.event_type,
            metadata: &req.metadata,
            event_id: &req.event_id,
            payload_digest: if replay {
                payload_digest(&req.payload)
            } else {
                String::new()
            },
            payload: req.payload.clone(),
            replay,
        };
        let appended = broker
            .participants()
            .event(broker, &req.topic, partition, &event)
            .await?;
        current
            .stream_appends
            .entry(req.topic.clone())
            .or_default()
            .push(StreamAppend {
                seq: req.seq,
                fingerprint,
                partition,
                version: req.expected_version,
                offset: appended.offset,
            });
        current.messages += 1;
        Ok((partition, req.expected_version, appended))
    }

    /// Registers `topic`/`partition` as a participant of the transaction
    /// (durably, before its first append there).
    async fn register_participant(
        &self,
        current: &mut TxnSnapshot,
        topic: &str,
        partition: u32,
    ) -> Result<(), ErrorPayload> {
        let participant = Participant {
            topic: topic.to_owned(),
            partition,
        };
        self.register_participants(current, std::iter::once(participant))
            .await
    }

    /// Registers every new one of `participants` in one transition
    /// (durably, before the first append to any of them).
    async fn register_participants(
        &self,
        current: &mut TxnSnapshot,
        participants: impl IntoIterator<Item = Participant>,
    ) -> Result<(), ErrorPayload> {
        let mut next: Option<TxnSnapshot> = None;
        for participant in participants {
            if current.participants.contains(&participant) {
                continue;
            }
            next.get_or_insert_with(|| current.clone())
                .participants
                .insert(participant);
        }
        let Some(mut next) = next else {
            return Ok(());
        };
        next.updated_ms = now_ms();
        self.transition(current, next).await
    }

    /// SEND_OFFSETS_TO_TXN: validates the offsets against the group and
    /// stages them durably. Returns the number of staged topic-partitions.
    pub async fn send_offsets(
        &self,
        broker: &Broker,
        req: &OffsetsRequest,
    ) -> Result<usize, ErrorPayload> {
        let id = req.transactional_id.as_str();
        let mut guard = self
            .session(broker, id, &req.producer_id, req.epoch)
            .await?;
        let current = guard.as_mut().ok_or_else(|| not_found(id))?;
        current.require_open()?;
        let staged = current.stage_offsets(
            &req.group,
            &req.member,
            req.generation,
            &req.topic,
            &req.entries,
        )?;
        let offsets = GroupOffsets {
            group: &req.group,
            topic: &req.topic,
            member: &req.member,
            generation: req.generation,
            entries: &req.entries,
        };
        broker
            .participants()
            .validate_offsets(broker, offsets)
            .await?;
        let count = staged.count();
        let next = TxnSnapshot {
            offsets: Some(staged),
            updated_ms: now_ms(),
            ..current.clone()
        };
        self.transition(current, next).await?;
        Ok(count)
    }

    /// TXN_STATUS: the current state (an expired id is not found).
    pub async fn status(&self, id: &str) -> Result<TxnSnapshot, ErrorPayload> {
        let entry = self.entry(id).ok_or_else(|| not_found(id))?;
        let guard = self.lock_entry(id, entry).await;
        match guard.as_ref() {
            Some(s) if !s.expired => Ok(s.clone()),
            _ => Err(not_found(id)),
        }
    }

    /// Locks `id` for recovery and maintenance (no session check).
    pub(super) async fn lock_id(
        &self,
        id: &str,
    ) -> Option<tokio::sync::OwnedMutexGuard<Option<TxnSnapshot>>> {
        let entry = self.entry(id)?;
        Some(self.lock_entry(id, entry).await)
    }

    /// Persists `next` for recovery and maintenance.
    pub(super) async fn replace(
        &self,
        current: &mut TxnSnapshot,
        next: TxnSnapshot,
    ) -> Result<(), ErrorPayload> {
        self.transition(current, next).await
    }

    /// Starts a DELETE or TRUNCATE of `topic`: fails with `blocked_code`
    /// while an open or committing transaction references it (records or
    /// staged offsets). Holds off new participant registrations until
    /// [`TxnTopicRemoval::finish`].
    pub async fn begin_topic_removal(
        &self,
        topic: &str,
        blocked_code: &str,
    ) -> Result<TxnTopicRemoval<'_>, ErrorPayload> {
        let guard = Arc::clone(&self.topics_guard).write_owned().await;
        if let Some(s) = self
            .snapshots()
            .into_iter()
            .find(|s| !s.expired && s.state.is_unresolved() && references(s, topic))
        {
            return Err(ErrorPayload::new(blocked_code)
                .with_field("topic", topic)
                .with_field("transactional_id", &s.transactional_id));
        }
        Ok(TxnTopicRemoval {
            coordinator: self,
            guard,
            topic: topic.to_owned(),
        })
    }
}

/// The records of a pipelined run that go to one partition: where they
/// stand in the run, and the records themselves.
struct PartitionRun<'a> {
    topic: &'a str,
    partition: u32,
    indexes: Vec<usize>,
    records: Vec<TxnRecord<'a>>,
}

/// The partition a TXN_PUBLISH record goes to: the explicit one, the
/// key's, or the topic's next round-robin one; refused for an internal,
/// missing or aggregate-replay topic and a partition that does not exist.
fn place(broker: &Broker, req: &PublishRequest) -> Result<u32, ErrorPayload> {
    if is_internal_topic(&req.topic) {
        return Err(ErrorPayload::new("internal_txn_publish_forbidden")
            .with_field("topic", &req.topic)
            .with_field("transactional_id", &req.transactional_id));
    }
    let topic = broker
        .topics
        .get(&req.topic)
        .ok_or_else(|| ErrorPayload::new("topic_not_found").with_field("topic", &req.topic))?;
    if topic.def.aggregate_replay {
        // A replay topic holds events only (TXN_APPEND_STREAM).
        return Err(
            ErrorPayload::new("aggregate_publish_requires_append_stream")
                .with_field("topic", &req.topic),
        );
    }
    let count = topic.partitions.len() as u32;
    match req.partition {
        Some(p) if p >= count => Err(ErrorPayload::new("partition_not_found")
            .with_field("topic", &req.topic)
            .with_field("partition", p)),
        Some(p) => Ok(p),
        None if topic.def.partitioner == Partitioner::HashKey && !req.key.is_empty() => {
            Ok(partition_for_key(&req.key, count))
        }
        None => Ok(topic.next_round_robin()),
    }
}

/// True when `s` has records in `topic` or staged offsets of it.
fn references(s: &TxnSnapshot, topic: &str) -> bool {
    s.participants.iter().any(|p| p.topic == topic)
        || s.offsets
            .as_ref()
            .is_some_and(|o| o.entries.contains_key(topic))
}

/// A DELETE or TRUNCATE in progress; see
/// [`TxnCoordinator::begin_topic_removal`].
#[derive(Debug)]
pub struct TxnTopicRemoval<'a> {
    coordinator: &'a TxnCoordinator,
    guard: OwnedRwLockWriteGuard<()>,
    topic: String,
}

impl TxnTopicRemoval<'_> {
    /// After the topic was removed or reset: completed transactions drop
    /// their references to it (durably; failures are logged).
    pub async fn finish(self) {
        let TxnTopicRemoval {
            coordinator,
            guard,
            topic,
        } = self;
        drop(guard);
        let ids: Vec<String> = coordinator
            .journal
            .snapshots()
            .into_iter()
            .filter(|s| s.state.is_complete() && references(s, &topic))
            .map(|s| s.transactional_id)
            .collect();
        for id in ids {
            let Some(mut guard) = coordinator.lock_id(&id).await else {
                continue;
            };
            let Some(current) = guard.as_mut() else {
                continue;
            };
            if !current.state.is_complete() || !references(current, &topic) {
                continue;
            }
            let mut next = current.clone();
            next.participants.retain(|p| p.topic != topic);
            if let Some(o) = next.offsets.as_mut() {
                o.entries.remove(&topic);
            }
            if next.offsets.as_ref().is_some_and(|o| o.entries.is_empty()) {
                next.offsets = None;
            }
            if let Err(e) = coordinator.transition(current, next).await {
                warn!(transactional_id = %id, topic, error = %e, "could not drop transaction references to a removed topic");
            }
        }
    }
}
