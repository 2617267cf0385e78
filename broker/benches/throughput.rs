//! Publish and consume throughput of the real broker binary over loopback.
//!
//! For 100 B and 1 KiB records: several connections publish 1,000-record
//! CBV2 batches with acks=1 (every ack waits for fdatasync, shared by group
//! commit), each keeping a few batches in flight; then the same number of
//! connections read everything back with `CONSUME batch=8192`. Prints a
//! table and writes `target/bench/broker.json`.
//!
//! Run: `cargo bench -p cursus-broker --bench throughput`
//! (`CURSUS_BENCH_SCALE=0.1` shortens it).

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{Client, TestBroker};
use cursus_wire::{
    Acks, Batch, Command, Compression, Record, RecordVersion, RecordVersionPolicy, Status,
};
use serde_json::json;

/// Records per published batch.
const BATCH: usize = 1000;
/// Batches each publishing connection keeps in flight.
const WINDOW: usize = 4;
/// Records per CONSUME.
const CONSUME_BATCH: usize = 8192;

#[derive(Clone, Copy)]
struct Case {
    record_bytes: usize,
    records: usize,
    connections: usize,
    partitions: usize,
}

struct Measured {
    records: usize,
    payload_bytes: usize,
    elapsed: Duration,
    /// CPU time (user + system) the broker process used during the phase.
    broker_cpu: Duration,
    /// CPU time the benchmark client (this process) used during the phase.
    client_cpu: Duration,
}

