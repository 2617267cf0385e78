//! Transactions in distributed mode: every transactional id has one
//! coordinator, the owner of its shard (`super::shards`); transaction
//! commands sent elsewhere get `NOT_COORDINATOR`. Every TXN_SYNC claims
//! the shard epoch this broker owns, and the state machine refuses a stale
//! claim: the coordinator then answers `NOT_COORDINATOR` (naming the new
//! owner once this broker's copy knows it) and acknowledges nothing.
//! The coordinator's state goes through Raft (TXN_SYNC) and producer ids
//! are handed out by the replicated state, so a new coordinator after a
//! failover resumes from the last durable transition (a client retrying
//! END_TXN finishes a prepared commit there). Participant partitions led
//! elsewhere are written through their leaders (`txn::participants`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use cursus_wire::ErrorPayload;

use super::fsm::{FsmCommand, FsmReply};
use super::node::ClusterNode;
use crate::txn::state::TxnSnapshot;
use crate::txn::{TxnCoordinator, TxnFuture, TxnReplicator};

/// Persists coordinator state through Raft and keeps the cluster's copy
/// of every transactional id's state.
#[derive(Debug)]
pub struct RaftTxns {
    /// The cluster node (weak: the coordinator must not keep it alive).
    node: Weak<ClusterNode>,
    copy: Arc<Mutex<ClusterCopy>>,
}

/// The cluster's transaction state as this broker last saw it.
#[derive(Debug, Default)]
struct ClusterCopy {
    /// The cluster's transactions version of `snapshots`, or of this
    /// broker's own latest TXN_SYNC if newer.
    version: u64,
    snapshots: BTreeMap<String, TxnSnapshot>,
    /// The ids this broker coordinated at the last sync, with the shard
    /// epoch it owned them at.
    owned: HashMap<String, u64>,
    /// Ids whose cluster state could not be taken over because a command
    /// held them: taken at their next lock.
    deferred: HashSet<String>,
}

fn lock(copy: &Mutex<ClusterCopy>) -> std::sync::MutexGuard<'_, ClusterCopy> {
    copy.lock().unwrap_or_else(|e| e.into_inner())
}

impl RaftTxns {
    /// The replicator of `node`'s broker.
    pub fn new(node: Weak<ClusterNode>) -> RaftTxns {
        RaftTxns {
            node,
            copy: Arc::default(),
        }
    }

    /// The shard epoch this broker coordinates `transactional_id` at, if
    /// it does.
    fn owned_at(&self, transactional_id: &str) -> Option<u64> {
        let node = self.node.upgrade()?;
        if !node.may_coordinate() {
            return None;
        }
        let state = node.state();
        let (owner, epoch) = super::shards::owner(&state, transactional_id)?;
        (owner == node.node_id()).then_some(epoch)
    }

    /// Takes over the cluster's state (`snapshots` at transactions
    /// version `version`) of the ids other brokers coordinate, and of ids
    /// this broker has just become the coordinator of (a failover); the
    /// ids it already coordinated at the same shard epoch keep their state
    /// in `coordinator`, which is ahead of the cluster's (it persists
    /// before it applies). A
    /// `version` older than this broker's own latest write is ignored, as
    /// the broker's copy of the replicated state may lag its proposals.
    pub fn sync_from_cluster(
        &self,
        coordinator: &TxnCoordinator,
        snapshots: &BTreeMap<String, TxnSnapshot>,
        version: u64,
    ) {
        let previously_owned = {
            let mut copy = lock(&self.copy);
            if version < copy.version {
                return;
            }
            copy.version = version;
            copy.snapshots = snapshots.clone();
            std::mem::take(&mut copy.owned)
        };
        let mut owned = HashMap::new();
        let mut deferred = std::mem::take(&mut lock(&self.copy).deferred);
        for (id, snapshot) in snapshots {
            let epoch = self.owned_at(id);
            if let Some(epoch) = epoch {
                owned.insert(id.clone(), epoch);
            }
            // Owned since the last sync at the same shard epoch: this
            // broker's copy is the newest. Owned again after another
            // broker held the shard (a higher epoch, e.g. this broker was
            // cut off while the shard moved away and back) the cluster's
            // copy is: that owner's transitions came after ours.
            if epoch.is_some() && previously_owned.get(id) == epoch.as_ref() {
                continue;
            }
            if coordinator.adopt(id, snapshot) {
                deferred.remove(id);
            } else {
                deferred.insert(id.clone());
            }
        }
        let mut copy = lock(&self.copy);
        copy.owned = owned;
        copy.deferred.extend(deferred);
    }
}

impl TxnReplicator for RaftTxns {
    fn sync(&self, snapshot: TxnSnapshot) -> TxnFuture<Result<(), String>> {
        let node = self.node.clone();
        let copy = Arc::clone(&self.copy);
        Box::pin(async move {
            let node = node.upgrade().ok_or("the cluster node stopped")?;
            let id = snapshot.transactional_id.clone();
            let shard_epoch = super::shards::owned_epoch(&node, &id).map_err(|e| e.render())?;
            let cmd = FsmCommand::TxnSync {
                snapshot: snapshot.clone(),
                node: node.node_id(),
                shard_epoch,
            };
            match node.propose(cmd).await {
                Ok(FsmReply::TxnsVersion(v)) => {
                    let mut copy = lock(&copy);
                    copy.version = copy.version.max(v);
                    // This broker's own write is the newest state.
                    copy.deferred.remove(&id);
                    copy.snapshots.insert(id, snapshot);
                    Ok(())
                }
                Ok(other) => Err(format!("unexpected apply result {other:?}")),
                Err(e) if e.code == "NOT_COORDINATOR" => {
                    Err(fenced(&node, &id, shard_epoch, e).await.render())
                }
                Err(e) => Err(e.render()),
            }
        })
    }

    fn snapshots(&self) -> Vec<TxnSnapshot> {
        lock(&self.copy).snapshots.values().cloned().collect()
    }

    fn fenced(&self, transactional_id: &str) {
        lock(&self.copy).owned.remove(transactional_id);
    }

    fn take_deferred(&self, transactional_id: &str) -> Option<TxnSnapshot> {
        let mut copy = lock(&self.copy);
        if !copy.deferred.remove(transactional_id) {
            return None;
        }
        copy.snapshots.get(transactional_id).cloned()
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
        self.owned_at(transactional_id).is_some()
    }
}

/// How long a fenced coordinator waits for its copy to learn the new owner.
const FENCED_WAIT: Duration = Duration::from_secs(2);

/// A TXN_SYNC refused because this broker no longer owns `id`'s shard at
/// `epoch`: waits (bounded) until its copy shows the change, so the client
/// is sent to the new owner; otherwise answers the refusal without an
/// address (clients back off and look the coordinator up again).
async fn fenced(node: &ClusterNode, id: &str, epoch: u64, refusal: ErrorPayload) -> ErrorPayload {
    tracing::warn!(transactional_id = id, shard_epoch = epoch, error = %refusal.render(), "fenced: this broker no longer coordinates the transactional id");
    let me = node.node_id();
    let moved = |s: &super::fsm::ClusterState| super::shards::owner(s, id) != Some((me, epoch));
    if node.wait_for(moved, FENCED_WAIT).await.is_ok() {
        if let Err(e) = super::shards::owned_epoch(node, id) {
            return e.with_field("reason", "coordinator fenced");
        }
    }
    refusal.with_field("transactional_id", id)
}
