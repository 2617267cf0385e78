//! The group coordinator: registrations, membership, generations,
//! assignments, session expiry and committed offsets.
//!
//! All state changes run under one async lock, and every durable change is
//! appended (and synced) to `__consumer_offsets` before it is applied in
//! memory and acknowledged. Standalone, membership itself is not durable:
//! after a restart every group is empty and members rejoin.
//!
//! Distributed mode replicates membership too (`membership` records
//! through Raft), so that a coordinator move keeps members and generation:
//!
//! * a join that adds a member and a leave are replicated before the
//!   reply (and undone in memory if that fails), so every generation a
//!   member was told is in the cluster's state;
//! * an expiry, or a rebalance after an expansion change, is replicated by
//!   the next background pass ([`Coordinator::expire_all`]);
//! * only the broker that coordinates a group holds its members. It takes
//!   the group over (from the replicated membership) when the reconciler
//!   says it coordinates it, or at its first command for it, whichever
//!   comes first; every restored member gets a fresh session (now + the
//!   session timeout), as Kafka does when a coordinator loads a group, so
//!   members that died meanwhile expire and rebalance normally.
//!
//! Rules this coordinator follows where the specification leaves room:
//!
//! * JOIN_GROUP with `member=` equal to the id of a current member is a
//!   rejoin: the member keeps its id, nothing rebalances, and the reply
//!   carries the current generation and assignment. Any other `member=` is
//!   a prefix and gets a fresh `<prefix>-NNNN` id, which rebalances.
//! * Generation starts at 0 for a registered group and increments on every
//!   rebalance (join, leave, expiry, expansion change).
//! * JOIN_GROUP, SYNC_GROUP and HEARTBEAT (even one answered with
//!   GEN_MISMATCH) refresh a member's session.
//! * Re-registering a group with the same selector is a no-op; a different
//!   selector is rejected (`invalid_subscription reason=selector_conflict`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use cursus_wire::ErrorPayload;
use tokio::sync::{Mutex, OwnedMutexGuard};
use tracing::{info, warn};

use super::assignment::{assign, TopicPartition};
use super::errors::*;
use super::lifecycle::reconcile;
use super::member_id;
use super::membership::{LiveGroup, Member};
use super::offsets_store::{OffsetsStore, ReplayError, COMPACT_MIN_RECORDS};
use super::records::{DurableState, Membership, OffsetEntry, RecordBody, Registration};
use super::selector::Selector;
use super::status::GroupStatus;
use super::{GroupReplicator, OffsetLookup};
use crate::storage::StorageError;
use crate::topics::partition::blocking;
use crate::topics::TopicRegistry;

/// Committed offsets by (group, topic, partition), readable without the
/// coordinator lock.
type Mirror = RwLock<HashMap<(String, String, u32), u64>>;

/// The owned coordinator lock.
pub(super) type Guard = OwnedMutexGuard<State>;

/// Everything the coordinator lock protects.
#[derive(Debug, Default)]
pub(super) struct State {
    /// Registrations and committed offsets, as replayed and written.
    pub(super) durable: DurableState,
    /// Membership of every registered group.
    pub(super) live: BTreeMap<String, LiveGroup>,
    /// Distributed mode: the cluster's groups version `durable` reflects.
    pub(super) cluster_version: u64,
    /// Distributed mode: the groups whose membership this broker took
    /// over (it coordinates them); the others hold no members here.
    pub(super) owned: BTreeSet<String>,
    /// Distributed mode: owned groups whose membership changed in memory
    /// since it was last replicated (an expiry, a rebalance).
    pub(super) unreplicated: BTreeSet<String>,
}

/// A member's view after JOIN_GROUP or SYNC_GROUP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberView {
    /// The member id (with suffix).
    pub member_id: String,
    /// Current generation.
    pub generation: u64,
    /// Assigned topic partitions, sorted.
    pub assignments: Vec<TopicPartition>,
    /// The topic of a single-topic group (replies use `assignments=[..]`).
    pub single_topic: Option<String>,
}

/// Result of REGISTER_GROUP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// The stored selector.
    pub selector: Selector,
    /// Its concrete expansion.
    pub expansion: BTreeMap<String, u32>,
    /// False when the group already existed with this selector.
    pub created: bool,
}

/// The group coordinator; see the module docs.
#[derive(Debug)]
pub struct Coordinator {
    /// The state; lifecycle operations hold it across a DELETE/TRUNCATE.
    pub(super) state: Arc<Mutex<State>>,
    /// Committed offsets mirrored for lock-free reads by CONSUME, STREAM
    /// and FETCH_OFFSET; updated only after the durable write.
    committed: Arc<Mirror>,
    store: Arc<OffsetsStore>,
    session_timeout: Duration,
    /// Distributed mode: records go through Raft instead of the local
    /// journal (set once at startup).
    replicator: OnceLock<Arc<dyn GroupReplicator>>,
}

impl OffsetLookup for Coordinator {
    fn committed_offset(&self, topic: &str, group: &str, partition: u32) -> Option<u64> {
        self.committed
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(group.to_owned(), topic.to_owned(), partition))
            .copied()
    }
}

