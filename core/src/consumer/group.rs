//! Group membership: join, sync, heartbeat, leave, and the starting
//! position of each assigned partition.

use super::Subscription;
use crate::client::{Cluster, Idempotence};
use crate::config::{AutoOffsetReset, ConsumerConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::admin::parse_offsets;
use crate::protocol::group::{parse_assignments, parse_join, TopicPartition};
use crate::protocol::reply::OkReply;
use crate::wire::{Command, CommandPayload, ErrorClass};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Member id and generation: what commits carry.
#[derive(Debug, Clone)]
pub(super) struct Identity {
    pub member_id: String,
    pub generation: u64,
}

/// A joined membership with its heartbeat task.
pub(super) struct Group {
    pub member_id: String,
    pub generation: u64,
    pub assignments: Vec<TopicPartition>,
    /// The topic of a single-topic subscription (sent on group commands).
    topic: Option<String>,
    heartbeat: CancellationToken,
}

impl Group {
    pub fn clone_identity(&self) -> Identity {
        Identity {
            member_id: self.member_id.clone(),
            generation: self.generation,
        }
    }

    /// Registers (multi-topic and pattern subscriptions), joins, syncs and
    /// starts heartbeating.
    pub async fn join(
        cluster: &Arc<Cluster>,
        config: &ConsumerConfig,
        subscription: &Subscription,
        previous_member: Option<&str>,
        rebalance_needed: Arc<AtomicBool>,
        rebalance: Arc<tokio::sync::Notify>,
    ) -> Result<Group> {
        let group_id = &config.group_id;
        let topic = match subscription {
            Subscription::Topics(t) if t.len() == 1 => Some(t[0].clone()),
            Subscription::Topics(t) => {
                register(
                    cluster,
                    CommandPayload::new()
                        .field("group", group_id)
                        .field("topics", t.join(",")),
                )
                .await?;
                None
            }
            Subscription::Pattern(p) => {
                register(
                    cluster,
                    CommandPayload::new()
                        .field("group", group_id)
                        .field("pattern", p),
                )
                .await?;
                None
            }
        };
        let with_topic = |p: CommandPayload| match &topic {
            Some(t) => CommandPayload::new().field("topic", t).field_all(p),
            None => p,
        };
        let member = previous_member.unwrap_or(&config.client.client_id);
        let join = with_topic(
            CommandPayload::new()
                .field("group", group_id)
                .field("member", member),
        );
        let reply = cluster
            .ok_request(Command::JoinGroup, &join, Idempotence::Unsafe)
            .await?;
        let joined = parse_join(&reply, topic.as_deref())?;
        let sync = with_topic(
            CommandPayload::new()
                .field("group", group_id)
                .field("member", &joined.member_id)
                .field("generation", joined.generation),
        );
        let reply = cluster
            .ok_request(Command::SyncGroup, &sync, Idempotence::Safe)
            .await?;
        let assignments = parse_assignments(&reply, topic.as_deref())?;
        let generation = reply.parse_opt("generation")?.unwrap_or(joined.generation);
        let heartbeat = CancellationToken::new();
        tokio::spawn(heartbeat_loop(
            Arc::clone(cluster),
            config.clone(),
            topic.clone(),
            Identity {
                member_id: joined.member_id.clone(),
                generation,
            },
            heartbeat.clone(),
            rebalance_needed,
            rebalance,
        ));
        tracing::info!(group = %group_id, member = %joined.member_id, generation, partitions = assignments.len(), "joined group");
        Ok(Group {
            member_id: joined.member_id,
            generation,
            assignments,
            topic,
            heartbeat,
        })
    }

    pub fn stop_heartbeat(&self) {
        self.heartbeat.cancel();
    }

    /// Stops the heartbeat and sends LEAVE_GROUP (best effort).
    pub async fn leave(self, cluster: &Cluster, group_id: &str) {
        self.stop_heartbeat();
        let mut p = CommandPayload::new();
        if let Some(t) = &self.topic {
            p = p.field("topic", t);
        }
        let p = p.field("group", group_id).field("member", &self.member_id);
        if let Err(e) = cluster
            .ok_request(Command::LeaveGroup, &p, Idempotence::Safe)
            .await
        {
            tracing::debug!(error = %e, "LEAVE_GROUP failed");
        }
    }
}

async fn register(cluster: &Cluster, payload: CommandPayload) -> Result<()> {
    cluster
        .ok_request(Command::RegisterGroup, &payload, Idempotence::Safe)
        .await
        .map(|_| ())
}

async fn heartbeat_loop(
    cluster: Arc<Cluster>,
    config: ConsumerConfig,
    topic: Option<String>,
    identity: Identity,
    cancel: CancellationToken,
    rebalance_needed: Arc<AtomicBool>,
    rebalance: Arc<tokio::sync::Notify>,
) {
    let mut payload = CommandPayload::new();
    if let Some(t) = &topic {
        payload = payload.field("topic", t);
    }
    let payload = payload
        .field("group", &config.group_id)
        .field("member", &identity.member_id)
        .field("generation", identity.generation);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(config.heartbeat_interval) => {}
        }
        match cluster
            .ok_request(Command::Heartbeat, &payload, Idempotence::Safe)
            .await
        {
            Ok(_) => {}
            // Network trouble: keep trying; the session may still be alive.
            Err(e) if matches!(e.kind(), ErrorKind::Io | ErrorKind::Timeout) => {
                tracing::debug!(error = %e, "heartbeat failed");
            }
            Err(e) => {
                tracing::info!(error = %e, member = %identity.member_id, "membership lost; rejoining on next poll");
                cluster.report_error(e.with_field("member", &identity.member_id));
                rebalance_needed.store(true, Ordering::SeqCst);
                rebalance.notify_waiters();
                return;
            }
        }
    }
}