/// User + system CPU time of process `pid` (`self` for this one) from
/// `/proc/<pid>/stat`, assuming the usual 100 clock ticks per second.
fn cpu_time(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the whole line.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Measures a phase: wall time and CPU time of the broker and the client.
struct Phase {
    pid: String,
    start: Instant,
    broker: Duration,
    client: Duration,
}

impl Phase {
    fn start(broker: &TestBroker) -> Phase {
        let pid = broker.pid().to_string();
        Phase {
            broker: cpu_time(&pid),
            client: cpu_time("self"),
            start: Instant::now(),
            pid,
        }
    }

    fn finish(self, records: usize, payload_bytes: usize) -> Measured {
        Measured {
            records,
            payload_bytes,
            elapsed: self.start.elapsed(),
            broker_cpu: cpu_time(&self.pid).saturating_sub(self.broker),
            client_cpu: cpu_time("self").saturating_sub(self.client),
        }
    }
}

impl Measured {
    fn json(&self, op: &str, case: &Case) -> serde_json::Value {
        let secs = self.elapsed.as_secs_f64();
        json!({
            "op": op,
            "record_bytes": case.record_bytes,
            "records": self.records,
            "seconds": secs,
            "records_per_s": self.records as f64 / secs,
            "mb_per_s": self.payload_bytes as f64 / secs / 1e6,
            "connections": if op == "publish" { case.connections } else { case.partitions },
            "partitions": case.partitions,
            "batch_records": if op == "publish" { BATCH } else { CONSUME_BATCH },
            "in_flight_per_connection": if op == "publish" { WINDOW } else { 1 },
            "acks": if op == "publish" { json!(1) } else { json!(null) },
            "broker_cpu_seconds": self.broker_cpu.as_secs_f64(),
            "client_cpu_seconds": self.client_cpu.as_secs_f64(),
            // Throughput per second of broker CPU: less sensitive than the
            // wall-clock rate to other load on a shared machine.
            "records_per_broker_cpu_s": self.records as f64 / self.broker_cpu.as_secs_f64().max(0.001),
        })
    }
}

fn batch_bytes(record_bytes: usize, partition: usize) -> Bytes {
    let payload = Bytes::from(vec![b'x'; record_bytes]);
    let batch = Batch {
        acks: Acks::Leader,
        records: (0..BATCH)
            .map(|_| Record {
                producer_id: "bench".into(),
                ..Record::new(payload.clone())
            })
            .collect(),
        ..Batch::new("bench", partition as i32)
    };
    batch
        .to_bytes(RecordVersionPolicy::Fixed(RecordVersion::V3))
        .expect("encode batch")
}

/// One publishing connection: `batches` pipelined PUBLISHes of pre-encoded
/// batches, one per partition it serves in turn (the broker re-encodes every
/// record with its offset, so client-side encoding is kept out of the
/// measurement).
async fn publish_conn(addr: std::net::SocketAddr, per_partition: Vec<Bytes>, batches: usize) {
    let mut c = Client::connect(addr, Compression::None).await;
    let (mut sent, mut acked) = (0, 0);
    while acked < batches {
        while sent < batches && sent - acked < WINDOW {
            let bytes = &per_partition[sent % per_partition.len()];
            c.send(Command::Publish, bytes.clone()).await;
            sent += 1;
        }
        let frame = c.recv().await.expect("ack");
        assert_eq!(
            frame.status,
            Status::Ok,
            "{}",
            String::from_utf8_lossy(&frame.payload)
        );
        acked += 1;
    }
}

/// One consuming connection: reads `partition` from 0 until `expected`
/// records arrived; returns (records, payload bytes).
async fn consume_conn(
    addr: std::net::SocketAddr,
    partition: usize,
    expected: usize,
) -> (usize, usize) {
    let mut c = Client::connect(addr, Compression::None).await;
    let (mut records, mut bytes) = (0usize, 0usize);
    while records < expected {
        let batch = c
            .consume(&format!(
                "CONSUME topic=bench partition={partition} offset={records} member=m \
                 batch={CONSUME_BATCH}"
            ))
            .await;
        assert!(
            !batch.records.is_empty(),
            "partition {partition} ended early"
        );
        assert_eq!(batch.records[0].offset, records as u64);
        records += batch.records.len();
        bytes += batch.records.iter().map(|r| r.payload.len()).sum::<usize>();
    }
    (records, bytes)
}

async fn run_case(case: Case, root: &std::path::Path) -> (Measured, Measured) {
    let dir = tempfile::tempdir_in(root).expect("temp dir");
    let broker = Arc::new(TestBroker::start_in(dir, Vec::new()));
    let mut admin = broker.client().await;
    admin
        .ok(&format!(
            "CREATE topic=bench partitions={}",
            case.partitions
        ))
        .await;
    let batches_per_conn = case.records / BATCH / case.connections;
    let records = batches_per_conn * BATCH * case.connections;

    let phase = Phase::start(&broker);
    let tasks: Vec<_> = (0..case.connections)
        .map(|i| {
            // Connection i serves the partitions p with p % connections == i
            // (with more connections than partitions: partition i % partitions).
            let partitions: Vec<usize> = if case.connections >= case.partitions {
                vec![i % case.partitions]
            } else {
                (i..case.partitions).step_by(case.connections).collect()
            };
            let bytes = partitions
                .into_iter()
                .map(|p| batch_bytes(case.record_bytes, p))
                .collect();
            tokio::spawn(publish_conn(broker.addr, bytes, batches_per_conn))
        })
        .collect();
    for t in tasks {
        t.await.expect("publisher");
    }
    let publish = phase.finish(records, records * case.record_bytes);

    let per_partition = records / case.partitions;
    let phase = Phase::start(&broker);
    let tasks: Vec<_> = (0..case.partitions)
        .map(|p| tokio::spawn(consume_conn(broker.addr, p, per_partition)))
        .collect();
    let (mut n, mut bytes) = (0, 0);
    for t in tasks {
        let (r, b) = t.await.expect("consumer");
        n += r;
        bytes += b;
    }
    let consume = phase.finish(n, bytes);
    assert_eq!(n, records);
    (publish, consume)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let scale: f64 = std::env::var("CURSUS_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let out_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out_dir).expect("create target/bench");
    let scaled = |n: usize| ((n as f64 * scale) as usize).max(BATCH * 4);
    let cases = [
        Case {
            record_bytes: 100,
            records: scaled(2_000_000),
            connections: 4,
            partitions: 4,
        },
        Case {
            record_bytes: 100,
            records: scaled(1_000_000),
            connections: 4,
            partitions: 1,
        },
        // One connection, as one client producer uses: the broker serves a
        // connection's requests in order, on one task.
        Case {
            record_bytes: 100,
            records: scaled(2_000_000),
            connections: 1,
            partitions: 4,
        },
        Case {
            record_bytes: 1024,
            records: scaled(500_000),
            connections: 4,
            partitions: 4,
        },
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut results = Vec::new();
    println!(
        "{:<8} {:>6} {:>5} {:>5} {:>10} {:>8} {:>12} {:>8} {:>10} {:>10} {:>14}",
        "op",
        "size",
        "conns",
        "parts",
        "records",
        "secs",
        "records/s",
        "MB/s",
        "broker_cpu",
        "client_cpu",
        "rec/broker_s"
    );
    for case in cases {
        let (publish, consume) = runtime.block_on(run_case(case, &out_dir));
        for (op, m) in [("publish", &publish), ("consume", &consume)] {
            let v = m.json(op, &case);
            println!(
                "{:<8} {:>6} {:>5} {:>5} {:>10} {:>8.2} {:>12.0} {:>8.1} {:>10.2} {:>10.2} {:>14.0}",
                op,
                case.record_bytes,
                if op == "publish" {
                    case.connections
                } else {
                    case.partitions
                },
                case.partitions,
                m.records,
                v["seconds"].as_f64().unwrap_or_default(),
                v["records_per_s"].as_f64().unwrap_or_default(),
                v["mb_per_s"].as_f64().unwrap_or_default(),
                m.broker_cpu.as_secs_f64(),
                m.client_cpu.as_secs_f64(),
                v["records_per_broker_cpu_s"].as_f64().unwrap_or_default(),
            );
            results.push(v);
        }
    }
    let report = json!({
        "bench": "broker_throughput",
        "transport": "loopback TCP, no compression",
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "mb": "10^6 bytes of record payload",
        "load_average_at_end": std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
            .to_owned(),
        "aim": {"publish_100b_records_per_s": 500_000, "consume_100b_records_per_s": 1_000_000},
        "results": results,
    });
    let path = out_dir.join("broker.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&report).expect("json"))
        .expect("write broker.json");
    println!("wrote {}", path.display());
}
