//! The transactional rows of `make bench-peer` (tools/bench-peer), our
//! side: the Rust engine against a running broker, 100-byte records, 4
//! partitions, acks=all (a transactional producer requires it), linger 5 ms,
//! batches of up to 256 KiB — what tools/bench-peer/java/KafkaTxnBench.java
//! gives the Kafka Java client. Prints one JSON object.
//!
//! ```sh
//! cargo run --release -p cursus --example bench_txn -- produce 127.0.0.1:9000 t 200000 100
//! cargo run --release -p cursus --example bench_txn -- eos 127.0.0.1:9000 t 200000 1000
//! ```
//!
//! `produce` creates TOPIC, then a transactional producer (its
//! `init_transactions` untimed) writes RECORDS records round-robin over the
//! partitions in transactions of PER_TXN records: records/s from the first
//! `begin_transaction` to the last commit. `eos` fills TOPIC-in with a plain
//! producer (untimed), then runs the exactly-once loop: a read_committed
//! group member consumes, every record is transformed (its bytes reversed)
//! and produced to TOPIC-out on the same partition, and the consumed offsets
//! are committed in the transaction; exactly PER_TXN records per transaction
//! (what a poll returns beyond that waits for the next one). Records/s from
//! the first record consumed to the last transaction committed.

use bytes::Bytes;
use cursus::admin::{Admin, NewTopic};
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ConsumerRecord, ProducerConfig, TopicPartition};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

#[path = "../benches/support/workload.rs"]
mod workload;

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;
/// How long the loop may take before it is called a failure.
const LOOP_LIMIT: Duration = Duration::from_secs(600);

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, bootstrap, topic, records, per_txn] = args.as_slice() else {
        eprintln!("usage: bench_txn produce|eos BOOTSTRAP TOPIC RECORDS PER_TXN");
        std::process::exit(2);
    };
    let count = |name: &str, v: &str| -> usize {
        match v.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("{name}: a positive count, not {v:?}");
                std::process::exit(2);
            }
        }
    };
    let (records, per_txn) = (count("RECORDS", records), count("PER_TXN", per_txn));
    let (rate, transactions) = match mode.as_str() {
        "produce" => produce(bootstrap, topic, records, per_txn).await?,
        "eos" => eos(bootstrap, topic, records, per_txn).await?,
        other => {
            eprintln!("mode: produce or eos, not {other:?}");
            std::process::exit(2);
        }
    };
    println!(
        "{{\"mode\": \"{mode}\", \"records\": {records}, \"per_txn\": {per_txn}, \
         \"transactions\": {transactions}, \"records_per_s\": {rate:.0}}}"
    );
    Ok(())
}

async fn create_topics(bootstrap: &str, topics: &[&str]) -> cursus::Result<()> {
    let admin = Admin::connect(ClientConfig::new(bootstrap)).await?;
    for topic in topics {
        admin
            .create_topic(&NewTopic::new(*topic).partitions(PARTITIONS))
            .await?;
    }
    admin.close().await;
    Ok(())
}

/// A transactional producer, its session initialised (untimed).
async fn transactional_producer(bootstrap: &str, id: &str) -> cursus::Result<Producer> {
    let mut config = ProducerConfig::new(bootstrap);
    config.set("acks", "all")?;
    config.set("enable_idempotence", "true")?;
    config.set("linger_ms", "5")?;
    config.set("batch_size", "262144")?;
    config.set("transactional_id", id)?;
    let producer = Producer::connect(config).await?;
    producer.init_transactions().await?;
    Ok(producer)
}

