//! JOIN_CLUSTER and LEAVE_CLUSTER on the cluster listener (docs/cluster.md,
//! "Membership"): how a broker registers in the cluster, is added to the
//! Raft membership at run time, and leaves it on a clean stop.
//!
//! Routing: a request may reach any member. The Raft leader handles it; a
//! member that is not the leader forwards it once to the leader it knows
//! (marked `forwarded`), and a forwarded request that still misses the
//! leader is answered `NOT_LEADER leader=<cluster addr>` (retryable), which
//! the sender follows. The sender ([`join`], [`leave`]) tries the leader
//! it knows, else the `--cluster-join` seeds.
//!
//! The leader validates a join (lifecycle protocol, node id conflicts),
//! adds a broker that is not a Raft member yet as a learner (blocking until
//! its log caught up), registers it (`RegisterBroker`; the FSM's typed
//! rejections pass through unchanged) and then promotes it to voter unless
//! it asked to stay a learner. Membership changes on the leader run one at
//! a time.

use std::time::Duration;

use bytes::Bytes;
use cursus_wire::{Command, ErrorClass, ErrorPayload};
use serde::{Deserialize, Serialize};
use tracing::{debug, info, warn};

use super::fsm::{BrokerEntry, FsmCommand, NodeId};
use super::node::{ClusterNode, LIFECYCLE_PROTOCOL};
use super::raft::MembershipError;
use super::transport::TransportError;

/// How long one JOIN_CLUSTER may take end to end (the leader waits for a
/// new learner's log to catch up before it answers).
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a static voter waits for its Raft node to know a leader
/// before it sends JOIN_CLUSTER anyway (to its peers).
const LEADER_WAIT: Duration = Duration::from_secs(5);

/// The error code of a join reusing an active broker's node id with
/// another cluster address (class conflict).
pub const NODE_ID_CONFLICT: &str = "node_id_conflict";

/// The error code of a join advertising another lifecycle protocol than
/// the leader's (class validation: mixed versions are not supported).
pub const UNSUPPORTED_LIFECYCLE: &str = "unsupported_lifecycle_protocol";

/// Body of JOIN_CLUSTER (JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JoinRequest {
    /// The joining broker's node id.
    pub node: NodeId,
    /// Its registration (`cluster_addr` is what Raft and the other brokers
    /// dial).
    pub entry: BrokerEntry,
    /// Stay a Raft learner instead of becoming a voter.
    #[serde(default)]
    pub learner: bool,
    /// Set by a member forwarding the request to the leader (no second hop).
    #[serde(default)]
    pub forwarded: bool,
}

/// Reply body of JOIN_CLUSTER and LEAVE_CLUSTER (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MembershipReply {
    /// The broker concerned.
    pub node: NodeId,
    /// Its Raft role afterwards: `voter`, `learner` or `none` (removed).
    pub role: String,
}

/// Body of LEAVE_CLUSTER (JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LeaveRequest {
    /// The leaving broker's node id.
    pub node: NodeId,
    /// When it left (its clock, Unix ms): the status time written.
    pub now_ms: u64,
    /// Also remove it from the Raft membership.
    #[serde(default)]
    pub decommission: bool,
    /// Set by a member forwarding the request to the leader.
    #[serde(default)]
    pub forwarded: bool,
}

/// An error with an explicit class (for codes the registry does not list).
fn typed(code: &str, class: ErrorClass) -> ErrorPayload {
    ErrorPayload {
        class,
        retryable: false,
        ..ErrorPayload::new(code)
    }
}

/// A retryable failure (no leader, membership change in progress, the
/// leader unreachable...).
fn unavailable(reason: impl ToString) -> ErrorPayload {
    ErrorPayload::new("cluster_metadata_unavailable").with_field("reason", reason.to_string())
}

fn not_leader(node: &ClusterNode) -> ErrorPayload {
    match node.raft.leader().and_then(|l| node.raft.leader_addr(l)) {
        Some(addr) => ErrorPayload::new("NOT_LEADER").with_field("leader", addr),
        None => ErrorPayload::new("no_raft_leader"),
    }
}

fn membership_error(node: &ClusterNode, e: MembershipError) -> ErrorPayload {
    match e {
        MembershipError::NotLeader(_) => not_leader(node),
        other => unavailable(other),
    }
}

fn decode<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ErrorPayload> {
    serde_json::from_slice(body)
        .map_err(|e| ErrorPayload::new("malformed_input").with_field("reason", e.to_string()))
}

fn encode(value: &impl Serialize) -> Result<Bytes, ErrorPayload> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| ErrorPayload::new("broker_error").with_field("reason", e.to_string()))
}

