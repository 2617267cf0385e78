//! The openraft type configuration of the cluster metadata group.

use std::io::Cursor;

use openraft::BasicNode;

use crate::cluster::fsm::{FsmCommand, FsmReply, NodeId};

openraft::declare_raft_types!(
    /// Raft types: FSM commands as entries, node ids `u64`, nodes carry their
    /// cluster (broker-to-broker) address.
    pub TypeConfig:
        D = FsmCommand,
        R = FsmReply,
        NodeId = NodeId,
        Node = BasicNode,
        SnapshotData = Cursor<Vec<u8>>,
);

/// A log entry of the cluster group.
pub type Entry = openraft::Entry<TypeConfig>;
/// A log id.
pub type LogId = openraft::LogId<NodeId>;
/// A vote.
pub type Vote = openraft::Vote<NodeId>;
/// The stored membership.
pub type StoredMembership = openraft::StoredMembership<NodeId, BasicNode>;
/// Storage errors as openraft reports them.
pub type StorageError = openraft::StorageError<NodeId>;
/// A snapshot of the cluster state.
pub type Snapshot = openraft::Snapshot<TypeConfig>;
/// Snapshot metadata.
pub type SnapshotMeta = openraft::SnapshotMeta<NodeId, BasicNode>;
/// The running Raft instance.
pub type Raft = openraft::Raft<TypeConfig>;
/// Raft metrics.
pub type RaftMetrics = openraft::RaftMetrics<NodeId, BasicNode>;
