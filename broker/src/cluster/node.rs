//! One broker's membership in the cluster: the Raft node, the peer
//! connections, registration (JOIN_CLUSTER, `cluster::membership`),
//! heartbeats and, on the Raft leader, the monitor that marks silent
//! brokers inactive (which moves leadership of their partitions,
//! `fsm::ClusterState::apply`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use cursus_wire::{Command, ErrorPayload};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info, warn};

use super::config::ClusterConfig;
use super::contact::{Contact, HeartbeatAnswer};
use super::fsm::{BrokerEntry, ClusterState, FsmCommand, FsmReply, NodeId};
use super::internal_tls::InternalTls;
use super::membership;
use super::raft::{RaftNode, RaftNodeConfig};
use super::replication::Replication;
use super::transport::{self, BoxFuture, ClusterHandler, PeerClientConfig, PeerPool};
use crate::broker::{Broker, Listener};

/// Longest a clean stop waits for a successor to take the Raft leadership
/// (with a shorter session timeout, that): the others elect one anyway.
const HAND_OVER_TIMEOUT: Duration = Duration::from_secs(5);

/// The lifecycle protocol version this broker advertises.
pub const LIFECYCLE_PROTOCOL: u32 = 2;

/// A broker's part in the cluster.
pub struct ClusterNode {
    /// The settings.
    pub config: ClusterConfig,
    /// The Raft node holding the replicated metadata.
    pub raft: RaftNode,
    /// The state the Raft node applies to.
    state: Arc<RwLock<ClusterState>>,
    /// Connections to the other brokers' cluster listeners.
    pub peers: PeerPool,
    /// This broker's partition roles and replication.
    pub replication: Replication,
    /// This broker's registration.
    me: BrokerEntry,
    /// When this process started (Unix ms): its registration carries it,
    /// so seeing that registration applied here proves this broker's copy
    /// of the replicated state has caught up with everything before it.
    incarnation: u64,
    /// Set once [`ClusterNode::caught_up`] saw this process's registration.
    caught_up: std::sync::atomic::AtomicBool,
    /// Set once the group and transaction coordinators here hold a copy of
    /// their replicated state taken after [`ClusterNode::caught_up`].
    coordinators_synced: std::sync::atomic::AtomicBool,
    /// Raft leader only: when each broker was last heard from (Unix ms,
    /// compared with the replicated `since_ms` of its status).
    last_seen: Mutex<HashMap<NodeId, u64>>,
    /// Cancelled at shutdown.
    shutdown: CancellationToken,
    /// Serializes membership changes on the Raft leader (openraft takes
    /// one at a time).
    membership: tokio::sync::Mutex<()>,
    /// Why the cluster refused this broker (its join was rejected): the
    /// broker stops serving and exits non-zero.
    refused: Mutex<Option<ErrorPayload>>,
    /// Set when this broker leaves ([`ClusterNode::leave`]): it sends no
    /// more heartbeats, which would make it active again.
    leaving: std::sync::atomic::AtomicBool,
    /// The cluster listener's mutual TLS (`internal_use_tls`), shared
    /// with the listener and the peer clients.
    internal_tls: Option<InternalTls>,
    /// Held while a heartbeat or a registration is on its way, so that
    /// leaving waits for it (a heartbeat that arrives after LEAVE_CLUSTER
    /// would bring this broker back).
    heartbeat_in_flight: tokio::sync::Mutex<()>,
    /// The lease of this broker's contact with the Raft leader: its
    /// coordinators answer only while it holds ([`ClusterNode::in_contact`]).
    contact: Contact,
    /// The groups version the group coordinator's copy reflects.
    groups_synced: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for ClusterNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterNode")
            .field("node_id", &self.config.node_id)
            .finish_non_exhaustive()
    }
}

fn decode<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ErrorPayload> {
    serde_json::from_slice(body)
        .map_err(|e| ErrorPayload::new("malformed_input").with_field("reason", e.to_string()))
}

