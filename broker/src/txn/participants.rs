//! What the coordinator does to participant partitions and groups, on
//! whichever broker owns them: in standalone mode (and in a cluster when
//! this broker leads the partition) the local [`super::append`] functions;
//! in a cluster otherwise the partition's leader runs them, asked over the
//! cluster listener (INTERNAL_BATCH with one [`Op`]). Staged offsets are
//! validated by the group's coordinator the same way.
//!
//! In a cluster a transactional record or marker counts as written only
//! once the partition's in-sync replicas have it (the committed HWM passed
//! it): a leader change can then never lose a record the coordinator
//! counted, nor a marker behind a decision.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cursus_wire::{Command, ErrorPayload};
use serde::{Deserialize, Serialize};

use super::append::{
    append_data, append_event, append_marker_at, release, Appended, DurableAppend, TxnEvent,
    TxnRecord,
};
use super::markers::MarkerKind;
use crate::broker::Broker;
use crate::cluster::node::ClusterNode;
use crate::cluster::replication::Replication;

/// How long a participant request may take.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(15);

/// One participant operation, sent to the broker that must run it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Op {
    /// [`append_data`].
    AppendData {
        topic: String,
        partition: u32,
        transactional_id: String,
        producer_id: String,
        epoch: i64,
        seq: u64,
        key: Vec<u8>,
        payload: Vec<u8>,
    },
    /// [`append_event`].
    AppendEvent {
        topic: String,
        partition: u32,
        transactional_id: String,
        producer_id: String,
        epoch: i64,
        seq: u64,
        key: String,
        version: u64,
        schema_version: u32,
        event_type: String,
        metadata: String,
        event_id: String,
        payload_digest: String,
        payload: Vec<u8>,
        replay: bool,
    },
    /// [`append_marker`].
    AppendMarker {
        topic: String,
        partition: u32,
        transactional_id: String,
        producer_id: String,
        epoch: i64,
        commit: bool,
        /// The sender's shard epoch (0 from a sender without shards: below
        /// every shard epoch, so refused).
        #[serde(default)]
        coordinator_epoch: i64,
    },
    /// [`release`].
    Release {
        topic: String,
        partition: u32,
        producer_id: String,
        epoch: i64,
    },
    /// The pending stream events still continue their streams.
    CheckPending {
        topic: String,
        partition: u32,
        producer_id: String,
        epoch: i64,
    },
    /// Staged offsets against the group (on its coordinator).
    ValidateOffsets {
        group: String,
        topic: String,
        member: String,
        generation: u64,
        entries: Vec<(u32, u64)>,
    },
    /// A committed transaction's offsets, written by the group's
    /// coordinator (so its FETCH_OFFSET answers them at once).
    MaterializeOffsets {
        group: String,
        entries: Vec<(String, u32, u64)>,
    },
}

/// A remote append's answer.
#[derive(Debug, Serialize, Deserialize)]
struct AppendAnswer {
    offset: u64,
    new: bool,
}

/// A remote stream check's conflict, if any.
#[derive(Debug, Serialize, Deserialize)]
pub struct PendingConflictView {
    /// The key.
    pub key: String,
    /// The pending version.
    pub version: u64,
    /// The stream's current version.
    pub current: u64,
}

/// Where a partition's operations run.
enum Target {
    Local(Option<Arc<ClusterNode>>),
    Remote(Arc<ClusterNode>, String),
}

fn target(broker: &Broker, topic: &str, partition: u32) -> Result<Target, ErrorPayload> {
    let Some(node) = broker.cluster() else {
        return Ok(Target::Local(None));
    };
    let leader = node
        .state()
        .partition(topic, partition)
        .and_then(|p| p.leader);
    match leader {
        // Not in the replicated state: the local lookup reports it.
        None if node.state().partition(topic, partition).is_none() => {
            Ok(Target::Local(Some(Arc::clone(node))))
        }
        Some(l) if l == node.node_id() => Ok(Target::Local(Some(Arc::clone(node)))),
        Some(l) => match node.peer_addr(l) {
            Some(addr) => Ok(Target::Remote(Arc::clone(node), addr)),
            None => Err(leader_not_found(topic, partition)),
        },
        None => Err(leader_not_found(topic, partition)),
    }
}

fn leader_not_found(topic: &str, partition: u32) -> ErrorPayload {
    ErrorPayload::new("leader_not_found")
        .with_field("topic", topic)
        .with_field("partition", partition)
}

