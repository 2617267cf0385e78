//! Which requests this broker may serve in distributed mode: partition
//! data and event-sourcing commands only on the partition's leader; any
//! other broker answers `NOT_LEADER leader=<host:port>` (the client address
//! of the listener the request came in on), which clients follow.

use cursus_wire::ErrorPayload;

use super::node::ClusterNode;
use crate::broker::Listener;
use crate::placement::leader_not_found;

/// `Ok` when this broker leads `topic`/`partition` in the epoch it serves
/// (or the replicated state does not know the partition yet); otherwise
/// the redirect (or `leader_not_found` while it has no leader).
pub fn check_leader(
    node: &ClusterNode,
    topic: &str,
    partition: u32,
    listener: Listener,
) -> Result<(), ErrorPayload> {
    let (leader, epoch) = {
        let state = node.state();
        match state.partition(topic, partition) {
            // Not in the replicated state (yet): the local lookup that
            // follows gives the usual not-found error.
            None => return Ok(()),
            Some(p) => (p.leader, p.leader_epoch),
        }
    };
    match leader {
        Some(l) if l == node.node_id() => {
            // Serving this very epoch: after a TRUNCATE or a re-election the
            // old generation must not answer while the new one prepares.
            if node.replication.serving(topic, partition, epoch) {
                Ok(())
            } else {
                // Elected, still preparing (rebuilding state from its
                // log): retryable, like a leader not known yet.
                Err(leader_not_found(topic, partition).with_field("reason", "preparing"))
            }
        }
        Some(l) => match node.client_addr(l, listener) {
            Some(addr) => Err(ErrorPayload::new("NOT_LEADER").with_field("leader", addr)),
            None => Err(leader_not_found(topic, partition)),
        },
        None => Err(leader_not_found(topic, partition)),
    }
}

/// The error for a topic this broker does not have: a topic the
/// replicated state defines but this broker has not materialized yet is
/// `topic_materialization_pending` (retryable), otherwise
/// `topic_not_found`.
pub fn missing_topic(node: &ClusterNode, name: &str) -> ErrorPayload {
    let code = if node.state().topics.contains_key(name) {
        "topic_materialization_pending"
    } else {
        "topic_not_found"
    };
    ErrorPayload::new(code).with_field("topic", name)
}

/// The error when a partition's generation kept changing under a request
/// (TRUNCATE, DELETE, a leader change): in a cluster that is a leader
/// change in progress, so the retryable `leader_not_found`.
pub fn generation_changed(topic: &str) -> ErrorPayload {
    ErrorPayload::new("leader_not_found")
        .with_field("topic", topic)
        .with_field("reason", "generation_changed")
}
