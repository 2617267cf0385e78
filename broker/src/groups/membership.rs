//! In-memory membership of a group: member sessions, generations,
//! rebalances and session expiry. Not durable standalone (members rejoin
//! after a restart); distributed mode replicates it (see the coordinator).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use super::assignment::{assign, TopicPartition};

/// A member's live session.
#[derive(Debug, Clone)]
pub struct Member {
    /// Last JOIN_GROUP, SYNC_GROUP or HEARTBEAT (monotonic clock).
    pub last_seen: Instant,
    /// The same moment on the wall clock, for GROUP_STATUS.
    pub last_seen_wall: SystemTime,
    /// Partitions owned in the current generation.
    pub assignments: Vec<TopicPartition>,
}

impl Default for Member {
    fn default() -> Self {
        Member::new()
    }
}

impl Member {
    /// A member seen now, owning nothing yet.
    pub fn new() -> Member {
        Member {
            last_seen: Instant::now(),
            last_seen_wall: SystemTime::now(),
            assignments: Vec::new(),
        }
    }

    /// Refreshes the session.
    pub fn touch(&mut self) {
        self.last_seen = Instant::now();
        self.last_seen_wall = SystemTime::now();
    }
}

/// In-memory membership of one registered group.
#[derive(Debug, Clone)]
pub struct LiveGroup {
    /// Current generation (0 before the first rebalance).
    pub generation: u64,
    /// Members by id.
    pub members: BTreeMap<String, Member>,
    /// Time of the last rebalance.
    pub last_rebalance: SystemTime,
}

impl Default for LiveGroup {
    fn default() -> Self {
        LiveGroup::new()
    }
}

impl LiveGroup {
    /// An empty group at generation 0.
    pub fn new() -> LiveGroup {
        LiveGroup {
            generation: 0,
            members: BTreeMap::new(),
            last_rebalance: SystemTime::now(),
        }
    }

    /// Starts a new generation and reassigns every partition.
    pub fn rebalance(&mut self, expansion: &BTreeMap<String, u32>) {
        self.generation += 1;
        self.last_rebalance = SystemTime::now();
        let mut plan = assign(self.members.keys(), expansion);
        for (id, member) in self.members.iter_mut() {
            member.assignments = plan.remove(id).unwrap_or_default();
        }
    }

    /// Drops members not seen for `timeout`; returns their ids.
    pub fn expire(&mut self, now: Instant, timeout: Duration) -> Vec<String> {
        let expired: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| now.saturating_duration_since(m.last_seen) >= timeout)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            self.members.remove(id);
        }
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebalance_bumps_generation_and_expiry_drops_silent_members() {
        let expansion: BTreeMap<String, u32> = [("t".to_owned(), 3)].into_iter().collect();
        let mut g = LiveGroup::new();
        g.members.insert("a".into(), Member::new());
        g.members.insert("b".into(), Member::new());
        g.rebalance(&expansion);
        assert_eq!(g.generation, 1);
        assert_eq!(g.members["a"].assignments.len(), 2);
        assert_eq!(g.members["b"].assignments.len(), 1);
        let later = Instant::now() + Duration::from_secs(5);
        g.members.get_mut("a").unwrap().last_seen = later;
        assert_eq!(
            g.expire(later, Duration::from_secs(1)),
            vec!["b".to_owned()]
        );
        assert!(g.expire(later, Duration::from_secs(1)).is_empty());
    }
}
