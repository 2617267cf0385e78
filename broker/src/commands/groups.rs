//! Group commands: REGISTER_GROUP, JOIN_GROUP, SYNC_GROUP, HEARTBEAT,
//! LEAVE_GROUP, GROUP_STATUS, LIST_GROUPS, COMMIT_OFFSET, BATCH_COMMIT and
//! FETCH_OFFSET. Parsing and reply formats live here; the rules live in
//! [`crate::groups::coordinator`].

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;
use cursus_wire::{CommandPayload, ErrorPayload};

use super::params::{existing_topic, number, partition_number, partition_of, required};
use super::{HandlerResult, Reply};
use crate::broker::{Broker, Listener};
use crate::groups::member_id::is_valid_member;
use crate::groups::selector::{is_valid_pattern, parse_topic_list};
use crate::groups::{MemberView, Selector, TopicPartition};
use crate::placement::CoordinatorKey;
use crate::topics::is_valid_topic_name;
use crate::topics::name::MAX_TOPIC_NAME_LEN;

/// Most unique partitions in one BATCH_COMMIT.
pub const MAX_BATCH_COMMIT_PARTITIONS: usize = 1024;

/// `group=`: required, 1-249 bytes without whitespace, control characters
/// or commas.
/// In a cluster, only the group's coordinator serves it
/// (`NOT_COORDINATOR` elsewhere).
fn group_param<'a>(
    broker: &Broker,
    p: &'a CommandPayload,
    command: &str,
    listener: Listener,
) -> Result<&'a str, ErrorPayload> {
    let group = required(p, "group", "missing_group", command)?;
    let valid = group.len() <= MAX_TOPIC_NAME_LEN
        && !group
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == ',');
    if !valid {
        return Err(ErrorPayload::new("invalid_group")
            .with_field("command", command)
            .with_field("group", group));
    }
    broker
        .placement()
        .check_coordinator(CoordinatorKey::Group(group), listener)?;
    Ok(group)
}

/// `member=`: required and well formed.
fn member_param<'a>(p: &'a CommandPayload, command: &str) -> Result<&'a str, ErrorPayload> {
    let member = required(p, "member", "missing_member", command)?;
    if !is_valid_member(member) {
        return Err(ErrorPayload::new("invalid_member")
            .with_field("command", command)
            .with_field("member", member));
    }
    Ok(member)
}

/// Optional `topic=`: a valid name when present.
fn optional_topic(p: &CommandPayload) -> Result<Option<&str>, ErrorPayload> {
    match p.get("topic").filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(t) if is_valid_topic_name(t) => Ok(Some(t)),
        Some(t) => Err(ErrorPayload::new("invalid_topic_name").with_field("topic", t)),
    }
}

/// `generation=`: `invalid_generation` when not a number.
fn optional_generation(p: &CommandPayload) -> Result<Option<u64>, ErrorPayload> {
    p.get("generation")
        .filter(|g| !g.is_empty())
        .map(|g| number(g, "generation", "invalid_generation"))
        .transpose()
}

/// `generation=`, required: `missing_generation command=<command>`.
fn required_generation(p: &CommandPayload, command: &str) -> Result<u64, ErrorPayload> {
    optional_generation(p)?
        .ok_or_else(|| ErrorPayload::new("missing_generation").with_field("command", command))
}

/// `[0,2]`: the partitions of `topic` in `list`.
fn partition_list(list: &[TopicPartition], topic: &str) -> String {
    let ids: Vec<String> = list
        .iter()
        .filter(|tp| tp.topic == topic)
        .map(|tp| tp.partition.to_string())
        .collect();
    format!("[{}]", ids.join(","))
}

/// The assignment tokens of a reply: `assignments=[..]` for a single-topic
/// group, `topic_assignments=t:P0,..` otherwise (plus `assignments=[..]`
/// for the requested topic, when one was named).
fn assignment_tokens(view: &MemberView, topic: Option<&str>) -> String {
    match &view.single_topic {
        Some(t) => format!("assignments={}", partition_list(&view.assignments, t)),
        None => {
            let all: Vec<String> = view.assignments.iter().map(|tp| tp.to_string()).collect();
            let mut line = format!("topic_assignments={}", all.join(","));
            if let Some(t) = topic {
                line.push_str(&format!(
                    " assignments={}",
                    partition_list(&view.assignments, t)
                ));
            }
            line
        }
    }
}

