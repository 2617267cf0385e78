//! Crash safety under concurrent acks=1 publishing: several connections
//! pipeline batches, the broker is killed with SIGKILL while batches are in
//! flight, and a broker restarted on the same data directory must hold every
//! acknowledged record exactly once, each connection's records in order
//! within their partition, and no partially visible record.

mod common;

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use common::*;
use cursus_wire::{Acks, Batch, Command, Record, RecordVersion, RecordVersionPolicy, Status};
use tokio::sync::watch;

/// Concurrent publishing connections.
const TASKS: usize = 4;
/// Partitions of the topic; batch `i` of task `t` goes to `(t + i) % PARTITIONS`.
const PARTITIONS: u32 = 2;
/// Records per batch.
const BATCH: u64 = 50;
/// Batches each connection keeps in flight (pipelined).
const WINDOW: usize = 4;
/// Acknowledged batches (over all connections) before the kill.
const KILL_AFTER: usize = 40;
/// Payload size of every record.
const PAYLOAD: usize = 100;
/// Crash/restart rounds, each publishing on top of the recovered log.
const ROUNDS: usize = 2;
const TOPIC: &str = "crash";

/// The exact payload of record `seq` of `task` in `round`.
fn payload(round: usize, task: usize, seq: u64) -> Vec<u8> {
    let mut p = format!("r{round}-t{task}-s{seq:09}-").into_bytes();
    let fill = (seq as usize + task + round) % 26;
    while p.len() < PAYLOAD {
        p.push(b'a' + ((p.len() + fill) % 26) as u8);
    }
    p
}

/// Parses `(round, task, seq)` back from a payload.
fn parse(payload: &[u8]) -> Option<(usize, usize, u64)> {
    let text = std::str::from_utf8(payload).ok()?;
    let mut parts = text.splitn(4, '-');
    let round = parts.next()?.strip_prefix('r')?.parse().ok()?;
    let task = parts.next()?.strip_prefix('t')?.parse().ok()?;
    let seq = parts.next()?.strip_prefix('s')?.parse().ok()?;
    Some((round, task, seq))
}

/// What one publishing connection did before the broker died.
#[derive(Debug, Default)]
struct Outcome {
    /// Per partition, the sequence numbers sent there, in send order.
    sent: Vec<Vec<u64>>,
    /// Per partition, how many of `sent` were acknowledged (acks come back in
    /// request order, so the acknowledged records are a prefix).
    acked: Vec<usize>,
    /// Batches sent but not acknowledged when the connection died.
    in_flight: usize,
}

fn batch_bytes(round: usize, task: usize, index: u64) -> (u32, Vec<u64>, Bytes) {
    let partition = ((task as u64 + index) % PARTITIONS as u64) as u32;
    let seqs: Vec<u64> = (index * BATCH..(index + 1) * BATCH).collect();
    let batch = Batch {
        acks: Acks::Leader,
        records: seqs
            .iter()
            .map(|&seq| Record {
                producer_id: format!("crash-r{round}-t{task}"),
                ..Record::new(Bytes::from(payload(round, task, seq)))
            })
            .collect(),
        ..Batch::new(TOPIC, partition as i32)
    };
    let bytes = batch
        .to_bytes(RecordVersionPolicy::Fixed(RecordVersion::V3))
        .expect("encode batch");
    (partition, seqs, bytes)
}

/// Publishes pipelined batches until the connection dies.
async fn publisher(
    addr: std::net::SocketAddr,
    round: usize,
    task: usize,
    acks: Arc<watch::Sender<usize>>,
) -> Outcome {
    let mut c = Client::connect(addr, cursus_wire::Compression::None).await;
    let mut out = Outcome {
        sent: vec![Vec::new(); PARTITIONS as usize],
        acked: vec![0; PARTITIONS as usize],
        in_flight: 0,
    };
    // (request id, partition, records in the batch)
    let mut in_flight: VecDeque<(u64, u32, usize)> = VecDeque::new();
    let mut next = 0u64;
    'run: loop {
        while in_flight.len() < WINDOW {
            let (partition, seqs, bytes) = batch_bytes(round, task, next);
            next += 1;
            // Counted as sent before writing: a partly written batch is in
            // flight too.
            out.sent[partition as usize].extend_from_slice(&seqs);
            match c.try_send(Command::Publish, bytes).await {
                Some(id) => in_flight.push_back((id, partition, seqs.len())),
                None => {
                    in_flight.push_back((0, partition, seqs.len()));
                    break 'run;
                }
            }
        }
        let Some(frame) = c.recv().await else {
            break;
        };
        let (id, partition, count) = in_flight.pop_front().expect("a request in flight");
        assert_eq!(frame.request_id, id, "replies come in request order");
        assert_eq!(
            frame.status,
            Status::Ok,
            "publish failed: {:?}",
            String::from_utf8_lossy(&frame.payload)
        );
        out.acked[partition as usize] += count;
        acks.send_modify(|n| *n += 1);
    }
    out.in_flight = in_flight.len();
    out
}

