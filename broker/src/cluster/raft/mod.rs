//! Raft plumbing of distributed mode, on openraft 0.9.
//!
//! * [`types`]: the openraft type configuration (`FsmCommand` entries).
//! * [`log_store`]: the durable log, vote and committed id in
//!   `<data_dir>/raft/`.
//! * [`state_machine`]: applies entries to the shared `ClusterState`,
//!   snapshots to `<data_dir>/raft/snapshot.json`.
//! * [`store`]: both behind openraft's storage traits.
//! * [`network`]: Raft RPCs as JSON envelopes on `RAFT_APPLY` over the
//!   cluster transport.
//!
//! [`RaftNode`] ties them together. It does not own a listener: the broker's
//! cluster listener passes `RAFT_APPLY` bodies to [`RaftNode::handle_rpc`]
//! (or uses [`RaftNode::cluster_handler`], which does that and delegates
//! every other command), so raft, replication and heartbeats share one port.

pub mod log_store;
pub mod network;
pub mod state_machine;
pub mod store;
pub mod types;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use cursus_wire::{Command, ErrorPayload};
use openraft::error::{ClientWriteError, InitializeError, RaftError};
use openraft::{BasicNode, ChangeMembers, Config, SnapshotPolicy};
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::log_store::StoreError;
use self::network::{ForwardReply, Network, RpcRequest};
use self::store::RaftStore;
use self::types::{Raft, RaftMetrics};
use crate::cluster::fsm::{ClusterState, FsmCommand, FsmReply, NodeId};
use crate::cluster::transport::{
    self, BoxFuture, ClusterHandler, PeerClientConfig, PeerPool, TransportError,
};

/// Settings of a [`RaftNode`].
#[derive(Debug, Clone)]
pub struct RaftNodeConfig {
    /// This node's Raft id.
    pub node_id: NodeId,
    /// This node's cluster listener address (`host:port`, what peers dial).
    pub cluster_addr: String,
    /// All static voters with their cluster addresses, this node included
    /// unless [`joins`](Self::joins).
    pub peers: BTreeMap<NodeId, String>,
    /// This node is added to a running cluster at run time (by the
    /// leader, through JOIN_CLUSTER): it may be outside `peers` and never
    /// initializes a cluster.
    pub joins: bool,
    /// The broker's data directory; Raft keeps its files in `raft/` below.
    pub data_dir: PathBuf,
    /// The internal token sent to and required from peers.
    pub token: Option<String>,
    /// Dial peers over mutual TLS (`internal_use_tls`).
    pub tls: Option<crate::cluster::internal_tls::InternalTls>,
    /// Addresses dialed instead of peers' (`cluster_dial_overrides`).
    pub dial_overrides: Arc<BTreeMap<String, String>>,
    /// Leader heartbeat interval (default 250 ms).
    pub heartbeat_ms: u64,
    /// Lower bound of the election timeout (default 1000 ms).
    pub election_timeout_min_ms: u64,
    /// Upper bound of the election timeout (default 2000 ms).
    pub election_timeout_max_ms: u64,
    /// How long [`RaftNode::propose`] keeps trying (default 5 s).
    pub propose_timeout: Duration,
    /// A snapshot is built after this many new log entries (default 5000);
    /// the log is then purged up to it, keeping `logs_kept_after_snapshot`.
    pub snapshot_every_logs: u64,
    /// Entries kept in the log behind a snapshot, for lagging followers
    /// (default 1000).
    pub logs_kept_after_snapshot: u64,
}

impl Default for RaftNodeConfig {
    /// Node 0 with no peers and the default timings: set at least
    /// `node_id`, `cluster_addr`, `peers` and `data_dir`.
    fn default() -> Self {
        RaftNodeConfig::new(0, String::new(), BTreeMap::new(), PathBuf::new())
    }
}

