//! Producer and consumer throughput through the engine against the
//! reference broker (a release build started on a free loopback port):
//! 100-byte records, acks=1, default batching, first over plain TCP, then
//! over TLS 1.3 with mutual TLS on the same broker.
//! Writes target/bench/engine.json.
//!
//! ```sh
//! cargo bench -p cursus --bench engine            # 200,000 records each way
//! CURSUS_BENCH_RECORDS=1000000 cargo bench -p cursus --bench engine
//! ```

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use cursus_testkit::pki::TestPki;
use cursus_testkit::TestBroker;
use std::time::{Duration, Instant};

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;

/// Client options of one transport: `(name, value)` pairs on top of the
/// bootstrap address.
type Transport = Vec<(&'static str, String)>;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    // `cargo bench` passes `--bench`; nothing to parse.
    let records: usize = std::env::var("CURSUS_BENCH_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let pki = TestPki::generate(dir.path()).expect("test PKI");
    let broker = TestBroker::start_with_config(&format!(
        "tls_listen = \"127.0.0.1:0\"\ntls_cert_file = \"{}\"\ntls_key_file = \"{}\"\n\
         tls_client_ca_file = \"{}\"\n",
        pki.server_cert.display(),
        pki.server_key.display(),
        pki.ca.display()
    ));
    let plain = (broker.addr.clone(), Transport::new());
    let tls = (
        broker.tls_addr.clone().expect("TLS listener"),
        vec![
            ("tls_ca_file", pki.ca.display().to_string()),
            ("tls_cert_file", pki.client_cert.display().to_string()),
            ("tls_key_file", pki.client_key.display().to_string()),
        ],
    );
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    let mut rates = Vec::new();
    for (name, (addr, options)) in [("plain", plain), ("tls", tls)] {
        let topic = format!("bench-{name}");
        admin
            .create_topic(&NewTopic::new(&topic).partitions(PARTITIONS))
            .await?;
        let produce = produce(&addr, &options, &topic, records).await?;
        let consume = consume(&addr, &options, &topic, records).await?;
        for (what, rate) in [("produce", produce), ("consume", consume)] {
            println!(
                "engine {what} ({name}): {records} x {PAYLOAD} B = {rate:.0} records/s ({:.1} MB/s)",
                rate * PAYLOAD as f64 / 1e6
            );
        }
        rates.push((name, produce, consume));
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    let fields: Vec<String> = rates
        .iter()
        .map(|(name, p, c)| {
            let prefix = if *name == "plain" { String::new() } else { format!("{name}_") };
            format!("\"{prefix}produce_records_per_s\": {p:.0}, \"{prefix}consume_records_per_s\": {c:.0}")
        })
        .collect();
    let json = format!(
        "{{\"records\": {records}, \"payload_bytes\": {PAYLOAD}, \"partitions\": {PARTITIONS}, {}}}\n",
        fields.join(", ")
    );
    std::fs::write(out.join("engine.json"), json).ok();
    Ok(())
}

/// Records per second produced (acks=1) until every one is acknowledged.
async fn produce(
    addr: &str,
    options: &Transport,
    topic: &str,
    records: usize,
) -> cursus::Result<f64> {
    let mut config = ProducerConfig::new(addr);
    for (k, v) in options {
        config.set(k, v)?;
    }
    config.set("acks", "1")?;
    config.set("batch_size", "262144")?;
    let producer = Producer::connect(config).await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    let started = Instant::now();
    let mut pending = std::collections::VecDeque::new();
    for i in 0..records {
        let record = ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS);
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
    let secs = started.elapsed().as_secs_f64();
    producer.close(Duration::from_secs(10)).await?;
    Ok(records as f64 / secs)
}

/// Records per second consumed by one group member reading every record.
async fn consume(
    addr: &str,
    options: &Transport,
    topic: &str,
    records: usize,
) -> cursus::Result<f64> {
    let mut config = ConsumerConfig::new(addr, format!("{topic}-group"));
    for (k, v) in options {
        config.set(k, v)?;
    }
    config.set("max_poll_records", "10000")?;
    config.set("fetch_max_records", "8192")?;
    let consumer = Consumer::connect(config).await?;
    consumer
        .subscribe(Subscription::Topics(vec![topic.into()]))
        .await?;
    let started = Instant::now();
    let mut seen = 0;
    while seen < records {
        seen += consumer.poll(Duration::from_secs(5)).await?.len();
    }
    let secs = started.elapsed().as_secs_f64();
    consumer.close().await?;
    Ok(records as f64 / secs)
}
