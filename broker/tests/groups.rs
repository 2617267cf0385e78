//! Consumer groups and durable offsets over real TCP: registration, joins
//! and rebalances, session expiry, commits, batch commits, offset resume,
//! durability across `kill -9`, and the DELETE/TRUNCATE guard.

mod common;

use std::collections::BTreeSet;

use common::*;
use cursus_wire::ErrorClass;

async fn fill(c: &mut Client, topic: &str, partition: u32, n: usize) {
    for i in 0..n {
        c.ok(&format!(
            "PUBLISH topic={topic} partition={partition} acks=1 producerId=p message=m{i}"
        ))
        .await;
    }
}

/// `[0,2]` → `{0, 2}`.
fn partitions(list: &str) -> BTreeSet<u32> {
    list.trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|p| p.parse().unwrap())
        .collect()
}

/// Joins and returns (member id, generation, assignments).
async fn join(c: &mut Client, line: &str) -> (String, u64, BTreeSet<u32>) {
    let f = kv(&c.ok(line).await);
    (
        f["member"].clone(),
        f["generation"].parse().unwrap(),
        f.get("assignments")
            .map(|a| partitions(a))
            .unwrap_or_default(),
    )
}

async fn sync(c: &mut Client, topic: &str, group: &str, member: &str, gen: u64) -> BTreeSet<u32> {
    let f = kv(&c
        .ok(&format!(
            "SYNC_GROUP topic={topic} group={group} member={member} generation={gen}"
        ))
        .await);
    partitions(&f["assignments"])
}

#[tokio::test]
async fn register_group_needs_exactly_one_selector() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=a partitions=2").await;
    c.ok("CREATE topic=b partitions=3").await;
    c.ok("CREATE topic=other partitions=1").await;
    for bad in [
        "REGISTER_GROUP group=g",
        "REGISTER_GROUP group=g topic=a topics=a,b",
        "REGISTER_GROUP group=g topic=a pattern=a*",
    ] {
        let e = c.error(bad).await;
        assert_eq!(e.code, "invalid_subscription", "{bad}");
        assert_eq!(e.class, ErrorClass::Validation);
    }
    assert_eq!(
        c.error("REGISTER_GROUP topic=a").await.code,
        "missing_group"
    );
    let e = c.error("REGISTER_GROUP group=g topic=nope").await;
    assert_eq!(
        (e.code.as_str(), e.class),
        ("topic_not_found", ErrorClass::NotFound)
    );
    assert_eq!(
        c.error("REGISTER_GROUP group=g topics=a,nope").await.code,
        "topic_not_found"
    );

    assert_eq!(
        c.ok("REGISTER_GROUP group=single topic=a").await,
        "OK group=single selector=topic topic=a expansion=a:2 partitions=2 created=true"
    );
    let f = kv(&c.ok("REGISTER_GROUP group=multi topics=b,a").await);
    assert_eq!(f["topics"], "a,b");
    assert_eq!(
        (f["expansion"].as_str(), f["partitions"].as_str()),
        ("a:2,b:3", "5")
    );
    let f = kv(&c.ok("REGISTER_GROUP group=pat pattern=?").await);
    assert_eq!(
        (f["selector"].as_str(), f["pattern"].as_str()),
        ("pattern", "?")
    );
    assert_eq!(
        (f["expansion"].as_str(), f["partitions"].as_str()),
        ("a:2,b:3", "5")
    );
    // Same selector again: a no-op; another selector: rejected.
    assert_eq!(
        kv(&c.ok("REGISTER_GROUP group=single topic=a").await)["created"],
        "false"
    );
    let e = c.error("REGISTER_GROUP group=single topic=b").await;
    assert_eq!(e.code, "invalid_subscription");
    assert_eq!(e.fields["reason"], "selector_conflict");

    assert_eq!(
        c.ok("LIST_GROUPS").await,
        "OK count=3 groups=multi,pat,single"
    );
    let f = kv(&c.ok("FIND_COORDINATOR group=single").await);
    assert_eq!(f["coordinator_id"], "broker-1");
    assert_eq!(f["port"], broker.addr.port().to_string());
    // A registration without commits: offset 0, nothing committed.
    assert_eq!(
        c.ok("FETCH_OFFSET topic=a partition=1 group=single").await,
        "OK offset=0 committed=false"
    );
    assert!(c.ok("HELP").await.contains("JOIN_GROUP"));
}