impl RaftNodeConfig {
    /// A configuration with the default timings.
    pub fn new(
        node_id: NodeId,
        cluster_addr: impl Into<String>,
        peers: BTreeMap<NodeId, String>,
        data_dir: impl Into<PathBuf>,
    ) -> Self {
        RaftNodeConfig {
            node_id,
            cluster_addr: cluster_addr.into(),
            peers,
            data_dir: data_dir.into(),
            joins: false,
            token: None,
            tls: None,
            dial_overrides: Arc::default(),
            heartbeat_ms: 250,
            election_timeout_min_ms: 1000,
            election_timeout_max_ms: 2000,
            propose_timeout: Duration::from_secs(5),
            snapshot_every_logs: 5000,
            logs_kept_after_snapshot: 1000,
        }
    }
}

/// Why [`RaftNode::start`] failed.
#[derive(Debug, thiserror::Error)]
pub enum RaftStartError {
    /// The storage could not be opened (corrupt log, foreign marker, I/O).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The timings are inconsistent.
    #[error("invalid raft configuration: {0}")]
    Config(String),
    /// This node is not among `peers` (and does not join at run time).
    #[error("node {0} is not among the configured raft peers")]
    NotAPeer(NodeId),
    /// openraft failed to start or to initialize the cluster.
    #[error("raft failed to start: {0}")]
    Raft(String),
}

/// Why [`RaftNode::propose`] (or [`RaftNode::wait_for_leader`]) failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProposeError {
    /// No leader could take the command before the deadline.
    #[error("no raft leader within {0:?}")]
    NoLeader(Duration),
    /// The leader took the command but it did not commit before the deadline
    /// (it may still commit).
    #[error("raft proposal not committed within {0:?}")]
    Timeout(Duration),
    /// The leader refused to write it.
    #[error("raft leader refused the proposal: {0}")]
    Refused(String),
    /// This node is shutting down.
    #[error("raft node is shut down: {0}")]
    Shutdown(String),
}

impl ProposeError {
    /// The typed error a client sees for this failure.
    pub fn to_error_payload(&self) -> ErrorPayload {
        let code = match self {
            ProposeError::NoLeader(_) => "no_raft_leader",
            ProposeError::Timeout(_) | ProposeError::Shutdown(_) => "fsm_not_available",
            ProposeError::Refused(_) => "raft_apply_failed",
        };
        ErrorPayload::new(code).with_message(self.to_string())
    }
}

/// One member of the cluster metadata Raft group.
pub struct RaftNode {
    id: NodeId,
    raft: Raft,
    state: Arc<RwLock<ClusterState>>,
    applied: watch::Receiver<u64>,
    peers: Arc<PeerPool>,
    addrs: BTreeMap<NodeId, String>,
    propose_timeout: Duration,
    /// Set while this leader hands its leadership over
    /// ([`RaftNode::hand_over`]): it writes nothing new, so that the
    /// successor's log can equal its own.
    handing_over: std::sync::atomic::AtomicBool,
    /// Writes of this node under way ([`RaftNode::write_local`]): a
    /// hand-over waits for them, so that none lands in its log after the
    /// successor's log was found equal to it.
    writes_in_flight: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for RaftNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RaftNode").field("id", &self.id).finish()
    }
}

const RETRY_BACKOFF: Duration = Duration::from_millis(50);

