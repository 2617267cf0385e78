//! Transaction coordinator shards (docs/cluster.md, "Transactions"): every
//! transactional id maps to one of a fixed number of logical shards
//! (`transaction_coordinator_shards`, fixed by the first registration and
//! immutable after), and every shard has one owner, the active broker with
//! the highest rendezvous hash of (shard, node id), plus a coordinator
//! epoch bumped on every owner change. The replicated state keeps both
//! ([`TxnShards`], recomputed inside `fsm::ClusterState::apply`), so:
//! * transaction commands, FIND_COORDINATOR `transactional_id=` and the
//!   coordinator's own "do I coordinate this id" go to the shard owner;
//! * TXN_SYNC carries the proposer and the epoch it believes it owns, and
//!   the state machine refuses it when either is stale (a partitioned
//!   former owner can no longer change a transaction);
//! * markers carry the shard epoch as their coordinator epoch, and a
//!   partition leader refuses markers of an epoch older than the one in its
//!   copy (a former owner's markers never authorize visibility).

use cursus_wire::ErrorPayload;
use serde::{Deserialize, Serialize};

use super::fsm::{ClusterState, NodeId};
use super::node::ClusterNode;
use crate::broker::Listener;
use crate::placement::CoordinatorAddr;

/// `transaction_coordinator_shards` when not configured.
pub const DEFAULT_SHARDS: u32 = 50;
/// The largest accepted `transaction_coordinator_shards`.
pub const MAX_SHARDS: u32 = 10_000;
/// The FSM's refusal of a registration with another shard count.
pub const MISMATCH: &str = "transaction_coordinator_shards_mismatch";

/// The shard count and every shard's owner and epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnShards {
    /// The immutable shard count.
    pub count: u32,
    /// Shard `i`'s state at index `i`.
    pub shards: Vec<ShardState>,
}

/// One shard's owner and coordinator epoch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardState {
    /// The broker coordinating the shard's ids (`None`: no active broker).
    pub owner: Option<NodeId>,
    /// Bumped by one on every owner change, never otherwise.
    pub epoch: u64,
}

/// FNV-1a (64-bit) over `bytes`: stable across processes and versions,
/// unlike `std`'s hasher (also the groups' rendezvous hash).
pub(super) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The shard of `transactional_id`: FNV-1a 64 of its UTF-8 bytes modulo
/// `count` (`count` ≥ 1).
pub fn shard_of(transactional_id: &str, count: u32) -> u32 {
    (fnv1a(transactional_id.bytes()) % u64::from(count.max(1))) as u32
}

/// The owner of `shard` among `active`: the highest FNV-1a of (shard as
/// big-endian u32, node id as big-endian u64), so a broker leaving moves
/// only its own shards.
pub fn owner_among(shard: u32, active: &[NodeId]) -> Option<NodeId> {
    active
        .iter()
        .copied()
        .max_by_key(|n| fnv1a(shard.to_be_bytes().into_iter().chain(n.to_be_bytes())))
}

impl TxnShards {
    /// `count` shards owned by `active` (every owned shard at epoch 1).
    pub fn new(count: u32, active: &[NodeId]) -> TxnShards {
        let mut s = TxnShards {
            count,
            shards: vec![ShardState::default(); count as usize],
        };
        s.reassign(active);
        s
    }

    /// Recomputes every owner over `active`; a shard whose owner changes
    /// gets the next epoch.
    pub fn reassign(&mut self, active: &[NodeId]) {
        for (i, shard) in self.shards.iter_mut().enumerate() {
            let owner = owner_among(i as u32, active);
            if owner != shard.owner {
                shard.owner = owner;
                shard.epoch += 1;
            }
        }
    }

    /// The shard of `transactional_id` and its state.
    pub fn of(&self, transactional_id: &str) -> (u32, &ShardState) {
        let i = shard_of(transactional_id, self.count);
        (i, &self.shards[i as usize])
    }
}

/// The owner of `transactional_id`'s shard and its epoch, if the shards are
/// known and the shard has an owner.
pub fn owner(state: &ClusterState, transactional_id: &str) -> Option<(NodeId, u64)> {
    let (_, s) = state.txn_shards.as_ref()?.of(transactional_id);
    Some((s.owner?, s.epoch))
}

/// The client address of `node` for `listener`, split for
/// FIND_COORDINATOR.
pub fn coordinator_addr(node: &ClusterNode, owner: NodeId, listener: Listener) -> CoordinatorAddr {
    let addr = node.client_addr(owner, listener).unwrap_or_default();
    let (host, port) = addr.rsplit_once(':').unwrap_or((&addr, ""));
    CoordinatorAddr {
        broker_id: node.broker_id(owner),
        host: host.to_string(),
        port: port.to_string(),
    }
}

/// `NOT_COORDINATOR host= port=` naming `owner`'s address for `listener`.
pub fn not_coordinator(node: &ClusterNode, owner: NodeId, listener: Listener) -> ErrorPayload {
    let addr = node.client_addr(owner, listener).unwrap_or_default();
    let (host, port) = addr.rsplit_once(':').unwrap_or((&addr, ""));
    ErrorPayload::new("NOT_COORDINATOR")
        .with_field("host", host)
        .with_field("port", port)
}

fn unavailable(transactional_id: &str) -> ErrorPayload {
    ErrorPayload::new("coordinator_not_available").with_field("transactional_id", transactional_id)
}

