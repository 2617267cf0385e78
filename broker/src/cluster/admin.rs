//! CLUSTER_STATUS, LIST_CLUSTER and ELECT_LEADER (docs/cluster.md, "Admin
//! replies"), answered from this broker's copy of the replicated state;
//! ELECT_LEADER goes through Raft.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use cursus_wire::{CommandPayload, ErrorPayload};
use serde::Serialize;

use super::fsm::{ClusterState, FsmCommand, FsmReply, NodeId};
use super::node::ClusterNode;
use crate::broker::{Broker, Listener};
use crate::commands::{HandlerResult, Reply};
use crate::groups::member_id::rfc3339;

/// How long ELECT_LEADER waits for its result to be applied here.
const APPLY_WAIT: Duration = Duration::from_secs(5);

/// The cluster node, or `distribution_not_enabled` for a standalone broker.
pub fn node_of<'a>(
    broker: &'a Broker,
    command: &str,
) -> Result<&'a Arc<ClusterNode>, ErrorPayload> {
    broker
        .cluster()
        .ok_or_else(|| ErrorPayload::new("distribution_not_enabled").with_field("command", command))
}

/// One broker of LIST_CLUSTER and CLUSTER_STATUS.
#[derive(Debug, Serialize)]
pub struct BrokerView {
    id: String,
    addr: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    client_addr: String,
    status: &'static str,
    last_seen: String,
    lifecycle_protocol: u32,
}

#[derive(Debug, Serialize)]
struct PartitionView {
    topic: String,
    partition: u32,
    leader: Option<String>,
    leader_epoch: u64,
    hwm: u64,
    replicas: Vec<String>,
    isr: Vec<String>,
    /// Idempotent producers whose committed sequences the replicated
    /// state holds for the partition.
    producers: usize,
}

#[derive(Debug, Serialize)]
struct StatusView {
    raft_leader: Option<String>,
    brokers: Vec<BrokerView>,
    partitions: Vec<PartitionView>,
    leaderless: u64,
    under_replicated: u64,
    /// The Raft voters and learners (broker ids) as this broker knows the
    /// membership.
    voters: Vec<String>,
    learners: Vec<String>,
    /// The cluster's transaction coordinator shard count (`null` until a
    /// broker that knows it registered).
    transaction_coordinator_shards: Option<u32>,
}

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

fn json_reply(prefix: &str, value: &impl Serialize, failure: &str) -> HandlerResult {
    let json = serde_json::to_string(value)
        .map_err(|e| ErrorPayload::new(failure).with_field("reason", e.to_string()))?;
    Ok(Reply::text(format!("OK {prefix}={json}")))
}

/// CLUSTER_STATUS.
pub fn cluster_status(broker: &Arc<Broker>, listener: Listener) -> HandlerResult {
    let node = node_of(broker, "CLUSTER_STATUS")?;
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
            });
        }
    }
    let view = StatusView {
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
    };
    json_reply("cluster", &view, "marshal_cluster_status_failed")
}

/// LIST_CLUSTER (no fields).
pub fn list_cluster(broker: &Arc<Broker>, p: &CommandPayload, listener: Listener) -> HandlerResult {
    let node = node_of(broker, "LIST_CLUSTER")?;
    if !p.fields().is_empty() || !p.positionals().is_empty() {
        return Err(ErrorPayload::new("unknown_command").with_field("command", "LIST_CLUSTER"));
    }
    let brokers = brokers_view(&node.state(), listener);
    json_reply("brokers", &brokers, "marshal_brokers_failed")
}

/// ELECT_LEADER topic=<t> partition=<n> broker=<broker-id>.
pub async fn elect_leader(broker: &Arc<Broker>, p: &CommandPayload) -> HandlerResult {
    let node = node_of(broker, "ELECT_LEADER")?;
    let topic = p
        .get("topic")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ErrorPayload::new("missing_topic").with_field("command", "ELECT_LEADER"))?;
    let partition: u32 = match p.get("partition") {
        None | Some("") => {
            return Err(ErrorPayload::new("missing_partition").with_field("command", "ELECT_LEADER"))
        }
        Some(v) => v
            .parse()
            .map_err(|_| ErrorPayload::new("invalid_partition").with_field("partition", v))?,
    };
    let target_id = p
        .get("broker")
        .filter(|b| !b.is_empty())
        .ok_or_else(|| ErrorPayload::new("missing_broker").with_field("command", "ELECT_LEADER"))?;
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
    let previous = previous.map(|n| node.broker_id(n)).unwrap_or_default();
    Ok(Reply::text(format!(
        "OK topic={topic} partition={partition} previous_leader={previous} leader={} \
         leader_epoch={leader_epoch} changed={changed}",
        node.broker_id(leader)
    )))
}