impl Coordinator {
    /// Why the `__consumer_offsets` journal failed, if it did.
    pub fn journal_failure(&self) -> Option<String> {
        self.store.failure()
    }

    /// Replays `__consumer_offsets` (blocking, before readiness) and
    /// finishes cleanup that a crash interrupted: groups and offsets of
    /// topics that no longer exist are tombstoned, expansions refreshed.
    pub fn open(
        data_dir: &Path,
        topics: &TopicRegistry,
        session_timeout: Duration,
    ) -> Result<Coordinator, ReplayError> {
        Self::open_with_threshold(data_dir, topics, session_timeout, COMPACT_MIN_RECORDS)
    }

    /// [`open`](Self::open) compacting `__consumer_offsets` from
    /// `compact_min_records` records on.
    pub fn open_with_threshold(
        data_dir: &Path,
        topics: &TopicRegistry,
        session_timeout: Duration,
        compact_min_records: u64,
    ) -> Result<Coordinator, ReplayError> {
        let (store, mut durable) =
            OffsetsStore::open_with_threshold(data_dir, compact_min_records)?;
        for record in reconcile(&durable, topics) {
            store.append(&record)?;
            durable
                .apply(&record)
                .map_err(|reason| ReplayError::Storage(StorageError::InvalidArgument(reason)))?;
            info!(?record, "resumed group cleanup");
        }
        let live = durable
            .groups
            .keys()
            .map(|g| (g.clone(), LiveGroup::new()))
            .collect();
        let committed = durable.offsets.clone().into_iter().collect();
        Ok(Coordinator {
            state: Arc::new(Mutex::new(State {
                durable,
                live,
                ..State::default()
            })),
            committed: Arc::new(RwLock::new(committed)),
            store: Arc::new(store),
            session_timeout,
            replicator: OnceLock::new(),
        })
    }

    /// The configured session timeout.
    pub fn session_timeout(&self) -> Duration {
        self.session_timeout
    }

    /// Distributed mode: from now on records are written through
    /// `replicator` (Raft) rather than the local journal.
    pub fn set_replicator(&self, replicator: Arc<dyn GroupReplicator>) {
        let _ = self.replicator.set(replicator);
    }

    /// Distributed mode: replaces the durable state with the cluster's
    /// (registrations, offsets and membership written by any coordinator).
    /// The members of an owned group are kept, unless the cluster holds a
    /// newer generation of them (a membership write whose reply was lost);
    /// a group whose partitions changed rebalances.
    ///
    /// `version` is the cluster's groups version of `durable`: an older
    /// copy than what this coordinator already applied is ignored (the
    /// broker's own copy of the replicated state may lag its proposals).
    pub async fn sync_durable(&self, durable: DurableState, version: u64) {
        let mut guard = self.lock().await;
        if version < guard.cluster_version {
            return;
        }
        guard.cluster_version = version;
        let st = &mut *guard;
        for (group, reg) in &durable.groups {
            let before = st.durable.groups.get(group).map(|r| r.expansion.clone());
            let live = st.live.entry(group.clone()).or_default();
            if st.owned.contains(group) {
                if let Some(m) = durable.members.get(group) {
                    if m.generation > live.generation {
                        *live = restore(m);
                    }
                }
            }
            if before.is_some_and(|b| b != reg.expansion) && !live.members.is_empty() {
                live.rebalance(&reg.expansion);
                if st.owned.contains(group) {
                    st.unreplicated.insert(group.clone());
                }
            }
        }
        st.live.retain(|g, _| durable.groups.contains_key(g));
        st.owned.retain(|g| durable.groups.contains_key(g));
        st.unreplicated.retain(|g| durable.groups.contains_key(g));
        *self.committed.write().unwrap_or_else(|e| e.into_inner()) =
            durable.offsets.clone().into_iter().collect();
        guard.durable = durable;
        // Last: the coordinator answers from this copy once it is told.
        if let Some(replicator) = self.replicator.get() {
            replicator.synced(version);
        }
    }

    /// Distributed mode: `owned` are the groups this broker coordinates
    /// now. It takes over those it did not hold and drops the members of
    /// those it no longer coordinates (their new coordinator has them).
    pub async fn sync_ownership(&self, owned: &BTreeSet<String>) {
        let mut guard = self.lock().await;
        let st = &mut *guard;
        let released: Vec<String> = st.owned.difference(owned).cloned().collect();
        for group in released {
            st.owned.remove(&group);
            st.unreplicated.remove(&group);
            if let Some(live) = st.live.get_mut(&group) {
                live.members.clear();
            }
            info!(group, "group moved to another coordinator");
        }
        for group in owned {
            self.take_over(st, group);
        }
    }

    /// Distributed mode: this broker coordinates `group`; unless it holds
    /// its membership already, it restores it from the replicated state,
    /// every member with a fresh session.
    fn take_over(&self, st: &mut State, group: &str) {
        if self.replicator.get().is_none()
            || st.owned.contains(group)
            || !st.durable.groups.contains_key(group)
        {
            return;
        }
        st.owned.insert(group.to_owned());
        let mut live = st
            .durable
            .members
            .get(group)
            .map(restore)
            .unwrap_or_default();
        if let Some(reg) = st.durable.groups.get(group) {
            // Partitions added after the last membership write.
            let plan = assign(live.members.keys(), &reg.expansion);
            let stale = live
                .members
                .iter()
                .any(|(id, m)| plan.get(id) != Some(&m.assignments));
            if stale {
                live.rebalance(&reg.expansion);
                st.unreplicated.insert(group.to_owned());
            }
        }
        info!(
            group,
            generation = live.generation,
            members = live.members.len(),
            "took the group over"
        );
        st.live.insert(group.to_owned(), live);
    }