async fn call(node: &ClusterNode, addr: &str, op: &Op) -> Result<Bytes, ErrorPayload> {
    let body = Bytes::from(
        serde_json::to_vec(op)
            .map_err(|e| ErrorPayload::new("broker_error").with_field("reason", e.to_string()))?,
    );
    node.peers
        .get(addr)
        .request_with_timeout(Command::InternalBatch, body, REMOTE_TIMEOUT)
        .await
        .map_err(|e| match e {
            crate::cluster::transport::TransportError::Remote { error, .. } => error,
            other => {
                ErrorPayload::new("replication_unavailable").with_field("reason", other.to_string())
            }
        })
}

fn decode<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ErrorPayload> {
    serde_json::from_slice(body)
        .map_err(|e| ErrorPayload::new("broker_error").with_field("reason", e.to_string()))
}

/// In a cluster, a local append is durable once the ISR has it.
fn committed(
    node: Option<Arc<ClusterNode>>,
    topic: &str,
    partition: u32,
    appended: Appended,
) -> Appended {
    let Some(node) = node else {
        return appended;
    };
    let (topic, offset) = (topic.to_owned(), appended.offset);
    let durable = appended.durable;
    Appended {
        offset,
        new: appended.new,
        durable: DurableAppend::from_future(async move {
            durable.wait().await?;
            Replication::wait_committed(&node, &topic, partition, offset, REMOTE_TIMEOUT).await
        }),
    }
}

/// An append run by the partition's leader: it answered once the record
/// was durable (and in the ISR).
async fn remote_append(node: &ClusterNode, addr: &str, op: &Op) -> Result<Appended, ErrorPayload> {
    let a: AppendAnswer = decode(&call(node, addr, op).await?)?;
    Ok(Appended {
        offset: a.offset,
        new: a.new,
        durable: DurableAppend::ready(),
    })
}

/// Runs a local append for a remote coordinator and answers once it is
/// durable (and in the ISR).
async fn serve_append(
    broker: &Broker,
    topic: &str,
    partition: u32,
    appended: Appended,
) -> Result<Bytes, ErrorPayload> {
    let a = committed(broker.cluster().cloned(), topic, partition, appended);
    let answer = AppendAnswer {
        offset: a.offset,
        new: a.new,
    };
    a.durable.wait().await?;
    to_json(&answer)
}

/// Runs an append on the partition's broker: `local` here when this broker
/// leads the partition (the answer waits for the ISR in a cluster), else
/// the [`Op`] `remote` builds on the leader, over INTERNAL_BATCH.
async fn append_on<F, Fut>(
    broker: &Broker,
    topic: &str,
    partition: u32,
    local: F,
    remote: impl FnOnce() -> Op,
) -> Result<Appended, ErrorPayload>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Appended, ErrorPayload>>,
{
    match target(broker, topic, partition)? {
        Target::Local(node) => Ok(committed(node, topic, partition, local().await?)),
        Target::Remote(node, addr) => remote_append(&node, &addr, &remote()).await,
    }
}

/// [`append_data`] on the partition's broker.
pub async fn data(
    broker: &Broker,
    topic: &str,
    partition: u32,
    rec: &TxnRecord<'_>,
) -> Result<Appended, ErrorPayload> {
    let local = || append_data(&broker.topics, topic, partition, rec);
    append_on(broker, topic, partition, local, || Op::AppendData {
        topic: topic.to_owned(),
        partition,
        transactional_id: rec.transactional_id.to_owned(),
        producer_id: rec.producer_id.to_owned(),
        epoch: rec.epoch,
        seq: rec.seq,
        key: rec.key.to_vec(),
        payload: rec.payload.to_vec(),
    })
    .await
}

/// [`append_event`] on the partition's broker.
pub async fn event(
    broker: &Broker,
    topic: &str,
    partition: u32,
    ev: &TxnEvent<'_>,
) -> Result<Appended, ErrorPayload> {
    let local = || append_event(&broker.topics, topic, partition, ev);
    append_on(broker, topic, partition, local, || Op::AppendEvent {
        topic: topic.to_owned(),
        partition,
        transactional_id: ev.transactional_id.to_owned(),
        producer_id: ev.producer_id.to_owned(),
        epoch: ev.epoch,
        seq: ev.seq,
        key: ev.key.to_owned(),
        version: ev.version,
        schema_version: ev.schema_version,
        event_type: ev.event_type.to_owned(),
        metadata: ev.metadata.to_owned(),
        event_id: ev.event_id.to_owned(),
        payload_digest: ev.payload_digest.clone(),
        payload: ev.payload.to_vec(),
        replay: ev.replay,
    })
    .await
}

