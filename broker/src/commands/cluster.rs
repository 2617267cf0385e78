//! CLUSTER_STATUS, LIST_CLUSTER, ELECT_LEADER and REASSIGN_PARTITIONS
//! (docs/cluster.md, "Admin replies"): parsing and replies here, the cluster's answers from the
//! seam's [`ClusterAdmin`](crate::placement::ClusterAdmin); a standalone
//! broker answers `distribution_not_enabled`.

use std::sync::Arc;

use cursus_wire::{CommandPayload, ErrorPayload};
use serde::Serialize;

use super::{HandlerResult, Reply};
use crate::broker::{Broker, Listener};

fn json_reply(prefix: &str, value: &impl Serialize, failure: &str) -> HandlerResult {
    let json = serde_json::to_string(value)
        .map_err(|e| ErrorPayload::new(failure).with_field("reason", e.to_string()))?;
    Ok(Reply::text(format!("OK {prefix}={json}")))
}

/// CLUSTER_STATUS.
pub fn cluster_status(broker: &Arc<Broker>, listener: Listener) -> HandlerResult {
    let status = broker.cluster_admin("CLUSTER_STATUS")?.status(listener);
    json_reply("cluster", &status, "marshal_cluster_status_failed")
}

/// LIST_CLUSTER (no fields).
pub fn list_cluster(broker: &Arc<Broker>, p: &CommandPayload, listener: Listener) -> HandlerResult {
    let admin = broker.cluster_admin("LIST_CLUSTER")?;
    if !p.fields().is_empty() || !p.positionals().is_empty() {
        return Err(ErrorPayload::new("unknown_command").with_field("command", "LIST_CLUSTER"));
    }
    json_reply(
        "brokers",
        &admin.brokers(listener),
        "marshal_brokers_failed",
    )
}

/// The `topic=` and `partition=` every partition admin command names.
fn topic_partition<'a>(
    p: &'a CommandPayload,
    command: &str,
) -> Result<(&'a str, u32), ErrorPayload> {
    let topic = p
        .get("topic")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ErrorPayload::new("missing_topic").with_field("command", command))?;
    let partition = match p.get("partition") {
        None | Some("") => {
            return Err(ErrorPayload::new("missing_partition").with_field("command", command))
        }
        Some(v) => v
            .parse()
            .map_err(|_| ErrorPayload::new("invalid_partition").with_field("partition", v))?,
    };
    Ok((topic, partition))
}

/// ELECT_LEADER topic=<t> partition=<n> broker=<broker-id>.
pub async fn elect_leader(broker: &Arc<Broker>, p: &CommandPayload) -> HandlerResult {
    let admin = broker.cluster_admin("ELECT_LEADER")?;
    let (topic, partition) = topic_partition(p, "ELECT_LEADER")?;
    let target = p
        .get("broker")
        .filter(|b| !b.is_empty())
        .ok_or_else(|| ErrorPayload::new("missing_broker").with_field("command", "ELECT_LEADER"))?;
    let e = admin.elect_leader(topic, partition, target).await?;
    Ok(Reply::text(format!(
        "OK topic={topic} partition={partition} previous_leader={} leader={} \
         leader_epoch={} changed={}",
        e.previous, e.leader, e.leader_epoch, e.changed
    )))
}

/// REASSIGN_PARTITIONS topic=<t> partition=<n> replicas=<id,id,...>
/// (a project extension): answered at once with the move's state.
pub async fn reassign_partitions(broker: &Arc<Broker>, p: &CommandPayload) -> HandlerResult {
    const COMMAND: &str = "REASSIGN_PARTITIONS";
    let admin = broker.cluster_admin(COMMAND)?;
    let (topic, partition) = topic_partition(p, COMMAND)?;
    let replicas = replica_list(p.get("replicas"))?;
    let r = admin
        .reassign_partition(topic, partition, &replicas)
        .await?;
    Ok(Reply::text(format!(
        "OK topic={topic} partition={partition} state={} replicas={} isr={} leader={} target={}",
        if r.done { "done" } else { "in_progress" },
        r.replicas.join(","),
        r.isr.join(","),
        r.leader.unwrap_or_default(),
        r.target.join(","),
    )))
}

/// `replicas=`: distinct, non-empty broker ids separated by commas.
fn replica_list(value: Option<&str>) -> Result<Vec<String>, ErrorPayload> {
    let value = value.filter(|v| !v.trim().is_empty()).ok_or_else(|| {
        ErrorPayload::new("missing_replicas").with_field("command", "REASSIGN_PARTITIONS")
    })?;
    let ids: Vec<String> = value.split(',').map(|id| id.trim().to_string()).collect();
    if ids.iter().any(String::is_empty) {
        return Err(ErrorPayload::new("invalid_replicas")
            .with_field("replicas", value)
            .with_field("reason", "an empty broker id"));
    }
    if let Some((_, dup)) = ids
        .iter()
        .enumerate()
        .find(|(i, id)| ids[..*i].contains(id))
    {
        return Err(ErrorPayload::new("invalid_replicas")
            .with_field("replicas", value)
            .with_field("reason", format!("broker {dup} is listed twice")));
    }
    Ok(ids)
}
