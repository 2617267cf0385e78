//! Cluster administration (distributed mode, `docs/cluster.md`):
//! CLUSTER_STATUS, ELECT_LEADER, LIST_CLUSTER and REASSIGN_PARTITIONS
//! replies.
//!
//! Parsing is tolerant: unknown fields are ignored, optional fields may be
//! missing or `null`, and broker ids may come as JSON strings or numbers
//! (a number becomes its decimal string; clients treat ids as opaque).
//! Anything else that does not fit is a `protocol_error`.

use super::reply::{json_after, parse_bool, OkReply};
use crate::error::{Error, Result};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// CLUSTER_STATUS: the Raft leader, every broker and every partition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ClusterStatus {
    /// Broker id of the Raft (metadata) leader, `None` while none is known.
    #[serde(default, deserialize_with = "opt_broker_id")]
    pub raft_leader: Option<String>,
    /// The registered brokers.
    #[serde(default)]
    pub brokers: Vec<ClusterBroker>,
    /// Every partition of every topic, with its leader and replicas.
    #[serde(default)]
    pub partitions: Vec<ClusterPartition>,
    /// How many partitions have no active leader.
    #[serde(default)]
    pub leaderless: u64,
    /// How many partitions have an ISR smaller than their replica set.
    #[serde(default)]
    pub under_replicated: u64,
    /// The Raft voters (broker ids) as the answering broker knows the
    /// membership.
    #[serde(default, deserialize_with = "broker_ids")]
    pub voters: Vec<String>,
    /// The Raft learners (non-voting members, broker ids) as the answering
    /// broker knows the membership.
    #[serde(default, deserialize_with = "broker_ids")]
    pub learners: Vec<String>,
    /// The cluster's transaction coordinator shard count, `None` until a
    /// broker that knows it has registered.
    #[serde(default)]
    pub transaction_coordinator_shards: Option<u32>,
}

/// One broker of the cluster (CLUSTER_STATUS `brokers`, LIST_CLUSTER).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ClusterBroker {
    /// Broker id (opaque string, e.g. `broker-1`).
    #[serde(deserialize_with = "broker_id")]
    pub id: String,
    /// The broker's cluster (peer) address, `host:port`.
    #[serde(default)]
    pub addr: String,
    /// The address clients connect to, when the broker reports one.
    #[serde(default)]
    pub client_addr: Option<String>,
    /// `active` or `inactive`.
    #[serde(default)]
    pub status: String,
    /// When the broker was last heard from (RFC 3339), if reported.
    #[serde(default)]
    pub last_seen: Option<String>,
    /// The lifecycle protocol version the broker speaks, if reported
    /// (LIST_CLUSTER).
    #[serde(default)]
    pub lifecycle_protocol: Option<u32>,
}

/// One partition in CLUSTER_STATUS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ClusterPartition {
    /// Topic name.
    pub topic: String,
    /// Partition id.
    pub partition: u32,
    /// Broker id of the leader, `None` for a leaderless partition.
    #[serde(default, deserialize_with = "opt_broker_id")]
    pub leader: Option<String>,
    /// Leader epoch.
    #[serde(default)]
    pub leader_epoch: u64,
    /// Committed high-water mark.
    #[serde(default)]
    pub hwm: u64,
    /// Broker ids of the replica set.
    #[serde(default, deserialize_with = "broker_ids")]
    pub replicas: Vec<String>,
    /// Broker ids of the in-sync replicas.
    #[serde(default, deserialize_with = "broker_ids")]
    pub isr: Vec<String>,
    /// Idempotent producers whose committed sequences the replicated state
    /// holds for the partition.
    #[serde(default)]
    pub producers: u64,
    /// Broker ids a reassignment in progress moves the replicas to
    /// (REASSIGN_PARTITIONS); empty when none is in progress.
    #[serde(default, deserialize_with = "broker_ids")]
    pub target_replicas: Vec<String>,
}

/// What ELECT_LEADER did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderElection {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Broker id of the leader before the election, `None` when the
    /// partition had none.
    pub previous_leader: Option<String>,
    /// Broker id of the leader now.
    pub leader: String,
    /// Leader epoch now (bumped once by an effective change).
    pub leader_epoch: u64,
    /// False when the requested broker already led the partition (the
    /// election is idempotent).
    pub changed: bool,
}

