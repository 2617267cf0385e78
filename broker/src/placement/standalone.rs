//! The standalone implementation of the seam: this broker holds every
//! partition, leads it, coordinates every group and transactional id, and
//! is the only replica, so a write is committed once it is synced here.

use std::sync::Arc;
use std::time::Duration;

use cursus_wire::ErrorPayload;

use super::{
    local_offsets, BoxFuture, CoordinatorAddr, CoordinatorKey, Deleted, Mode, Placement,
    ReplicaView, TopicCatalog, TopicLeaders, Truncated,
};
use crate::broker::{Broker, Listener};
use crate::storage::TopicDefinition;
use crate::topics::{MinIsr, Partition, TopicPatch};
use crate::txn::markers::COORDINATOR_EPOCH;
use crate::txn::participants::Local;

/// A standalone broker's placement.
#[derive(Debug, Clone, Copy, Default)]
pub struct Standalone;

impl Standalone {
    /// The broker's mode when it runs alone.
    pub fn mode() -> Mode {
        Mode {
            placement: Arc::new(Standalone),
            catalog: Arc::new(Standalone),
            participants: Arc::new(Local),
            admin: None,
        }
    }
}

impl Placement for Standalone {
    fn check_leader(&self, _: &str, _: u32, _: Listener) -> Result<(), ErrorPayload> {
        Ok(())
    }

    fn missing_topic(&self, name: &str) -> ErrorPayload {
        ErrorPayload::new("topic_not_found").with_field("topic", name)
    }

    fn generation_changed(&self, topic: &str) -> ErrorPayload {
        ErrorPayload::new("topic_lifecycle_pending").with_field("topic", topic)
    }

    fn in_sync_replicas(&self, _: &str, _: u32) -> usize {
        1
    }

    fn wait_replicated<'a>(
        &'a self,
        _: &'a str,
        _: super::commit::Written,
        _: Duration,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn replicate_snapshot<'a>(
        &'a self,
        _: &'a str,
        _: u32,
        _: &'a str,
        _: u64,
        _: &'a str,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn definition(&self, _: &str) -> Option<TopicDefinition> {
        None
    }

    fn leaders(&self, broker: &Broker, name: &str, listener: Listener) -> Option<TopicLeaders> {
        let topic = broker.topics.get(name)?;
        let n = topic.partitions.len();
        Some(TopicLeaders {
            def: topic.def.clone(),
            leaders: vec![broker.advertised_to(listener).to_owned(); n],
            epochs: vec![0; n],
        })
    }

    fn replicas(
        &self,
        broker: &Broker,
        _: &str,
        part: &Partition,
        listener: Listener,
    ) -> ReplicaView {
        let id = broker.config.broker_id.clone();
        ReplicaView {
            leader: broker.advertised_to(listener).to_owned(),
            replicas: vec![id.clone()],
            isr: vec![id],
            hwm: part.log().durable_offset(),
        }
    }

    fn offsets<'a>(
        &'a self,
        _: &'a Broker,
        _: &'a str,
        part: &'a Partition,
    ) -> BoxFuture<'a, Result<String, ErrorPayload>> {
        Box::pin(std::future::ready(Ok(local_offsets(part))))
    }

    fn check_coordinator(&self, _: CoordinatorKey<'_>, _: Listener) -> Result<(), ErrorPayload> {
        Ok(())
    }

    fn find_coordinator(
        &self,
        broker: &Broker,
        _: CoordinatorKey<'_>,
        listener: Listener,
    ) -> Result<CoordinatorAddr, ErrorPayload> {
        let (host, port) = broker.advertised_host_port(listener);
        Ok(CoordinatorAddr {
            broker_id: broker.config.broker_id.clone(),
            host: host.to_owned(),
            port: port.to_owned(),
        })
    }

    fn marker_epoch(&self, _: &str) -> Result<i64, ErrorPayload> {
        Ok(COORDINATOR_EPOCH)
    }
}

impl TopicCatalog for Standalone {
    fn create<'a>(
        &'a self,
        broker: &'a Broker,
        patch: &'a TopicPatch,
    ) -> BoxFuture<'a, Result<TopicDefinition, ErrorPayload>> {
        Box::pin(broker.topics.create(patch))
    }

    fn alter_min_isr<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        value: MinIsr,
    ) -> BoxFuture<'a, Result<TopicDefinition, ErrorPayload>> {
        Box::pin(broker.topics.alter_min_isr(name, value))
    }

    fn delete<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        if_exists: bool,
        _: &'a str,
    ) -> BoxFuture<'a, Result<Deleted, ErrorPayload>> {
        Box::pin(async move {
            let outcome = broker.topics.delete(name, if_exists).await?;
            Ok(Deleted {
                deleted: outcome.deleted,
                cleanup_pending: outcome.cleanup_pending,
            })
        })
    }

    fn truncate<'a>(
        &'a self,
        broker: &'a Broker,
        name: &'a str,
        expected_revision: u64,
        _: &'a str,
    ) -> BoxFuture<'a, Result<Truncated, ErrorPayload>> {
        Box::pin(async move {
            let (def, cleanup_pending) = broker.topics.truncate(name, expected_revision).await?;
            Ok(Truncated {
                def,
                cleanup_pending,
            })
        })
    }
}
