//! Topic administration in distributed mode: CREATE and DELETE go through
//! Raft (any broker accepts them and forwards the proposal to the Raft
//! leader); METADATA reports each partition's leader from the replicated
//! state. Every broker materializes the topics itself
//! (`replication::reconcile_forever`).

use std::time::Duration;

use cursus_wire::ErrorPayload;

use super::fsm::{ClusterState, FsmCommand};
use super::node::ClusterNode;
use crate::broker::{Broker, Listener};
use crate::placement::TopicLeaders;
use crate::storage::TopicDefinition;
use crate::topics::definition::{validate_definition, with_min_isr};
use crate::topics::{MinIsr, TopicPatch};

/// Compare-and-set attempts when another CREATE changes the topic meanwhile.
const CAS_ATTEMPTS: usize = 5;
/// How long a change may take to be applied and materialized here.
const APPLY_WAIT: Duration = Duration::from_secs(10);

/// CREATE through Raft; answers with the definition once this broker has
/// materialized it.
pub async fn create(
    broker: &Broker,
    node: &ClusterNode,
    patch: &TopicPatch,
) -> Result<TopicDefinition, ErrorPayload> {
    let defaults = *broker.topics.defaults();
    change_definition(
        broker,
        node,
        &patch.name,
        "create_topic_failed",
        |current| patch.apply(current, &defaults),
    )
    .await
}

/// ALTER_TOPIC_CONFIG through Raft: only the `min_in_sync_replicas`
/// override changes.
pub async fn alter_min_isr(
    broker: &Broker,
    node: &ClusterNode,
    name: &str,
    value: MinIsr,
) -> Result<TopicDefinition, ErrorPayload> {
    change_definition(broker, node, name, "alter_topic_config_failed", |current| {
        let current = current
            .ok_or_else(|| ErrorPayload::new("topic_not_found").with_field("topic", name))?;
        Ok(with_min_isr(current, value))
    })
    .await
}

/// Proposes `next_of(current definition)` with a compare-and-set on the
/// current revision (recomputed when another change won the race), then
/// waits until this broker has applied and materialized it.
async fn change_definition(
    broker: &Broker,
    node: &ClusterNode,
    name: &str,
    failure_code: &str,
    next_of: impl Fn(Option<&TopicDefinition>) -> Result<TopicDefinition, ErrorPayload>,
) -> Result<TopicDefinition, ErrorPayload> {
    for _ in 0..CAS_ATTEMPTS {
        let current = node.state().topics.get(name).map(|t| t.def.clone());
        let next = next_of(current.as_ref())?;
        validate_definition(&next)?;
        if current.as_ref() != Some(&next) {
            let proposal = FsmCommand::PutTopic {
                def: next.clone(),
                expected_revision: current.as_ref().map(|d| d.revision),
            };
            match node.propose(proposal).await {
                Err(e) if e.code == "topic_definition_conflict" => continue,
                Err(e) => return Err(e),
                Ok(_) => {}
            }
        }
        wait_revision(node, name, next.revision).await?;
        wait_materialized(broker, node, name, next.partitions).await?;
        wait_leaders_serving(broker, node, name).await?;
        return Ok(next);
    }
    Err(ErrorPayload::new(failure_code)
        .with_field("topic", name)
        .with_field("reason", "concurrent definition changes"))
}

/// Waits until this broker applied revision `revision` of `name`.
async fn wait_revision(node: &ClusterNode, name: &str, revision: u64) -> Result<(), ErrorPayload> {
    node.wait_for(
        |s| {
            s.topics
                .get(name)
                .is_some_and(|t| t.def.revision >= revision)
        },
        APPLY_WAIT,
    )
    .await
}

