//! The native side of ours in `make bench-peer` (tools/bench-peer): the Rust
//! engine producing or consuming N records of 100 bytes against a running
//! broker, acks=1, linger 5 ms, batches of up to 256 KiB, 4 partitions
//! written round-robin — the settings the Kafka Java client gets there
//! (tools/bench-peer/java/KafkaBench.java). Prints one JSON object.
//!
//! ```sh
//! cargo run --release -p cursus --example bench_native -- produce 127.0.0.1:9000 t 2000000
//! cargo run --release -p cursus --example bench_native -- consume 127.0.0.1:9000 t 2000000
//! ```
//!
//! `produce` creates the topic first; records/s runs from the first send to
//! the last acknowledgement. `consume` reads the topic with one group member;
//! records/s runs from the first record received to the last.

use cursus::admin::{Admin, NewTopic};
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use std::time::{Duration, Instant};

#[path = "../benches/support/workload.rs"]
mod workload;

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, bootstrap, topic, records] = args.as_slice() else {
        eprintln!("usage: bench_native produce|consume BOOTSTRAP TOPIC RECORDS");
        std::process::exit(2);
    };
    let records: usize = records.parse().unwrap_or_else(|_| {
        eprintln!("RECORDS: a count, not {records:?}");
        std::process::exit(2);
    });
    let rate = match mode.as_str() {
        "produce" => produce(bootstrap, topic, records).await?,
        "consume" => consume(bootstrap, topic, records).await?,
        other => {
            eprintln!("mode: produce or consume, not {other:?}");
            std::process::exit(2);
        }
    };
    println!("{{\"mode\": \"{mode}\", \"records\": {records}, \"records_per_s\": {rate:.0}}}");
    Ok(())
}

/// Creates `topic`, then returns the records/s of `records` sends until
/// every one is acknowledged.
async fn produce(bootstrap: &str, topic: &str, records: usize) -> cursus::Result<f64> {
    let admin = Admin::connect(ClientConfig::new(bootstrap)).await?;
    admin
        .create_topic(&NewTopic::new(topic).partitions(PARTITIONS))
        .await?;
    admin.close().await;
    let mut config = ProducerConfig::new(bootstrap);
    config.set("acks", "1")?;
    config.set("linger_ms", "5")?;
    config.set("batch_size", "262144")?;
    let producer = Producer::connect(config).await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    let rate = workload::produce_all(&producer, records, |i| {
        ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS)
    })
    .await?;
    producer.close(Duration::from_secs(10)).await?;
    Ok(rate)
}

/// Records/s of one group member reading `records` records of `topic`, from
/// the first record received to the last (the group join left out).
async fn consume(bootstrap: &str, topic: &str, records: usize) -> cursus::Result<f64> {
    let mut config = ConsumerConfig::new(bootstrap, format!("g-{topic}"));
    config.set("max_poll_records", "10000")?;
    config.set("fetch_max_records", "8192")?;
    let consumer = Consumer::connect(config).await?;
    consumer
        .subscribe(Subscription::Topics(vec![topic.into()]))
        .await?;
    let deadline = Instant::now() + Duration::from_secs(300);
    let (mut seen, mut first) = (0, 0);
    let mut started = Instant::now();
    while seen < records && Instant::now() < deadline {
        let n = consumer.poll(Duration::from_secs(1)).await?.len();
        if n > 0 && seen == 0 {
            started = Instant::now();
            first = n;
        }
        seen += n;
    }
    let secs = started.elapsed().as_secs_f64();
    consumer.close().await?;
    if seen < records {
        eprintln!("consumed {seen} of {records}");
        std::process::exit(1);
    }
    Ok((records - first) as f64 / secs)
}