    /// Distributed mode: replicates `group`'s membership as memory holds
    /// it (fenced: only its coordinator's write is applied). Standalone:
    /// nothing to do.
    async fn replicate_membership(
        &self,
        guard: Guard,
        group: &str,
    ) -> (Guard, Result<(), ErrorPayload>) {
        let record = guard.live.get(group).map(|live| RecordBody::Membership {
            group: group.to_owned(),
            generation: live.generation,
            members: live
                .members
                .iter()
                .map(|(id, m)| (id.clone(), m.assignments.clone()))
                .collect(),
        });
        let (Some(replicator), Some(record)) = (self.replicator.get().cloned(), record) else {
            return (guard, Ok(()));
        };
        let (mut guard, written) = self.replicate(replicator, guard, record, true).await;
        if written.is_ok() {
            guard.unreplicated.remove(group);
        }
        (guard, written)
    }

    /// Locks the coordinator state (owned guard, so a durable write can
    /// carry it into its own task).
    pub(super) async fn lock(&self) -> Guard {
        Arc::clone(&self.state).lock_owned().await
    }

    /// Appends `record` durably, then applies it to memory and the mirror.
    ///
    /// Cancellation-safe: the write and the in-memory apply run in their own
    /// task that owns the lock, so a request that times out while the record
    /// is being synced cannot leave memory behind the journal.
    pub(super) async fn persist(
        &self,
        guard: Guard,
        record: RecordBody,
    ) -> (Guard, Result<(), StorageError>) {
        if let Some(replicator) = self.replicator.get().cloned() {
            let (guard, result) = self.replicate(replicator, guard, record, false).await;
            let result = result.map_err(|e| StorageError::InvalidArgument(e.render()));
            return (guard, result);
        }
        let store = Arc::clone(&self.store);
        let mirror = Arc::clone(&self.committed);
        let task = tokio::spawn(async move {
            let mut guard = guard;
            let compact = store.should_compact_after_append(guard.durable.groups.len());
            let (writer, written) = (Arc::clone(&store), record.clone());
            let result = blocking(move || writer.append(&written)).await;
            if result.is_ok() {
                apply(&mut guard, &mirror, &record);
                if compact {
                    let snapshot = guard.durable.clone();
                    if let Err(e) = blocking(move || store.compact(&snapshot)).await {
                        warn!(error = %e, "__consumer_offsets compaction failed");
                    }
                }
            }
            (guard, result)
        });
        match task.await {
            Ok(done) => done,
            Err(e) => {
                let guard = self.lock().await;
                let err = StorageError::InvalidArgument(format!("offsets write task failed: {e}"));
                (guard, Err(err))
            }
        }
    }

    /// Distributed mode: commits `record` through Raft (every broker gets
    /// it), then applies it here; as cancellation-safe as
    /// [`persist`](Self::persist). `member_commit`: see
    /// [`GroupReplicator::replicate`].
    async fn replicate(
        &self,
        replicator: Arc<dyn GroupReplicator>,
        guard: Guard,
        record: RecordBody,
        member_commit: bool,
    ) -> (Guard, Result<(), ErrorPayload>) {
        let mirror = Arc::clone(&self.committed);
        let task = tokio::spawn(async move {
            let mut guard = guard;
            let result = replicator.replicate(record.clone(), member_commit).await;
            if let Ok(version) = result {
                apply(&mut guard, &mirror, &record);
                guard.cluster_version = guard.cluster_version.max(version);
                replicator.synced(guard.cluster_version);
            }
            (guard, result.map(|_| ()))
        });
        match task.await {
            Ok(done) => done,
            Err(e) => {
                let guard = self.lock().await;
                let err = ErrorPayload::new("offset_sync_failed")
                    .with_field("reason", format!("offsets replication task failed: {e}"));
                (guard, Err(err))
            }
        }
    }

    /// Expires stale members of `group`, rebalancing if any left.
    pub(super) fn expire_group(&self, st: &mut State, group: &str) {
        let (Some(reg), Some(live)) = (st.durable.groups.get(group), st.live.get_mut(group)) else {
            return;
        };
        let expired = live.expire(Instant::now(), self.session_timeout);
        if !expired.is_empty() {
            live.rebalance(&reg.expansion);
            if st.owned.contains(group) {
                st.unreplicated.insert(group.to_owned());
            }
            info!(
                group,
                ?expired,
                generation = live.generation,
                "session timeout: rebalanced"
            );
        }
    }