/// REGISTER_GROUP group= (topic= | topics= | pattern=): `OK group=<g>
/// selector=<kind> <kind>=<value> expansion=<topic>:<partitions>,...
/// partitions=<total> created=<bool>` (the specification gives no format).
pub async fn register_group(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let group = group_param(broker, p, "REGISTER_GROUP", listener)?;
    let given: Vec<(&str, &str)> = ["topic", "topics", "pattern"]
        .into_iter()
        .filter_map(|k| p.get(k).map(|v| (k, v)))
        .collect();
    let selector = match given.as_slice() {
        [("topic", t)] => {
            if !is_valid_topic_name(t) {
                return Err(ErrorPayload::new("invalid_topic_name").with_field("topic", t));
            }
            Selector::Topic((*t).to_owned())
        }
        [("topics", list)] => Selector::Topics(
            parse_topic_list(list)
                .map_err(|bad| ErrorPayload::new("invalid_topic_name").with_field("topic", bad))?,
        ),
        [("pattern", pattern)] => {
            if !is_valid_pattern(pattern) {
                return Err(ErrorPayload::new("invalid_subscription")
                    .with_field("reason", "invalid_pattern")
                    .with_field("pattern", pattern));
            }
            Selector::Pattern((*pattern).to_owned())
        }
        _ => {
            return Err(ErrorPayload::new("invalid_subscription")
                .with_field("reason", "exactly_one_selector_required")
                .with_field("group", group))
        }
    };
    let r = broker
        .groups
        .register(&broker.topics, group, selector)
        .await?;
    let expansion: Vec<String> = r
        .expansion
        .iter()
        .map(|(topic, n)| format!("{topic}:{n}"))
        .collect();
    let partitions: u64 = r.expansion.values().map(|&n| u64::from(n)).sum();
    Ok(Reply::text(format!(
        "OK group={group} selector={kind} {kind}={} expansion={} partitions={partitions} \
         created={}",
        r.selector.value(),
        expansion.join(","),
        r.created,
        kind = r.selector.kind(),
    )))
}

/// JOIN_GROUP [topic=] group= member=.
pub async fn join_group(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let group = group_param(broker, p, "JOIN_GROUP", listener)?;
    let member = member_param(p, "JOIN_GROUP")?;
    let topic = optional_topic(p)?;
    let view = broker
        .groups
        .join(&broker.topics, group, topic, member)
        .await?;
    Ok(Reply::text(format!(
        "OK generation={} member={} {}",
        view.generation,
        view.member_id,
        assignment_tokens(&view, topic)
    )))
}

/// SYNC_GROUP [topic=] group= member= generation=. The generation is
/// checked when supplied; without it the current assignment is returned
/// (the specification's own example omits it).
pub async fn sync_group(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let group = group_param(broker, p, "SYNC_GROUP", listener)?;
    let member = member_param(p, "SYNC_GROUP")?;
    let topic = optional_topic(p)?;
    let generation = required_generation(p, "SYNC_GROUP")?;
    let view = broker
        .groups
        .sync(group, topic, member, Some(generation))
        .await?;
    Ok(Reply::text(format!(
        "OK {} generation={}",
        assignment_tokens(&view, topic),
        view.generation
    )))
}

/// HEARTBEAT topic= group= member= [generation=]. `topic=` is required
/// (`missing_topic`) except for multi-topic groups (`topics=` / `pattern=`),
/// which no single topic names.
pub async fn heartbeat(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let group = group_param(broker, p, "HEARTBEAT", listener)?;
    let member = member_param(p, "HEARTBEAT")?;
    let topic = optional_topic(p)?;
    let generation = optional_generation(p)?;
    let current = broker
        .groups
        .heartbeat(group, topic, member, generation)
        .await?;
    Ok(Reply::text(format!(
        "OK member={member} generation={current}"
    )))
}

/// LEAVE_GROUP topic= group= member=; `topic=` as for HEARTBEAT.
pub async fn leave_group(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let group = group_param(broker, p, "LEAVE_GROUP", listener)?;
    let member = member_param(p, "LEAVE_GROUP")?;
    let topic = optional_topic(p)?;
    broker.groups.leave(group, topic, member).await?;
    Ok(Reply::text(format!(
        "OK group={group} member={member} left=true"
    )))
}

/// GROUP_STATUS group=: the JSON document.
pub async fn group_status(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let group = group_param(broker, p, "GROUP_STATUS", listener)?;
    let status = broker.groups.status(group).await?;
    let json = serde_json::to_vec(&status).map_err(|e| {
        ErrorPayload::new("group_status_failed")
            .with_field("group", group)
            .with_field("reason", e.to_string())
    })?;
    Ok(Reply::Ok(Bytes::from(json)))
}

/// LIST_GROUPS: `OK count=<N> groups=<csv>`.
pub async fn list_groups(broker: &Arc<Broker>) -> HandlerResult {
    let groups = broker.groups.list().await;
    Ok(Reply::text(format!(
        "OK count={} groups={}",
        groups.len(),
        groups.join(",")
    )))
}

