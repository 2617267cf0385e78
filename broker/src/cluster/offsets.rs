//! LIST_OFFSETS in distributed mode: any broker answers, asking each
//! partition's leader for its offsets (LIST_OFFSETS on the cluster
//! listener) when it does not lead the partition itself.

use bytes::Bytes;
use cursus_wire::{Command, ErrorPayload};
use serde::{Deserialize, Serialize};

use super::node::ClusterNode;
use crate::broker::Broker;
use crate::placement::{leader_not_found, local_offsets};
use crate::topics::Partition;

/// Body of a broker-to-broker LIST_OFFSETS.
#[derive(Debug, Serialize, Deserialize)]
struct OffsetsQuery {
    topic: String,
    partition: u32,
    /// The leader epoch the asking broker knows: a leader whose copy of
    /// the replicated state is older (a CREATE, TRUNCATE or election it
    /// has not applied yet) refuses, retryably, rather than answer from
    /// its old generation or say the topic does not exist.
    #[serde(default)]
    min_epoch: u64,
}

/// The offsets item of `part`, from its leader.
pub async fn line(
    broker: &Broker,
    node: &ClusterNode,
    topic: &str,
    part: &Partition,
) -> Result<String, ErrorPayload> {
    let (leader, epoch) = node
        .state()
        .partition(topic, part.id())
        .map_or((None, 0), |p| (p.leader, p.leader_epoch));
    match leader {
        None if node.state().partition(topic, part.id()).is_some() => {
            Err(leader_not_found(topic, part.id()))
        }
        Some(l) if l != node.node_id() => {
            let addr = node
                .peer_addr(l)
                .ok_or_else(|| ErrorPayload::new("leader_not_found").with_field("topic", topic))?;
            let body = serde_json::to_vec(&OffsetsQuery {
                topic: topic.to_string(),
                partition: part.id(),
                min_epoch: epoch,
            })
            .unwrap_or_default();
            let reply = node
                .peers
                .get(&addr)
                .request(Command::ListOffsets, Bytes::from(body))
                .await
                .map_err(|e| match e {
                    super::transport::TransportError::Remote { error, .. } => error,
                    other => ErrorPayload::new("leader_not_found")
                        .with_field("topic", topic)
                        .with_field("reason", other.to_string()),
                })?;
            Ok(String::from_utf8_lossy(&reply).into_owned())
        }
        // This broker leads it: once it serves the current epoch (after a
        // TRUNCATE, its new generation).
        _ => local(broker, node, topic, part.id(), epoch),
    }
}

/// A leader answering another broker's LIST_OFFSETS for one partition.
pub fn serve(broker: &Broker, node: &ClusterNode, body: &[u8]) -> Result<Bytes, ErrorPayload> {
    let q: OffsetsQuery = serde_json::from_slice(body)
        .map_err(|e| ErrorPayload::new("malformed_input").with_field("reason", e.to_string()))?;
    local(broker, node, &q.topic, q.partition, q.min_epoch).map(Bytes::from)
}

/// The offsets of a partition this broker leads, from its current
/// generation.
fn local(
    broker: &Broker,
    node: &ClusterNode,
    topic: &str,
    partition: u32,
    min_epoch: u64,
) -> Result<String, ErrorPayload> {
    // Behind the asker: it knows a newer epoch, or the partition at all
    // (a CREATE this broker has not applied yet; epochs start at 1).
    let behind = min_epoch > 0
        && node
            .state()
            .partition(topic, partition)
            .map_or(true, |p| p.leader_epoch < min_epoch);
    if behind {
        return Err(leader_not_found(topic, partition).with_field("reason", "catching_up"));
    }
    super::routing::check_leader(node, topic, partition, crate::broker::Listener::Plain)?;
    let part = broker
        .topics
        .get(topic)
        .and_then(|t| t.partition(partition).cloned())
        .ok_or_else(|| super::routing::missing_topic(node, topic))?;
    Ok(local_offsets(&part))
}
