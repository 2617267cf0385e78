//! The engine against a real cluster (issue #21): three data brokers and a
//! gateway that leads nothing, every client bootstrapped from the gateway.
//! Produce with an idempotent acks=all producer and read back by explicit
//! partition (no group: groups are not yet replicated); fail the leader of
//! a partition over with kill -9 while a producer sends; the cluster admin
//! calls; a producer following ELECT_LEADER; a partition moved to other
//! brokers with `reassign_partition`.

mod cluster_support;

use cluster_support::{
    client_addr_of, client_config, create_topic, gateway, leader_of, producer_config, read_until,
    start, status_until, WAIT,
};
use cursus::admin::{Admin, NewTopic};
use cursus::client::Cluster;
use cursus::producer::{Producer, ProducerRecord};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Sends one `end` record to every partition and waits for it.
async fn send_sentinels(producer: &Producer, topic: &str, partitions: u32) {
    for p in 0..partitions {
        producer
            .send(ProducerRecord::new(topic, "end").partition(p))
            .await
            .unwrap()
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn produce_through_a_gateway_and_read_every_partition_back_in_order() {
    let cluster = start();
    let gw = gateway(&cluster);
    let admin = Admin::connect(client_config(&gw)).await.unwrap();
    create_topic(&admin, "orders", 3).await;

    let producer = Producer::connect(producer_config(&gw)).await.unwrap();
    let mut deliveries = Vec::new();
    for i in 0..300u32 {
        let p = i % 3;
        let d = producer
            .send(ProducerRecord::new("orders", format!("v-{p}-{i}")).partition(p))
            .await
            .unwrap();
        deliveries.push((p, d));
    }
    let mut offsets: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for (p, d) in deliveries {
        let m = d.await.unwrap();
        assert_eq!(m.partition, p);
        offsets.entry(p).or_default().push(m.offset.unwrap());
    }
    for (p, o) in &offsets {
        assert_eq!(*o, (0..100).collect::<Vec<u64>>(), "partition {p} offsets");
    }
    send_sentinels(&producer, "orders", 3).await;

    let reader = Cluster::new(client_config(&gw)).unwrap();
    for p in 0..3u32 {
        let got = read_until(&reader, "orders", p, "end").await;
        let expected: Vec<(u64, String)> = (0..100u32)
            .map(|k| (u64::from(k), format!("v-{p}-{}", k * 3 + p)))
            .collect();
        assert_eq!(got, expected, "partition {p}: exact records in order");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    admin.close().await;
}

/// What the continuous producer of the failover test saw.
#[derive(Default)]
struct Sent {
    /// value -> acknowledged offset.
    acked: Mutex<BTreeMap<u64, u64>>,
    /// Deliveries that failed (with the error).
    failed: Mutex<Vec<String>>,
    count: AtomicU64,
}

/// Waits until `n` records were acknowledged.
async fn reached(rx: &mut tokio::sync::watch::Receiver<u64>, n: u64) {
    tokio::time::timeout(WAIT, rx.wait_for(|v| *v >= n))
        .await
        .expect("acknowledgements keep coming")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_partition_leader_loses_no_acknowledged_record_and_duplicates_none() {
    let mut cluster = start();
    let gw = gateway(&cluster);
    let admin = Admin::connect(client_config(&gw)).await.unwrap();
    create_topic(&admin, "ft", 3).await;
    let before = admin.cluster_status().await.unwrap();
    let old_leader = leader_of(&before, "ft", 0);
    let victim = cluster
        .index_of(&client_addr_of(&before, &old_leader))
        .expect("the leader is a member");

    let producer = Arc::new(Producer::connect(producer_config(&gw)).await.unwrap());
    let sent = Arc::new(Sent::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (acked_tx, mut acked_rx) = tokio::sync::watch::channel(0u64);
    let acked_tx = Arc::new(acked_tx);
    let sender = {
        let (producer, sent, stop) = (Arc::clone(&producer), Arc::clone(&sent), Arc::clone(&stop));
        tokio::spawn(async move {
            let limit = Arc::new(tokio::sync::Semaphore::new(64));
            let mut tasks = Vec::new();
            let mut pace = tokio::time::interval(Duration::from_millis(2));
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) {
                pace.tick().await;
                let permit = Arc::clone(&limit).acquire_owned().await.unwrap();
                let d = producer
                    .send(ProducerRecord::new("ft", format!("r-{i}")).partition(0))
                    .await
                    .unwrap();
                let (sent, acked_tx) = (Arc::clone(&sent), Arc::clone(&acked_tx));
                tasks.push(tokio::spawn(async move {
                    match d.await {
                        Ok(m) => {
                            sent.acked.lock().unwrap().insert(i, m.offset.unwrap());
                            let n = sent.count.fetch_add(1, Ordering::SeqCst) + 1;
                            acked_tx.send_replace(n);
                        }
                        Err(e) => sent.failed.lock().unwrap().push(format!("r-{i}: {e}")),
                    }
                    drop(permit);
                }));
                i += 1;
            }
            for t in tasks {
                t.await.unwrap();
            }
            i
        })
    };
    reached(&mut acked_rx, 200).await;
    cluster.kill(victim);
    let at_kill = *acked_rx.borrow();
    // Producing goes on after the failover.
    reached(&mut acked_rx, at_kill + 300).await;
    stop.store(true, Ordering::SeqCst);
    let total = sender.await.unwrap();

    let failed = sent.failed.lock().unwrap().clone();
    assert!(failed.is_empty(), "failed deliveries: {failed:?}");
    let after = status_until(&admin, "a new leader of ft/0", |s| {
        s.partitions.iter().any(|p| {
            p.topic == "ft"
                && p.partition == 0
                && p.leader.as_deref().is_some_and(|l| l != old_leader)
        })
    })
    .await;
    assert_ne!(leader_of(&after, "ft", 0), old_leader);

    send_sentinels(&producer, "ft", 1).await;
    let reader = Cluster::new(client_config(&gw)).unwrap();
    let got = read_until(&reader, "ft", 0, "end").await;
    let acked = sent.acked.lock().unwrap().clone();
    assert_eq!(acked.len() as u64, total, "every send acknowledged");
    // Exactly once, in send order, each at its acknowledged offset.
    let expected: Vec<(u64, String)> = acked.iter().map(|(i, o)| (*o, format!("r-{i}"))).collect();
    assert_eq!(got.len(), expected.len(), "no record lost or duplicated");
    assert_eq!(got, expected);
    producer.close(Duration::from_secs(10)).await.unwrap();
    admin.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cluster_admin_calls_against_the_cluster() {
    let cluster = start();
    let gw = gateway(&cluster);
    let admin = Admin::connect(client_config(&gw)).await.unwrap();
    create_topic(&admin, "adm", 2).await;

    let brokers = admin.list_cluster().await.unwrap();
    assert_eq!(brokers.len(), 4);
    for m in &cluster.members {
        let b = brokers
            .iter()
            .find(|b| b.client_addr.as_deref() == Some(m.addr.as_str()))
            .unwrap_or_else(|| panic!("{} listed", m.addr));
        assert_eq!(b.status, "active");
        assert!(!b.id.is_empty() && !b.addr.is_empty());
    }

    let s = admin.cluster_status().await.unwrap();
    let raft_leader = s.raft_leader.clone().expect("a Raft leader");
    assert!(s.brokers.iter().any(|b| b.id == raft_leader));
    assert_eq!(s.brokers.len(), 4);
    assert_eq!(s.leaderless, 0);
    let gateway_id = s
        .brokers
        .iter()
        .find(|b| b.client_addr.as_deref() == Some(gw.as_str()))
        .unwrap()
        .id
        .clone();
    for p in s.partitions.iter().filter(|p| p.topic == "adm") {
        assert_eq!(p.replicas.len(), 3);
        assert!(
            !p.replicas.contains(&gateway_id),
            "the gateway holds no replica"
        );
        assert!(p.isr.contains(p.leader.as_ref().unwrap()));
    }

    let p0 = s
        .partitions
        .iter()
        .find(|p| p.topic == "adm" && p.partition == 0)
        .unwrap();
    let current = p0.leader.clone().unwrap();
    let target = p0.isr.iter().find(|b| **b != current).unwrap().clone();
    let e = admin.elect_leader("adm", 0, &target).await.unwrap();
    assert_eq!(e.topic, "adm");
    assert_eq!(e.partition, 0);
    assert_eq!(e.previous_leader.as_deref(), Some(current.as_str()));
    assert_eq!(e.leader, target);
    assert!(e.changed);
    assert_eq!(e.leader_epoch, p0.leader_epoch + 1);
    let again = admin.elect_leader("adm", 0, &target).await.unwrap();
    assert!(!again.changed);
    assert_eq!(again.leader_epoch, e.leader_epoch);
    let rejected = admin.elect_leader("adm", 0, &gateway_id).await.unwrap_err();
    assert_eq!(rejected.code(), "leader_election_rejected");
    admin.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_producer_follows_a_leader_moved_by_elect_leader() {
    let cluster = start();
    let gw = gateway(&cluster);
    let admin = Admin::connect(client_config(&gw)).await.unwrap();
    create_topic(&admin, "moving", 1).await;
    let producer = Producer::connect(producer_config(&gw)).await.unwrap();
    let send = |from: u32, to: u32| {
        let producer = &producer;
        async move {
            let mut ds = Vec::new();
            for i in from..to {
                ds.push(
                    producer
                        .send(ProducerRecord::new("moving", format!("m-{i}")).partition(0))
                        .await
                        .unwrap(),
                );
            }
            let mut offsets = Vec::new();
            for d in ds {
                offsets.push(d.await.unwrap().offset.unwrap());
            }
            offsets
        }
    };
    assert_eq!(send(0, 50).await, (0..50).collect::<Vec<u64>>());
    // The producer has the leader cached; move it (through another client).
    let s = admin.cluster_status().await.unwrap();
    let p = s.partitions.iter().find(|p| p.topic == "moving").unwrap();
    let old = p.leader.clone().unwrap();
    let target = p.isr.iter().find(|b| **b != old).unwrap().clone();
    assert!(
        admin
            .elect_leader("moving", 0, &target)
            .await
            .unwrap()
            .changed
    );
    // The first batch after the move meets the old leader's NOT_LEADER and
    // follows it; later ones go to the new leader at once.
    let offsets = send(50, 100).await;
    assert_eq!(offsets, (50..100).collect::<Vec<u64>>());
    let errors_after_move = producer.statistics().errors.values().sum::<u64>();
    assert!(errors_after_move >= 1, "the old leader redirected");
    for round in 2..4u32 {
        let offsets = send(round * 50, round * 50 + 50).await;
        let from = u64::from(round) * 50;
        assert_eq!(offsets, (from..from + 50).collect::<Vec<u64>>());
    }
    assert_eq!(
        producer.statistics().errors.values().sum::<u64>(),
        errors_after_move,
        "no redirect once the producer follows the new leader: {:?}",
        producer.statistics().errors
    );
    send_sentinels(&producer, "moving", 1).await;
    let reader = Cluster::new(client_config(&gw)).unwrap();
    let got = read_until(&reader, "moving", 0, "end").await;
    let expected: Vec<(u64, String)> = (0..200u64).map(|i| (i, format!("m-{i}"))).collect();
    assert_eq!(got, expected);
    producer.close(Duration::from_secs(10)).await.unwrap();
    admin.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reassign_partition_moves_the_replicas_and_keeps_every_record() {
    let cluster = start();
    let gw = gateway(&cluster);
    let admin = Admin::connect(client_config(&gw)).await.unwrap();
    let mut t = NewTopic::new("relocated").partitions(1);
    t.replication_factor = Some(2);
    admin.create_topic(&t).await.unwrap();
    let placed = |p: &&cursus::ClusterPartition| {
        p.topic == "relocated" && p.leader.is_some() && p.isr.len() == 2
    };
    let s = status_until(&admin, "relocated/0 fully replicated", |s| {
        s.partitions.iter().any(|p| placed(&p))
    })
    .await;
    let p = s.partitions.iter().find(placed).unwrap().clone();
    let producer = Producer::connect(producer_config(&gw)).await.unwrap();
    for i in 0..20 {
        producer
            .send(ProducerRecord::new("relocated", format!("r-{i}")).partition(0))
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let s = admin.cluster_status().await.unwrap();
    let data_brokers: Vec<String> = s
        .brokers
        .iter()
        .filter(|b| b.client_addr.as_deref() != Some(gw.as_str()))
        .map(|b| b.id.clone())
        .collect();
    let gateway_id = s
        .brokers
        .iter()
        .find(|b| !data_brokers.contains(&b.id))
        .unwrap()
        .id
        .clone();
    // The broker that holds no replica yet leads, the old leader goes.
    let old_leader = p.leader.clone().unwrap();
    let newcomer = data_brokers
        .iter()
        .find(|b| !p.replicas.contains(b))
        .unwrap();
    let kept = p.replicas.iter().find(|b| **b != old_leader).unwrap();
    let target = [newcomer.as_str(), kept.as_str()];
    let r = admin
        .reassign_partition("relocated", 0, &target)
        .await
        .unwrap();
    assert!(r.done);
    assert_eq!((r.topic.as_str(), r.partition), ("relocated", 0));
    assert_eq!(r.replicas, target);
    assert_eq!(r.isr, target);
    assert_eq!(r.target, target);
    assert_eq!(r.leader.as_deref(), Some(newcomer.as_str()));
    let s = admin.cluster_status().await.unwrap();
    let p = s
        .partitions
        .iter()
        .find(|p| p.topic == "relocated")
        .unwrap();
    assert_eq!(p.replicas, target);
    // Refusals are typed.
    let e = admin
        .reassign_partition("relocated", 0, &[gateway_id.as_str(), kept.as_str()])
        .await
        .unwrap_err();
    assert_eq!(e.code(), "invalid_replicas", "{e}");
    let e = admin
        .reassign_partition("relocated", 0, &[kept.as_str()])
        .await
        .unwrap_err();
    assert_eq!(e.code(), "invalid_replication_factor", "{e}");
    let e = admin
        .reassign_partition("relocated", 0, &[])
        .await
        .unwrap_err();
    assert_eq!(e.code(), "invalid_argument", "{e}");
    // Every record is still there, and the producer follows the new leader.
    send_sentinels(&producer, "relocated", 1).await;
    let reader = Cluster::new(client_config(&gw)).unwrap();
    let got = read_until(&reader, "relocated", 0, "end").await;
    let expected: Vec<(u64, String)> = (0..20u64).map(|i| (i, format!("r-{i}"))).collect();
    assert_eq!(got, expected);
    producer.close(Duration::from_secs(10)).await.unwrap();
    admin.close().await;
}
