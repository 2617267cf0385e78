//! Topic administration and discovery: CREATE, ALTER_TOPIC_CONFIG, DELETE,
//! TRUNCATE, LIST, HELP, DESCRIBE, METADATA, LIST_OFFSETS, FIND_COORDINATOR.

use std::sync::Arc;

use bytes::Bytes;
use cursus_wire::{CommandPayload, ErrorPayload};
use serde::Serialize;

use super::params::{existing_topic, number, partition_number, partition_of, required};
use super::{HandlerResult, Reply, SUPPORTED};
use crate::broker::{Broker, Listener};
use crate::placement::{CoordinatorKey, TopicLeaders, Truncated};
use crate::topics::definition::{parse_bool, parse_min_isr, topic_param};
use crate::topics::{definition_line, is_internal_topic, TopicPatch};

/// CREATE: new topic from defaults, or presence-aware patch of an existing one.
pub async fn create(broker: &Arc<Broker>, p: &CommandPayload) -> HandlerResult {
    let patch = TopicPatch::parse(p)?;
    if is_internal_topic(&patch.name) {
        return Err(ErrorPayload::new("internal_topic_write_forbidden")
            .with_field("command", "CREATE")
            .with_field("topic", &patch.name));
    }
    let def = broker.catalog().create(broker, &patch).await?;
    // New partitions (or a new topic matching a pattern) rebalance groups.
    broker.groups.topic_defined(&broker.topics, &def.name).await;
    Ok(Reply::text(definition_line(
        &def,
        broker.config.min_insync_replicas,
    )))
}

/// ALTER_TOPIC_CONFIG topic=<name> min_in_sync_replicas=<N|default>.
pub async fn alter_topic_config(broker: &Arc<Broker>, p: &CommandPayload) -> HandlerResult {
    let name = topic_param(p, "ALTER_TOPIC_CONFIG")?;
    let value = required(
        p,
        "min_in_sync_replicas",
        "missing_min_in_sync_replicas",
        "ALTER_TOPIC_CONFIG",
    )?;
    let value = parse_min_isr(value)?;
    let def = broker.catalog().alter_min_isr(broker, name, value).await?;
    Ok(Reply::text(definition_line(
        &def,
        broker.config.min_insync_replicas,
    )))
}

/// DELETE topic=<name> [if_exists=<bool>].
pub async fn delete(broker: &Arc<Broker>, p: &CommandPayload) -> HandlerResult {
    let name = topic_param(p, "DELETE")?;
    let if_exists = match p.get("if_exists") {
        None => false,
        Some(v) => parse_bool(v)
            .ok_or_else(|| ErrorPayload::new("invalid_if_exists").with_field("if_exists", v))?,
    };
    if is_internal_topic(name) {
        return Err(ErrorPayload::new("internal_topic_delete_forbidden").with_field("topic", name));
    }
    // Fails closed while an open or committing transaction references the
    // topic (and holds off new participants), or while a group of the
    // topic has active members (holding the group coordinator so no member
    // joins until the groups are cleaned up).
    let txn_removal = broker
        .txns
        .begin_topic_removal(name, "topic_delete_blocked")
        .await?;
    let removal = broker
        .groups
        .begin_topic_removal(name, "topic_delete_blocked")
        .await?;
    let outcome = broker
        .catalog()
        .delete(broker, name, if_exists, "topic_delete_blocked")
        .await?;
    removal.finish(&broker.topics, "topic_deleted").await;
    txn_removal.finish().await;
    let mut line = format!("OK topic={name} deleted={}", outcome.deleted);
    if outcome.cleanup_pending {
        line.push_str(" cleanup_pending=true");
    }
    Ok(Reply::text(line))
}

