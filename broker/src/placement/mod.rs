//! The seam between the broker's domain and its deployment mode
//! (docs/broker-architecture.md): where a partition lives and who leads
//! it, when a write counts as committed, who coordinates a group or a
//! transactional id, how the topic catalog changes, and where a
//! transaction's participant operations run.
//!
//! Command handlers, transactions, groups and event sourcing ask these
//! interfaces and never which mode the broker runs in. There are two
//! implementations, chosen once at startup: [`Standalone`] (here) and the
//! clustered one in `cluster/placement.rs`, which the assembly point
//! (`main.rs`) installs with [`crate::broker::Broker::install`].
//!
//! * [`Placement`] — leadership, the replication wait, coordinators and
//!   the views METADATA, DESCRIBE and LIST_OFFSETS answer from;
//! * [`TopicCatalog`] — CREATE, ALTER_TOPIC_CONFIG, DELETE, TRUNCATE;
//! * [`Participants`] — a transaction's operations on its partitions and
//!   groups, on the broker that owns them (the interface belongs to
//!   [`crate::txn`], which defines what it needs);
//! * [`ClusterAdmin`] — CLUSTER_STATUS, LIST_CLUSTER, ELECT_LEADER,
//!   REASSIGN_PARTITIONS (only a clustered broker has one);
//! * [`commit`] — "synced here, then held by the in-sync replicas", the
//!   one place a write waits for its commit.

pub mod commit;
mod standalone;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use cursus_wire::ErrorPayload;
use serde::Serialize;

pub use standalone::Standalone;

use crate::broker::{Broker, Listener};
use crate::storage::TopicDefinition;
use crate::topics::{MinIsr, Partition, TopicPatch};
pub use crate::txn::participants::Participants;

/// A boxed, sendable future borrowing for `'a` (the seam's async methods).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a coordinator lookup is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoordinatorKey<'a> {
    /// A consumer group.
    Group(&'a str),
    /// A transactional id.
    Transaction(&'a str),
}

/// The broker FIND_COORDINATOR names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorAddr {
    /// Its broker id.
    pub broker_id: String,
    /// Its client host for the asking listener.
    pub host: String,
    /// Its client port for the asking listener.
    pub port: String,
}

/// METADATA's view of a topic: the authoritative definition, each
/// partition's leader address (empty while it has none) and leader epoch.
#[derive(Debug, Clone)]
pub struct TopicLeaders {
    /// The definition.
    pub def: TopicDefinition,
    /// Leader client address of partition `i` at index `i`.
    pub leaders: Vec<String>,
    /// Leader epoch of partition `i` at index `i`.
    pub epochs: Vec<u64>,
}

/// DESCRIBE's view of one partition's replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaView {
    /// The leader's client address (empty while it has none).
    pub leader: String,
    /// Broker ids of the replicas.
    pub replicas: Vec<String>,
    /// Broker ids of the in-sync replicas.
    pub isr: Vec<String>,
    /// The high-water mark: the committed offset.
    pub hwm: u64,
}

/// Where partitions live, who leads them, when a write is committed and
/// who coordinates a group or transactional id.
pub trait Placement: Send + Sync + std::fmt::Debug {
    /// `Ok` when this broker serves `topic`/`partition` for a client of
    /// `listener` (a partition it does not know yet is left to the local
    /// lookup that follows); otherwise the redirect to its leader
    /// (`NOT_LEADER leader=`) or the retryable `leader_not_found`.
    fn check_leader(
        &self,
        topic: &str,
        partition: u32,
        listener: Listener,
    ) -> Result<(), ErrorPayload>;

    /// The error for a topic this broker does not have.
    fn missing_topic(&self, name: &str) -> ErrorPayload;

    /// The error when a partition's generation kept changing under a
    /// request (TRUNCATE, DELETE, a leader change).
    fn generation_changed(&self, topic: &str) -> ErrorPayload;

    /// How many replicas of `topic`/`partition` are in sync (what
    /// `min_in_sync_replicas` is checked against for acks=all).
    fn in_sync_replicas(&self, topic: &str, partition: u32) -> usize;

    /// Waits until the replicas `write` must reach before it counts as
    /// committed have it, at most `timeout` (nothing to wait for where
    /// this broker is the only replica); fails when the epoch it was
    /// appended in is over. The caller has synced it here first; see
    /// [`commit`].
    fn wait_replicated<'a>(
        &'a self,
        topic: &'a str,
        write: commit::Written,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>>;