impl RaftNode {
    /// Opens the storage in `<data_dir>/raft/`, starts Raft and, if this is
    /// the smallest id among `peers` and the node has never been part of a
    /// cluster, initializes the cluster with `peers` as voters. A node
    /// that [`joins`](RaftNodeConfig::joins) outside `peers` starts empty
    /// and waits for the leader to add it. Peers must be able to reach
    /// this node's [`handle_rpc`](Self::handle_rpc) on `cluster_addr` (the
    /// caller serves the listener).
    pub async fn start(cfg: RaftNodeConfig) -> Result<RaftNode, RaftStartError> {
        if !cfg.joins && !cfg.peers.contains_key(&cfg.node_id) {
            return Err(RaftStartError::NotAPeer(cfg.node_id));
        }
        let config = Config {
            cluster_name: "cursus".into(),
            heartbeat_interval: cfg.heartbeat_ms,
            election_timeout_min: cfg.election_timeout_min_ms,
            election_timeout_max: cfg.election_timeout_max_ms,
            snapshot_policy: SnapshotPolicy::LogsSinceLast(cfg.snapshot_every_logs),
            max_in_snapshot_log_to_keep: cfg.logs_kept_after_snapshot,
            ..Config::default()
        }
        .validate()
        .map_err(|e| RaftStartError::Config(e.to_string()))?;

        let store = RaftStore::open(&cfg.data_dir.join("raft"))?;
        let pristine = store.is_pristine();
        let state = store.state_machine().state();
        let applied = store.state_machine().subscribe();
        let (log_store, state_machine) = store.into_adaptors();

        let peers = Arc::new(PeerPool::new(PeerClientConfig {
            token: cfg.token.clone(),
            tls: cfg.tls.clone(),
            dial_overrides: Arc::clone(&cfg.dial_overrides),
            ..PeerClientConfig::default()
        }));
        let raft = Raft::new(
            cfg.node_id,
            Arc::new(config),
            Network::new(peers.clone()),
            log_store,
            state_machine,
        )
        .await
        .map_err(|e| RaftStartError::Raft(e.to_string()))?;

        let smallest = cfg.peers.keys().next() == Some(&cfg.node_id);
        if smallest && pristine && !cfg.joins {
            let members: BTreeMap<NodeId, BasicNode> = cfg
                .peers
                .iter()
                .map(|(id, addr)| (*id, BasicNode::new(addr)))
                .collect();
            match raft.initialize(members).await {
                Ok(()) | Err(RaftError::APIError(InitializeError::NotAllowed(_))) => {}
                Err(e) => {
                    let _ = raft.shutdown().await;
                    return Err(RaftStartError::Raft(e.to_string()));
                }
            }
        }
        tracing::debug!(node = cfg.node_id, addr = %cfg.cluster_addr, "raft node started");
        Ok(RaftNode {
            id: cfg.node_id,
            raft,
            state,
            applied,
            peers,
            addrs: cfg.peers,
            propose_timeout: cfg.propose_timeout,
            handing_over: std::sync::atomic::AtomicBool::new(false),
            writes_in_flight: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The replicated cluster state (read-only for the broker: changes go
    /// through [`propose`](Self::propose)).
    pub fn state(&self) -> Arc<RwLock<ClusterState>> {
        self.state.clone()
    }

    /// The applied log index, bumped after every applied batch.
    pub fn applied(&self) -> watch::Receiver<u64> {
        self.applied.clone()
    }

    /// openraft's metrics.
    pub fn metrics(&self) -> watch::Receiver<RaftMetrics> {
        self.raft.metrics()
    }

    /// The current leader as this node knows it.
    pub fn leader(&self) -> Option<NodeId> {
        self.raft.metrics().borrow().current_leader
    }

    /// True while this node is the leader.
    pub fn is_leader(&self) -> bool {
        self.leader() == Some(self.id)
    }

    /// The clients to peers' cluster listeners (also usable for the
    /// broker's own internal commands).
    pub fn peers(&self) -> Arc<PeerPool> {
        self.peers.clone()
    }

    /// The openraft instance.
    pub fn raft(&self) -> &Raft {
        &self.raft
    }

    /// Waits until a leader is known.
    pub async fn wait_for_leader(&self, timeout: Duration) -> Result<NodeId, ProposeError> {
        let mut metrics = self.raft.metrics();
        let wait = async {
            loop {
                if let Some(leader) = metrics.borrow_and_update().current_leader {
                    return Ok(leader);
                }
                if metrics.changed().await.is_err() {
                    return Err(ProposeError::Shutdown("metrics closed".into()));
                }
            }
        };
        tokio::time::timeout(timeout, wait)
            .await
            .unwrap_or(Err(ProposeError::NoLeader(timeout)))
    }

    /// Commits `cmd` through the leader and returns the state machine's
    /// reply: written here when this node leads, else forwarded to the
    /// leader over the cluster transport. Retries while no leader is known
    /// or the leader is unreachable, up to the propose timeout. A retry
    /// after a lost connection may apply the command twice: commands must
    /// be idempotent.
    pub async fn propose(&self, cmd: FsmCommand) -> Result<FsmReply, ProposeError> {
        let timeout = self.propose_timeout;
        let deadline = Instant::now() + timeout;
        let mut metrics = self.raft.metrics();
        loop {
            let leader = metrics.borrow_and_update().current_leader;
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(ProposeError::NoLeader(timeout));
            }
            match leader {
                Some(leader) if leader == self.id => {
                    match tokio::time::timeout(remaining, self.write_local(cmd.clone())).await {
                        Err(_) => return Err(ProposeError::Timeout(timeout)),
                        Ok(ForwardReply::Applied(reply)) => return Ok(reply),
                        Ok(ForwardReply::NotLeader(_)) => {}
                        Ok(ForwardReply::Failed(message)) => {
                            return Err(if self.raft.metrics().borrow().running_state.is_err() {
                                ProposeError::Shutdown(message)
                            } else {
                                ProposeError::Refused(message)
                            })
                        }
                    }
                }
                Some(leader) => match self.forward(leader, &cmd, remaining).await {
                    Ok(ForwardReply::Applied(reply)) => return Ok(reply),
                    Ok(ForwardReply::Failed(message)) => {
                        return Err(ProposeError::Refused(message))
                    }
                    Ok(ForwardReply::NotLeader(_)) => {}
                    Err(e) => {
                        tracing::debug!(node = self.id, leader, error = %e, "raft forward failed; retrying");
                    }
                },
                None => {
                    // Wait for a leader to be known.
                    let remaining = deadline.saturating_duration_since(Instant::now());
                    match tokio::time::timeout(remaining, metrics.changed()).await {
                        Ok(Ok(())) => continue,
                        Ok(Err(_)) => return Err(ProposeError::Shutdown("metrics closed".into())),
                        Err(_) => return Err(ProposeError::NoLeader(timeout)),
                    }
                }
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            tokio::time::sleep(RETRY_BACKOFF.min(remaining)).await;
        }
    }

    async fn write_local(&self, cmd: FsmCommand) -> ForwardReply {
        use std::sync::atomic::Ordering::SeqCst;
        // Counted before the flag is read (and the flag set before the
        // count is read): a hand-over either sees this write or stops it.
        self.writes_in_flight.fetch_add(1, SeqCst);
        let _done = scopeguard(|| {
            self.writes_in_flight.fetch_sub(1, SeqCst);
        });
        if self.handing_over.load(SeqCst) {
            // The proposer retries with the successor.
            return ForwardReply::NotLeader(None);
        }
        match self.raft.client_write(cmd).await {
            Ok(resp) => ForwardReply::Applied(resp.data),
            Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => {
                ForwardReply::NotLeader(f.leader_id)
            }
            Err(e) => ForwardReply::Failed(e.to_string()),
        }
    }

    async fn forward(
        &self,
        leader: NodeId,
        cmd: &FsmCommand,
        timeout: Duration,
    ) -> Result<ForwardReply, TransportError> {
        let addr = self
            .leader_addr(leader)
            .ok_or_else(|| TransportError::Protocol {
                addr: String::new(),
                reason: format!("no address known for leader {leader}"),
            })?;
        let body = serde_json::to_vec(&RpcRequest::Forward(cmd.clone())).map_err(|e| {
            TransportError::Protocol {
                addr: addr.clone(),
                reason: e.to_string(),
            }
        })?;
        let reply = self
            .peers
            .get(&addr)
            .request_with_timeout(Command::RaftApply, Bytes::from(body), timeout)
            .await?;
        serde_json::from_slice(&reply).map_err(|e| TransportError::Protocol {
            addr,
            reason: format!("undecodable forward reply: {e}"),
        })
    }

    /// The cluster address of `node`: from the Raft membership, else from
    /// the static peers.
    pub fn leader_addr(&self, node: NodeId) -> Option<String> {
        self.member_addr(node)
            .or_else(|| self.addrs.get(&node).cloned())
    }

    /// The address `node` has in the Raft membership (`None`: not a member
    /// as this node knows the membership).
    pub fn member_addr(&self, node: NodeId) -> Option<String> {
        self.raft
            .metrics()
            .borrow()
            .membership_config
            .membership()
            .get_node(&node)
            .map(|n| n.addr.clone())
    }

    /// The voters of the membership as this node knows it.
    pub fn voters(&self) -> Vec<NodeId> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow();
        m.membership_config.membership().voter_ids().collect()
    }

    /// The learners (non-voting members) as this node knows them.
    pub fn learners(&self) -> Vec<NodeId> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow();
        m.membership_config.membership().learner_ids().collect()
    }

    /// Leader only: adds `node` (dialled at `addr`) as a learner, or
    /// updates the address of a member, and waits until its log caught up
    /// with the membership entry (bounded by `timeout`).
    pub async fn add_learner(
        &self,
        node: NodeId,
        addr: &str,
        timeout: Duration,
    ) -> Result<(), MembershipError> {
        let known = self.member_addr(node);
        let change = async {
            if known.is_some() && known.as_deref() != Some(addr) {
                // A member coming back on another address (checked
                // inactive by the caller): replace its node entry.
                let nodes = BTreeMap::from([(node, BasicNode::new(addr))]);
                self.raft
                    .change_membership(ChangeMembers::SetNodes(nodes), true)
                    .await
                    .map(|_| ())
                    .map_err(change_error)
            } else {
                self.raft
                    .add_learner(node, BasicNode::new(addr), true)
                    .await
                    .map(|_| ())
                    .map_err(change_error)
            }
        };
        membership_result(tokio::time::timeout(timeout, change).await, timeout)
    }

    /// Leader only: makes the learner `node` a voter.
    pub async fn promote(&self, node: NodeId, timeout: Duration) -> Result<(), MembershipError> {
        let change = async {
            self.raft
                .change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([node])), true)
                .await
                .map(|_| ())
                .map_err(change_error)
        };
        membership_result(tokio::time::timeout(timeout, change).await, timeout)
    }

