//! The cluster rows of `make bench-peer` (tools/bench-peer), our side: the
//! Rust engine producing N records of 100 bytes with acks=all to a running
//! three-broker cluster, on a topic of 4 partitions replicated three times
//! with min_in_sync_replicas 2; linger 5 ms, batches of up to 256 KiB,
//! partitions written round-robin. The Kafka side is
//! tools/bench-peer/java/KafkaClusterBench.java, which measures the same way.
//! Prints one JSON object.
//!
//! ```sh
//! cargo run --release -p cursus --example bench_cluster -- 127.0.0.1:9001,127.0.0.1:9002 t 500000
//! ```
//!
//! It creates the topic, then sends one record to each partition and awaits
//! it (leaders elected and known: the cluster is serving the topic), then
//! times N records (at most 50,000 unacknowledged, `support/workload.rs`):
//! records/s from the first send to the last acknowledgement, and each
//! record's send→ack time. Then records one at a time, each awaited before
//! the next (up to 1,000 records or 2 s): the acknowledgement's own round
//! trip, which the loaded figure hides behind the records in flight.

use cursus::admin::{Admin, NewTopic};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ProducerConfig};
use std::time::{Duration, Instant};

#[path = "../benches/support/workload.rs"]
mod workload;

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;
const REPLICATION: u32 = 3;
const MIN_IN_SYNC: u32 = 2;

/// Records sent one at a time: at most this many, for at most `SINGLES_FOR`.
const SINGLES: usize = 1_000;
const SINGLES_FOR: Duration = Duration::from_secs(2);

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bootstrap, topic, records] = args.as_slice() else {
        eprintln!("usage: bench_cluster BOOTSTRAP TOPIC RECORDS");
        std::process::exit(2);
    };
    let records: usize = records.parse().unwrap_or_else(|_| {
        eprintln!("RECORDS: a count, not {records:?}");
        std::process::exit(2);
    });

    // A comma-separated list: `set` splits it (`new` takes one address).
    let mut client = ClientConfig::default();
    client.set("bootstrap_servers", bootstrap)?;
    let admin = Admin::connect(client).await?;
    let mut new_topic = NewTopic::new(topic).partitions(PARTITIONS);
    new_topic.replication_factor = Some(REPLICATION);
    new_topic.min_in_sync_replicas = Some(MIN_IN_SYNC);
    admin.create_topic(&new_topic).await?;
    admin.close().await;

    let mut config = ProducerConfig::default();
    config.set("bootstrap_servers", bootstrap)?;
    config.set("acks", "all")?;
    config.set("linger_ms", "5")?;
    config.set("batch_size", "262144")?;
    let producer = Producer::connect(config).await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    let record =
        |i: usize| ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS);
    for p in 0..PARTITIONS as usize {
        producer.send(record(p)).await?.await?;
    }

    let loaded = workload::produce_all_timed(&producer, records, &record).await?;
    let mut single = Vec::with_capacity(SINGLES);
    let started = Instant::now();
    while single.len() < SINGLES && started.elapsed() < SINGLES_FOR {
        let sent = Instant::now();
        producer.send(record(single.len())).await?.await?;
        single.push(sent.elapsed());
    }
    single.sort_unstable();
    let single = workload::Timed {
        rate: 0.0,
        acks: single,
    };
    producer.close(Duration::from_secs(10)).await?;
    let ms = |t: &workload::Timed, q: f64| t.quantile_us(q) / 1e3;
    println!(
        "{{\"records\": {records}, \"records_per_s\": {:.0}, \"ack_p50_ms\": {:.3}, \
         \"ack_p99_ms\": {:.3}, \"one_p50_ms\": {:.3}, \"one_p99_ms\": {:.3}, \"one_count\": {}}}",
        loaded.rate,
        ms(&loaded, 0.50),
        ms(&loaded, 0.99),
        ms(&single, 0.50),
        ms(&single, 0.99),
        single.acks.len()
    );
    Ok(())
}
