//! Consumer groups in distributed mode: every group has one coordinator,
//! chosen by rendezvous hashing of the group name over the active brokers
//! (so a broker leaving moves only its own groups); group commands sent
//! elsewhere get `NOT_COORDINATOR host= port=`. Registrations, committed
//! offsets and membership (generation, members, assignments) go through
//! Raft (`FsmCommand::GroupRecord`), so every broker holds them: a new
//! coordinator after a failover starts from the last commit with the same
//! members and generation (they go on without a rejoin; restored members
//! get a fresh session, so dead ones expire as usual), and a partition
//! leader resolves committed offsets for CONSUME. Member commits and
//! membership records are fenced: applied only if their proposer still
//! coordinates the group. See `crate::groups::coordinator` for when
//! membership is written and taken over.

use std::future::Future;
use std::pin::Pin;
use std::sync::Weak;

use cursus_wire::ErrorPayload;

use super::fsm::{ClusterState, FsmCommand, FsmReply, NodeId};
use super::node::ClusterNode;
use crate::broker::{Broker, Listener};
use crate::groups::records::RecordBody;
use crate::groups::GroupReplicator;
use crate::placement::CoordinatorAddr;

/// Writes group records through Raft.
#[derive(Debug)]
pub struct RaftGroups {
    /// The cluster node (weak: the coordinator must not keep it alive).
    pub node: Weak<ClusterNode>,
}

impl GroupReplicator for RaftGroups {
    fn replicate(
        &self,
        record: RecordBody,
        member_commit: bool,
    ) -> Pin<Box<dyn Future<Output = Result<u64, ErrorPayload>> + Send>> {
        let node = self.node.clone();
        Box::pin(async move {
            let node = node.upgrade().ok_or_else(|| {
                ErrorPayload::new("coordinator_not_available")
                    .with_field("reason", "the cluster node stopped")
            })?;
            let fence = member_commit.then(|| node.node_id());
            match node
                .propose(FsmCommand::GroupRecord { record, fence })
                .await
            {
                Ok(FsmReply::GroupsVersion(v)) => Ok(v),
                Ok(other) => Err(ErrorPayload::new("offset_sync_failed")
                    .with_field("reason", format!("unexpected apply result {other:?}"))),
                Err(e) => Err(e),
            }
        })
    }

    fn synced(&self, version: u64) {
        if let Some(node) = self.node.upgrade() {
            node.groups_synced(version);
        }
    }
}

/// The coordinator of group `key`: the active broker with the highest
/// hash of (key, node id). (Transactional ids go to their shard's owner,
/// `super::shards`.)
pub fn coordinator_of(state: &ClusterState, key: &str) -> Option<NodeId> {
    state
        .active_brokers()
        .into_iter()
        .max_by_key(|node| rendezvous(key, *node))
}

fn rendezvous(key: &str, node: NodeId) -> u64 {
    // FNV-1a over the key then the node id: stable across processes.
    super::shards::fnv1a(key.bytes().chain(node.to_be_bytes()))
}

/// `Ok` on `group`'s coordinator; otherwise `NOT_COORDINATOR host= port=`
/// (or `coordinator_not_available`).
pub fn check_coordinator(
    node: &ClusterNode,
    group: &str,
    listener: Listener,
) -> Result<(), ErrorPayload> {
    if !node.may_coordinate() {
        // A restarted broker's copy may still name it coordinator of
        // groups that moved while it was away, and its offsets may be
        // older than the replicated ones until its first sync.
        return Err(ErrorPayload::new("coordinator_not_available").with_field("group", group));
    }
    if !node.in_contact() {
        // Paused or cut off past a session: the group may have moved, and
        // this copy still names this broker with the offsets of before.
        return Err(ErrorPayload::new("coordinator_not_available")
            .with_field("group", group)
            .with_field("reason", "out of contact with the Raft leader"));
    }
    let state = node.state();
    if node.groups_synced_version() < state.groups_moved_at {
        // The group may just have moved here: the offsets its former
        // coordinator committed are not all in this copy yet.
        return Err(ErrorPayload::new("coordinator_not_available")
            .with_field("group", group)
            .with_field("reason", "taking the groups over"));
    }
    let coordinator = coordinator_of(&state, group);
    drop(state);
    match coordinator {
        Some(c) if c == node.node_id() => Ok(()),
        Some(c) => Err(super::shards::not_coordinator(node, c, listener)),
        None => Err(ErrorPayload::new("coordinator_not_available").with_field("group", group)),
    }
}

