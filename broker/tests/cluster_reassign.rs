//! Moving a partition's replicas (REASSIGN_PARTITIONS, docs/cluster.md
//! "Moving replicas") against real broker processes
//! (`cursus_testkit::TestCluster`): a broker added at run time takes over a
//! partition while a producer writes with acks=all, no acknowledged record
//! is lost, and the replica it replaced no longer holds the partition.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::cluster::*;
use common::{eventually_async, SAFETY};
use cursus_testkit::TestCluster;
use cursus_wire::ErrorClass;
use serde_json::Value;

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// Every record of `topic`/0 as its leader serves it, in offset order.
async fn all_values(start: &str, topic: &str) -> Vec<String> {
    let mut values = Vec::new();
    loop {
        let line = format!(
            "CONSUME topic={topic} partition=0 offset={} member=m",
            values.len()
        );
        let batch = cursus_wire::Batch::decode(on_leader_frame(start, &line).await).unwrap();
        if batch.records.is_empty() {
            return values;
        }
        values.extend(
            batch
                .records
                .iter()
                .map(|r| String::from_utf8_lossy(&r.payload).into_owned()),
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn replicas_move_onto_a_broker_added_at_run_time_under_acks_all_writes() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=moved partitions=1 replication_factor=2")
        .await;
    let j = cluster.start_joiner(4, &[]);
    until(&first, "broker-4 active", |s| {
        s["brokers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["id"] == "broker-4" && b["status"] == "active")
    })
    .await;
    let s = status(&mut c).await;
    let before = partition(&s, "moved", 0).clone();
    let old_leader = before["leader"].as_str().unwrap().to_string();
    let kept = names(&before["replicas"])
        .into_iter()
        .find(|r| *r != old_leader)
        .unwrap();
    assert!(!names(&before["replicas"]).contains(&"broker-4".to_string()));

    // Typed refusals first: nothing starts.
    for (line, code, class) in [
        (
            "topic=nope partition=0 replicas=broker-1,broker-2",
            "topic_not_found",
            ErrorClass::NotFound,
        ),
        (
            "topic=moved partition=7 replicas=broker-1,broker-2",
            "partition_not_found",
            ErrorClass::NotFound,
        ),
        (
            "topic=moved partition=0 replicas=broker-1,broker-9",
            "broker_not_found",
            ErrorClass::NotFound,
        ),
        (
            "topic=moved partition=0 replicas=broker-1,broker-1",
            "invalid_replicas",
            ErrorClass::Validation,
        ),
        (
            "topic=moved partition=0 replicas=broker-1",
            "invalid_replication_factor",
            ErrorClass::Validation,
        ),
        (
            "topic=moved partition=0",
            "missing_replicas",
            ErrorClass::Validation,
        ),
    ] {
        let e = c.error(&format!("REASSIGN_PARTITIONS {line}")).await;
        assert_eq!(
            (e.code.as_str(), e.class),
            (code, class),
            "{line}: {}",
            e.render()
        );
    }
    assert_eq!(
        partition(&status(&mut c).await, "moved", 0)["replicas"],
        before["replicas"]
    );

    // An idempotent producer writes with acks=all until told to stop,
    // following the leader; each acknowledged sequence is recorded.
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::<u64>::new()));
    let count = Arc::new(AtomicU64::new(0));
    let producer = {
        let (stop, acked, count, start) =
            (stop.clone(), acked.clone(), count.clone(), first.clone());
        tokio::spawn(async move {
            let mut seq = 0u64;
            while !stop.load(Ordering::SeqCst) {
                seq += 1;
                let line = format!(
                    "PUBLISH topic=moved partition=0 acks=all producerId=mover seqNum={seq} \
                     isIdempotent=true message=m{seq}"
                );
                on_leader_frame(&start, &line).await;
                acked.lock().unwrap().push(seq);
                count.store(seq, Ordering::SeqCst);
            }
        })
    };
    let acked_at_least = |n: u64| {
        let count = count.clone();
        async move {
            eventually_async!(SAFETY, format!("{n} records acknowledged"), async {
                let c = count.load(Ordering::SeqCst);
                if c >= n {
                    Ok(c)
                } else {
                    Err(c.to_string())
                }
            })
        }
    };
    // Enough history that broker-4 has something to catch up on.
    let at_start = acked_at_least(200).await;

    // The move: the old leader is dropped, broker-4 leads (first of the
    // target). Asked of a broker that is not necessarily the controller.
    let target = format!("broker-4,{kept}");
    let move_line = format!("REASSIGN_PARTITIONS topic=moved partition=0 replicas={target}");
    let asked = cluster.members[1].addr.clone();
    let started = std::time::Instant::now();
    let reply = client(&asked).await.ok(&move_line).await;
    let r = kv(&reply);
    assert!(
        ["in_progress", "done"].contains(&r["state"].as_str()),
        "{reply}"
    );
    assert_eq!(r["target"], target, "{reply}");
    if r["state"] == "in_progress" {
        let mut replicas: Vec<&str> = r["replicas"].split(',').collect();
        replicas.sort();
        let mut union = vec!["broker-4", kept.as_str(), old_leader.as_str()];
        union.sort();
        assert_eq!(
            replicas, union,
            "old and new replicas while it runs: {reply}"
        );
    }
    // Polling with the same request reports progress until it is done.
    let done = eventually_async!(SAFETY * 2, "the move done", async {
        let reply = client(&asked).await.ok(&move_line).await;
        if kv(&reply)["state"] == "done" {
            Ok(reply)
        } else {
            Err(reply)
        }
    });
    let took = started.elapsed();
    let during = count.load(Ordering::SeqCst) - at_start;
    // Reported, not asserted (no timing assertions): `--nocapture` shows it.
    println!("move done in {took:?}; {during} records acknowledged meanwhile");
    let d = kv(&done);
    assert_eq!(d["replicas"], target, "{done}");
    assert_eq!(d["isr"], target, "{done}");
    assert_eq!(d["leader"], "broker-4", "{done}");
    acked_at_least(at_start + 40).await;
    stop.store(true, Ordering::SeqCst);
    producer.await.unwrap();

    // Every broker's view: the old leader holds no replica any more.
    for m in [&first, &cluster.members[j].addr.clone()] {
        let s = until(m, "the move applied", |s| {
            partition(s, "moved", 0)["leader"] == "broker-4"
        })
        .await;
        let p = partition(&s, "moved", 0);
        assert_eq!(
            names(&p["replicas"]),
            vec!["broker-4".to_string(), kept.clone()],
            "{p}"
        );
        assert!(!names(&p["isr"]).contains(&old_leader), "{p}");
        assert!(p.get("target_replicas").is_none(), "{p}");
    }

    // No acknowledged record is lost (an unacknowledged retry may add a
    // duplicate-free extra: the producer is idempotent).
    let values = all_values(&first, "moved").await;
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() as u64 >= at_start + 40);
    for seq in &acked {
        assert!(
            values.contains(&format!("m{seq}")),
            "m{seq} lost; read {values:?}"
        );
    }
    let mut unique = values.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), values.len(), "no duplicates: {values:?}");
}
