//! The clustered implementation of the broker's seam
//! ([`crate::placement`]): leadership, commits and coordinators answered
//! from the replicated state, topic changes through Raft, and the
//! cluster's own administration. Its [`Participants`] half is
//! `super::participants`.
//!
//! [`Participants`]: crate::placement::Participants

use std::sync::{Arc, Weak};
use std::time::Duration;

use cursus_wire::ErrorPayload;

use super::node::ClusterNode;
use super::replication::{self, Replication};
use super::{admin, groups, offsets, routing, shards, topics};
use crate::broker::{Broker, Listener};
use crate::placement::commit::Written;
use crate::placement::{
    BoxFuture, BrokerView, ClusterAdmin, ClusterStatus, CoordinatorAddr, CoordinatorKey, Deleted,
    Election, Mode, Placement, Reassignment, ReplicaView, Standalone, TopicCatalog, TopicLeaders,
    Truncated,
};
use crate::storage::TopicDefinition;
use crate::topics::{MinIsr, Partition, TopicPatch};

/// A cluster member's placement: every answer comes from the cluster
/// node's copy of the replicated state.
#[derive(Debug, Clone)]
pub struct Clustered {
    /// The cluster node.
    pub(super) node: Arc<ClusterNode>,
    /// The broker this seam serves (weak: the broker owns its seam), whose
    /// partitions' read bound an acknowledged commit raises.
    pub(super) broker: Weak<Broker>,
}

impl Clustered {
    /// The broker's mode as a member of `node`'s cluster.
    pub fn mode(node: Arc<ClusterNode>, broker: Weak<Broker>) -> Mode {
        let clustered = Arc::new(Clustered { node, broker });
        Mode {
            placement: Arc::clone(&clustered) as _,
            catalog: Arc::clone(&clustered) as _,
            participants: Arc::clone(&clustered) as _,
            admin: Some(clustered),
        }
    }
}

impl Placement for Clustered {
    fn check_leader(
        &self,
        topic: &str,
        partition: u32,
        listener: Listener,
    ) -> Result<(), ErrorPayload> {
        routing::check_leader(&self.node, topic, partition, listener)
    }

    fn missing_topic(&self, name: &str) -> ErrorPayload {
        routing::missing_topic(&self.node, name)
    }

    fn generation_changed(&self, topic: &str) -> ErrorPayload {
        routing::generation_changed(topic)
    }

    fn in_sync_replicas(&self, topic: &str, partition: u32) -> usize {
        self.node
            .state()
            .partition(topic, partition)
            .map_or(0, |p| p.isr.len())
    }

