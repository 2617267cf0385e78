//! acks=all produce through the engine on a three-broker cluster (every
//! partition replicated three times: an acknowledgement waits until the
//! record is in every in-sync replica and the committed high-water mark is
//! through Raft) next to the same workload on a single broker (the
//! reference broker standalone, where acks=all is its own synced write).
//! Both are release builds started by the testkit on free loopback ports
//! (`TestCluster::start(3)`, `TestBroker::start()`), one after the other,
//! never at the same time.
//!
//! The workload is the engine bench's produce (`support/workload.rs`):
//! 100-byte records over 4 partitions in turn, batch_size 256 KiB, default
//! linger, at most 50,000 unacknowledged records, timed from the first send
//! to the last acknowledgement; each record's send-to-acknowledgement time
//! is kept for the percentiles. At that load a record's produce→ack is
//! mostly its wait behind the records in flight (about 50,000 ÷ the rate),
//! so each case then also sends records one at a time, each awaited before
//! the next (up to 1,000 records or 2 s): the acknowledgement's own round
//! trip, where the replication and the committed high-water mark show. One
//! record per partition is sent and acknowledged before the timed runs
//! (metadata and leaders known). Writes records/s and p50/p99 produce→ack
//! (loaded and one at a time) for both to target/bench/cluster.json.
//!
//! ```sh
//! cargo bench -p cursus --bench cluster           # 500,000 records per case
//! CURSUS_BENCH_CLUSTER_RECORDS=300000 cargo bench -p cursus --bench cluster
//! ```

use cursus::admin::{Admin, NewTopic};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ProducerConfig};
use cursus_testkit::{TestBroker, TestCluster};
use std::time::{Duration, Instant};

#[path = "support/workload.rs"]
mod workload;

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;
const REPLICATION: u32 = 3;
const BATCH_SIZE: usize = 262_144;

/// Records sent one at a time: at most this many, for at most `SINGLES_FOR`.
const SINGLES: usize = 1_000;
const SINGLES_FOR: Duration = Duration::from_secs(2);

/// One case's figures.
struct Case {
    rate: f64,
    p50_us: f64,
    p99_us: f64,
    /// p50 and p99 µs of records sent one at a time, and their count.
    single: (f64, f64, usize),
}

#[tokio::main]
async fn main() -> cursus::Result<()> {
    // `cargo bench` passes `--bench`; nothing to parse.
    let records: usize = std::env::var("CURSUS_BENCH_CLUSTER_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500_000);

    let single = {
        let broker = TestBroker::start();
        run("single broker", &broker.addr, None, records).await?
    };
    let cluster = {
        let cluster = TestCluster::start(3);
        run(
            "3-broker cluster",
            &cluster.bootstrap(),
            Some(REPLICATION),
            records,
        )
        .await?
    };
    let ratio = cluster.rate / single.rate;
    println!("cluster / single broker: {ratio:.2}");

    let case = |c: &Case| {
        format!(
            "{{\"produce_records_per_s\": {:.0}, \"ack_us\": {{\"p50\": {:.0}, \"p99\": {:.0}}}, \
             \"one_at_a_time_ack_us\": {{\"p50\": {:.0}, \"p99\": {:.0}, \"count\": {}}}}}",
            c.rate, c.p50_us, c.p99_us, c.single.0, c.single.1, c.single.2
        )
    };
    let json = format!(
        "{{\"command\": \"cargo bench -p cursus --bench cluster\", \"records\": {records}, \
         \"payload_bytes\": {PAYLOAD}, \"partitions\": {PARTITIONS}, \"acks\": \"all\", \
         \"batch_size\": {BATCH_SIZE}, \"brokers\": 3, \"replication_factor\": {REPLICATION}, \
         \"single\": {}, \"cluster\": {}, \"cluster_vs_single\": {ratio:.3}}}\n",
        case(&single),
        case(&cluster)
    );
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    std::fs::write(out.join("cluster.json"), json).ok();
    Ok(())
}

/// Creates the topic (`replication` replicas when given), warms the
/// producer up, then times `records` acks=all records.
async fn run(
    name: &str,
    bootstrap: &str,
    replication: Option<u32>,
    records: usize,
) -> cursus::Result<Case> {
    let topic = "bench-acks-all";
    let mut client = ClientConfig::default();
    client.set("bootstrap_servers", bootstrap)?;
    let admin = Admin::connect(client).await?;
    let mut new_topic = NewTopic::new(topic).partitions(PARTITIONS);
    new_topic.replication_factor = replication;
    admin.create_topic(&new_topic).await?;
    admin.close().await;

    let mut config = ProducerConfig::default();
    config.set("bootstrap_servers", bootstrap)?;
    config.set("acks", "all")?;
    config.set("batch_size", &BATCH_SIZE.to_string())?;
    let producer = Producer::connect(config).await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    for p in 0..PARTITIONS {
        producer
            .send(ProducerRecord::new(topic, payload.clone()).partition(p))
            .await?
            .await?;
    }
    let timed = workload::produce_all_timed(&producer, records, |i| {
        ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS)
    })
    .await?;
    let mut acks = Vec::with_capacity(SINGLES);
    let started = Instant::now();
    while acks.len() < SINGLES && started.elapsed() < SINGLES_FOR {
        let record =
            ProducerRecord::new(topic, payload.clone()).partition(acks.len() as u32 % PARTITIONS);
        let sent = Instant::now();
        producer.send(record).await?.await?;
        acks.push(sent.elapsed());
    }
    acks.sort_unstable();
    let single = workload::Timed { rate: 0.0, acks };
    producer.close(Duration::from_secs(10)).await?;
    let case = Case {
        rate: timed.rate,
        p50_us: timed.quantile_us(0.50),
        p99_us: timed.quantile_us(0.99),
        single: (
            single.quantile_us(0.50),
            single.quantile_us(0.99),
            single.acks.len(),
        ),
    };
    println!(
        "acks=all produce ({name}): {records} x {PAYLOAD} B = {:.0} records/s ({:.1} MB/s), \
         produce->ack p50 {:.0} us, p99 {:.0} us; one at a time ({} records): p50 {:.0} us, \
         p99 {:.0} us",
        case.rate,
        case.rate * PAYLOAD as f64 / 1e6,
        case.p50_us,
        case.p99_us,
        case.single.2,
        case.single.0,
        case.single.1
    );
    Ok(case)
}
