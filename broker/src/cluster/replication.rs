//! Partition data replication (docs/cluster.md, "Replication").
//!
//! * The **reconciler** follows the replicated state: it materializes
//!   topics locally and gives each partition its role. A new leader
//!   rebuilds the partition's state from its log before serving. A new
//!   follower trusts its log only up to its trusted offset
//!   ([`super::trust`]): what is above may differ from the new leader's,
//!   even below the committed high-water mark (a former leader's records
//!   that were never committed, at offsets the new leader committed
//!   others at).
//! * The leader runs one **replicator** per other replica: it sends the
//!   follower's missing entries (REPLICATE_MESSAGE, fenced by leader id and
//!   epoch) and learns from each answer how far the follower's log is
//!   verified to equal its own. The follower compares the entries with the
//!   ones it holds at those offsets, truncates at the first difference and
//!   appends the rest; a follower verified elsewhere says so and the
//!   leader resends from there, which is also how a follower that was
//!   away catches up.
//! * The leader's **committer** computes the high-water mark (the smallest
//!   log end among the in-sync replicas), commits it through Raft, shrinks
//!   the ISR by followers that lag longer than the session timeout and
//!   adds followers that caught up.
//! * `acks=all` publishes wait for the committed high-water mark to pass
//!   their last offset ([`Replication::wait_committed`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use cursus_wire::{Command, ErrorPayload};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::fsm::{ClusterState, FsmCommand, NodeId, ProducerSeq};
use super::node::ClusterNode;
use super::transport::{BoxFuture, ClusterHandler, TransportError};
use super::txns::RaftTxns;
use crate::broker::Broker;
use crate::placement::commit::Written;
use crate::storage::TopicDefinition;
use crate::topics::partition::ReplicaAppendError;
use crate::topics::TopicPatch;

/// Most record bytes one REPLICATE_MESSAGE carries.
const MAX_BATCH_BYTES: usize = 1 << 20;
/// Most records one REPLICATE_MESSAGE carries.
const MAX_BATCH_RECORDS: usize = 4096;
/// Pause after a failed replication request.
const RETRY_DELAY: Duration = Duration::from_millis(100);
/// Longest a replicator waits for new data before probing again.
const IDLE_PROBE: Duration = Duration::from_millis(500);

type Key = (String, u32);

/// What this broker is for one partition.
#[derive(Debug)]
enum Role {
    Leader {
        epoch: u64,
        /// Its state was rebuilt from the log: it may serve.
        serving: bool,
        stop: CancellationToken,
    },
    Follower {
        epoch: u64,
        leader: NodeId,
        /// Its partition state was rebuilt for this epoch: may append.
        ready: bool,
        /// The log below this offset equals the leader's.
        verified: u64,
    },
}

/// Replication state of this broker's partitions.
#[derive(Debug)]
pub struct Replication {
    roles: Mutex<HashMap<Key, Role>>,
    /// How far each replica's log is known to be the history.
    trust: super::trust::ReplicaTrust,
}

/// The header of a REPLICATE_MESSAGE body (then the entries).
#[derive(Debug, Serialize, Deserialize)]
struct ReplicateHeader {
    topic: String,
    partition: u32,
    leader: NodeId,
    leader_epoch: u64,
    base_offset: u64,
    /// The leader's log end before it read the entries: a follower whose
    /// verified log reaches it holds nothing more of this epoch's history.
    leader_end: u64,
}

/// A follower's answer: its log equals the leader's below `leo`.
#[derive(Debug, Serialize, Deserialize)]
struct ReplicateAnswer {
    leo: u64,
}

impl Replication {
    /// No roles yet; the trusted offsets persisted in `data_dir`.
    pub fn new(data_dir: &std::path::Path) -> Replication {
        Replication {
            roles: Mutex::new(HashMap::new()),
            trust: super::trust::ReplicaTrust::open(data_dir),
        }
    }

    /// True when this broker leads `topic`/`partition` in leader epoch
    /// `epoch` and has rebuilt its state for it (standalone partitions are
    /// not tracked here).
    pub fn serving(&self, topic: &str, partition: u32, epoch: u64) -> bool {
        matches!(
            lock(&self.roles).get(&(topic.to_string(), partition)),
            Some(Role::Leader { serving: true, epoch: e, .. }) if *e == epoch
        )
    }

    /// Waits until the committed high-water mark of `topic`/`partition`
    /// passes the offset of `write` (acks=all) in the leader epoch the
    /// write was appended in. Fails when that epoch is over (or was never
    /// served): the client retries on the new leader (an idempotent
    /// producer's retry is deduplicated there).
    ///
    /// The epoch is the appending generation's, not the one this broker's
    /// copy names when the wait starts: a deposed leader that appends
    /// before it applies its demotion (a process woken from a pause) would
    /// otherwise see the new leader's mark pass an offset that holds
    /// another record there, and acknowledge a write that is not in the
    /// history. Returns the committed high-water mark that covers it.
    pub async fn wait_committed(
        node: &ClusterNode,
        topic: &str,
        write: Written,
        timeout: Duration,
    ) -> Result<u64, ErrorPayload> {
        let (partition, offset) = (write.partition, write.offset);
        let epoch = Some(write.leader_epoch).filter(|e| *e > 0);
        let mut applied = node.applied();
        let wait = async {
            loop {
                {
                    let state = node.state();
                    match state.partition(topic, partition) {
                        Some(p) if Some(p.leader_epoch) == epoch => {
                            if p.committed_hwm > offset {
                                return Ok(p.committed_hwm);
                            }
                        }
                        _ => {
                            return Err(ErrorPayload::new("NOT_LEADER")
                                .with_field("topic", topic)
                                .with_field("partition", partition)
                                .with_field("reason", "leadership moved before the commit"))
                        }
                    }
                }
                if applied.changed().await.is_err() {
                    return Err(ErrorPayload::new("cluster_metadata_unavailable"));
                }
            }
        };
        tokio::time::timeout(timeout, wait)
            .await
            .unwrap_or_else(|_| {
                Err(ErrorPayload::new("request_timeout")
                    .with_field("reason", "the in-sync replicas did not confirm in time"))
            })
    }
}