    fn wait_replicated<'a>(
        &'a self,
        topic: &'a str,
        write: Written,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(async move {
            let hwm = Replication::wait_committed(&self.node, topic, write, timeout).await?;
            // The reconciler raises the partition's read bound when it next
            // runs; a write acknowledged now must be readable now (read your
            // writes: a proof or read_committed consume right after the ack).
            let local = self.broker.upgrade().and_then(|b| b.topics.get(topic));
            if let Some(part) = local.as_ref().and_then(|t| t.partition(write.partition)) {
                if part.leader_epoch() == write.leader_epoch {
                    part.raise_commit_limit(hwm);
                }
            }
            Ok(())
        })
    }

    fn replicate_snapshot<'a>(
        &'a self,
        topic: &'a str,
        partition: u32,
        key: &'a str,
        version: u64,
        payload: &'a str,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(replication::replicate_snapshot(
            &self.node, topic, partition, key, version, payload,
        ))
    }

    fn definition(&self, name: &str) -> Option<TopicDefinition> {
        // The local materialization follows the replicated state a moment
        // later: two commands answered by one broker must not disagree on
        // the revision.
        self.node
            .state()
            .topics
            .get(name)
            .map(|entry| entry.def.clone())
    }

    fn leaders(&self, _broker: &Broker, name: &str, listener: Listener) -> Option<TopicLeaders> {
        // From the replicated state alone: right after a CREATE elsewhere
        // this broker may not have materialized the topic yet.
        topics::leaders(&self.node.state(), name, listener)
    }

    fn replicas(
        &self,
        broker: &Broker,
        topic: &str,
        part: &Partition,
        listener: Listener,
    ) -> ReplicaView {
        let state = self.node.state();
        let Some(p) = state.partition(topic, part.id()) else {
            return Standalone.replicas(broker, topic, part, listener);
        };
        let names = |nodes: &[u64]| nodes.iter().map(|n| state.broker_name(*n)).collect();
        let tls = listener == Listener::Tls;
        ReplicaView {
            leader: p
                .leader
                .and_then(|l| state.client_addr(l, tls))
                .unwrap_or_default(),
            replicas: names(&p.replicas),
            isr: names(&p.isr),
            hwm: p.committed_hwm,
        }
    }

    fn offsets<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        part: &'a Partition,
    ) -> BoxFuture<'a, Result<String, ErrorPayload>> {
        // Each partition's leader knows its offsets.
        Box::pin(offsets::line(broker, &self.node, topic, part))
    }

    fn check_coordinator(
        &self,
        key: CoordinatorKey<'_>,
        listener: Listener,
    ) -> Result<(), ErrorPayload> {
        match key {
            CoordinatorKey::Group(group) => groups::check_coordinator(&self.node, group, listener),
            CoordinatorKey::Transaction(id) => shards::check_coordinator(&self.node, id, listener),
        }
    }

    fn find_coordinator(
        &self,
        _broker: &Broker,
        key: CoordinatorKey<'_>,
        listener: Listener,
    ) -> Result<CoordinatorAddr, ErrorPayload> {
        match key {
            CoordinatorKey::Group(group) => groups::find(&self.node, group, listener),
            CoordinatorKey::Transaction(id) => shards::find(&self.node, id, listener),
        }
    }

    fn marker_epoch(&self, transactional_id: &str) -> Result<i64, ErrorPayload> {
        // Markers of a former owner of the id's shard are refused by the
        // partition leaders.
        shards::owned_epoch(&self.node, transactional_id).map(|e| e as i64)
    }
}

impl TopicCatalog for Clustered {
    fn create<'a>(
        &'a self,
        broker: &'a Broker,
        patch: &'a TopicPatch,
    ) -> BoxFuture<'a, Result<TopicDefinition, ErrorPayload>> {
        Box::pin(topics::create(broker, &self.node, patch))
    }

    fn alter_min_isr<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        value: MinIsr,
    ) -> BoxFuture<'a, Result<TopicDefinition, ErrorPayload>> {
        Box::pin(topics::alter_min_isr(broker, &self.node, name, value))
    }

    fn delete<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        if_exists: bool,
        blocked_code: &'a str,
    ) -> BoxFuture<'a, Result<Deleted, ErrorPayload>> {
        Box::pin(async move {
            let deleted = topics::delete(broker, &self.node, name, if_exists, blocked_code).await?;
            Ok(Deleted {
                deleted,
                cleanup_pending: false,
            })
        })
    }

    fn truncate<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        expected_revision: u64,
        blocked_code: &'a str,
    ) -> BoxFuture<'a, Result<Truncated, ErrorPayload>> {
        Box::pin(async move {
            let def =
                topics::truncate(broker, &self.node, name, expected_revision, blocked_code).await?;
            Ok(Truncated {
                def,
                cleanup_pending: false,
            })
        })
    }
}

impl ClusterAdmin for Clustered {
    fn status(&self, listener: Listener) -> ClusterStatus {
        admin::status(&self.node, listener)
    }

    fn brokers(&self, listener: Listener) -> Vec<BrokerView> {
        admin::brokers_view(&self.node.state(), listener)
    }

    fn elect_leader<'a>(
        &'a self,
        topic: &'a str,
        partition: u32,
        broker_id: &'a str,
    ) -> BoxFuture<'a, Result<Election, ErrorPayload>> {
        Box::pin(admin::elect_leader(&self.node, topic, partition, broker_id))
    }

    fn reassign_partition<'a>(
        &'a self,
        topic: &'a str,
        partition: u32,
        broker_ids: &'a [String],
    ) -> BoxFuture<'a, Result<Reassignment, ErrorPayload>> {
        Box::pin(admin::reassign_partition(
            &self.node, topic, partition, broker_ids,
        ))
    }
}
