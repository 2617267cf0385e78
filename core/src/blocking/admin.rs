//! The blocking admin client.

use super::ProcessLocal;
use crate::admin::{
    Admin as AsyncAdmin, ClusterBroker, ClusterStatus, DeleteOutcome, GroupStatus, LeaderElection,
    NewTopic, PartitionOffsets, PartitionReassignment, TopicDescription, TopicInfo, TopicMetadata,
    TruncateOutcome,
};
use crate::config::ClientConfig;
use crate::error::Result;
use crate::runtime::block_on;

/// Blocking admin client.
#[derive(Debug)]
pub struct Admin {
    inner: ProcessLocal<AsyncAdmin>,
}

impl Admin {
    /// Connects (see [`crate::admin::Admin::connect`]).
    pub fn connect(config: ClientConfig) -> Result<Admin> {
        let inner = block_on(AsyncAdmin::connect(config))??;
        Ok(Admin {
            inner: ProcessLocal::new(inner),
        })
    }

    /// The async admin client this wraps (for bindings with an async API).
    pub fn as_async(&self) -> Result<&AsyncAdmin> {
        self.inner.get()
    }

    /// Creates a topic, or patches the settings of an existing one.
    pub fn create_topic(&self, topic: &NewTopic) -> Result<TopicInfo> {
        self.inner.run(|a| a.create_topic(topic))
    }

    /// Replaces the min_in_sync_replicas override (`None` = broker default).
    pub fn alter_topic_config(
        &self,
        topic: &str,
        min_in_sync_replicas: Option<u32>,
    ) -> Result<TopicInfo> {
        self.inner
            .run(|a| a.alter_topic_config(topic, min_in_sync_replicas))
    }

    /// Deletes a topic (with `if_exists`, a missing topic is not an error).
    pub fn delete_topic(&self, topic: &str, if_exists: bool) -> Result<DeleteOutcome> {
        self.inner.run(|a| a.delete_topic(topic, if_exists))
    }

    /// Drops every record of a topic, if its revision is `expected_revision`.
    pub fn truncate_topic(&self, topic: &str, expected_revision: u64) -> Result<TruncateOutcome> {
        self.inner
            .run(|a| a.truncate_topic(topic, expected_revision))
    }

    /// The topic names.
    pub fn list_topics(&self) -> Result<Vec<String>> {
        self.inner.run(|a| a.list_topics())
    }

    /// A topic's definition and partitions (DESCRIBE).
    pub fn describe_topic(&self, topic: &str) -> Result<TopicDescription> {
        self.inner.run(|a| a.describe_topic(topic))
    }

    /// A topic's definition and partition leaders (METADATA).
    pub fn metadata(&self, topic: &str) -> Result<TopicMetadata> {
        self.inner.run(|a| a.metadata(topic))
    }

    /// The offsets of one partition, or of every partition (LIST_OFFSETS).
    pub fn list_offsets(
        &self,
        topic: &str,
        partition: Option<u32>,
    ) -> Result<Vec<PartitionOffsets>> {
        self.inner.run(|a| a.list_offsets(topic, partition))
    }

    /// A consumer group's state and members (GROUP_STATUS).
    pub fn group_status(&self, group: &str) -> Result<GroupStatus> {
        self.inner.run(|a| a.group_status(group))
    }

    /// The consumer group names.
    pub fn list_groups(&self) -> Result<Vec<String>> {
        self.inner.run(|a| a.list_groups())
    }

    /// The cluster's state (CLUSTER_STATUS, distributed mode): the Raft
    /// leader, every broker, and every partition's leader, epoch,
    /// committed high-water mark, replicas and ISR. A standalone broker
    /// refuses it with `distribution_not_enabled`.
    pub fn cluster_status(&self) -> Result<ClusterStatus> {
        self.inner.run(|a| a.cluster_status())
    }

    /// Makes `broker_id` (an active in-sync replica) the leader of
    /// `topic`/`partition` (ELECT_LEADER, distributed mode); electing the
    /// current leader again changes nothing (`changed` false). Errors as
    /// in [`crate::admin::Admin::elect_leader`].
    pub fn elect_leader(
        &self,
        topic: &str,
        partition: u32,
        broker_id: &str,
    ) -> Result<LeaderElection> {
        self.inner
            .run(|a| a.elect_leader(topic, partition, broker_id))
    }

    /// Moves the replicas of `topic`/`partition` to the brokers `replicas`
    /// (REASSIGN_PARTITIONS) and returns once the move is done, or fails
    /// with `reassignment_timeout` after the client's request timeout.
    /// Errors as in [`crate::admin::Admin::reassign_partition`].
    pub fn reassign_partition(
        &self,
        topic: &str,
        partition: u32,
        replicas: &[&str],
    ) -> Result<PartitionReassignment> {
        self.inner
            .run(|a| a.reassign_partition(topic, partition, replicas))
    }

    /// Starts the move of [`Admin::reassign_partition`](Self::reassign_partition)
    /// (or reports its progress) and returns its state at once.
    pub fn start_partition_reassignment(
        &self,
        topic: &str,
        partition: u32,
        replicas: &[&str],
    ) -> Result<PartitionReassignment> {
        self.inner
            .run(|a| a.start_partition_reassignment(topic, partition, replicas))
    }

    /// The registered brokers (LIST_CLUSTER, distributed mode). A
    /// standalone broker refuses it with `distribution_not_enabled`.
    pub fn list_cluster(&self) -> Result<Vec<ClusterBroker>> {
        self.inner.run(|a| a.list_cluster())
    }

    /// The broker's HELP lines.
    pub fn help(&self) -> Result<Vec<String>> {
        self.inner.run(|a| a.help())
    }

    /// Closes the client (idempotent).
    pub fn close(&self) -> Result<()> {
        self.inner.run(|a| async {
            a.close().await;
            Ok(())
        })
    }
}
