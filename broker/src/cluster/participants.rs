//! The clustered [`Participants`]: a transaction's operations run on the
//! broker that owns the partition or group. Where this broker leads the
//! partition, the local [`crate::txn::append`] functions; otherwise the
//! partition's leader runs them, asked over the cluster listener
//! (INTERNAL_BATCH with one `Op`, answered by [`serve`]). Staged offsets
//! are validated by the group's coordinator the same way.
//!
//! A transactional record or marker counts as written only once the
//! partition's in-sync replicas have it (the committed HWM passed it): a
//! leader change can then never lose a record the coordinator counted, nor
//! a marker behind a decision.

use std::time::Duration;

use bytes::Bytes;
use cursus_wire::{Command, ErrorPayload};
use serde::{Deserialize, Serialize};

use super::placement::Clustered;
use crate::broker::{Broker, Listener};
use crate::placement::commit::{committed, Commit, Written};
use crate::placement::{leader_not_found, BoxFuture, CoordinatorKey, Placement};
use crate::txn::append::{
    append_data, append_event, release, Appended, DurableAppend, TxnEvent, TxnRecord,
};
use crate::txn::markers::MarkerKind;
use crate::txn::participants::{
    check_pending, materialize_offsets, validate_offsets, write_marker, GroupOffsets, MarkerWrite,
    Participants, PendingConflict,
};

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
        /// Absent from a broker that predates it: none.
        #[serde(default)]
        metadata: String,
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

/// Where a partition's operations run.
enum Site {
    /// This broker leads the partition (or the replicated state does not
    /// know it yet: the local lookup reports that).
    Here,
    /// The leader, at this cluster address.
    Leader(String),
}

impl Clustered {
    fn site(&self, topic: &str, partition: u32) -> Result<Site, ErrorPayload> {
        let node = &self.node;
        let leader = {
            let state = node.state();
            match state.partition(topic, partition) {
                None => return Ok(Site::Here),
                Some(p) => p.leader,
            }
        };
        match leader {
            Some(l) if l == node.node_id() => Ok(Site::Here),
            Some(l) => match node.peer_addr(l) {
                Some(addr) => Ok(Site::Leader(addr)),
                None => Err(leader_not_found(topic, partition)),
            },
            None => Err(leader_not_found(topic, partition)),
        }
    }

    /// The cluster address of `group`'s coordinator when it is another
    /// broker (`None` when it is this one, or unknown: the local
    /// coordinator then answers).
    fn remote_group_coordinator(&self, group: &str) -> Option<String> {
        let node = &self.node;
        let c = super::groups::coordinator_of(&node.state(), group)?;
        (c != node.node_id()).then(|| node.peer_addr(c)).flatten()
    }

    async fn call(&self, addr: &str, op: &Op) -> Result<Bytes, ErrorPayload> {
        let body =
            Bytes::from(serde_json::to_vec(op).map_err(|e| {
                ErrorPayload::new("broker_error").with_field("reason", e.to_string())
            })?);
        self.node
            .peers
            .get(addr)
            .request_with_timeout(Command::InternalBatch, body, REMOTE_TIMEOUT)
            .await
            .map_err(|e| match e {
                super::transport::TransportError::Remote { error, .. } => error,
                other => ErrorPayload::new("replication_unavailable")
                    .with_field("reason", other.to_string()),
            })
    }

    /// A local append counts once the in-sync replicas have it.
    fn committed(&self, topic: &str, partition: u32, appended: Appended) -> Appended {
        let this = self.clone();
        let (topic, offset) = (topic.to_owned(), appended.offset);
        let leader_epoch = appended.leader_epoch;
        let local = appended.durable;
        Appended {
            offset,
            leader_epoch,
            new: appended.new,
            durable: DurableAppend::from_future(async move {
                let writes = [Written {
                    partition,
                    offset,
                    leader_epoch,
                }];
                committed(
                    &this,
                    &topic,
                    &writes,
                    local.wait(),
                    Commit::InSync,
                    REMOTE_TIMEOUT,
                )
                .await
            }),
        }
    }

    /// An append run by the partition's leader: it answered once the
    /// record was durable (and in the ISR).
    async fn remote_append(&self, addr: &str, op: &Op) -> Result<Appended, ErrorPayload> {
        let a: AppendAnswer = decode(&self.call(addr, op).await?)?;
        Ok(Appended {
            offset: a.offset,
            leader_epoch: 0,
            new: a.new,
            durable: DurableAppend::ready(),
        })
    }

