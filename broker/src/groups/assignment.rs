//! Deterministic partition assignment: every subscribed topic partition goes
//! to exactly one member per generation.

use std::collections::BTreeMap;
use std::fmt;

/// One topic partition of a group's expansion.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct TopicPartition {
    /// Topic name.
    pub topic: String,
    /// Partition id.
    pub partition: u32,
}

impl fmt::Display for TopicPartition {
    /// The `topic_assignments` form: `<topic>:P<partition>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:P{}", self.topic, self.partition)
    }
}

/// Every partition of `expansion` (topic to partition count) in sorted order.
pub fn partitions_of(expansion: &BTreeMap<String, u32>) -> Vec<TopicPartition> {
    expansion
        .iter()
        .flat_map(|(topic, &count)| {
            (0..count).map(move |partition| TopicPartition {
                topic: topic.clone(),
                partition,
            })
        })
        .collect()
}

/// Round-robin over sorted members and sorted topic partitions: partition
/// `i` goes to member `i % members`. Returns every member (possibly with an
/// empty list); with no members nothing is assigned.
pub fn assign<'a>(
    members: impl IntoIterator<Item = &'a String>,
    expansion: &BTreeMap<String, u32>,
) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut out: BTreeMap<String, Vec<TopicPartition>> = members
        .into_iter()
        .map(|m| (m.clone(), Vec::new()))
        .collect();
    if out.is_empty() {
        return out;
    }
    let ids: Vec<String> = out.keys().cloned().collect();
    for (i, tp) in partitions_of(expansion).into_iter().enumerate() {
        if let Some(list) = out.get_mut(&ids[i % ids.len()]) {
            list.push(tp);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expansion(items: &[(&str, u32)]) -> BTreeMap<String, u32> {
        items.iter().map(|(t, n)| (t.to_string(), *n)).collect()
    }

    #[test]
    fn every_partition_exactly_once() {
        let members: Vec<String> = vec!["b-1".into(), "a-2".into(), "c-3".into()];
        let e = expansion(&[("x", 4), ("y", 3)]);
        let out = assign(&members, &e);
        let mut all: Vec<TopicPartition> = out.values().flatten().cloned().collect();
        all.sort();
        assert_eq!(all, partitions_of(&e));
        // Sorted members, round robin: a-2 gets the first partition.
        assert_eq!(out["a-2"][0].to_string(), "x:P0");
        assert_eq!(out["b-1"][0].to_string(), "x:P1");
        let sizes: Vec<usize> = out.values().map(Vec::len).collect();
        assert_eq!(sizes, vec![3, 2, 2]);
    }

    #[test]
    fn more_members_than_partitions_and_no_members() {
        let members: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
        let out = assign(&members, &expansion(&[("x", 1)]));
        assert_eq!(out["a"].len(), 1);
        assert!(out["b"].is_empty() && out["c"].is_empty());
        assert!(assign(&Vec::<String>::new(), &expansion(&[("x", 2)])).is_empty());
    }
}