    /// Background pass: expires stale members of every group, then
    /// (distributed mode) replicates membership changes not replicated yet.
    pub async fn expire_all(&self) {
        let mut guard = self.lock().await;
        let groups: Vec<String> = guard.live.keys().cloned().collect();
        for g in groups {
            self.expire_group(&mut guard, &g);
        }
        let pending: Vec<String> = guard.unreplicated.iter().cloned().collect();
        for group in pending {
            let (locked, written) = self.replicate_membership(guard, &group).await;
            guard = locked;
            if let Err(e) = written {
                warn!(group, error = %e.render(), "group membership not replicated yet");
            }
        }
    }

    /// REGISTER_GROUP: stores the selector and its expansion durably.
    /// Named topics must exist.
    pub async fn register(
        &self,
        topics: &TopicRegistry,
        group: &str,
        selector: Selector,
    ) -> Result<Registered, ErrorPayload> {
        let guard = self.lock().await;
        if let Some(reg) = guard.durable.groups.get(group) {
            if reg.selector != selector {
                return Err(ErrorPayload::new("invalid_subscription")
                    .with_field("reason", "selector_conflict")
                    .with_field("group", group)
                    .with_field(reg.selector.kind(), reg.selector.value()));
            }
            return Ok(Registered {
                selector,
                expansion: reg.expansion.clone(),
                created: false,
            });
        }
        let named: &[String] = match &selector {
            Selector::Topic(t) => std::slice::from_ref(t),
            Selector::Topics(ts) => ts,
            Selector::Pattern(_) => &[],
        };
        if let Some(missing) = named.iter().find(|t| topics.get(t).is_none()) {
            return Err(ErrorPayload::new("topic_not_found").with_field("topic", missing));
        }
        let expansion = selector.expand(topics);
        let record = RecordBody::Registration {
            group: group.to_owned(),
            selector: selector.clone(),
            expansion: expansion.clone(),
        };
        let (_guard, written) = self.persist(guard, record).await;
        written.map_err(|e| store_failed("register_group_failed", group, e))?;
        info!(group, selector = selector.kind(), value = %selector.value(), "group registered");
        Ok(Registered {
            selector,
            expansion,
            created: true,
        })
    }

    /// JOIN_GROUP: registers a missing group against `topic`, adds (or
    /// recognises) the member and returns its view.
    pub async fn join(
        &self,
        topics: &TopicRegistry,
        group: &str,
        topic: Option<&str>,
        member: &str,
    ) -> Result<MemberView, ErrorPayload> {
        let mut guard = self.lock().await;
        if !guard.durable.groups.contains_key(group) {
            let Some(topic) = topic else {
                return Err(group_not_found(group));
            };
            let Some(t) = topics.get(topic) else {
                return Err(ErrorPayload::new("topic_not_found").with_field("topic", topic));
            };
            let record = RecordBody::Registration {
                group: group.to_owned(),
                selector: Selector::Topic(topic.to_owned()),
                expansion: [(topic.to_owned(), t.def.partitions)].into_iter().collect(),
            };
            let (locked, written) = self.persist(guard, record).await;
            guard = locked;
            written.map_err(|e| store_failed("join_group_failed", group, e))?;
            info!(group, topic, "group registered by first join");
        }
        let st = &mut *guard;
        self.take_over(st, group);
        self.expire_group(st, group);
        let (reg, live) = parts(st, group)?;
        check_topic(reg, group, topic)?;
        let (member_id, before) = if let Some(m) = live.members.get_mut(member) {
            m.touch();
            (member.to_owned(), None)
        } else {
            let id = member_id::generate(member, |id| live.members.contains_key(id)).ok_or_else(
                || {
                    ErrorPayload::new("join_group_failed")
                        .with_field("group", group)
                        .with_field("reason", "member_ids_exhausted")
                },
            )?;
            let before = live.clone();
            live.members.insert(id.clone(), Member::new());
            live.rebalance(&reg.expansion);
            info!(group, member = %id, generation = live.generation, "member joined");
            (id, Some(before))
        };
        let guard = self.replicate_change(guard, group, before).await?;
        let (reg, live) = parts_of(&guard, group)?;
        Ok(view(reg, live, &member_id))
    }

    /// Distributed mode: after a membership change (`before` is the group
    /// as it was) or with changes not replicated yet, replicates the
    /// group's membership before the reply; if that fails, the change is
    /// undone and the member told to retry (`coordinator_not_available`).
    async fn replicate_change(
        &self,
        guard: Guard,
        group: &str,
        before: Option<LiveGroup>,
    ) -> Result<Guard, ErrorPayload> {
        if before.is_none() && !guard.unreplicated.contains(group) {
            return Ok(guard);
        }
        let (mut guard, written) = self.replicate_membership(guard, group).await;
        match written {
            Ok(()) => Ok(guard),
            // Nothing changed now: the background pass tries again.
            Err(e) if before.is_none() => {
                warn!(group, error = %e.render(), "group membership not replicated yet");
                Ok(guard)
            }
            Err(e) => {
                if let Some(before) = before {
                    guard.live.insert(group.to_owned(), before);
                }
                Err(ErrorPayload::new("coordinator_not_available")
                    .with_field("group", group)
                    .with_field("reason", e.render()))
            }
        }
    }