#[tokio::test]
async fn two_members_join_and_leave_with_reassignment() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=4").await;
    // A fresh join registers the group.
    let (m1, g1, a1) = join(&mut c, "JOIN_GROUP topic=t group=g member=consumer-1").await;
    let suffix = m1.strip_prefix("consumer-1-").expect("prefix kept");
    assert!(
        suffix.len() == 4 && suffix.bytes().all(|b| b.is_ascii_digit()),
        "{m1}"
    );
    assert_eq!(g1, 1);
    assert_eq!(a1, BTreeSet::from([0, 1, 2, 3]));

    let (m2, g2, a2) = join(&mut c, "JOIN_GROUP topic=t group=g member=consumer-2").await;
    assert_eq!(g2, 2);
    // The first member learns of the rebalance from its heartbeat.
    let e = c
        .error(&format!(
            "HEARTBEAT topic=t group=g member={m1} generation=1"
        ))
        .await;
    assert_eq!(e.code, "GEN_MISMATCH");
    assert_eq!(e.class, ErrorClass::Fencing);
    assert!(!e.retryable);
    assert_eq!(e.fields["current"], "2");
    assert_eq!(e.fields["requested"], "1");
    assert_eq!(e.fields["group"], "g");
    assert_eq!(e.fields["member"], m1);
    // SYNC_GROUP with a stale generation is fenced too.
    let e = c
        .error(&format!(
            "SYNC_GROUP topic=t group=g member={m1} generation=1"
        ))
        .await;
    assert_eq!(e.code, "GEN_MISMATCH");
    // Rejoining with the actual id keeps it and returns the new generation.
    let (again, g, a1) = join(&mut c, &format!("JOIN_GROUP topic=t group=g member={m1}")).await;
    assert_eq!((again.as_str(), g), (m1.as_str(), 2));
    assert_eq!(sync(&mut c, "t", "g", &m1, 2).await, a1);
    assert_eq!(sync(&mut c, "t", "g", &m2, 2).await, a2);
    // Every partition exactly once in this generation.
    assert_eq!(a1.len() + a2.len(), 4);
    assert!(a1.is_disjoint(&a2));
    assert_eq!(a1.union(&a2).count(), 4);
    assert_eq!(
        c.ok(&format!(
            "HEARTBEAT topic=t group=g member={m2} generation=2"
        ))
        .await,
        format!("OK member={m2} generation=2")
    );
    // GROUP_STATUS shows both members.
    let status: serde_json::Value =
        serde_json::from_str(&c.ok("GROUP_STATUS group=g").await).unwrap();
    assert_eq!(status["status"], "OK");
    assert_eq!(status["group_name"], "g");
    assert_eq!(status["topic_name"], "t");
    assert_eq!(status["state"], "Stable");
    assert_eq!(status["generation"], 2);
    assert_eq!(status["member_count"], 2);
    assert_eq!(status["partition_count"], 4);
    let members = status["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    assert!(members[0]["last_heartbeat"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    assert!(status["last_rebalance"].as_str().unwrap().ends_with('Z'));

    // The first member leaves: the second gets everything in generation 3.
    assert_eq!(
        c.ok(&format!("LEAVE_GROUP topic=t group=g member={m1}"))
            .await,
        format!("OK group=g member={m1} left=true")
    );
    let e = c
        .error(&format!("HEARTBEAT topic=t group=g member={m1}"))
        .await;
    assert_eq!(e.code, "member_not_found");
    assert_eq!(e.class, ErrorClass::Fencing);
    assert_eq!(e.fields["member"], m1);
    assert_eq!(e.fields["group"], "g");
    assert_eq!(
        c.error(&format!("LEAVE_GROUP topic=t group=g member={m1}"))
            .await
            .code,
        "member_not_found"
    );
    let e = c
        .error(&format!(
            "HEARTBEAT topic=t group=g member={m2} generation=2"
        ))
        .await;
    assert_eq!(e.fields["current"], "3");
    let (same, g, all) = join(&mut c, &format!("JOIN_GROUP topic=t group=g member={m2}")).await;
    assert_eq!((same.as_str(), g), (m2.as_str(), 3));
    assert_eq!(all, BTreeSet::from([0, 1, 2, 3]));
    // Errors of unknown groups and topics.
    let e = c.error("SYNC_GROUP group=nope member=x generation=1").await;
    assert_eq!(
        (e.code.as_str(), e.class),
        ("group_not_found", ErrorClass::NotFound)
    );
    assert_eq!(e.fields["group"], "nope");
    assert_eq!(
        c.error("JOIN_GROUP group=nope member=x").await.code,
        "group_not_found"
    );
    c.ok("CREATE topic=u partitions=1").await;
    let e = c.error("JOIN_GROUP topic=u group=g member=x").await;
    assert_eq!(
        (e.code.as_str(), e.class),
        ("topic_not_assigned_to_group", ErrorClass::Conflict)
    );
    assert_eq!(
        c.error("JOIN_GROUP topic=t group=g").await.code,
        "missing_member"
    );
}