impl ClusterStatus {
    /// Parses `OK cluster=<json>`.
    pub(crate) fn from_reply(reply: &[u8]) -> Result<ClusterStatus> {
        json_after(reply, "cluster")
    }
}

/// Parses LIST_CLUSTER's `OK brokers=<json array>`.
pub(crate) fn parse_cluster_brokers(reply: &[u8]) -> Result<Vec<ClusterBroker>> {
    json_after(reply, "brokers")
}

impl LeaderElection {
    /// Parses `OK topic=… partition=… previous_leader=… leader=…
    /// leader_epoch=… changed=…` (`previous_leader=` empty: none).
    pub(crate) fn from_reply(r: &OkReply) -> Result<LeaderElection> {
        let leader = r.require("leader")?;
        if leader.is_empty() {
            return Err(Error::protocol("ELECT_LEADER reply has an empty leader"));
        }
        Ok(LeaderElection {
            topic: r.require("topic")?.to_owned(),
            partition: r.parse_field("partition")?,
            previous_leader: r
                .get("previous_leader")
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
            leader: leader.to_owned(),
            leader_epoch: r.parse_field("leader_epoch")?,
            changed: parse_bool(r.require("changed")?)?,
        })
    }
}

/// A partition's replica move (REASSIGN_PARTITIONS, a project extension):
/// where it stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionReassignment {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// True once the partition's replicas are the target: every target
    /// replica is in sync, the others are dropped and the leader is one of
    /// the target's.
    pub done: bool,
    /// Broker ids of the replica set now (while the move runs, the old
    /// replicas and the new ones).
    pub replicas: Vec<String>,
    /// Broker ids of the in-sync replicas now.
    pub isr: Vec<String>,
    /// Broker id of the leader now, `None` while the partition has none.
    pub leader: Option<String>,
    /// Broker ids of the target replica set, preferred leader first.
    pub target: Vec<String>,
}

impl PartitionReassignment {
    /// Parses `OK topic=… partition=… state=in_progress|done replicas=…
    /// isr=… leader=… target=…` (lists comma-separated; `leader=` empty:
    /// none).
    pub(crate) fn from_reply(r: &OkReply) -> Result<PartitionReassignment> {
        let done = match r.require("state")? {
            "done" => true,
            "in_progress" => false,
            other => {
                return Err(Error::protocol(format!(
                    "REASSIGN_PARTITIONS reply has an unknown state {other:?}"
                )))
            }
        };
        let target = r.list("target");
        if target.is_empty() {
            return Err(Error::protocol("REASSIGN_PARTITIONS reply has no target"));
        }
        Ok(PartitionReassignment {
            topic: r.require("topic")?.to_owned(),
            partition: r.parse_field("partition")?,
            done,
            replicas: r.list("replicas"),
            isr: r.list("isr"),
            leader: r.get("leader").filter(|l| !l.is_empty()).map(str::to_owned),
            target,
        })
    }
}

/// A broker id given as a JSON string or a non-negative integer.
struct BrokerId;

impl<'de> Visitor<'de> for BrokerId {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a broker id (string or integer)")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<String, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<String, E> {
        Ok(v.to_string())
    }
}

/// A broker id, `null` or absent (empty string: none too).
struct OptBrokerId;

impl<'de> Visitor<'de> for OptBrokerId {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a broker id (string or integer) or null")
    }

    fn visit_none<E: de::Error>(self) -> std::result::Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Option<String>, D::Error> {
        let id = d.deserialize_any(BrokerId)?;
        Ok((!id.is_empty()).then_some(id))
    }
}

fn broker_id<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    d.deserialize_any(BrokerId)
}

fn opt_broker_id<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    d.deserialize_option(OptBrokerId)
}

