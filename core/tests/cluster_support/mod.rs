//! Helpers of the engine's tests against a real cluster
//! (`cursus_testkit::TestCluster`): three data brokers and one gateway
//! (`--no-replicas`, leads nothing) that every client bootstraps from, so
//! every partition request starts with a redirect.
#![allow(dead_code)] // each test binary uses some of them

use cursus::admin::{Admin, NewTopic};
use cursus::client::{Cluster, Idempotence, Lane};
use cursus::ClusterStatus;
use cursus::{ClientConfig, ProducerConfig};
use cursus_testkit::{eventually_async, TestCluster};
use cursus_wire::{Batch, Command, CommandPayload};
use std::sync::Arc;
use std::time::Duration;

/// Generous bound for anything awaited in these tests.
pub const WAIT: Duration = Duration::from_secs(60);

/// Three data brokers plus one gateway (the last member).
pub fn start() -> TestCluster {
    TestCluster::start_members(3, 1, "")
}

/// The gateway's client address (it leads nothing).
pub fn gateway(cluster: &TestCluster) -> String {
    let m = cluster.members.last().expect("members");
    assert!(m.no_replicas, "the last member is the gateway");
    m.addr.clone()
}

/// Client settings: bootstrap from `addr` only, short backoff.
pub fn client_config(addr: &str) -> ClientConfig {
    let mut c = ClientConfig::new(addr);
    c.set("retry_backoff_ms", "50").unwrap();
    c.set("retry_backoff_max_ms", "500").unwrap();
    c.set("request_timeout_ms", "10000").unwrap();
    c
}

/// An idempotent acks=all producer bootstrapped from `addr`.
pub fn producer_config(addr: &str) -> ProducerConfig {
    let mut c = ProducerConfig::new(addr);
    c.client = client_config(addr);
    c.set("acks", "all").unwrap();
    c.set("enable_idempotence", "true").unwrap();
    c.set("linger_ms", "2").unwrap();
    c.set("delivery_timeout_ms", "60000").unwrap();
    c
}

/// Creates `topic` with `partitions` partitions and replication factor 3
/// through `addr`, and waits until CLUSTER_STATUS shows every partition
/// led with a full ISR.
pub async fn create_topic(admin: &Admin, topic: &str, partitions: u32) {
    create(admin, NewTopic::new(topic).partitions(partitions)).await;
}

/// [`create_topic`] for any definition (replication factor 3 set here).
pub async fn create(admin: &Admin, mut t: NewTopic) {
    t.replication_factor = Some(3);
    let (topic, partitions) = (t.name.clone(), t.partitions.unwrap_or(1));
    let topic = topic.as_str();
    admin.create_topic(&t).await.unwrap();
    status_until(admin, "every partition led with a full ISR", |s| {
        let ps: Vec<_> = s.partitions.iter().filter(|p| p.topic == topic).collect();
        ps.len() == partitions as usize && ps.iter().all(|p| p.leader.is_some() && p.isr.len() == 3)
    })
    .await;
    // The broker answering METADATA may not have materialized the topic
    // yet although CREATE and CLUSTER_STATUS show it (it answers
    // `topic_not_found`, which no client retries; reported to the lead):
    // wait until it serves it.
    eventually_async!(
        WAIT,
        format!("METADATA {topic} to be served"),
        admin.metadata(topic)
    );
}

/// Polls CLUSTER_STATUS until `ok` holds (the state is replicated: there
/// is no event to await from outside).
pub async fn status_until(
    admin: &Admin,
    what: &str,
    ok: impl Fn(&ClusterStatus) -> bool,
) -> ClusterStatus {
    eventually_async!(WAIT, what, async {
        match admin.cluster_status().await {
            Ok(s) if ok(&s) => Ok(s),
            other => Err(other),
        }
    })
}

/// The leader's broker id of `topic`/`partition` in `s`.
pub fn leader_of(s: &ClusterStatus, topic: &str, partition: u32) -> String {
    s.partitions
        .iter()
        .find(|p| p.topic == topic && p.partition == partition)
        .and_then(|p| p.leader.clone())
        .expect("a led partition")
}

/// The client address of broker id `id` in `s`.
pub fn client_addr_of(s: &ClusterStatus, id: &str) -> String {
    s.brokers
        .iter()
        .find(|b| b.id == id)
        .and_then(|b| b.client_addr.clone())
        .expect("the broker's client address")
}

/// Reads `topic`/`partition` from offset 0 by explicit assignment (CONSUME
/// to the partition leader through the engine's routing, no group) until a
/// record with value `last` arrived; returns every value before it, in
/// offset order, with offsets.
pub async fn read_until(
    cluster: &Arc<Cluster>,
    topic: &str,
    partition: u32,
    last: &str,
) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    let what = format!("{last:?} in {topic}/{partition}");
    eventually_async!(WAIT, what, async {
        let payload = CommandPayload::new()
            .field("topic", topic)
            .field("partition", partition)
            .field("offset", offset)
            .field("member", "reader")
            .field("batch", 500)
            .field("wait_ms", 200);
        let reply = cluster
            .request_leader_bytes(
                topic,
                partition,
                Lane::CONTROL,
                Command::Consume,
                payload.to_bytes().unwrap(),
                Idempotence::Safe,
                None,
                None,
            )
            .await;
        let batch = match reply {
            Ok(b) => Batch::decode(b).unwrap(),
            // A read is safe to repeat; the routing already retried.
            Err(e) if e.retryable() => return Err(format!("{e}")),
            Err(e) => panic!("CONSUME {topic}/{partition}@{offset}: {e}"),
        };
        for r in batch.records {
            if r.offset < offset {
                continue;
            }
            offset = r.offset + 1;
            let value = String::from_utf8_lossy(&r.payload).into_owned();
            if value == last {
                return Ok(());
            }
            out.push((r.offset, value));
        }
        Err(format!("{} records read", out.len()))
    });
    out
}
