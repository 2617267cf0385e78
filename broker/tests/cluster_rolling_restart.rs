//! A rolling restart under load (issue #32): every broker of a
//! three-broker cluster is stopped cleanly (SIGTERM), left down until the
//! others acknowledged more writes on every partition (as for an upgrade),
//! started again and waited for, one at a time, while idempotent acks=all
//! producers write to every partition. No acknowledged record may be lost or duplicated. The
//! produce unavailability of each restart (the longest time a partition
//! acknowledged nothing) is printed, not asserted: it measures the
//! clean-stop hand-over (docs/cluster.md, "Clean stop").

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::cluster::*;
use common::{Client, SAFETY};
use cursus_testkit::{eventually_async, TestCluster};
use cursus_wire::{Batch, Command, CommandPayload, ErrorPayload, Status};
use serde_json::Value;

/// Partitions of the topic, one producer each.
const PARTITIONS: u32 = 3;

/// Longest one publish attempt may wait for its reply before the producer
/// tries again (on another member if the connection is gone).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// Pause of a producer before it tries again after a refusal or a
/// failed connection (a failover in progress).
const RETRY_DELAY: Duration = Duration::from_millis(20);

/// Acknowledgements every partition must collect between two restarts,
/// so that each restart happens under load.
const ACKS_BETWEEN_RESTARTS: usize = 20;

/// One acknowledged publish: which message, and when its ack arrived.
#[derive(Clone)]
struct Ack {
    message: String,
    at: Instant,
}

/// What the producers acknowledged, per partition, in order.
type Acked = Arc<Mutex<BTreeMap<u32, Vec<Ack>>>>;

fn acks_of(acked: &Acked, partition: u32) -> usize {
    acked.lock().unwrap().get(&partition).map_or(0, Vec::len)
}

/// The outcome of one attempt at a publish.
enum Attempt {
    Acked,
    /// A typed retryable error; the leader it names, if any.
    Retry(Option<String>),
    /// The connection failed or no reply came: another member next.
    Unreachable,
}

/// Sends `line` on `c` and classifies the answer; a non-retryable error
/// fails the test (an idempotent producer's retry is never refused).
async fn attempt(c: &mut Client, line: &str) -> Attempt {
    let (command, payload): (Command, CommandPayload) =
        CommandPayload::parse_line(line).expect("valid line");
    let Some(id) = c.try_send(command, payload.to_bytes().unwrap()).await else {
        return Attempt::Unreachable;
    };
    let frame = match tokio::time::timeout(ATTEMPT_TIMEOUT, c.recv()).await {
        Ok(Some(frame)) => frame,
        _ => return Attempt::Unreachable,
    };
    assert_eq!(frame.request_id, id, "reply correlates");
    if frame.status == Status::Ok {
        let reply: Value = serde_json::from_slice(&frame.payload).expect("PUBLISH JSON");
        assert_eq!(reply["status"], "OK", "{reply}");
        return Attempt::Acked;
    }
    let e = ErrorPayload::decode(frame.payload).expect("typed error");
    assert!(e.retryable, "{line}: {}", e.render());
    Attempt::Retry(e.fields.get("leader").filter(|l| l.contains(':')).cloned())
}

/// Publishes `m<partition>-<seq>` to `t`/`partition` with acks=all as the
/// idempotent producer `p<partition>`, one at a time, until `stop`: each
/// message is retried (same sequence number) until acknowledged, on the
/// leader a refusal names, else on the next member.
async fn produce(members: Vec<String>, partition: u32, stop: Arc<AtomicBool>, acked: Acked) {
    let mut at = 0;
    let mut seq = 1u64;
    let mut conn: Option<Client> = None;
    while !stop.load(Ordering::Relaxed) {
        let message = format!("m{partition}-{seq}");
        let line = format!(
            "PUBLISH topic=t partition={partition} acks=all producerId=p{partition} \
             seqNum={seq} isIdempotent=true message={message}"
        );
        let c = match conn.as_mut() {
            Some(c) => c,
            None => {
                let addr = members[at].parse().unwrap();
                let connect = Client::try_connect(addr, cursus_wire::Compression::None);
                match tokio::time::timeout(Duration::from_secs(2), connect).await {
                    Ok(Ok(c)) => conn.insert(c),
                    _ => {
                        at = (at + 1) % members.len();
                        tokio::time::sleep(RETRY_DELAY).await;
                        continue;
                    }
                }
            }
        };
        match attempt(c, &line).await {
            Attempt::Acked => {
                let ack = Ack {
                    message,
                    at: Instant::now(),
                };
                acked
                    .lock()
                    .unwrap()
                    .entry(partition)
                    .or_default()
                    .push(ack);
                seq += 1;
            }
            Attempt::Retry(leader) => {
                if let Some(i) = leader.and_then(|l| members.iter().position(|m| *m == l)) {
                    if i != at {
                        at = i;
                        conn = None;
                    }
                }
                // A failover in progress: give it a moment.
                tokio::time::sleep(RETRY_DELAY).await;
            }
            Attempt::Unreachable => {
                at = (at + 1) % members.len();
                conn = None;
                tokio::time::sleep(RETRY_DELAY).await;
            }
        }
    }
}

/// Waits until every partition acknowledged [`ACKS_BETWEEN_RESTARTS`]
/// more records.
async fn more_acks(acked: &Acked, what: &str) {
    let before: Vec<usize> = (0..PARTITIONS).map(|p| acks_of(acked, p)).collect();
    eventually_async!(SAFETY * 3, what, async {
        let now: Vec<usize> = (0..PARTITIONS).map(|p| acks_of(acked, p)).collect();
        match now
            .iter()
            .zip(&before)
            .all(|(n, b)| *n >= b + ACKS_BETWEEN_RESTARTS)
        {
            true => Ok(()),
            false => Err(format!("acks {now:?}, before {before:?}")),
        }
    });
}