/// Follows the replicated state until shutdown (see the module docs).
/// `txns` keeps the transaction coordinator in step with the cluster's
/// transaction state.
pub async fn reconcile_forever(broker: Arc<Broker>, node: Arc<ClusterNode>, txns: Arc<RaftTxns>) {
    let mut applied = node.applied();
    let mut groups_version = None;
    let mut txns_version = None;
    let mut coordinated = None;
    let mut last_trust_write = Instant::now();
    loop {
        // Read before the copy: a copy taken once caught up holds this
        // broker's registration and everything committed before it.
        let caught_up = node.caught_up();
        let snapshot = node.state().clone();
        // The groups first: a coordinator change is visible in the
        // replicated state at once, and the new coordinator would answer
        // from its older copy of the offsets while the topics reconcile.
        if groups_version != Some(snapshot.groups_version) {
            groups_version = Some(snapshot.groups_version);
            broker
                .groups
                .sync_durable(snapshot.durable_groups(), snapshot.groups_version)
                .await;
        }
        reconcile(&broker, &node, &snapshot).await;
        if txns_version != Some(snapshot.txns_version) {
            txns_version = Some(snapshot.txns_version);
            txns.sync_from_cluster(&broker.txns, &snapshot.txns, snapshot.txns_version);
        }
        if caught_up {
            node.coordinators_synced();
        }
        // The groups this broker coordinates: it takes their membership
        // over (restored members' sessions start now) and drops the rest.
        let owners = (
            snapshot.groups_version,
            snapshot.active_brokers(),
            node.may_coordinate(),
        );
        if coordinated != Some(owners.clone()) {
            let owned: BTreeSet<String> = if owners.2 {
                snapshot
                    .groups
                    .keys()
                    .filter(|g| super::groups::coordinator_of(&snapshot, g) == Some(node.node_id()))
                    .cloned()
                    .collect()
            } else {
                BTreeSet::new()
            };
            broker.groups.sync_ownership(&owned).await;
            coordinated = Some(owners);
        }
        if last_trust_write.elapsed() >= TRUST_WRITE_INTERVAL {
            last_trust_write = Instant::now();
            persist_trust(&node).await;
        }
        tokio::select! {
            _ = broker.shutdown.cancelled() => break,
            changed = applied.changed() => if changed.is_err() { break },
        }
    }
    for (_, role) in lock(&node.replication.roles).drain() {
        if let Role::Leader { stop, .. } = role {
            stop.cancel();
        }
    }
    persist_trust(&node).await;
}

/// How often the reconciler writes the trusted offsets (when they rose).
const TRUST_WRITE_INTERVAL: Duration = Duration::from_secs(1);

/// Writes the trusted offsets if they rose (off the async threads).
async fn persist_trust(node: &Arc<ClusterNode>) {
    let node = Arc::clone(node);
    let written = tokio::task::spawn_blocking(move || node.replication.trust.persist()).await;
    if let Ok(Err(e)) = written {
        warn!(error = %e, "cannot write the replica trust file");
    }
}

