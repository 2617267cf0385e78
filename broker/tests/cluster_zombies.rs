//! Brokers that are alive and wrong (issue #32), against real broker
//! processes: a partition leader or a transaction coordinator that is cut
//! off from the other members (`cursus_testkit::Links`, clients still
//! reach it) or paused past its session (SIGSTOP) while the cluster moves
//! its partition or its shard elsewhere. Whatever it accepts meanwhile
//! must not be acknowledged and must never become visible; the new owner's
//! outcome wins.

mod common;

use common::cluster::*;
use common::{Client, SAFETY};
use cursus_testkit::{eventually_async, Fault, TestCluster};
use cursus_wire::{Batch, ControlBatchType, ErrorPayload, Status};
use serde_json::Value;

/// Publishes a paused leader finds waiting when it wakes (the more, the
/// likelier one of them is appended just before it learns it was deposed).
const ZOMBIE_PUBLISHES: usize = 20;

/// Members heartbeat every 200 ms and are failed over after a second.
const FAST_FAILOVER: &str = "broker_heartbeat_ms = 200\nbroker_session_timeout_ms = 1000\n";

/// The leader's broker id and client address for `t`/0 in `s`, if led.
fn leader(s: &Value) -> Option<(String, String)> {
    let id = partition(s, "t", 0)["leader"].as_str()?.to_owned();
    let addr = s["brokers"]
        .as_array()?
        .iter()
        .find(|b| b["id"] == id.as_str())?["client_addr"]
        .as_str()?
        .to_owned();
    Some((id, addr))
}

/// Creates `t` (one partition, three replicas) and waits until it is led
/// with every replica in sync; its leader.
async fn create_topic(first: &str) -> (String, String) {
    client(first)
        .await
        .ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    let s = until(first, "t/0 led, three in sync", |s| {
        leader(s).is_some() && partition(s, "t", 0)["isr"].as_array().unwrap().len() == 3
    })
    .await;
    leader(&s).unwrap()
}

/// The PUBLISH of `message` to `t`/0 with acks=all by an idempotent
/// producer of its own.
fn publish(message: &str) -> String {
    format!(
        "PUBLISH topic=t partition=0 acks=all producerId={message} seqNum=1 isIdempotent=true \
         message={message}"
    )
}

/// Publishes `message` to `t`/0 with acks=all through `start` (following
/// redirects, retrying while a failover settles).
async fn committed(start: &str, message: &str) {
    let reply = on_leader_within(SAFETY * 2, start, &publish(message)).await;
    let reply: Value = serde_json::from_slice(&reply).expect("PUBLISH JSON");
    assert_eq!(reply["status"], "OK", "{reply}");
}

/// The values of `t`/0 that `addr` serves from offset 0 with `isolation`
/// (control records left out).
async fn values(addr: &str, isolation: &str) -> Result<Vec<String>, String> {
    let line = format!("CONSUME topic=t partition=0 offset=0 member=m isolation={isolation}");
    let payload = client(addr).await.try_ok(&line).await?;
    let batch = Batch::decode(payload).map_err(|e| e.to_string())?;
    Ok(batch
        .records
        .iter()
        .filter(|r| r.control_batch_type == ControlBatchType::None)
        .map(|r| String::from_utf8_lossy(&r.payload).into_owned())
        .collect())
}

/// Waits until the cluster (asked through `via`) names a leader of `t`/0
/// other than `old` (a broker id); that leader.
async fn new_leader(via: &str, old: &str) -> (String, String) {
    let s = until(via, "t/0 led by another broker", |s| {
        leader(s).is_some_and(|(id, _)| id != old)
    })
    .await;
    leader(&s).unwrap()
}

