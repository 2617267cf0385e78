//! The replicated cluster state (the Raft state machine's data) and the
//! commands that change it. Pure: `apply` is deterministic, does no I/O and
//! is unit-tested on its own; `raft::state_machine` feeds it committed
//! entries and snapshots it.
//!
//! Invariants `apply` keeps (docs/cluster.md, "Replicated state"):
//! * a partition's leader, when it has one, is an active broker in its ISR;
//! * the ISR is a non-empty subset of the replicas (a dead last member
//!   stays: it is the only one known to hold every committed record);
//! * every leader change bumps the leader epoch exactly once, and so does
//!   every change of a partition's replica set (a reassignment), which
//!   restarts the leader's replicators with the new set;
//! * a reassignment drops a replica only once every target replica is in
//!   the ISR, so the ISR never shrinks below the target's size by it;
//! * the committed high-water mark only grows within a lifecycle epoch and
//!   is fenced by the leader epoch of whoever advances it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::shards::{self, TxnShards};
use crate::groups::records::{DurableState, Membership, RecordBody, Registration};
use crate::groups::Selector;
use crate::storage::TopicDefinition;
use crate::txn::state::TxnSnapshot;

/// A Raft node id.
pub type NodeId = u64;

/// The snapshot format version (the spec's "snapshot version 9").
pub const SNAPSHOT_VERSION: u32 = 9;

/// The committed-HWM provenance version every partition carries.
pub const COMMITTED_HWM_VERSION: u32 = 1;

/// The replicated cluster metadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterState {
    /// Snapshot format version; [`SNAPSHOT_VERSION`] once anything was applied.
    pub version: u32,
    /// Registered brokers by node id.
    pub brokers: BTreeMap<NodeId, BrokerEntry>,
    /// Topics by name.
    pub topics: BTreeMap<String, TopicEntry>,
    /// Consumer groups: registrations and committed offsets (the
    /// distributed `__consumer_offsets`).
    #[serde(default)]
    pub groups: BTreeMap<String, GroupEntry>,
    /// Bumped by every applied group record (brokers resync their
    /// coordinator's copy when it moves).
    #[serde(default)]
    pub groups_version: u64,
    /// The groups version when the active brokers last changed (which may
    /// move groups to another coordinator): a coordinator answers once its
    /// copy of the groups holds every record before it.
    #[serde(default)]
    pub groups_moved_at: u64,
    /// Transaction coordinator state by transactional id (TXN_SYNC: the
    /// distributed `__transaction_state`).
    #[serde(default)]
    pub txns: BTreeMap<String, TxnSnapshot>,
    /// The next broker-managed producer number (`txn-<n>`), cluster-wide.
    #[serde(default)]
    pub next_producer_id: u64,
    /// Bumped by every applied TXN_SYNC.
    #[serde(default)]
    pub txns_version: u64,
    /// Transaction coordinator shards: the count the first registration
    /// fixed, and each shard's owner and epoch (`None` until a broker that
    /// knows its count registers; absent from older snapshots).
    #[serde(default)]
    pub txn_shards: Option<TxnShards>,
}

/// A consumer group's durable state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupEntry {
    /// What the group subscribes to.
    pub selector: Selector,
    /// Topic to partition count.
    pub expansion: BTreeMap<String, u32>,
    /// Committed next offsets: topic → partition → offset.
    #[serde(default)]
    pub offsets: BTreeMap<String, BTreeMap<u32, u64>>,
    /// The members, generation and assignments the coordinator last wrote
    /// (absent before its first membership change, and from snapshots
    /// taken before membership was replicated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membership: Option<Membership>,
}

/// A broker known to the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerEntry {
    /// The broker id string clients see.
    pub broker_id: String,
    /// Broker-to-broker (cluster listener) address.
    pub cluster_addr: String,
    /// Advertised plain client address.
    pub client_addr: String,
    /// Advertised TLS client address, if the broker has a TLS listener.
    #[serde(default)]
    pub tls_client_addr: Option<String>,
    /// Active (heartbeating) or not.
    #[serde(default = "active")]
    pub active: bool,
    /// The topic lifecycle protocol version the broker speaks.
    #[serde(default)]
    pub lifecycle_protocol: u32,
    /// When the status last changed (Unix milliseconds, from the proposer).
    #[serde(default)]
    pub since_ms: u64,
    /// Gets partition replicas at placement (`false`: a broker that only
    /// serves metadata, coordination and redirects).
    #[serde(default = "active")]
    pub hosts_replicas: bool,
    /// Its configured `transaction_coordinator_shards` (0: unknown, a
    /// registration from before the shards existed).
    #[serde(default)]
    pub txn_shards: u32,
}

fn active() -> bool {
    true
}

/// A topic: its definition and per-partition replication state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicEntry {
    /// The authoritative definition.
    pub def: TopicDefinition,
    /// Partition states, by partition id.
    pub partitions: Vec<PartitionState>,
}

/// Replication state of one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionState {
    /// Assigned replicas, preferred leader first.
    pub replicas: Vec<NodeId>,
    /// In-sync replicas.
    pub isr: Vec<NodeId>,
    /// The leader, `None` while no in-sync replica is active.
    pub leader: Option<NodeId>,
    /// Bumped once per leader change.
    pub leader_epoch: u64,
    /// Committed high-water mark: every ISR member holds the records below.
    pub committed_hwm: u64,
    /// Provenance of `committed_hwm` ([`COMMITTED_HWM_VERSION`]).
    pub committed_hwm_version: u32,
    /// Idempotent producers' newest sequences below the committed HWM
    /// (at most [`MAX_PRODUCERS_PER_PARTITION`], the most recent kept): a
    /// new leader takes them over with the partition.
    #[serde(default)]
    pub producers: BTreeMap<String, ProducerSeq>,
    /// While a reassignment (REASSIGN_PARTITIONS) is in progress, the
    /// replica set it moves the partition to; `replicas` then holds the
    /// old replicas and the new ones. `None` otherwise (and in snapshots
    /// from before reassignments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_replicas: Option<Vec<NodeId>>,
}

/// At most this many producers' sequences are kept per partition in the
/// replicated state (the least recently written go first; the replicas'
/// own producer state still holds them).
pub const MAX_PRODUCERS_PER_PARTITION: usize = 1024;

/// An idempotent producer's newest committed sequence in one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProducerSeq {
    /// Producer epoch.
    pub epoch: i64,
    /// Newest sequence number.
    pub last_seq: u64,
    /// Offset of that record.
    pub last_offset: u64,
}

impl PartitionState {
    /// Merges sequences committed with an HWM advance: per producer the
    /// newer `(epoch, seq)` wins; then the oldest writers beyond the cap go.
    fn merge_producers(&mut self, committed: &[(String, ProducerSeq)]) {
        for (id, seq) in committed {
            let newer = self.producers.get(id).map_or(true, |old| {
                (seq.epoch, seq.last_seq) > (old.epoch, old.last_seq)
            });
            if newer {
                self.producers.insert(id.clone(), *seq);
            }
        }
        while self.producers.len() > MAX_PRODUCERS_PER_PARTITION {
            let oldest = self
                .producers
                .iter()
                .min_by_key(|(_, s)| s.last_offset)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(id) => self.producers.remove(&id),
                None => break,
            };
        }
    }
}