/// TRUNCATE topic=<name> expected_revision=<N>.
pub async fn truncate(broker: &Arc<Broker>, p: &CommandPayload) -> HandlerResult {
    let name = topic_param(p, "TRUNCATE")?;
    if is_internal_topic(name) {
        return Err(
            ErrorPayload::new("internal_topic_truncate_forbidden").with_field("topic", name)
        );
    }
    let expected = required(
        p,
        "expected_revision",
        "missing_expected_revision",
        "TRUNCATE",
    )?;
    let expected: u64 = number(expected, "expected_revision", "invalid_expected_revision")?;
    let txn_removal = broker
        .txns
        .begin_topic_removal(name, "topic_truncate_blocked")
        .await?;
    let removal = broker
        .groups
        .begin_topic_removal(name, "topic_truncate_blocked")
        .await?;
    let Truncated {
        def,
        cleanup_pending,
    } = broker
        .catalog()
        .truncate(broker, name, expected, "topic_truncate_blocked")
        .await?;
    removal.finish(&broker.topics, "topic_truncated").await;
    txn_removal.finish().await;
    let mut line = format!(
        "OK topic={name} truncated=true revision={} lifecycle_epoch={} leo=0 hwm=0",
        def.revision, def.lifecycle_epoch
    );
    if cleanup_pending {
        line.push_str(" cleanup_pending=true");
    }
    Ok(Reply::text(line))
}

/// LIST: `OK count=<N> topics=<csv>`.
pub fn list(broker: &Arc<Broker>) -> HandlerResult {
    let names: Vec<String> = broker
        .topics
        .list()
        .iter()
        .map(|t| t.def.name.clone())
        .collect();
    Ok(Reply::text(format!(
        "OK count={} topics={}",
        names.len(),
        names.join(",")
    )))
}

/// HELP: `OK commands=<csv>`.
pub fn help() -> HandlerResult {
    let names: Vec<&str> = SUPPORTED.iter().map(|c| c.name()).collect();
    Ok(Reply::text(format!("OK commands={}", names.join(","))))
}

#[derive(Serialize)]
struct DescribeReply<'a> {
    status: &'static str,
    topic: &'a str,
    definition: DefinitionJson<'a>,
    partitions: Vec<PartitionJson>,
}

#[derive(Serialize)]
struct DefinitionJson<'a> {
    name: &'a str,
    revision: u64,
    partitions: u32,
    replication_factor: u32,
    idempotent: bool,
    event_sourcing: bool,
    lifecycle_epoch: u64,
    min_in_sync_replicas: Option<u32>,
    effective_min_in_sync_replicas: u32,
    policy: PolicyJson<'a>,
}

#[derive(Serialize)]
struct PolicyJson<'a> {
    cleanup_policy: &'static str,
    partitioner: &'static str,
    auth_policy: &'static str,
    read_acl: &'a [String],
    write_acl: &'a [String],
    retention_hours: u64,
    retention_bytes: u64,
    aggregate_replay: bool,
}

#[derive(Serialize)]
struct PartitionJson {
    id: u32,
    leader: String,
    replicas: Vec<String>,
    isr: Vec<String>,
    earliest: u64,
    leo: u64,
    hwm: u64,
}

/// DESCRIBE topic=<name>: the documented JSON object.
pub fn describe(broker: &Arc<Broker>, p: &CommandPayload, listener: Listener) -> HandlerResult {
    let topic = existing_topic(broker, p, "DESCRIBE")?;
    // In a cluster the definition comes from the replicated state, like
    // METADATA's: the local materialization follows it a moment later, and
    // two commands answered by one broker must not disagree on the revision.
    let placement = broker.placement();
    let replicated = placement.definition(&topic.def.name);
    let def = replicated.as_ref().unwrap_or(&topic.def);
    let reply = DescribeReply {
        status: "OK",
        topic: &def.name,
        definition: DefinitionJson {
            name: &def.name,
            revision: def.revision,
            partitions: def.partitions,
            replication_factor: def.replication_factor,
            idempotent: def.idempotent,
            event_sourcing: def.event_sourcing,
            lifecycle_epoch: def.lifecycle_epoch,
            min_in_sync_replicas: def.min_in_sync_replicas,
            effective_min_in_sync_replicas: def
                .min_in_sync_replicas
                .unwrap_or(broker.config.min_insync_replicas),
            policy: PolicyJson {
                cleanup_policy: def.cleanup_policy.as_str(),
                partitioner: def.partitioner.as_str(),
                auth_policy: def.auth_policy.as_str(),
                read_acl: &def.read_acl,
                write_acl: &def.write_acl,
                retention_hours: def.retention_hours,
                retention_bytes: def.retention_bytes,
                aggregate_replay: def.aggregate_replay,
            },
        },
        partitions: topic
            .partitions
            .iter()
            .map(|part| {
                let log = part.log();
                let replicas = placement.replicas(broker, &def.name, part, listener);
                PartitionJson {
                    id: part.id(),
                    leader: replicas.leader,
                    replicas: replicas.replicas,
                    isr: replicas.isr,
                    earliest: log.earliest_offset(),
                    leo: log.log_end_offset(),
                    hwm: replicas.hwm,
                }
            })
            .collect(),
    };
    let json = serde_json::to_vec(&reply).map_err(|e| {
        ErrorPayload::new("marshal_metadata_failed").with_field("reason", e.to_string())
    })?;
    Ok(Reply::Ok(Bytes::from(json)))
}