/// The broker's committed next offset for `tp`, or `None` when the group
/// never committed there.
pub(super) async fn fetch_committed(
    cluster: &Cluster,
    group_id: &str,
    tp: &TopicPartition,
) -> Result<Option<u64>> {
    let payload = CommandPayload::new()
        .field("topic", &tp.topic)
        .field("partition", tp.partition)
        .field("group", group_id);
    let reply = cluster
        .ok_request(Command::FetchOffset, &payload, Idempotence::Safe)
        .await?;
    let offset: u64 = reply.parse_field("offset")?;
    // Brokers that do not say whether a commit exists answer 0 for none;
    // a commit of 0 means nothing was processed, so both read as "none".
    let committed = match reply.get("committed") {
        Some(v) => v == "true",
        None => offset > 0,
    };
    Ok(committed.then_some(offset))
}

/// Where each assigned partition starts: the committed offset, else the
/// `auto_offset_reset` policy.
pub(super) async fn initial_positions(
    cluster: &Cluster,
    config: &ConsumerConfig,
    assignments: &[TopicPartition],
) -> Result<Vec<(TopicPartition, u64)>> {
    let lookups = assignments.iter().map(|tp| async move {
        let position = match fetch_committed(cluster, &config.group_id, tp).await? {
            Some(offset) => offset,
            None => reset_offset(cluster, config, tp).await?,
        };
        Ok::<_, Error>((tp.clone(), position))
    });
    futures_util::future::try_join_all(lookups).await
}

async fn reset_offset(
    cluster: &Cluster,
    config: &ConsumerConfig,
    tp: &TopicPartition,
) -> Result<u64> {
    if config.auto_offset_reset == AutoOffsetReset::Error {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "group {} has no committed offset for {tp} and auto_offset_reset=error",
                config.group_id
            ),
        )
        .with_code("no_committed_offset")
        .with_class(ErrorClass::Conflict)
        .with_field("topic", &tp.topic)
        .with_field("partition", tp.partition));
    }
    let payload = CommandPayload::new()
        .field("topic", &tp.topic)
        .field("partition", tp.partition);
    let reply: OkReply = cluster
        .ok_request(Command::ListOffsets, &payload, Idempotence::Safe)
        .await?;
    let offsets = parse_offsets(&reply)?;
    let o = offsets
        .iter()
        .find(|o| o.partition == tp.partition)
        .ok_or_else(|| Error::protocol(format!("LIST_OFFSETS did not report {tp}")))?;
    Ok(match config.auto_offset_reset {
        AutoOffsetReset::Latest => o.latest,
        _ => o.earliest,
    })
}

/// A membership that goes away (rebalance, close, a cancelled poll) stops
/// its heartbeat.
impl Drop for Group {
    fn drop(&mut self) {
        self.heartbeat.cancel();
    }
}
