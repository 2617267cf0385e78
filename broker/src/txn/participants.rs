//! What the coordinator does to its participant partitions and groups, on
//! whichever broker owns them: the [`Participants`] interface. This
//! broker's own partitions and groups are written by [`Local`] (the
//! standalone implementation); a clustered broker's implementation
//! (`cluster/participants.rs`) runs the same local operations where
//! it leads the partition, waits for the in-sync replicas, and asks the
//! owning broker otherwise.

use cursus_wire::ErrorPayload;
use serde::{Deserialize, Serialize};

use super::append::{
    append_data, append_data_batch, append_event, append_marker_at, release, Appended,
};
use super::append::{TxnEvent, TxnRecord};
use super::markers::MarkerKind;
use crate::broker::Broker;
use crate::placement::commit::Written;
use crate::placement::BoxFuture;

/// A control marker to write: whose, which kind, and the coordinator
/// epoch it carries.
#[derive(Debug, Clone, Copy)]
pub struct MarkerWrite<'a> {
    /// Transactional id.
    pub transactional_id: &'a str,
    /// Producer id.
    pub producer_id: &'a str,
    /// Producer epoch.
    pub epoch: i64,
    /// Commit or abort.
    pub kind: MarkerKind,
    /// The coordinator epoch ([`crate::placement::Placement::marker_epoch`]).
    pub coordinator_epoch: i64,
}

/// A pending transactional stream event that no longer continues its
/// stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingConflict {
    /// The key.
    pub key: String,
    /// The pending version.
    pub version: u64,
    /// The stream's current version.
    pub current: u64,
}

/// A transaction's operations, each run on the broker owning the
/// partition (or coordinating the group). An append's
/// [`Appended::durable`] resolves once the record is committed.
pub trait Participants: Send + Sync + std::fmt::Debug {
    /// [`append_data`] on the partition's broker.
    fn data<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        rec: &'a TxnRecord<'a>,
    ) -> BoxFuture<'a, Result<Appended, ErrorPayload>>;

    /// [`append_data_batch`]: consecutive records of one session to one
    /// partition, each with its own outcome. By default one [`data`]
    /// after the other (a remote leader takes them one by one).
    ///
    /// [`data`]: Participants::data
    fn data_batch<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        recs: &'a [TxnRecord<'a>],
    ) -> BoxFuture<'a, Vec<Result<Appended, ErrorPayload>>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(recs.len());
            for rec in recs {
                out.push(self.data(broker, topic, partition, rec).await);
            }
            out
        })
    }

    /// [`append_event`] on the partition's broker.
    fn event<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        ev: &'a TxnEvent<'a>,
    ) -> BoxFuture<'a, Result<Appended, ErrorPayload>>;

    /// Appends `marker` unless one is there already and returns once it
    /// is committed; `Ok(false)` when the partition no longer exists.
    fn marker<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        marker: MarkerWrite<'a>,
    ) -> BoxFuture<'a, Result<bool, ErrorPayload>>;

    /// [`release`] on the partition's broker (best effort: a partition
    /// that is gone has nothing to release).
    fn release<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        producer_id: &'a str,
        epoch: i64,
    ) -> BoxFuture<'a, ()>;

    /// The first pending stream event of `(producer_id, epoch)` in the
    /// partition that no longer continues its stream.
    fn check_pending<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        producer_id: &'a str,
        epoch: i64,
    ) -> BoxFuture<'a, Result<Option<PendingConflict>, ErrorPayload>>;

    /// Validates staged offsets on the group's coordinator.
    fn validate_offsets<'a>(
        &'a self,
        broker: &'a Broker,
        offsets: GroupOffsets<'a>,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>>;

    /// Writes a committed transaction's offsets on the group's
    /// coordinator (so its FETCH_OFFSET answers them at once).
    fn materialize_offsets<'a>(
        &'a self,
        broker: &'a Broker,
        group: &'a str,
        entries: &'a [(String, u32, u64)],
    ) -> BoxFuture<'a, Result<(), ErrorPayload>>;
}