    /// Runs an append on the partition's broker: `local` here when this
    /// broker leads the partition (the answer waits for the ISR), else the
    /// `Op` `remote` builds on the leader, over INTERNAL_BATCH.
    async fn append_on<Fut>(
        &self,
        topic: &str,
        partition: u32,
        local: impl FnOnce() -> Fut,
        remote: impl FnOnce() -> Op,
    ) -> Result<Appended, ErrorPayload>
    where
        Fut: std::future::Future<Output = Result<Appended, ErrorPayload>>,
    {
        match self.site(topic, partition)? {
            Site::Here => Ok(self.committed(topic, partition, local().await?)),
            Site::Leader(addr) => self.remote_append(&addr, &remote()).await,
        }
    }

    /// The marker on this broker, the partition's leader: refused when it
    /// comes from a former owner of the transactional id's shard
    /// ([`super::shards::check_marker_epoch`]); returns once the ISR has
    /// it.
    async fn local_marker(
        &self,
        broker: &Broker,
        topic: &str,
        partition: u32,
        m: MarkerWrite<'_>,
    ) -> Result<bool, ErrorPayload> {
        super::shards::check_marker_epoch(
            &self.node.state(),
            m.transactional_id,
            m.coordinator_epoch,
        )?;
        let written = write_marker(broker, topic, partition, m).await?;
        if let Some(marker) = written {
            self.wait_replicated(topic, marker, REMOTE_TIMEOUT).await?;
        }
        Ok(written.is_some())
    }
}

impl Participants for Clustered {
    fn data<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        rec: &'a TxnRecord<'a>,
    ) -> BoxFuture<'a, Result<Appended, ErrorPayload>> {
        let local = move || append_data(&broker.topics, topic, partition, rec);
        Box::pin(
            self.append_on(topic, partition, local, move || Op::AppendData {
                topic: topic.to_owned(),
                partition,
                transactional_id: rec.transactional_id.to_owned(),
                producer_id: rec.producer_id.to_owned(),
                epoch: rec.epoch,
                seq: rec.seq,
                key: rec.key.to_vec(),
                payload: rec.payload.to_vec(),
                metadata: rec.metadata.to_owned(),
            }),
        )
    }

    fn event<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        ev: &'a TxnEvent<'a>,
    ) -> BoxFuture<'a, Result<Appended, ErrorPayload>> {
        let local = move || append_event(&broker.topics, topic, partition, ev);
        Box::pin(
            self.append_on(topic, partition, local, move || Op::AppendEvent {
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
            }),
        )
    }

    fn marker<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        m: MarkerWrite<'a>,
    ) -> BoxFuture<'a, Result<bool, ErrorPayload>> {
        Box::pin(async move {
            match self.site(topic, partition)? {
                Site::Here => self.local_marker(broker, topic, partition, m).await,
                Site::Leader(addr) => {
                    let op = Op::AppendMarker {
                        topic: topic.to_owned(),
                        partition,
                        transactional_id: m.transactional_id.to_owned(),
                        producer_id: m.producer_id.to_owned(),
                        epoch: m.epoch,
                        commit: m.kind == MarkerKind::Commit,
                        coordinator_epoch: m.coordinator_epoch,
                    };
                    decode(&self.call(&addr, &op).await?)
                }
            }
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
        Box::pin(async move {
            match self.site(topic, partition) {
                Ok(Site::Here) => release(&broker.topics, topic, partition, producer_id, epoch),
                Ok(Site::Leader(addr)) => {
                    let op = Op::Release {
                        topic: topic.to_owned(),
                        partition,
                        producer_id: producer_id.to_owned(),
                        epoch,
                    };
                    if let Err(e) = self.call(&addr, &op).await {
                        tracing::warn!(topic, partition, error = %e.render(), "remote release failed");
                    }
                }
                Err(e) => {
                    tracing::warn!(topic, partition, error = %e.render(), "no leader to release on")
                }
            }
        })
    }

    fn check_pending<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        producer_id: &'a str,
        epoch: i64,
    ) -> BoxFuture<'a, Result<Option<PendingConflict>, ErrorPayload>> {
        Box::pin(async move {
            match self.site(topic, partition)? {
                Site::Here => Ok(check_pending(broker, topic, partition, producer_id, epoch)),
                Site::Leader(addr) => {
                    let op = Op::CheckPending {
                        topic: topic.to_owned(),
                        partition,
                        producer_id: producer_id.to_owned(),
                        epoch,
                    };
                    decode(&self.call(&addr, &op).await?)
                }
            }
        })
    }

    fn validate_offsets<'a>(
        &'a self,
        broker: &'a Broker,
        o: GroupOffsets<'a>,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(async move {
            match self.remote_group_coordinator(o.group) {
                None => validate_offsets(broker, o).await,
                Some(addr) => {
                    let op = Op::ValidateOffsets {
                        group: o.group.to_owned(),
                        topic: o.topic.to_owned(),
                        member: o.member.to_owned(),
                        generation: o.generation,
                        entries: o.entries.to_vec(),
                    };
                    self.call(&addr, &op).await.map(|_| ())
                }
            }
        })
    }

    fn materialize_offsets<'a>(
        &'a self,
        broker: &'a Broker,
        group: &'a str,
        entries: &'a [(String, u32, u64)],
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(async move {
            match self.remote_group_coordinator(group) {
                None => materialize_offsets(broker, group, entries).await,
                Some(addr) => {
                    let op = Op::MaterializeOffsets {
                        group: group.to_owned(),
                        entries: entries.to_vec(),
                    };
                    self.call(&addr, &op).await.map(|_| ())
                }
            }
        })
    }
}