async fn reconcile(broker: &Arc<Broker>, node: &Arc<ClusterNode>, state: &ClusterState) {
    // Topics: materialize what the cluster defines, drop what it deleted.
    for (name, topic) in &state.topics {
        let local = broker.topics.get(name);
        if local
            .as_ref()
            .map_or(true, |t| !same_policy(&t.def, &topic.def))
        {
            if let Err(e) = broker.topics.create(&full_patch(&topic.def)).await {
                warn!(topic = %name, error = %e.render(), "cannot materialize the topic");
            }
        }
        // A TRUNCATE this broker has not carried out yet (one epoch per
        // pass; the local epoch catches up with the cluster's).
        if let Some(local) = broker.topics.get(name) {
            if local.def.lifecycle_epoch < topic.def.lifecycle_epoch {
                forget_trust(node, name).await;
                if let Err(e) = broker.topics.truncate(name, local.def.revision).await {
                    warn!(topic = %name, error = %e.render(), "cannot truncate the local copy");
                }
            }
        }
    }
    for local in broker.topics.list() {
        let name = &local.def.name;
        if !crate::topics::is_internal_topic(name) && !state.topics.contains_key(name) {
            forget_trust(node, name).await;
            if let Err(e) = broker.topics.delete(name, true).await {
                warn!(topic = %name, error = %e.render(), "cannot remove a deleted topic");
            }
        }
    }
    // Leaders: read_committed readers stop at the committed HWM.
    let me = node.node_id();
    for (name, topic) in &state.topics {
        let Some(local) = broker.topics.get(name) else {
            continue;
        };
        for (id, p) in topic.partitions.iter().enumerate() {
            if p.leader == Some(me) {
                if let Some(part) = local.partition(id as u32) {
                    part.set_commit_limit(p.committed_hwm);
                }
            }
        }
    }
    // Roles: none before this broker's copy has caught up (a restarted
    // broker's copy may still name it leader of what moved meanwhile).
    if !node.caught_up() {
        return;
    }
    // Roles.
    let mut wanted: BTreeMap<Key, (Option<NodeId>, u64)> = BTreeMap::new();
    for (name, topic) in &state.topics {
        for (id, p) in topic.partitions.iter().enumerate() {
            if p.replicas.contains(&me) {
                wanted.insert((name.clone(), id as u32), (p.leader, p.leader_epoch));
            }
        }
    }
    let mut roles = lock(&node.replication.roles);
    raise_trust(&node.replication.trust, &roles, state);
    roles.retain(|key, role| {
        let keep = match (wanted.get(key), &*role) {
            (Some((Some(l), e)), Role::Leader { epoch, .. }) => *l == me && e == epoch,
            (Some((Some(l), e)), Role::Follower { epoch, leader, .. }) => l == leader && e == epoch,
            _ => false,
        };
        if !keep {
            if let Role::Leader { stop, .. } = role {
                stop.cancel();
            }
        }
        keep
    });
    for (key, (leader, epoch)) in wanted {
        let Some(leader) = leader else { continue };
        if roles.contains_key(&key) {
            continue;
        }
        if leader == me {
            let stop = CancellationToken::new();
            let (progress, _) = watch::channel(0);
            let follower_leo = Arc::new(Mutex::new(HashMap::new()));
            roles.insert(
                key.clone(),
                Role::Leader {
                    epoch,
                    serving: false,
                    stop: stop.clone(),
                },
            );
            tokio::spawn(lead(
                Arc::clone(broker),
                Arc::clone(node),
                key,
                epoch,
                follower_leo,
                progress,
                stop,
            ));
        } else {
            roles.insert(
                key.clone(),
                Role::Follower {
                    epoch,
                    leader,
                    ready: false,
                    verified: 0,
                },
            );
            tokio::spawn(follow(Arc::clone(broker), Arc::clone(node), key, epoch));
        }
    }
}

/// The local copy matches the cluster's definition (revisions and
/// lifecycle epochs are counted per broker and may differ).
fn same_policy(local: &TopicDefinition, cluster: &TopicDefinition) -> bool {
    let strip = |d: &TopicDefinition| TopicDefinition {
        revision: 0,
        lifecycle_epoch: 0,
        ..d.clone()
    };
    strip(local) == strip(cluster)
}

/// A patch stating every field of `def` (materializing a cluster topic
/// with the local registry's CREATE).
fn full_patch(def: &TopicDefinition) -> TopicPatch {
    TopicPatch {
        name: def.name.clone(),
        partitions: Some(def.partitions),
        idempotent: Some(def.idempotent),
        event_sourcing: Some(def.event_sourcing),
        aggregate_replay: Some(def.aggregate_replay),
        replication_factor: Some(def.replication_factor),
        min_in_sync_replicas: Some(match def.min_in_sync_replicas {
            Some(n) => crate::topics::MinIsr::Value(n),
            None => crate::topics::MinIsr::Default,
        }),
        cleanup_policy: Some(def.cleanup_policy),
        retention_hours: Some(def.retention_hours),
        retention_bytes: Some(def.retention_bytes),
        partitioner: Some(def.partitioner),
        auth_policy: Some(def.auth_policy),
        read_acl: Some(def.read_acl.clone()),
        write_acl: Some(def.write_acl.clone()),
    }
}

/// Becomes a follower: rebuild the partition's state, then accept the
/// leader's entries, trusting the log up to the trusted offset only (the
/// rest is compared with the leader's entries as they come).
async fn follow(broker: Arc<Broker>, node: Arc<ClusterNode>, key: Key, epoch: u64) {
    let (topic, partition) = (&key.0, key.1);
    if let Err(e) = broker.topics.reset_partition(topic, partition, None).await {
        warn!(%topic, partition, error = %e.render(), "cannot become a follower");
        return;
    }
    let leo = live_partition(&broker, topic, partition).map_or(0, |p| p.log().log_end_offset());
    let trusted = node.replication.trust.get(topic, partition).min(leo);
    debug!(%topic, partition, epoch, trusted, leo, "following");
    if let Some(Role::Follower {
        epoch: e,
        ready,
        verified,
        ..
    }) = lock(&node.replication.roles).get_mut(&key)
    {
        if *e == epoch {
            *ready = true;
            *verified = trusted;
        }
    }
}

/// Raises the trusted offsets (see [`super::trust`]) from the replicated
/// state `state`: to the committed high-water mark of a partition this
/// broker leads and serves in the state's epoch, and, for a follower of
/// that epoch, to the part of the mark its log verified.
fn raise_trust(
    trust: &super::trust::ReplicaTrust,
    roles: &HashMap<Key, Role>,
    state: &ClusterState,
) {
    for ((topic, partition), role) in roles {
        let Some(p) = state.partition(topic, *partition) else {
            continue;
        };
        let trusted = match role {
            Role::Leader {
                epoch,
                serving: true,
                ..
            } if *epoch == p.leader_epoch => p.committed_hwm,
            Role::Follower {
                epoch,
                ready: true,
                verified,
                ..
            } if *epoch == p.leader_epoch => p.committed_hwm.min(*verified),
            _ => continue,
        };
        trust.raise(topic, *partition, trusted);
    }
}