/// FIND_COORDINATOR `group=` in distributed mode.
pub fn find(
    node: &ClusterNode,
    key: &str,
    listener: Listener,
) -> Result<CoordinatorAddr, ErrorPayload> {
    let c = coordinator_of(&node.state(), key)
        .ok_or_else(|| ErrorPayload::new("coordinator_not_available").with_field("key", key))?;
    Ok(super::shards::coordinator_addr(node, c, listener))
}

/// Body of the broker-to-broker removal check.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct RemovalCheck {
    topic: String,
    blocked_code: String,
}

/// DELETE/TRUNCATE in a cluster: fails with `blocked_code` while a group of
/// `topic` has active members on any broker (each coordinator knows its own
/// groups' members; this broker checks its own separately).
pub async fn check_removal_elsewhere(
    node: &ClusterNode,
    topic: &str,
    blocked_code: &str,
) -> Result<(), ErrorPayload> {
    // The guard is dropped before `peer_addr` reads the state again: a
    // second read while a Raft apply waits to write would deadlock (std's
    // RwLock lets a waiting writer go first), and with every runtime thread
    // blocked so the broker stops answering.
    let active = node.state().active_brokers();
    let others: Vec<String> = active
        .into_iter()
        .filter(|n| *n != node.node_id())
        .filter_map(|n| node.peer_addr(n))
        .collect();
    let body = bytes::Bytes::from(
        serde_json::to_vec(&RemovalCheck {
            topic: topic.to_string(),
            blocked_code: blocked_code.to_string(),
        })
        .unwrap_or_default(),
    );
    for addr in others {
        match node
            .peers
            .get(&addr)
            .request(cursus_wire::Command::GroupStatus, body.clone())
            .await
        {
            Ok(_) => {}
            Err(super::transport::TransportError::Remote { error, .. }) => return Err(error),
            Err(e) => {
                return Err(ErrorPayload::new("coordinator_not_available")
                    .with_field("reason", e.to_string()))
            }
        }
    }
    Ok(())
}

/// A broker answering [`check_removal_elsewhere`] for its own groups.
pub async fn serve_removal_check(
    broker: &Broker,
    body: &[u8],
) -> Result<bytes::Bytes, ErrorPayload> {
    let q: RemovalCheck = serde_json::from_slice(body)
        .map_err(|e| ErrorPayload::new("malformed_input").with_field("reason", e.to_string()))?;
    broker
        .groups
        .begin_topic_removal(&q.topic, &q.blocked_code)
        .await
        .map(|_| bytes::Bytes::from_static(b"OK"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fsm::BrokerEntry;

    fn state(nodes: &[NodeId]) -> ClusterState {
        let mut s = ClusterState::default();
        for n in nodes {
            s.brokers.insert(
                *n,
                BrokerEntry {
                    broker_id: format!("broker-{n}"),
                    cluster_addr: String::new(),
                    client_addr: String::new(),
                    tls_client_addr: None,
                    active: true,
                    lifecycle_protocol: 2,
                    since_ms: 0,
                    hosts_replicas: true,
                    txn_shards: 50,
                },
            );
        }
        s
    }

    #[test]
    fn rendezvous_moves_only_the_groups_of_a_broker_that_leaves() {
        let all = state(&[1, 2, 3]);
        let mut without_2 = all.clone();
        without_2.brokers.get_mut(&2).unwrap().active = false;
        let mut owners = std::collections::BTreeSet::new();
        for g in 0..200 {
            let key = format!("group-{g}");
            let before = coordinator_of(&all, &key).unwrap();
            let after = coordinator_of(&without_2, &key).unwrap();
            owners.insert(before);
            if before != 2 {
                assert_eq!(before, after, "{key} moved needlessly");
            } else {
                assert_ne!(after, 2);
            }
        }
        assert_eq!(owners.len(), 3, "groups spread over every broker");
        assert_eq!(coordinator_of(&state(&[]), "g"), None);
    }
}
