//! The admin client.

use super::{optional_u32, Config};
use crate::registry::Handle;
use crate::topic;
use cursus::{
    DeleteOutcome, GroupStatus, Result, TopicDescription, TopicInfo, TopicMetadata, TruncateOutcome,
};
use cursus_bridge_macros::bridge_fn;

pub use cursus::blocking::Admin;

use super::lists::PartitionOffsetsList;

impl Handle for Admin {
    const KIND: &'static str = "admin";
}

/// Connects an admin client with `config` (options `bootstrap_servers`,
/// `connect_timeout_ms`, TLS and AUTH options...).
///
/// Thread-safety: safe from any thread. An admin client may be used from
/// several threads at once.
#[bridge_fn(out = "admin")]
pub fn admin_new(config: &Config) -> Result<Admin> {
    let config = config.builder().admin()?;
    Admin::connect(config)
}

/// Creates a topic with `partitions` partitions (0: the broker default),
/// or patches an existing one, and returns the definition the broker
/// replied with.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "info")]
pub fn admin_create_topic(admin: &Admin, topic: &str, partitions: u32) -> Result<TopicInfo> {
    let mut t = cursus::NewTopic::new(topic);
    if partitions > 0 {
        t = t.partitions(partitions);
    }
    admin.create_topic(&t)
}

/// Creates (or patches) a topic with any of its settings, given as
/// name/value pairs: `partitions`, `replication_factor`,
/// `min_in_sync_replicas`, `retention_hours`, `retention_bytes` (unsigned
/// integers); `idempotent`, `event_sourcing` (`true`/`false`, `1`/`0`);
/// `cleanup_policy`, `partitioner`, `auth_policy` (strings); `read_acl`,
/// `write_acl` (comma-separated principals, empty for none). Unset settings
/// keep the broker default. An unknown name or a bad value fails with
/// `invalid_argument` before anything is sent.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "info")]
pub fn admin_create_topic_with(
    admin: &Admin,
    topic: &str,
    options: &[(String, String)],
) -> Result<TopicInfo> {
    admin.create_topic(&topic::new_topic(
        topic,
        options.iter().map(|(k, v)| (k, v)),
    )?)
}

/// Replaces the topic's `min_in_sync_replicas` override (negative: back to
/// the broker default) and returns the new definition.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "info")]
pub fn admin_alter_topic_config(
    admin: &Admin,
    topic: &str,
    min_in_sync_replicas: i64,
) -> Result<TopicInfo> {
    let isr = optional_u32("min_in_sync_replicas", min_in_sync_replicas)?;
    admin.alter_topic_config(topic, isr)
}

/// Deletes a topic; with `if_exists`, a missing topic is not an error (the
/// outcome then says nothing was deleted).
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "outcome")]
pub fn admin_delete_topic(admin: &Admin, topic: &str, if_exists: bool) -> Result<DeleteOutcome> {
    admin.delete_topic(topic, if_exists)
}

/// Drops every record of a topic if its current revision is
/// `expected_revision` (else a `conflict` error); offsets restart at 0.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "outcome")]
pub fn admin_truncate_topic(
    admin: &Admin,
    topic: &str,
    expected_revision: u64,
) -> Result<TruncateOutcome> {
    admin.truncate_topic(topic, expected_revision)
}

/// The topic names.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "names")]
pub fn admin_list_topics(admin: &Admin) -> Result<Vec<String>> {
    admin.list_topics()
}

/// A topic's definition and the state of each partition (DESCRIBE).
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "description")]
pub fn admin_describe_topic(admin: &Admin, topic: &str) -> Result<TopicDescription> {
    admin.describe_topic(topic)
}

/// A topic's definition and the leader of each partition (METADATA).
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "metadata")]
pub fn admin_metadata(admin: &Admin, topic: &str) -> Result<TopicMetadata> {
    admin.metadata(topic)
}

/// The offsets of one partition (`partition` >= 0) or of every partition
/// (negative) of a topic (LIST_OFFSETS).
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "offsets")]
pub fn admin_list_offsets(
    admin: &Admin,
    topic: &str,
    partition: i64,
) -> Result<PartitionOffsetsList> {
    let partition = optional_u32("partition", partition)?;
    admin
        .list_offsets(topic, partition)
        .map(PartitionOffsetsList)
}

/// A consumer group's state and members (GROUP_STATUS).
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "status")]
pub fn admin_group_status(admin: &Admin, group: &str) -> Result<GroupStatus> {
    admin.group_status(group)
}

/// The consumer group names.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "names")]
pub fn admin_list_groups(admin: &Admin) -> Result<Vec<String>> {
    admin.list_groups()
}

/// The broker's HELP lines (one command each).
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "lines")]
pub fn admin_help(admin: &Admin) -> Result<Vec<String>> {
    admin.help()
}

/// Closes the admin client; later calls fail with `closed`. Closing twice
/// is harmless. The handle must still be destroyed.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn admin_close(admin: &Admin) -> Result<()> {
    admin.close()
}