/// Forgets `topic`'s trusted offsets before its local log is truncated or
/// deleted.
async fn forget_trust(node: &Arc<ClusterNode>, topic: &str) {
    let (node, name) = (Arc::clone(node), topic.to_owned());
    let forgotten =
        tokio::task::spawn_blocking(move || node.replication.trust.forget_topic(&name)).await;
    if let Ok(Err(e)) = forgotten {
        warn!(%topic, error = %e, "cannot write the replica trust file");
    }
}

/// Leads a partition: rebuild its state, then replicate to the other
/// replicas and commit the high-water mark until `stop`.
async fn lead(
    broker: Arc<Broker>,
    node: Arc<ClusterNode>,
    key: Key,
    epoch: u64,
    follower_leo: Arc<Mutex<HashMap<NodeId, u64>>>,
    progress: watch::Sender<u64>,
    stop: CancellationToken,
) {
    let (topic, partition) = (key.0.clone(), key.1);
    if let Err(e) = broker.topics.reset_partition(&topic, partition, None).await {
        warn!(%topic, partition, error = %e.render(), "cannot become the leader");
        return;
    }
    // The read bound first, then serving: no reader sees past the HWM.
    let (committed, producers) = node
        .state()
        .partition(&topic, partition)
        .map_or((0, BTreeMap::new()), |p| {
            (p.committed_hwm, p.producers.clone())
        });
    if let Some(part) = live_partition(&broker, &topic, partition) {
        adopt_committed_producers(&part, &producers).await;
        part.set_commit_limit(committed);
        part.serve_leader_epoch(epoch);
    }
    match lock(&node.replication.roles).get_mut(&key) {
        Some(Role::Leader {
            epoch: e, serving, ..
        }) if *e == epoch => *serving = true,
        _ => return,
    }
    info!(%topic, partition, epoch, "leading");
    let replicas = node
        .state()
        .partition(&topic, partition)
        .map(|p| p.replicas.clone())
        .unwrap_or_default();
    for follower in replicas.into_iter().filter(|n| *n != node.node_id()) {
        tokio::spawn(replicate_to(
            Arc::clone(&broker),
            Arc::clone(&node),
            key.clone(),
            epoch,
            follower,
            Arc::clone(&follower_leo),
            progress.clone(),
            stop.clone(),
        ));
    }
    commit_hwm(broker, node, key, epoch, follower_leo, progress, stop).await;
}

/// One follower's replicator.
#[allow(clippy::too_many_arguments)]
async fn replicate_to(
    broker: Arc<Broker>,
    node: Arc<ClusterNode>,
    key: Key,
    epoch: u64,
    follower: NodeId,
    follower_leo: Arc<Mutex<HashMap<NodeId, u64>>>,
    progress: watch::Sender<u64>,
    stop: CancellationToken,
) {
    let (topic, partition) = (&key.0, key.1);
    // Where the follower's log ends; unknown until its first answer.
    let mut next: Option<u64> = None;
    while !stop.is_cancelled() {
        let Some(part) = live_partition(&broker, topic, partition) else {
            return;
        };
        let mut signal = part.subscribe();
        let durable = part.log().durable_offset();
        let from = next.unwrap_or(durable).min(durable);
        let leader_end = part.log().log_end_offset();
        if next == Some(durable) {
            // Up to date: wait for new data (or probe now and then).
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = signal.changed() => {}
                _ = tokio::time::sleep(IDLE_PROBE) => {}
            }
            if next != Some(part.log().durable_offset()) || signal.borrow().closed {
                continue;
            }
            // Nothing new: an empty probe keeps the follower's answer fresh.
        }
        let entries = match part.log().read(from, MAX_BATCH_RECORDS, MAX_BATCH_BYTES) {
            Ok(records) => records,
            Err(e) => {
                debug!(%topic, partition, error = %e, "replicator read failed");
                pause(&stop).await;
                continue;
            }
        };
        let body = encode_request(
            &ReplicateHeader {
                topic: topic.clone(),
                partition,
                leader: node.node_id(),
                leader_epoch: epoch,
                base_offset: from,
                leader_end,
            },
            entries.iter().map(|r| (r.timestamp, &r.data)),
        );
        let Some(addr) = node.peer_addr(follower) else {
            return;
        };
        match node
            .peers
            .get(&addr)
            .request(Command::ReplicateMessage, body)
            .await
        {
            Ok(answer) => match serde_json::from_slice::<ReplicateAnswer>(&answer) {
                Ok(a) => {
                    next = Some(a.leo);
                    lock(&follower_leo).insert(follower, a.leo);
                    progress.send_modify(|n| *n += 1);
                }
                Err(_) => pause(&stop).await,
            },
            Err(TransportError::Remote { error, .. })
                if error.code == "replica_offset_mismatch" =>
            {
                next = error.fields.get("leo").and_then(|v| v.parse().ok());
                if next.is_none() {
                    pause(&stop).await;
                }
            }
            Err(e) => {
                debug!(%topic, partition, follower, error = %e, "replication request failed");
                // Its last answer is no evidence any more: a dead follower
                // whose old log end reached the committed mark would
                // otherwise rejoin the ISR on every pass of the committer
                // and hold the high-water mark (acks=all) up for good.
                if lock(&follower_leo).remove(&follower).is_some() {
                    progress.send_modify(|n| *n += 1);
                }
                pause(&stop).await;
            }
        }
    }
}

async fn pause(stop: &CancellationToken) {
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = tokio::time::sleep(RETRY_DELAY) => {}
    }
}