    /// Leader only: removes `node` from the membership (a voter is removed
    /// from the voters and the nodes at once).
    pub async fn remove_member(
        &self,
        node: NodeId,
        timeout: Duration,
    ) -> Result<(), MembershipError> {
        let ids = BTreeSet::from([node]);
        let change = async {
            if self.voters().contains(&node) {
                self.raft
                    .change_membership(ChangeMembers::RemoveVoters(ids), false)
                    .await
                    .map(|_| ())
                    .map_err(change_error)
            } else {
                self.raft
                    .change_membership(ChangeMembers::RemoveNodes(ids), false)
                    .await
                    .map(|_| ())
                    .map_err(change_error)
            }
        };
        membership_result(tokio::time::timeout(timeout, change).await, timeout)
    }

    /// Answers one `RAFT_APPLY` request body (a JSON [`RpcRequest`]) with the
    /// JSON of the result.
    pub async fn handle_rpc(&self, body: Bytes) -> Result<Bytes, ErrorPayload> {
        let request: RpcRequest = serde_json::from_slice(&body).map_err(|e| {
            ErrorPayload::new("unmarshal_failed").with_message(format!("bad raft rpc: {e}"))
        })?;
        match request {
            RpcRequest::AppendEntries(req) => to_json(&self.raft.append_entries(req).await),
            RpcRequest::Vote(req) => to_json(&self.raft.vote(req).await),
            RpcRequest::InstallSnapshot(req) => to_json(&self.raft.install_snapshot(req).await),
            // No second hop: a node that is not the leader says so.
            RpcRequest::Forward(cmd) => to_json(&self.write_local(cmd).await),
            RpcRequest::Elect => {
                let started = self.raft.trigger().elect().await.map_err(|e| e.to_string());
                to_json(&started)
            }
        }
    }

