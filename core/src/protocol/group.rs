//! Consumer-group coordination replies: JOIN_GROUP, SYNC_GROUP, HEARTBEAT,
//! FETCH_OFFSET, COMMIT_OFFSET and BATCH_COMMIT (spec §4 and §6).

use super::reply::OkReply;
use crate::error::{Error, Result};
use std::fmt;

/// A topic partition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    /// Topic.
    pub topic: String,
    /// Partition id.
    pub partition: u32,
}

impl TopicPartition {
    /// Builds one.
    pub fn new(topic: impl Into<String>, partition: u32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.topic, self.partition)
    }
}

/// Membership granted by JOIN_GROUP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    /// The member id with the broker's suffix.
    pub member_id: String,
    /// Generation.
    pub generation: u64,
    /// Assigned partitions.
    pub assignments: Vec<TopicPartition>,
}

/// Reads `assignments=[0,1]` (for `topic`) or `topic_assignments=t:P0,u:P1`.
pub fn parse_assignments(r: &OkReply, topic: Option<&str>) -> Result<Vec<TopicPartition>> {
    if let Some(raw) = r.get("topic_assignments") {
        return raw
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|item| {
                let (t, p) = item
                    .rsplit_once(':')
                    .ok_or_else(|| Error::protocol(format!("bad topic assignment {item:?}")))?;
                let p = p
                    .strip_prefix('P')
                    .and_then(|p| p.parse().ok())
                    .ok_or_else(|| Error::protocol(format!("bad topic assignment {item:?}")))?;
                Ok(TopicPartition::new(t, p))
            })
            .collect();
    }
    let raw = r.get("assignments").unwrap_or("[]");
    let inner = raw
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .ok_or_else(|| Error::protocol(format!("bad assignments {raw:?}")))?;
    let topic = match topic {
        Some(t) => t,
        None if inner.trim().is_empty() => return Ok(Vec::new()),
        None => return Err(Error::protocol("single-topic assignments without a topic")),
    };
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|p| {
            p.parse()
                .map(|p| TopicPartition::new(topic, p))
                .map_err(|_| Error::protocol(format!("bad partition {p:?} in assignments")))
        })
        .collect()
}

/// Parses a JOIN_GROUP reply.
pub fn parse_join(r: &OkReply, topic: Option<&str>) -> Result<Membership> {
    Ok(Membership {
        member_id: r.require("member")?.to_owned(),
        generation: r.parse_field("generation")?,
        assignments: parse_assignments(r, topic)?,
    })
}

/// Renders `P0:10,P3:7` for BATCH_COMMIT.
pub fn batch_offsets(offsets: &[(u32, u64)]) -> String {
    offsets
        .iter()
        .map(|(p, o)| format!("P{p}:{o}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_assignment_forms() {
        let r = OkReply::parse(b"OK generation=3 member=c-1234 assignments=[0,2]").unwrap();
        let m = parse_join(&r, Some("t")).unwrap();
        assert_eq!(m.generation, 3);
        assert_eq!(
            m.assignments,
            vec![TopicPartition::new("t", 0), TopicPartition::new("t", 2)]
        );
        let r =
            OkReply::parse(b"OK generation=1 member=c-1 topic_assignments=a:P0,b.c:P3").unwrap();
        let m = parse_join(&r, None).unwrap();
        assert_eq!(
            m.assignments,
            vec![TopicPartition::new("a", 0), TopicPartition::new("b.c", 3)]
        );
        let r = OkReply::parse(b"OK generation=1 member=c-1 assignments=[]").unwrap();
        assert!(parse_join(&r, Some("t")).unwrap().assignments.is_empty());
    }

    #[test]
    fn renders_batch_offsets() {
        assert_eq!(batch_offsets(&[(0, 100), (2, 7)]), "P0:100,P2:7");
    }
}