/// Commits the high-water mark and keeps the ISR honest.
async fn commit_hwm(
    broker: Arc<Broker>,
    node: Arc<ClusterNode>,
    key: Key,
    epoch: u64,
    follower_leo: Arc<Mutex<HashMap<NodeId, u64>>>,
    progress: watch::Sender<u64>,
    stop: CancellationToken,
) {
    let (topic, partition) = (&key.0, key.1);
    let me = node.node_id();
    let mut progress_rx = progress.subscribe();
    // When each follower was last caught up with the leader.
    let mut caught_up: HashMap<NodeId, Instant> = HashMap::new();
    let started = Instant::now();
    loop {
        let Some(part) = live_partition(&broker, topic, partition) else {
            return;
        };
        let mut signal = part.subscribe();
        let durable = part.log().durable_offset();
        let Some(p) = node.state().partition(topic, partition).cloned() else {
            return;
        };
        if p.leader_epoch != epoch {
            return;
        }
        // Only active brokers' answers count: one that left (a clean
        // stop) or missed its session may have answered just before, and
        // must not rejoin the ISR on that answer.
        let leos: HashMap<NodeId, u64> = {
            let state = node.state();
            let active = |n: &NodeId| state.brokers.get(n).is_some_and(|b| b.active);
            lock(&follower_leo)
                .iter()
                .filter(|(n, _)| active(n))
                .map(|(n, l)| (*n, *l))
                .collect()
        };
        let now = Instant::now();
        for (f, leo) in &leos {
            if *leo >= durable {
                caught_up.insert(*f, now);
            }
        }
        let lagging_since = |n: NodeId| {
            let last = caught_up.get(&n).copied().unwrap_or(started);
            now.duration_since(last)
        };
        let next = next_commit_step(
            &p,
            me,
            durable,
            &leos,
            lagging_since,
            node.config.session_timeout,
        );
        let change = match next {
            CommitStep::Idle => None,
            CommitStep::Isr {
                isr,
                lagging,
                joining,
            } => {
                info!(%topic, partition, ?lagging, ?joining, "changing the ISR");
                Some(FsmCommand::SetIsr {
                    topic: topic.clone(),
                    partition,
                    leader_epoch: epoch,
                    isr,
                })
            }
            CommitStep::Advance(hwm) => Some(FsmCommand::AdvanceHwm {
                topic: topic.clone(),
                partition,
                leader_epoch: epoch,
                hwm,
                producers: producers_between(&part, p.committed_hwm, hwm).await,
            }),
        };
        if let Some(cmd) = change {
            if let Err(e) = node.propose(cmd).await {
                debug!(%topic, partition, error = %e.render(), "commit not applied");
                pause(&stop).await;
            }
            if stop.is_cancelled() {
                return;
            }
            continue;
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = signal.changed() => {}
            _ = progress_rx.changed() => {}
            _ = tokio::time::sleep(node.config.heartbeat_interval) => {}
        }
    }
}

/// What the leader's committer proposes next.
#[derive(Debug, PartialEq, Eq)]
enum CommitStep {
    /// Nothing to change.
    Idle,
    /// A new ISR: followers that lagged longer than the session timeout
    /// leave it, followers whose log reached the committed high-water
    /// mark join it.
    Isr {
        isr: Vec<NodeId>,
        lagging: Vec<NodeId>,
        joining: Vec<NodeId>,
    },
    /// A higher committed high-water mark.
    Advance(u64),
}

/// The committer's next step for partition state `p` led by `me`, whose
/// log is durable up to `durable`, given each follower's log end (`leos`)
/// and how long it has not been caught up (`lagging_since`).
///
/// A follower joins once its log reaches the committed high-water mark
/// (the next advance then waits for it), and an ISR change goes first:
/// under steady writes the high-water mark advances on every pass and the
/// in-sync replicas' log ends move ahead of it, so a follower that caught
/// up must neither wait for a pass in which the mark does not move nor
/// have to overtake the others' log ends (either kept it out of the ISR
/// for as long as producers wrote).
fn next_commit_step(
    p: &super::fsm::PartitionState,
    me: NodeId,
    durable: u64,
    leos: &HashMap<NodeId, u64>,
    lagging_since: impl Fn(NodeId) -> Duration,
    session_timeout: Duration,
) -> CommitStep {
    let leo = |n: &NodeId| match *n == me {
        true => durable,
        false => leos.get(n).copied().unwrap_or(0),
    };
    let hwm = p.isr.iter().map(leo).min().unwrap_or(durable);
    let lagging: Vec<NodeId> = p
        .isr
        .iter()
        .copied()
        .filter(|n| *n != me && lagging_since(*n) > session_timeout)
        .collect();
    let joining: Vec<NodeId> = p
        .replicas
        .iter()
        .copied()
        .filter(|n| !p.isr.contains(n))
        .filter(|n| leos.get(n).is_some_and(|l| *l >= p.committed_hwm))
        .collect();
    if !joining.is_empty() || (!lagging.is_empty() && hwm <= p.committed_hwm) {
        let lagging = match hwm > p.committed_hwm {
            // The HWM still advances with them: they are not holding it up.
            true => Vec::new(),
            false => lagging,
        };
        let isr = p
            .replicas
            .iter()
            .copied()
            .filter(|n| (p.isr.contains(n) && !lagging.contains(n)) || joining.contains(n))
            .collect();
        return CommitStep::Isr {
            isr,
            lagging,
            joining,
        };
    }
    if hwm > p.committed_hwm {
        CommitStep::Advance(hwm)
    } else {
        CommitStep::Idle
    }
}

