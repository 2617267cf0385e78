//! Latency through the engine at a fixed offered rate, against the reference
//! broker (a release build started by the testkit on a free loopback port,
//! with its default of syncing every write before acknowledging).
//!
//! For each rate (10,000 and 100,000 records/s) a paced sender offers
//! 100-byte records on one partition for `CURSUS_BENCH_LATENCY_SECS`
//! seconds (default 5): every millisecond it sends the records whose
//! scheduled time has come, each stamped with its send instant in the
//! payload. Two latencies are recorded per record:
//!
//! - produce→acknowledgement: from the `send_with_callback` call to its
//!   delivery callback (acks=1);
//! - produce→consume: from the same instant to the moment a group consumer
//!   in this process has the record back from `poll`.
//!
//! p50/p99/p999/max in µs go to stdout and target/bench/latency.json. A
//! rate the machine cannot offer (achieved below 90 % of the target) is
//! reported with its achieved rate and `"offered": false` rather than as if
//! it had been met.
//!
//! ```sh
//! cargo bench -p cursus --bench latency
//! CURSUS_BENCH_LATENCY_SECS=2 CURSUS_BENCH_LINGER_MS=5 cargo bench -p cursus --bench latency
//! ```

use cursus::admin::{Admin, NewTopic};
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use cursus_testkit::TestBroker;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const PAYLOAD: usize = 100;
const RATES: [u64; 2] = [10_000, 100_000];

/// The process's reference instant: payloads carry nanoseconds since it.
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

fn now_ns() -> u64 {
    base().elapsed().as_nanos() as u64
}

/// A record payload: a marker byte (`W` warm-up, `M` measured), then the
/// send instant, padded to `PAYLOAD` bytes.
fn payload(marker: u8, sent_ns: u64) -> bytes::Bytes {
    let mut p = vec![b'.'; PAYLOAD];
    p[0] = marker;
    p[1..9].copy_from_slice(&sent_ns.to_le_bytes());
    bytes::Bytes::from(p)
}

/// p50/p99/p999/max in µs of latencies in ns.
fn percentiles(mut ns: Vec<u64>) -> [f64; 4] {
    if ns.is_empty() {
        return [f64::NAN; 4];
    }
    ns.sort_unstable();
    let at = |q: f64| ns[((ns.len() as f64 * q) as usize).min(ns.len() - 1)] as f64 / 1e3;
    [
        at(0.50),
        at(0.99),
        at(0.999),
        *ns.last().expect("non-empty") as f64 / 1e3,
    ]
}