/// COMMIT_OFFSET topic= partition= group= offset= member= generation=.
pub async fn commit_offset(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const C: &str = "COMMIT_OFFSET";
    let topic = existing_topic(broker, p, C)?;
    let partition = partition_number(required(p, "partition", "missing_partition", C)?, C)?;
    let group = group_param(broker, p, C, listener)?;
    let offset: u64 = number(
        required(p, "offset", "missing_offset", C)?,
        "offset",
        "invalid_offset",
    )?;
    let member = member_param(p, C)?;
    let generation = required_generation(p, C)?;
    partition_of(&topic, partition)?;
    broker
        .groups
        .commit(
            group,
            &topic.def.name,
            member,
            generation,
            &[(partition, offset)],
        )
        .await?;
    Ok(Reply::text("OK"))
}

/// Parses `P<partition>:<offset>,...`: every entry well formed, no
/// partition twice, at most [`MAX_BATCH_COMMIT_PARTITIONS`].
fn parse_batch_offsets(
    raw: &str,
    group: &str,
    topic: &str,
) -> Result<Vec<(u32, u64)>, ErrorPayload> {
    let malformed = |entry: &str| {
        ErrorPayload::new("invalid_batch_commit_entry")
            .with_field("reason", "malformed_entry")
            .with_field("entry", entry)
    };
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (p, o) = entry
            .strip_prefix('P')
            .and_then(|rest| rest.split_once(':'))
            .ok_or_else(|| malformed(entry))?;
        let partition: u32 = p.parse().map_err(|_| malformed(entry))?;
        let offset: u64 = o.parse().map_err(|_| malformed(entry))?;
        if !seen.insert(partition) {
            return Err(ErrorPayload::new("duplicate_partition")
                .with_field("partition", partition)
                .with_field("group", group)
                .with_field("topic", topic));
        }
        if seen.len() > MAX_BATCH_COMMIT_PARTITIONS {
            return Err(ErrorPayload::new("invalid_batch_commit_entry")
                .with_field("reason", "too_many_partitions")
                .with_field("max", MAX_BATCH_COMMIT_PARTITIONS));
        }
        out.push((partition, offset));
    }
    if out.is_empty() {
        return Err(ErrorPayload::new("no_valid_offsets")
            .with_field("group", group)
            .with_field("topic", topic));
    }
    Ok(out)
}

/// BATCH_COMMIT topic= group= member= generation= offsets=P<n>:<o>,...:
/// all or nothing.
pub async fn batch_commit(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const C: &str = "BATCH_COMMIT";
    let topic = existing_topic(broker, p, C)?;
    let group = group_param(broker, p, C, listener)?;
    let member = member_param(p, C)?;
    let generation = required_generation(p, C)?;
    let raw = p.get("offsets").ok_or_else(|| {
        ErrorPayload::new("invalid_batch_commit_entry").with_field("reason", "missing_offsets")
    })?;
    let entries = parse_batch_offsets(raw, group, &topic.def.name)?;
    let n = broker
        .groups
        .commit(group, &topic.def.name, member, generation, &entries)
        .await?;
    Ok(Reply::text(format!("OK batched={n}")))
}

/// FETCH_OFFSET topic= partition= group=: `OK offset=<N> committed=<bool>`
/// (offset 0 when nothing is committed).
pub async fn fetch_offset(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const C: &str = "FETCH_OFFSET";
    let topic = existing_topic(broker, p, C)?;
    let partition = partition_number(required(p, "partition", "missing_partition", C)?, C)?;
    let group = group_param(broker, p, C, listener)?;
    partition_of(&topic, partition)?;
    let committed = broker.groups.fetch(group, &topic.def.name, partition);
    Ok(Reply::text(format!(
        "OK offset={} committed={}",
        committed.unwrap_or(0),
        committed.is_some()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_offsets_parse_strictly() {
        assert_eq!(
            parse_batch_offsets("P0:10,P3:7", "g", "t").unwrap(),
            vec![(0, 10), (3, 7)]
        );
        let code = |raw: &str| parse_batch_offsets(raw, "g", "t").unwrap_err().code;
        assert_eq!(code("0:10"), "invalid_batch_commit_entry");
        assert_eq!(code("P0:x"), "invalid_batch_commit_entry");
        assert_eq!(code("P0:1,P0:2"), "duplicate_partition");
        assert_eq!(code(""), "no_valid_offsets");
        assert_eq!(code(" , "), "no_valid_offsets");
        let many: Vec<String> = (0..1025).map(|p| format!("P{p}:1")).collect();
        assert_eq!(code(&many.join(",")), "invalid_batch_commit_entry");
        let max: Vec<String> = (0..1024).map(|p| format!("P{p}:1")).collect();
        assert_eq!(
            parse_batch_offsets(&max.join(","), "g", "t").unwrap().len(),
            1024
        );
    }
}
