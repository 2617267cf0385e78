//! Transactional throughput next to plain idempotent throughput, through
//! the engine against the reference broker (a release build on a free
//! loopback port): 100-byte records, acks=all, one partition per record
//! round-robin over 4 partitions, 100 and 1,000 records per transaction.
//! Writes target/bench/transactions.json.
//!
//! ```sh
//! cargo bench -p cursus --bench transactions          # 20,000 records each
//! CURSUS_BENCH_RECORDS=100000 cargo bench -p cursus --bench transactions
//! ```

use cursus::admin::{Admin, NewTopic};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ProducerConfig};
use cursus_testkit::TestBroker;
use std::time::{Duration, Instant};

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;
/// Records per transaction of the two transactional runs.
const PER_TRANSACTION: [usize; 2] = [100, 1_000];

/// Sends `records` records and waits for all of them; with `transactional`
/// in transactions of `per_transaction` records. Returns records/s.
async fn run(
    producer: &Producer,
    topic: &str,
    records: usize,
    per_transaction: usize,
    transactional: bool,
) -> cursus::Result<f64> {
    let payload = "x".repeat(PAYLOAD);
    let started = Instant::now();
    let mut sent = 0;
    while sent < records {
        if transactional {
            producer.begin_transaction().await?;
        }
        let n = per_transaction.min(records - sent);
        let mut deliveries = Vec::with_capacity(n);
        for i in 0..n {
            let record = ProducerRecord::new(topic, payload.clone())
                .partition((sent + i) as u32 % PARTITIONS);
            deliveries.push(producer.send(record).await?);
        }
        if transactional {
            producer.commit_transaction().await?;
        } else if sent + n >= records {
            producer.flush(None).await?;
        }
        if transactional || sent + n >= records {
            for d in deliveries {
                d.await?;
            }
        }
        sent += n;
    }
    Ok(records as f64 / started.elapsed().as_secs_f64())
}

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let records: usize = std::env::var("CURSUS_BENCH_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let broker = TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    for topic in ["idempotent", "transactional"] {
        admin
            .create_topic(&NewTopic::new(topic).partitions(PARTITIONS))
            .await?;
    }

    let mut config = ProducerConfig::new(&broker.addr);
    config.set("acks", "all")?;
    config.set("enable_idempotence", "true")?;
    let producer = Producer::connect(config).await?;
    let idempotent = run(&producer, "idempotent", records, PER_TRANSACTION[0], false).await?;
    producer.close(Duration::from_secs(10)).await?;
    println!("idempotent produce (acks=all): {records} x {PAYLOAD} B = {idempotent:.0} records/s");

    let mut rows = Vec::new();
    for per_transaction in PER_TRANSACTION {
        let mut config = ProducerConfig::new(&broker.addr);
        config.set("transactional_id", &format!("bench-{per_transaction}"))?;
        let producer = Producer::connect(config).await?;
        producer.init_transactions().await?;
        let rate = run(&producer, "transactional", records, per_transaction, true).await?;
        producer.close(Duration::from_secs(10)).await?;
        let per_txn_ms = per_transaction as f64 / rate * 1e3;
        println!(
            "transactional produce ({per_transaction} records per transaction, acks=all): \
             {records} x {PAYLOAD} B = {rate:.0} records/s ({per_txn_ms:.2} ms per transaction, \
             {:.3} of idempotent)",
            rate / idempotent
        );
        rows.push(format!(
            "\"transactional_{per_transaction}_per_txn_records_per_s\": {rate:.0}"
        ));
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    let json = format!(
        "{{\"records\": {records}, \"payload_bytes\": {PAYLOAD}, \"partitions\": {PARTITIONS}, \"idempotent_records_per_s\": {idempotent:.0}, {}}}\n",
        rows.join(", ")
    );
    std::fs::write(out.join("transactions.json"), json).ok();
    Ok(())
}