/// Encodes a REPLICATE_MESSAGE body: `u32` header length, the JSON header,
/// then per entry `i64` timestamp, `u32` length and the record bytes.
fn encode_request<'a>(
    header: &ReplicateHeader,
    entries: impl Iterator<Item = (i64, &'a Bytes)>,
) -> Bytes {
    let json = serde_json::to_vec(header).unwrap_or_default();
    let mut out = BytesMut::with_capacity(4 + json.len());
    out.put_u32(json.len() as u32);
    out.put_slice(&json);
    for (ts, data) in entries {
        out.put_i64(ts);
        out.put_u32(data.len() as u32);
        out.put_slice(data);
    }
    out.freeze()
}

fn malformed(reason: &str) -> ErrorPayload {
    ErrorPayload::new("malformed_input").with_field("reason", reason)
}

/// Decodes what [`encode_request`] wrote; every length is checked.
fn decode_request(mut body: Bytes) -> Result<(ReplicateHeader, Vec<(i64, Bytes)>), ErrorPayload> {
    if body.remaining() < 4 {
        return Err(malformed("short replicate header"));
    }
    let len = body.get_u32() as usize;
    if body.remaining() < len {
        return Err(malformed("short replicate header"));
    }
    let header: ReplicateHeader =
        serde_json::from_slice(&body.split_to(len)).map_err(|e| malformed(&e.to_string()))?;
    let mut entries = Vec::new();
    while body.has_remaining() {
        if body.remaining() < 12 {
            return Err(malformed("short replicate entry"));
        }
        let ts = body.get_i64();
        let len = body.get_u32() as usize;
        if body.remaining() < len {
            return Err(malformed("short replicate entry"));
        }
        entries.push((ts, body.split_to(len)));
    }
    Ok((header, entries))
}

/// Answers broker-to-broker commands other than Raft and heartbeats.
pub struct BrokerHandler {
    /// The broker (weak: the listener must not keep it alive).
    pub broker: Weak<Broker>,
    /// The cluster node, once it has started (weak, likewise).
    pub node: OnceLock<Weak<ClusterNode>>,
}

impl ClusterHandler for BrokerHandler {
    fn handle(&self, command: Command, body: Bytes) -> BoxFuture<'_, Result<Bytes, ErrorPayload>> {
        Box::pin(async move {
            let broker = self
                .broker
                .upgrade()
                .ok_or_else(|| ErrorPayload::new("broker_shutting_down"))?;
            let node = || {
                self.node
                    .get()
                    .and_then(Weak::upgrade)
                    .ok_or_else(|| ErrorPayload::new("cluster_metadata_unavailable"))
            };
            match command {
                Command::ReplicateMessage => replicate_message(&broker, &*node()?, body).await,
                Command::ReplicateSnapshot => store_snapshot(&broker, &*node()?, body).await,
                Command::InternalBatch => {
                    let placement = super::placement::Clustered {
                        node: node()?,
                        broker: self.broker.clone(),
                    };
                    super::participants::serve(&placement, &broker, body).await
                }
                Command::ListOffsets => super::offsets::serve(&broker, &*node()?, &body),
                Command::GroupStatus => super::groups::serve_removal_check(&broker, &body).await,
                other => {
                    Err(ErrorPayload::new("unknown_command").with_field("command", other.name()))
                }
            }
        })
    }
}

/// A follower receiving entries.
async fn replicate_message(
    broker: &Arc<Broker>,
    node: &ClusterNode,
    body: Bytes,
) -> Result<Bytes, ErrorPayload> {
    let (h, entries) = decode_request(body)?;
    {
        let state = node.state();
        let p = state.partition(&h.topic, h.partition).ok_or_else(|| {
            ErrorPayload::new("partition_metadata_not_found")
                .with_field("topic", &h.topic)
                .with_field("partition", h.partition)
        })?;
        if h.leader_epoch != p.leader_epoch {
            return Err(ErrorPayload::new("STALE_LEADER_EPOCH")
                .with_field("current", p.leader_epoch)
                .with_field("requested", h.leader_epoch));
        }
        if p.leader != Some(h.leader) {
            return Err(ErrorPayload::new("NOT_PARTITION_LEADER")
                .with_field(
                    "leader",
                    p.leader.map_or_else(String::new, |l| l.to_string()),
                )
                .with_field("requested_leader", h.leader));
        }
    }
    let key = (h.topic.clone(), h.partition);
    let verified = match lock(&node.replication.roles).get(&key) {
        Some(Role::Follower {
            epoch,
            ready: true,
            verified,
            ..
        }) if *epoch == h.leader_epoch => *verified,
        _ => {
            return Err(ErrorPayload::new("cluster_metadata_unavailable")
                .with_field("reason", "replica not ready for this epoch"))
        }
    };
    if h.base_offset > verified {
        return Err(mismatch(verified));
    }
    // Below `verified` the log is known to be the leader's.
    let skip = usize::try_from(verified - h.base_offset).unwrap_or(usize::MAX);
    let mut rest: Vec<(i64, Bytes)> = entries.into_iter().skip(skip).collect();
    let mut at = verified;
    let mut part = live_partition(broker, &h.topic, h.partition)
        .ok_or_else(|| ErrorPayload::new("partition_metadata_not_found"))?;
    let leo = part.log().log_end_offset();
    if !rest.is_empty() && at < leo {
        // What this log holds there may be another leader's: compare.
        let overlap = rest
            .len()
            .min(usize::try_from(leo - at).unwrap_or(usize::MAX));
        let held = part
            .log()
            .read(at, overlap, 2 * MAX_BATCH_BYTES)
            .map_err(|e| {
                ErrorPayload::new("replica_append_failed").with_field("reason", e.to_string())
            })?;
        let same = held
            .iter()
            .zip(&rest)
            .enumerate()
            .take_while(|(i, (mine, (ts, data)))| {
                mine.offset == at + *i as u64 && mine.timestamp == *ts && mine.data == *data
            })
            .count();
        at += same as u64;
        rest.drain(..same);
        if !rest.is_empty() && same < held.len() {
            // The first entry that differs: what follows is not the history.
            info!(topic = %h.topic, partition = h.partition, offset = at, log_end = leo,
                "replica log differs from the leader's; truncating");
            broker
                .topics
                .reset_partition(&h.topic, h.partition, Some(at))
                .await?;
            part = live_partition(broker, &h.topic, h.partition)
                .ok_or_else(|| ErrorPayload::new("partition_metadata_not_found"))?;
        } else if !rest.is_empty() {
            // Compared as far as one read goes: the leader resends the rest.
            rest.clear();
        }
    }
    if !rest.is_empty() {
        match part.append_replica(rest, at).await {
            Ok(info) => at = info.last_offset + 1,
            Err(ReplicaAppendError::OffsetMismatch { .. }) => {
                set_verified(node, &key, h.leader_epoch, at);
                return Err(mismatch(at));
            }
            Err(e) => {
                return Err(
                    ErrorPayload::new("replica_append_failed").with_field("reason", e.to_string())
                )
            }
        }
    }
    if at == h.leader_end && part.log().log_end_offset() > at {
        // The leader's log ends here: the rest is no epoch's history.
        broker
            .topics
            .reset_partition(&h.topic, h.partition, Some(at))
            .await?;
    }
    set_verified(node, &key, h.leader_epoch, at);
    let answer = serde_json::to_vec(&ReplicateAnswer { leo: at }).unwrap_or_default();
    Ok(Bytes::from(answer))
}