    /// Gives the other in-sync replicas a snapshot SAVE_SNAPSHOT just
    /// stored here, so a replica promoted later serves it.
    fn replicate_snapshot<'a>(
        &'a self,
        topic: &'a str,
        partition: u32,
        key: &'a str,
        version: u64,
        payload: &'a str,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>>;

    /// The authoritative definition of `name` (DESCRIBE), when this broker
    /// has a newer one than its local materialization.
    fn definition(&self, name: &str) -> Option<TopicDefinition>;

    /// METADATA's leaders and epochs of `name`, or `None` when the topic
    /// does not exist.
    fn leaders(&self, broker: &Broker, name: &str, listener: Listener) -> Option<TopicLeaders>;

    /// DESCRIBE's replicas of partition `part` of `topic`.
    fn replicas(
        &self,
        broker: &Broker,
        topic: &str,
        part: &Partition,
        listener: Listener,
    ) -> ReplicaView;

    /// LIST_OFFSETS's `P<id>:earliest=:latest=:leo=:hwm=` item of `part`,
    /// from whichever broker leads it ([`local_offsets`] there).
    fn offsets<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        part: &'a Partition,
    ) -> BoxFuture<'a, Result<String, ErrorPayload>>;

    /// `Ok` when this broker coordinates `key`; otherwise
    /// `NOT_COORDINATOR host= port=` or `coordinator_not_available`.
    fn check_coordinator(
        &self,
        key: CoordinatorKey<'_>,
        listener: Listener,
    ) -> Result<(), ErrorPayload>;

    /// FIND_COORDINATOR: the broker coordinating `key`.
    fn find_coordinator(
        &self,
        broker: &Broker,
        key: CoordinatorKey<'_>,
        listener: Listener,
    ) -> Result<CoordinatorAddr, ErrorPayload>;

    /// The coordinator epoch the markers of `transactional_id` carry
    /// (partition leaders refuse markers of an older one).
    fn marker_epoch(&self, transactional_id: &str) -> Result<i64, ErrorPayload>;
}

/// DELETE's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deleted {
    /// The topic existed and was deleted.
    pub deleted: bool,
    /// Its files are still being removed.
    pub cleanup_pending: bool,
}

/// TRUNCATE's outcome.
#[derive(Debug, Clone)]
pub struct Truncated {
    /// The definition of the new generation.
    pub def: TopicDefinition,
    /// The old generation's files are still being removed.
    pub cleanup_pending: bool,
}

/// Changes to the set of topics and their definitions. The caller has
/// checked its arguments and, for DELETE and TRUNCATE, holds this broker's
/// transaction and group removal guards.
pub trait TopicCatalog: Send + Sync + std::fmt::Debug {
    /// CREATE: a new topic, or the patch applied to the existing one.
    fn create<'a>(
        &'a self,
        broker: &'a Broker,
        patch: &'a TopicPatch,
    ) -> BoxFuture<'a, Result<TopicDefinition, ErrorPayload>>;

    /// ALTER_TOPIC_CONFIG: the `min_in_sync_replicas` override.
    fn alter_min_isr<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        value: MinIsr,
    ) -> BoxFuture<'a, Result<TopicDefinition, ErrorPayload>>;

    /// DELETE; fails with `blocked_code` while a group of the topic has
    /// active members on a broker other than this one.
    fn delete<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        if_exists: bool,
        blocked_code: &'a str,
    ) -> BoxFuture<'a, Result<Deleted, ErrorPayload>>;

    /// TRUNCATE at `expected_revision`; fails with `blocked_code` like
    /// [`TopicCatalog::delete`].
    fn truncate<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        expected_revision: u64,
        blocked_code: &'a str,
    ) -> BoxFuture<'a, Result<Truncated, ErrorPayload>>;
}

/// One broker as LIST_CLUSTER and CLUSTER_STATUS show it.
#[derive(Debug, Clone, Serialize)]
pub struct BrokerView {
    /// Broker id.
    pub id: String,
    /// Cluster listener address.
    pub addr: String,
    /// Client address for the asking listener.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub client_addr: String,
    /// `active` or `inactive`.
    pub status: &'static str,
    /// When its status last changed (RFC 3339).
    pub last_seen: String,
    /// The lifecycle protocol it speaks.
    pub lifecycle_protocol: u32,
}

