//! The admin client: topic, group and cluster administration.

use crate::client::{Cluster, Idempotence, Lane};
use crate::config::ClientConfig;
use crate::error::{Error, Result};
use crate::protocol::admin::parse_offsets;
pub use crate::protocol::admin::{
    DeleteOutcome, GroupMember, GroupStatus, NewTopic, PartitionDescription, PartitionOffsets,
    TopicDescription, TopicInfo, TopicMetadata, TruncateOutcome,
};
use crate::protocol::cluster::parse_cluster_brokers;
pub use crate::protocol::cluster::{
    ClusterBroker, ClusterPartition, ClusterStatus, LeaderElection, PartitionReassignment,
};
use crate::protocol::reply::{bool_text, parse_json, OkReply};
use crate::wire::{Command, CommandPayload};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How often [`Admin::reassign_partition`] asks how far a move is.
const REASSIGN_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Topic and group administration against a Cursus broker.
///
/// ```no_run
/// use cursus::admin::{Admin, NewTopic};
/// use cursus::ClientConfig;
///
/// # async fn demo() -> cursus::Result<()> {
/// let admin = Admin::connect(ClientConfig::new("127.0.0.1:9000")).await?;
/// let info = admin.create_topic(&NewTopic::new("orders").partitions(3)).await?;
/// println!("{} has {} partitions (revision {})", info.name, info.partitions, info.revision);
/// for p in admin.describe_topic("orders").await?.partitions {
///     println!("partition {} leader {} hwm {}", p.id, p.leader, p.hwm);
/// }
/// admin.close().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Admin {
    cluster: Arc<Cluster>,
    closed: AtomicBool,
}