    /// Leader only: hands Raft leadership to one of `candidates` (voters
    /// this broker believes alive) before it stops, so that the cluster
    /// does not wait out an election timeout and the leader lease
    /// (openraft 0.9 has no leadership transfer). The leader stops writing
    /// new entries, waits until a candidate's log matches its own, and asks
    /// it to stand for election at once. That first round fails (every
    /// voter, the leader too, refuses while its lease on the leader runs),
    /// but the candidate's higher term makes the leader step down with its
    /// vote on the candidate, not committed: asked again, the candidate
    /// gets that vote, a majority of three voters (with more, the others
    /// follow once their lease runs out). Returns the new leader, or why
    /// there is none within `timeout` (the caller stops anyway and the
    /// others elect one as after a crash).
    pub async fn hand_over(
        &self,
        candidates: &[NodeId],
        timeout: Duration,
    ) -> Result<NodeId, String> {
        use std::sync::atomic::Ordering;
        if !self.is_leader() {
            return Err("not the raft leader".into());
        }
        self.handing_over.store(true, Ordering::SeqCst);
        let outcome = tokio::time::timeout(timeout, self.transfer(candidates)).await;
        // A successor leads now (openraft forwards writes to it) or none
        // does: writing again is right either way.
        self.handing_over.store(false, Ordering::SeqCst);
        outcome.unwrap_or_else(|_| Err(format!("no new leader within {timeout:?}")))
    }