    /// SYNC_GROUP: the member's assignment in the current generation;
    /// a supplied stale generation is GEN_MISMATCH.
    pub async fn sync(
        &self,
        group: &str,
        topic: Option<&str>,
        member: &str,
        generation: Option<u64>,
    ) -> Result<MemberView, ErrorPayload> {
        let mut guard = self.lock().await;
        let st = &mut *guard;
        self.take_over(st, group);
        self.expire_group(st, group);
        let (reg, live) = parts(st, group)?;
        check_topic(reg, group, topic)?;
        touch_member(live, group, member, generation)?;
        Ok(view(reg, live, member))
    }

    /// HEARTBEAT: refreshes the session; returns the current generation.
    pub async fn heartbeat(
        &self,
        group: &str,
        topic: Option<&str>,
        member: &str,
        generation: Option<u64>,
    ) -> Result<u64, ErrorPayload> {
        let mut guard = self.lock().await;
        let st = &mut *guard;
        self.take_over(st, group);
        self.expire_group(st, group);
        let (reg, live) = parts(st, group)?;
        require_topic(reg, topic, "HEARTBEAT")?;
        check_topic(reg, group, topic)?;
        touch_member(live, group, member, generation)?;
        Ok(live.generation)
    }

    /// LEAVE_GROUP: removes the member and rebalances.
    pub async fn leave(
        &self,
        group: &str,
        topic: Option<&str>,
        member: &str,
    ) -> Result<u64, ErrorPayload> {
        let mut guard = self.lock().await;
        let st = &mut *guard;
        self.take_over(st, group);
        self.expire_group(st, group);
        let (reg, live) = parts(st, group)?;
        require_topic(reg, topic, "LEAVE_GROUP")?;
        check_topic(reg, group, topic)?;
        let before = live.clone();
        if live.members.remove(member).is_none() {
            return Err(member_not_found(group, member));
        }
        live.rebalance(&reg.expansion);
        info!(group, member, generation = live.generation, "member left");
        let guard = self.replicate_change(guard, group, Some(before)).await?;
        Ok(parts_of(&guard, group)?.1.generation)
    }

    /// COMMIT_OFFSET / BATCH_COMMIT: validates every entry (topic
    /// subscribed, partition exists, member, generation, ownership,
    /// monotonic) and then commits all of them in one durable record, or
    /// none. Returns the number of entries.
    pub async fn commit(
        &self,
        group: &str,
        topic: &str,
        member: &str,
        generation: u64,
        entries: &[(u32, u64)],
    ) -> Result<usize, ErrorPayload> {
        let mut guard = self.lock().await;
        let changed = self.check_commit(&mut guard, group, topic, member, generation, entries)?;
        if changed.is_empty() {
            return Ok(entries.len());
        }
        let record = RecordBody::Commit {
            group: group.to_owned(),
            offsets: changed,
        };
        if let Some(replicator) = self.replicator.get().cloned() {
            // The cluster checks it again against the replicated offsets
            // (this copy may be older than they are).
            let (_guard, written) = self.replicate(replicator, guard, record, true).await;
            return written
                .map(|_| entries.len())
                .map_err(|e| match e.code.as_str() {
                    "offset_regression" => e.with_field("group", group),
                    "NOT_COORDINATOR" => ErrorPayload::new("coordinator_not_available")
                        .with_field("group", group)
                        .with_field("reason", e.render()),
                    _ => store_failed("offset_sync_failed", group, e.render()),
                });
        }
        let (_guard, written) = self.persist(guard, record).await;
        written.map_err(|e| store_failed("offset_sync_failed", group, e))?;
        Ok(entries.len())
    }

    /// The checks of [`commit`](Self::commit) without writing anything:
    /// SEND_OFFSETS_TO_TXN stages offsets that pass them, and a transaction
    /// commit checks them again (the group fence) before it is decided.
    pub async fn validate_offsets(
        &self,
        group: &str,
        topic: &str,
        member: &str,
        generation: u64,
        entries: &[(u32, u64)],
    ) -> Result<(), ErrorPayload> {
        let mut guard = self.lock().await;
        self.check_commit(&mut guard, group, topic, member, generation, entries)
            .map(|_| ())
    }

    /// Materializes the offsets of a committed transaction as an ordinary
    /// commit record: each entry becomes max(committed, entry). Needs no
    /// membership (it runs after the decision, also during recovery) and
    /// is idempotent; entries of a group or topic that no longer exists
    /// are skipped. Returns the number of offsets that changed.
    pub async fn materialize_offsets(
        &self,
        group: &str,
        entries: &[(String, u32, u64)],
    ) -> Result<usize, ErrorPayload> {
        let guard = self.lock().await;
        let Some(reg) = guard.durable.groups.get(group) else {
            warn!(group, "transaction offsets of a removed group are dropped");
            return Ok(0);
        };
        let changed: Vec<OffsetEntry> = entries
            .iter()
            .filter(|(topic, partition, _)| {
                reg.expansion
                    .get(topic)
                    .is_some_and(|count| partition < count)
            })
            .filter(|(topic, partition, offset)| {
                let key = (group.to_owned(), topic.clone(), *partition);
                guard.durable.offsets.get(&key).map_or(true, |c| offset > c)
            })
            .map(|(topic, partition, offset)| OffsetEntry {
                topic: topic.clone(),
                partition: *partition,
                offset: *offset,
            })
            .collect();
        if changed.is_empty() {
            return Ok(0);
        }
        let n = changed.len();
        let record = RecordBody::Commit {
            group: group.to_owned(),
            offsets: changed,
        };
        let (_guard, written) = self.persist(guard, record).await;
        written.map_err(|e| store_failed("transaction_offset_materialization_failed", group, e))?;
        Ok(n)
    }