/// A change to the cluster state, proposed through Raft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FsmCommand {
    /// Registers or updates a broker (JOIN_CLUSTER); it becomes active.
    RegisterBroker {
        /// Its node id.
        node: NodeId,
        /// Its entry.
        entry: BrokerEntry,
    },
    /// Marks a broker active or inactive (missed heartbeats) and moves
    /// partition leadership accordingly.
    SetBrokerActive {
        /// The broker.
        node: NodeId,
        /// Its new status.
        active: bool,
        /// Proposer's clock, Unix milliseconds.
        now_ms: u64,
    },
    /// Creates or replaces a topic definition (CREATE, ALTER_TOPIC_CONFIG),
    /// compare-and-set on the revision the proposer computed it from.
    PutTopic {
        /// The new definition.
        def: TopicDefinition,
        /// The revision it was computed from (`None`: the topic was absent).
        expected_revision: Option<u64>,
    },
    /// TRUNCATE: empties every partition of a topic, compare-and-set on
    /// the definition revision; bumps the revision, the lifecycle epoch
    /// and every partition's leader epoch (fencing replication of the old
    /// generation) and resets the committed HWMs to 0.
    TruncateTopic {
        /// Its name.
        name: String,
        /// The revision the client saw.
        expected_revision: u64,
    },
    /// Deletes a topic.
    DeleteTopic {
        /// Its name.
        name: String,
    },
    /// Advances a partition's committed high-water mark.
    AdvanceHwm {
        /// Topic.
        topic: String,
        /// Partition.
        partition: u32,
        /// The proposing leader's epoch (fence).
        leader_epoch: u64,
        /// The new committed high-water mark.
        hwm: u64,
        /// Newest sequences of the idempotent producers that wrote below
        /// `hwm` since the previous advance.
        #[serde(default)]
        producers: Vec<(String, ProducerSeq)>,
    },
    /// Replaces a partition's ISR (the leader shrinking or expanding it).
    SetIsr {
        /// Topic.
        topic: String,
        /// Partition.
        partition: u32,
        /// The proposing leader's epoch (fence).
        leader_epoch: u64,
        /// The new ISR (must contain the leader).
        isr: Vec<NodeId>,
    },
    /// A consumer group record (registration, commit, tombstone,
    /// membership), as the group coordinator wrote it.
    GroupRecord {
        /// The record.
        record: RecordBody,
        /// A member's commit or a membership change, proposed by this
        /// coordinator: refused (`NOT_COORDINATOR`) unless it coordinates
        /// the group, and if an offset (`offset_regression`) or the
        /// generation (`GEN_MISMATCH`) goes back. The proposer checked it
        /// against its own copy, which may be older (a coordinator woken
        /// from a pause, or one the group moved away from). `None`:
        /// registrations, tombstones and a committed transaction's offsets
        /// (merged, never backward), and entries from before the fence.
        #[serde(default)]
        fence: Option<NodeId>,
    },
    /// TXN_SYNC: a transactional id's new durable state, as its
    /// coordinator persisted it; refused (`NOT_COORDINATOR`) unless `node`
    /// owns the id's shard at `shard_epoch`.
    TxnSync {
        /// The snapshot.
        snapshot: TxnSnapshot,
        /// The proposing coordinator (0: an entry from before the shards,
        /// applied unfenced as it was then).
        #[serde(default)]
        node: NodeId,
        /// The shard epoch the proposer believes it owns.
        #[serde(default)]
        shard_epoch: u64,
    },
    /// Hands out the next producer number (unique across the cluster).
    AllocateProducerId,
    /// ELECT_LEADER: makes an active in-sync replica the leader.
    ElectLeader {
        /// Topic.
        topic: String,
        /// Partition.
        partition: u32,
        /// The broker to lead.
        target: NodeId,
    },
    /// REASSIGN_PARTITIONS: starts moving a partition to the replica set
    /// `target` (see [`ClusterState::reassign`]). Repeating it while that
    /// move is in progress, or once it is done, changes nothing.
    ReassignPartition {
        /// Topic.
        topic: String,
        /// Partition.
        partition: u32,
        /// The new replica set, preferred leader first.
        target: Vec<NodeId>,
    },
}

/// What applying a command answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FsmReply {
    /// Applied (or a no-op).
    Done,
    /// A leader election's outcome.
    Elected {
        /// The leader before.
        previous: Option<NodeId>,
        /// The leader now.
        leader: NodeId,
        /// Its epoch.
        leader_epoch: u64,
        /// Whether anything changed.
        changed: bool,
    },
    /// A group record was applied; the groups version it produced.
    GroupsVersion(u64),
    /// A TXN_SYNC was applied; the transactions version it produced.
    TxnsVersion(u64),
    /// The producer number handed out.
    ProducerId(u64),
    /// Refused: a typed error for the client.
    Rejected {
        /// The error code (e.g. `leader_election_rejected`).
        code: String,
        /// The error's `reason` field.
        reason: String,
    },
}

fn rejected(code: &str, reason: impl Into<String>) -> FsmReply {
    FsmReply::Rejected {
        code: code.to_string(),
        reason: reason.into(),
    }
}

impl ClusterState {
    /// Applies one committed command.
    pub fn apply(&mut self, cmd: &FsmCommand) -> FsmReply {
        self.version = SNAPSHOT_VERSION;
        match cmd {
            FsmCommand::RegisterBroker { node, entry } => {
                if let Err(refused) = self.fix_shard_count(entry.txn_shards) {
                    return refused;
                }
                let mut entry = entry.clone();
                entry.active = true;
                self.brokers.insert(*node, entry);
                self.broker_came_back(*node);
                self.reassign_shards();
                self.groups_moved_at = self.groups_version;
                FsmReply::Done
            }
            FsmCommand::SetBrokerActive {
                node,
                active,
                now_ms,
            } => {
                let Some(b) = self.brokers.get_mut(node) else {
                    return rejected("broker_not_found", format!("node {node}"));
                };
                if b.active == *active {
                    return FsmReply::Done;
                }
                b.active = *active;
                b.since_ms = *now_ms;
                if *active {
                    self.broker_came_back(*node);
                } else {
                    self.broker_went_away(*node);
                }
                self.reassign_shards();
                self.groups_moved_at = self.groups_version;
                FsmReply::Done
            }
            FsmCommand::PutTopic {
                def,
                expected_revision,
            } => self.put_topic(def, *expected_revision),
            FsmCommand::TruncateTopic {
                name,
                expected_revision,
            } => {
                let Some(t) = self.topics.get_mut(name) else {
                    return rejected("topic_not_found", name.clone());
                };
                if t.def.revision != *expected_revision {
                    // A retry of an applied truncate sees the next revision.
                    return rejected(
                        "topic_revision_conflict",
                        format!("current {} expected {}", t.def.revision, expected_revision),
                    );
                }
                t.def.revision += 1;
                t.def.lifecycle_epoch += 1;
                for p in &mut t.partitions {
                    p.leader_epoch += 1;
                    p.committed_hwm = 0;
                    p.producers.clear();
                }
                FsmReply::Done
            }
            FsmCommand::DeleteTopic { name } => {
                self.topics.remove(name);
                FsmReply::Done
            }
            FsmCommand::AdvanceHwm {
                topic,
                partition,
                leader_epoch,
                hwm,
                producers,
            } => match self.partition_mut(topic, *partition) {
                Some(p) if p.leader_epoch == *leader_epoch => {
                    if *hwm > p.committed_hwm {
                        p.committed_hwm = *hwm;
                    }
                    p.merge_producers(producers);
                    FsmReply::Done
                }
                Some(p) => rejected(
                    "PARTITION_LEADER_FENCED",
                    format!("epoch {} is not {}", leader_epoch, p.leader_epoch),
                ),
                None => rejected("partition_metadata_not_found", topic.clone()),
            },
            FsmCommand::SetIsr {
                topic,
                partition,
                leader_epoch,
                isr,
            } => {
                let active = self.active_brokers();
                let Some(p) = self.partition_mut(topic, *partition) else {
                    return rejected("partition_metadata_not_found", topic.clone());
                };
                if p.leader_epoch != *leader_epoch {
                    return rejected("PARTITION_LEADER_FENCED", "stale leader epoch");
                }
                let leader_kept = p.leader.is_some_and(|l| isr.contains(&l));
                if !leader_kept || !isr.iter().all(|n| p.replicas.contains(n)) {
                    return rejected(
                        "invalid_isr",
                        "the ISR must hold the leader and only replicas",
                    );
                }
                p.isr = p
                    .replicas
                    .iter()
                    .copied()
                    .filter(|n| isr.contains(n))
                    .collect();
                // The last new replica joining completes a reassignment.
                complete_reassignment(p, &active);
                FsmReply::Done
            }
            FsmCommand::ElectLeader {
                topic,
                partition,
                target,
            } => self.elect_leader(topic, *partition, *target),
            FsmCommand::ReassignPartition {
                topic,
                partition,
                target,
            } => self.reassign(topic, *partition, target),
            FsmCommand::GroupRecord { record, fence } => {
                if let Some(refused) = fence.and_then(|node| self.fenced_refusal(node, record)) {
                    return refused;
                }
                self.apply_group_record(record)
            }
            FsmCommand::TxnSync {
                snapshot,
                node,
                shard_epoch,
            } => {
                if *node != 0 {
                    if let Err(refused) =
                        self.check_shard_owner(&snapshot.transactional_id, *node, *shard_epoch)
                    {
                        return refused;
                    }
                }
                self.txns
                    .insert(snapshot.transactional_id.clone(), snapshot.clone());
                self.txns_version += 1;
                FsmReply::TxnsVersion(self.txns_version)
            }
            FsmCommand::AllocateProducerId => {
                // Numbers start at 1, as the standalone journal's do.
                self.next_producer_id = self.next_producer_id.max(1);
                let n = self.next_producer_id;
                self.next_producer_id += 1;
                FsmReply::ProducerId(n)
            }
        }
    }