/// Waits until `id` is back in the ISR of `t`/0, then makes it the leader
/// (ELECT_LEADER) and waits until it serves; reads `t`/0 from it.
async fn elect_and_read(via: &str, id: &str, addr: &str) -> Vec<String> {
    until(via, "the old leader back in sync", |s| {
        partition(s, "t", 0)["isr"].as_array().unwrap().len() == 3
            && s["brokers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|b| b["status"] == "active")
    })
    .await;
    let elect = format!("ELECT_LEADER topic=t partition=0 broker={id}");
    eventually_async!(SAFETY * 2, &elect, async {
        client(via).await.try_ok(&elect).await
    });
    eventually_async!(SAFETY * 2, "the old leader to serve t/0", async {
        values(addr, "read_committed").await
    })
}

/// Reads the answer to a request sent before a fault: it must be an
/// error, never OK.
async fn refused(c: &mut Client, what: &str) -> ErrorPayload {
    let frame = c
        .recv()
        .await
        .unwrap_or_else(|| panic!("{what}: no answer"));
    assert_ne!(
        frame.status,
        Status::Ok,
        "{what} was acknowledged: {}",
        String::from_utf8_lossy(&frame.payload)
    );
    ErrorPayload::decode(frame.payload).expect("typed error")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_isolated_leaders_records_never_become_visible() {
    let mut cluster = TestCluster::start_linked(3, FAST_FAILOVER);
    let first = cluster.members[0].addr.clone();
    let (old_id, old_addr) = create_topic(&first).await;
    committed(&first, "before").await;
    let l = cluster.index_of(&old_addr).unwrap();
    let other = cluster.members[(l + 1) % 3].addr.clone();

    // Cut off from every other member; its clients still reach it. It
    // appends what they publish, but cannot commit it.
    cluster.links().isolate(l, Fault::Blackhole);
    let mut zombie = client(&old_addr).await;
    for i in 0..3 {
        zombie.send_line(&publish(&format!("zombie-{i}"))).await;
    }
    eventually_async!(SAFETY, "the isolated leader to append", async {
        let seen = values(&old_addr, "read_uncommitted").await?;
        match seen.iter().filter(|v| v.starts_with("zombie")).count() {
            3 => Ok(()),
            n => Err(format!("{n} appended: {seen:?}")),
        }
    });

    // The others fail it over and commit other records at those offsets
    // (and beyond: the committed mark passes the isolated leader's log).
    let (new_id, new_addr) = new_leader(&other, &old_id).await;
    assert_ne!(new_id, old_id);
    for i in 0..5 {
        committed(&new_addr, &format!("after-{i}")).await;
    }
    let expected: Vec<String> = std::iter::once("before".to_owned())
        .chain((0..5).map(|i| format!("after-{i}")))
        .collect();
    assert_eq!(values(&new_addr, "read_committed").await.unwrap(), expected);

    // Killed before it hears of any of it, then back: its copy of the
    // cluster's state jumps to a committed mark past its own records.
    // Regression (found by the nemesis): it truncated only to that mark,
    // kept its records below it and served them once leading again.
    cluster.kill(l);
    assert!(
        zombie.recv().await.is_none(),
        "a zombie publish was answered"
    );
    cluster.links().heal();
    cluster.restart(l);
    cluster.wait_ready(l);
    // Back as a follower it holds the history, not its own records: led
    // by it again, the partition reads the same.
    let read = elect_and_read(&other, &old_id, &old_addr).await;
    assert_eq!(read, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_leaders_writes_fail_when_it_wakes() {
    let cluster = TestCluster::start_with_config(3, FAST_FAILOVER);
    let first = cluster.members[0].addr.clone();
    let (old_id, old_addr) = create_topic(&first).await;
    committed(&first, "before").await;
    let l = cluster.index_of(&old_addr).unwrap();
    let other = cluster.members[(l + 1) % 3].addr.clone();

    // Paused past its session with publishes waiting in its socket.
    let mut zombie = client(&old_addr).await;
    cluster.pause(l);
    for i in 0..ZOMBIE_PUBLISHES {
        zombie.send_line(&publish(&format!("zombie-{i}"))).await;
    }
    let (_, new_addr) = new_leader(&other, &old_id).await;
    committed(&new_addr, "after").await;

    // It wakes believing it leads, and learns otherwise while it works
    // through them: every one must fail. Regression (found by the
    // nemesis): one appended before the demotion was applied waited for
    // the new leader's mark, which passed its offset (holding "after"),
    // and was acknowledged.
    cluster.resume(l);
    for i in 0..ZOMBIE_PUBLISHES {
        let e = refused(&mut zombie, &format!("the paused leader's zombie-{i}")).await;
        assert!(e.retryable, "{}", e.render());
    }
    let expected = vec!["before".to_owned(), "after".to_owned()];
    assert_eq!(values(&new_addr, "read_committed").await.unwrap(), expected);
    let read = elect_and_read(&other, &old_id, &old_addr).await;
    assert_eq!(read, expected);
}

/// The client address FIND_COORDINATOR transactional_id=`id` names on
/// `addr`.
async fn coordinator(addr: &str, id: &str) -> Result<String, String> {
    let reply = client(addr)
        .await
        .try_ok(&format!("FIND_COORDINATOR transactional_id={id}"))
        .await?;
    let f = kv(&String::from_utf8_lossy(&reply));
    Ok(format!("{}:{}", f["host"], f["port"]))
}

/// [`on_leader`] for a text reply, retrying while the cluster settles.
async fn ok_retrying(start: &str, line: &str) -> String {
    String::from_utf8_lossy(&on_leader_within(SAFETY * 2, start, line).await).into_owned()
}

/// INIT_PRODUCER_ID on `coord`: the session fields of later commands.
async fn init(coord: &str, id: &str) -> String {
    let init = kv(&ok_retrying(coord, &format!("INIT_PRODUCER_ID transactional_id={id}")).await);
    format!(
        "transactional_id={id} producerId={} epoch={}",
        init["producerId"], init["epoch"]
    )
}

/// Opens a transaction of `id` on `coord` writing `message` to `t`/0;
/// its session.
async fn open_transaction(coord: &str, id: &str, message: &str) -> String {
    let session = init(coord, id).await;
    ok_retrying(coord, &format!("BEGIN_TXN {session}")).await;
    ok_retrying(
        coord,
        &format!("TXN_PUBLISH {session} topic=t partition=0 seqNum=1 message={message}"),
    )
    .await;
    session
}

/// Waits until `via` names a coordinator of `id` other than `old`.
async fn new_coordinator(via: &str, id: &str, old: &str) -> String {
    eventually_async!(SAFETY * 2, "the shard to move", async {
        match coordinator(via, id).await {
            Ok(c) if c != old => Ok(c),
            other => Err(other),
        }
    })
}

/// What read_committed shows of `t`/0, through whichever broker leads it.
async fn visible(via: &str) -> Vec<String> {
    let reply = on_leader_within(
        SAFETY * 2,
        via,
        "CONSUME topic=t partition=0 offset=0 member=m isolation=read_committed",
    )
    .await;
    Batch::decode(reply)
        .unwrap()
        .records
        .iter()
        .filter(|r| r.control_batch_type == ControlBatchType::None)
        .map(|r| String::from_utf8_lossy(&r.payload).into_owned())
        .collect()
}

/// The scenario of both coordinator tests: a transaction open on the
/// coordinator of its id, END_TXN commit sent to it while `cut_off` keeps
/// it from the cluster, the shard moved meanwhile and the transaction
/// aborted by the new owner's INIT_PRODUCER_ID, then `restore`: the old
/// coordinator's commit must be refused and nothing of the transaction
/// visible; the new owner commits the next one.
async fn zombie_coordinator(
    cluster: &TestCluster,
    cut_off: impl Fn(usize),
    restore: impl Fn(usize),
) {
    let first = cluster.members[0].addr.clone();
    create_topic(&first).await;
    let id = "z";
    let coord = eventually_async!(SAFETY, "a coordinator", async {
        coordinator(&first, id).await
    });
    let session = open_transaction(&coord, id, "zombie-txn").await;
    let c = cluster.index_of(&coord).unwrap();
    let other = cluster.members[(c + 1) % 3].addr.clone();

    let mut zombie = client(&coord).await;
    cut_off(c);
    zombie
        .send_line(&format!("END_TXN {session} result=commit"))
        .await;
    let new_coord = new_coordinator(&other, id, &coord).await;
    // The new owner fences the old session: the open transaction aborts.
    let next = open_transaction(&new_coord, id, "next-txn").await;

    restore(c);
    refused(&mut zombie, "the old coordinator's END_TXN").await;
    let end = kv(&ok_retrying(&new_coord, &format!("END_TXN {next} result=commit")).await);
    assert_eq!(end["state"], "committed");
    let seen = eventually_async!(SAFETY * 2, "the next transaction visible", async {
        let seen = visible(&other).await;
        if seen.contains(&"next-txn".to_owned()) {
            Ok(seen)
        } else {
            Err(seen)
        }
    });
    assert_eq!(
        seen,
        vec!["next-txn".to_owned()],
        "the zombie's transaction is visible"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_transaction_coordinator_whose_shard_moved_cannot_commit() {
    let cluster = TestCluster::start_with_config(3, FAST_FAILOVER);
    zombie_coordinator(&cluster, |c| cluster.pause(c), |c| cluster.resume(c)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_isolated_transaction_coordinator_whose_shard_moved_cannot_commit() {
    let cluster = TestCluster::start_linked(3, FAST_FAILOVER);
    zombie_coordinator(
        &cluster,
        |c| cluster.links().isolate(c, Fault::Blackhole),
        |_| cluster.links().heal(),
    )
    .await;
}

/// FETCH_OFFSETs a paused group coordinator finds waiting when it wakes.
const ZOMBIE_FETCHES: usize = 20;

/// The client address FIND_COORDINATOR group=`group` names on `addr`.
async fn group_coordinator(addr: &str, group: &str) -> Result<String, String> {
    let reply = client(addr)
        .await
        .try_ok(&format!("FIND_COORDINATOR group={group}"))
        .await?;
    let f = kv(&String::from_utf8_lossy(&reply));
    Ok(format!("{}:{}", f["host"], f["port"]))
}

/// Joins `g` on its coordinator `coord` (retrying while it takes the
/// group over) and commits `offset` of `t`/0; the member and generation.
async fn join_and_commit(coord: &str, offset: u64) -> (String, String) {
    eventually_async!(SAFETY * 2, "a commit on the coordinator", async {
        let mut c = client(coord).await;
        let j = kv(&String::from_utf8_lossy(
            &c.try_ok("JOIN_GROUP topic=t group=g member=m").await?,
        ));
        let (member, generation) = (j["member"].clone(), j["generation"].clone());
        c.try_ok(&format!(
            "SYNC_GROUP topic=t group=g member={member} generation={generation}"
        ))
        .await?;
        c.try_ok(&format!(
            "COMMIT_OFFSET topic=t partition=0 group=g offset={offset} member={member} \
             generation={generation}"
        ))
        .await?;
        Ok::<_, String>((member, generation))
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_group_coordinator_serves_no_stale_offsets_when_it_wakes() {
    let cluster = TestCluster::start_with_config(3, FAST_FAILOVER);
    let first = cluster.members[0].addr.clone();
    create_topic(&first).await;
    let coord = eventually_async!(SAFETY, "a group coordinator", async {
        group_coordinator(&first, "g").await
    });
    ok_retrying(&coord, "REGISTER_GROUP group=g topic=t").await;
    let (member, generation) = join_and_commit(&coord, 1).await;
    let c = cluster.index_of(&coord).unwrap();
    let other = cluster.members[(c + 1) % 3].addr.clone();

    // Paused past its session with a stale member's commit and reads of
    // the committed offset waiting in its socket.
    let mut zombie = client(&coord).await;
    cluster.pause(c);
    zombie
        .send_line(&format!(
            "COMMIT_OFFSET topic=t partition=0 group=g offset=3 member={member} \
             generation={generation}"
        ))
        .await;
    for _ in 0..ZOMBIE_FETCHES {
        zombie
            .send_line("FETCH_OFFSET topic=t partition=0 group=g")
            .await;
    }
    // The group moves and commits further on its new coordinator.
    let new_coord = eventually_async!(SAFETY * 2, "the group to move", async {
        match group_coordinator(&other, "g").await {
            Ok(n) if n != coord => Ok(n),
            other => Err(other),
        }
    });
    join_and_commit(&new_coord, 5).await;

    // It wakes believing it coordinates the group, with the offset it
    // committed itself. Regression (found by the nemesis): it answered
    // from that copy until it caught up, and the group's committed
    // offset went back from 5 to 1.
    cluster.resume(c);
    let commit = zombie.recv().await.expect("an answer to the commit");
    assert_ne!(
        commit.status,
        Status::Ok,
        "the stale member's commit below the group's offset was acknowledged"
    );
    for i in 0..ZOMBIE_FETCHES {
        let frame = zombie.recv().await.expect("an answer to FETCH_OFFSET");
        let text = String::from_utf8_lossy(&frame.payload).into_owned();
        if frame.status == Status::Ok {
            assert_eq!(
                text, "OK offset=5 committed=true",
                "FETCH_OFFSET {i} on the woken coordinator"
            );
        } else {
            let e = ErrorPayload::decode(frame.payload).expect("typed error");
            assert!(e.retryable, "{}", e.render());
        }
    }
    let offset = eventually_async!(SAFETY * 2, "the committed offset", async {
        let c = group_coordinator(&other, "g").await?;
        client(&c)
            .await
            .try_ok("FETCH_OFFSET topic=t partition=0 group=g")
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    });
    assert_eq!(offset, "OK offset=5 committed=true");
}
