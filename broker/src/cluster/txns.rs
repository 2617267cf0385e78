//! Transactions in distributed mode: every transactional id has one
//! coordinator, chosen like a group's (rendezvous hashing over the active
//! brokers); transaction commands sent elsewhere get `NOT_COORDINATOR`.
//! The coordinator's state goes through Raft (TXN_SYNC) and producer ids
//! are handed out by the replicated state, so a new coordinator after a
//! failover resumes from the last durable transition (a client retrying
//! END_TXN finishes a prepared commit there). Participant partitions led
//! elsewhere are written through their leaders (`txn::participants`).

use std::sync::Weak;

use super::fsm::{FsmCommand, FsmReply};
use super::node::ClusterNode;
use crate::txn::state::TxnSnapshot;
use crate::txn::{TxnFuture, TxnReplicator};

/// Persists coordinator state through Raft.
#[derive(Debug)]
pub struct RaftTxns {
    /// The cluster node (weak: the coordinator must not keep it alive).
    pub node: Weak<ClusterNode>,
}

impl TxnReplicator for RaftTxns {
    fn sync(&self, snapshot: TxnSnapshot) -> TxnFuture<Result<u64, String>> {
        let node = self.node.clone();
        Box::pin(async move {
            let node = node.upgrade().ok_or("the cluster node stopped")?;
            match node.propose(FsmCommand::TxnSync { snapshot }).await {
                Ok(FsmReply::TxnsVersion(v)) => Ok(v),
                Ok(other) => Err(format!("unexpected apply result {other:?}")),
                Err(e) => Err(e.render()),
            }
        })
    }

    fn allocate_producer_id(&self) -> TxnFuture<Result<u64, String>> {
        let node = self.node.clone();
        Box::pin(async move {
            let node = node.upgrade().ok_or("the cluster node stopped")?;
            match node.propose(FsmCommand::AllocateProducerId).await {
                Ok(FsmReply::ProducerId(n)) => Ok(n),
                Ok(other) => Err(format!("unexpected apply result {other:?}")),
                Err(e) => Err(e.render()),
            }
        })
    }

    fn coordinates(&self, transactional_id: &str) -> bool {
        self.node.upgrade().is_some_and(|node| {
            node.may_coordinate()
                && super::groups::coordinator_of(&node.state(), transactional_id)
                    == Some(node.node_id())
        })
    }
}
