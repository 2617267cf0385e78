//! Topic lifecycle and groups: the DELETE/TRUNCATE guard with its cleanup,
//! and the startup pass that finishes cleanup a crash interrupted.

use cursus_wire::ErrorPayload;
use tracing::{info, warn};

use super::coordinator::{Coordinator, Guard, State};
use super::records::{DurableState, RecordBody};
use crate::topics::TopicRegistry;

impl Coordinator {
    /// Starts a DELETE or TRUNCATE of `topic`: fails with `blocked_code`
    /// while a group whose expansion lists it has active members. The returned guard
    /// holds the coordinator until [`TopicRemoval::finish`] (or drop).
    pub async fn begin_topic_removal(
        &self,
        topic: &str,
        blocked_code: &str,
    ) -> Result<TopicRemoval<'_>, ErrorPayload> {
        let mut guard = self.lock().await;
        let st = &mut *guard;
        for group in referencing(st, topic) {
            self.expire_group(st, &group);
            let active = st.live.get(&group).map_or(0, |l| l.members.len());
            if active > 0 {
                return Err(ErrorPayload::new(blocked_code)
                    .with_field("topic", topic)
                    .with_field("group", &group)
                    .with_field("active_members", active));
            }
        }
        Ok(TopicRemoval {
            coordinator: self,
            state: guard,
            topic: topic.to_owned(),
        })
    }
}

/// A DELETE or TRUNCATE in progress; see [`Coordinator::begin_topic_removal`].
#[derive(Debug)]
pub struct TopicRemoval<'a> {
    coordinator: &'a Coordinator,
    state: Guard,
    topic: String,
}

impl TopicRemoval<'_> {
    /// After the topic was deleted or truncated: tombstones single-topic
    /// groups of the topic, removes other groups' offsets of it and
    /// refreshes their expansions. Failures are logged; startup finishes
    /// what is left.
    pub async fn finish(self, topics: &TopicRegistry, reason: &str) {
        let TopicRemoval {
            coordinator,
            state: mut guard,
            topic,
        } = self;
        for group in referencing(&guard, &topic) {
            let Some(reg) = guard.durable.groups.get(&group).cloned() else {
                continue;
            };
            let mut records = Vec::new();
            if reg.selector.single_topic() == Some(topic.as_str()) {
                records.push(RecordBody::GroupTombstone {
                    group: group.clone(),
                    reason: reason.to_owned(),
                });
            } else {
                let has_offsets = guard
                    .durable
                    .offsets
                    .keys()
                    .any(|(g, t, _)| *g == group && *t == topic);
                if has_offsets {
                    records.push(RecordBody::TopicTombstone {
                        group: group.clone(),
                        topic: topic.clone(),
                        reason: reason.to_owned(),
                    });
                }
                let expansion = reg.selector.expand(topics);
                if expansion != reg.expansion {
                    records.push(RecordBody::Registration {
                        group: group.clone(),
                        selector: reg.selector.clone(),
                        expansion,
                    });
                }
            }
            for record in records {
                let (locked, written) = coordinator.persist(guard, record).await;
                guard = locked;
                if let Err(e) = written {
                    warn!(group, topic, error = %e, "group cleanup pending until restart");
                    break;
                }
            }
            info!(group, topic, reason, "group offsets removed");
        }
    }
}

/// Groups whose expansion lists `topic` (their members may own its
/// partitions) or that hold offsets for it.
fn referencing(st: &State, topic: &str) -> Vec<String> {
    let mut out: Vec<String> = st
        .durable
        .groups
        .iter()
        .filter(|(_, r)| r.expansion.contains_key(topic))
        .map(|(g, _)| g.clone())
        .collect();
    for (g, t, _) in st.durable.offsets.keys() {
        if t == topic && !out.contains(g) {
            out.push(g.clone());
        }
    }
    out
}

/// Records that bring replayed state in line with the live topics (run at
/// startup): cleanup a crash interrupted.
pub(super) fn reconcile(durable: &DurableState, topics: &TopicRegistry) -> Vec<RecordBody> {
    let mut out = Vec::new();
    for (group, reg) in &durable.groups {
        if let Some(t) = reg.selector.single_topic() {
            if topics.get(t).is_none() {
                out.push(RecordBody::GroupTombstone {
                    group: group.clone(),
                    reason: "topic_deleted".into(),
                });
                continue;
            }
        }
        let mut gone: Vec<&String> = reg
            .expansion
            .keys()
            .filter(|t| topics.get(t).is_none())
            .collect();
        for (g, t, _) in durable.offsets.keys() {
            if g == group && topics.get(t).is_none() && !gone.contains(&t) {
                gone.push(t);
            }
        }
        for t in gone {
            out.push(RecordBody::TopicTombstone {
                group: group.clone(),
                topic: t.clone(),
                reason: "topic_deleted".into(),
            });
        }
        let expansion = reg.selector.expand(topics);
        if expansion != reg.expansion {
            out.push(RecordBody::Registration {
                group: group.clone(),
                selector: reg.selector.clone(),
                expansion,
            });
        }
    }
    out
}
