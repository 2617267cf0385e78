//! The event-store rows of `make bench-peer` (tools/bench-peer): Kafka has
//! no event store, so each event-store path is set against our own plain
//! path on the same broker with the same 100-byte records: an idempotent
//! producer (acks=all, `enable_idempotence`, on a topic created
//! `idempotent`) and a group consumer. Prints one JSON object.
//!
//! ```sh
//! cargo run --release -p cursus --example bench_eventstore -- 127.0.0.1:9000 peer-es 20000
//! ```
//!
//! Against a running broker, on topics PREFIX-es (event sourcing),
//! PREFIX-plain and PREFIX-read (idempotent), 4 partitions each, after one
//! untimed append and one untimed send (connections and metadata warm):
//!
//! - one aggregate: N appends, each awaiting the previous (versions are
//!   serial), against N idempotent sends with one key, each acknowledged
//!   before the next;
//! - 1,000 aggregates: N appends spread over 1,000 aggregates, one writer
//!   task each, against N sends over 1,000 keys, one task per key, each
//!   send awaited before that task's next;
//! - reads: READ_STREAM of an aggregate of 10,000 events (appended
//!   untimed), against a joined group member reading 10,000 records of one
//!   key again from their first offset (produced untimed, read once
//!   untimed so that the group join is left out, then a seek back).