impl Admin {
    /// Validates `config` and connects to a bootstrap broker (failing fast
    /// when none is reachable).
    pub async fn connect(config: ClientConfig) -> Result<Admin> {
        let cluster = Cluster::new(config)?;
        cluster.any_broker(Lane::CONTROL).await?;
        Ok(Admin {
            cluster,
            closed: AtomicBool::new(false),
        })
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            Err(Error::closed("admin client"))
        } else {
            Ok(())
        }
    }

    async fn ok(
        &self,
        command: Command,
        payload: CommandPayload,
        idempotence: Idempotence,
    ) -> Result<OkReply> {
        self.check_open()?;
        self.cluster
            .ok_request(command, &payload, idempotence)
            .await
    }

    /// A request whose reply is parsed whole (JSON after `OK name=` may
    /// hold spaces, which [`OkReply`] would split).
    async fn raw(
        &self,
        command: Command,
        payload: CommandPayload,
        idempotence: Idempotence,
    ) -> Result<bytes::Bytes> {
        self.check_open()?;
        self.cluster
            .request(None, Lane::CONTROL, command, &payload, idempotence)
            .await
    }

    /// Creates a topic, or patches an existing one with the fields set in
    /// `topic` (CREATE is a presence-aware patch, so repeating it is safe).
    pub async fn create_topic(&self, topic: &NewTopic) -> Result<TopicInfo> {
        let reply = self
            .ok(Command::Create, topic.to_payload(), Idempotence::Safe)
            .await?;
        self.cluster.invalidate_metadata(&topic.name);
        TopicInfo::from_reply(&reply)
    }

    /// Replaces the topic's min_in_sync_replicas override; `None` restores
    /// the broker default.
    pub async fn alter_topic_config(
        &self,
        topic: &str,
        min_in_sync_replicas: Option<u32>,
    ) -> Result<TopicInfo> {
        let value = min_in_sync_replicas.map_or_else(|| "default".to_owned(), |n| n.to_string());
        let payload = CommandPayload::new()
            .field("topic", topic)
            .field("min_in_sync_replicas", value);
        let reply = self
            .ok(Command::AlterTopicConfig, payload, Idempotence::Safe)
            .await?;
        self.cluster.invalidate_metadata(topic);
        TopicInfo::from_reply(&reply)
    }

    /// Deletes a topic. With `if_exists`, a missing topic is not an error.
    pub async fn delete_topic(&self, topic: &str, if_exists: bool) -> Result<DeleteOutcome> {
        let payload = CommandPayload::new()
            .field("topic", topic)
            .field("if_exists", bool_text(if_exists));
        let idempotence = if if_exists {
            Idempotence::Safe
        } else {
            Idempotence::Unsafe
        };
        let reply = self.ok(Command::Delete, payload, idempotence).await?;
        self.cluster.invalidate_metadata(topic);
        Ok(DeleteOutcome {
            deleted: reply.get("deleted") == Some("true"),
            cleanup_pending: reply.get("cleanup_pending") == Some("true"),
        })
    }

    /// Resets every partition of a topic to empty. `expected_revision` must
    /// equal the topic's current definition revision.
    pub async fn truncate_topic(
        &self,
        topic: &str,
        expected_revision: u64,
    ) -> Result<TruncateOutcome> {
        let payload = CommandPayload::new()
            .field("topic", topic)
            .field("expected_revision", expected_revision);
        let reply = self
            .ok(Command::Truncate, payload, Idempotence::Unsafe)
            .await?;
        self.cluster.invalidate_metadata(topic);
        Ok(TruncateOutcome {
            revision: reply.parse_field("revision")?,
            lifecycle_epoch: reply.parse_field("lifecycle_epoch")?,
            cleanup_pending: reply.get("cleanup_pending") == Some("true"),
        })
    }

    /// Names of every topic.
    pub async fn list_topics(&self) -> Result<Vec<String>> {
        let reply = self
            .ok(Command::List, CommandPayload::new(), Idempotence::Safe)
            .await?;
        Ok(reply.list("topics"))
    }

    /// DESCRIBE's JSON document.
    pub async fn describe_topic(&self, topic: &str) -> Result<TopicDescription> {
        self.check_open()?;
        let payload = CommandPayload::new().field("topic", topic);
        let reply = self
            .cluster
            .request(
                None,
                Lane::CONTROL,
                Command::Describe,
                &payload,
                Idempotence::Safe,
            )
            .await?;
        parse_json(&reply)
    }

    /// Fresh METADATA for a topic (bypassing the cache).
    pub async fn metadata(&self, topic: &str) -> Result<TopicMetadata> {
        self.check_open()?;
        Ok(self.cluster.metadata(topic, true).await?.as_ref().clone())
    }

    /// Offsets of every partition, or of one.
    pub async fn list_offsets(
        &self,
        topic: &str,
        partition: Option<u32>,
    ) -> Result<Vec<PartitionOffsets>> {
        let mut payload = CommandPayload::new().field("topic", topic);
        if let Some(p) = partition {
            payload = payload.field("partition", p);
        }
        let reply = self
            .ok(Command::ListOffsets, payload, Idempotence::Safe)
            .await?;
        parse_offsets(&reply)
    }

    /// GROUP_STATUS's JSON document.
    pub async fn group_status(&self, group: &str) -> Result<GroupStatus> {
        self.check_open()?;
        let payload = CommandPayload::new().field("group", group);
        let reply = self
            .cluster
            .request(
                None,
                Lane::CONTROL,
                Command::GroupStatus,
                &payload,
                Idempotence::Safe,
            )
            .await?;
        parse_json(&reply)
    }

    /// Names of every consumer group.
    pub async fn list_groups(&self) -> Result<Vec<String>> {
        let reply = self
            .ok(
                Command::ListGroups,
                CommandPayload::new(),
                Idempotence::Safe,
            )
            .await?;
        Ok(reply.list("groups"))
    }

    /// CLUSTER_STATUS: the Raft leader, every broker and every partition's
    /// leader, epoch and replicas (distributed mode, `docs/cluster.md`).
    /// A standalone broker refuses it with `distribution_not_enabled`
    /// (class validation).
    pub async fn cluster_status(&self) -> Result<ClusterStatus> {
        let reply = self
            .raw(
                Command::ClusterStatus,
                CommandPayload::new(),
                Idempotence::Safe,
            )
            .await?;
        ClusterStatus::from_reply(&reply)
    }

    /// ELECT_LEADER: makes `broker_id` (an active in-sync replica) the
    /// leader of `topic`/`partition`. Electing the current leader again
    /// changes nothing (`changed` false), so the call is retried like any
    /// idempotent admin change. Errors: `leader_election_rejected`
    /// (conflict: not an active ISR member), `topic_not_found`,
    /// `partition_not_found`, and `distribution_not_enabled` on a
    /// standalone broker.
    pub async fn elect_leader(
        &self,
        topic: &str,
        partition: u32,
        broker_id: &str,
    ) -> Result<LeaderElection> {
        let payload = CommandPayload::new()
            .field("topic", topic)
            .field("partition", partition)
            .field("broker", broker_id);
        let reply = self
            .ok(Command::ElectLeader, payload, Idempotence::Safe)
            .await?;
        self.cluster.invalidate_metadata(topic);
        LeaderElection::from_reply(&reply)
    }

    /// Moves the replicas of `topic`/`partition` to the brokers
    /// `replicas` (REASSIGN_PARTITIONS, a project extension,
    /// `docs/cluster.md` "Moving replicas") and returns once the move is
    /// done: every new replica caught up into the ISR, the replicas not in
    /// `replicas` dropped, the leader one of `replicas` (the first one if
    /// the old leader was dropped). No acknowledged record is lost on the
    /// way. `replicas` lists broker ids, preferred leader first, as many as
    /// the topic's replication factor.
    ///
    /// Waits at most the client's `request_timeout_ms`; then fails with the
    /// retryable `reassignment_timeout` (kind timeout, fields `topic`,
    /// `partition`, `replicas`, `isr`, `target`) while the move goes on in
    /// the cluster: calling again with the same replicas resumes waiting.
    /// Errors: `topic_not_found`, `partition_not_found`,
    /// `broker_not_found` (an unknown broker id), `replica_broker_inactive`,
    /// `invalid_replicas` (empty, duplicated, or a broker that hosts no
    /// replicas), `invalid_replication_factor` (not as many as the topic's
    /// replication factor), `reassignment_in_progress` (another move of
    /// the partition runs), and `distribution_not_enabled` on a standalone
    /// broker.
    pub async fn reassign_partition(
        &self,
        topic: &str,
        partition: u32,
        replicas: &[&str],
    ) -> Result<PartitionReassignment> {
        let deadline = tokio::time::Instant::now() + self.cluster.config().request_timeout;
        loop {
            let state = self
                .reassignment_request(topic, partition, replicas)
                .await?;
            if state.done {
                self.cluster.invalidate_metadata(topic);
                return Ok(state);
            }
            if tokio::time::Instant::now() + REASSIGN_POLL > deadline {
                return Err(Error::timeout(format!(
                    "the move of {topic}/{partition} to {} is not done yet",
                    state.target.join(",")
                ))
                .with_code("reassignment_timeout")
                .with_field("topic", topic)
                .with_field("partition", partition)
                .with_field("replicas", state.replicas.join(","))
                .with_field("isr", state.isr.join(","))
                .with_field("target", state.target.join(",")));
            }
            tokio::time::sleep(REASSIGN_POLL).await;
        }
    }

    /// Starts moving the replicas of `topic`/`partition` to `replicas`
    /// (see [`Admin::reassign_partition`]) and returns the move's state at
    /// once. Asking again with the same replicas reports its progress and
    /// changes nothing (no Raft entry on the broker), so this is also how
    /// progress is watched.
    pub async fn start_partition_reassignment(
        &self,
        topic: &str,
        partition: u32,
        replicas: &[&str],
    ) -> Result<PartitionReassignment> {
        let state = self
            .reassignment_request(topic, partition, replicas)
            .await?;
        self.cluster.invalidate_metadata(topic);
        Ok(state)
    }

    /// One REASSIGN_PARTITIONS request.
    async fn reassignment_request(
        &self,
        topic: &str,
        partition: u32,
        replicas: &[&str],
    ) -> Result<PartitionReassignment> {
        if replicas.is_empty()
            || replicas
                .iter()
                .any(|r| r.is_empty() || r.contains([',', ' ']))
        {
            return Err(Error::invalid_argument(
                "replicas must be non-empty broker ids without commas or spaces",
            ));
        }
        let payload = CommandPayload::new()
            .field("topic", topic)
            .field("partition", partition)
            .field("replicas", replicas.join(","));
        let reply = self
            .ok(Command::ReassignPartitions, payload, Idempotence::Safe)
            .await?;
        PartitionReassignment::from_reply(&reply)
    }

    /// LIST_CLUSTER: the registered brokers (distributed mode). A
    /// standalone broker refuses it with `distribution_not_enabled`.
    pub async fn list_cluster(&self) -> Result<Vec<ClusterBroker>> {
        let reply = self
            .raw(
                Command::ListCluster,
                CommandPayload::new(),
                Idempotence::Safe,
            )
            .await?;
        parse_cluster_brokers(&reply)
    }

    /// The commands the broker supports.
    pub async fn help(&self) -> Result<Vec<String>> {
        let reply = self
            .ok(Command::Help, CommandPayload::new(), Idempotence::Safe)
            .await?;
        Ok(reply.list("commands"))
    }

    /// Closes the client's connections; later calls fail with `closed`.
    /// Closing twice is harmless.
    pub async fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.cluster.close().await;
        }
    }

    /// The shared cluster view (for engine components built on this client).
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.cluster
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ErrorClass;

    #[tokio::test]
    async fn a_standalone_broker_refuses_cluster_admin() {
        let broker = cursus_testkit::TestBroker::start();
        let admin = Admin::connect(ClientConfig::new(&broker.addr))
            .await
            .unwrap();
        let errors = [
            admin.cluster_status().await.unwrap_err(),
            admin
                .elect_leader("orders", 0, "broker-1")
                .await
                .unwrap_err(),
            admin.list_cluster().await.unwrap_err(),
        ];
        for e in errors {
            assert_eq!(e.code(), "distribution_not_enabled", "{e}");
            assert_eq!(e.class(), ErrorClass::Validation, "{e}");
        }
        admin.close().await;
        assert_eq!(
            admin.cluster_status().await.unwrap_err().kind(),
            crate::ErrorKind::Closed
        );
    }
}
