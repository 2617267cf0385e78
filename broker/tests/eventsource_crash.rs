//! Event streams across a crash: several connections append to the same
//! aggregates concurrently, each retrying a `version_conflict` with the
//! version the broker reported; the broker is killed with SIGKILL while
//! appends are in flight. After a restart on the same data directory every
//! aggregate's versions are contiguous from 1, every acknowledged version is
//! there with the acknowledged payload, and no event is stored twice.
//! Also: a torn snapshot-journal tail loses only the torn snapshot, and
//! mid-file corruption stops the broker at startup.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::*;
use cursus_wire::{Batch, CommandPayload, ErrorPayload, Frame, Status};

/// Concurrent appending connections.
const TASKS: usize = 4;
/// Aggregates every task appends to (so tasks contend for versions).
const AGGREGATES: usize = 6;
/// Acknowledged appends (over all tasks) before the kill.
const KILL_AFTER: usize = 150;
/// Crash/restart rounds, each appending on top of the recovered streams.
const ROUNDS: usize = 2;
const TOPIC: &str = "orders";

fn aggregate(i: usize) -> String {
    format!("agg-{i}")
}

/// Sends `line`; `None` once the broker is gone.
async fn try_request(c: &mut Client, line: &str) -> Option<Frame> {
    let (command, payload) = CommandPayload::parse_line(line).unwrap();
    let id = c.try_send(command, payload.to_bytes().unwrap()).await?;
    let frame = c.recv().await?;
    assert_eq!(frame.request_id, id);
    Some(frame)
}

/// One acknowledged append.
#[derive(Debug, Clone)]
struct Acked {
    key: String,
    version: u64,
    payload: String,
}

/// Appends until the broker dies; records every acknowledged event.
async fn appender(
    broker: std::net::SocketAddr,
    round: usize,
    task: usize,
    acked: Arc<Mutex<Vec<Acked>>>,
    count: Arc<AtomicUsize>,
    conflicts: Arc<AtomicUsize>,
) {
    let mut c = Client::connect(broker, cursus_wire::Compression::None).await;
    // The version this task believes each aggregate is at.
    let mut known = [0u64; AGGREGATES];
    for n in 0u64.. {
        let i = (task + n as usize) % AGGREGATES;
        let key = aggregate(i);
        let payload = format!("r{round}-t{task}-n{n}");
        loop {
            let version = known[i] + 1;
            let line = format!(
                "APPEND_STREAM topic={TOPIC} key={key} version={version} event_type=Placed message={payload}"
            );
            let Some(frame) = try_request(&mut c, &line).await else {
                return;
            };
            if frame.status == Status::Ok {
                let f = kv(std::str::from_utf8(&frame.payload).unwrap());
                assert_eq!(f["version"], version.to_string());
                known[i] = version;
                acked.lock().unwrap().push(Acked {
                    key: key.clone(),
                    version,
                    payload: payload.clone(),
                });
                count.fetch_add(1, Ordering::SeqCst);
                break;
            }
            conflicts.fetch_add(1, Ordering::SeqCst);
            let e = ErrorPayload::decode(frame.payload).unwrap();
            assert_eq!(e.code, "version_conflict", "{}", e.render());
            assert_eq!(e.fields["expected"], version.to_string());
            let current: u64 = e.fields["current"].parse().unwrap();
            assert!(current >= known[i], "versions never go back");
            known[i] = current;
        }
    }
}

/// Every event of `key`, read through READ_STREAM pages.
async fn read_all(c: &mut Client, key: &str) -> Vec<(u64, String)> {
    let mut from = 1;
    let mut out = Vec::new();
    loop {
        let line =
            format!("READ_STREAM topic={TOPIC} key={key} from_version={from} max_events=100");
        let id = c.send_line(&line).await;
        let envelope = c.recv().await.unwrap();
        assert_eq!(envelope.request_id, id);
        assert_eq!(envelope.status, Status::Ok);
        let env: serde_json::Value = serde_json::from_slice(&envelope.payload).unwrap();
        assert!(env.get("snapshot").is_none());
        let batch = c.recv().await.unwrap();
        assert_eq!(batch.request_id, id);
        let batch = Batch::decode(batch.payload).unwrap();
        assert_eq!(env["count"], batch.records.len());
        for r in &batch.records {
            assert_eq!(r.key, key.as_bytes());
            assert_eq!(r.event_type, "Placed");
            out.push((
                r.aggregate_version,
                String::from_utf8(r.payload.to_vec()).unwrap(),
            ));
        }
        if env["has_more"] != true {
            return out;
        }
        from = env["next_version"].as_u64().unwrap();
    }
}