use cursus::admin::{Admin, NewTopic};
use cursus::consumer::{Consumer, Subscription, TopicPartition};
use cursus::eventstore::{Event, EventStore};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;
const AGGREGATES: usize = 1_000;
const READ_EVENTS: usize = 10_000;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bootstrap, prefix, events] = args.as_slice() else {
        eprintln!("usage: bench_eventstore BOOTSTRAP TOPIC_PREFIX EVENTS");
        std::process::exit(2);
    };
    let events: usize = events.parse().unwrap_or_else(|_| {
        eprintln!("EVENTS: a count, not {events:?}");
        std::process::exit(2);
    });
    let (es, plain, read) = (
        format!("{prefix}-es"),
        format!("{prefix}-plain"),
        format!("{prefix}-read"),
    );

    let admin = Admin::connect(ClientConfig::new(bootstrap)).await?;
    let mut topic = NewTopic::new(&es).partitions(PARTITIONS);
    topic.event_sourcing = Some(true);
    admin.create_topic(&topic).await?;
    for name in [&plain, &read] {
        let mut topic = NewTopic::new(name).partitions(PARTITIONS);
        topic.idempotent = Some(true);
        admin.create_topic(&topic).await?;
    }
    admin.close().await;

    let store = Arc::new(EventStore::connect(ClientConfig::new(bootstrap)).await?);
    let mut config = ProducerConfig::new(bootstrap);
    config.set("acks", "all")?;
    config.set("enable_idempotence", "true")?;
    config.set("linger_ms", "0")?;
    let producer = Producer::connect(config).await?;
    let payload = "x".repeat(PAYLOAD);
    let event = Event::new("E", payload.clone());
    let record = |topic: &str, key: &str| {
        ProducerRecord::new(topic, payload.clone().into_bytes()).key(key.to_owned().into_bytes())
    };
    store.append(&es, "warm", 0, &event).await?;
    producer.send(record(&plain, "warm")).await?.await?;

    // One aggregate / one key, each write awaited before the next.
    let append_one = timed(async {
        for v in 0..events {
            store.append(&es, "single", v as u64, &event).await?;
        }
        Ok(())
    })
    .await?;
    let produce_one = timed(async {
        for _ in 0..events {
            producer.send(record(&plain, "single")).await?.await?;
        }
        Ok(())
    })
    .await?;

    // 1,000 aggregates / keys, one task each.
    let per_aggregate = (events / AGGREGATES).max(1);
    let append_many = timed(async {
        let writers: Vec<_> = (0..AGGREGATES)
            .map(|a| {
                let (store, es, event) = (Arc::clone(&store), es.clone(), event.clone());
                tokio::spawn(async move {
                    let key = format!("agg-{a}");
                    for v in 0..per_aggregate {
                        store.append(&es, &key, v as u64, &event).await?;
                    }
                    Ok::<(), cursus::Error>(())
                })
            })
            .collect();
        for w in writers {
            w.await.expect("writer task")?;
        }
        Ok(())
    })
    .await?;
    let produce_many = timed(async {
        let writers: Vec<_> = (0..AGGREGATES)
            .map(|a| {
                let (producer, record) = (producer.clone(), record(&plain, &format!("agg-{a}")));
                tokio::spawn(async move {
                    for _ in 0..per_aggregate {
                        producer.send(record.clone()).await?.await?;
                    }
                    Ok::<(), cursus::Error>(())
                })
            })
            .collect();
        for w in writers {
            w.await.expect("writer task")?;
        }
        Ok(())
    })
    .await?;

    // Reads of 10,000 events / records.
    for v in 0..READ_EVENTS {
        store.append(&es, "long", v as u64, &event).await?;
    }
    let read_stream = timed(async {
        let (_, replayed) = store.read_stream(&es, "long", 1).await?;
        assert_eq!(replayed.len(), READ_EVENTS, "events read back");
        Ok(())
    })
    .await?;
    let mut deliveries = Vec::with_capacity(READ_EVENTS);
    for _ in 0..READ_EVENTS {
        deliveries.push(producer.send(record(&read, "long")).await?);
    }
    producer.flush(None).await?;
    let mut first = None;
    for d in deliveries {
        let meta = d.await?;
        first.get_or_insert((meta.partition, meta.offset.unwrap_or(0)));
    }
    let (partition, offset) = first.expect("records produced");
    let mut config = ConsumerConfig::new(bootstrap, format!("g-{read}"));
    config.set("max_poll_records", "10000")?;
    config.set("fetch_max_records", "8192")?;
    let consumer = Consumer::connect(config).await?;
    consumer
        .subscribe(Subscription::Topics(vec![read.clone()]))
        .await?;
    poll_records(&consumer, READ_EVENTS).await?; // the join, untimed
    let consume = timed(async {
        consumer
            .seek(&TopicPartition::new(&read, partition), offset)
            .await?;
        poll_records(&consumer, READ_EVENTS).await
    })
    .await?;
    consumer.close().await?;
    producer.close(Duration::from_secs(10)).await?;
    store.close().await;

    let rate = |n: usize, d: Duration| n as f64 / d.as_secs_f64();
    let us = |n: usize, d: Duration| d.as_secs_f64() * 1e6 / n as f64;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let many = per_aggregate * AGGREGATES;
    println!(
        "{{\"events\": {events}, \"aggregates\": {AGGREGATES}, \"per_aggregate\": {per_aggregate}, \
         \"read_events\": {READ_EVENTS}, \
         \"append_one\": {{\"per_s\": {:.0}, \"us_each\": {:.1}}}, \
         \"produce_one\": {{\"per_s\": {:.0}, \"us_each\": {:.1}}}, \
         \"append_many\": {{\"per_s\": {:.0}}}, \"produce_many\": {{\"per_s\": {:.0}}}, \
         \"read_stream\": {{\"ms\": {:.2}, \"per_s\": {:.0}}}, \
         \"consume\": {{\"ms\": {:.2}, \"per_s\": {:.0}}}}}",
        rate(events, append_one),
        us(events, append_one),
        rate(events, produce_one),
        us(events, produce_one),
        rate(many, append_many),
        rate(many, produce_many),
        ms(read_stream),
        rate(READ_EVENTS, read_stream),
        ms(consume),
        rate(READ_EVENTS, consume),
    );
    Ok(())
}

/// How long `work` took.
async fn timed(work: impl Future<Output = cursus::Result<()>>) -> cursus::Result<Duration> {
    let started = Instant::now();
    work.await?;
    Ok(started.elapsed())
}

/// Polls until `records` records arrived (five minutes at most).
async fn poll_records(consumer: &Consumer, records: usize) -> cursus::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut seen = 0;
    while seen < records {
        if Instant::now() > deadline {
            eprintln!("consumed {seen} of {records}");
            std::process::exit(1);
        }
        seen += consumer.poll(Duration::from_secs(1)).await?.len();
    }
    Ok(())
}