/// [`append_marker`] on the partition's broker, with `coordinator_epoch`
/// as the marker's coordinator epoch; in a cluster the leader first refuses
/// a marker from a former shard owner
/// ([`crate::cluster::shards::check_marker_epoch`]), and it returns once
/// the ISR has the marker.
#[allow(clippy::too_many_arguments)]
pub async fn marker(
    broker: &Broker,
    topic: &str,
    partition: u32,
    transactional_id: &str,
    producer_id: &str,
    epoch: i64,
    kind: MarkerKind,
    coordinator_epoch: i64,
) -> Result<bool, ErrorPayload> {
    match target(broker, topic, partition)? {
        Target::Local(node) => {
            if let Some(node) = &node {
                crate::cluster::shards::check_marker_epoch(
                    &node.state(),
                    transactional_id,
                    coordinator_epoch,
                )?;
            }
            let written = append_marker_at(
                &broker.topics,
                topic,
                partition,
                transactional_id,
                producer_id,
                epoch,
                kind,
                coordinator_epoch,
            )
            .await?;
            if let (true, Some(node)) = (written, node) {
                let end = broker
                    .topics
                    .get(topic)
                    .and_then(|t| t.partition(partition).cloned())
                    .map_or(0, |p| p.log().durable_offset());
                if end > 0 {
                    Replication::wait_committed(&node, topic, partition, end - 1, REMOTE_TIMEOUT)
                        .await?;
                }
            }
            Ok(written)
        }
        Target::Remote(node, addr) => {
            let op = Op::AppendMarker {
                topic: topic.to_owned(),
                partition,
                transactional_id: transactional_id.to_owned(),
                producer_id: producer_id.to_owned(),
                epoch,
                commit: kind == MarkerKind::Commit,
                coordinator_epoch,
            };
            decode(&call(&node, &addr, &op).await?)
        }
    }
}

/// [`release`] on the partition's broker (best effort, as locally: a
/// partition that is gone has nothing to release).
pub async fn release_on(
    broker: &Broker,
    topic: &str,
    partition: u32,
    producer_id: &str,
    epoch: i64,
) {
    match target(broker, topic, partition) {
        Ok(Target::Local(_)) => release(&broker.topics, topic, partition, producer_id, epoch),
        Ok(Target::Remote(node, addr)) => {
            let op = Op::Release {
                topic: topic.to_owned(),
                partition,
                producer_id: producer_id.to_owned(),
                epoch,
            };
            if let Err(e) = call(&node, &addr, &op).await {
                tracing::warn!(topic, partition, error = %e.render(), "remote release failed");
            }
        }
        Err(e) => tracing::warn!(topic, partition, error = %e.render(), "no leader to release on"),
    }
}

/// The first pending stream event of `(producer_id, epoch)` in the
/// partition that no longer continues its stream.
pub async fn check_pending(
    broker: &Broker,
    topic: &str,
    partition: u32,
    producer_id: &str,
    epoch: i64,
) -> Result<Option<PendingConflictView>, ErrorPayload> {
    match target(broker, topic, partition)? {
        Target::Local(_) => Ok(local_check_pending(
            broker,
            topic,
            partition,
            producer_id,
            epoch,
        )),
        Target::Remote(node, addr) => {
            let op = Op::CheckPending {
                topic: topic.to_owned(),
                partition,
                producer_id: producer_id.to_owned(),
                epoch,
            };
            decode(&call(&node, &addr, &op).await?)
        }
    }
}

fn local_check_pending(
    broker: &Broker,
    topic: &str,
    partition: u32,
    producer_id: &str,
    epoch: i64,
) -> Option<PendingConflictView> {
    let p = broker.topics.get(topic)?.partition(partition).cloned()?;
    p.with_streams(|s| s.check_pending(producer_id, epoch))
        .err()
        .map(|c| PendingConflictView {
            key: c.key,
            version: c.version,
            current: c.current,
        })
}

/// The group's coordinator when it is another broker: its node and
/// cluster address (`None` in standalone mode or when it is this broker).
fn remote_group_coordinator(broker: &Broker, group: &str) -> Option<(Arc<ClusterNode>, String)> {
    broker.cluster().and_then(|node| {
        let c = crate::cluster::groups::coordinator_of(&node.state(), group)?;
        (c != node.node_id())
            .then(|| node.peer_addr(c))
            .flatten()
            .map(|addr| (Arc::clone(node), addr))
    })
}

/// Validates staged offsets on the group's coordinator.
pub async fn validate_offsets(
    broker: &Broker,
    group: &str,
    topic: &str,
    member: &str,
    generation: u64,
    entries: &[(u32, u64)],
) -> Result<(), ErrorPayload> {
    match remote_group_coordinator(broker, group) {
        None => broker
            .groups
            .validate_offsets(group, topic, member, generation, entries)
            .await
            .map(|_| ()),
        Some((node, addr)) => {
            let op = Op::ValidateOffsets {
                group: group.to_owned(),
                topic: topic.to_owned(),
                member: member.to_owned(),
                generation,
                entries: entries.to_vec(),
            };
            call(&node, &addr, &op).await.map(|_| ())
        }
    }
}

