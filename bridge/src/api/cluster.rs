//! Cluster administration (distributed mode, `docs/cluster.md`):
//! CLUSTER_STATUS, ELECT_LEADER and LIST_CLUSTER, and the accessors of
//! their results. A standalone broker refuses all three with
//! `distribution_not_enabled` (class validation).

use super::Admin;
use crate::registry::Handle;
use cursus::blocking::block_on_engine;
use cursus::{ClusterBroker, ClusterPartition, ClusterStatus, LeaderElection, Result};
use cursus_bridge_macros::bridge_fn;
use std::future::Future;

/// The brokers of a cluster (LIST_CLUSTER, or CLUSTER_STATUS's brokers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterBrokerList(pub Vec<ClusterBroker>);

impl Handle for ClusterBrokerList {
    const KIND: &'static str = "cluster broker list";
}
impl Handle for ClusterStatus {
    const KIND: &'static str = "cluster status";
}
impl Handle for LeaderElection {
    const KIND: &'static str = "leader election";
}

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

/// The brokers registered in the cluster (LIST_CLUSTER).
///
/// Thread-safety: safe from any thread, concurrently on one client.
#[bridge_fn(out = "brokers")]
pub fn admin_list_cluster(admin: &Admin) -> Result<ClusterBrokerList> {
    run(admin, |a| a.list_cluster()).map(ClusterBrokerList)
}

// ---- ClusterStatus: CLUSTER_STATUS.

fn partition(status: &ClusterStatus, index: usize) -> Option<&ClusterPartition> {
    status.partitions.get(index)
}

/// The broker id of the Raft leader (none while no leader is known).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_status_raft_leader(status: &ClusterStatus) -> Option<&str> {
    status.raft_leader.as_deref()
}

/// The number of partitions without an active leader.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn cluster_status_leaderless(status: &ClusterStatus) -> u64 {
    status.leaderless
}

/// The number of partitions whose ISR is smaller than their replica set.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn cluster_status_under_replicated(status: &ClusterStatus) -> u64 {
    status.under_replicated
}

/// The cluster's brokers, as a broker list of their own (destroy it too).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "brokers")]
pub fn cluster_status_brokers(status: &ClusterStatus) -> Result<ClusterBrokerList> {
    Ok(ClusterBrokerList(status.brokers.clone()))
}

/// The number of partitions listed.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn cluster_status_partition_count(status: &ClusterStatus) -> usize {
    status.partitions.len()
}

/// The topic of partition entry `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_status_partition_topic(status: &ClusterStatus, index: usize) -> Option<&str> {
    partition(status, index).map(|p| p.topic.as_str())
}

/// The partition id of partition entry `index` (-1 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn cluster_status_partition_id(status: &ClusterStatus, index: usize) -> i64 {
    partition(status, index).map_or(-1, |p| i64::from(p.partition))
}

/// The broker id of the leader of partition entry `index` (none for a
/// leaderless partition or when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_status_partition_leader(status: &ClusterStatus, index: usize) -> Option<&str> {
    partition(status, index).and_then(|p| p.leader.as_deref())
}

/// The leader epoch of partition entry `index` (-1 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn cluster_status_partition_leader_epoch(status: &ClusterStatus, index: usize) -> i64 {
    partition(status, index).map_or(-1, |p| p.leader_epoch as i64)
}

/// The committed high-water mark of partition entry `index` (-1 when out
/// of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn cluster_status_partition_hwm(status: &ClusterStatus, index: usize) -> i64 {
    partition(status, index).map_or(-1, |p| p.hwm as i64)
}

/// The number of replicas of partition entry `index` (0 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn cluster_status_partition_replica_count(status: &ClusterStatus, index: usize) -> usize {
    partition(status, index).map_or(0, |p| p.replicas.len())
}

/// The broker id of replica `replica` of partition entry `index` (none
/// when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_status_partition_replica(
    status: &ClusterStatus,
    index: usize,
    replica: usize,
) -> Option<&str> {
    partition(status, index)
        .and_then(|p| p.replicas.get(replica))
        .map(String::as_str)
}

/// The number of in-sync replicas of partition entry `index` (0 when out
/// of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn cluster_status_partition_isr_count(status: &ClusterStatus, index: usize) -> usize {
    partition(status, index).map_or(0, |p| p.isr.len())
}

/// The broker id of in-sync replica `replica` of partition entry `index`
/// (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_status_partition_isr(
    status: &ClusterStatus,
    index: usize,
    replica: usize,
) -> Option<&str> {
    partition(status, index)
        .and_then(|p| p.isr.get(replica))
        .map(String::as_str)
}

// ---- ClusterBrokerList: LIST_CLUSTER and CLUSTER_STATUS's brokers.

/// The number of brokers listed.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn cluster_broker_list_count(list: &ClusterBrokerList) -> usize {
    list.0.len()
}

/// The broker id of entry `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_broker_list_id(list: &ClusterBrokerList, index: usize) -> Option<&str> {
    list.0.get(index).map(|b| b.id.as_str())
}

/// The cluster (peer) address of entry `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_broker_list_addr(list: &ClusterBrokerList, index: usize) -> Option<&str> {
    list.0.get(index).map(|b| b.addr.as_str())
}

/// The client address of entry `index` (none when the broker reports none
/// or out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_broker_list_client_addr(list: &ClusterBrokerList, index: usize) -> Option<&str> {
    list.0.get(index).and_then(|b| b.client_addr.as_deref())
}

/// The status of entry `index`, `active` or `inactive` (none when out of
/// range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_broker_list_status(list: &ClusterBrokerList, index: usize) -> Option<&str> {
    list.0.get(index).map(|b| b.status.as_str())
}

/// When entry `index` was last heard from, RFC 3339 (none when not
/// reported or out of range).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn cluster_broker_list_last_seen(list: &ClusterBrokerList, index: usize) -> Option<&str> {
    list.0.get(index).and_then(|b| b.last_seen.as_deref())
}

/// The lifecycle protocol version of entry `index` (-1 when not reported
/// or out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn cluster_broker_list_lifecycle_protocol(list: &ClusterBrokerList, index: usize) -> i64 {
    list.0
        .get(index)
        .and_then(|b| b.lifecycle_protocol)
        .map_or(-1, i64::from)
}

// ---- LeaderElection: ELECT_LEADER.

/// The topic of the election.
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn leader_election_topic(election: &LeaderElection) -> &str {
    &election.topic
}

/// The partition of the election.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn leader_election_partition(election: &LeaderElection) -> u32 {
    election.partition
}

/// The broker id of the leader before the election (none when the
/// partition had no leader).
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn leader_election_previous_leader(election: &LeaderElection) -> Option<&str> {
    election.previous_leader.as_deref()
}

/// The broker id of the leader now.
///
/// Thread-safety: safe from any thread while the handle is alive.
#[bridge_fn]
pub fn leader_election_leader(election: &LeaderElection) -> &str {
    &election.leader
}

/// The leader epoch now.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn leader_election_leader_epoch(election: &LeaderElection) -> u64 {
    election.leader_epoch
}

/// Whether the election changed the leader (false: the broker already led).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn leader_election_changed(election: &LeaderElection) -> bool {
    election.changed
}