#[tokio::test]
async fn multi_topic_and_pattern_groups_follow_topics_and_partitions() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=orders.eu partitions=1").await;
    c.ok("CREATE topic=orders.us partitions=2").await;
    c.ok("REGISTER_GROUP group=all pattern=orders.*").await;
    let f = kv(&c.ok("JOIN_GROUP group=all member=w").await);
    let m = f["member"].clone();
    assert_eq!(f["generation"], "1");
    assert_eq!(
        f["topic_assignments"],
        "orders.eu:P0,orders.us:P0,orders.us:P1"
    );
    // A new matching topic is picked up and rebalances.
    c.ok("CREATE topic=orders.jp partitions=1").await;
    let e = c
        .error(&format!("HEARTBEAT group=all member={m} generation=1"))
        .await;
    assert_eq!(e.code, "GEN_MISMATCH");
    let f = kv(&c
        .ok(&format!("SYNC_GROUP group=all member={m} generation=2"))
        .await);
    assert_eq!(
        f["topic_assignments"],
        "orders.eu:P0,orders.jp:P0,orders.us:P0,orders.us:P1"
    );

    // A single-topic group rebalances when partitions are added.
    c.ok("CREATE topic=s partitions=1").await;
    let (m, g, a) = join(&mut c, "JOIN_GROUP topic=s group=sg member=x").await;
    assert_eq!((g, a.len()), (1, 1));
    c.ok("CREATE topic=s partitions=3").await;
    let e = c
        .error(&format!(
            "HEARTBEAT topic=s group=sg member={m} generation=1"
        ))
        .await;
    assert_eq!(e.fields["current"], "2");
    assert_eq!(
        sync(&mut c, "s", "sg", &m, 2).await,
        BTreeSet::from([0, 1, 2])
    );

    // topics= group with two members: each partition once.
    c.ok("CREATE topic=x partitions=2").await;
    c.ok("CREATE topic=y partitions=2").await;
    c.ok("REGISTER_GROUP group=xy topics=x,y").await;
    let f1 = kv(&c.ok("JOIN_GROUP group=xy member=a").await);
    let f2 = kv(&c.ok("JOIN_GROUP group=xy member=b").await);
    let f1 = kv(&c
        .ok(&format!(
            "SYNC_GROUP group=xy member={} generation=2",
            f1["member"]
        ))
        .await);
    let mut all: Vec<String> = f1["topic_assignments"]
        .split(',')
        .chain(f2["topic_assignments"].split(','))
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    all.sort();
    assert_eq!(all, ["x:P0", "x:P1", "y:P0", "y:P1"]);
}