/// TRUNCATE through Raft, once no group of the topic has active members
/// on another broker (`blocked_code` otherwise); every broker then empties
/// its copy (`replication::reconcile_forever`).
pub async fn truncate(
    broker: &Broker,
    node: &ClusterNode,
    name: &str,
    expected_revision: u64,
    blocked_code: &str,
) -> Result<TopicDefinition, ErrorPayload> {
    super::groups::check_removal_elsewhere(node, name, blocked_code).await?;
    node.propose(FsmCommand::TruncateTopic {
        name: name.to_string(),
        expected_revision,
    })
    .await
    .map_err(|e| {
        if e.code == "topic_revision_conflict" {
            let current = node.state().topics.get(name).map_or(0, |t| t.def.revision);
            ErrorPayload::new("topic_revision_conflict")
                .with_field("topic", name)
                .with_field("current", current)
                .with_field("expected", expected_revision)
        } else {
            e
        }
    })?;
    wait_revision(node, name, expected_revision + 1).await?;
    // Answered once every leader serves the new generation, so a client
    // acting on the reply never meets the old one.
    wait_leaders_serving(broker, node, name).await?;
    node.state()
        .topics
        .get(name)
        .map(|t| t.def.clone())
        .ok_or_else(|| ErrorPayload::new("topic_not_found").with_field("topic", name))
}

/// DELETE through Raft, once no group of the topic has active members on
/// another broker (`blocked_code` otherwise); `Ok(false)` when the topic
/// was already absent.
pub async fn delete(
    broker: &Broker,
    node: &ClusterNode,
    name: &str,
    if_exists: bool,
    blocked_code: &str,
) -> Result<bool, ErrorPayload> {
    // Groups coordinated elsewhere are checked by their coordinators.
    super::groups::check_removal_elsewhere(node, name, blocked_code).await?;
    if !node.state().topics.contains_key(name) {
        return if if_exists {
            Ok(false)
        } else {
            Err(ErrorPayload::new("topic_not_found").with_field("topic", name))
        };
    }
    node.propose(FsmCommand::DeleteTopic {
        name: name.to_string(),
    })
    .await?;
    node.wait_for(|s| !s.topics.contains_key(name), APPLY_WAIT)
        .await?;
    let deadline = tokio::time::Instant::now() + APPLY_WAIT;
    while broker.topics.get(name).is_some() {
        if tokio::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(true)
}

/// Waits until every partition's leader serves the topic in the leader
/// epoch this broker knows (it materialized it and prepared that epoch),
/// so that a client acting on a successful CREATE or TRUNCATE finds the
/// new generation on every leader; each leader is asked through
/// LIST_OFFSETS, which only such a leader answers.
async fn wait_leaders_serving(
    broker: &Broker,
    node: &ClusterNode,
    name: &str,
) -> Result<(), ErrorPayload> {
    let deadline = tokio::time::Instant::now() + APPLY_WAIT;
    let Some(topic) = broker.topics.get(name) else {
        return Ok(());
    };
    for part in &topic.partitions {
        loop {
            match super::offsets::line(broker, node, name, part).await {
                Ok(_) => break,
                Err(e) if e.retryable && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// Waits for the reconciler to have created the topic's partitions here.
async fn wait_materialized(
    broker: &Broker,
    node: &ClusterNode,
    name: &str,
    partitions: u32,
) -> Result<(), ErrorPayload> {
    let mut applied = node.applied();
    let deadline = tokio::time::Instant::now() + APPLY_WAIT;
    // The reconciler runs after each apply: poll it between applies.
    while broker
        .topics
        .get(name)
        .map_or(true, |t| t.partitions.len() < partitions as usize)
    {
        let step = tokio::time::sleep(Duration::from_millis(10));
        tokio::select! {
            _ = applied.changed() => {}
            _ = step => {}
        }
        if tokio::time::Instant::now() > deadline {
            return Err(ErrorPayload::new("cluster_metadata_unavailable")
                .with_field("reason", "the topic was not materialized here in time"));
        }
    }
    Ok(())
}

/// METADATA's `leaders=` and `epochs=` and the authoritative definition.
pub fn leaders(state: &ClusterState, topic: &str, listener: Listener) -> Option<TopicLeaders> {
    let t = state.topics.get(topic)?;
    let addr = |n| {
        state
            .brokers
            .get(&n)
            .map_or_else(String::new, |b| match (listener, &b.tls_client_addr) {
                (Listener::Tls, Some(tls)) => tls.clone(),
                _ => b.client_addr.clone(),
            })
    };
    let leaders = t
        .partitions
        .iter()
        .map(|p| p.leader.map_or_else(String::new, addr))
        .collect();
    let epochs = t.partitions.iter().map(|p| p.leader_epoch).collect();
    Some(TopicLeaders {
        def: t.def.clone(),
        leaders,
        epochs,
    })
}