    /// Validates a commit of `entries` and returns those that change the
    /// committed offsets.
    fn check_commit(
        &self,
        st: &mut State,
        group: &str,
        topic: &str,
        member: &str,
        generation: u64,
        entries: &[(u32, u64)],
    ) -> Result<Vec<OffsetEntry>, ErrorPayload> {
        self.take_over(st, group);
        self.expire_group(st, group);
        let (reg, live) = parts(st, group)?;
        let Some(&count) = reg.expansion.get(topic) else {
            return Err(topic_not_assigned(group, topic));
        };
        if let Some((p, _)) = entries.iter().find(|(p, _)| *p >= count) {
            return Err(ErrorPayload::new("partition_not_found")
                .with_field("topic", topic)
                .with_field("partition", p));
        }
        let Some(m) = live.members.get(member) else {
            return Err(member_not_found(group, member));
        };
        if generation != live.generation {
            return Err(gen_mismatch(group, member, live.generation, generation));
        }
        for (p, _) in entries {
            let owned = m
                .assignments
                .iter()
                .any(|tp| tp.topic == topic && tp.partition == *p);
            if !owned {
                return Err(not_owner(group, member, *p, generation));
            }
        }
        let mut changed = Vec::new();
        for &(partition, offset) in entries {
            let key = (group.to_owned(), topic.to_owned(), partition);
            match st.durable.offsets.get(&key) {
                Some(&current) if offset < current => {
                    return Err(ErrorPayload::new("offset_regression")
                        .with_field(
                            "reason",
                            format!("offset {offset} is below the committed offset {current}"),
                        )
                        .with_field("group", group)
                        .with_field("topic", topic)
                        .with_field("partition", partition)
                        .with_field("current", current)
                        .with_field("requested", offset));
                }
                Some(&current) if offset == current => {}
                _ => changed.push(OffsetEntry {
                    topic: topic.to_owned(),
                    partition,
                    offset,
                }),
            }
        }
        Ok(changed)
    }

    /// FETCH_OFFSET: the committed next offset, if any.
    pub fn fetch(&self, group: &str, topic: &str, partition: u32) -> Option<u64> {
        self.committed_offset(topic, group, partition)
    }

    /// Every committed offset as `((group, topic, partition), next
    /// offset)`, sorted, from the lock-free mirror (for metrics).
    pub fn committed_offsets(&self) -> Vec<((String, String, u32), u64)> {
        let mut offsets: Vec<_> = self
            .committed
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(key, &offset)| (key.clone(), offset))
            .collect();
        offsets.sort_unstable();
        offsets
    }

    /// GROUP_STATUS.
    pub async fn status(&self, group: &str) -> Result<GroupStatus, ErrorPayload> {
        let mut guard = self.lock().await;
        let st = &mut *guard;
        self.take_over(st, group);
        self.expire_group(st, group);
        let (reg, live) = parts(st, group)?;
        Ok(GroupStatus::new(group, reg, live))
    }

    /// LIST_GROUPS: every registered group, sorted.
    pub async fn list(&self) -> Vec<String> {
        self.state
            .lock()
            .await
            .durable
            .groups
            .keys()
            .cloned()
            .collect()
    }

    /// After CREATE defined or grew `topic`: refreshes the expansion of
    /// every group selecting it (durably) and rebalances groups with
    /// members.
    pub async fn topic_defined(&self, topics: &TopicRegistry, topic: &str) {
        let mut guard = self.lock().await;
        let affected: Vec<(String, Selector)> = guard
            .durable
            .groups
            .iter()
            .filter(|(_, r)| r.selector.covers(topic))
            .map(|(g, r)| (g.clone(), r.selector.clone()))
            .collect();
        for (group, selector) in affected {
            let expansion = selector.expand(topics);
            if guard.durable.groups.get(&group).map(|r| &r.expansion) == Some(&expansion) {
                continue;
            }
            let record = RecordBody::Registration {
                group: group.clone(),
                selector,
                expansion,
            };
            let (locked, written) = self.persist(guard, record).await;
            guard = locked;
            if let Err(e) = written {
                warn!(group, topic, error = %e, "could not store the new group expansion");
            }
        }
    }
}

/// The registration and live state of `group`, or `group_not_found`.
fn parts<'s>(
    st: &'s mut State,
    group: &str,
) -> Result<(&'s Registration, &'s mut LiveGroup), ErrorPayload> {
    match (st.durable.groups.get(group), st.live.get_mut(group)) {
        (Some(reg), Some(live)) => Ok((reg, live)),
        _ => Err(group_not_found(group)),
    }
}

/// [`parts`] read-only.
fn parts_of<'s>(
    st: &'s State,
    group: &str,
) -> Result<(&'s Registration, &'s LiveGroup), ErrorPayload> {
    match (st.durable.groups.get(group), st.live.get(group)) {
        (Some(reg), Some(live)) => Ok((reg, live)),
        _ => Err(group_not_found(group)),
    }
}