fn role_of(node: &ClusterNode, id: NodeId) -> &'static str {
    if node.raft.voters().contains(&id) {
        "voter"
    } else if node.raft.learners().contains(&id) {
        "learner"
    } else {
        "none"
    }
}

/// Answers JOIN_CLUSTER on the cluster listener.
pub async fn serve_join(node: &ClusterNode, body: Bytes) -> Result<Bytes, ErrorPayload> {
    let request: JoinRequest = decode(&body)?;
    if node.raft.is_leader() {
        return encode(&leader_join(node, request).await?);
    }
    if request.forwarded {
        return Err(not_leader(node));
    }
    let forwarded = JoinRequest {
        forwarded: true,
        ..request
    };
    forward(node, Command::JoinCluster, &forwarded, JOIN_TIMEOUT).await
}

/// Answers LEAVE_CLUSTER on the cluster listener.
pub async fn serve_leave(node: &ClusterNode, body: Bytes) -> Result<Bytes, ErrorPayload> {
    let request: LeaveRequest = decode(&body)?;
    if node.raft.is_leader() {
        return encode(&leader_leave(node, request).await?);
    }
    if request.forwarded {
        return Err(not_leader(node));
    }
    let forwarded = LeaveRequest {
        forwarded: true,
        ..request
    };
    forward(node, Command::LeaveCluster, &forwarded, JOIN_TIMEOUT).await
}

/// One hop to the leader this member knows.
async fn forward(
    node: &ClusterNode,
    command: Command,
    request: &impl Serialize,
    timeout: Duration,
) -> Result<Bytes, ErrorPayload> {
    let leader = node
        .raft
        .leader()
        .and_then(|l| node.raft.leader_addr(l))
        .ok_or_else(|| ErrorPayload::new("no_raft_leader"))?;
    node.peers
        .get(&leader)
        .request_with_timeout(command, encode(request)?, timeout)
        .await
        .map_err(remote_error)
}

/// The peer's typed error as it is; a transport failure is retryable.
fn remote_error(e: TransportError) -> ErrorPayload {
    match e {
        TransportError::Remote { error, .. } => error,
        other => unavailable(other),
    }
}

/// The leader's side of JOIN_CLUSTER.
async fn leader_join(
    node: &ClusterNode,
    req: JoinRequest,
) -> Result<MembershipReply, ErrorPayload> {
    let _one_at_a_time = node.membership_lock().lock().await;
    validate_join(node, &req)?;
    let id = req.node;
    let addr = req.entry.cluster_addr.clone();
    let was_member = node.raft.member_addr(id);
    if was_member.as_deref() != Some(addr.as_str()) {
        info!(node = id, %addr, "adding a broker to the raft membership as a learner");
        node.raft
            .add_learner(id, &addr, JOIN_TIMEOUT)
            .await
            .map_err(|e| membership_error(node, e))?;
    }
    let registered = node
        .propose(FsmCommand::RegisterBroker {
            node: id,
            entry: req.entry.clone(),
        })
        .await;
    if let Err(refusal) = registered {
        // A refused broker must not stay in the membership it was just
        // added to (it would receive the log and count as a member).
        if was_member.is_none() && refusal.class != ErrorClass::Availability {
            if let Err(e) = node.raft.remove_member(id, JOIN_TIMEOUT).await {
                warn!(node = id, error = %e, "could not remove a refused learner");
            }
        }
        return Err(refusal);
    }
    // A join is a sign of life: without it the monitor could find the
    // broker active but never heard from before its first heartbeat.
    node.seen(id);
    if !req.learner && !node.raft.voters().contains(&id) {
        info!(node = id, "promoting a broker to raft voter");
        node.raft
            .promote(id, JOIN_TIMEOUT)
            .await
            .map_err(|e| membership_error(node, e))?;
    }
    Ok(MembershipReply {
        node: id,
        role: role_of(node, id).to_string(),
    })
}

/// The checks before anything changes: same lifecycle protocol, and no
/// active broker with this node id at another cluster address.
fn validate_join(node: &ClusterNode, req: &JoinRequest) -> Result<(), ErrorPayload> {
    if req.node == 0 || req.entry.cluster_addr.is_empty() {
        return Err(ErrorPayload::new("malformed_input").with_field(
            "reason",
            "JOIN_CLUSTER needs a node id ≥ 1 and a cluster_addr",
        ));
    }
    if req.entry.lifecycle_protocol != LIFECYCLE_PROTOCOL {
        return Err(typed(UNSUPPORTED_LIFECYCLE, ErrorClass::Validation)
            .with_field("node", req.node)
            .with_field("required", LIFECYCLE_PROTOCOL)
            .with_field("got", req.entry.lifecycle_protocol));
    }
    let state = node.state();
    if let Some(b) = state.brokers.get(&req.node) {
        if b.active && b.cluster_addr != req.entry.cluster_addr {
            return Err(typed(NODE_ID_CONFLICT, ErrorClass::Conflict)
                .with_field("node", req.node)
                .with_field("registered_addr", &b.cluster_addr)
                .with_field("addr", &req.entry.cluster_addr));
        }
    }
    // A static voter that has not registered yet (or left) keeps its
    // address: only the membership entry of an inactive broker may move.
    let member_addr = node.raft.member_addr(req.node);
    let active = state.brokers.get(&req.node).is_some_and(|b| b.active);
    if let Some(known) = member_addr {
        if known != req.entry.cluster_addr && (active || !state.brokers.contains_key(&req.node)) {
            return Err(typed(NODE_ID_CONFLICT, ErrorClass::Conflict)
                .with_field("node", req.node)
                .with_field("registered_addr", known)
                .with_field("addr", &req.entry.cluster_addr));
        }
    }
    Ok(())
}