/// Transactional produce only: records/s and the number of transactions.
async fn produce(
    bootstrap: &str,
    topic: &str,
    records: usize,
    per_txn: usize,
) -> cursus::Result<(f64, usize)> {
    create_topics(bootstrap, &[topic]).await?;
    let producer = transactional_producer(bootstrap, &format!("txn-{topic}")).await?;
    let payload = Bytes::from(vec![b'x'; PAYLOAD]);
    let started = Instant::now();
    let (mut sent, mut transactions) = (0, 0);
    while sent < records {
        producer.begin_transaction().await?;
        let n = per_txn.min(records - sent);
        let mut deliveries = Vec::with_capacity(n);
        for i in sent..sent + n {
            let record =
                ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS);
            deliveries.push(producer.send(record).await?);
        }
        producer.commit_transaction().await?;
        for delivery in deliveries {
            delivery.await?; // settled by the commit: a failure would show here
        }
        sent += n;
        transactions += 1;
    }
    let rate = records as f64 / started.elapsed().as_secs_f64();
    producer.close(Duration::from_secs(10)).await?;
    Ok((rate, transactions))
}

/// The exactly-once loop: records/s and the number of transactions.
async fn eos(
    bootstrap: &str,
    topic: &str,
    records: usize,
    per_txn: usize,
) -> cursus::Result<(f64, usize)> {
    let (input, output) = (format!("{topic}-in"), format!("{topic}-out"));
    create_topics(bootstrap, &[&input, &output]).await?;
    fill(bootstrap, &input, records).await?;

    let mut config = ConsumerConfig::new(bootstrap, format!("g-{topic}"));
    config.set("isolation_level", "read_committed")?;
    config.set("enable_auto_commit", "false")?;
    config.set("auto_offset_reset", "earliest")?;
    config.set("max_poll_records", &per_txn.to_string())?;
    let consumer = Consumer::connect(config).await?;
    consumer
        .subscribe(Subscription::Topics(vec![input.clone()]))
        .await?;
    let producer = transactional_producer(bootstrap, &format!("eos-{topic}")).await?;

    let deadline = Instant::now() + LOOP_LIMIT;
    let mut pending: VecDeque<ConsumerRecord> = VecDeque::new();
    let mut started = None;
    let (mut done, mut transactions) = (0, 0);
    while done < records {
        let want = per_txn.min(records - done);
        while pending.len() < want {
            if Instant::now() > deadline {
                eprintln!("consumed {} of {records}", done + pending.len());
                std::process::exit(1);
            }
            let polled = consumer.poll(Duration::from_secs(1)).await?;
            if !polled.is_empty() && started.is_none() {
                started = Some(Instant::now());
            }
            pending.extend(polled);
        }
        producer.begin_transaction().await?;
        let mut offsets = BTreeMap::new();
        for record in pending.drain(..want) {
            let mut value = record.payload.to_vec();
            value.reverse();
            producer
                .send(ProducerRecord::new(output.as_str(), value).partition(record.partition))
                .await?;
            offsets.insert(
                TopicPartition::new(record.topic, record.partition),
                record.offset + 1,
            );
        }
        let offsets: Vec<_> = offsets.into_iter().collect();
        let group = consumer.group_metadata().await?;
        producer
            .send_offsets_to_transaction(&offsets, &group)
            .await?;
        producer.commit_transaction().await?;
        done += want;
        transactions += 1;
    }
    let rate = records as f64 / started.expect("records consumed").elapsed().as_secs_f64();
    producer.close(Duration::from_secs(10)).await?;
    consumer.close().await?;
    Ok((rate, transactions))
}

/// Fills `topic` with `records` records round-robin, a plain producer
/// (acks=1), before the loop's clock starts.
async fn fill(bootstrap: &str, topic: &str, records: usize) -> cursus::Result<()> {
    let mut config = ProducerConfig::new(bootstrap);
    config.set("acks", "1")?;
    config.set("batch_size", "262144")?;
    let producer = Producer::connect(config).await?;
    let payload: Bytes = (0..PAYLOAD).map(|i| b'a' + (i % 26) as u8).collect();
    workload::produce_all(&producer, records, |i| {
        ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS)
    })
    .await?;
    producer.close(Duration::from_secs(10)).await
}