/// A group restored from its replicated membership: the generation and
/// assignments its members were told, each member with a fresh session.
fn restore(m: &Membership) -> LiveGroup {
    let mut live = LiveGroup::new();
    live.generation = m.generation;
    live.members = m
        .members
        .iter()
        .map(|(id, assignments)| {
            let member = Member {
                assignments: assignments.clone(),
                ..Member::new()
            };
            (id.clone(), member)
        })
        .collect();
    live
}

/// `topic=` on a group command must be selected by the group.
/// HEARTBEAT and LEAVE_GROUP need `topic=` (`missing_topic`) unless the
/// group is multi-topic (`topics=` / `pattern=`): no single topic names
/// those, and clients send none for them.
fn require_topic(
    reg: &Registration,
    topic: Option<&str>,
    command: &str,
) -> Result<(), ErrorPayload> {
    if topic.is_none() && reg.selector.single_topic().is_some() {
        return Err(ErrorPayload::new("missing_topic").with_field("command", command));
    }
    Ok(())
}

fn check_topic(reg: &Registration, group: &str, topic: Option<&str>) -> Result<(), ErrorPayload> {
    match topic {
        Some(t) if !reg.selector.covers(t) => Err(topic_not_assigned(group, t)),
        _ => Ok(()),
    }
}

/// Refreshes `member`'s session, then checks a supplied generation.
fn touch_member(
    live: &mut LiveGroup,
    group: &str,
    member: &str,
    generation: Option<u64>,
) -> Result<(), ErrorPayload> {
    let Some(m) = live.members.get_mut(member) else {
        return Err(member_not_found(group, member));
    };
    m.touch();
    match generation {
        Some(g) if g != live.generation => Err(gen_mismatch(group, member, live.generation, g)),
        _ => Ok(()),
    }
}

fn view(reg: &Registration, live: &LiveGroup, member: &str) -> MemberView {
    MemberView {
        member_id: member.to_owned(),
        generation: live.generation,
        assignments: live
            .members
            .get(member)
            .map(|m| m.assignments.clone())
            .unwrap_or_default(),
        single_topic: reg.selector.single_topic().map(str::to_owned),
    }
}