/// The leader's side of LEAVE_CLUSTER.
async fn leader_leave(
    node: &ClusterNode,
    req: LeaveRequest,
) -> Result<MembershipReply, ErrorPayload> {
    node.propose(FsmCommand::SetBrokerActive {
        node: req.node,
        active: false,
        now_ms: req.now_ms,
    })
    .await?;
    if req.decommission && node.raft.member_addr(req.node).is_some() {
        let _one_at_a_time = node.membership_lock().lock().await;
        info!(
            node = req.node,
            "removing a broker from the raft membership"
        );
        node.raft
            .remove_member(req.node, JOIN_TIMEOUT)
            .await
            .map_err(|e| membership_error(node, e))?;
    }
    Ok(MembershipReply {
        node: req.node,
        role: role_of(node, req.node).to_string(),
    })
}

/// Where a request from this broker goes: the leader it knows, else the
/// seeds (`--cluster-join`), then the static peers.
fn targets(node: &ClusterNode) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(addr) = node.raft.leader().and_then(|l| node.raft.leader_addr(l)) {
        out.push(addr);
    }
    let me = node.config.cluster_addr();
    for addr in node.config.join.iter().chain(node.config.peers.values()) {
        if *addr != me && !out.contains(addr) {
            out.push(addr.clone());
        }
    }
    out
}

/// Sends `request` as `command` to the leader (handled here when this
/// broker leads), following `NOT_LEADER` answers. Retryable errors and
/// transport failures move on to the next target; a non-retryable typed
/// error is the answer.
async fn send(
    node: &ClusterNode,
    command: Command,
    request: &impl Serialize,
    timeout: Duration,
) -> Result<MembershipReply, ErrorPayload> {
    let body = encode(request)?;
    let mut last = ErrorPayload::new("no_raft_leader");
    let mut queue = targets(node);
    let mut tried = 0;
    while let Some(addr) = queue.first().cloned() {
        queue.remove(0);
        tried += 1;
        if tried > 8 {
            break;
        }
        let answer = node
            .peers
            .get(&addr)
            .request_with_timeout(command, body.clone(), timeout)
            .await
            .map_err(remote_error);
        match answer {
            Ok(reply) => return decode(&reply),
            Err(e) if e.code == "NOT_LEADER" => {
                if let Some(leader) = e.fields.get("leader") {
                    if !queue.contains(leader) {
                        queue.insert(0, leader.clone());
                    }
                }
                last = e;
            }
            Err(e) if e.retryable => {
                debug!(%addr, code = %e.code, "membership request not taken; next target");
                last = e;
            }
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// JOIN_CLUSTER for this broker with `entry` (its registration).
pub async fn join(node: &ClusterNode, entry: BrokerEntry) -> Result<MembershipReply, ErrorPayload> {
    let request = JoinRequest {
        node: node.node_id(),
        entry,
        learner: node.config.learner,
        forwarded: false,
    };
    // A static voter learns the leader from its own Raft node (as soon as
    // one is elected); a broker joining at run time only through its seeds.
    if !node.config.joins_at_run_time() {
        let _ = node.raft.wait_for_leader(LEADER_WAIT).await;
    }
    if node.raft.is_leader() {
        return leader_join(node, request).await;
    }
    send(node, Command::JoinCluster, &request, JOIN_TIMEOUT).await
}

/// LEAVE_CLUSTER for this broker (marks it inactive; with
/// `--decommission` also removes it from the Raft membership).
pub async fn leave(node: &ClusterNode, timeout: Duration) -> Result<MembershipReply, ErrorPayload> {
    let request = LeaveRequest {
        node: node.node_id(),
        now_ms: super::node::now_ms(),
        decommission: node.config.decommission,
        forwarded: false,
    };
    if node.raft.is_leader() {
        return leader_leave(node, request).await;
    }
    send(node, Command::LeaveCluster, &request, timeout).await
}
