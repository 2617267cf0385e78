//! What CLUSTER_STATUS, LIST_CLUSTER, ELECT_LEADER and REASSIGN_PARTITIONS
//! (docs/cluster.md, "Admin replies"; the handlers are
//! `crate::commands::cluster`) read from this broker's copy of the
//! replicated state; ELECT_LEADER and REASSIGN_PARTITIONS go through Raft.

use std::time::{Duration, UNIX_EPOCH};

use cursus_wire::ErrorPayload;

use super::fsm::{ClusterState, FsmCommand, FsmReply, NodeId, PartitionState};
use super::node::ClusterNode;
use crate::broker::Listener;
use crate::groups::member_id::rfc3339;
use crate::placement::{BrokerView, ClusterStatus, Election, PartitionView, Reassignment};

/// How long ELECT_LEADER and REASSIGN_PARTITIONS wait for their result to
/// be applied here.
const APPLY_WAIT: Duration = Duration::from_secs(5);

/// The brokers as LIST_CLUSTER shows them (client addresses for a client
/// of `listener`).
pub fn brokers_view(state: &ClusterState, listener: Listener) -> Vec<BrokerView> {
    state
        .brokers
        .values()
        .map(|b| BrokerView {
            id: b.broker_id.clone(),
            addr: b.cluster_addr.clone(),
            client_addr: match (listener, &b.tls_client_addr) {
                (Listener::Tls, Some(tls)) => tls.clone(),
                _ => b.client_addr.clone(),
            },
            status: if b.active { "active" } else { "inactive" },
            last_seen: rfc3339(UNIX_EPOCH + Duration::from_millis(b.since_ms)),
            lifecycle_protocol: b.lifecycle_protocol,
        })
        .collect()
}

fn broker_name(state: &ClusterState, node: NodeId) -> String {
    state.broker_name(node)
}

/// CLUSTER_STATUS.
pub fn status(node: &ClusterNode, listener: Listener) -> ClusterStatus {
    let raft_leader = node.raft.leader();
    let state = node.state();
    let mut leaderless = 0;
    let mut under_replicated = 0;
    let mut partitions = Vec::new();
    for (name, topic) in &state.topics {
        for (id, p) in topic.partitions.iter().enumerate() {
            let leader_active = p
                .leader
                .is_some_and(|l| state.brokers.get(&l).is_some_and(|b| b.active));
            leaderless += u64::from(!leader_active);
            under_replicated += u64::from(p.isr.len() < p.replicas.len());
            let names = |nodes: &[NodeId]| nodes.iter().map(|n| broker_name(&state, *n)).collect();
            partitions.push(PartitionView {
                topic: name.clone(),
                partition: id as u32,
                leader: p.leader.map(|l| broker_name(&state, l)),
                leader_epoch: p.leader_epoch,
                hwm: p.committed_hwm,
                replicas: names(&p.replicas),
                isr: names(&p.isr),
                producers: p.producers.len(),
                target_replicas: p.target_replicas.as_deref().map(names),
            });
        }
    }
    ClusterStatus {
        raft_leader: raft_leader.map(|l| broker_name(&state, l)),
        brokers: brokers_view(&state, listener),
        partitions,
        leaderless,
        under_replicated,
        voters: node
            .raft
            .voters()
            .into_iter()
            .map(|n| broker_name(&state, n))
            .collect(),
        learners: node
            .raft
            .learners()
            .into_iter()
            .map(|n| broker_name(&state, n))
            .collect(),
        transaction_coordinator_shards: state.txn_shards.as_ref().map(|s| s.count),
    }
}