/// Writes a committed transaction's offsets on the group's coordinator:
/// written anywhere else they would reach it only with its next sync of
/// the replicated state, and a FETCH_OFFSET right after the commit would
/// miss them.
pub async fn materialize_offsets(
    broker: &Broker,
    group: &str,
    entries: &[(String, u32, u64)],
) -> Result<(), ErrorPayload> {
    match remote_group_coordinator(broker, group) {
        None => broker
            .groups
            .materialize_offsets(group, entries)
            .await
            .map(|_| ()),
        Some((node, addr)) => {
            let op = Op::MaterializeOffsets {
                group: group.to_owned(),
                entries: entries.to_vec(),
            };
            call(&node, &addr, &op).await.map(|_| ())
        }
    }
}

/// Runs an [`Op`] sent by a coordinator (INTERNAL_BATCH on the cluster
/// listener).
pub async fn serve(broker: &Broker, body: Bytes) -> Result<Bytes, ErrorPayload> {
    let op: Op = decode(&body)?;
    match op {
        Op::AppendData {
            topic,
            partition,
            transactional_id,
            producer_id,
            epoch,
            seq,
            key,
            payload,
        } => {
            check_leads(broker, &topic, partition)?;
            let rec = TxnRecord {
                transactional_id: &transactional_id,
                producer_id: &producer_id,
                epoch,
                seq,
                key: Bytes::from(key),
                payload: Bytes::from(payload),
            };
            let appended = append_data(&broker.topics, &topic, partition, &rec).await?;
            serve_append(broker, &topic, partition, appended).await
        }
        Op::AppendEvent {
            topic,
            partition,
            transactional_id,
            producer_id,
            epoch,
            seq,
            key,
            version,
            schema_version,
            event_type,
            metadata,
            event_id,
            payload_digest,
            payload,
            replay,
        } => {
            check_leads(broker, &topic, partition)?;
            let ev = TxnEvent {
                transactional_id: &transactional_id,
                producer_id: &producer_id,
                epoch,
                seq,
                key: &key,
                version,
                schema_version,
                event_type: &event_type,
                metadata: &metadata,
                event_id: &event_id,
                payload_digest,
                payload: Bytes::from(payload),
                replay,
            };
            let appended = append_event(&broker.topics, &topic, partition, &ev).await?;
            serve_append(broker, &topic, partition, appended).await
        }
        Op::AppendMarker {
            topic,
            partition,
            transactional_id,
            producer_id,
            epoch,
            commit,
            coordinator_epoch,
        } => {
            check_leads(broker, &topic, partition)?;
            let kind = if commit {
                MarkerKind::Commit
            } else {
                MarkerKind::Abort
            };
            let written = marker(
                broker,
                &topic,
                partition,
                &transactional_id,
                &producer_id,
                epoch,
                kind,
                coordinator_epoch,
            )
            .await?;
            to_json(&written)
        }
        Op::Release {
            topic,
            partition,
            producer_id,
            epoch,
        } => {
            check_leads(broker, &topic, partition)?;
            release(&broker.topics, &topic, partition, &producer_id, epoch);
            to_json(&true)
        }
        Op::CheckPending {
            topic,
            partition,
            producer_id,
            epoch,
        } => {
            check_leads(broker, &topic, partition)?;
            to_json(&local_check_pending(
                broker,
                &topic,
                partition,
                &producer_id,
                epoch,
            ))
        }
        Op::ValidateOffsets {
            group,
            topic,
            member,
            generation,
            entries,
        } => {
            crate::cluster::groups::check_coordinator(
                broker,
                &group,
                crate::broker::Listener::Plain,
            )?;
            broker
                .groups
                .validate_offsets(&group, &topic, &member, generation, &entries)
                .await?;
            to_json(&true)
        }
        Op::MaterializeOffsets { group, entries } => {
            crate::cluster::groups::check_coordinator(
                broker,
                &group,
                crate::broker::Listener::Plain,
            )?;
            broker.groups.materialize_offsets(&group, &entries).await?;
            to_json(&true)
        }
    }
}

/// A participant request for a partition this broker does not lead is
/// refused (the coordinator retries after refreshing).
fn check_leads(broker: &Broker, topic: &str, partition: u32) -> Result<(), ErrorPayload> {
    match target(broker, topic, partition)? {
        Target::Local(_) => Ok(()),
        Target::Remote(..) => Err(ErrorPayload::new("NOT_PARTITION_LEADER")
            .with_field("topic", topic)
            .with_field("partition", partition)),
    }
}

/// An answer body.
fn to_json<T: Serialize>(value: &T) -> Result<Bytes, ErrorPayload> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| ErrorPayload::new("broker_error").with_field("reason", e.to_string()))
}