/// Reads a whole partition from offset 0.
async fn read_all(c: &mut Client, partition: u32) -> Vec<Record> {
    let mut records = Vec::new();
    loop {
        let b = c
            .consume(&format!(
                "CONSUME topic={TOPIC} partition={partition} offset={} member=m batch=8192",
                records.len()
            ))
            .await;
        if b.records.is_empty() {
            return records;
        }
        records.extend(b.records);
    }
}

/// Checks the recovered log against what every connection of every round
/// sent and had acknowledged.
async fn verify(broker: &TestBroker, rounds: &[Vec<Outcome>]) -> Vec<u64> {
    let mut c = broker.client().await;
    let mut ends = Vec::new();
    let mut seen = HashSet::new();
    for partition in 0..PARTITIONS {
        let records = read_all(&mut c, partition).await;
        // Per (round, task): the sequence numbers present, in log order.
        let mut present: Vec<Vec<Vec<u64>>> = vec![vec![Vec::new(); TASKS]; rounds.len()];
        for (i, r) in records.iter().enumerate() {
            assert_eq!(r.offset, i as u64, "offsets are dense from 0");
            if r.producer_id == "probe" {
                // Appended after an earlier restart to check the log end.
                assert_eq!(&r.payload[..], b"x");
                continue;
            }
            let (round, task, seq) = parse(&r.payload)
                .unwrap_or_else(|| panic!("undecodable payload at offset {i}: {:?}", r.payload));
            assert_eq!(
                &r.payload[..],
                &payload(round, task, seq)[..],
                "record at offset {i} is whole"
            );
            assert_eq!(r.producer_id, format!("crash-r{round}-t{task}"));
            assert!(
                seen.insert((round, task, seq)),
                "record r{round} t{task} s{seq} appears twice"
            );
            present[round][task].push(seq);
        }
        for (round, outcomes) in rounds.iter().enumerate() {
            for (task, outcome) in outcomes.iter().enumerate() {
                let got = &present[round][task];
                let sent = &outcome.sent[partition as usize];
                let acked = outcome.acked[partition as usize];
                assert!(
                    got.len() <= sent.len() && got[..] == sent[..got.len()],
                    "round {round} task {task} partition {partition}: records present are \
                     not an in-order prefix of those sent"
                );
                eprintln!(
                    "round {round} task {task} partition {partition}: sent {} acked {acked} \
                     recovered {}",
                    sent.len(),
                    got.len()
                );
                assert!(
                    got.len() >= acked,
                    "round {round} task {task} partition {partition}: {acked} records \
                     acknowledged but only {} recovered",
                    got.len()
                );
            }
        }
        ends.push(records.len() as u64);
    }
    ends
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_records_survive_kill_9_mid_stream() {
    let mut broker = TestBroker::start();
    broker
        .client()
        .await
        .ok(&format!("CREATE topic={TOPIC} partitions={PARTITIONS}"))
        .await;
    let mut rounds: Vec<Vec<Outcome>> = Vec::new();
    for round in 0..ROUNDS {
        let (acks, mut acked) = watch::channel(0usize);
        let acks = Arc::new(acks);
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| tokio::spawn(publisher(broker.addr, round, task, Arc::clone(&acks))))
            .collect();
        within(acked.wait_for(|n| *n >= KILL_AFTER))
            .await
            .expect("publishers running");
        broker.kill9();
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(within(task).await.expect("publisher task"));
        }
        // The kill happened mid-stream: every connection still had batches
        // in flight (it keeps WINDOW outstanding until the broker dies).
        for (task, o) in outcomes.iter().enumerate() {
            assert!(o.in_flight > 0, "task {task} had nothing in flight");
            assert!(o.acked.iter().sum::<usize>() < o.sent.iter().map(Vec::len).sum());
        }
        rounds.push(outcomes);
        broker = broker.crash_and_restart();
        let ends = verify(&broker, &rounds).await;
        // New appends continue right after the recovered tail.
        let mut c = broker.client().await;
        for (partition, end) in ends.iter().enumerate() {
            let ack: serde_json::Value = serde_json::from_str(
                &c.ok(&format!(
                    "PUBLISH topic={TOPIC} partition={partition} acks=1 producerId=probe message=x"
                ))
                .await,
            )
            .unwrap();
            assert_eq!(ack["last_offset"], *end);
        }
    }
}