/// METADATA topic=<name>: each partition's leader and epoch, and the
/// authoritative topic policy.
pub fn metadata(broker: &Arc<Broker>, p: &CommandPayload, listener: Listener) -> HandlerResult {
    let name = topic_param(p, "METADATA")?;
    let TopicLeaders {
        def,
        leaders,
        epochs,
    } = broker
        .placement()
        .leaders(broker, name, listener)
        .ok_or_else(|| ErrorPayload::new("topic_not_found").with_field("topic", name))?;
    let leaders = leaders.join(",");
    let epochs: Vec<String> = epochs.iter().map(u64::to_string).collect();
    let epochs = epochs.join(",");
    let def = &def;
    Ok(Reply::text(format!(
        "OK topic={} partitions={} leaders={leaders} epochs={epochs} revision={} \
         replication_factor={} idempotent={} event_sourcing={} cleanup_policy={} partitioner={} \
         auth_policy={} read_acl={} write_acl={} retention_hours={} retention_bytes={} \
         lifecycle_epoch={} aggregate_replay={}",
        def.name,
        def.partitions,
        def.revision,
        def.replication_factor,
        def.idempotent,
        def.event_sourcing,
        def.cleanup_policy,
        def.partitioner,
        def.auth_policy,
        def.read_acl.join(","),
        def.write_acl.join(","),
        def.retention_hours,
        def.retention_bytes,
        def.lifecycle_epoch,
        def.aggregate_replay,
    )))
}

/// LIST_OFFSETS topic=<name> [partition=<N>]: `latest` is the last stable
/// offset (what a read_committed reader can reach), `hwm` the durable one.
pub async fn list_offsets(broker: &Arc<Broker>, p: &CommandPayload) -> HandlerResult {
    let topic = existing_topic(broker, p, "LIST_OFFSETS")?;
    let selected = match p.get("partition") {
        Some(v) => vec![partition_of(&topic, partition_number(v, "LIST_OFFSETS")?)?],
        None => topic.partitions.clone(),
    };
    let placement = broker.placement();
    let mut offsets = Vec::with_capacity(selected.len());
    for part in &selected {
        offsets.push(placement.offsets(broker, &topic.def.name, part).await?);
    }
    Ok(Reply::text(format!(
        "OK topic={} partitions={} offsets={}",
        topic.def.name,
        topic.def.partitions,
        offsets.join(",")
    )))
}

/// FIND_COORDINATOR group=<name> | transactional_id=<id>.
pub fn find_coordinator(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let has = |f: &str| p.get(f).is_some_and(|v| !v.is_empty());
    if !has("group") && !has("transactional_id") {
        return Err(
            ErrorPayload::new("missing_coordinator_key").with_field("command", "FIND_COORDINATOR")
        );
    }
    // `group=` wins when both are given.
    let key = match p.get("group").filter(|v| !v.is_empty()) {
        Some(group) => CoordinatorKey::Group(group),
        None => CoordinatorKey::Transaction(p.get("transactional_id").unwrap_or_default()),
    };
    let c = broker.placement().find_coordinator(broker, key, listener)?;
    Ok(Reply::text(format!(
        "OK coordinator_id={} host={} port={}",
        c.broker_id, c.host, c.port
    )))
}
