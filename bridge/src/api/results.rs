//! Accessors of the admin results: topic definitions, descriptions,
//! metadata, group status, delete and truncate outcomes.

use cursus::{
    DeleteOutcome, GroupMember, GroupStatus, PartitionDescription, Result, TopicDescription,
    TopicInfo, TopicMetadata, TruncateOutcome,
};
use cursus_bridge_macros::bridge_fn;

// ---- TopicInfo: a topic's definition (CREATE, ALTER, METADATA, DESCRIBE).

/// The topic name.
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_info_name(info: &TopicInfo) -> &str {
    &info.name
}

/// The partition count.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_partitions(info: &TopicInfo) -> u32 {
    info.partitions
}

/// The replication factor.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_replication_factor(info: &TopicInfo) -> u32 {
    info.replication_factor
}

/// The definition revision (pass it to `admin_truncate_topic`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_revision(info: &TopicInfo) -> u64 {
    info.revision
}

/// The lifecycle epoch (bumped by TRUNCATE).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_lifecycle_epoch(info: &TopicInfo) -> u64 {
    info.lifecycle_epoch
}

/// Whether producers are deduplicated on this topic.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_idempotent(info: &TopicInfo) -> bool {
    info.idempotent
}

/// Whether the topic takes event-sourcing commands.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_event_sourcing(info: &TopicInfo) -> bool {
    info.event_sourcing
}

/// Whether the topic is an aggregate replay topic (appends need event ids
/// and are retried safely).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_aggregate_replay(info: &TopicInfo) -> bool {
    info.aggregate_replay
}

/// The topic's `min_in_sync_replicas` override, or -1 when the broker
/// default applies.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_info_min_in_sync_replicas(info: &TopicInfo) -> i64 {
    info.min_in_sync_replicas.map_or(-1, i64::from)
}

/// The `min_in_sync_replicas` in force, or -1 when the reply does not say.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_info_effective_min_in_sync_replicas(info: &TopicInfo) -> i64 {
    info.effective_min_in_sync_replicas.map_or(-1, i64::from)
}

/// The cleanup policy (`delete`, `compact` or `delete,compact`).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_info_cleanup_policy(info: &TopicInfo) -> &str {
    &info.cleanup_policy
}

/// The partitioner (`hash_key` or `round_robin`).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_info_partitioner(info: &TopicInfo) -> &str {
    &info.partitioner
}

/// The authorization policy (`open`, `deny_write`, `deny_read` or `acl`).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_info_auth_policy(info: &TopicInfo) -> &str {
    &info.auth_policy
}

/// The retention in hours (0: the broker default).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_retention_hours(info: &TopicInfo) -> u64 {
    info.retention_hours
}

/// The retention in bytes (0: the broker default).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_retention_bytes(info: &TopicInfo) -> u64 {
    info.retention_bytes
}

/// The number of principals in the read ACL.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_read_acl_count(info: &TopicInfo) -> usize {
    info.read_acl.len()
}

/// Principal `index` of the read ACL (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_info_read_acl(info: &TopicInfo, index: usize) -> Option<&str> {
    info.read_acl.get(index).map(String::as_str)
}

/// The number of principals in the write ACL.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_info_write_acl_count(info: &TopicInfo) -> usize {
    info.write_acl.len()
}

/// Principal `index` of the write ACL (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_info_write_acl(info: &TopicInfo, index: usize) -> Option<&str> {
    info.write_acl.get(index).map(String::as_str)
}

// ---- TopicDescription: DESCRIBE.

fn partition(d: &TopicDescription, index: usize) -> Option<&PartitionDescription> {
    d.partitions.get(index)
}

/// The topic described.
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_description_topic(description: &TopicDescription) -> &str {
    &description.topic
}

/// The topic's definition, as a topic info of its own (destroy it too).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "info")]
pub fn topic_description_definition(description: &TopicDescription) -> Result<TopicInfo> {
    Ok(description.definition.clone())
}

/// The number of partitions described.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_description_partition_count(description: &TopicDescription) -> usize {
    description.partitions.len()
}

/// The id of partition entry `index` (-1 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_description_partition_id(description: &TopicDescription, index: usize) -> i64 {
    partition(description, index).map_or(-1, |p| i64::from(p.id))
}

/// The leader address of partition entry `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_description_partition_leader(
    description: &TopicDescription,
    index: usize,
) -> Option<&str> {
    partition(description, index).map(|p| p.leader.as_str())
}

/// The earliest retained offset of partition entry `index` (-1 when out of
/// range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_description_partition_earliest(description: &TopicDescription, index: usize) -> i64 {
    partition(description, index).map_or(-1, |p| p.earliest as i64)
}

/// The log end offset of partition entry `index` (-1 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_description_partition_leo(description: &TopicDescription, index: usize) -> i64 {
    partition(description, index).map_or(-1, |p| p.leo as i64)
}

