//! Distributed mode against three real broker processes
//! (`cursus_testkit::TestCluster`): registration, topics through Raft,
//! METADATA leaders, redirects, replication with acks=all, failover after
//! kill -9, ELECT_LEADER, a follower catching up, whole-cluster restart.

mod common;

use common::cluster::*;
use common::SAFETY;
use cursus_testkit::{eventually_async, TestCluster};
use serde_json::Value;

/// The client address of broker id `id`.
/// Kills (SIGKILL) the member at client address `addr` and waits until
/// another member's replicated state says it is inactive; returns that
/// other member's address.
async fn kill_and_wait_inactive(cluster: &mut TestCluster, addr: &str) -> String {
    let victim = cluster.index_of(addr).unwrap();
    cluster.kill(victim);
    let survivor = cluster.members[(victim + 1) % cluster.members.len()]
        .addr
        .clone();
    until(&survivor, &format!("{addr} to be inactive"), |s| {
        inactive(s, addr)
    })
    .await;
    survivor
}

fn addr_of(s: &Value, id: &str) -> String {
    s["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == id)
        .expect("broker")["client_addr"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn three_brokers_form_a_cluster_and_share_topics() {
    let cluster = TestCluster::start(3);
    let mut c = client(&cluster.members[0].addr).await;
    let s = status(&mut c).await;
    assert_eq!(s["brokers"].as_array().unwrap().len(), 3);
    assert!(s["raft_leader"].is_string());
    assert!(s["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b["status"] == "active"));

    let created = c
        .ok("CREATE topic=orders partitions=3 replication_factor=3")
        .await;
    assert_eq!(field(&created, "replication_factor"), "3");

    // Any broker answers METADATA from the replicated state: one leader
    // per partition, spread over the three brokers.
    let mut other = client(&cluster.members[2].addr).await;
    let meta = other.ok("METADATA topic=orders").await;
    let leaders: Vec<&str> = field(&meta, "leaders").split(',').collect();
    assert_eq!(leaders.len(), 3);
    let mut distinct = leaders.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "{meta}");
    assert_eq!(field(&meta, "epochs"), "1,1,1");

    let brokers = c.ok("LIST_CLUSTER").await;
    let list: Value = serde_json::from_str(brokers.strip_prefix("OK brokers=").unwrap()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);

    // A replication factor above the broker count is refused.
    let e = c.error("CREATE topic=big replication_factor=4").await;
    assert_eq!(e.code, "invalid_replication_factor");

    // DELETE through any broker removes it everywhere.
    other.ok("DELETE topic=orders").await;
    assert_eq!(
        other.error("METADATA topic=orders").await.code,
        "topic_not_found"
    );
    // The others follow as they apply the deletion.
    until(&cluster.members[0].addr, "the deletion everywhere", |s| {
        !s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["topic"] == "orders")
    })
    .await;
    assert_eq!(
        c.error("METADATA topic=orders").await.code,
        "topic_not_found"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn non_leaders_redirect_and_acks_all_waits_for_the_isr() {
    let cluster = TestCluster::start(3);
    let mut c = client(&cluster.members[0].addr).await;
    c.ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    let s = status(&mut c).await;
    let p = partition(&s, "t", 0);
    let leader_addr = addr_of(&s, p["leader"].as_str().unwrap());
    let follower = cluster
        .members
        .iter()
        .find(|m| m.addr != leader_addr)
        .unwrap();

    // A follower redirects partition data to the leader.
    let mut f = client(&follower.addr).await;
    let e = f
        .error("PUBLISH topic=t partition=0 acks=1 producerId=p message=x")
        .await;
    assert_eq!(e.code, "NOT_LEADER");
    assert_eq!(e.fields["leader"], leader_addr);
    let e = f
        .error("CONSUME topic=t partition=0 offset=0 member=m")
        .await;
    assert_eq!(e.code, "NOT_LEADER");

    // acks=all on the leader is answered once every ISR member has it.
    for i in 0..10 {
        on_leader(
            &leader_addr,
            &format!("PUBLISH topic=t partition=0 acks=all producerId=p seqNum={} isIdempotent=true message=m{i}", i + 1),
        )
        .await;
    }
    // This broker's copy of the replicated state may trail the leader's.
    let s = until(&cluster.members[0].addr, "hwm 10", |s| {
        partition(s, "t", 0)["hwm"] == 10
    })
    .await;
    assert_eq!(partition(&s, "t", 0)["isr"].as_array().unwrap().len(), 3);
    // (Through whichever broker leads by now: on a loaded machine a
    // leader may miss its heartbeats and fail over.)
    let payload = on_leader_frame(
        &leader_addr,
        "CONSUME topic=t partition=0 offset=0 member=m",
    )
    .await;
    let batch = cursus_wire::Batch::decode(payload).unwrap();
    assert_eq!(batch.records.len(), 10);
    // Any broker answers LIST_OFFSETS with the leader's offsets.
    for m in &cluster.members {
        let line = on_leader(&m.addr, "LIST_OFFSETS topic=t").await;
        assert!(
            line.contains("P0:earliest=0:latest=10:"),
            "{}: {line}",
            m.addr
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_leader_fails_over_without_losing_acknowledged_records() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=t partitions=3 replication_factor=3")
        .await;
    let s = status(&mut c).await;
    // Partition led by a broker other than members[0], so that c survives.
    let (pid, leader_id) = (0..3)
        .map(|i| {
            (
                i,
                partition(&s, "t", i)["leader"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .find(|(_, l)| addr_of(&s, l) != first)
        .unwrap();
    let leader_addr = addr_of(&s, &leader_id);
    let epoch = partition(&s, "t", pid)["leader_epoch"].as_u64().unwrap();
    for i in 0..50 {
        on_leader(
            &leader_addr,
            &format!("PUBLISH topic=t partition={pid} acks=all producerId=p seqNum={} isIdempotent=true message=m{i}", i + 1),
        )
        .await;
    }
    let victim = cluster.index_of(&leader_addr).unwrap();
    cluster.kill(victim);
    let s = until(&first, "a new leader", |s| {
        let p = partition(s, "t", pid);
        p["leader"].is_string() && p["leader"] != leader_id.as_str()
    })
    .await;
    let p = partition(&s, "t", pid);
    assert_eq!(p["leader_epoch"].as_u64().unwrap(), epoch + 1);
    assert!(p["hwm"].as_u64().unwrap() >= 50);
    let new_leader = addr_of(&s, p["leader"].as_str().unwrap());
    let mut n = client(&new_leader).await;
    let consume = format!("CONSUME topic=t partition={pid} offset=0 member=m");
    let served = eventually_async!(SAFETY, "the new leader to serve", n.try_ok(&consume));
    let records = cursus_wire::Batch::decode(served).unwrap().records;
    let values: Vec<String> = records
        .iter()
        .map(|r| String::from_utf8_lossy(&r.payload).into_owned())
        .collect();
    let expected: Vec<String> = (0..50).map(|i| format!("m{i}")).collect();
    assert_eq!(
        values, expected,
        "every acknowledged record, once, in order"
    );
    // The producer's sequences came with the partition through the
    // replicated state: a retry of the last one is a duplicate there.
    assert_eq!(p["producers"], 1);
    let retried = on_leader(
        &new_leader,
        &format!("PUBLISH topic=t partition={pid} acks=all producerId=p seqNum=50 isIdempotent=true message=m49"),
    )
    .await;
    let retried: Value = serde_json::from_str(&retried).unwrap();
    assert_eq!(retried["last_offset"], 49, "{retried}");
    let e = n
        .error(&format!(
            "PUBLISH topic=t partition={pid} acks=all producerId=p seqNum=52 isIdempotent=true message=gap"
        ))
        .await;
    assert_eq!(e.code, "invalid_producer_sequence");
    assert_eq!(e.fields["expected"], "51");

    // The old leader comes back as a follower and rejoins the ISR.
    cluster.restart(victim);
    cluster.wait_ready(victim);
    until(&first, "the ISR to heal", |s| {
        partition(s, "t", pid)["isr"].as_array().unwrap().len() == 3
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn elect_leader_moves_leadership_once_and_only_to_the_isr() {
    let cluster = TestCluster::start(3);
    let mut c = client(&cluster.members[0].addr).await;
    c.ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    let s = status(&mut c).await;
    let p = partition(&s, "t", 0);
    let leader = p["leader"].as_str().unwrap().to_string();
    let target = p["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .find(|r| *r != leader)
        .unwrap();
    let line = format!("ELECT_LEADER topic=t partition=0 broker={target}");
    let r = c.ok(&line).await;
    assert_eq!(field(&r, "previous_leader"), leader);
    assert_eq!(field(&r, "leader"), target);
    assert_eq!(field(&r, "leader_epoch"), "2");
    assert_eq!(field(&r, "changed"), "true");
    // Idempotent retry.
    let r = c.ok(&line).await;
    assert_eq!(field(&r, "changed"), "false");
    assert_eq!(field(&r, "leader_epoch"), "2");
    // METADATA follows.
    let meta = c.ok("METADATA topic=t").await;
    assert_eq!(field(&meta, "epochs"), "2");
    assert_eq!(field(&meta, "leaders"), addr_of(&s, &target));
    // Errors.
    assert_eq!(
        c.error("ELECT_LEADER topic=t partition=0").await.code,
        "missing_broker"
    );
    assert_eq!(
        c.error("ELECT_LEADER topic=t partition=0 broker=broker-9")
            .await
            .code,
        "leader_election_rejected"
    );
    assert_eq!(
        c.error("ELECT_LEADER topic=nope partition=0 broker=broker-1")
            .await
            .code,
        "topic_not_found"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_follower_catches_up_and_the_cluster_survives_a_full_restart() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    let s = status(&mut c).await;
    let leader_addr = addr_of(&s, partition(&s, "t", 0)["leader"].as_str().unwrap());
    let follower = (0..3)
        .find(|i| cluster.members[*i].addr != leader_addr && cluster.members[*i].addr != first)
        .unwrap_or_else(|| {
            (0..3)
                .find(|i| cluster.members[*i].addr != leader_addr)
                .unwrap()
        });
    let follower_id = format!("broker-{}", cluster.members[follower].node_id);
    cluster.kill(follower);
    let status_addr = cluster
        .members
        .iter()
        .enumerate()
        .find(|(i, _)| *i != follower)
        .map(|(_, m)| m.addr.clone())
        .unwrap();
    until(&status_addr, "the ISR to shrink", |s| {
        !partition(s, "t", 0)["isr"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b == follower_id.as_str())
    })
    .await;
    for i in 0..20 {
        on_leader(
            &leader_addr,
            &format!("PUBLISH topic=t partition=0 acks=all producerId=p seqNum={} isIdempotent=true message=m{i}", i + 1),
        )
        .await;
    }
    cluster.restart(follower);
    cluster.wait_ready(follower);
    until(&status_addr, "the follower to catch up", |s| {
        partition(s, "t", 0)["isr"].as_array().unwrap().len() == 3
    })
    .await;

    // Whole-cluster restart: everything acknowledged is still there.
    for i in 0..3 {
        cluster.kill(i);
    }
    for i in 0..3 {
        cluster.restart(i);
    }
    for i in 0..3 {
        cluster.wait_ready(i);
    }
    let s = until(&first, "a leader for t", |s| {
        partition(s, "t", 0)["leader"].is_string()
    })
    .await;
    let leader_addr = addr_of(&s, partition(&s, "t", 0)["leader"].as_str().unwrap());
    let mut l = client(&leader_addr).await;
    let served = eventually_async!(
        SAFETY,
        "a leader to serve after the restart",
        l.try_ok("CONSUME topic=t partition=0 offset=0 member=m")
    );
    assert_eq!(
        cursus_wire::Batch::decode(served).unwrap().records.len(),
        20
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn groups_have_one_coordinator_and_keep_offsets_across_its_failover() {
    let mut cluster = TestCluster::start(3);
    let mut c = client(&cluster.members[0].addr).await;
    c.ok("CREATE topic=t partitions=2 replication_factor=3")
        .await;
    // Every broker names the same coordinator.
    let f = kv(&c.ok("FIND_COORDINATOR group=g").await);
    let coord = format!("{}:{}", f["host"], f["port"]);
    for m in &cluster.members {
        let mut x = client(&m.addr).await;
        let g = kv(&x.ok("FIND_COORDINATOR group=g").await);
        assert_eq!(format!("{}:{}", g["host"], g["port"]), coord);
    }
    // Group commands elsewhere are redirected to it.
    let other = cluster.members.iter().find(|m| m.addr != coord).unwrap();
    let mut o = client(&other.addr).await;
    let e = o.error("JOIN_GROUP topic=t group=g member=m").await;
    assert_eq!(e.code, "NOT_COORDINATOR");
    assert_eq!(format!("{}:{}", e.fields["host"], e.fields["port"]), coord);

    let mut k = client(&coord).await;
    k.ok("REGISTER_GROUP group=g topic=t").await;
    let j = kv(&k.ok("JOIN_GROUP topic=t group=g member=m").await);
    let (member, gen) = (j["member"].clone(), j["generation"].clone());
    k.ok(&format!(
        "SYNC_GROUP topic=t group=g member={member} generation={gen}"
    ))
    .await;
    k.ok(&format!(
        "COMMIT_OFFSET topic=t partition=1 group=g offset=7 member={member} generation={gen}"
    ))
    .await;

    // The coordinator dies: another broker takes the group over with the
    // committed offset, and the member rejoins there.
    let survivor = kill_and_wait_inactive(&mut cluster, &coord).await;
    let mut s = client(&survivor).await;
    let f = kv(&s.ok("FIND_COORDINATOR group=g").await);
    let new_coord = format!("{}:{}", f["host"], f["port"]);
    assert_ne!(new_coord, coord);
    let mut n = client(&new_coord).await;
    assert_eq!(
        n.ok("FETCH_OFFSET topic=t partition=1 group=g").await,
        "OK offset=7 committed=true"
    );
    let j = kv(&n.ok("JOIN_GROUP topic=t group=g member=m").await);
    assert!(!j["member"].is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn read_committed_never_passes_the_committed_hwm() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    let s = status(&mut c).await;
    let leader_addr = addr_of(&s, partition(&s, "t", 0)["leader"].as_str().unwrap());
    let mut l = client(&leader_addr).await;
    on_leader(
        &leader_addr,
        "PUBLISH topic=t partition=0 acks=all producerId=p message=committed",
    )
    .await;
    // Both followers die: nothing new can be committed.
    let leader = cluster.index_of(&leader_addr).unwrap();
    for i in (0..3).filter(|i| *i != leader) {
        cluster.kill(i);
    }
    l.ok("PUBLISH topic=t partition=0 acks=1 producerId=p message=uncommitted")
        .await;
    let batch = l
        .consume("CONSUME topic=t partition=0 offset=0 member=m")
        .await;
    let seen: Vec<_> = batch.records.iter().map(|r| r.payload.clone()).collect();
    assert_eq!(seen, vec![bytes::Bytes::from_static(b"committed")]);
    // Followers back: the record is replicated, committed, then visible.
    for i in (0..3).filter(|i| *i != leader) {
        cluster.restart(i);
    }
    eventually_async!(SAFETY, "the acks=1 record to become visible", async {
        let batch = l
            .consume("CONSUME topic=t partition=0 offset=0 member=m")
            .await;
        (batch.records.len() == 2)
            .then_some(())
            .ok_or(batch.records.len())
    });
}

/// Read your writes: a record the leader acknowledged with acks=all is
/// readable on that leader at once, before its reconciler has caught up
/// with the replicated high-water mark (a replay proof or a consume right
/// after the ack once missed it).
#[tokio::test(flavor = "multi_thread")]
async fn an_acknowledged_record_is_readable_on_the_leader_at_once() {
    let cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    let s = status(&mut c).await;
    let leader_addr = addr_of(&s, partition(&s, "t", 0)["leader"].as_str().unwrap());
    on_leader(
        &leader_addr,
        "PUBLISH topic=t partition=0 acks=all producerId=p message=warm-up",
    )
    .await;
    let mut l = client(&leader_addr).await;
    for i in 1..=100u64 {
        l.ok(&format!(
            "PUBLISH topic=t partition=0 acks=all producerId=p message=m{i}"
        ))
        .await;
        let batch = l
            .consume(&format!("CONSUME topic=t partition=0 offset={i} member=m"))
            .await;
        let first = batch.records.first().map(|r| r.payload.clone());
        assert_eq!(
            first,
            Some(bytes::Bytes::from(format!("m{i}"))),
            "record {i}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn alter_truncate_and_describe_go_through_the_cluster() {
    let cluster = TestCluster::start(3);
    let mut c = client(&cluster.members[0].addr).await;
    c.ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    let s = status(&mut c).await;
    let leader_addr = addr_of(&s, partition(&s, "t", 0)["leader"].as_str().unwrap());
    for i in 0..3 {
        on_leader(
            &leader_addr,
            &format!("PUBLISH topic=t partition=0 acks=all producerId=p seqNum={} isIdempotent=true message=m{i}", i + 1),
        )
        .await;
    }
    // ALTER on one broker: every broker reports the new override, and
    // acks=all is refused while the ISR (3) is below it.
    let mut other = client(&cluster.members[2].addr).await;
    other
        .ok("ALTER_TOPIC_CONFIG topic=t min_in_sync_replicas=3")
        .await;
    // Another broker applies the change within a Raft round (metadata is
    // eventually consistent across brokers, read-your-writes on the one
    // that answered): wait for it, then its answers agree.
    eventually_async!(SAFETY, "revision 2 to reach member 0", async {
        let metadata = c.ok("METADATA topic=t").await;
        (field(&metadata, "revision") == "2")
            .then_some(())
            .ok_or(metadata)
    });
    let d: Value = serde_json::from_str(&c.ok("DESCRIBE topic=t").await).unwrap();
    assert_eq!(d["definition"]["min_in_sync_replicas"], 3);
    let p = &d["partitions"][0];
    assert_eq!(p["leader"], leader_addr.as_str());
    assert_eq!(p["replicas"].as_array().unwrap().len(), 3);
    assert_eq!(p["isr"].as_array().unwrap().len(), 3);
    assert_eq!(p["hwm"], 3);
    on_leader(
        &leader_addr,
        "PUBLISH topic=t partition=0 acks=all producerId=p message=ok",
    )
    .await;
    // TRUNCATE through another broker empties the leader's copy.
    let e = other.error("TRUNCATE topic=t expected_revision=1").await;
    assert_eq!(e.code, "topic_revision_conflict");
    let r = other.ok("TRUNCATE topic=t expected_revision=2").await;
    assert_eq!(field(&r, "revision"), "3");
    assert_eq!(field(&r, "lifecycle_epoch"), "1");
    let published = eventually_async!(SAFETY, "the truncate to reach the leader", async {
        let mut l = client(&leader_addr).await;
        let consumed = l
            .try_ok("CONSUME topic=t partition=0 offset=0 member=m")
            .await?;
        let left = cursus_wire::Batch::decode(consumed).unwrap().records.len();
        if left > 0 {
            return Err(format!("{left} records left"));
        }
        // The new generation's leader may still be preparing
        // (leader_not_found, retryable).
        l.try_ok("PUBLISH topic=t partition=0 acks=all producerId=p message=after")
            .await
    });
    let a: Value = serde_json::from_slice(&published).unwrap();
    assert_eq!(a["last_offset"], 0, "offsets restart at 0");
}

#[tokio::test(flavor = "multi_thread")]
async fn event_sourcing_follows_the_leader_and_snapshots_survive_failover() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=es partitions=1 replication_factor=3 event_sourcing=true")
        .await;
    for v in 1..=3 {
        on_leader(
            &first,
            &format!("APPEND_STREAM topic=es key=order-1 version={v} event_type=E message=e{v}"),
        )
        .await;
    }
    on_leader(
        &first,
        "SAVE_SNAPSHOT topic=es key=order-1 version=2 message=state2",
    )
    .await;

    let s = status(&mut c).await;
    let leader_id = partition(&s, "es", 0)["leader"]
        .as_str()
        .unwrap()
        .to_string();
    let victim = cluster.index_of(&addr_of(&s, &leader_id)).unwrap();
    cluster.kill(victim);
    let survivor = cluster.members[(victim + 1) % 3].addr.clone();
    until(&survivor, "a new leader for es", |s| {
        let l = &partition(s, "es", 0)["leader"];
        l.is_string() && *l != leader_id.as_str()
    })
    .await;
    let v = on_leader(&survivor, "STREAM_VERSION topic=es key=order-1").await;
    assert!(v.contains("version=3"), "{v}");
    let snap = on_leader(&survivor, "READ_SNAPSHOT topic=es key=order-1").await;
    assert_eq!(snap, r#"OK snapshot={"version":2,"payload":"state2"}"#);
    on_leader(
        &survivor,
        "APPEND_STREAM topic=es key=order-1 version=4 event_type=E message=e4",
    )
    .await;
}

/// The client address of the coordinator of `key`.
async fn coordinator(addr: &str, key: &str) -> String {
    let mut c = client(addr).await;
    let f = kv(&c
        .ok(&format!("FIND_COORDINATOR transactional_id={key}"))
        .await);
    format!("{}:{}", f["host"], f["port"])
}

async fn committed_values(start: &str, partition: u32) -> Vec<String> {
    let reply = on_leader_frame(
        start,
        &format!("CONSUME topic=t partition={partition} offset=0 member=m"),
    )
    .await;
    cursus_wire::Batch::decode(reply)
        .unwrap()
        .records
        .iter()
        .map(|r| String::from_utf8_lossy(&r.payload).into_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn transactions_span_partitions_led_by_other_brokers_and_survive_their_coordinator() {
    let mut cluster = TestCluster::start(3);
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=t partitions=3 replication_factor=3")
        .await;
    let coord = coordinator(&first, "tx").await;
    let e = client(
        cluster
            .members
            .iter()
            .find(|m| m.addr != coord)
            .unwrap()
            .addr
            .as_str(),
    )
    .await
    .error("INIT_PRODUCER_ID transactional_id=tx")
    .await;
    assert_eq!(e.code, "NOT_COORDINATOR");

    let mut k = client(&coord).await;
    let init = kv(&k.ok("INIT_PRODUCER_ID transactional_id=tx").await);
    let (pid, epoch) = (init["producerId"].clone(), init["epoch"].clone());
    let session = format!("transactional_id=tx producerId={pid} epoch={epoch}");
    k.ok(&format!("BEGIN_TXN {session}")).await;
    for p in 0..3u32 {
        k.ok(&format!(
            "TXN_PUBLISH {session} topic=t partition={p} seqNum=1 message=c{p}"
        ))
        .await;
    }
    // Open: invisible to read_committed on every leader.
    for p in 0..3 {
        assert!(committed_values(&first, p).await.is_empty());
    }
    let end = kv(&k.ok(&format!("END_TXN {session} result=commit")).await);
    assert_eq!(end["state"], "committed");
    assert_eq!(end["messages"], "3");
    for p in 0..3 {
        assert_eq!(committed_values(&first, p).await, vec![format!("c{p}")]);
    }

    // A second transaction, open when its coordinator dies: the new
    // coordinator has its state and aborts it on request.
    let init = kv(&k.ok("INIT_PRODUCER_ID transactional_id=tx").await);
    let epoch = init["epoch"].clone();
    assert_eq!(init["producerId"], pid, "the same producer, a new epoch");
    let session = format!("transactional_id=tx producerId={pid} epoch={epoch}");
    k.ok(&format!("BEGIN_TXN {session}")).await;
    for p in 0..3u32 {
        k.ok(&format!(
            "TXN_PUBLISH {session} topic=t partition={p} seqNum=1 message=a{p}"
        ))
        .await;
    }
    let survivor = kill_and_wait_inactive(&mut cluster, &coord).await;
    let new_coord = coordinator(&survivor, "tx").await;
    assert_ne!(new_coord, coord);
    let mut n = client(&new_coord).await;
    let status = kv(&n.ok("TXN_STATUS transactional_id=tx").await);
    assert_eq!(status["state"], "open");
    assert_eq!(status["participants"], "3");
    let end_txn = format!("END_TXN {session} result=abort");
    let ended = eventually_async!(SAFETY, "the abort to finish", async {
        n.try_retryable(&end_txn).await.map_err(|e| e.render())
    });
    assert_eq!(kv(&String::from_utf8_lossy(&ended))["state"], "aborted");
    for p in 0..3 {
        assert_eq!(
            committed_values(&survivor, p).await,
            vec![format!("c{p}")],
            "aborted records stay invisible"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cleanly_stopped_leader_hands_over_without_waiting_for_its_session() {
    // A session far longer than the test: only the broker's own
    // LEAVE on SIGTERM can move leadership.
    let mut cluster = TestCluster::start_with_config(3, "broker_session_timeout_ms = 600000");
    let first = cluster.members[0].addr.clone();
    let mut c = client(&first).await;
    c.ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    let s = status(&mut c).await;
    let leader_id = partition(&s, "t", 0)["leader"]
        .as_str()
        .unwrap()
        .to_string();
    let victim = cluster.index_of(&addr_of(&s, &leader_id)).unwrap();
    cluster.stop(victim);
    let survivor = cluster.members[(victim + 1) % 3].addr.clone();
    let s = until(&survivor, "a new leader after the clean stop", |s| {
        let l = &partition(s, "t", 0)["leader"];
        l.is_string() && *l != leader_id.as_str()
    })
    .await;
    let gone = s["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == leader_id.as_str())
        .unwrap();
    assert_eq!(gone["status"], "inactive");
}