/// The longest time partition `acks` acknowledged nothing around
/// `[from, to]`: the longest gap between consecutive acks that overlaps
/// the window.
fn longest_gap(acks: &[Ack], from: Instant, to: Instant) -> Duration {
    acks.windows(2)
        .filter(|w| w[1].at >= from && w[0].at <= to)
        .map(|w| w[1].at - w[0].at)
        .max()
        .unwrap_or_default()
}

/// Every message of `t`/`partition` the leader serves, from offset 0.
async fn read_all(start: &str, partition: u32) -> Vec<String> {
    let mut out = Vec::new();
    let mut next = 0u64;
    loop {
        let line = format!("CONSUME topic=t partition={partition} offset={next} member=m");
        let payload = on_leader_within(SAFETY * 2, start, &line).await;
        let batch = Batch::decode(payload).expect("CONSUME batch");
        let Some(last) = batch.records.last() else {
            return out;
        };
        next = last.offset + 1;
        out.extend(
            batch
                .records
                .iter()
                .map(|r| String::from_utf8_lossy(&r.payload).into_owned()),
        );
    }
}

/// The member index of the Raft leader in CLUSTER_STATUS `s`.
fn raft_leader(cluster: &TestCluster, s: &Value) -> Option<usize> {
    let name = s["raft_leader"].as_str()?;
    cluster
        .members
        .iter()
        .position(|m| format!("broker-{}", m.node_id) == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rolling_restart_under_load_loses_no_acknowledged_record() {
    let mut cluster = TestCluster::start(3);
    let members: Vec<String> = cluster.members.iter().map(|m| m.addr.clone()).collect();
    let first = members[0].clone();
    client(&first)
        .await
        .ok(&format!(
            "CREATE topic=t partitions={PARTITIONS} replication_factor=3"
        ))
        .await;
    let all_in_sync = |s: &Value| {
        (0..PARTITIONS as u64).all(|p| {
            let p = partition(s, "t", p);
            p["leader"].is_string() && p["isr"].as_array().unwrap().len() == 3
        })
    };
    until(&first, "t led with three in sync", all_in_sync).await;

    let stop = Arc::new(AtomicBool::new(false));
    let acked: Acked = Arc::default();
    let producers: Vec<_> = (0..PARTITIONS)
        .map(|p| {
            tokio::spawn(produce(
                members.clone(),
                p,
                Arc::clone(&stop),
                Arc::clone(&acked),
            ))
        })
        .collect();

    let mut report = Vec::new();
    for victim in 0..cluster.members.len() {
        more_acks(&acked, "every partition to acknowledge under load").await;
        let survivor = &members[(victim + 1) % members.len()];
        let s = until(survivor, "the cluster status", |_| true).await;
        let led_raft = raft_leader(&cluster, &s) == Some(victim);
        let started = Instant::now();
        let exit = tokio::task::block_in_place(|| cluster.stop(victim));
        assert!(
            exit.is_some_and(|e| e.success()),
            "a clean stop exits with success: {exit:?}"
        );
        let stopped = started.elapsed();
        // Down for a while, as for an upgrade: the others serve meanwhile.
        more_acks(
            &acked,
            "every partition to acknowledge without the stopped member",
        )
        .await;
        let restarted = Instant::now();
        tokio::task::block_in_place(|| {
            cluster.restart(victim);
            cluster.wait_ready(victim);
        });
        until(survivor, "the ISR to heal after the restart", all_in_sync).await;
        let healed = Instant::now();
        let gaps = |from: Instant, to: Instant| -> Vec<u128> {
            let acked = acked.lock().unwrap();
            (0..PARTITIONS)
                .map(|p| longest_gap(&acked[&p], from, to).as_millis())
                .collect()
        };
        let (at_stop, at_start) = (gaps(started, restarted), gaps(restarted, healed));
        report.push(format!(
            "restart of node {} (raft leader: {led_raft}): stop took {} ms, down {} ms, ready \
             and in sync {} ms after the start; longest produce gap per partition around the \
             stop {at_stop:?} ms, around the start {at_start:?} ms (max {} ms)",
            cluster.members[victim].node_id,
            stopped.as_millis(),
            (restarted - started).as_millis(),
            (healed - restarted).as_millis(),
            at_stop.iter().chain(&at_start).max().unwrap()
        ));
    }
    stop.store(true, Ordering::Relaxed);
    for p in producers {
        p.await.unwrap();
    }
    for line in &report {
        println!("rolling restart: {line}");
    }

    let acked = acked.lock().unwrap().clone();
    for p in 0..PARTITIONS {
        let stored = read_all(&first, p).await;
        let mut copies: HashMap<&str, usize> = HashMap::new();
        for m in &stored {
            *copies.entry(m.as_str()).or_default() += 1;
        }
        let lost: Vec<&str> = acked[&p]
            .iter()
            .map(|a| a.message.as_str())
            .filter(|m| !copies.contains_key(m))
            .collect();
        assert!(lost.is_empty(), "t/{p}: acknowledged and lost: {lost:?}");
        let duplicated: Vec<&&str> = copies
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(m, _)| m)
            .collect();
        assert!(duplicated.is_empty(), "t/{p}: stored twice: {duplicated:?}");
        println!(
            "rolling restart: t/{p}: {} acknowledged, {} stored",
            acked[&p].len(),
            stored.len()
        );
    }
}
