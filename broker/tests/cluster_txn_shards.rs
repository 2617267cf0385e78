//! Transaction coordinator shards against real broker processes
//! (`cursus_testkit::TestCluster`): a broker configured with another shard
//! count is refused before it joins, transactional ids go to their shard's
//! owner, and after the owner's kill -9 the new owner's markers carry the
//! bumped shard epoch.

mod common;

use std::process::{Command, Stdio};

use common::cluster::*;
use common::SAFETY;
use cursus_testkit::{eventually_async, poll_until_async, TestCluster};
use cursus_wire::{Batch, Record};
use serde_json::Value;

/// The client address FIND_COORDINATOR transactional_id=`id` names on `addr`.
async fn coordinator(addr: &str, id: &str) -> String {
    let f = kv(&client(addr)
        .await
        .ok(&format!("FIND_COORDINATOR transactional_id={id}"))
        .await);
    format!("{}:{}", f["host"], f["port"])
}

/// Sends `line` to `start`, following `leader=` redirects and retrying
/// retryable errors (a failover in progress) until it succeeds.
async fn retrying(start: &str, line: &str) -> Bytes {
    on_leader_within(SAFETY * 2, start, line).await
}

type Bytes = bytes::Bytes;

/// [`retrying`] for a text reply.
async fn ok_retrying(start: &str, line: &str) -> String {
    String::from_utf8_lossy(&retrying(start, line).await).into_owned()
}

/// The control markers of `t`/0 (read_uncommitted on its leader) once
/// there are `n` of them.
async fn markers(start: &str, n: usize) -> Vec<Record> {
    let found = eventually_async!(SAFETY, format!("{n} readable markers"), async {
        let reply = retrying(
            start,
            "CONSUME topic=t partition=0 offset=0 member=m isolation=read_uncommitted",
        )
        .await;
        let found: Vec<Record> = Batch::decode(reply)
            .unwrap()
            .records
            .into_iter()
            .filter(|r| r.control_batch_type.to_string() == "transaction")
            .collect();
        if found.len() >= n {
            Ok(found)
        } else {
            Err(found.len())
        }
    });
    assert_eq!(found.len(), n, "{found:?}");
    found
}

/// One committed transaction of `id` through `coord` writing `message` to
/// `t`/0 (every step retried while the cluster settles).
async fn commit_one(coord: &str, id: &str, message: &str) {
    let init = kv(&ok_retrying(coord, &format!("INIT_PRODUCER_ID transactional_id={id}")).await);
    let session = format!(
        "transactional_id={id} producerId={} epoch={}",
        init["producerId"], init["epoch"]
    );
    ok_retrying(coord, &format!("BEGIN_TXN {session}")).await;
    ok_retrying(
        coord,
        &format!("TXN_PUBLISH {session} topic=t partition=0 seqNum=1 message={message}"),
    )
    .await;
    let end = kv(&ok_retrying(coord, &format!("END_TXN {session} result=commit")).await);
    assert_eq!(end["state"], "committed");
}

/// The shard epoch a marker carries, checked against its control record
/// value (i16 version 0, i32 coordinator epoch).
fn marker_epoch(m: &Record) -> i64 {
    let value = m.control_batch_value.as_deref().expect("control value");
    let in_value = i32::from_be_bytes(value[2..6].try_into().unwrap());
    assert_eq!(i64::from(in_value), m.control_batch_coordinator_epoch);
    m.control_batch_coordinator_epoch
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broker_with_another_shard_count_is_refused_and_the_cluster_keeps_working() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    assert_eq!(
        status(&mut client(&first).await).await["transaction_coordinator_shards"],
        50
    );

    // Member 3 comes back configured with 7 shards: it must never join.
    cluster.kill(2);
    let m = &cluster.members[2];
    until(&first, "member 3 to be inactive", |s| inactive(s, &m.addr)).await;
    let peers = cluster
        .members
        .iter()
        .map(|m| format!("{}={}", m.node_id, m.cluster_addr))
        .collect::<Vec<_>>()
        .join(",");
    let logs = tempfile::tempdir().unwrap();
    let log_path = logs.path().join("refused.log");
    let mut child = Command::new(cursus_testkit::broker_binary())
        .args(["--listen", &m.addr, "--health-listen", &m.health_addr])
        .arg("--data-dir")
        .arg(&m.data_dir)
        .args(["--node-id", "3", "--cluster-peers", &peers])
        .args(["--internal-auth-token", "test-cluster-token"])
        .args(["--transaction-coordinator-shards", "7"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .expect("start cursus-broker");
    let exited = poll_until_async!(SAFETY * 3, async { child.try_wait().unwrap() });
    let Ok(exit) = exited else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "the refused broker kept running:\n{}",
            std::fs::read_to_string(&log_path).unwrap_or_default()
        );
    };
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(!exit.success(), "{exit}\n{log}");
    assert!(
        log.contains("transaction_coordinator_shards_mismatch")
            && log.contains("configured=7 cluster=50"),
        "{log}"
    );

    // The others never saw it join and keep working.
    let s = status(&mut client(&first).await).await;
    assert!(inactive(&s, &m.addr), "{s}");
    assert_eq!(s["transaction_coordinator_shards"], 50);
    client(&first)
        .await
        .ok("CREATE topic=t partitions=1 replication_factor=2")
        .await;
    let published = ok_retrying(
        &first,
        "PUBLISH topic=t partition=0 acks=all producerId=p seqNum=1 isIdempotent=true message=m1",
    )
    .await;
    let published: Value = serde_json::from_str(&published).expect("PUBLISH JSON");
    assert_eq!(published["status"], "OK", "{published}");
    let coord = coordinator(&first, "x").await;
    assert_ne!(coord, m.addr);
    commit_one(&coord, "x", "v1").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn transactional_ids_follow_their_shard_owner_and_markers_carry_its_epoch() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    client(&first)
        .await
        .ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    // Every broker names the same owner once its copy holds every
    // registration; the others redirect to it.
    for m in &cluster.members {
        until(&m.addr, "every broker active in its copy", |s| {
            active_brokers(s) == 3
        })
        .await;
    }
    let coord = coordinator(&first, "x").await;
    for m in &cluster.members {
        assert_eq!(coordinator(&m.addr, "x").await, coord);
    }
    let other = cluster.members.iter().find(|m| m.addr != coord).unwrap();
    let e = client(&other.addr)
        .await
        .error("INIT_PRODUCER_ID transactional_id=x")
        .await;
    assert_eq!(e.code, "NOT_COORDINATOR");
    assert_eq!(format!("{}:{}", e.fields["host"], e.fields["port"]), coord);

    commit_one(&coord, "x", "v1").await;
    let before = marker_epoch(&markers(&first, 1).await[0]);
    assert!(before >= 1, "a shard epoch, got {before}");

    // The owner dies: another broker owns the shard at a bumped epoch, and
    // its markers say so.
    let victim = cluster.index_of(&coord).unwrap();
    cluster.kill(victim);
    let survivor = cluster.members[(victim + 1) % 3].addr.clone();
    until(&survivor, "the owner to be inactive", |s| {
        inactive(s, &coord)
    })
    .await;
    let new_coord = coordinator(&survivor, "x").await;
    assert_ne!(new_coord, coord);
    commit_one(&new_coord, "x", "v2").await;
    let all = markers(&survivor, 2).await;
    assert_eq!(marker_epoch(&all[0]), before);
    let after = marker_epoch(&all[1]);
    assert!(after > before, "epoch {after} not bumped past {before}");
}