/// One partition in CLUSTER_STATUS.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionView {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Leader broker id.
    pub leader: Option<String>,
    /// Leader epoch.
    pub leader_epoch: u64,
    /// Committed high-water mark.
    pub hwm: u64,
    /// Replica broker ids.
    pub replicas: Vec<String>,
    /// In-sync replica broker ids.
    pub isr: Vec<String>,
    /// Idempotent producers whose committed sequences the replicated
    /// state holds for the partition.
    pub producers: usize,
    /// The replica set a reassignment in progress moves the partition to
    /// (absent when none is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_replicas: Option<Vec<String>>,
}

/// CLUSTER_STATUS.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterStatus {
    /// The Raft leader's broker id.
    pub raft_leader: Option<String>,
    /// Every registered broker.
    pub brokers: Vec<BrokerView>,
    /// Every partition.
    pub partitions: Vec<PartitionView>,
    /// Partitions without an active leader.
    pub leaderless: u64,
    /// Partitions with fewer in-sync replicas than replicas.
    pub under_replicated: u64,
    /// The Raft voters (broker ids) as this broker knows the membership.
    pub voters: Vec<String>,
    /// The Raft learners (broker ids).
    pub learners: Vec<String>,
    /// The cluster's transaction coordinator shard count (`null` until a
    /// broker that knows it registered).
    pub transaction_coordinator_shards: Option<u32>,
}

/// ELECT_LEADER's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Election {
    /// The previous leader's broker id (empty when there was none).
    pub previous: String,
    /// The leader's broker id.
    pub leader: String,
    /// Its leader epoch.
    pub leader_epoch: u64,
    /// Whether the leader changed.
    pub changed: bool,
}

/// A reassignment's progress (REASSIGN_PARTITIONS), broker ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassignment {
    /// Whether the partition's replicas are the target (the move is done).
    pub done: bool,
    /// The current replica set (old and new replicas while in progress).
    pub replicas: Vec<String>,
    /// The in-sync replicas.
    pub isr: Vec<String>,
    /// The leader (`None` while the partition has none).
    pub leader: Option<String>,
    /// The target replica set.
    pub target: Vec<String>,
}

/// The cluster's own administration, answered by a clustered broker.
pub trait ClusterAdmin: Send + Sync + std::fmt::Debug {
    /// CLUSTER_STATUS as seen from this broker's copy of the state.
    fn status(&self, listener: Listener) -> ClusterStatus;

    /// LIST_CLUSTER.
    fn brokers(&self, listener: Listener) -> Vec<BrokerView>;

    /// ELECT_LEADER: makes `broker_id` the leader of `topic`/`partition`
    /// and answers once this broker routes by the result.
    fn elect_leader<'a>(
        &'a self,
        topic: &'a str,
        partition: u32,
        broker_id: &'a str,
    ) -> BoxFuture<'a, Result<Election, ErrorPayload>>;

    /// REASSIGN_PARTITIONS: starts moving `topic`/`partition` to the
    /// replicas `broker_ids` (or reports the progress of that move) and
    /// answers at once with its state.
    fn reassign_partition<'a>(
        &'a self,
        topic: &'a str,
        partition: u32,
        broker_ids: &'a [String],
    ) -> BoxFuture<'a, Result<Reassignment, ErrorPayload>>;
}

/// The implementations a broker runs with, chosen once at startup.
#[derive(Debug, Clone)]
pub struct Mode {
    /// Leadership, commits and coordinators.
    pub placement: Arc<dyn Placement>,
    /// Topic changes.
    pub catalog: Arc<dyn TopicCatalog>,
    /// Transaction participants.
    pub participants: Arc<dyn Participants>,
    /// Cluster administration (`None`: `distribution_not_enabled`).
    pub admin: Option<Arc<dyn ClusterAdmin>>,
}

/// One partition's offsets item from this broker's log: `latest` is the
/// last stable offset (what a read_committed reader can reach), `hwm` the
/// durable one.
pub fn local_offsets(part: &Partition) -> String {
    let log = part.log();
    // Read the durable offset first: it never exceeds a later LEO read.
    let hwm = log.durable_offset();
    let latest = part.stable_offset().min(hwm);
    let leo = log.log_end_offset().max(hwm);
    format!(
        "P{}:earliest={}:latest={latest}:leo={leo}:hwm={hwm}",
        part.id(),
        log.earliest_offset().min(latest),
    )
}

/// The retryable error for a partition without a (known) leader.
pub fn leader_not_found(topic: &str, partition: u32) -> ErrorPayload {
    ErrorPayload::new("leader_not_found")
        .with_field("topic", topic)
        .with_field("partition", partition)
}