struct Row {
    rate: u64,
    achieved: f64,
    records: usize,
    ack: [f64; 4],
    consume: [f64; 4],
}

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let secs: f64 = std::env::var("CURSUS_BENCH_LATENCY_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5.0);
    let linger: u64 = std::env::var("CURSUS_BENCH_LINGER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    base();
    let broker = TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    let mut rows = Vec::new();
    for rate in RATES {
        let topic = format!("latency-{rate}");
        admin
            .create_topic(&NewTopic::new(&topic).partitions(1))
            .await?;
        let row = run(&broker.addr, &topic, rate, secs, linger).await?;
        let offered = row.achieved >= 0.9 * rate as f64;
        println!(
            "latency at {rate} records/s (achieved {:.0}{}), {} records, linger {linger} ms:\n  \
             produce->ack     p50 {:>8.0} us  p99 {:>8.0} us  p999 {:>8.0} us  max {:>8.0} us\n  \
             produce->consume p50 {:>8.0} us  p99 {:>8.0} us  p999 {:>8.0} us  max {:>8.0} us",
            row.achieved,
            if offered {
                ""
            } else {
                ", NOT offered: the machine could not keep the rate"
            },
            row.records,
            row.ack[0],
            row.ack[1],
            row.ack[2],
            row.ack[3],
            row.consume[0],
            row.consume[1],
            row.consume[2],
            row.consume[3],
        );
        rows.push((row, offered));
    }
    admin.close().await;
    let fmt = |v: f64| {
        if v.is_finite() {
            format!("{v:.0}")
        } else {
            "null".into()
        }
    };
    let rows_json: Vec<String> = rows
        .iter()
        .map(|(r, offered)| {
            format!(
                "{{\"rate\": {}, \"achieved_per_s\": {:.0}, \"offered\": {offered}, \"records\": {}, \
                 \"ack_us\": {{\"p50\": {}, \"p99\": {}, \"p999\": {}, \"max\": {}}}, \
                 \"consume_us\": {{\"p50\": {}, \"p99\": {}, \"p999\": {}, \"max\": {}}}}}",
                r.rate, r.achieved, r.records,
                fmt(r.ack[0]), fmt(r.ack[1]), fmt(r.ack[2]), fmt(r.ack[3]),
                fmt(r.consume[0]), fmt(r.consume[1]), fmt(r.consume[2]), fmt(r.consume[3]),
            )
        })
        .collect();
    let json = format!(
        "{{\"command\": \"cargo bench -p cursus --bench latency\", \"payload_bytes\": {PAYLOAD}, \
         \"seconds\": {secs}, \"linger_ms\": {linger}, \"acks\": 1, \"broker_sync\": true, \"rows\": [{}]}}\n",
        rows_json.join(", ")
    );
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    std::fs::write(out.join("latency.json"), json).ok();
    Ok(())
}

/// One rate: a consumer caught up on the topic, then the paced sender.
async fn run(addr: &str, topic: &str, rate: u64, secs: f64, linger: u64) -> cursus::Result<Row> {
    let mut pc = ProducerConfig::new(addr);
    pc.set("acks", "1")?;
    pc.set("linger_ms", &linger.to_string())?;
    let producer = Producer::connect(pc).await?;
    let mut cc = ConsumerConfig::new(addr, format!("{topic}-group"));
    cc.set("fetch_max_wait_ms", "100")?;
    let consumer = Consumer::connect(cc).await?;
    consumer
        .subscribe(Subscription::Topics(vec![topic.into()]))
        .await?;
    // Warm up: the consumer has its partition and has read one record.
    producer
        .send(ProducerRecord::new(topic, payload(b'W', now_ns())))
        .await?
        .await?;
    loop {
        let got = consumer.poll(Duration::from_millis(500)).await?;
        if got.iter().any(|r| r.payload[0] == b'W') {
            break;
        }
    }
    let total = (rate as f64 * secs) as usize;
    // Reads until every measured record is back.
    let reader = {
        tokio::spawn(async move {
            let mut lat = Vec::with_capacity(total);
            while lat.len() < total {
                let batch = consumer.poll(Duration::from_secs(5)).await?;
                if batch.is_empty() {
                    break;
                }
                let now = now_ns();
                for r in batch.iter().filter(|r| r.payload[0] == b'M') {
                    let sent = u64::from_le_bytes(r.payload[1..9].try_into().expect("8 bytes"));
                    lat.push(now.saturating_sub(sent));
                }
            }
            Ok::<_, cursus::Error>((lat, consumer))
        })
    };
    // Each delivery callback reports its latency (`None`: failed).
    let (acks, mut acked) = tokio::sync::mpsc::unbounded_channel::<Option<u64>>();
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut sent = 0usize;
    while sent < total {
        tick.tick().await;
        let due = ((started.elapsed().as_secs_f64() * rate as f64) as usize).min(total);
        while sent < due {
            let at = now_ns();
            let acks = acks.clone();
            producer
                .send_with_callback(ProducerRecord::new(topic, payload(b'M', at)), move |r| {
                    let _ = acks.send(r.ok().map(|_| now_ns().saturating_sub(at)));
                })
                .await?;
            sent += 1;
        }
    }
    let achieved = total as f64 / started.elapsed().as_secs_f64();
    producer.flush(None).await?;
    let (consumed, consumer) = reader.await.expect("reader task")?;
    producer.close(Duration::from_secs(10)).await?;
    consumer.close().await?;
    drop(acks);
    // Every callback has run once the last sender (each callback held one) is gone.
    let mut ack = Vec::with_capacity(total);
    while let Some(lat) = acked.recv().await {
        ack.extend(lat);
    }
    Ok(Row {
        rate,
        achieved,
        records: total,
        ack: percentiles(ack),
        consume: percentiles(consumed),
    })
}
