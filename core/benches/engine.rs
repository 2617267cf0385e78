//! Producer and consumer throughput through the engine against the
//! reference broker (a release build started on a free loopback port):
//! 100-byte records, acks=1, default batching. Writes target/bench/engine.json.
//!
//! ```sh
//! cargo bench -p cursus --bench engine            # 200,000 records
//! CURSUS_BENCH_RECORDS=1000000 cargo bench -p cursus --bench engine
//! ```

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use cursus_testkit::TestBroker;
use std::time::{Duration, Instant};

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    // `cargo bench` passes `--bench`; nothing to parse.
    let records: usize = std::env::var("CURSUS_BENCH_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let broker = TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    admin
        .create_topic(&NewTopic::new("bench").partitions(PARTITIONS))
        .await?;

    let mut config = ProducerConfig::new(&broker.addr);
    config.set("acks", "1")?;
    config.set("batch_size", "262144")?;
    let producer = Producer::connect(config).await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    let started = Instant::now();
    let mut pending = std::collections::VecDeque::new();
    for i in 0..records {
        let record = ProducerRecord::new("bench", payload.clone()).partition(i as u32 % PARTITIONS);
        pending.push_back(producer.send(record).await?);
        // Keep memory flat: settle acknowledgements as we go.
        while pending.len() > 50_000 {
            pending.pop_front().expect("non-empty").await?;
        }
    }
    producer.flush(None).await?;
    for d in pending {
        d.await?;
    }
    let produce_secs = started.elapsed().as_secs_f64();
    producer.close(Duration::from_secs(10)).await?;

    let mut config = ConsumerConfig::new(&broker.addr, "bench-group");
    config.set("max_poll_records", "10000")?;
    config.set("fetch_max_records", "8192")?;
    let consumer = Consumer::connect(config).await?;
    consumer
        .subscribe(Subscription::Topics(vec!["bench".into()]))
        .await?;
    let started = Instant::now();
    let mut seen = 0;
    while seen < records {
        seen += consumer.poll(Duration::from_secs(5)).await?.len();
    }
    let consume_secs = started.elapsed().as_secs_f64();
    consumer.close().await?;

    let produce_rate = records as f64 / produce_secs;
    let consume_rate = records as f64 / consume_secs;
    println!("engine produce: {records} x {PAYLOAD} B in {produce_secs:.2} s = {produce_rate:.0} records/s ({:.1} MB/s)", produce_rate * PAYLOAD as f64 / 1e6);
    println!("engine consume: {records} x {PAYLOAD} B in {consume_secs:.2} s = {consume_rate:.0} records/s ({:.1} MB/s)", consume_rate * PAYLOAD as f64 / 1e6);
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    let json = format!(
        "{{\"records\": {records}, \"payload_bytes\": {PAYLOAD}, \"partitions\": {PARTITIONS}, \"produce_records_per_s\": {produce_rate:.0}, \"consume_records_per_s\": {consume_rate:.0}}}\n"
    );
    std::fs::write(out.join("engine.json"), json).ok();
    Ok(())
}