#[tokio::test]
async fn commit_offset_rules() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=2").await;
    let (m1, _, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=a").await;
    let (m2, _, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=b").await;
    let a1 = sync(&mut c, "t", "g", &m1, 2).await;
    let a2 = sync(&mut c, "t", "g", &m2, 2).await;
    let own = *a1.iter().next().unwrap();
    let other = *a2.iter().next().unwrap();
    let base = format!("COMMIT_OFFSET topic=t partition={own} group=g");

    let e = c.error(&format!("{base} offset=5 member={m1}")).await;
    assert_eq!(
        (e.code.as_str(), e.class),
        ("missing_generation", ErrorClass::Validation)
    );
    assert_eq!(e.fields["command"], "COMMIT_OFFSET");
    let e = c.error(&format!("{base} offset=5 generation=2")).await;
    assert_eq!(e.code, "missing_member");
    let e = c
        .error(&format!(
            "COMMIT_OFFSET topic=t partition={own} offset=5 member={m1} generation=2"
        ))
        .await;
    assert_eq!(e.code, "missing_group");
    let e = c
        .error(&format!("{base} offset=x member={m1} generation=2"))
        .await;
    assert_eq!(e.code, "invalid_offset");
    let e = c
        .error(&format!("{base} offset=5 member={m1} generation=1"))
        .await;
    assert_eq!(e.code, "GEN_MISMATCH");
    assert_eq!(
        (e.fields["current"].as_str(), e.fields["requested"].as_str()),
        ("2", "1")
    );
    let e = c
        .error(&format!("{base} offset=5 member=ghost-0001 generation=2"))
        .await;
    assert_eq!(e.code, "member_not_found");
    let e = c
        .error(&format!(
            "COMMIT_OFFSET topic=t partition={other} group=g offset=5 member={m1} generation=2"
        ))
        .await;
    assert_eq!(
        (e.code.as_str(), e.class),
        ("NOT_OWNER", ErrorClass::Fencing)
    );
    assert_eq!(e.fields["partition"], other.to_string());
    assert_eq!(e.fields["member"], m1);
    assert_eq!(e.fields["group"], "g");
    assert_eq!(e.fields["generation"], "2");
    let e = c
        .error(&format!(
            "COMMIT_OFFSET topic=t partition=9 group=g offset=5 member={m1} generation=2"
        ))
        .await;
    assert_eq!(e.code, "partition_not_found");

    assert_eq!(
        c.ok(&format!("{base} offset=5 member={m1} generation=2"))
            .await,
        "OK"
    );
    // Same offset: idempotent.
    assert_eq!(
        c.ok(&format!("{base} offset=5 member={m1} generation=2"))
            .await,
        "OK"
    );
    let e = c
        .error(&format!("{base} offset=4 member={m1} generation=2"))
        .await;
    assert_eq!(
        (e.code.as_str(), e.class),
        ("offset_regression", ErrorClass::Conflict)
    );
    assert!(e.fields["reason"].contains('4'));
    assert_eq!(
        c.ok(&format!("FETCH_OFFSET topic=t partition={own} group=g"))
            .await,
        "OK offset=5 committed=true"
    );
    c.ok(&format!("{base} offset=7 member={m1} generation=2"))
        .await;
    assert_eq!(
        kv(&c
            .ok(&format!("FETCH_OFFSET topic=t partition={own} group=g"))
            .await)["offset"],
        "7"
    );
    // Offsets are per group and partition.
    assert_eq!(
        c.ok(&format!("FETCH_OFFSET topic=t partition={other} group=g"))
            .await,
        "OK offset=0 committed=false"
    );
    assert_eq!(
        c.ok(&format!("FETCH_OFFSET topic=t partition={own} group=h"))
            .await,
        "OK offset=0 committed=false"
    );
    assert_eq!(
        c.error("FETCH_OFFSET topic=t partition=0").await.code,
        "missing_group"
    );
    assert_eq!(
        c.error("FETCH_OFFSET topic=nope partition=0 group=g")
            .await
            .code,
        "topic_not_found"
    );

    // CONSUME starts at the committed offset even when offset= is lower.
    fill(&mut c, "t", own, 10).await;
    let b = c
        .consume(&format!(
            "CONSUME topic=t partition={own} offset=0 member={m1} group=g batch=2"
        ))
        .await;
    assert_eq!(b.records[0].offset, 7);
    // Another group without a commit reads from offset=.
    let b = c
        .consume(&format!(
            "CONSUME topic=t partition={own} offset=1 member=x group=h batch=1"
        ))
        .await;
    assert_eq!(b.records[0].offset, 1);
}

#[tokio::test]
async fn batch_commit_is_all_or_nothing() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=4").await;
    let (m1, _, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=a").await;
    let (m2, _, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=b").await;
    let mine: Vec<u32> = sync(&mut c, "t", "g", &m1, 2).await.into_iter().collect();
    let theirs: Vec<u32> = sync(&mut c, "t", "g", &m2, 2).await.into_iter().collect();
    let (p, q, x) = (mine[0], mine[1], theirs[0]);
    let base = format!("BATCH_COMMIT topic=t group=g member={m1}");
    let fetch = |part: u32| format!("FETCH_OFFSET topic=t partition={part} group=g");

    assert_eq!(
        c.ok(&format!("{base} generation=2 offsets=P{p}:10,P{q}:20"))
            .await,
        "OK batched=2"
    );
    let cases: Vec<(String, &str)> = vec![
        (format!("{base} offsets=P{p}:11"), "missing_generation"),
        (
            format!("{base} generation=2 offsets=P{p}:11,P{p}:12"),
            "duplicate_partition",
        ),
        (
            format!("{base} generation=2 offsets=P{p}:11,{q}:21"),
            "invalid_batch_commit_entry",
        ),
        (
            format!("{base} generation=2 offsets=P{p}:11,P{q}:abc"),
            "invalid_batch_commit_entry",
        ),
        (format!("{base} generation=2"), "invalid_batch_commit_entry"),
        (format!("{base} generation=2 offsets=,"), "no_valid_offsets"),
        (
            format!("{base} generation=2 offsets=P{p}:11,P{x}:5"),
            "NOT_OWNER",
        ),
        (
            format!("{base} generation=1 offsets=P{p}:11"),
            "GEN_MISMATCH",
        ),
        (
            format!("BATCH_COMMIT topic=t group=g member=ghost-1 generation=2 offsets=P{p}:11"),
            "member_not_found",
        ),
        // One regression rejects the whole batch.
        (
            format!("{base} generation=2 offsets=P{p}:11,P{q}:19"),
            "offset_regression",
        ),
    ];
    for (line, code) in &cases {
        assert_eq!(&c.error(line).await.code, code, "{line}");
        // Nothing moved.
        assert_eq!(kv(&c.ok(&fetch(p)).await)["offset"], "10", "{line}");
        assert_eq!(kv(&c.ok(&fetch(q)).await)["offset"], "20", "{line}");
    }
    let e = c
        .error(&format!("{base} generation=2 offsets=P{p}:11,P{p}:12"))
        .await;
    assert_eq!(e.fields["partition"], p.to_string());
    assert_eq!(e.fields["group"], "g");
    assert_eq!(e.fields["topic"], "t");
    let too_many: Vec<String> = (0..1025).map(|i| format!("P{i}:1")).collect();
    let e = c
        .error(&format!(
            "{base} generation=2 offsets={}",
            too_many.join(",")
        ))
        .await;
    assert_eq!(e.code, "invalid_batch_commit_entry");
    // Same offsets again plus an advance: OK.
    assert_eq!(
        c.ok(&format!("{base} generation=2 offsets=P{p}:10,P{q}:25"))
            .await,
        "OK batched=2"
    );
    assert_eq!(kv(&c.ok(&fetch(q)).await)["offset"], "25");
}

#[tokio::test]
async fn registrations_and_commits_survive_kill_9() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=2").await;
    c.ok("REGISTER_GROUP group=idle topic=t").await;
    let (m, g, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=a").await;
    c.ok(&format!(
        "BATCH_COMMIT topic=t group=g member={m} generation={g} offsets=P0:3,P1:4"
    ))
    .await;
    for o in 5..40 {
        c.ok(&format!(
            "COMMIT_OFFSET topic=t partition=0 group=g offset={o} member={m} generation={g}"
        ))
        .await;
    }
    drop(c);
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(broker.http_get("/ready"), 200);
    assert_eq!(
        c.ok("FETCH_OFFSET topic=t partition=0 group=g").await,
        "OK offset=39 committed=true"
    );
    assert_eq!(
        c.ok("FETCH_OFFSET topic=t partition=1 group=g").await,
        "OK offset=4 committed=true"
    );
    assert_eq!(
        c.ok("FETCH_OFFSET topic=t partition=0 group=idle").await,
        "OK offset=0 committed=false"
    );
    assert_eq!(c.ok("LIST_GROUPS").await, "OK count=2 groups=g,idle");
    // Membership is not durable: the old member must rejoin.
    let e = c
        .error(&format!("HEARTBEAT topic=t group=g member={m}"))
        .await;
    assert_eq!(e.code, "member_not_found");
    let (m, g, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=a").await;
    let e = c
        .error(&format!(
            "COMMIT_OFFSET topic=t partition=0 group=g offset=38 member={m} generation={g}"
        ))
        .await;
    assert_eq!(e.code, "offset_regression");
    // The journal was compacted on restart and still replays.
    drop(c);
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(
        kv(&c.ok("FETCH_OFFSET topic=t partition=0 group=g").await)["offset"],
        "39"
    );
}

#[tokio::test]
async fn an_unversioned_record_keeps_the_broker_not_ready() {
    let mut broker = TestBroker::start();
    {
        let mut c = broker.client().await;
        c.ok("CREATE topic=t partitions=1").await;
        c.ok("REGISTER_GROUP group=g topic=t").await;
    }
    assert!(broker.terminate());
    let path = broker
        .data_dir()
        .join("__consumer_offsets")
        .join("0.journal");
    {
        let (journal, records) = cursus_broker::storage::Journal::open(&path).unwrap();
        assert_eq!(records.len(), 1);
        journal
            .append_sync(br#"{"type":"commit","group":"g","offsets":[]}"#)
            .unwrap();
    }
    let mut broker = broker.crash_and_restart();
    // The process keeps serving health checks but does not become ready.
    for _ in 0..10 {
        assert_eq!(broker.http_get("/live"), 200);
        assert_eq!(broker.http_get("/ready"), 503);
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Removing the bad record (operator remediation) makes it ready again,
    // with the registration intact.
    broker.terminate();
    {
        let (journal, records) = cursus_broker::storage::Journal::open(&path).unwrap();
        journal.rewrite(&records[..1]).unwrap();
    }
    let broker = broker.crash_and_restart();
    broker.wait_ready();
    let mut c = broker.client().await;
    assert_eq!(c.ok("LIST_GROUPS").await, "OK count=1 groups=g");
}

#[tokio::test]
async fn session_timeout_expires_members_and_rebalances() {
    let (dir, config) = config_dir(
        "group_session_timeout_ms = 1500
",
    );
    let broker = TestBroker::start_in(
        dir,
        vec!["--config".into(), config.to_string_lossy().into_owned()],
    );
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=2").await;
    let (quiet, _, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=quiet").await;
    let (alive, g, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=alive").await;
    assert_eq!(g, 2);
    // Keep one member alive until the other one's session has expired.
    let heartbeat = format!("HEARTBEAT topic=t group=g member={alive} generation=2");
    let current = eventually_async!(SAFETY, "the quiet member's session to expire", async {
        let frame = c.request(&heartbeat).await;
        if frame.status == cursus_wire::Status::Ok {
            return Err("generation 2 still current");
        }
        let e = cursus_wire::ErrorPayload::decode(frame.payload).unwrap();
        assert_eq!(e.code, "GEN_MISMATCH");
        Ok(e.fields["current"].parse::<u64>().unwrap())
    });
    assert_eq!(current, 3);
    let e = c
        .error(&format!("HEARTBEAT topic=t group=g member={quiet}"))
        .await;
    assert_eq!(e.code, "member_not_found");
    assert_eq!(
        sync(&mut c, "t", "g", &alive, 3).await,
        BTreeSet::from([0, 1])
    );
    let status: serde_json::Value =
        serde_json::from_str(&c.ok("GROUP_STATUS group=g").await).unwrap();
    assert_eq!(status["member_count"], 1);
}

#[tokio::test]
async fn delete_and_truncate_are_blocked_by_active_members() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=1").await;
    c.ok("CREATE topic=u partitions=1").await;
    let (m, g, _) = join(&mut c, "JOIN_GROUP topic=t group=g member=a").await;
    c.ok(&format!(
        "COMMIT_OFFSET topic=t partition=0 group=g offset=3 member={m} generation={g}"
    ))
    .await;
    c.ok("REGISTER_GROUP group=multi topics=t,u").await;
    let (mm, mg, _) = join(&mut c, "JOIN_GROUP group=multi member=z").await;
    c.ok(&format!(
        "BATCH_COMMIT topic=t group=multi member={mm} generation={mg} offsets=P0:2"
    ))
    .await;
    c.ok(&format!(
        "BATCH_COMMIT topic=u group=multi member={mm} generation={mg} offsets=P0:2"
    ))
    .await;

    let e = c.error("DELETE topic=t").await;
    assert_eq!(
        (e.code.as_str(), e.class),
        ("topic_delete_blocked", ErrorClass::Conflict)
    );
    assert_eq!(e.fields["topic"], "t");
    let e = c.error("TRUNCATE topic=t expected_revision=1").await;
    assert_eq!(e.code, "topic_truncate_blocked");
    // Nothing changed.
    assert_eq!(
        kv(&c.ok("FETCH_OFFSET topic=t partition=0 group=g").await)["offset"],
        "3"
    );

    c.ok(&format!("LEAVE_GROUP topic=t group=g member={m}"))
        .await;
    c.ok(&format!("LEAVE_GROUP group=multi member={mm}")).await;
    // TRUNCATE: the single-topic group is deleted, the other loses t's offsets.
    c.ok("TRUNCATE topic=t expected_revision=1").await;
    assert_eq!(
        c.error("GROUP_STATUS group=g").await.code,
        "group_not_found"
    );
    assert_eq!(
        offsets(&mut c, "t", "multi").await,
        "OK offset=0 committed=false"
    );
    assert_eq!(
        offsets(&mut c, "u", "multi").await,
        "OK offset=2 committed=true"
    );

    // DELETE: the same cleanup, and it survives a restart.
    let (m, g, _) = join(&mut c, "JOIN_GROUP topic=t group=g2 member=a").await;
    c.ok(&format!(
        "COMMIT_OFFSET topic=t partition=0 group=g2 offset=1 member={m} generation={g}"
    ))
    .await;
    c.ok(&format!("LEAVE_GROUP topic=t group=g2 member={m}"))
        .await;
    assert_eq!(kv(&c.ok("DELETE topic=t").await)["deleted"], "true");
    assert_eq!(c.ok("LIST_GROUPS").await, "OK count=1 groups=multi");
    let status: serde_json::Value =
        serde_json::from_str(&c.ok("GROUP_STATUS group=multi").await).unwrap();
    assert_eq!(status["topic_name"], "u");
    drop(c);
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(c.ok("LIST_GROUPS").await, "OK count=1 groups=multi");
    c.ok("CREATE topic=t partitions=1").await;
    assert_eq!(
        offsets(&mut c, "t", "multi").await,
        "OK offset=0 committed=false"
    );
    assert_eq!(
        offsets(&mut c, "t", "g2").await,
        "OK offset=0 committed=false"
    );
    assert_eq!(
        offsets(&mut c, "u", "multi").await,
        "OK offset=2 committed=true"
    );
    // A pattern group with an active member blocks deleting the topics it
    // has expanded to, not names it merely could match.
    c.ok("REGISTER_GROUP group=pat pattern=u*").await;
    let f = kv(&c.ok("JOIN_GROUP group=pat member=p").await);
    assert_eq!(f["topic_assignments"], "u:P0");
    assert_eq!(c.error("DELETE topic=u").await.code, "topic_delete_blocked");
    assert_eq!(
        c.error("DELETE topic=unknown").await.code,
        "topic_not_found"
    );
    // Internal topic stays protected.
    assert_eq!(
        c.error("DELETE topic=__consumer_offsets").await.code,
        "internal_topic_delete_forbidden"
    );
}

async fn offsets(c: &mut Client, topic: &str, group: &str) -> String {
    c.ok(&format!(
        "FETCH_OFFSET topic={topic} partition=0 group={group}"
    ))
    .await
}