/// Records that `key`'s log equals the leader's up to `offset`, if this
/// broker still follows it in `epoch`.
fn set_verified(node: &ClusterNode, key: &Key, epoch: u64, offset: u64) {
    if let Some(Role::Follower {
        epoch: e, verified, ..
    }) = lock(&node.replication.roles).get_mut(key)
    {
        if *e == epoch {
            *verified = offset;
        }
    }
}

/// The body of REPLICATE_SNAPSHOT.
#[derive(Debug, Serialize, Deserialize)]
struct SnapshotCopy {
    topic: String,
    partition: u32,
    leader: NodeId,
    leader_epoch: u64,
    key: String,
    version: u64,
    payload: String,
}

/// SAVE_SNAPSHOT on a leader: sends the snapshot to every other in-sync
/// replica and waits for all of them (`snapshot_replicate_failed`
/// otherwise), so a follower promoted later serves it.
pub async fn replicate_snapshot(
    node: &ClusterNode,
    topic: &str,
    partition: u32,
    key: &str,
    version: u64,
    payload: &str,
) -> Result<(), ErrorPayload> {
    let (isr, epoch) = match node.state().partition(topic, partition) {
        Some(p) => (p.isr.clone(), p.leader_epoch),
        None => return Ok(()),
    };
    let copy = SnapshotCopy {
        topic: topic.to_string(),
        partition,
        leader: node.node_id(),
        leader_epoch: epoch,
        key: key.to_string(),
        version,
        payload: payload.to_string(),
    };
    let body = Bytes::from(serde_json::to_vec(&copy).unwrap_or_default());
    let sends = isr
        .into_iter()
        .filter(|n| *n != node.node_id())
        .filter_map(|n| node.peer_addr(n))
        .map(|addr| {
            let client = node.peers.get(&addr);
            let body = body.clone();
            async move { client.request(Command::ReplicateSnapshot, body).await }
        });
    for result in futures_util::future::join_all(sends).await {
        result.map_err(|e| {
            ErrorPayload::new("snapshot_replicate_failed").with_field("reason", e.to_string())
        })?;
    }
    Ok(())
}

/// A follower storing a leader's snapshot (fenced like entries).
async fn store_snapshot(
    broker: &Arc<Broker>,
    node: &ClusterNode,
    body: Bytes,
) -> Result<Bytes, ErrorPayload> {
    let copy: SnapshotCopy =
        serde_json::from_slice(&body).map_err(|e| malformed(&e.to_string()))?;
    {
        let state = node.state();
        let p = state
            .partition(&copy.topic, copy.partition)
            .ok_or_else(|| ErrorPayload::new("partition_metadata_not_found"))?;
        if p.leader_epoch != copy.leader_epoch || p.leader != Some(copy.leader) {
            return Err(ErrorPayload::new("STALE_LEADER_EPOCH")
                .with_field("current", p.leader_epoch)
                .with_field("requested", copy.leader_epoch));
        }
    }
    let store = broker
        .topics
        .get(&copy.topic)
        .and_then(|t| t.snapshots.clone())
        .ok_or_else(|| {
            ErrorPayload::new("event_sourcing_not_enabled").with_field("topic", &copy.topic)
        })?;
    let snapshot = crate::eventsource::Snapshot {
        version: copy.version,
        payload: copy.payload,
    };
    let (id, key) = (copy.partition, copy.key);
    crate::topics::partition::blocking(move || store.save(id, &key, snapshot))
        .await
        .map_err(|e| {
            ErrorPayload::new("snapshot_save_failed").with_field("reason", e.to_string())
        })?;
    Ok(Bytes::from_static(b"OK"))
}