/// Body of HEARTBEAT_CLUSTER.
#[derive(Debug, Serialize, Deserialize)]
struct Heartbeat {
    node: NodeId,
}

/// Unix time in milliseconds.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl ClusterNode {
    /// Starts the Raft node and the cluster listener on `listener`, then
    /// the background work (registration, heartbeats, the leader's
    /// monitor). `handler` answers the other broker-to-broker commands.
    pub async fn start(
        broker: &Broker,
        config: ClusterConfig,
        listener: TcpListener,
        handler: Arc<dyn ClusterHandler>,
    ) -> Result<Arc<ClusterNode>, String> {
        // Read before anything starts: a bad file stops the broker here.
        let tls = match &config.internal_tls {
            Some(files) => Some(InternalTls::load(files).map_err(|e| format!("cluster: {e}"))?),
            None => None,
        };
        let dial_overrides = Arc::new(config.dial_overrides.clone());
        let raft = RaftNode::start(RaftNodeConfig {
            node_id: config.node_id,
            cluster_addr: config.cluster_addr(),
            peers: config.peers.clone(),
            joins: config.joins_at_run_time(),
            data_dir: broker.config.data_dir.clone(),
            token: config.internal_auth_token.clone(),
            tls: tls.clone(),
            dial_overrides: Arc::clone(&dial_overrides),
            ..RaftNodeConfig::default()
        })
        .await
        .map_err(|e| format!("cluster: {e}"))?;
        let peers = PeerPool::new(PeerClientConfig {
            token: config.internal_auth_token.clone(),
            tls: tls.clone(),
            dial_overrides,
            ..PeerClientConfig::default()
        });
        let me = BrokerEntry {
            broker_id: broker.config.broker_id.clone(),
            cluster_addr: config.cluster_addr(),
            client_addr: broker.advertised.clone(),
            tls_client_addr: broker.tls_advertised.clone(),
            active: true,
            lifecycle_protocol: LIFECYCLE_PROTOCOL,
            since_ms: now_ms(),
            hosts_replicas: config.hosts_replicas,
            txn_shards: config.txn_shards,
        };
        let config_session_timeout = config.session_timeout;
        let node = Arc::new(ClusterNode {
            config,
            state: raft.state(),
            raft,
            peers,
            replication: Replication::new(&broker.config.data_dir),
            incarnation: me.since_ms,
            caught_up: std::sync::atomic::AtomicBool::new(false),
            coordinators_synced: std::sync::atomic::AtomicBool::new(false),
            me,
            last_seen: Mutex::new(HashMap::new()),
            shutdown: broker.shutdown.clone(),
            membership: tokio::sync::Mutex::new(()),
            refused: Mutex::new(None),
            leaving: std::sync::atomic::AtomicBool::new(false),
            internal_tls: tls.clone(),
            heartbeat_in_flight: tokio::sync::Mutex::new(()),
            contact: Contact::new(config_session_timeout),
            groups_synced: std::sync::atomic::AtomicU64::new(0),
        });
        let dispatcher = Arc::new(Dispatcher {
            node: Arc::clone(&node),
            other: handler,
        });
        tokio::spawn(transport::serve_tls(
            listener,
            tls.clone(),
            node.config.internal_auth_token.clone(),
            dispatcher,
            node.shutdown.clone(),
        ));
        tokio::spawn(Arc::clone(&node).heartbeats());
        tokio::spawn(Arc::clone(&node).monitor());
        Ok(node)
    }

    /// Reads the internal TLS files again (SIGHUP): connections made
    /// from now on, both ways, use them; a bad file keeps the previous
    /// configuration (logged). Nothing to do without `internal_use_tls`.
    pub fn reload_internal_tls(&self) {
        if let Some(tls) = &self.internal_tls {
            info!("SIGHUP: reloading the internal TLS configuration");
            let _ = tls.reload();
        }
    }

    /// This broker's node id.
    pub fn node_id(&self) -> NodeId {
        self.config.node_id
    }

    /// The cluster address of broker `node`: its registration, else the
    /// static peers, else the Raft membership (brokers added at run time
    /// are only in the first and the last).
    pub fn peer_addr(&self, node: NodeId) -> Option<String> {
        let registered = self
            .state()
            .brokers
            .get(&node)
            .map(|b| b.cluster_addr.clone())
            .filter(|a| !a.is_empty());
        registered
            .or_else(|| self.config.peers.get(&node).cloned())
            .or_else(|| self.raft.member_addr(node))
    }

    /// Held by the leader while it changes the Raft membership.
    pub(super) fn membership_lock(&self) -> &tokio::sync::Mutex<()> {
        &self.membership
    }

    /// The typed rejection of this broker's JOIN_CLUSTER, once the cluster
    /// refused it (the broker then stops and exits non-zero).
    pub fn refused(&self) -> Option<ErrorPayload> {
        lock(&self.refused).clone()
    }

    /// The replicated state as this node has applied it.
    ///
    /// Never call a method of this node that reads the state again
    /// (`peer_addr`, `client_addr`, `broker_id`, `caught_up`, ...) while
    /// the guard is alive: std's `RwLock` queues a second read behind a
    /// Raft apply waiting to write, which waits for the first read, and the
    /// runtime thread blocks for good.
    pub fn state(&self) -> RwLockReadGuard<'_, ClusterState> {
        read(&self.state)
    }

    /// Notified after every apply on this node.
    pub fn applied(&self) -> watch::Receiver<u64> {
        self.raft.applied()
    }

    /// Proposes `cmd` through Raft (forwarded to the leader) and returns the
    /// FSM's answer; a refusal becomes its typed error.
    pub async fn propose(&self, cmd: FsmCommand) -> Result<FsmReply, ErrorPayload> {
        match self.raft.propose(cmd).await {
            Ok(FsmReply::Rejected { code, reason }) => {
                Err(ErrorPayload::new(&code).with_field("reason", reason))
            }
            Ok(reply) => Ok(reply),
            Err(e) => Err(ErrorPayload::new("cluster_metadata_unavailable")
                .with_field("reason", e.to_string())),
        }
    }

    /// Waits until this node's state satisfies `ready` (after a proposal
    /// made elsewhere, so that this broker answers consistently).
    pub async fn wait_for(
        &self,
        ready: impl Fn(&ClusterState) -> bool,
        timeout: Duration,
    ) -> Result<(), ErrorPayload> {
        let mut applied = self.applied();
        let wait = async {
            loop {
                if ready(&self.state()) {
                    return;
                }
                if applied.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.map_err(|_| {
            ErrorPayload::new("cluster_metadata_unavailable")
                .with_field("reason", "the change was not applied here in time")
        })
    }

    /// True once this broker's copy of the replicated state holds its own
    /// registration of this start (and so everything committed before it).
    /// Until then it leads nothing and coordinates nothing: after a restart
    /// its copy may still say it leads partitions or groups that moved
    /// while it was away.
    pub fn caught_up(&self) -> bool {
        use std::sync::atomic::Ordering;
        if self.caught_up.load(Ordering::Acquire) {
            return true;
        }
        let seen = self
            .state()
            .brokers
            .get(&self.node_id())
            .is_some_and(|b| b.since_ms >= self.incarnation);
        if seen {
            self.caught_up.store(true, Ordering::Release);
        }
        seen
    }

    /// True once this broker may coordinate groups and transactions: it
    /// has [caught up](Self::caught_up) and its coordinators have synced a
    /// copy of the replicated groups and transactions taken after that
    /// (before, a restarted broker would answer from what it held when it
    /// stopped: older committed offsets, older transaction states).
    pub fn may_coordinate(&self) -> bool {
        self.coordinators_synced
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// The reconciler synced the coordinators from a copy taken after
    /// [`caught_up`](Self::caught_up) returned true.
    pub(super) fn coordinators_synced(&self) {
        self.coordinators_synced
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Why this broker cannot serve as a cluster member yet (`/ready`):
    /// no Raft leader known, or not registered and active.
    pub fn not_ready(&self) -> Option<String> {
        if self.raft.leader().is_none() {
            return Some("cluster: no Raft leader known".into());
        }
        if !self.caught_up() || !self.may_coordinate() {
            return Some("cluster: catching up with the replicated state".into());
        }
        if !self.in_contact() {
            return Some("cluster: out of contact with the Raft leader".into());
        }
        let active = self
            .state()
            .brokers
            .get(&self.node_id())
            .is_some_and(|b| b.active);
        if active && !self.needs_registration() {
            None
        } else {
            Some("cluster: not registered yet".into())
        }
    }

    /// The client address of `node` for a client of `listener`.
    pub fn client_addr(&self, node: NodeId, listener: Listener) -> Option<String> {
        self.state().client_addr(node, listener == Listener::Tls)
    }

    /// The broker id string of `node` (its node id if unregistered).
    pub fn broker_id(&self, node: NodeId) -> String {
        self.state().broker_name(node)
    }

    /// Registers this broker (again) and then tells the Raft leader it is
    /// alive every heartbeat interval.
    async fn heartbeats(self: Arc<Self>) {
        let mut registered = false;
        let mut tick = tokio::time::interval(self.config.heartbeat_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let _in_flight = self.heartbeat_in_flight.lock().await;
            if self.leaving.load(std::sync::atomic::Ordering::Acquire) {
                return;
            }
            if !registered || self.needs_registration() {
                let entry = BrokerEntry {
                    since_ms: self.incarnation.max(now_ms()),
                    ..self.me.clone()
                };
                match membership::join(&self, entry).await {
                    Ok(reply) => {
                        registered = true;
                        info!(node = self.node_id(), role = %reply.role, "registered in the cluster");
                    }
                    Err(e) if e.retryable => {
                        debug!(code = %e.code, error = %e, "registration not possible yet")
                    }
                    Err(e) => {
                        // The cluster refused this broker: it must not serve.
                        error!(code = %e.code, error = %e, "the cluster refused this broker's JOIN_CLUSTER; stopping");
                        *lock(&self.refused) = Some(e);
                        self.shutdown.cancel();
                        return;
                    }
                }
                continue;
            }
            let Some(leader) = self.raft.leader() else {
                continue;
            };
            if leader == self.node_id() {
                self.seen(leader);
                self.confirm_leadership().await;
                continue;
            }
            let Some(addr) = self.raft.leader_addr(leader) else {
                continue;
            };
            let body = serde_json::to_vec(&Heartbeat {
                node: self.node_id(),
            })
            .unwrap_or_default();
            let client = self.peers.get(&addr);
            let sent = std::time::Instant::now();
            match client
                .request_with_timeout(
                    Command::HeartbeatCluster,
                    Bytes::from(body),
                    self.config.heartbeat_interval * 2,
                )
                .await
            {
                Ok(answer) => match HeartbeatAnswer::decode(&answer) {
                    Some(a) => self.contact.acknowledged(sent, a.applied),
                    None => debug!(leader, "heartbeat answer not understood"),
                },
                Err(e) => debug!(error = %e, leader, "heartbeat not delivered"),
            }
        }
    }

    /// Raft leader: confirms the leadership with a quorum (a deposed
    /// leader woken from a pause fails) as this broker's contact.
    async fn confirm_leadership(&self) {
        let sent = std::time::Instant::now();
        let confirm = self.raft.raft().get_read_log_id();
        match tokio::time::timeout(self.config.heartbeat_interval * 2, confirm).await {
            Ok(Ok((read, _))) => self
                .contact
                .acknowledged(sent, read.map_or(0, |id| id.index)),
            Ok(Err(e)) => debug!(error = %e, "leadership not confirmed"),
            Err(_) => debug!("leadership not confirmed in time"),
        }
    }

    /// True while this broker's copy of the replicated state is known to
    /// be recent (`cluster::contact`): a broker woken from a pause or cut
    /// off from the Raft leader may have been deposed, and its copy still
    /// names it the coordinator of what moved, with older offsets.
    pub fn in_contact(&self) -> bool {
        self.contact.fresh(*self.applied().borrow())
    }

    /// The group coordinator's copy reflects the groups up to `version`.
    pub fn groups_synced(&self, version: u64) {
        self.groups_synced
            .fetch_max(version, std::sync::atomic::Ordering::AcqRel);
    }

    /// The groups version the group coordinator's copy reflects.
    pub fn groups_synced_version(&self) -> u64 {
        self.groups_synced
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// The answer to a broker's HEARTBEAT_CLUSTER: this leader's applied
    /// index, while it leads in contact with a quorum (a deposed leader's
    /// copy proves nothing).
    fn heartbeat_answer(&self) -> Result<Bytes, ErrorPayload> {
        if self.raft.is_leader() && self.in_contact() {
            let applied = *self.applied().borrow();
            Ok(HeartbeatAnswer { applied }.encode())
        } else {
            Err(ErrorPayload::new("cluster_metadata_unavailable")
                .with_field("reason", "not the Raft leader in contact with a quorum"))
        }
    }

    /// True when the registered entry differs from this broker's (a
    /// restart on other ports) or the broker is not registered.
    fn needs_registration(&self) -> bool {
        let state = self.state();
        match state.brokers.get(&self.node_id()) {
            None => true,
            Some(b) => {
                b.client_addr != self.me.client_addr
                    || b.tls_client_addr != self.me.tls_client_addr
                    || b.cluster_addr != self.me.cluster_addr
                    || b.broker_id != self.me.broker_id
                    || b.hosts_replicas != self.me.hosts_replicas
                    || b.txn_shards != self.me.txn_shards
            }
        }
    }

    /// Raft leader: `node` was heard from now (a heartbeat or a join).
    pub(super) fn seen(&self, node: NodeId) {
        lock(&self.last_seen).insert(node, now_ms());
    }

    /// On the Raft leader: brokers silent for the session timeout become
    /// inactive; inactive brokers heard from again become active.
    async fn monitor(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.config.heartbeat_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut leading_since: Option<u64> = None;
        loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            if !self.raft.is_leader() {
                leading_since = None;
                continue;
            }
            let now = now_ms();
            let session = self.config.session_timeout.as_millis() as u64;
            // A new leader has no history: every active broker gets a full
            // session (an inactive one must heartbeat to come back).
            if leading_since.is_none() {
                leading_since = Some(now);
                let state = self.state();
                let mut seen = lock(&self.last_seen);
                for (n, b) in &state.brokers {
                    if b.active {
                        seen.insert(*n, now);
                    }
                }
            }
            self.seen(self.node_id());
            let changes: Vec<(NodeId, bool)> = {
                let state = self.state();
                let seen = lock(&self.last_seen);
                state
                    .brokers
                    .iter()
                    .filter_map(|(node, b)| {
                        // A broker registered (made active) since its last
                        // heartbeat counts as seen at its registration:
                        // its first heartbeat follows one interval later.
                        let registered = b.active.then_some(b.since_ms);
                        let last = seen.get(node).copied().max(registered);
                        let recent = last.is_some_and(|t| now.saturating_sub(t) < session);
                        // Back only by a heartbeat after it went away (a
                        // broker that left has heartbeats from before).
                        let alive = if b.active {
                            recent
                        } else {
                            recent && last.is_some_and(|t| t > b.since_ms)
                        };
                        (alive != b.active).then_some((*node, alive))
                    })
                    .collect()
            };
            for (node, active) in changes {
                if active {
                    info!(node, "broker is back");
                } else {
                    warn!(node, "broker missed its heartbeats; marking it inactive");
                }
                let cmd = FsmCommand::SetBrokerActive {
                    node,
                    active,
                    now_ms: now_ms(),
                };
                if let Err(e) = self.raft.propose(cmd).await {
                    debug!(error = %e, "broker status change not applied");
                }
            }
        }
    }

    /// The clean stop (SIGTERM), while clients still reach this broker:
    /// the Raft leadership goes to a voter whose log matches this one's
    /// ([`RaftNode::hand_over`]) and the broker [leaves](Self::leave), so
    /// that its partitions and coordinators move to other members at once
    /// and its clients are redirected rather than cut off. Each step is
    /// bounded (by the session timeout, the hand-over by at most
    /// [`HAND_OVER_TIMEOUT`]); one that fails leaves the rest to
    /// the cluster's failure handling, as after a crash.
    pub async fn stop_cleanly(&self) {
        if self.refused().is_some() {
            return;
        }
        if self.raft.is_leader() {
            let candidates: Vec<NodeId> = {
                let state = self.state();
                let active = |n: &NodeId| state.brokers.get(n).is_some_and(|b| b.active);
                self.raft
                    .voters()
                    .into_iter()
                    .filter(|n| *n != self.node_id() && active(n))
                    .collect()
            };
            let started = tokio::time::Instant::now();
            match self
                .raft
                .hand_over(
                    &candidates,
                    self.config.session_timeout.min(HAND_OVER_TIMEOUT),
                )
                .await
            {
                Ok(successor) => info!(
                    successor,
                    took_ms = started.elapsed().as_millis() as u64,
                    "raft leadership handed over"
                ),
                Err(e) => {
                    warn!(error = %e, "raft leadership not handed over; the others will elect a leader")
                }
            }
        }
        self.leave().await;
    }

    /// LEAVE_CLUSTER on a clean stop (`cluster::membership::leave`): the
    /// Raft leader marks this broker inactive (its partitions fail over at
    /// once) and, with `--decommission`, removes it from the membership.
    /// Bounded by the session timeout so a stop never hangs on a cluster
    /// without a quorum. Heartbeats stop first (one after the leave would
    /// make the broker active again); after a restart they make it active.
    /// A broker the cluster refused, or that left already, does nothing.
    pub async fn leave(&self) {
        if self.refused().is_some() || self.leaving.swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        drop(self.heartbeat_in_flight.lock().await);
        let wait = self.config.session_timeout;
        match tokio::time::timeout(wait, membership::leave(self, wait)).await {
            Ok(Ok(reply)) => info!(node = self.node_id(), role = %reply.role, "left the cluster"),
            Ok(Err(e)) => {
                warn!(error = %e, "could not leave the cluster; the session timeout will")
            }
            Err(_) => warn!("leaving the cluster timed out; the session timeout will"),
        }
    }

    /// Stops the Raft node.
    pub async fn shutdown(&self) {
        self.raft.shutdown().await;
    }
}

/// Answers the cluster listener: Raft RPCs, heartbeats, JOIN_CLUSTER and
/// LEAVE_CLUSTER here, the rest by the broker's handler.
struct Dispatcher {
    node: Arc<ClusterNode>,
    other: Arc<dyn ClusterHandler>,
}

impl ClusterHandler for Dispatcher {
    fn handle(&self, command: Command, body: Bytes) -> BoxFuture<'_, Result<Bytes, ErrorPayload>> {
        Box::pin(async move {
            match command {
                Command::RaftApply => self.node.raft.handle_rpc(body).await,
                Command::HeartbeatCluster => {
                    let hb: Heartbeat = decode(&body)?;
                    self.node.seen(hb.node);
                    self.node.heartbeat_answer()
                }
                Command::JoinCluster => membership::serve_join(&self.node, body).await,
                Command::LeaveCluster => membership::serve_leave(&self.node, body).await,
                _ => self.other.handle(command, body).await,
            }
        })
    }
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
