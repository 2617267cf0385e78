//! Helpers shared by the transaction tests: one producer session and the
//! reads both isolation levels give.

#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap};

use crate::common::{kv, Client};

/// A transactional producer session (`producerId`, `epoch`).
#[derive(Debug, Clone)]
pub struct Session {
    /// Transactional id.
    pub id: String,
    /// Broker-managed producer id.
    pub pid: String,
    /// Epoch.
    pub epoch: i64,
}

impl Session {
    /// INIT_PRODUCER_ID.
    pub async fn init(c: &mut Client, id: &str) -> Session {
        let f = kv(&c
            .ok(&format!("INIT_PRODUCER_ID transactional_id={id}"))
            .await);
        assert_eq!(f["transactional_id"], id);
        Session {
            id: id.to_owned(),
            pid: f["producerId"].clone(),
            epoch: f["epoch"].parse().unwrap(),
        }
    }

    /// `transactional_id= producerId= epoch=` of this session.
    pub fn args(&self) -> String {
        format!(
            "transactional_id={} producerId={} epoch={}",
            self.id, self.pid, self.epoch
        )
    }

    /// BEGIN_TXN line.
    pub fn begin_line(&self) -> String {
        format!("BEGIN_TXN {}", self.args())
    }

    /// BEGIN_TXN, expecting success.
    pub async fn begin(&self, c: &mut Client) -> HashMap<String, String> {
        kv(&c.ok(&self.begin_line()).await)
    }

    /// TXN_PUBLISH line.
    pub fn publish_line(&self, topic: &str, partition: u32, seq: u64, message: &str) -> String {
        format!(
            "TXN_PUBLISH {} topic={topic} partition={partition} seqNum={seq} message={message}",
            self.args()
        )
    }

    /// TXN_PUBLISH, expecting success; returns the record's offset.
    pub async fn publish(
        &self,
        c: &mut Client,
        topic: &str,
        partition: u32,
        seq: u64,
        message: &str,
    ) -> u64 {
        let f = kv(&c
            .ok(&self.publish_line(topic, partition, seq, message))
            .await);
        assert_eq!(f["appended"], "true");
        assert_eq!(f["state"], "open");
        assert_eq!(f["partition"], partition.to_string());
        f["offset"].parse().unwrap()
    }

    /// END_TXN line.
    pub fn end_line(&self, result: &str) -> String {
        format!("END_TXN {} result={result}", self.args())
    }

    /// END_TXN, expecting success.
    pub async fn end(&self, c: &mut Client, result: &str) -> HashMap<String, String> {
        kv(&c.ok(&self.end_line(result)).await)
    }

    /// TXN_STATUS fields.
    pub async fn status(&self, c: &mut Client) -> HashMap<String, String> {
        status(c, &self.id).await
    }
}

/// TXN_STATUS fields of `id`.
pub async fn status(c: &mut Client, id: &str) -> HashMap<String, String> {
    kv(&c.ok(&format!("TXN_STATUS transactional_id={id}")).await)
}

/// `(offset, payload)` of what CONSUME returns from `offset` with
/// `isolation`.
pub async fn read(
    c: &mut Client,
    topic: &str,
    partition: u32,
    offset: u64,
    isolation: &str,
) -> Vec<(u64, String)> {
    let batch = c
        .consume(&format!(
            "CONSUME topic={topic} partition={partition} offset={offset} member=reader \
             group=reader-{isolation} isolation={isolation}"
        ))
        .await;
    batch
        .records
        .iter()
        .map(|r| (r.offset, String::from_utf8_lossy(&r.payload).into_owned()))
        .collect()
}

/// Payloads a read_committed reader sees from offset 0.
pub async fn committed(c: &mut Client, topic: &str, partition: u32) -> Vec<String> {
    read(c, topic, partition, 0, "read_committed")
        .await
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}

/// Payloads a read_uncommitted reader sees from offset 0.
pub async fn uncommitted(c: &mut Client, topic: &str, partition: u32) -> Vec<String> {
    read(c, topic, partition, 0, "read_uncommitted")
        .await
        .into_iter()
        .map(|(_, p)| p)
        .collect()
}

/// The control-marker payload.
pub const MARKER: &str = "__cursus_txn_control_marker__";

/// `[0,2]` → `{0, 2}`.
pub fn partitions(list: &str) -> BTreeSet<u32> {
    list.trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|p| p.parse().unwrap())
        .collect()
}

/// A group member: (member id, generation, assigned partitions).
pub async fn join(
    c: &mut Client,
    topic: &str,
    group: &str,
    member: &str,
) -> (String, u64, BTreeSet<u32>) {
    let f = kv(&c
        .ok(&format!(
            "JOIN_GROUP topic={topic} group={group} member={member}"
        ))
        .await);
    (
        f["member"].clone(),
        f["generation"].parse().unwrap(),
        f.get("assignments")
            .map(|a| partitions(a))
            .unwrap_or_default(),
    )
}

/// The committed offset FETCH_OFFSET reports (None when nothing is).
pub async fn fetch_offset(c: &mut Client, topic: &str, partition: u32, group: &str) -> Option<u64> {
    let f = kv(&c
        .ok(&format!(
            "FETCH_OFFSET topic={topic} partition={partition} group={group}"
        ))
        .await);
    (f["committed"] == "true").then(|| f["offset"].parse().unwrap())
}

/// The `latest` and `hwm` LIST_OFFSETS reports for one partition.
pub async fn latest_and_hwm(c: &mut Client, topic: &str, partition: u32) -> (u64, u64) {
    let f = kv(&c
        .ok(&format!("LIST_OFFSETS topic={topic} partition={partition}"))
        .await);
    let entry = f["offsets"].clone();
    let field = |name: &str| -> u64 {
        entry
            .split(':')
            .find_map(|t| t.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in {entry}"))
            .parse()
            .unwrap()
    };
    (field("latest"), field("hwm"))
}