/// The high-water mark of partition entry `index` (-1 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_description_partition_hwm(description: &TopicDescription, index: usize) -> i64 {
    partition(description, index).map_or(-1, |p| p.hwm as i64)
}

/// The number of replicas of partition entry `index` (0 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_description_partition_replica_count(
    description: &TopicDescription,
    index: usize,
) -> usize {
    partition(description, index).map_or(0, |p| p.replicas.len())
}

/// Replica `replica` of partition entry `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_description_partition_replica(
    description: &TopicDescription,
    index: usize,
    replica: usize,
) -> Option<&str> {
    partition(description, index)
        .and_then(|p| p.replicas.get(replica))
        .map(String::as_str)
}

/// The number of in-sync replicas of partition entry `index` (0 when out
/// of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_description_partition_isr_count(
    description: &TopicDescription,
    index: usize,
) -> usize {
    partition(description, index).map_or(0, |p| p.isr.len())
}

/// In-sync replica `replica` of partition entry `index` (none when out of
/// range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_description_partition_isr(
    description: &TopicDescription,
    index: usize,
    replica: usize,
) -> Option<&str> {
    partition(description, index)
        .and_then(|p| p.isr.get(replica))
        .map(String::as_str)
}

// ---- TopicMetadata: METADATA.

/// The topic's definition, as a topic info of its own (destroy it too).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "info")]
pub fn topic_metadata_info(metadata: &TopicMetadata) -> Result<TopicInfo> {
    Ok(metadata.topic.clone())
}

/// The number of partition leaders listed (one per partition).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_metadata_leader_count(metadata: &TopicMetadata) -> usize {
    metadata.leaders.len()
}

/// The leader address (`host:port`) of partition `partition` (none when
/// out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn topic_metadata_leader(metadata: &TopicMetadata, partition: usize) -> Option<&str> {
    metadata.leaders.get(partition).map(String::as_str)
}

/// The leader epoch of partition `partition` (-1 when not reported).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_metadata_leader_epoch(metadata: &TopicMetadata, partition: usize) -> i64 {
    metadata.epochs.get(partition).map_or(-1, |e| *e as i64)
}

// ---- GroupStatus: GROUP_STATUS.

fn member(status: &GroupStatus, index: usize) -> Option<&GroupMember> {
    status.members.get(index)
}

/// The group name.
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn group_status_group(status: &GroupStatus) -> &str {
    &status.group_name
}

/// The topic of a single-topic group (empty otherwise).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn group_status_topic(status: &GroupStatus) -> &str {
    &status.topic_name
}

/// The group state, e.g. `Stable`.
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn group_status_state(status: &GroupStatus) -> &str {
    &status.state
}

/// The generation.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn group_status_generation(status: &GroupStatus) -> u64 {
    status.generation
}

/// The partition count of the group's topics.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn group_status_partition_count(status: &GroupStatus) -> u64 {
    status.partition_count
}

/// The number of members listed.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn group_status_member_count(status: &GroupStatus) -> usize {
    status.members.len()
}

/// The id of member `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn group_status_member_id(status: &GroupStatus, index: usize) -> Option<&str> {
    member(status, index).map(|m| m.member_id.as_str())
}

/// When member `index` last sent a heartbeat, as the broker reports it
/// (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn group_status_member_last_heartbeat(status: &GroupStatus, index: usize) -> Option<&str> {
    member(status, index).map(|m| m.last_heartbeat.as_str())
}

/// The number of partitions assigned to member `index` (0 when out of
/// range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn group_status_member_assignment_count(status: &GroupStatus, index: usize) -> usize {
    member(status, index).map_or(0, |m| m.assignments.len())
}

/// Assigned partition `assignment` of member `index` (-1 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn group_status_member_assignment(
    status: &GroupStatus,
    index: usize,
    assignment: usize,
) -> i64 {
    member(status, index)
        .and_then(|m| m.assignments.get(assignment))
        .map_or(-1, |p| i64::from(*p))
}

// ---- DeleteOutcome and TruncateOutcome.

/// Whether the topic was deleted (false when `if_exists` found none).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn delete_outcome_deleted(outcome: &DeleteOutcome) -> bool {
    outcome.deleted
}

/// Whether the broker still has storage cleanup to retry.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn delete_outcome_cleanup_pending(outcome: &DeleteOutcome) -> bool {
    outcome.cleanup_pending
}

/// The topic's revision after truncation.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn truncate_outcome_revision(outcome: &TruncateOutcome) -> u64 {
    outcome.revision
}

/// The topic's lifecycle epoch after truncation.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn truncate_outcome_lifecycle_epoch(outcome: &TruncateOutcome) -> u64 {
    outcome.lifecycle_epoch
}

/// Whether the broker still has storage cleanup to retry.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn truncate_outcome_cleanup_pending(outcome: &TruncateOutcome) -> bool {
    outcome.cleanup_pending
}
