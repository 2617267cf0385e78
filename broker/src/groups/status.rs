//! GROUP_STATUS: the JSON document describing a group.

use serde::Serialize;

use super::member_id::rfc3339;
use super::membership::LiveGroup;
use super::records::Registration;

/// One member in GROUP_STATUS.
#[derive(Debug, Clone, Serialize)]
pub struct MemberStatus {
    /// Member id.
    pub member_id: String,
    /// Last heartbeat, RFC 3339 UTC.
    pub last_heartbeat: String,
    /// Assigned partition numbers (of every topic).
    pub assignments: Vec<u32>,
    /// Assigned partitions as `<topic>:P<n>`.
    pub topic_assignments: Vec<String>,
}

/// GROUP_STATUS's JSON document.
#[derive(Debug, Clone, Serialize)]
pub struct GroupStatus {
    /// Always `OK`.
    pub status: &'static str,
    /// Group name.
    pub group_name: String,
    /// The subscribed topics, comma-separated (the one topic of a
    /// single-topic group).
    pub topic_name: String,
    /// `Stable` with members, `Empty` without.
    pub state: &'static str,
    /// Current generation.
    pub generation: u64,
    /// Active members.
    pub member_count: usize,
    /// Subscribed partitions across topics.
    pub partition_count: u64,
    /// Members, sorted by id.
    pub members: Vec<MemberStatus>,
    /// Time of the last rebalance, RFC 3339 UTC.
    pub last_rebalance: String,
    /// Selector kind: `topic`, `topics` or `pattern`.
    pub selector: &'static str,
    /// Selector value as registered.
    pub selector_value: String,
    /// The concrete subscribed topics.
    pub topics: Vec<String>,
}

impl GroupStatus {
    /// The status of `group` from its registration and membership.
    pub fn new(group: &str, reg: &Registration, live: &LiveGroup) -> GroupStatus {
        let topics: Vec<String> = reg.expansion.keys().cloned().collect();
        GroupStatus {
            status: "OK",
            group_name: group.to_owned(),
            topic_name: match reg.selector.single_topic() {
                Some(t) => t.to_owned(),
                None => topics.join(","),
            },
            state: if live.members.is_empty() {
                "Empty"
            } else {
                "Stable"
            },
            generation: live.generation,
            member_count: live.members.len(),
            partition_count: reg.expansion.values().map(|&n| u64::from(n)).sum(),
            members: live
                .members
                .iter()
                .map(|(id, m)| MemberStatus {
                    member_id: id.clone(),
                    last_heartbeat: rfc3339(m.last_seen_wall),
                    assignments: m.assignments.iter().map(|tp| tp.partition).collect(),
                    topic_assignments: m.assignments.iter().map(|tp| tp.to_string()).collect(),
                })
                .collect(),
            last_rebalance: rfc3339(live.last_rebalance),
            selector: reg.selector.kind(),
            selector_value: reg.selector.value(),
            topics,
        }
    }
}
