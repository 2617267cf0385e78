//! The versioned records of the internal `__consumer_offsets` topic and the
//! durable coordinator state they replay into.
//!
//! Each record is one JSON object with `"version": 1` and a `"type"`:
//!
//! * `registration` — a group's selector and its concrete expansion
//!   (topic → partition count); replaces any earlier registration;
//! * `commit` — committed next offsets of one group (one COMMIT_OFFSET or a
//!   whole BATCH_COMMIT, so a batch is atomic on disk too);
//! * `group_tombstone` — the group and all its offsets are gone;
//! * `topic_tombstone` — the group's offsets for one topic are gone;
//! * `membership` — distributed mode only: a group's generation, members
//!   and their assignments after a membership change (join, leave, expiry,
//!   rebalance), so that a new coordinator continues with them. Standalone
//!   brokers never write it (their members rejoin after a restart).
//!
//! A record without a version, with another version, or that does not fit
//! the current state (a commit for an unknown group, an offset moving
//! backward) is a replay failure: the broker stays not ready rather than
//! start with a wrong coordinator.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::assignment::TopicPartition;
use super::selector::Selector;

/// The record format version this broker writes and accepts.
pub const RECORD_VERSION: u64 = 1;

/// One committed next offset inside a `commit` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetEntry {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Next offset to read.
    pub offset: u64,
}

/// The body of a `__consumer_offsets` record (without its version).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordBody {
    /// A group registration with its expansion.
    Registration {
        /// Group name.
        group: String,
        /// What the group subscribes to.
        selector: Selector,
        /// Topic to partition count, for every selected topic.
        expansion: BTreeMap<String, u32>,
    },
    /// Committed offsets of one group.
    Commit {
        /// Group name.
        group: String,
        /// The new offsets.
        offsets: Vec<OffsetEntry>,
    },
    /// Removes a group and its offsets.
    GroupTombstone {
        /// Group name.
        group: String,
        /// Why (e.g. `topic_deleted`).
        reason: String,
    },
    /// Removes a group's offsets of one topic.
    TopicTombstone {
        /// Group name.
        group: String,
        /// The topic whose offsets are removed.
        topic: String,
        /// Why (e.g. `topic_truncated`).
        reason: String,
    },
    /// A group's membership after a change (distributed mode).
    Membership {
        /// Group name.
        group: String,
        /// The generation the members were told.
        generation: u64,
        /// Every member and its assignment in that generation.
        members: BTreeMap<String, Vec<TopicPartition>>,
    },
}

impl RecordBody {
    /// Encodes the record as versioned JSON.
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        let mut value = serde_json::to_value(self).map_err(|e| e.to_string())?;
        let object = value
            .as_object_mut()
            .ok_or_else(|| "record is not a JSON object".to_owned())?;
        object.insert("version".into(), RECORD_VERSION.into());
        serde_json::to_vec(&value).map_err(|e| e.to_string())
    }

    /// Decodes a record, requiring `"version": 1`.
    pub fn decode(bytes: &[u8]) -> Result<RecordBody, String> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| format!("not a JSON record: {e}"))?;
        let Some(object) = value.as_object() else {
            return Err("record is not a JSON object".into());
        };
        match object.get("version") {
            None => return Err("unversioned record".into()),
            Some(v) if v.as_u64() == Some(RECORD_VERSION) => {}
            Some(v) => return Err(format!("unsupported record version {v}")),
        }
        serde_json::from_value(value).map_err(|e| format!("unsupported record shape: {e}"))
    }
}

/// A durable group registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// What the group subscribes to.
    pub selector: Selector,
    /// Topic to partition count.
    pub expansion: BTreeMap<String, u32>,
}

/// A group's replicated membership (distributed mode).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Membership {
    /// The generation the members were told.
    pub generation: u64,
    /// Member id to its assignment in that generation.
    pub members: BTreeMap<String, Vec<TopicPartition>>,
}

/// What the records describe: registrations, committed offsets and (in
/// distributed mode) membership.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DurableState {
    /// Registered groups.
    pub groups: BTreeMap<String, Registration>,
    /// Committed next offsets by (group, topic, partition).
    pub offsets: BTreeMap<(String, String, u32), u64>,
    /// The last replicated membership of each group that has one.
    pub members: BTreeMap<String, Membership>,
}

impl DurableState {
    /// Applies one record; an inconsistent record is an error.
    pub fn apply(&mut self, record: &RecordBody) -> Result<(), String> {
        match record {
            RecordBody::Registration {
                group,
                selector,
                expansion,
            } => {
                self.groups.insert(
                    group.clone(),
                    Registration {
                        selector: selector.clone(),
                        expansion: expansion.clone(),
                    },
                );
            }
            RecordBody::Commit { group, offsets } => {
                if !self.groups.contains_key(group) {
                    return Err(format!("commit for unregistered group {group:?}"));
                }
                for e in offsets {
                    let key = (group.clone(), e.topic.clone(), e.partition);
                    let current = self.offsets.get(&key).copied().unwrap_or(0);
                    if e.offset < current {
                        return Err(format!(
                            "offset of group {group:?} on {}/{} moves backward from {current} to {}",
                            e.topic, e.partition, e.offset
                        ));
                    }
                    self.offsets.insert(key, e.offset);
                }
            }
            RecordBody::GroupTombstone { group, .. } => {
                if self.groups.remove(group).is_none() {
                    return Err(format!("tombstone for unregistered group {group:?}"));
                }
                self.offsets.retain(|(g, _, _), _| g != group);
                self.members.remove(group);
            }
            RecordBody::TopicTombstone { group, topic, .. } => {
                if !self.groups.contains_key(group) {
                    return Err(format!("topic tombstone for unregistered group {group:?}"));
                }
                self.offsets
                    .retain(|(g, t, _), _| !(g == group && t == topic));
            }
            RecordBody::Membership {
                group,
                generation,
                members,
            } => {
                if !self.groups.contains_key(group) {
                    return Err(format!("membership of unregistered group {group:?}"));
                }
                self.members.insert(
                    group.clone(),
                    Membership {
                        generation: *generation,
                        members: members.clone(),
                    },
                );
            }
        }
        Ok(())
    }

