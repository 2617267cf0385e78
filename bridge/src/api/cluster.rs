//! Cluster administration (distributed mode, `docs/cluster.md`):
//! CLUSTER_STATUS, ELECT_LEADER, LIST_CLUSTER and REASSIGN_PARTITIONS, and
//! the accessors of their results. A standalone broker refuses them all
//! with `distribution_not_enabled` (class validation).

use super::Admin;
use cursus::blocking::block_on_engine;
use cursus::Result;
use cursus_bridge_macros::{bridge_fn, bridge_results};
use std::future::Future;

/// Runs an async admin call on the engine runtime, as the blocking admin
/// client's own calls do (the fork check included).
fn run<'a, F, T>(admin: &'a Admin, call: impl FnOnce(&'a cursus::admin::Admin) -> F) -> Result<T>
where
    F: Future<Output = Result<T>>,
{
    block_on_engine(call(admin.as_async()?))?
}

/// The cluster's state (CLUSTER_STATUS): the Raft leader, every broker and
/// every partition with its leader, epoch, high-water mark and replicas.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "status")]
pub fn admin_cluster_status(admin: &Admin) -> Result<ClusterStatus> {
    run(admin, |a| a.cluster_status())
}

/// Makes broker `broker_id` (an active in-sync replica) the leader of
/// `topic`/`partition` (ELECT_LEADER). Electing the current leader again
/// changes nothing (`changed` is false). Errors: `leader_election_rejected`
/// (conflict), `topic_not_found`, `partition_not_found`.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "election")]
pub fn admin_elect_leader(
    admin: &Admin,
    topic: &str,
    partition: u32,
    broker_id: &str,
) -> Result<LeaderElection> {
    run(admin, |a| a.elect_leader(topic, partition, broker_id))
}

/// Moves the replicas of `topic`/`partition` to the brokers `replicas`
/// (broker ids, preferred leader first, as many as the topic's replication
/// factor; REASSIGN_PARTITIONS, a project extension) and returns once the
/// move is done: the new replicas caught up into the ISR, the others
/// dropped, the leader one of `replicas`. No acknowledged record is lost.
/// Waits at most the client's `request_timeout_ms`, then fails with the
/// retryable `reassignment_timeout` while the move goes on (calling again
/// with the same replicas resumes waiting). Errors: `topic_not_found`,
/// `partition_not_found`, `broker_not_found`, `replica_broker_inactive`,
/// `invalid_replicas`, `invalid_replication_factor`,
/// `reassignment_in_progress`, `distribution_not_enabled`.
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "reassignment")]
pub fn admin_reassign_partition(
    admin: &Admin,
    topic: &str,
    partition: u32,
    replicas: &[String],
) -> Result<PartitionReassignment> {
    let ids: Vec<&str> = replicas.iter().map(String::as_str).collect();
    run(admin, |a| a.reassign_partition(topic, partition, &ids))
}

/// The brokers registered in the cluster (LIST_CLUSTER).
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "brokers")]
pub fn admin_list_cluster(admin: &Admin) -> Result<ClusterBrokerList> {
    run(admin, |a| a.list_cluster()).map(ClusterBrokerList)
}

bridge_results! {
    /// CLUSTER_STATUS: the Raft leader, every broker and every partition
    /// (distributed mode).
    #[result(engine = "cursus::ClusterStatus")]
    pub struct ClusterStatus {
        /// The broker id of the Raft (metadata) leader (none while no leader
        /// is known).
        pub raft_leader: Option<String>,
        /// The registered brokers.
        #[field(handle = "ClusterBrokerList")]
        pub brokers: Vec<ClusterBroker>,
        /// Every partition of every topic.
        pub partitions: Vec<ClusterPartition>,
        /// The number of partitions without an active leader.
        pub leaderless: u64,
        /// The number of partitions whose ISR is smaller than their replica
        /// set.
        pub under_replicated: u64,
        /// The Raft voters (broker ids) as the answering broker knows the
        /// membership.
        pub voters: Vec<String>,
        /// The Raft learners (non-voting members, broker ids) as the
        /// answering broker knows the membership.
        pub learners: Vec<String>,
        /// The cluster's transaction coordinator shard count (none until a
        /// broker that knows it has registered).
        pub transaction_coordinator_shards: Option<u32>,
    }

    /// One partition in CLUSTER_STATUS.
    #[result(engine = "cursus::ClusterPartition", item, java = "ClusterStatus.Partition")]
    pub struct ClusterPartition {
        /// The topic name.
        pub topic: String,
        /// The partition id.
        #[field(c = "id")]
        pub partition: u32,
        /// The broker id of the leader (none for a leaderless partition).
        pub leader: Option<String>,
        /// The leader epoch.
        pub leader_epoch: u64,
        /// The committed high-water mark.
        #[field(java = "highWatermark")]
        pub hwm: u64,
        /// The broker ids of the replica set.
        pub replicas: Vec<String>,
        /// The broker ids of the in-sync replicas.
        pub isr: Vec<String>,
        /// The number of idempotent producers whose committed sequences the
        /// replicated state holds for the partition.
        pub producers: u64,
        /// The broker ids a reassignment in progress moves the replicas to
        /// (REASSIGN_PARTITIONS; empty when none is in progress).
        pub target_replicas: Vec<String>,
    }

    /// One broker of a cluster (LIST_CLUSTER, CLUSTER_STATUS's brokers).
    /// Broker ids are opaque strings.
    #[result(engine = "cursus::ClusterBroker", item)]
    pub struct ClusterBroker {
        /// The broker id, e.g. `broker-1`.
        pub id: String,
        /// The cluster (peer) address, `host:port`.
        pub addr: String,
        /// The address clients connect to (none when the broker reports
        /// none).
        pub client_addr: Option<String>,
        /// `active` or `inactive`.
        pub status: String,
        /// When the broker was last heard from, RFC 3339 (none when not
        /// reported).
        pub last_seen: Option<String>,
        /// The lifecycle protocol version the broker speaks (none when not
        /// reported).
        pub lifecycle_protocol: Option<u32>,
    }

    /// The brokers of a cluster (LIST_CLUSTER, or CLUSTER_STATUS's brokers).
    #[result(list)]
    pub struct ClusterBrokerList(pub Vec<ClusterBroker>);

    /// Where a partition's replica move stands (REASSIGN_PARTITIONS).
    #[result(engine = "cursus::PartitionReassignment")]
    pub struct PartitionReassignment {
        /// The topic of the move.
        pub topic: String,
        /// The partition of the move.
        pub partition: u32,
        /// Whether the move is done (the replicas are the target).
        pub done: bool,
        /// The broker ids of the replica set now.
        pub replicas: Vec<String>,
        /// The broker ids of the in-sync replicas now.
        pub isr: Vec<String>,
        /// The broker id of the leader now (none while the partition has
        /// none).
        pub leader: Option<String>,
        /// The broker ids of the target replica set, preferred leader first.
        pub target: Vec<String>,
    }

    /// What ELECT_LEADER did.
    #[result(engine = "cursus::LeaderElection")]
    pub struct LeaderElection {
        /// The topic of the election.
        pub topic: String,
        /// The partition of the election.
        pub partition: u32,
        /// The broker id of the leader before the election (none when the
        /// partition had no leader).
        pub previous_leader: Option<String>,
        /// The broker id of the leader now.
        pub leader: String,
        /// The leader epoch now.
        pub leader_epoch: u64,
        /// Whether the election changed the leader (false: the broker already
        /// led; the election is idempotent).
        pub changed: bool,
    }
}