/// `Ok` on the owner of `transactional_id`'s shard; otherwise
/// `NOT_COORDINATOR host= port=` (or `coordinator_not_available` while
/// this broker may not coordinate or the shard has no owner).
pub fn check_coordinator(
    node: &ClusterNode,
    transactional_id: &str,
    listener: Listener,
) -> Result<(), ErrorPayload> {
    if !node.may_coordinate() {
        // A restarted broker's copy may still name it the owner of shards
        // that moved while it was away.
        return Err(unavailable(transactional_id));
    }
    let owner = owner(&node.state(), transactional_id);
    match owner {
        Some((o, _)) if o == node.node_id() => Ok(()),
        Some((o, _)) => Err(not_coordinator(node, o, listener)),
        None => Err(unavailable(transactional_id)),
    }
}

/// FIND_COORDINATOR `transactional_id=` in distributed mode: the shard
/// owner.
pub fn find(
    node: &ClusterNode,
    transactional_id: &str,
    listener: Listener,
) -> Result<CoordinatorAddr, ErrorPayload> {
    let (o, _) =
        owner(&node.state(), transactional_id).ok_or_else(|| unavailable(transactional_id))?;
    Ok(coordinator_addr(node, o, listener))
}

/// The shard epoch this broker owns `transactional_id`'s shard at, per its
/// copy of the replicated state (what TXN_SYNC claims and markers carry);
/// `NOT_COORDINATOR` when it does not own it.
pub fn owned_epoch(node: &ClusterNode, transactional_id: &str) -> Result<u64, ErrorPayload> {
    match owner(&node.state(), transactional_id) {
        Some((o, epoch)) if o == node.node_id() => Ok(epoch),
        Some((o, _)) => Err(not_coordinator(node, o, Listener::Plain)
            .with_field("transactional_id", transactional_id)),
        None => Err(unavailable(transactional_id)),
    }
}

/// On a partition leader: refuses (retryable `NOT_COORDINATOR`) a marker of
/// `transactional_id` whose coordinator epoch is below its shard's epoch in
/// `state`, this broker's copy: it comes from a former owner.
pub fn check_marker_epoch(
    state: &ClusterState,
    transactional_id: &str,
    coordinator_epoch: i64,
) -> Result<(), ErrorPayload> {
    let Some(shards) = state.txn_shards.as_ref() else {
        return Ok(());
    };
    let (i, shard) = shards.of(transactional_id);
    if coordinator_epoch < shard.epoch as i64 {
        return Err(ErrorPayload::new("NOT_COORDINATOR")
            .with_field("transactional_id", transactional_id)
            .with_field("reason", "marker from a former shard owner")
            .with_field("shard", i)
            .with_field("coordinator_epoch", coordinator_epoch)
            .with_field("shard_epoch", shard.epoch));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_spread_over_shards_stably() {
        // Pinned values: the mapping must never change across versions.
        assert_eq!(shard_of("", 50), (0xcbf2_9ce4_8422_2325u64 % 50) as u32);
        assert_eq!(shard_of("tx", 1), 0);
        assert_eq!(shard_of("tx", 50), shard_of("tx", 50));
        let used: std::collections::BTreeSet<u32> = (0..1000)
            .map(|i| shard_of(&format!("id-{i}"), 50))
            .collect();
        assert_eq!(used.len(), 50, "every shard gets ids");
        assert!(used.iter().all(|s| *s < 50));
    }

    #[test]
    fn markers_of_a_former_owner_are_refused() {
        let mut state = ClusterState::default();
        assert!(check_marker_epoch(&state, "tx", 0).is_ok(), "no shards yet");
        state.txn_shards = Some(TxnShards::new(4, &[1, 2]));
        let (i, _) = state.txn_shards.as_ref().unwrap().of("tx");
        state.txn_shards.as_mut().unwrap().shards[i as usize].epoch = 5;
        let e = check_marker_epoch(&state, "tx", 4).unwrap_err();
        assert_eq!(e.code, "NOT_COORDINATOR");
        assert!(e.retryable);
        assert_eq!(e.fields["shard_epoch"], "5");
        assert!(check_marker_epoch(&state, "tx", 5).is_ok());
        // A newer epoch: the leader's copy lags the coordinator's.
        assert!(check_marker_epoch(&state, "tx", 6).is_ok());
    }

    #[test]
    fn owners_move_only_from_a_broker_that_leaves_and_bump_epochs() {
        let all = TxnShards::new(40, &[1, 2, 3]);
        assert!(all.shards.iter().all(|s| s.epoch == 1 && s.owner.is_some()));
        let owners: std::collections::BTreeSet<_> =
            all.shards.iter().filter_map(|s| s.owner).collect();
        assert_eq!(owners.len(), 3, "shards spread over every broker");
        let mut without_2 = all.clone();
        without_2.reassign(&[1, 3]);
        for (before, after) in all.shards.iter().zip(&without_2.shards) {
            if before.owner == Some(2) {
                assert_ne!(after.owner, Some(2));
                assert_eq!(after.epoch, before.epoch + 1);
            } else {
                assert_eq!(after, before, "moved needlessly");
            }
        }
        let mut none = without_2.clone();
        none.reassign(&[]);
        assert!(none.shards.iter().all(|s| s.owner.is_none()));
        assert!(none
            .shards
            .iter()
            .zip(&without_2.shards)
            .all(|(n, b)| n.epoch == b.epoch + 1));
    }
}