    /// The first registration that knows its shard count fixes it; a
    /// registration with another count is refused (0: a registration from
    /// before the shards, neither checked nor fixing anything).
    fn fix_shard_count(&mut self, configured: u32) -> Result<(), FsmReply> {
        if configured == 0 {
            return Ok(());
        }
        match &self.txn_shards {
            Some(s) if s.count != configured => Err(rejected(
                shards::MISMATCH,
                format!("configured={configured} cluster={}", s.count),
            )),
            Some(_) => Ok(()),
            None => {
                self.txn_shards = Some(TxnShards::new(configured, &[]));
                Ok(())
            }
        }
    }

    /// Shard owners follow the active brokers (an owner change bumps that
    /// shard's epoch).
    fn reassign_shards(&mut self) {
        let active = self.active_brokers();
        if let Some(s) = self.txn_shards.as_mut() {
            s.reassign(&active);
        }
    }

    /// TXN_SYNC's fence: `node` must own the id's shard at `epoch`.
    fn check_shard_owner(&self, id: &str, node: NodeId, epoch: u64) -> Result<(), FsmReply> {
        let Some(s) = self.txn_shards.as_ref() else {
            return Err(rejected(
                "NOT_COORDINATOR",
                "the transaction coordinator shards are not set up yet",
            ));
        };
        let (i, shard) = s.of(id);
        if shard.owner == Some(node) && shard.epoch == epoch {
            return Ok(());
        }
        Err(rejected(
            "NOT_COORDINATOR",
            format!(
                "shard {i} of {id} is owned by {:?} at epoch {}, not node {node} at epoch {epoch}",
                shard.owner, shard.epoch
            ),
        ))
    }

    /// Why a member's commit or a membership change proposed by `node` is
    /// refused, if it is (see [`FsmCommand::GroupRecord`]).
    fn fenced_refusal(&self, node: NodeId, record: &RecordBody) -> Option<FsmReply> {
        let (group, offsets) = match record {
            RecordBody::Commit { group, offsets } => (group, offsets),
            RecordBody::Membership { group, .. } => (group, &Vec::new()),
            _ => return None,
        };
        if super::groups::coordinator_of(self, group) != Some(node) {
            return Some(rejected(
                "NOT_COORDINATOR",
                format!("broker {node} no longer coordinates group {group}"),
            ));
        }
        if let RecordBody::Membership { generation, .. } = record {
            let current = self
                .groups
                .get(group)
                .and_then(|g| g.membership.as_ref())
                .map_or(0, |m| m.generation);
            // Equal is a repeat (a proposal whose reply was lost).
            return (*generation < current).then(|| {
                rejected(
                    "GEN_MISMATCH",
                    format!("generation {generation} of {group} is below {current}"),
                )
            });
        }
        let committed = self.groups.get(group).map(|g| &g.offsets);
        offsets.iter().find_map(|e| {
            let current = committed?.get(&e.topic)?.get(&e.partition).copied()?;
            (e.offset < current).then(|| {
                rejected(
                    "offset_regression",
                    format!(
                        "offset {} of {}/{} is below the committed offset {current}",
                        e.offset, e.topic, e.partition
                    ),
                )
            })
        })
    }

    /// Applies a group record with the rules of `DurableState::apply`.
    fn apply_group_record(&mut self, record: &RecordBody) -> FsmReply {
        match record {
            RecordBody::Registration {
                group,
                selector,
                expansion,
            } => {
                let entry = self
                    .groups
                    .entry(group.clone())
                    .or_insert_with(|| GroupEntry {
                        selector: selector.clone(),
                        expansion: BTreeMap::new(),
                        offsets: BTreeMap::new(),
                        membership: None,
                    });
                entry.selector = selector.clone();
                entry.expansion = expansion.clone();
            }
            RecordBody::Commit { group, offsets } => {
                let Some(entry) = self.groups.get_mut(group) else {
                    return rejected("group_not_found", format!("group {group}"));
                };
                for e in offsets {
                    let slot = entry
                        .offsets
                        .entry(e.topic.clone())
                        .or_default()
                        .entry(e.partition)
                        .or_insert(0);
                    // Offsets never move backward (the coordinator checked).
                    *slot = (*slot).max(e.offset);
                }
            }
            RecordBody::GroupTombstone { group, .. } => {
                self.groups.remove(group);
            }
            RecordBody::TopicTombstone { group, topic, .. } => {
                if let Some(entry) = self.groups.get_mut(group) {
                    entry.offsets.remove(topic);
                }
            }
            RecordBody::Membership {
                group,
                generation,
                members,
            } => {
                let Some(entry) = self.groups.get_mut(group) else {
                    return rejected("group_not_found", format!("group {group}"));
                };
                entry.membership = Some(Membership {
                    generation: *generation,
                    members: members.clone(),
                });
            }
        }
        self.groups_version += 1;
        FsmReply::GroupsVersion(self.groups_version)
    }

    /// The groups as the coordinator keeps them.
    pub fn durable_groups(&self) -> DurableState {
        let mut durable = DurableState::default();
        for (name, g) in &self.groups {
            durable.groups.insert(
                name.clone(),
                Registration {
                    selector: g.selector.clone(),
                    expansion: g.expansion.clone(),
                },
            );
            for (topic, partitions) in &g.offsets {
                for (p, offset) in partitions {
                    durable
                        .offsets
                        .insert((name.clone(), topic.clone(), *p), *offset);
                }
            }
            if let Some(m) = &g.membership {
                durable.members.insert(name.clone(), m.clone());
            }
        }
        durable
    }

    /// The partition state of `topic`/`partition`.
    pub fn partition(&self, topic: &str, partition: u32) -> Option<&PartitionState> {
        self.topics.get(topic)?.partitions.get(partition as usize)
    }

    fn partition_mut(&mut self, topic: &str, partition: u32) -> Option<&mut PartitionState> {
        self.topics
            .get_mut(topic)?
            .partitions
            .get_mut(partition as usize)
    }

    /// Active brokers, by node id.
    pub fn active_brokers(&self) -> Vec<NodeId> {
        self.brokers
            .iter()
            .filter(|(_, b)| b.active)
            .map(|(n, _)| *n)
            .collect()
    }

    /// The broker id string of `node` (its number if unregistered).
    pub fn broker_name(&self, node: NodeId) -> String {
        self.brokers
            .get(&node)
            .map_or_else(|| node.to_string(), |b| b.broker_id.clone())
    }

    /// The client address of `node` (its TLS one for `tls` when it has
    /// one).
    pub fn client_addr(&self, node: NodeId, tls: bool) -> Option<String> {
        let b = self.brokers.get(&node)?;
        Some(match (&b.tls_client_addr, tls) {
            (Some(t), true) => t.clone(),
            _ => b.client_addr.clone(),
        })
    }

    /// The node registered with broker id `broker_id`.
    pub fn node_of(&self, broker_id: &str) -> Option<NodeId> {
        self.brokers
            .iter()
            .find(|(_, b)| b.broker_id == broker_id)
            .map(|(n, _)| *n)
    }

    fn is_active(&self, node: NodeId) -> bool {
        self.brokers.get(&node).is_some_and(|b| b.active)
    }