fn decode<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ErrorPayload> {
    serde_json::from_slice(body)
        .map_err(|e| ErrorPayload::new("broker_error").with_field("reason", e.to_string()))
}

/// Runs a local append for a remote coordinator and answers once it is
/// durable (and in the ISR).
async fn serve_append(
    placement: &Clustered,
    topic: &str,
    partition: u32,
    appended: Appended,
) -> Result<Bytes, ErrorPayload> {
    let a = placement.committed(topic, partition, appended);
    let answer = AppendAnswer {
        offset: a.offset,
        new: a.new,
    };
    a.durable.wait().await?;
    to_json(&answer)
}

/// Runs an `Op` sent by a coordinator (INTERNAL_BATCH on the cluster
/// listener).
pub async fn serve(
    placement: &Clustered,
    broker: &Broker,
    body: Bytes,
) -> Result<Bytes, ErrorPayload> {
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
            metadata,
        } => {
            placement.check_leads(&topic, partition)?;
            let rec = TxnRecord {
                transactional_id: &transactional_id,
                producer_id: &producer_id,
                epoch,
                seq,
                key: Bytes::from(key),
                payload: Bytes::from(payload),
                metadata: &metadata,
            };
            let appended = append_data(&broker.topics, &topic, partition, &rec).await?;
            serve_append(placement, &topic, partition, appended).await
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
            placement.check_leads(&topic, partition)?;
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
            serve_append(placement, &topic, partition, appended).await
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
            placement.check_leads(&topic, partition)?;
            let marker = MarkerWrite {
                transactional_id: &transactional_id,
                producer_id: &producer_id,
                epoch,
                kind: if commit {
                    MarkerKind::Commit
                } else {
                    MarkerKind::Abort
                },
                coordinator_epoch,
            };
            let written = placement
                .local_marker(broker, &topic, partition, marker)
                .await?;
            to_json(&written)
        }
        Op::Release {
            topic,
            partition,
            producer_id,
            epoch,
        } => {
            placement.check_leads(&topic, partition)?;
            release(&broker.topics, &topic, partition, &producer_id, epoch);
            to_json(&true)
        }
        Op::CheckPending {
            topic,
            partition,
            producer_id,
            epoch,
        } => {
            placement.check_leads(&topic, partition)?;
            to_json(&check_pending(
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
            placement.check_coordinator(CoordinatorKey::Group(&group), Listener::Plain)?;
            let offsets = GroupOffsets {
                group: &group,
                topic: &topic,
                member: &member,
                generation,
                entries: &entries,
            };
            validate_offsets(broker, offsets).await?;
            to_json(&true)
        }
        Op::MaterializeOffsets { group, entries } => {
            placement.check_coordinator(CoordinatorKey::Group(&group), Listener::Plain)?;
            broker.groups.materialize_offsets(&group, &entries).await?;
            to_json(&true)
        }
    }
}

impl Clustered {
    /// A participant request for a partition this broker does not lead is
    /// refused (the coordinator retries after refreshing).
    fn check_leads(&self, topic: &str, partition: u32) -> Result<(), ErrorPayload> {
        match self.site(topic, partition)? {
            Site::Here => Ok(()),
            Site::Leader(_) => Err(ErrorPayload::new("NOT_PARTITION_LEADER")
                .with_field("topic", topic)
                .with_field("partition", partition)),
        }
    }
}

/// An answer body.
fn to_json<T: Serialize>(value: &T) -> Result<Bytes, ErrorPayload> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| ErrorPayload::new("broker_error").with_field("reason", e.to_string()))
}