/// Applies a durably written record to the state and the committed-offset
/// mirror.
fn apply(st: &mut State, mirror: &Mirror, record: &RecordBody) {
    let before = match record {
        RecordBody::Registration { group, .. } => {
            st.durable.groups.get(group).map(|r| r.expansion.clone())
        }
        _ => None,
    };
    if let Err(reason) = st.durable.apply(record) {
        // Validated before writing; this would be a coordinator bug.
        warn!(%reason, "applied an inconsistent __consumer_offsets record");
    }
    let mut mirror = mirror.write().unwrap_or_else(|e| e.into_inner());
    match record {
        RecordBody::Registration {
            group, expansion, ..
        } => {
            let live = st.live.entry(group.clone()).or_default();
            // New partitions or topics: members get a new generation.
            if before.as_ref().is_some_and(|b| b != expansion) && !live.members.is_empty() {
                live.rebalance(expansion);
                if st.owned.contains(group) {
                    st.unreplicated.insert(group.clone());
                }
                info!(
                    group,
                    generation = live.generation,
                    "subscribed partitions changed: rebalanced"
                );
            }
        }
        RecordBody::Commit { group, offsets } => {
            for e in offsets {
                mirror.insert((group.clone(), e.topic.clone(), e.partition), e.offset);
            }
        }
        RecordBody::GroupTombstone { group, .. } => {
            st.live.remove(group);
            st.owned.remove(group);
            st.unreplicated.remove(group);
            mirror.retain(|(g, _, _), _| g != group);
        }
        RecordBody::TopicTombstone { group, topic, .. } => {
            mirror.retain(|(g, t, _), _| !(g == group && t == topic));
        }
        // Memory made the change before it was written.
        RecordBody::Membership { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{CleanupPolicy, LogConfig};
    use crate::topics::{TopicDefaults, TopicPatch};
    use cursus_wire::CommandPayload;

    async fn registry(dir: &Path) -> TopicRegistry {
        let defaults = TopicDefaults {
            partitions: 2,
            replication_factor: 1,
            cleanup_policy: CleanupPolicy::Delete,
            min_insync_replicas: 1,
        };
        let topics = TopicRegistry::open(dir, LogConfig::default(), defaults).unwrap();
        let (_, p) = CommandPayload::parse_line("CREATE topic=t partitions=2").unwrap();
        topics
            .create(&TopicPatch::parse(&p).unwrap())
            .await
            .unwrap();
        topics
    }

    #[tokio::test]
    async fn commits_compact_the_journal_at_run_time_and_replay() {
        let dir = tempfile::tempdir().unwrap();
        let topics = registry(dir.path()).await;
        let timeout = Duration::from_secs(30);
        let c = Coordinator::open_with_threshold(dir.path(), &topics, timeout, 50).unwrap();
        let m = c.join(&topics, "g", Some("t"), "m").await.unwrap();
        for offset in 1..=200 {
            c.commit(
                "g",
                "t",
                &m.member_id,
                m.generation,
                &[(0, offset), (1, offset)],
            )
            .await
            .unwrap();
        }
        assert!(c.store.record_count() <= 50, "{}", c.store.record_count());
        assert_eq!(c.fetch("g", "t", 1), Some(200));
        drop(c);
        let c = Coordinator::open(dir.path(), &topics, timeout).unwrap();
        assert_eq!(c.fetch("g", "t", 0), Some(200));
        assert_eq!(c.fetch("g", "t", 1), Some(200));
        assert_eq!(c.list().await, vec!["g".to_owned()]);
    }

    /// A replicator that accepts every record (the cluster's stand-in).
    #[derive(Debug, Default)]
    struct Accepting(std::sync::Mutex<Vec<RecordBody>>);

    impl GroupReplicator for Accepting {
        fn replicate(
            &self,
            record: RecordBody,
            _member_commit: bool,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<u64, ErrorPayload>> + Send>>
        {
            let mut records = self.0.lock().unwrap();
            records.push(record);
            let version = records.len() as u64;
            Box::pin(async move { Ok(version) })
        }

        fn synced(&self, _version: u64) {}
    }

    impl Accepting {
        fn durable(&self) -> DurableState {
            let mut d = DurableState::default();
            for r in self.0.lock().unwrap().iter() {
                d.apply(r).unwrap();
            }
            d
        }
    }

    #[tokio::test]
    async fn a_new_coordinator_restores_members_with_fresh_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let topics = registry(dir.path()).await;
        let timeout = Duration::from_millis(300);
        let old = Coordinator::open(&dir.path().join("old"), &topics, timeout).unwrap();
        let written = Arc::new(Accepting::default());
        old.set_replicator(Arc::clone(&written) as _);
        let a = old.join(&topics, "g", Some("t"), "a").await.unwrap();
        let b = old.join(&topics, "g", Some("t"), "b").await.unwrap();
        assert_eq!(b.generation, 2);
        let d = written.durable();
        assert_eq!(d.members["g"].generation, 2, "joins are replicated");
        assert_eq!(d.members["g"].members.len(), 2);

        // The group moves: the new coordinator continues with both
        // members and the generation, no rejoin.
        let new = Coordinator::open(&dir.path().join("new"), &topics, timeout).unwrap();
        let replicated = Arc::new(Accepting::default());
        new.set_replicator(Arc::clone(&replicated) as _);
        new.sync_durable(d, 10).await;
        new.sync_ownership(&["g".to_owned()].into()).await;
        let a_view = new
            .sync("g", Some("t"), &a.member_id, Some(2))
            .await
            .unwrap();
        assert_eq!(a_view.assignments.len(), 1);
        let p = a_view.assignments[0].partition;
        new.commit("g", "t", &a.member_id, 2, &[(p, 4)])
            .await
            .unwrap();
        // The silent member expires a session after the takeover, the
        // expiry is replicated, and the live one sees the new generation.
        let started = Instant::now();
        let generation = loop {
            match new.heartbeat("g", Some("t"), &a.member_id, Some(2)).await {
                Ok(_) => assert!(started.elapsed() < Duration::from_secs(10)),
                Err(e) => break e.fields["current"].clone(),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(started.elapsed() + Duration::from_millis(50) >= timeout);
        assert_eq!(generation, "3");
        new.expire_all().await;
        let last = replicated.0.lock().unwrap().last().cloned();
        let Some(RecordBody::Membership {
            generation,
            members,
            ..
        }) = last
        else {
            panic!("the expiry was not replicated: {last:?}");
        };
        assert_eq!(generation, 3);
        assert_eq!(members.keys().collect::<Vec<_>>(), vec![&a.member_id]);
        // Moved away again: this broker holds no members of it.
        new.sync_ownership(&BTreeSet::new()).await;
        assert!(new.lock().await.live["g"].members.is_empty());
    }

    #[tokio::test]
    async fn a_cancelled_commit_leaves_memory_and_journal_in_step() {
        let dir = tempfile::tempdir().unwrap();
        let topics = registry(dir.path()).await;
        let timeout = Duration::from_secs(30);
        let c = Coordinator::open(dir.path(), &topics, timeout).unwrap();
        let m = c.join(&topics, "g", Some("t"), "m").await.unwrap();
        // Drop the commit future at its first suspension point (while the
        // durable write may be in flight).
        let commit = c.commit("g", "t", &m.member_id, m.generation, &[(0, 7)]);
        let _ = tokio::time::timeout(Duration::ZERO, commit).await;
        // Whatever happened, memory must match the journal: a lower commit
        // accepted in memory while the journal already holds 7 would make
        // the replay fail.
        let lower = c
            .commit("g", "t", &m.member_id, m.generation, &[(0, 5)])
            .await;
        if let Err(e) = &lower {
            assert_eq!(e.code, "offset_regression");
        }
        let before = c.fetch("g", "t", 0);
        drop(c);
        let c = Coordinator::open(dir.path(), &topics, timeout).expect("replay stays consistent");
        assert_eq!(c.fetch("g", "t", 0), before);
    }
}