    fn put_topic(&mut self, def: &TopicDefinition, expected: Option<u64>) -> FsmReply {
        let current = self.topics.get(&def.name);
        if current.map(|t| t.def.revision) != expected {
            return rejected(
                "topic_definition_conflict",
                "the definition changed meanwhile; retry",
            );
        }
        let existing = current.map_or(0, |t| t.partitions.len());
        let brokers: Vec<NodeId> = self
            .active_brokers()
            .into_iter()
            .filter(|n| self.brokers[n].hosts_replicas)
            .collect();
        let needed = existing < def.partitions as usize;
        if needed && (def.replication_factor as usize) > brokers.len() {
            return rejected(
                "invalid_replication_factor",
                format!(
                    "replication_factor {} exceeds the {} active brokers",
                    def.replication_factor,
                    brokers.len()
                ),
            );
        }
        let mut partitions = current.map(|t| t.partitions.clone()).unwrap_or_default();
        // A topic-dependent start spreads leaders of different topics.
        let start = topic_hash(&def.name) as usize;
        for id in existing..def.partitions as usize {
            let replicas: Vec<NodeId> = (0..def.replication_factor as usize)
                .map(|r| brokers[(start + id + r) % brokers.len()])
                .collect();
            partitions.push(PartitionState {
                leader: replicas.first().copied(),
                isr: replicas.clone(),
                replicas,
                leader_epoch: 1,
                committed_hwm: 0,
                committed_hwm_version: COMMITTED_HWM_VERSION,
                producers: BTreeMap::new(),
                target_replicas: None,
            });
        }
        self.topics.insert(
            def.name.clone(),
            TopicEntry {
                def: def.clone(),
                partitions,
            },
        );
        FsmReply::Done
    }

    fn elect_leader(&mut self, topic: &str, partition: u32, target: NodeId) -> FsmReply {
        let target_active = self.is_active(target);
        let Some(p) = self.partition_mut(topic, partition) else {
            return rejected("partition_not_found", format!("{topic}/{partition}"));
        };
        if p.leader == Some(target) {
            return FsmReply::Elected {
                previous: Some(target),
                leader: target,
                leader_epoch: p.leader_epoch,
                changed: false,
            };
        }
        if !target_active || !p.replicas.contains(&target) || !p.isr.contains(&target) {
            return rejected(
                "leader_election_rejected",
                "the target is not an active in-sync replica",
            );
        }
        let previous = p.leader;
        p.leader = Some(target);
        p.leader_epoch += 1;
        FsmReply::Elected {
            previous,
            leader: target,
            leader_epoch: p.leader_epoch,
            changed: true,
        }
    }

    /// REASSIGN_PARTITIONS: the new replicas are added to the replica set
    /// (the old ones stay), the leader's replicators bring them into the
    /// ISR, and the move completes when the last of them joins
    /// ([`complete_reassignment`]). A second move of the same partition is
    /// refused (`reassignment_in_progress`) until the first is done;
    /// repeating the same one reports its progress (nothing changes).
    fn reassign(&mut self, topic: &str, partition: u32, target: &[NodeId]) -> FsmReply {
        let Some(t) = self.topics.get(topic) else {
            return rejected("topic_not_found", topic.to_string());
        };
        let Some(p) = t.partitions.get(partition as usize) else {
            return rejected("partition_not_found", format!("{topic}/{partition}"));
        };
        match &p.target_replicas {
            Some(current) if current.as_slice() != target => {
                let names: Vec<String> = current.iter().map(|n| self.broker_name(*n)).collect();
                return rejected(
                    "reassignment_in_progress",
                    format!("{topic}/{partition} is moving to {}", names.join(",")),
                );
            }
            Some(_) => return FsmReply::Done,
            None if p.replicas.as_slice() == target => return FsmReply::Done,
            None => {}
        }
        if let Err(refused) = self.check_replica_set(target, t.def.replication_factor) {
            return refused;
        }
        let active = self.active_brokers();
        let Some(p) = self.partition_mut(topic, partition) else {
            return rejected("partition_not_found", format!("{topic}/{partition}"));
        };
        let mut replicas = p.replicas.clone();
        replicas.extend(target.iter().filter(|n| !p.replicas.contains(n)));
        if replicas != p.replicas {
            p.replicas = replicas;
            p.leader_epoch += 1;
        }
        p.target_replicas = Some(target.to_vec());
        // Already in sync (a reordering): done at once.
        complete_reassignment(p, &active);
        FsmReply::Done
    }

    /// A reassignment's target must name `replication_factor` distinct,
    /// registered, active brokers that host replicas.
    fn check_replica_set(
        &self,
        target: &[NodeId],
        replication_factor: u32,
    ) -> Result<(), FsmReply> {
        if target.is_empty() {
            return Err(rejected("invalid_replicas", "the replica list is empty"));
        }
        if let Some(dup) = target
            .iter()
            .enumerate()
            .find(|(i, n)| target[..*i].contains(n))
        {
            return Err(rejected(
                "invalid_replicas",
                format!("broker {} is listed twice", self.broker_name(*dup.1)),
            ));
        }
        if target.len() != replication_factor as usize {
            return Err(rejected(
                "invalid_replication_factor",
                format!(
                    "{} replicas given, the topic's replication_factor is {replication_factor}",
                    target.len()
                ),
            ));
        }
        for n in target {
            let Some(b) = self.brokers.get(n) else {
                return Err(rejected("broker_not_found", format!("node {n}")));
            };
            if !b.active {
                return Err(rejected(
                    "replica_broker_inactive",
                    format!("broker {} is inactive", b.broker_id),
                ));
            }
            if !b.hosts_replicas {
                return Err(rejected(
                    "invalid_replicas",
                    format!("broker {} hosts no replicas", b.broker_id),
                ));
            }
        }
        Ok(())
    }

    /// A broker stopped heartbeating: it leaves every ISR it can leave,
    /// and partitions it led get another active in-sync leader (or none).
    fn broker_went_away(&mut self, node: NodeId) {
        let active: Vec<NodeId> = self.active_brokers();
        for p in self
            .topics
            .values_mut()
            .flat_map(|t| t.partitions.iter_mut())
        {
            if p.isr.len() > 1 && p.isr.contains(&node) {
                p.isr.retain(|n| *n != node);
            }
            if p.leader == Some(node) {
                p.leader = p.isr.iter().copied().find(|n| active.contains(n));
                p.leader_epoch += 1;
            }
        }
    }

    /// A broker is back: partitions left without a leader whose ISR holds
    /// it are led by it again.
    fn broker_came_back(&mut self, node: NodeId) {
        for p in self
            .topics
            .values_mut()
            .flat_map(|t| t.partitions.iter_mut())
        {
            if p.leader.is_none() && p.isr.contains(&node) {
                p.leader = Some(node);
                p.leader_epoch += 1;
            }
        }
    }
}

/// Completes `p`'s reassignment once every target replica is in the ISR:
/// the replicas not in the target are dropped, the leader stays if the
/// target holds it and otherwise moves to the first active target replica,
/// and the leader epoch is bumped once if the replica set or the leader
/// changed (which restarts the leader's replicators and fences the
/// dropped replicas). Nothing happens while a target replica is missing.
fn complete_reassignment(p: &mut PartitionState, active: &[NodeId]) {
    let Some(target) = &p.target_replicas else {
        return;
    };
    if !target.iter().all(|n| p.isr.contains(n)) {
        return;
    }
    let target = target.clone();
    let leader = match p.leader {
        Some(l) if target.contains(&l) => Some(l),
        _ => target.iter().copied().find(|n| active.contains(n)),
    };
    let changed = p.replicas != target || p.leader != leader;
    p.isr = target.clone();
    p.replicas = target;
    p.leader = leader;
    p.target_replicas = None;
    if changed {
        p.leader_epoch += 1;
    }
}