    async fn transfer(&self, candidates: &[NodeId]) -> Result<NodeId, String> {
        use std::sync::atomic::Ordering::SeqCst;
        let mut metrics = self.raft.metrics();
        // The candidate whose log matches this leader's, once one does and
        // no write is under way (a write completing changes the metrics
        // but lowers the count just after: hence the short poll).
        let successor = loop {
            let settled = self.writes_in_flight.load(SeqCst) == 0;
            let found = {
                let m = metrics.borrow_and_update();
                let last = m.last_log_index;
                m.replication.as_ref().and_then(|r| {
                    candidates
                        .iter()
                        .filter(|c| **c != self.id)
                        .filter_map(|c| Some((*c, r.get(c)?.as_ref()?.index)))
                        .filter(|(_, matched)| Some(*matched) == last)
                        .map(|(c, _)| c)
                        .next()
                })
            };
            if let Some(s) = found.filter(|_| settled) {
                break s;
            }
            tokio::select! {
                changed = metrics.changed() => changed.map_err(|_| "raft stopped".to_owned())?,
                _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
        };
        self.ask_to_elect(successor).await?;
        let mut asked_again = false;
        loop {
            let (leader, leading) = {
                let m = metrics.borrow_and_update();
                (m.current_leader, m.state == openraft::ServerState::Leader)
            };
            match leader {
                Some(l) if l != self.id => return Ok(l),
                _ if !leading && !asked_again => {
                    // Stepped down, its vote on the successor: ask again.
                    asked_again = true;
                    self.ask_to_elect(successor).await?;
                }
                _ => {}
            }
            metrics
                .changed()
                .await
                .map_err(|_| "raft stopped".to_owned())?;
        }
    }

    /// Asks voter `node` to stand for election now ([`RpcRequest::Elect`]).
    async fn ask_to_elect(&self, node: NodeId) -> Result<(), String> {
        let addr = self
            .leader_addr(node)
            .ok_or_else(|| format!("no address for node {node}"))?;
        let body = serde_json::to_vec(&RpcRequest::Elect).map_err(|e| e.to_string())?;
        let reply = self
            .peers
            .get(&addr)
            .request(Command::RaftApply, Bytes::from(body))
            .await
            .map_err(|e| format!("node {node}: {e}"))?;
        let started: Result<(), String> =
            serde_json::from_slice(&reply).map_err(|e| format!("node {node}: {e}"))?;
        started.map_err(|e| format!("node {node}: {e}"))
    }

    /// A cluster listener handler: `RAFT_APPLY` goes to
    /// [`handle_rpc`](Self::handle_rpc), every other command to `other`
    /// (`unknown_command` without one).
    pub fn cluster_handler(
        self: &Arc<Self>,
        other: Option<Arc<dyn ClusterHandler>>,
    ) -> Arc<dyn ClusterHandler> {
        Arc::new(RaftHandler {
            node: self.clone(),
            other,
        })
    }

    /// Serves a cluster listener for Raft only until `shutdown` fires (for
    /// tests and tools; the broker serves one listener for everything).
    pub fn serve_raft_only(
        self: &Arc<Self>,
        listener: TcpListener,
        token: Option<String>,
        shutdown: CancellationToken,
    ) -> JoinHandle<()> {
        tokio::spawn(transport::serve(
            listener,
            token,
            self.cluster_handler(None),
            shutdown,
        ))
    }

    /// Stops Raft (its tasks end; the storage is closed once they have).
    pub async fn shutdown(&self) {
        if let Err(e) = self.raft.shutdown().await {
            tracing::debug!(node = self.id, error = %e, "raft shutdown");
        }
    }
}

/// Why a membership change ([`RaftNode::add_learner`],
/// [`RaftNode::promote`], [`RaftNode::remove_member`]) failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MembershipError {
    /// This node is not the leader (any more); the leader it knows of.
    #[error("not the raft leader (leader: {0:?})")]
    NotLeader(Option<NodeId>),
    /// Not done within the timeout (it may still complete).
    #[error("membership change not done within {0:?}")]
    Timeout(Duration),
    /// openraft refused it (another change in progress, shutting down...).
    #[error("membership change refused: {0}")]
    Refused(String),
}