/// Staged offsets of one topic, as SEND_OFFSETS_TO_TXN gave them.
#[derive(Debug, Clone, Copy)]
pub struct GroupOffsets<'a> {
    /// Consumer group.
    pub group: &'a str,
    /// Topic.
    pub topic: &'a str,
    /// Member id.
    pub member: &'a str,
    /// Generation.
    pub generation: u64,
    /// `(partition, next offset)` entries.
    pub entries: &'a [(u32, u64)],
}

/// This broker's own partitions and groups (standalone mode).
#[derive(Debug, Clone, Copy, Default)]
pub struct Local;

impl Participants for Local {
    fn data<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        rec: &'a TxnRecord<'a>,
    ) -> BoxFuture<'a, Result<Appended, ErrorPayload>> {
        Box::pin(append_data(&broker.topics, topic, partition, rec))
    }

    fn data_batch<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        recs: &'a [TxnRecord<'a>],
    ) -> BoxFuture<'a, Vec<Result<Appended, ErrorPayload>>> {
        Box::pin(append_data_batch(&broker.topics, topic, partition, recs))
    }

    fn event<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        ev: &'a TxnEvent<'a>,
    ) -> BoxFuture<'a, Result<Appended, ErrorPayload>> {
        Box::pin(append_event(&broker.topics, topic, partition, ev))
    }

    fn marker<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        marker: MarkerWrite<'a>,
    ) -> BoxFuture<'a, Result<bool, ErrorPayload>> {
        Box::pin(async move {
            let written = write_marker(broker, topic, partition, marker).await?;
            Ok(written.is_some())
        })
    }

    fn release<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        producer_id: &'a str,
        epoch: i64,
    ) -> BoxFuture<'a, ()> {
        release(&broker.topics, topic, partition, producer_id, epoch);
        Box::pin(std::future::ready(()))
    }

    fn check_pending<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        producer_id: &'a str,
        epoch: i64,
    ) -> BoxFuture<'a, Result<Option<PendingConflict>, ErrorPayload>> {
        let conflict = check_pending(broker, topic, partition, producer_id, epoch);
        Box::pin(std::future::ready(Ok(conflict)))
    }

    fn validate_offsets<'a>(
        &'a self,
        broker: &'a Broker,
        offsets: GroupOffsets<'a>,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(validate_offsets(broker, offsets))
    }

    fn materialize_offsets<'a>(
        &'a self,
        broker: &'a Broker,
        group: &'a str,
        entries: &'a [(String, u32, u64)],
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(materialize_offsets(broker, group, entries))
    }
}

/// [`append_marker_at`] on this broker.
pub async fn write_marker(
    broker: &Broker,
    topic: &str,
    partition: u32,
    m: MarkerWrite<'_>,
) -> Result<Option<Written>, ErrorPayload> {
    append_marker_at(
        &broker.topics,
        topic,
        partition,
        m.transactional_id,
        m.producer_id,
        m.epoch,
        m.kind,
        m.coordinator_epoch,
    )
    .await
}

/// The first pending stream event of `(producer_id, epoch)` on this
/// broker's copy of the partition that no longer continues its stream.
pub fn check_pending(
    broker: &Broker,
    topic: &str,
    partition: u32,
    producer_id: &str,
    epoch: i64,
) -> Option<PendingConflict> {
    let p = broker.topics.get(topic)?.partition(partition).cloned()?;
    p.with_streams(|s| s.check_pending(producer_id, epoch))
        .err()
        .map(|c| PendingConflict {
            key: c.key,
            version: c.version,
            current: c.current,
        })
}

/// Validates staged offsets against this broker's group coordinator.
pub async fn validate_offsets(broker: &Broker, o: GroupOffsets<'_>) -> Result<(), ErrorPayload> {
    broker
        .groups
        .validate_offsets(o.group, o.topic, o.member, o.generation, o.entries)
        .await
}

/// Writes committed offsets into this broker's group coordinator.
pub async fn materialize_offsets(
    broker: &Broker,
    group: &str,
    entries: &[(String, u32, u64)],
) -> Result<(), ErrorPayload> {
    broker
        .groups
        .materialize_offsets(group, entries)
        .await
        .map(|_| ())
}
