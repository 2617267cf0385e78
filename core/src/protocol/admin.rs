//! Topic administration: CREATE, ALTER_TOPIC_CONFIG, DELETE, TRUNCATE, LIST,
//! DESCRIBE, METADATA, LIST_OFFSETS, LIST_GROUPS, GROUP_STATUS and HELP.

use super::reply::{bool_text, parse_bool, split_list, OkReply};
use crate::error::{Error, Result};
use crate::wire::CommandPayload;
use serde::Deserialize;

/// A topic to create, or the fields to patch on an existing topic. Unset
/// fields keep the broker default (new topic) or the current value (patch).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewTopic {
    /// Topic name: 1-249 ASCII letters, digits, `.`, `_`, `-` or `=`.
    pub name: String,
    /// Partition count (can only grow).
    pub partitions: Option<u32>,
    /// Producer deduplication (immutable after creation).
    pub idempotent: Option<bool>,
    /// Event-sourcing commands (immutable after creation).
    pub event_sourcing: Option<bool>,
    /// Retained aggregate replay (needs event sourcing and idempotence;
    /// `docs/aggregate-replay.md`).
    pub aggregate_replay: Option<bool>,
    /// Replica count (immutable after creation).
    pub replication_factor: Option<u32>,
    /// Durable min-ISR override.
    pub min_in_sync_replicas: Option<u32>,
    /// `delete`, `compact` or `delete,compact`.
    pub cleanup_policy: Option<String>,
    /// Retention in hours (0 = broker default).
    pub retention_hours: Option<u64>,
    /// Retention in bytes (0 = broker default).
    pub retention_bytes: Option<u64>,
    /// `hash_key` or `round_robin`.
    pub partitioner: Option<String>,
    /// `open`, `deny_write`, `deny_read` or `acl`.
    pub auth_policy: Option<String>,
    /// Principals allowed to read under `acl`.
    pub read_acl: Option<Vec<String>>,
    /// Principals allowed to write under `acl`.
    pub write_acl: Option<Vec<String>>,
}