    /// The smallest record set that rebuilds this state (compaction): one
    /// registration per group, then one commit per group with offsets, then
    /// one membership per group with one.
    pub fn snapshot(&self) -> Vec<RecordBody> {
        let mut out: Vec<RecordBody> = self
            .groups
            .iter()
            .map(|(group, r)| RecordBody::Registration {
                group: group.clone(),
                selector: r.selector.clone(),
                expansion: r.expansion.clone(),
            })
            .collect();
        let mut commits: BTreeMap<&str, Vec<OffsetEntry>> = BTreeMap::new();
        for ((group, topic, partition), offset) in &self.offsets {
            commits.entry(group).or_default().push(OffsetEntry {
                topic: topic.clone(),
                partition: *partition,
                offset: *offset,
            });
        }
        out.extend(
            commits
                .into_iter()
                .map(|(group, offsets)| RecordBody::Commit {
                    group: group.to_owned(),
                    offsets,
                }),
        );
        out.extend(
            self.members
                .iter()
                .map(|(group, m)| RecordBody::Membership {
                    group: group.clone(),
                    generation: m.generation,
                    members: m.members.clone(),
                }),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registration(group: &str) -> RecordBody {
        RecordBody::Registration {
            group: group.into(),
            selector: Selector::Topic("t".into()),
            expansion: [("t".to_owned(), 2)].into_iter().collect(),
        }
    }

    fn commit(group: &str, partition: u32, offset: u64) -> RecordBody {
        RecordBody::Commit {
            group: group.into(),
            offsets: vec![OffsetEntry {
                topic: "t".into(),
                partition,
                offset,
            }],
        }
    }

    #[test]
    fn records_round_trip_with_a_version() {
        for r in [
            registration("g"),
            commit("g", 1, 9),
            RecordBody::GroupTombstone {
                group: "g".into(),
                reason: "topic_deleted".into(),
            },
        ] {
            let bytes = r.encode().unwrap();
            let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(json["version"], 1);
            assert_eq!(RecordBody::decode(&bytes).unwrap(), r);
        }
    }

    #[test]
    fn unversioned_or_unknown_records_are_rejected() {
        let e = RecordBody::decode(br#"{"type":"commit","group":"g","offsets":[]}"#).unwrap_err();
        assert!(e.contains("unversioned"), "{e}");
        assert!(RecordBody::decode(br#"{"version":2,"type":"commit"}"#).is_err());
        assert!(RecordBody::decode(br#"{"version":1,"type":"frob"}"#).is_err());
        assert!(RecordBody::decode(b"\x00garbage").is_err());
    }

    #[test]
    fn replay_rejects_inconsistency_and_snapshot_rebuilds_state() {
        let mut s = DurableState::default();
        assert!(s.apply(&commit("g", 0, 1)).is_err());
        s.apply(&registration("g")).unwrap();
        s.apply(&commit("g", 0, 5)).unwrap();
        s.apply(&commit("g", 1, 7)).unwrap();
        assert!(s.apply(&commit("g", 0, 4)).is_err());
        s.apply(&registration("h")).unwrap();
        s.apply(&commit("h", 0, 3)).unwrap();
        let membership = |group: &str| RecordBody::Membership {
            group: group.into(),
            generation: 4,
            members: [(
                "m-0001".to_owned(),
                vec![TopicPartition {
                    topic: "t".into(),
                    partition: 0,
                }],
            )]
            .into_iter()
            .collect(),
        };
        assert!(s.apply(&membership("nope")).is_err());
        s.apply(&membership("h")).unwrap();
        let bytes = membership("h").encode().unwrap();
        assert_eq!(RecordBody::decode(&bytes).unwrap(), membership("h"));
        let mut rebuilt = DurableState::default();
        for r in s.snapshot() {
            rebuilt.apply(&r).unwrap();
        }
        assert_eq!(rebuilt, s);
        s.apply(&RecordBody::TopicTombstone {
            group: "g".into(),
            topic: "t".into(),
            reason: "x".into(),
        })
        .unwrap();
        assert_eq!(s.offsets.len(), 1);
        s.apply(&RecordBody::GroupTombstone {
            group: "h".into(),
            reason: "x".into(),
        })
        .unwrap();
        assert!(s.offsets.is_empty());
        assert!(s.members.is_empty(), "a tombstone removes the membership");
        assert_eq!(s.groups.len(), 1);
    }
}