/// FNV-1a of a topic name: a stable placement offset (the same on every
/// node and across versions, unlike `std`'s hasher).
fn topic_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{AuthPolicy, CleanupPolicy, Partitioner};

    fn def(name: &str, partitions: u32, rf: u32, revision: u64) -> TopicDefinition {
        TopicDefinition {
            name: name.into(),
            partitions,
            idempotent: false,
            event_sourcing: false,
            replication_factor: rf,
            min_in_sync_replicas: None,
            cleanup_policy: CleanupPolicy::Delete,
            retention_hours: 0,
            retention_bytes: 0,
            partitioner: Partitioner::HashKey,
            auth_policy: AuthPolicy::Open,
            read_acl: vec![],
            write_acl: vec![],
            revision,
            lifecycle_epoch: 0,
            aggregate_replay: false,
        }
    }

    fn three() -> ClusterState {
        brokers(3)
    }

    /// Brokers 1..=n; broker 4, when there, hosts no replicas.
    fn brokers(n: NodeId) -> ClusterState {
        let mut s = ClusterState::default();
        for n in 1..=n {
            s.apply(&FsmCommand::RegisterBroker {
                node: n,
                entry: BrokerEntry {
                    broker_id: format!("broker-{n}"),
                    cluster_addr: format!("127.0.0.1:710{n}"),
                    client_addr: format!("127.0.0.1:910{n}"),
                    tls_client_addr: None,
                    active: true,
                    lifecycle_protocol: 2,
                    since_ms: 0,
                    hosts_replicas: n != 4,
                    txn_shards: 50,
                },
            });
        }
        s
    }

    fn put(s: &mut ClusterState, d: TopicDefinition, expected: Option<u64>) -> FsmReply {
        s.apply(&FsmCommand::PutTopic {
            def: d,
            expected_revision: expected,
        })
    }

    #[test]
    fn placement_spreads_replicas_and_leaders() {
        let mut s = three();
        assert_eq!(put(&mut s, def("t", 6, 3, 1), None), FsmReply::Done);
        let t = &s.topics["t"];
        let mut leaders = std::collections::BTreeSet::new();
        for p in &t.partitions {
            let mut r = p.replicas.clone();
            r.sort();
            assert_eq!(r, vec![1, 2, 3]);
            assert_eq!(p.isr, p.replicas);
            assert_eq!(p.leader, Some(p.replicas[0]));
            assert_eq!(p.leader_epoch, 1);
            assert_eq!(p.committed_hwm_version, COMMITTED_HWM_VERSION);
            leaders.insert(p.leader.unwrap());
        }
        assert_eq!(leaders.len(), 3, "every broker leads some partition");
    }

    #[test]
    fn put_topic_is_compare_and_set_and_keeps_partition_state() {
        let mut s = three();
        put(&mut s, def("t", 2, 2, 1), None);
        s.apply(&FsmCommand::AdvanceHwm {
            topic: "t".into(),
            partition: 0,
            leader_epoch: 1,
            hwm: 7,
            producers: Vec::new(),
        });
        // A proposer that computed from a stale revision is refused.
        assert!(matches!(
            put(&mut s, def("t", 3, 2, 2), None),
            FsmReply::Rejected { ref code, .. } if code == "topic_definition_conflict"
        ));
        assert_eq!(put(&mut s, def("t", 3, 2, 2), Some(1)), FsmReply::Done);
        let t = &s.topics["t"];
        assert_eq!(t.partitions.len(), 3);
        assert_eq!(t.partitions[0].committed_hwm, 7, "existing state kept");
        assert_eq!(t.def.revision, 2);
    }

    #[test]
    fn brokers_without_replicas_get_none() {
        let mut s = brokers(4);
        assert_eq!(put(&mut s, def("t", 8, 3, 1), None), FsmReply::Done);
        for p in &s.topics["t"].partitions {
            assert!(!p.replicas.contains(&4), "{p:?}");
        }
        assert!(matches!(
            put(&mut s, def("u", 1, 4, 1), None),
            FsmReply::Rejected { ref code, .. } if code == "invalid_replication_factor"
        ));
    }

    #[test]
    fn replication_factor_above_active_brokers_is_refused() {
        let mut s = three();
        assert!(matches!(
            put(&mut s, def("t", 1, 4, 1), None),
            FsmReply::Rejected { ref code, .. } if code == "invalid_replication_factor"
        ));
        assert!(s.topics.is_empty());
    }

    #[test]
    fn hwm_is_fenced_by_epoch_and_monotonic() {
        let mut s = three();
        put(&mut s, def("t", 1, 3, 1), None);
        let adv = |hwm, epoch| FsmCommand::AdvanceHwm {
            topic: "t".into(),
            partition: 0,
            leader_epoch: epoch,
            hwm,
            producers: Vec::new(),
        };
        assert_eq!(s.apply(&adv(5, 1)), FsmReply::Done);
        assert_eq!(s.apply(&adv(3, 1)), FsmReply::Done);
        assert_eq!(s.partition("t", 0).unwrap().committed_hwm, 5);
        assert!(matches!(s.apply(&adv(9, 0)), FsmReply::Rejected { .. }));
        assert_eq!(s.partition("t", 0).unwrap().committed_hwm, 5);
    }

    #[test]
    fn hwm_advances_carry_producer_sequences() {
        let mut s = three();
        put(&mut s, def("t", 1, 3, 1), None);
        let seq = |epoch, last_seq, last_offset| ProducerSeq {
            epoch,
            last_seq,
            last_offset,
        };
        let adv = |hwm, epoch, producers: Vec<(String, ProducerSeq)>| FsmCommand::AdvanceHwm {
            topic: "t".into(),
            partition: 0,
            leader_epoch: epoch,
            hwm,
            producers,
        };
        s.apply(&adv(3, 1, vec![("a".into(), seq(0, 3, 2))]));
        s.apply(&adv(
            5,
            1,
            vec![("b".into(), seq(0, 1, 4)), ("a".into(), seq(0, 2, 1))],
        ));
        let p = s.partition("t", 0).unwrap();
        // Per producer the newer sequence wins, whatever the order.
        assert_eq!(p.producers["a"], seq(0, 3, 2));
        assert_eq!(p.producers["b"], seq(0, 1, 4));
        s.apply(&adv(6, 1, vec![("a".into(), seq(1, 1, 5))]));
        assert_eq!(s.partition("t", 0).unwrap().producers["a"], seq(1, 1, 5));
        // A fenced advance changes nothing.
        assert!(matches!(
            s.apply(&adv(9, 0, vec![("c".into(), seq(0, 1, 8))])),
            FsmReply::Rejected { .. }
        ));
        assert!(!s.partition("t", 0).unwrap().producers.contains_key("c"));
        // Survives a snapshot; TRUNCATE clears it.
        let back: ClusterState = serde_json::from_slice(&serde_json::to_vec(&s).unwrap()).unwrap();
        assert_eq!(back.partition("t", 0).unwrap().producers.len(), 2);
        s.apply(&FsmCommand::TruncateTopic {
            name: "t".into(),
            expected_revision: 1,
        });
        assert!(s.partition("t", 0).unwrap().producers.is_empty());
    }

    #[test]
    fn producer_sequences_are_capped_by_recency() {
        let mut s = three();
        put(&mut s, def("t", 1, 3, 1), None);
        let n = MAX_PRODUCERS_PER_PARTITION as u64 + 10;
        let producers = (0..n)
            .map(|i| {
                let seq = ProducerSeq {
                    epoch: 0,
                    last_seq: 1,
                    last_offset: i,
                };
                (format!("p{i}"), seq)
            })
            .collect();
        s.apply(&FsmCommand::AdvanceHwm {
            topic: "t".into(),
            partition: 0,
            leader_epoch: 1,
            hwm: n,
            producers,
        });
        let kept = &s.partition("t", 0).unwrap().producers;
        assert_eq!(kept.len(), MAX_PRODUCERS_PER_PARTITION);
        assert!(!kept.contains_key("p0") && !kept.contains_key("p9"));
        assert!(kept.contains_key("p10") && kept.contains_key(&format!("p{}", n - 1)));
    }

    #[test]
    fn a_dead_leader_is_replaced_by_an_in_sync_replica_once() {
        let mut s = three();
        put(&mut s, def("t", 1, 3, 1), None);
        let before = s.partition("t", 0).unwrap().clone();
        let old = before.leader.unwrap();
        s.apply(&FsmCommand::SetBrokerActive {
            node: old,
            active: false,
            now_ms: 1,
        });
        let p = s.partition("t", 0).unwrap();
        assert_ne!(p.leader, Some(old));
        assert!(p.isr.contains(&p.leader.unwrap()));
        assert!(!p.isr.contains(&old));
        assert_eq!(p.leader_epoch, before.leader_epoch + 1);
        // Repeating the status change changes nothing.
        let epoch = p.leader_epoch;
        s.apply(&FsmCommand::SetBrokerActive {
            node: old,
            active: false,
            now_ms: 2,
        });
        assert_eq!(s.partition("t", 0).unwrap().leader_epoch, epoch);
    }

    #[test]
    fn the_last_in_sync_replica_stays_and_leads_again_when_back() {
        let mut s = three();
        put(&mut s, def("t", 1, 1, 1), None);
        let only = s.partition("t", 0).unwrap().leader.unwrap();
        s.apply(&FsmCommand::SetBrokerActive {
            node: only,
            active: false,
            now_ms: 1,
        });
        let p = s.partition("t", 0).unwrap();
        assert_eq!(p.leader, None, "no out-of-sync replica is promoted");
        assert_eq!(p.isr, vec![only]);
        s.apply(&FsmCommand::SetBrokerActive {
            node: only,
            active: true,
            now_ms: 2,
        });
        assert_eq!(s.partition("t", 0).unwrap().leader, Some(only));
    }

    #[test]
    fn elect_leader_rules() {
        let mut s = three();
        put(&mut s, def("t", 1, 3, 1), None);
        let p = s.partition("t", 0).unwrap().clone();
        let leader = p.leader.unwrap();
        let other = p.replicas[1];
        let elect = |target| FsmCommand::ElectLeader {
            topic: "t".into(),
            partition: 0,
            target,
        };
        // The current leader: idempotent, nothing changes.
        assert_eq!(
            s.apply(&elect(leader)),
            FsmReply::Elected {
                previous: Some(leader),
                leader,
                leader_epoch: 1,
                changed: false
            }
        );
        assert_eq!(
            s.apply(&elect(other)),
            FsmReply::Elected {
                previous: Some(leader),
                leader: other,
                leader_epoch: 2,
                changed: true
            }
        );
        // A retry is idempotent: the epoch moves once.
        assert!(matches!(
            s.apply(&elect(other)),
            FsmReply::Elected {
                changed: false,
                leader_epoch: 2,
                ..
            }
        ));
        // Out of the ISR: refused.
        let third = p.replicas[2];
        s.apply(&FsmCommand::SetIsr {
            topic: "t".into(),
            partition: 0,
            leader_epoch: 2,
            isr: vec![other, leader],
        });
        assert!(matches!(
            s.apply(&elect(third)),
            FsmReply::Rejected { ref code, .. } if code == "leader_election_rejected"
        ));
        assert!(matches!(s.apply(&elect(99)), FsmReply::Rejected { .. }));
    }

    fn reassign(s: &mut ClusterState, target: Vec<NodeId>) -> FsmReply {
        s.apply(&FsmCommand::ReassignPartition {
            topic: "t".into(),
            partition: 0,
            target,
        })
    }

    fn refused_code(reply: FsmReply) -> String {
        match reply {
            FsmReply::Rejected { code, .. } => code,
            other => panic!("applied: {other:?}"),
        }
    }

    /// Topic `t`, one partition on replicas {1, 2} led by 1, with four
    /// brokers registered (broker 4 hosting replicas).
    fn on_1_and_2() -> ClusterState {
        let mut s = brokers(3);
        register(&mut s, 4, 50);
        put(&mut s, def("t", 1, 2, 1), None);
        let p = s
            .topics
            .get_mut("t")
            .unwrap()
            .partitions
            .get_mut(0)
            .unwrap();
        (p.replicas, p.isr, p.leader) = (vec![1, 2], vec![1, 2], Some(1));
        s
    }

    #[test]
    fn a_reassignment_adds_first_and_drops_once_the_new_replicas_are_in_sync() {
        let mut s = on_1_and_2();
        assert_eq!(reassign(&mut s, vec![3, 4]), FsmReply::Done);
        let p = s.partition("t", 0).unwrap().clone();
        assert_eq!(p.replicas, vec![1, 2, 3, 4], "old and new replicas");
        assert_eq!(p.isr, vec![1, 2], "the new ones are not in sync yet");
        assert_eq!(p.leader, Some(1));
        assert_eq!(p.leader_epoch, 2, "the replica set changed once");
        assert_eq!(p.target_replicas, Some(vec![3, 4]));
        // Repeating it reports progress and changes nothing; another
        // target is refused while it runs.
        assert_eq!(reassign(&mut s, vec![3, 4]), FsmReply::Done);
        assert_eq!(s.partition("t", 0).unwrap(), &p);
        assert_eq!(
            refused_code(reassign(&mut s, vec![2, 3])),
            "reassignment_in_progress"
        );
        let set_isr = |isr: Vec<NodeId>, leader_epoch| FsmCommand::SetIsr {
            topic: "t".into(),
            partition: 0,
            leader_epoch,
            isr,
        };
        // One new replica in sync: nothing is dropped yet.
        assert_eq!(s.apply(&set_isr(vec![1, 2, 3], 2)), FsmReply::Done);
        let p = s.partition("t", 0).unwrap().clone();
        assert_eq!((p.replicas.len(), p.isr.clone()), (4, vec![1, 2, 3]));
        // The last one joins: the old replicas go, the leader moves to the
        // first target replica, the epoch moves once.
        assert_eq!(s.apply(&set_isr(vec![1, 2, 3, 4], 2)), FsmReply::Done);
        let p = s.partition("t", 0).unwrap().clone();
        assert_eq!(p.replicas, vec![3, 4]);
        assert_eq!(p.isr, vec![3, 4]);
        assert_eq!(p.leader, Some(3));
        assert_eq!(p.leader_epoch, 3);
        assert_eq!(p.target_replicas, None);
        // The old leader's ISR changes are fenced now.
        assert_eq!(
            refused_code(s.apply(&set_isr(vec![1, 2], 2))),
            "PARTITION_LEADER_FENCED"
        );
        // Done: repeating it changes nothing; a new move may start.
        assert_eq!(reassign(&mut s, vec![3, 4]), FsmReply::Done);
        assert_eq!(s.partition("t", 0).unwrap(), &p);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<ClusterState>(&json).unwrap(), s);
    }

    #[test]
    fn a_reassignment_keeps_a_leader_the_target_holds() {
        let mut s = on_1_and_2();
        reassign(&mut s, vec![3, 1]);
        let p = s.partition("t", 0).unwrap();
        assert_eq!(p.replicas, vec![1, 2, 3]);
        s.apply(&FsmCommand::SetIsr {
            topic: "t".into(),
            partition: 0,
            leader_epoch: 2,
            isr: vec![1, 2, 3],
        });
        let p = s.partition("t", 0).unwrap();
        assert_eq!(
            (p.replicas.clone(), p.isr.clone()),
            (vec![3, 1], vec![3, 1])
        );
        assert_eq!(p.leader, Some(1), "the leader stays where it is");
        assert_eq!(p.leader_epoch, 3);
    }

    #[test]
    fn a_reordering_is_done_at_once() {
        let mut s = on_1_and_2();
        assert_eq!(reassign(&mut s, vec![2, 1]), FsmReply::Done);
        let p = s.partition("t", 0).unwrap();
        assert_eq!(p.replicas, vec![2, 1]);
        assert_eq!(p.leader, Some(1));
        assert_eq!(p.target_replicas, None);
    }

    #[test]
    fn a_reassignment_refuses_bad_replica_sets_and_changes_nothing() {
        let mut s = brokers(4);
        register(&mut s, 5, 50);
        set_active(&mut s, 5, false);
        put(&mut s, def("t", 1, 2, 1), None);
        let before = s.clone();
        for (target, code) in [
            (vec![], "invalid_replicas"),
            (vec![1, 1], "invalid_replicas"),
            (vec![1, 2, 3], "invalid_replication_factor"),
            (vec![1], "invalid_replication_factor"),
            (vec![1, 9], "broker_not_found"),
            (vec![1, 5], "replica_broker_inactive"),
            (vec![1, 4], "invalid_replicas"),
        ] {
            assert_eq!(
                refused_code(reassign(&mut s, target.clone())),
                code,
                "{target:?}"
            );
            assert_eq!(s, before, "{target:?} changed the state");
        }
        let missing = FsmCommand::ReassignPartition {
            topic: "t".into(),
            partition: 1,
            target: vec![1, 2],
        };
        assert_eq!(refused_code(s.apply(&missing)), "partition_not_found");
        let missing = FsmCommand::ReassignPartition {
            topic: "u".into(),
            partition: 0,
            target: vec![1, 2],
        };
        assert_eq!(refused_code(s.apply(&missing)), "topic_not_found");
    }

    #[test]
    fn snapshots_without_reassignments_still_load() {
        let mut s = on_1_and_2();
        let json = serde_json::to_string(&s).unwrap();
        assert!(!json.contains("target_replicas"), "absent when idle");
        reassign(&mut s, vec![3, 4]);
        let back: ClusterState = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn isr_changes_are_fenced_and_keep_the_leader() {
        let mut s = three();
        put(&mut s, def("t", 1, 3, 1), None);
        let p = s.partition("t", 0).unwrap().clone();
        let leader = p.leader.unwrap();
        let set = |isr: Vec<NodeId>, epoch| FsmCommand::SetIsr {
            topic: "t".into(),
            partition: 0,
            leader_epoch: epoch,
            isr,
        };
        assert!(matches!(
            s.apply(&set(vec![p.replicas[1]], 1)),
            FsmReply::Rejected { .. }
        ));
        assert!(matches!(
            s.apply(&set(vec![leader], 0)),
            FsmReply::Rejected { .. }
        ));
        assert_eq!(s.apply(&set(vec![leader], 1)), FsmReply::Done);
        assert_eq!(s.partition("t", 0).unwrap().isr, vec![leader]);
    }

    #[test]
    fn group_records_replicate_registrations_and_monotonic_offsets() {
        use crate::groups::records::OffsetEntry;
        let mut s = three();
        let commit = |offset| FsmCommand::GroupRecord {
            record: RecordBody::Commit {
                group: "g".into(),
                offsets: vec![OffsetEntry {
                    topic: "t".into(),
                    partition: 1,
                    offset,
                }],
            },
            fence: None,
        };
        assert!(matches!(s.apply(&commit(5)), FsmReply::Rejected { .. }));
        s.apply(&FsmCommand::GroupRecord {
            record: RecordBody::Registration {
                group: "g".into(),
                selector: Selector::Topics(vec!["t".into()]),
                expansion: [("t".to_string(), 2)].into(),
            },
            fence: None,
        });
        s.apply(&commit(5));
        s.apply(&commit(3));
        let d = s.durable_groups();
        assert_eq!(d.offsets[&("g".into(), "t".into(), 1)], 5);
        assert!(d.groups.contains_key("g"));
        let v = s.groups_version;
        s.apply(&FsmCommand::GroupRecord {
            record: RecordBody::GroupTombstone {
                group: "g".into(),
                reason: "test".into(),
            },
            fence: None,
        });
        assert!(s.durable_groups().groups.is_empty());
        assert!(s.groups_version > v);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<ClusterState>(&json).unwrap(), s);
    }

    #[test]
    fn membership_is_fenced_replicated_and_survives_snapshots() {
        use crate::groups::assignment::TopicPartition;
        let mut s = three();
        let membership = |generation, fence| FsmCommand::GroupRecord {
            record: RecordBody::Membership {
                group: "g".into(),
                generation,
                members: [(
                    format!("m-{generation}"),
                    vec![TopicPartition {
                        topic: "t".into(),
                        partition: 0,
                    }],
                )]
                .into(),
            },
            fence: Some(fence),
        };
        let refused = |r: FsmReply| match r {
            FsmReply::Rejected { code, .. } => code,
            other => panic!("applied: {other:?}"),
        };
        let coordinator = super::super::groups::coordinator_of(&s, "g").unwrap();
        let other = [1, 2, 3].into_iter().find(|n| *n != coordinator).unwrap();
        // Of an unregistered group: refused.
        assert_eq!(
            refused(s.apply(&membership(1, coordinator))),
            "group_not_found"
        );
        s.apply(&FsmCommand::GroupRecord {
            record: RecordBody::Registration {
                group: "g".into(),
                selector: Selector::Topic("t".into()),
                expansion: [("t".to_string(), 1)].into(),
            },
            fence: None,
        });
        assert!(matches!(
            s.apply(&membership(3, coordinator)),
            FsmReply::GroupsVersion(_)
        ));
        let d = s.durable_groups();
        assert_eq!(d.members["g"].generation, 3);
        assert!(d.members["g"].members.contains_key("m-3"));
        // A broker the group moved away from, and a generation going back.
        assert_eq!(refused(s.apply(&membership(4, other))), "NOT_COORDINATOR");
        assert_eq!(
            refused(s.apply(&membership(2, coordinator))),
            "GEN_MISMATCH"
        );
        // A repeat of the same generation is applied (a lost reply).
        assert!(matches!(
            s.apply(&membership(3, coordinator)),
            FsmReply::GroupsVersion(_)
        ));
        // Snapshots carry it; older snapshots without it still load.
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            serde_json::from_value::<ClusterState>(json.clone()).unwrap(),
            s
        );
        let mut old = json;
        old["groups"]["g"]
            .as_object_mut()
            .unwrap()
            .remove("membership");
        let back: ClusterState = serde_json::from_value(old).unwrap();
        assert_eq!(back.groups["g"].membership, None);
        assert!(back.durable_groups().members.is_empty());
        // A tombstone drops it with the group.
        s.apply(&FsmCommand::GroupRecord {
            record: RecordBody::GroupTombstone {
                group: "g".into(),
                reason: "topic_deleted".into(),
            },
            fence: None,
        });
        assert!(s.durable_groups().members.is_empty());
    }

    #[test]
    fn member_commits_are_fenced_by_the_coordinator_and_never_go_back() {
        use crate::groups::records::OffsetEntry;
        let mut s = three();
        s.apply(&FsmCommand::GroupRecord {
            record: RecordBody::Registration {
                group: "g".into(),
                selector: Selector::Topics(vec!["t".into()]),
                expansion: [("t".to_string(), 1)].into(),
            },
            fence: None,
        });
        let coordinator = super::super::groups::coordinator_of(&s, "g").unwrap();
        let other = [1, 2, 3].into_iter().find(|n| *n != coordinator).unwrap();
        let commit = |offset, fence| FsmCommand::GroupRecord {
            record: RecordBody::Commit {
                group: "g".into(),
                offsets: vec![OffsetEntry {
                    topic: "t".into(),
                    partition: 0,
                    offset,
                }],
            },
            fence: Some(fence),
        };
        let refused = |reply: FsmReply| match reply {
            FsmReply::Rejected { code, .. } => code,
            other => panic!("applied: {other:?}"),
        };
        assert!(matches!(
            s.apply(&commit(5, coordinator)),
            FsmReply::GroupsVersion(_)
        ));
        // A broker the group moved away from (its copy still names it).
        assert_eq!(refused(s.apply(&commit(7, other))), "NOT_COORDINATOR");
        // The coordinator checked a member's commit against an older copy.
        let v = s.groups_version;
        assert_eq!(
            refused(s.apply(&commit(3, coordinator))),
            "offset_regression"
        );
        assert_eq!(s.groups_version, v, "a refused commit changes nothing");
        assert_eq!(s.durable_groups().offsets[&("g".into(), "t".into(), 0)], 5);
        // An entry from before the fence deserializes unfenced.
        let mut old = serde_json::to_value(commit(9, coordinator)).unwrap();
        old["GroupRecord"].as_object_mut().unwrap().remove("fence");
        let cmd: FsmCommand = serde_json::from_value(old).unwrap();
        assert!(matches!(cmd, FsmCommand::GroupRecord { fence: None, .. }));
        // A broker going away may move the group: coordinators wait for
        // every group record before it.
        assert!(s.groups_moved_at < s.groups_version);
        s.apply(&FsmCommand::SetBrokerActive {
            node: coordinator,
            active: false,
            now_ms: 1,
        });
        assert_eq!(s.groups_moved_at, s.groups_version);
    }

    #[test]
    fn truncate_resets_hwms_and_fences_epochs_once() {
        let mut s = three();
        put(&mut s, def("t", 2, 3, 1), None);
        s.apply(&FsmCommand::AdvanceHwm {
            topic: "t".into(),
            partition: 0,
            leader_epoch: 1,
            hwm: 9,
            producers: Vec::new(),
        });
        let cmd = FsmCommand::TruncateTopic {
            name: "t".into(),
            expected_revision: 1,
        };
        assert_eq!(s.apply(&cmd), FsmReply::Done);
        let t = &s.topics["t"];
        assert_eq!((t.def.revision, t.def.lifecycle_epoch), (2, 1));
        assert!(t
            .partitions
            .iter()
            .all(|p| p.committed_hwm == 0 && p.leader_epoch == 2));
        assert!(matches!(s.apply(&cmd), FsmReply::Rejected { .. }));
        assert_eq!(s.topics["t"].partitions[0].leader_epoch, 2);
    }

    #[test]
    fn producer_ids_are_unique_and_txn_state_is_kept() {
        let mut s = three();
        let a = s.apply(&FsmCommand::AllocateProducerId);
        let b = s.apply(&FsmCommand::AllocateProducerId);
        assert_eq!((a, b), (FsmReply::ProducerId(1), FsmReply::ProducerId(2)));
        let snap = TxnSnapshot::new("tx", "txn-1".into(), 5);
        let (owner, epoch) = shards::owner(&s, "tx").unwrap();
        assert_eq!(
            s.apply(&FsmCommand::TxnSync {
                snapshot: snap.clone(),
                node: owner,
                shard_epoch: epoch,
            }),
            FsmReply::TxnsVersion(1)
        );
        assert_eq!(s.txns["tx"], snap);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<ClusterState>(&json).unwrap(), s);
    }

    #[test]
    fn snapshot_round_trips_as_json() {
        let mut s = three();
        put(&mut s, def("t", 2, 3, 1), None);
        let json = serde_json::to_string(&s).unwrap();
        let back: ClusterState = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.version, SNAPSHOT_VERSION);
    }

    fn register(s: &mut ClusterState, node: NodeId, txn_shards: u32) -> FsmReply {
        s.apply(&FsmCommand::RegisterBroker {
            node,
            entry: BrokerEntry {
                broker_id: format!("broker-{node}"),
                cluster_addr: format!("127.0.0.1:710{node}"),
                client_addr: format!("127.0.0.1:910{node}"),
                tls_client_addr: None,
                active: true,
                lifecycle_protocol: 2,
                since_ms: 0,
                hosts_replicas: true,
                txn_shards,
            },
        })
    }

    fn set_active(s: &mut ClusterState, node: NodeId, active: bool) {
        s.apply(&FsmCommand::SetBrokerActive {
            node,
            active,
            now_ms: 1,
        });
    }

    #[test]
    fn the_first_registration_fixes_the_shard_count_and_others_must_match() {
        let mut s = ClusterState::default();
        // A registration from before the shards neither fixes nor checks.
        assert_eq!(register(&mut s, 9, 0), FsmReply::Done);
        assert_eq!(s.txn_shards, None);
        assert_eq!(register(&mut s, 1, 8), FsmReply::Done);
        assert_eq!(s.txn_shards.as_ref().unwrap().count, 8);
        assert_eq!(register(&mut s, 2, 8), FsmReply::Done);
        let before = s.clone();
        match register(&mut s, 3, 7) {
            FsmReply::Rejected { code, reason } => {
                assert_eq!(code, shards::MISMATCH);
                assert_eq!(reason, "configured=7 cluster=8");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(s, before, "a refused registration changes nothing");
        assert!(!s.brokers.contains_key(&3));
        assert_eq!(register(&mut s, 3, 8), FsmReply::Done);
    }

    #[test]
    fn shard_owners_are_active_brokers_and_epochs_move_only_with_owners() {
        let mut s = three();
        let shards = |s: &ClusterState| s.txn_shards.clone().unwrap();
        let all = shards(&s);
        assert_eq!(all.count, 50);
        // Deterministic: the same registrations give the same owners.
        assert_eq!(shards(&three()), all);
        for (i, sh) in all.shards.iter().enumerate() {
            assert_eq!(sh.owner, shards::owner_among(i as u32, &[1, 2, 3]));
        }
        // A re-registration of an active broker moves nothing.
        register(&mut s, 2, 50);
        assert_eq!(shards(&s), all);
        set_active(&mut s, 2, false);
        let without_2 = shards(&s);
        for (b, a) in all.shards.iter().zip(&without_2.shards) {
            assert_ne!(a.owner, Some(2), "only active brokers own shards");
            let moved = b.owner != a.owner;
            assert_eq!(a.epoch, b.epoch + u64::from(moved));
            assert_eq!(moved, b.owner == Some(2));
        }
        // Repeating the status changes nothing; coming back moves them again.
        set_active(&mut s, 2, false);
        assert_eq!(shards(&s), without_2);
        set_active(&mut s, 2, true);
        let back = shards(&s);
        for ((b, w), a) in all.shards.iter().zip(&without_2.shards).zip(&back.shards) {
            assert_eq!(a.owner, b.owner);
            assert_eq!(a.epoch, w.epoch + u64::from(a.owner != w.owner));
        }
        // Every broker inactive: no owner, every epoch bumped once more.
        for n in 1..=3 {
            set_active(&mut s, n, false);
        }
        assert!(shards(&s).shards.iter().all(|sh| sh.owner.is_none()));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<ClusterState>(&json).unwrap(), s);
    }

    #[test]
    fn txn_sync_is_fenced_by_shard_owner_and_epoch() {
        let mut s = three();
        let (owner, epoch) = shards::owner(&s, "tx").unwrap();
        let other = (1..=3).find(|n| *n != owner).unwrap();
        let sync = |node, shard_epoch| FsmCommand::TxnSync {
            snapshot: TxnSnapshot::new("tx", "txn-1".into(), 5),
            node,
            shard_epoch,
        };
        let not_coordinator = |r: FsmReply| matches!(r, FsmReply::Rejected { ref code, .. } if code == "NOT_COORDINATOR");
        assert!(not_coordinator(s.apply(&sync(other, epoch))));
        assert!(not_coordinator(s.apply(&sync(owner, epoch + 1))));
        assert!(s.txns.is_empty());
        assert_eq!(s.apply(&sync(owner, epoch)), FsmReply::TxnsVersion(1));
        // The owner goes away: its epoch is stale, the new owner's is not.
        set_active(&mut s, owner, false);
        let (new_owner, new_epoch) = shards::owner(&s, "tx").unwrap();
        assert_ne!(new_owner, owner);
        assert_eq!(new_epoch, epoch + 1);
        assert!(not_coordinator(s.apply(&sync(owner, epoch))));
        // Even back as owner, the old epoch stays fenced.
        set_active(&mut s, owner, true);
        assert_eq!(shards::owner(&s, "tx").unwrap(), (owner, epoch + 2));
        assert!(not_coordinator(s.apply(&sync(owner, epoch))));
        assert_eq!(s.apply(&sync(owner, epoch + 2)), FsmReply::TxnsVersion(2));
        // Entries from before the shards (node 0) apply as they did.
        assert_eq!(s.apply(&sync(0, 0)), FsmReply::TxnsVersion(3));
    }

    #[test]
    fn snapshots_without_shards_still_load() {
        let mut s = three();
        s.txn_shards = None;
        let mut json: serde_json::Value = serde_json::to_value(&s).unwrap();
        json.as_object_mut().unwrap().remove("txn_shards");
        for b in json["brokers"].as_object_mut().unwrap().values_mut() {
            b.as_object_mut().unwrap().remove("txn_shards");
        }
        let back: ClusterState = serde_json::from_value(json).unwrap();
        assert_eq!(back.txn_shards, None);
        assert!(back.brokers.values().all(|b| b.txn_shards == 0));
        // An old TXN_SYNC log entry decodes as unfenced (node 0).
        let snapshot = TxnSnapshot::new("tx", "txn-1".into(), 5);
        let mut old = serde_json::to_value(FsmCommand::TxnSync {
            snapshot: snapshot.clone(),
            node: 1,
            shard_epoch: 1,
        })
        .unwrap();
        let fields = old["TxnSync"].as_object_mut().unwrap();
        fields.remove("node");
        fields.remove("shard_epoch");
        assert_eq!(
            serde_json::from_value::<FsmCommand>(old).unwrap(),
            FsmCommand::TxnSync {
                snapshot,
                node: 0,
                shard_epoch: 0
            }
        );
    }
}