impl NewTopic {
    /// A topic with broker defaults.
    pub fn new(name: impl Into<String>) -> Self {
        NewTopic {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Sets the partition count.
    pub fn partitions(mut self, n: u32) -> Self {
        self.partitions = Some(n);
        self
    }

    /// The CREATE request payload.
    pub(crate) fn to_payload(&self) -> CommandPayload {
        let mut p = CommandPayload::new().field("topic", &self.name);
        let mut opt = |name: &str, v: Option<String>| {
            if let Some(v) = v {
                p = std::mem::take(&mut p).field(name, v);
            }
        };
        opt("partitions", self.partitions.map(|v| v.to_string()));
        opt(
            "idempotent",
            self.idempotent.map(|b| bool_text(b).to_owned()),
        );
        opt(
            "event_sourcing",
            self.event_sourcing.map(|b| bool_text(b).to_owned()),
        );
        opt(
            "aggregate_replay",
            self.aggregate_replay.map(|b| bool_text(b).to_owned()),
        );
        opt(
            "replication_factor",
            self.replication_factor.map(|v| v.to_string()),
        );
        opt(
            "min_in_sync_replicas",
            self.min_in_sync_replicas.map(|v| v.to_string()),
        );
        opt("cleanup_policy", self.cleanup_policy.clone());
        opt(
            "retention_hours",
            self.retention_hours.map(|v| v.to_string()),
        );
        opt(
            "retention_bytes",
            self.retention_bytes.map(|v| v.to_string()),
        );
        opt("partitioner", self.partitioner.clone());
        opt("auth_policy", self.auth_policy.clone());
        opt("read_acl", self.read_acl.as_ref().map(|v| v.join(",")));
        opt("write_acl", self.write_acl.as_ref().map(|v| v.join(",")));
        p
    }
}

/// A topic's authoritative definition, as CREATE and METADATA report it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicInfo {
    /// Name.
    pub name: String,
    /// Partition count.
    pub partitions: u32,
    /// Cleanup policy.
    pub cleanup_policy: String,
    /// Partitioner policy.
    pub partitioner: String,
    /// Authorization policy.
    pub auth_policy: String,
    /// Read ACL.
    pub read_acl: Vec<String>,
    /// Write ACL.
    pub write_acl: Vec<String>,
    /// Retention hours.
    pub retention_hours: u64,
    /// Retention bytes.
    pub retention_bytes: u64,
    /// Definition revision (bumped on every effective change).
    pub revision: u64,
    /// Replication factor.
    pub replication_factor: u32,
    /// Idempotent topic.
    pub idempotent: bool,
    /// Event-sourcing topic.
    pub event_sourcing: bool,
    /// Aggregate replay topic (appends need event ids and may be retried).
    pub aggregate_replay: bool,
    /// Lifecycle epoch (bumped by TRUNCATE).
    pub lifecycle_epoch: u64,
    /// The topic's min-ISR override, `None` when it uses the broker default.
    pub min_in_sync_replicas: Option<u32>,
    /// The min-ISR in force.
    pub effective_min_in_sync_replicas: Option<u32>,
}

impl TopicInfo {
    /// Parses a CREATE or ALTER_TOPIC_CONFIG reply.
    pub(crate) fn from_reply(r: &OkReply) -> Result<TopicInfo> {
        let min_isr = match r.get("min_in_sync_replicas") {
            None | Some("default") => None,
            Some(_) => Some(r.parse_field("min_in_sync_replicas")?),
        };
        Ok(TopicInfo {
            name: r.require("topic")?.to_owned(),
            partitions: r.parse_field("partitions")?,
            cleanup_policy: r.get("cleanup_policy").unwrap_or_default().to_owned(),
            partitioner: r.get("partitioner").unwrap_or_default().to_owned(),
            auth_policy: r.get("auth_policy").unwrap_or_default().to_owned(),
            read_acl: r.list("read_acl"),
            write_acl: r.list("write_acl"),
            retention_hours: r.parse_opt("retention_hours")?.unwrap_or(0),
            retention_bytes: r.parse_opt("retention_bytes")?.unwrap_or(0),
            revision: r.parse_opt("revision")?.unwrap_or(0),
            replication_factor: r.parse_opt("replication_factor")?.unwrap_or(1),
            idempotent: r
                .get("idempotent")
                .map(parse_bool)
                .transpose()?
                .unwrap_or(false),
            event_sourcing: r
                .get("event_sourcing")
                .map(parse_bool)
                .transpose()?
                .unwrap_or(false),
            aggregate_replay: r
                .get("aggregate_replay")
                .map(parse_bool)
                .transpose()?
                .unwrap_or(false),
            lifecycle_epoch: r.parse_opt("lifecycle_epoch")?.unwrap_or(0),
            min_in_sync_replicas: min_isr,
            effective_min_in_sync_replicas: r.parse_opt("effective_min_in_sync_replicas")?,
        })
    }
}

/// METADATA: the definition plus the leader of every partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicMetadata {
    /// The definition.
    pub topic: TopicInfo,
    /// Leader address (`host:port`) per partition, in partition order;
    /// empty for a partition that has no leader right now (distributed
    /// mode, during a failover).
    pub leaders: Vec<String>,
    /// Leader epoch per partition.
    pub epochs: Vec<u64>,
}

impl TopicMetadata {
    /// Parses a METADATA reply.
    pub(crate) fn from_reply(r: &OkReply) -> Result<TopicMetadata> {
        let topic = TopicInfo::from_reply(r)?;
        // Positional: a partition without a leader (distributed mode,
        // during a failover) is an empty item, not a missing one.
        let leaders: Vec<String> = match r.get("leaders") {
            None => Vec::new(),
            Some("") if topic.partitions == 0 => Vec::new(),
            Some(v) => v.split(',').map(|s| s.trim().to_owned()).collect(),
        };
        if leaders.len() != topic.partitions as usize {
            return Err(Error::protocol(format!(
                "METADATA lists {} leaders for {} partitions",
                leaders.len(),
                topic.partitions
            )));
        }
        let epochs = r
            .list("epochs")
            .iter()
            .map(|e| {
                e.parse()
                    .map_err(|_| Error::protocol(format!("bad leader epoch {e:?}")))
            })
            .collect::<Result<_>>()?;
        Ok(TopicMetadata {
            topic,
            leaders,
            epochs,
        })
    }
}

