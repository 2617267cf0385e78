//! openraft's network over the cluster transport: every Raft RPC is a JSON
//! [`RpcRequest`] envelope (tagged by `rpc`) sent as `RAFT_APPLY` with
//! [`PeerClient`]; the answer is the JSON of openraft's `Result`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cursus_wire::Command;
use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::BasicNode;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::types::TypeConfig;
use crate::cluster::fsm::{FsmCommand, FsmReply, NodeId};
use crate::cluster::transport::{PeerClient, PeerPool, TransportError};

/// A request on `RAFT_APPLY`: `{"rpc": "<kind>", "req": <request>}`.
///
/// Adjacently tagged, not internally: serde buffers an internally tagged
/// variant's content, and a buffered map loses its integer keys (node ids in
/// a membership) to strings.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "rpc", content = "req", rename_all = "snake_case")]
pub enum RpcRequest {
    /// openraft AppendEntries.
    AppendEntries(AppendEntriesRequest<TypeConfig>),
    /// openraft Vote.
    Vote(VoteRequest<NodeId>),
    /// openraft InstallSnapshot (one chunk).
    InstallSnapshot(InstallSnapshotRequest<TypeConfig>),
    /// A command proposed on a follower, for the leader to write.
    Forward(FsmCommand),
    /// A leader handing over asks its successor to stand for election now
    /// (`RaftNode::hand_over`); the answer is `Ok` once it started.
    Elect,
}

/// The answer to [`RpcRequest::Forward`]: `{"outcome": "<kind>", "value": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "value", rename_all = "snake_case")]
pub enum ForwardReply {
    /// Committed and applied; the state machine's reply.
    Applied(FsmReply),
    /// The receiver is not the leader (any more); the leader it knows of.
    NotLeader(Option<NodeId>),
    /// The leader could not write it (shutting down, membership change...).
    Failed(String),
}

/// Creates [`PeerNetwork`]s over a shared [`PeerPool`].
#[derive(Debug, Clone)]
pub struct Network {
    peers: Arc<PeerPool>,
}

impl Network {
    /// A factory whose clients come from `peers`.
    pub fn new(peers: Arc<PeerPool>) -> Self {
        Network { peers }
    }
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = PeerNetwork;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> PeerNetwork {
        PeerNetwork {
            target,
            client: self.peers.get(&node.addr),
        }
    }
}

/// The connection to one peer as openraft sees it.
#[derive(Debug)]
pub struct PeerNetwork {
    target: NodeId,
    client: Arc<PeerClient>,
}

impl PeerNetwork {
    async fn call<T, E>(
        &self,
        request: &RpcRequest,
        timeout: Duration,
    ) -> Result<T, RPCError<NodeId, BasicNode, E>>
    where
        T: DeserializeOwned,
        E: std::error::Error + DeserializeOwned,
    {
        let body =
            serde_json::to_vec(request).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        let reply = match self
            .client
            .request_with_timeout(Command::RaftApply, Bytes::from(body), timeout)
            .await
        {
            Ok(reply) => reply,
            // A refused, reset or closed connection, or a refusal: back off
            // before retrying (a peer behind a partition that resets
            // connections would otherwise be retried in a tight loop).
            Err(
                e @ (TransportError::Connect { .. }
                | TransportError::Remote { .. }
                | TransportError::Closed { .. }
                | TransportError::Io { .. }),
            ) => return Err(RPCError::Unreachable(Unreachable::new(&e))),
            Err(e) => return Err(RPCError::Network(NetworkError::new(&e))),
        };
        let result: Result<T, E> =
            serde_json::from_slice(&reply).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        result.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

impl RaftNetwork<TypeConfig> for PeerNetwork {
    async fn append_entries(
        &mut self,
        req: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.call(&RpcRequest::AppendEntries(req), option.hard_ttl())
            .await
    }

    async fn install_snapshot(
        &mut self,
        req: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, BasicNode, RaftError<NodeId, InstallSnapshotError>>,
    > {
        self.call(&RpcRequest::InstallSnapshot(req), option.hard_ttl())
            .await
    }

    async fn vote(
        &mut self,
        req: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, BasicNode, RaftError<NodeId>>> {
        self.call(&RpcRequest::Vote(req), option.hard_ttl()).await
    }
}