fn broker_ids<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    struct Id(#[serde(deserialize_with = "broker_id")] String);
    let ids: Option<Vec<Id>> = Option::deserialize(d)?;
    Ok(ids.unwrap_or_default().into_iter().map(|Id(s)| s).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    const STATUS: &str = r#"OK cluster={"raft_leader":"broker-1","brokers":[{"id":"broker-1","addr":"127.0.0.1:7101","client_addr":"127.0.0.1:9101","status":"active","last_seen":"2026-12-01T15:30:00Z"}],"partitions":[{"topic":"orders","partition":0,"leader":"broker-2","leader_epoch":3,"hwm":120,"replicas":["broker-2","broker-3","broker-1"],"isr":["broker-2","broker-3"],"producers":4,"target_replicas":["broker-3",4]}],"leaderless":0,"under_replicated":1,"voters":["broker-1","broker-2",3],"learners":["broker-4"],"transaction_coordinator_shards":50}"#;

    #[test]
    fn parses_the_documented_cluster_status() {
        let s = ClusterStatus::from_reply(STATUS.as_bytes()).unwrap();
        assert_eq!(s.raft_leader.as_deref(), Some("broker-1"));
        assert_eq!(
            s.brokers,
            [ClusterBroker {
                id: "broker-1".into(),
                addr: "127.0.0.1:7101".into(),
                client_addr: Some("127.0.0.1:9101".into()),
                status: "active".into(),
                last_seen: Some("2026-12-01T15:30:00Z".into()),
                lifecycle_protocol: None,
            }]
        );
        assert_eq!(
            s.partitions,
            [ClusterPartition {
                topic: "orders".into(),
                partition: 0,
                leader: Some("broker-2".into()),
                leader_epoch: 3,
                hwm: 120,
                replicas: vec!["broker-2".into(), "broker-3".into(), "broker-1".into()],
                isr: vec!["broker-2".into(), "broker-3".into()],
                producers: 4,
                target_replicas: vec!["broker-3".into(), "4".into()],
            }]
        );
        assert_eq!((s.leaderless, s.under_replicated), (0, 1));
        assert_eq!(s.voters, ["broker-1", "broker-2", "3"]);
        assert_eq!(s.learners, ["broker-4"]);
        assert_eq!(s.transaction_coordinator_shards, Some(50));
    }

    #[test]
    fn cluster_status_takes_nulls_numbers_missing_and_unknown_fields() {
        let reply = r#"OK cluster={"raft_leader":null,"future":{"x":[1]},"brokers":[{"id":2,"addr":"h:1","status":"inactive","last_seen":null,"extra":true}],"partitions":[{"topic":"t","partition":4,"leader":null,"replicas":[2,"broker-3"],"isr":null}],"leaderless":1}"#;
        let s = ClusterStatus::from_reply(reply.as_bytes()).unwrap();
        assert_eq!(s.raft_leader, None);
        let b = &s.brokers[0];
        assert_eq!(b.id, "2");
        assert_eq!(b.client_addr, None);
        assert_eq!(b.last_seen, None);
        assert_eq!(b.status, "inactive");
        let p = &s.partitions[0];
        assert_eq!(p.leader, None);
        assert_eq!(p.replicas, ["2", "broker-3"]);
        assert!(p.isr.is_empty());
        assert_eq!((p.leader_epoch, p.hwm), (0, 0));
        assert_eq!((s.leaderless, s.under_replicated), (1, 0));
        // The membership and shard count are absent from older brokers.
        assert_eq!(p.producers, 0);
        // No reassignment in progress: no target replicas.
        assert!(p.target_replicas.is_empty());
        assert!(s.voters.is_empty() && s.learners.is_empty());
        assert_eq!(s.transaction_coordinator_shards, None);
        // A leader given as a number, and an empty object.
        let s = ClusterStatus::from_reply(br#"OK cluster={"raft_leader":7}"#).unwrap();
        assert_eq!(s.raft_leader.as_deref(), Some("7"));
        assert!(s.brokers.is_empty() && s.partitions.is_empty());
    }

    #[test]
    fn list_cluster_parses_brokers() {
        let reply = br#"OK brokers=[{"id":"broker-1","addr":"127.0.0.1:7101","client_addr":"127.0.0.1:9101","status":"active","last_seen":"2026-12-01T15:30:00Z","lifecycle_protocol":2},{"id":3,"addr":"127.0.0.1:7103","status":"inactive","last_seen":"2026-12-01T15:29:00Z","lifecycle_protocol":1}]"#;
        let b = parse_cluster_brokers(reply).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].lifecycle_protocol, Some(2));
        assert_eq!(b[0].client_addr.as_deref(), Some("127.0.0.1:9101"));
        assert_eq!(b[1].id, "3");
        assert_eq!(b[1].client_addr, None);
        assert_eq!(b[1].status, "inactive");
        assert!(parse_cluster_brokers(b"OK brokers=[]").unwrap().is_empty());
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        for reply in [
            &b"OK cluster=not-json"[..],
            b"OK cluster={\"brokers\":[{\"addr\":\"h:1\"}]}", // broker without id
            b"OK cluster={\"brokers\":[{\"id\":true}]}",
            b"OK cluster={\"partitions\":[{\"topic\":\"t\",\"partition\":-1}]}",
            b"OK cluster={\"leaderless\":\"many\"}",
            b"OK cluster=[1,2]",
            b"OK brokers={}",
            b"OK status=up",
            b"\xff\xfe",
        ] {
            let e = ClusterStatus::from_reply(reply).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{reply:?}");
            assert_eq!(e.code(), "protocol_error");
        }
        for reply in [&b"OK brokers=[{\"id\":[1]}]"[..], b"OK brokers=", b"OK"] {
            let e = parse_cluster_brokers(reply).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{reply:?}");
        }
    }

    #[test]
    fn parses_reassign_partitions_replies() {
        let r = OkReply::parse(b"OK topic=t partition=1 state=in_progress replicas=b1,b2,b3 isr=b1,b2 leader=b1 target=b3,b2 new=x").unwrap();
        assert_eq!(
            PartitionReassignment::from_reply(&r).unwrap(),
            PartitionReassignment {
                topic: "t".into(),
                partition: 1,
                done: false,
                replicas: vec!["b1".into(), "b2".into(), "b3".into()],
                isr: vec!["b1".into(), "b2".into()],
                leader: Some("b1".into()),
                target: vec!["b3".into(), "b2".into()],
            }
        );
        let r = OkReply::parse(
            b"OK topic=t partition=1 state=done replicas=b3 isr=b3 leader= target=b3",
        )
        .unwrap();
        let done = PartitionReassignment::from_reply(&r).unwrap();
        assert!(done.done);
        assert_eq!(done.leader, None);
        for line in [
            &b"OK topic=t partition=1 state=moving replicas=b1 isr=b1 leader=b1 target=b1"[..],
            b"OK topic=t partition=1 replicas=b1 isr=b1 leader=b1 target=b1",
            b"OK topic=t partition=1 state=done replicas=b1 isr=b1 leader=b1 target=",
            b"OK topic=t partition=x state=done replicas=b1 isr=b1 leader=b1 target=b1",
        ] {
            let e = PartitionReassignment::from_reply(&OkReply::parse(line).unwrap()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{line:?}");
        }
    }

    #[test]
    fn parses_elect_leader_replies() {
        let r = OkReply::parse(b"OK topic=orders partition=0 previous_leader=broker-2 leader=broker-3 leader_epoch=4 changed=true").unwrap();
        assert_eq!(
            LeaderElection::from_reply(&r).unwrap(),
            LeaderElection {
                topic: "orders".into(),
                partition: 0,
                previous_leader: Some("broker-2".into()),
                leader: "broker-3".into(),
                leader_epoch: 4,
                changed: true,
            }
        );
        // No previous leader (empty or missing), unknown fields ignored.
        for line in [
            &b"OK topic=t partition=2 previous_leader= leader=b1 leader_epoch=1 changed=false new=1"[..],
            b"OK topic=t partition=2 leader=b1 leader_epoch=1 changed=false",
        ] {
            let e = LeaderElection::from_reply(&OkReply::parse(line).unwrap()).unwrap();
            assert_eq!(e.previous_leader, None);
            assert!(!e.changed);
            assert_eq!((e.partition, e.leader.as_str(), e.leader_epoch), (2, "b1", 1));
        }
        for line in [
            &b"OK topic=t partition=x leader=b1 leader_epoch=1 changed=true"[..],
            b"OK topic=t partition=0 leader=b1 leader_epoch=1 changed=maybe",
            b"OK topic=t partition=0 leader= leader_epoch=1 changed=true",
            b"OK topic=t partition=0 leader_epoch=1 changed=true",
            b"OK partition=0 leader=b1 leader_epoch=-1 changed=true",
        ] {
            let e = LeaderElection::from_reply(&OkReply::parse(line).unwrap()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{line:?}");
        }
    }
}