/// One partition's offsets from LIST_OFFSETS.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartitionOffsets {
    /// Partition id.
    pub partition: u32,
    /// First retained offset.
    pub earliest: u64,
    /// Next readable committed offset (where `latest` consumers start).
    pub latest: u64,
    /// Log end offset.
    pub leo: u64,
    /// High-water mark.
    pub hwm: u64,
}

/// Parses `offsets=P0:earliest=0:latest=5:leo=5:hwm=5,P1:...`.
pub fn parse_offsets(r: &OkReply) -> Result<Vec<PartitionOffsets>> {
    let bad = |item: &str| Error::protocol(format!("bad LIST_OFFSETS entry {item:?}"));
    split_list(r.get("offsets").unwrap_or(""))
        .iter()
        .map(|item| {
            let mut parts = item.split(':');
            let partition = parts
                .next()
                .and_then(|p| p.strip_prefix('P'))
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| bad(item))?;
            let mut o = PartitionOffsets {
                partition,
                ..Default::default()
            };
            for kv in parts {
                let (k, v) = kv.split_once('=').ok_or_else(|| bad(item))?;
                let v: u64 = v.parse().map_err(|_| bad(item))?;
                match k {
                    "earliest" => o.earliest = v,
                    "latest" => o.latest = v,
                    "leo" => o.leo = v,
                    "hwm" => o.hwm = v,
                    _ => {}
                }
            }
            Ok(o)
        })
        .collect()
}

/// What DELETE did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeleteOutcome {
    /// False when `if_exists` found no topic.
    pub deleted: bool,
    /// Storage cleanup still has to be retried by the broker.
    pub cleanup_pending: bool,
}

/// What TRUNCATE did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TruncateOutcome {
    /// New definition revision.
    pub revision: u64,
    /// New lifecycle epoch.
    pub lifecycle_epoch: u64,
    /// Storage cleanup still has to be retried by the broker.
    pub cleanup_pending: bool,
}

/// DESCRIBE: a topic's definition and the state of each partition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct TopicDescription {
    /// Topic name.
    #[serde(default)]
    pub topic: String,
    /// The definition (the same fields CREATE and METADATA report).
    #[serde(default, deserialize_with = "definition_from_json")]
    pub definition: TopicInfo,
    /// Per-partition state.
    #[serde(default)]
    pub partitions: Vec<PartitionDescription>,
}

/// DESCRIBE's `definition` object (fields the broker may omit default).
#[derive(Default, Deserialize)]
#[serde(default)]
struct DefinitionJson {
    name: String,
    revision: u64,
    partitions: u32,
    replication_factor: u32,
    idempotent: bool,
    event_sourcing: bool,
    lifecycle_epoch: u64,
    min_in_sync_replicas: Option<u32>,
    effective_min_in_sync_replicas: Option<u32>,
    policy: PolicyJson,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct PolicyJson {
    cleanup_policy: String,
    partitioner: String,
    auth_policy: String,
    read_acl: Vec<String>,
    write_acl: Vec<String>,
    retention_hours: u64,
    retention_bytes: u64,
    aggregate_replay: bool,
}

fn definition_from_json<'de, D: serde::Deserializer<'de>>(d: D) -> Result<TopicInfo, D::Error> {
    let j = DefinitionJson::deserialize(d)?;
    Ok(TopicInfo {
        name: j.name,
        partitions: j.partitions,
        cleanup_policy: j.policy.cleanup_policy,
        partitioner: j.policy.partitioner,
        auth_policy: j.policy.auth_policy,
        read_acl: j.policy.read_acl,
        write_acl: j.policy.write_acl,
        retention_hours: j.policy.retention_hours,
        retention_bytes: j.policy.retention_bytes,
        revision: j.revision,
        replication_factor: j.replication_factor,
        idempotent: j.idempotent,
        event_sourcing: j.event_sourcing,
        aggregate_replay: j.policy.aggregate_replay,
        lifecycle_epoch: j.lifecycle_epoch,
        min_in_sync_replicas: j.min_in_sync_replicas,
        effective_min_in_sync_replicas: j.effective_min_in_sync_replicas,
    })
}

/// One partition in DESCRIBE's JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct PartitionDescription {
    /// Partition id.
    pub id: u32,
    /// First retained offset.
    #[serde(default)]
    pub earliest: u64,
    /// Leader address.
    #[serde(default)]
    pub leader: String,
    /// Replica set.
    #[serde(default)]
    pub replicas: Vec<String>,
    /// In-sync replicas.
    #[serde(default)]
    pub isr: Vec<String>,
    /// Log end offset.
    #[serde(default)]
    pub leo: u64,
    /// High-water mark.
    #[serde(default)]
    pub hwm: u64,
}