/// ELECT_LEADER: `target_id` becomes the leader of `topic`/`partition`,
/// answered once this broker routes by the result.
pub async fn elect_leader(
    node: &ClusterNode,
    topic: &str,
    partition: u32,
    target_id: &str,
) -> Result<Election, ErrorPayload> {
    let target = {
        let state = node.state();
        let Some(t) = state.topics.get(topic) else {
            return Err(ErrorPayload::new("topic_not_found").with_field("topic", topic));
        };
        if partition as usize >= t.partitions.len() {
            return Err(ErrorPayload::new("partition_not_found").with_field("partition", partition));
        }
        state.node_of(target_id).ok_or_else(|| {
            ErrorPayload::new("leader_election_rejected")
                .with_field("reason", format!("unknown broker {target_id}"))
        })?
    };
    let reply = node
        .propose(FsmCommand::ElectLeader {
            topic: topic.to_string(),
            partition,
            target,
        })
        .await
        .map_err(|e| {
            if e.code == "cluster_metadata_unavailable" {
                ErrorPayload::new("leader_election_result_unavailable").with_field(
                    "reason",
                    e.fields.get("reason").cloned().unwrap_or_default(),
                )
            } else {
                e
            }
        })?;
    let FsmReply::Elected {
        previous,
        leader,
        leader_epoch,
        changed,
    } = reply
    else {
        return Err(ErrorPayload::new("leader_election_result_unavailable")
            .with_field("reason", "unexpected apply result"));
    };
    // Answer once this broker routes by the new leader too.
    let t = topic.to_string();
    node.wait_for(
        move |s| {
            s.partition(&t, partition)
                .is_some_and(|p| p.leader_epoch >= leader_epoch)
        },
        APPLY_WAIT,
    )
    .await?;
    Ok(Election {
        previous: previous.map(|n| node.broker_id(n)).unwrap_or_default(),
        leader: node.broker_id(leader),
        leader_epoch,
        changed,
    })
}

/// REASSIGN_PARTITIONS: starts moving `topic`/`partition` to the brokers
/// `broker_ids` through Raft and answers with the move's state once this
/// broker applied it. A request this broker's copy already answers (the
/// same move in progress, or done) is answered from it without a
/// proposal, so polling with the same request costs no Raft entry.
pub async fn reassign_partition(
    node: &ClusterNode,
    topic: &str,
    partition: u32,
    broker_ids: &[String],
) -> Result<Reassignment, ErrorPayload> {
    let target = target_nodes(&node.state(), topic, partition, broker_ids)?;
    if let Some(r) = reassignment_view(&node.state(), topic, partition, &target) {
        return Ok(r);
    }
    node.propose(FsmCommand::ReassignPartition {
        topic: topic.to_string(),
        partition,
        target: target.clone(),
    })
    .await?;
    node.wait_for(
        |s| reassignment_view(s, topic, partition, &target).is_some(),
        APPLY_WAIT,
    )
    .await?;
    reassignment_view(&node.state(), topic, partition, &target).ok_or_else(|| {
        ErrorPayload::new("cluster_metadata_unavailable")
            .with_field("reason", "the reassignment was not applied here in time")
    })
}

/// The node ids of `broker_ids`, once the partition exists and every id
/// names a registered broker (the rest is checked when it is applied).
fn target_nodes(
    state: &ClusterState,
    topic: &str,
    partition: u32,
    broker_ids: &[String],
) -> Result<Vec<NodeId>, ErrorPayload> {
    let Some(t) = state.topics.get(topic) else {
        return Err(ErrorPayload::new("topic_not_found").with_field("topic", topic));
    };
    if partition as usize >= t.partitions.len() {
        return Err(ErrorPayload::new("partition_not_found")
            .with_field("topic", topic)
            .with_field("partition", partition));
    }
    broker_ids
        .iter()
        .map(|id| {
            state
                .node_of(id)
                .ok_or_else(|| ErrorPayload::new("broker_not_found").with_field("broker", id))
        })
        .collect()
}

/// The state of the move of `topic`/`partition` to `target` in `state`,
/// when `state` holds it (in progress, or done); `None` while it does not.
fn reassignment_view(
    state: &ClusterState,
    topic: &str,
    partition: u32,
    target: &[NodeId],
) -> Option<Reassignment> {
    let p: &PartitionState = state.partition(topic, partition)?;
    let done = match &p.target_replicas {
        Some(t) if t.as_slice() == target => false,
        None if p.replicas.as_slice() == target => true,
        _ => return None,
    };
    let names = |nodes: &[NodeId]| nodes.iter().map(|n| state.broker_name(*n)).collect();
    Some(Reassignment {
        done,
        replicas: names(&p.replicas),
        isr: names(&p.isr),
        leader: p.leader.map(|l| state.broker_name(l)),
        target: names(target),
    })
}