fn change_error(e: RaftError<NodeId, ClientWriteError<NodeId, BasicNode>>) -> MembershipError {
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => {
            MembershipError::NotLeader(f.leader_id)
        }
        e => MembershipError::Refused(e.to_string()),
    }
}

fn membership_result(
    outcome: Result<Result<(), MembershipError>, tokio::time::error::Elapsed>,
    timeout: Duration,
) -> Result<(), MembershipError> {
    outcome.unwrap_or(Err(MembershipError::Timeout(timeout)))
}

/// Runs `f` when dropped (also when the future holding it is cancelled).
fn scopeguard<F: FnOnce()>(f: F) -> impl Drop {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    Guard(Some(f))
}

fn to_json<T: Serialize>(value: &T) -> Result<Bytes, ErrorPayload> {
    serde_json::to_vec(value).map(Bytes::from).map_err(|e| {
        ErrorPayload::new("raft_apply_failed").with_message(format!("encode raft reply: {e}"))
    })
}

struct RaftHandler {
    node: Arc<RaftNode>,
    other: Option<Arc<dyn ClusterHandler>>,
}

impl ClusterHandler for RaftHandler {
    fn handle(&self, command: Command, body: Bytes) -> BoxFuture<'_, Result<Bytes, ErrorPayload>> {
        match (command, &self.other) {
            (Command::RaftApply, _) => Box::pin(self.node.handle_rpc(body)),
            (_, Some(other)) => other.handle(command, body),
            (_, None) => Box::pin(async move {
                Err(ErrorPayload::new("unknown_command")
                    .with_message(format!("{} is not served here", command.name())))
            }),
        }
    }
}

/// A `RegisterBroker` command for node `n`, built from JSON so that it keeps
/// compiling as `BrokerEntry` grows (its newer fields have serde defaults).
#[cfg(test)]
pub(crate) fn test_register(n: NodeId) -> FsmCommand {
    serde_json::from_value(serde_json::json!({"RegisterBroker": {"node": n, "entry": {
        "broker_id": format!("broker-{n}"),
        "cluster_addr": format!("127.0.0.1:{n}"),
        "client_addr": "",
    }}}))
    .expect("a RegisterBroker command")
}