/// GROUP_STATUS's JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GroupStatus {
    /// Group name.
    #[serde(default)]
    pub group_name: String,
    /// Topic (single-topic groups).
    #[serde(default)]
    pub topic_name: String,
    /// State, e.g. `Stable`.
    #[serde(default)]
    pub state: String,
    /// Generation.
    #[serde(default)]
    pub generation: u64,
    /// Member count.
    #[serde(default)]
    pub member_count: u64,
    /// Partition count.
    #[serde(default)]
    pub partition_count: u64,
    /// Members.
    #[serde(default)]
    pub members: Vec<GroupMember>,
}

/// One member in GROUP_STATUS's JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GroupMember {
    /// Member id.
    #[serde(default)]
    pub member_id: String,
    /// Last heartbeat time.
    #[serde(default)]
    pub last_heartbeat: String,
    /// Assigned partitions.
    #[serde(default)]
    pub assignments: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_topic_payload_lists_only_set_fields() {
        let t = NewTopic {
            read_acl: Some(vec![]),
            retention_hours: Some(0),
            ..NewTopic::new("orders").partitions(3)
        };
        let line = t.to_payload().render_line(crate::wire::Command::Create);
        assert_eq!(
            line,
            "CREATE topic=orders partitions=3 retention_hours=0 read_acl="
        );
    }

    #[test]
    fn parses_metadata_and_offsets() {
        let r = OkReply::parse(b"OK topic=t partitions=2 leaders=h:1,h:1 epochs=0,0 revision=1 replication_factor=1 idempotent=false event_sourcing=false cleanup_policy=delete partitioner=hash_key auth_policy=open read_acl= write_acl= retention_hours=0 retention_bytes=0 lifecycle_epoch=0").unwrap();
        let m = TopicMetadata::from_reply(&r).unwrap();
        assert_eq!(m.leaders, ["h:1", "h:1"]);
        // A leaderless partition keeps its place.
        let r = OkReply::parse(b"OK topic=t partitions=3 leaders=h:1,,h:3 epochs=1,2,1 revision=1")
            .unwrap();
        let leaderless = TopicMetadata::from_reply(&r).unwrap();
        assert_eq!(leaderless.leaders, ["h:1", "", "h:3"]);
        assert_eq!(leaderless.epochs, [1, 2, 1]);
        assert_eq!(m.topic.partitioner, "hash_key");
        let r = OkReply::parse(b"OK topic=t partitions=2 offsets=P0:earliest=0:latest=5:leo=5:hwm=5,P1:earliest=2:latest=3:leo=4:hwm=3").unwrap();
        let o = parse_offsets(&r).unwrap();
        assert_eq!(
            o[1],
            PartitionOffsets {
                partition: 1,
                earliest: 2,
                latest: 3,
                leo: 4,
                hwm: 3
            }
        );
    }
}