/// Checks the recovered streams against everything acknowledged so far.
async fn verify(c: &mut Client, acked: &[Acked]) -> Vec<u64> {
    let mut expected: HashMap<(String, u64), String> = HashMap::new();
    for a in acked {
        let old = expected.insert((a.key.clone(), a.version), a.payload.clone());
        assert!(
            old.is_none(),
            "version {} of {} acknowledged twice",
            a.version,
            a.key
        );
    }
    let mut payloads = HashSet::new();
    let mut heads = Vec::new();
    for i in 0..AGGREGATES {
        let key = aggregate(i);
        let events = read_all(c, &key).await;
        let head = events.len() as u64;
        let versions: Vec<u64> = events.iter().map(|(v, _)| *v).collect();
        assert_eq!(
            versions,
            (1..=head).collect::<Vec<_>>(),
            "{key}: versions are contiguous from 1"
        );
        let reply = c
            .ok(&format!("STREAM_VERSION topic={TOPIC} key={key}"))
            .await;
        assert_eq!(reply, format!("OK version={head}"));
        for (v, payload) in &events {
            assert!(payloads.insert(payload.clone()), "{payload} stored twice");
            if let Some(want) = expected.get(&(key.clone(), *v)) {
                assert_eq!(want, payload, "{key} v{v}");
            }
        }
        let acked_here = acked.iter().filter(|a| a.key == key).count() as u64;
        assert!(
            head >= acked_here,
            "{key}: {head} events, {acked_here} acknowledged"
        );
        for a in acked.iter().filter(|a| a.key == key) {
            assert!(a.version <= head, "{key}: acknowledged v{} lost", a.version);
        }
        // History agrees and is complete.
        let id = c
            .send_line(&format!(
                "READ_STREAM_HISTORY topic={TOPIC} key={key} max_records=1000"
            ))
            .await;
        let envelope = c.recv().await.unwrap();
        assert_eq!(envelope.request_id, id);
        let env: serde_json::Value = serde_json::from_slice(&envelope.payload).unwrap();
        assert_eq!(env["completeness"], "complete");
        assert_eq!(env["head_version"], head);
        let batch = Batch::decode(c.recv().await.unwrap().payload).unwrap();
        assert_eq!(batch.records.len() as u64, head.min(1000));
        heads.push(head);
    }
    heads
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_survive_kill_9() {
    let mut broker = TestBroker::start();
    {
        let mut c = broker.client().await;
        c.ok(&format!(
            "CREATE topic={TOPIC} partitions=2 event_sourcing=true"
        ))
        .await;
    }
    let acked = Arc::new(Mutex::new(Vec::new()));
    let mut heads = vec![0u64; AGGREGATES];
    let conflicts = Arc::new(AtomicUsize::new(0));
    for round in 0..ROUNDS {
        let count = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| {
                tokio::spawn(appender(
                    broker.addr,
                    round,
                    task,
                    Arc::clone(&acked),
                    Arc::clone(&count),
                    Arc::clone(&conflicts),
                ))
            })
            .collect();
        within(async {
            while count.load(Ordering::SeqCst) < KILL_AFTER {
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
        })
        .await;
        broker = broker.crash_and_restart();
        for t in tasks {
            within(t).await.expect("appender panicked");
        }
        let acked_now = acked.lock().unwrap().clone();
        assert!(acked_now.len() >= KILL_AFTER * (round + 1));
        let mut c = broker.client().await;
        let new_heads = verify(&mut c, &acked_now).await;
        for (old, new) in heads.iter().zip(&new_heads) {
            assert!(new >= old);
        }
        heads = new_heads;
        // The streams continue at head + 1 after the restart.
        let key = aggregate(0);
        let e = c
            .error(&format!(
                "APPEND_STREAM topic={TOPIC} key={key} version={} message=stale",
                heads[0]
            ))
            .await;
        assert_eq!(e.code, "version_conflict");
        assert_eq!(e.fields["current"], heads[0].to_string());
    }
    // Contended appends produced conflicts and every aggregate moved.
    let per_key: BTreeMap<String, usize> =
        acked
            .lock()
            .unwrap()
            .iter()
            .fold(BTreeMap::new(), |mut m, a| {
                *m.entry(a.key.clone()).or_default() += 1;
                m
            });
    assert_eq!(per_key.len(), AGGREGATES);
    assert!(conflicts.load(Ordering::SeqCst) > 0, "appenders contended");
}

/// A broker with one aggregate at version 2 and two saved snapshots
/// (versions 1 then 2), killed; returns it and its snapshot journal path.
async fn two_snapshots_then_kill() -> (TestBroker, std::path::PathBuf) {
    let mut broker = TestBroker::start();
    {
        let mut c = broker.client().await;
        c.ok(&format!(
            "CREATE topic={TOPIC} partitions=2 event_sourcing=true"
        ))
        .await;
        for v in 1..=2 {
            c.ok(&format!(
                "APPEND_STREAM topic={TOPIC} key=a version={v} message=e{v}"
            ))
            .await;
            c.ok(&format!(
                "SAVE_SNAPSHOT topic={TOPIC} key=a version={v} message=s{v}"
            ))
            .await;
        }
    }
    broker.kill9();
    let path = broker
        .data_dir()
        .join(format!("topics/{TOPIC}/__snapshots.journal"));
    (broker, path)
}

fn restart(mut broker: TestBroker) -> TestBroker {
    broker.kill9();
    let dir = broker.dir.take().expect("dir");
    TestBroker::start_in(dir, Vec::new())
}

#[tokio::test]
async fn a_torn_snapshot_tail_loses_only_that_snapshot() {
    let (broker, path) = two_snapshots_then_kill().await;
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    let broker = restart(broker);
    broker.wait_ready();
    let mut c = broker.client().await;
    assert_eq!(
        c.ok(&format!("READ_SNAPSHOT topic={TOPIC} key=a")).await,
        r#"OK snapshot={"version":1,"payload":"s1"}"#
    );
    assert_eq!(
        c.ok(&format!("STREAM_VERSION topic={TOPIC} key=a")).await,
        "OK version=2"
    );
}

#[tokio::test]
async fn mid_file_snapshot_corruption_refuses_to_start() {
    let (broker, path) = two_snapshots_then_kill().await;
    let mut bytes = std::fs::read(&path).unwrap();
    // Damage the first record's body; a valid record follows it.
    bytes[12] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    // As for a corrupt partition log, recovery fails and the process exits
    // without ever becoming ready.
    let mut broker = restart(broker);
    broker.wait_exit("the broker to refuse the corrupt snapshot journal and exit");
}