/// The current generation of `topic`/`partition` on this broker.
/// The idempotent producers whose newest record lies in `[from, to)`: the
/// sequences an HWM advance to `to` commits.
async fn producers_between(
    part: &crate::topics::Partition,
    from: u64,
    to: u64,
) -> Vec<(String, ProducerSeq)> {
    let table = part.writer.lock().await;
    table
        .entries()
        .filter(|(_, e)| (from..to).contains(&e.last_offset))
        .map(|(id, e)| {
            let seq = ProducerSeq {
                epoch: e.epoch,
                last_seq: e.last_seq,
                last_offset: e.last_offset,
            };
            (id.to_owned(), seq)
        })
        .collect()
}

/// A new leader takes over the producer sequences the replicated state
/// holds for the partition (newer ones it rebuilt from its log win).
async fn adopt_committed_producers(
    part: &crate::topics::Partition,
    committed: &BTreeMap<String, ProducerSeq>,
) {
    let mut table = part.writer.lock().await;
    for (id, seq) in committed {
        // Compare with the durable checkpoint too, not only memory.
        if let Err(e) = table.fetch(id) {
            warn!(producer = %id, error = %e, "producer checkpoint unreadable");
        }
        table.observe(id, seq.epoch, seq.last_seq, seq.last_offset);
    }
}

fn live_partition(
    broker: &Broker,
    topic: &str,
    partition: u32,
) -> Option<Arc<crate::topics::Partition>> {
    broker.topics.get(topic)?.partition(partition).cloned()
}

fn mismatch(leo: u64) -> ErrorPayload {
    ErrorPayload::new("replica_offset_mismatch").with_field("leo", leo)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fsm::PartitionState;

    /// Partition led by node 1 with replicas 1, 2, 3.
    fn led_by_1(isr: &[NodeId], committed_hwm: u64) -> PartitionState {
        PartitionState {
            replicas: vec![1, 2, 3],
            isr: isr.to_vec(),
            leader: Some(1),
            leader_epoch: 4,
            committed_hwm,
            committed_hwm_version: 1,
            producers: BTreeMap::new(),
            target_replicas: None,
        }
    }

    const SESSION: Duration = Duration::from_secs(1);

    #[test]
    fn a_follower_that_caught_up_rejoins_the_isr_while_the_hwm_advances() {
        // Regression (found by the nemesis): under steady writes the HWM
        // advanced on every pass and the ISR change waited for a pass in
        // which it did not, keeping a caught-up follower out for as long
        // as producers wrote.
        let p = led_by_1(&[1, 2], 100);
        let leos = HashMap::from([(2, 120), (3, 110)]);
        let step = next_commit_step(&p, 1, 130, &leos, |_| Duration::ZERO, SESSION);
        assert_eq!(
            step,
            CommitStep::Isr {
                isr: vec![1, 2, 3],
                lagging: vec![],
                joining: vec![3],
            }
        );
        // Once it is in, the HWM advances to the smallest log end.
        let p = led_by_1(&[1, 2, 3], 100);
        let step = next_commit_step(&p, 1, 130, &leos, |_| Duration::ZERO, SESSION);
        assert_eq!(step, CommitStep::Advance(110));
    }

    #[test]
    fn a_follower_below_the_hwm_does_not_join() {
        let p = led_by_1(&[1, 2], 100);
        let leos = HashMap::from([(2, 120), (3, 99)]);
        let step = next_commit_step(&p, 1, 130, &leos, |_| Duration::ZERO, SESSION);
        assert_eq!(step, CommitStep::Advance(120));
    }

    #[test]
    fn a_lagging_follower_leaves_only_when_it_holds_the_hwm_back() {
        let long = |n: NodeId| match n {
            3 => SESSION * 2,
            _ => Duration::ZERO,
        };
        // It still moves: the HWM advances with it.
        let p = led_by_1(&[1, 2, 3], 100);
        let leos = HashMap::from([(2, 120), (3, 105)]);
        assert_eq!(
            next_commit_step(&p, 1, 130, &leos, long, SESSION),
            CommitStep::Advance(105)
        );
        // Stuck at the HWM longer than a session: it leaves.
        let leos = HashMap::from([(2, 120), (3, 100)]);
        assert_eq!(
            next_commit_step(&p, 1, 130, &leos, long, SESSION),
            CommitStep::Isr {
                isr: vec![1, 2],
                lagging: vec![3],
                joining: vec![],
            }
        );
        // Caught up recently: nothing to do.
        let leos = HashMap::from([(2, 100), (3, 100)]);
        assert_eq!(
            next_commit_step(&p, 1, 100, &leos, |_| Duration::ZERO, SESSION),
            CommitStep::Idle
        );
    }

    #[test]
    fn request_round_trips_and_rejects_truncation() {
        let h = ReplicateHeader {
            topic: "t".into(),
            partition: 2,
            leader: 1,
            leader_epoch: 3,
            base_offset: 10,
            leader_end: 12,
        };
        let data = [Bytes::from_static(b"abc"), Bytes::new()];
        let body = encode_request(&h, data.iter().map(|d| (7i64, d)));
        let (back, entries) = decode_request(body.clone()).unwrap();
        assert_eq!(
            (back.topic.as_str(), back.partition, back.base_offset),
            ("t", 2, 10)
        );
        assert_eq!(entries, vec![(7, data[0].clone()), (7, Bytes::new())]);
        for cut in [0, 3, 5, body.len() - 1] {
            assert!(decode_request(body.slice(..cut)).is_err(), "cut at {cut}");
        }
    }
}
