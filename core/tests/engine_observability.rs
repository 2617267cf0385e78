//! Statistics, the statistics and error listeners, against a real broker.

use cursus::admin::NewTopic;
use cursus::blocking;
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, Error, ProducerConfig, Statistics};
use cursus_testkit::{eventually_async, TestBroker};
use std::sync::{mpsc, Arc};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

mod common;
use common::create_topic as create;

/// Sends `n` records (`key-i`, `value-i`); returns their payload+key bytes.
async fn produce(producer: &Producer, topic: &str, n: usize) -> u64 {
    let mut pending = Vec::new();
    let mut bytes = 0;
    for i in 0..n {
        let (key, value) = (format!("key-{i}"), format!("value-{i}"));
        bytes += (key.len() + value.len()) as u64;
        pending.push(
            producer
                .send(ProducerRecord::new(topic, value).key(key))
                .await
                .unwrap(),
        );
    }
    producer.flush(None).await.unwrap();
    for p in pending {
        p.await.unwrap();
    }
    bytes
}

fn consumer_config(broker: &TestBroker, group: &str) -> ConsumerConfig {
    let mut c = ConsumerConfig::new(&broker.addr, group);
    c.set("heartbeat_interval_ms", "100").unwrap();
    c.set("fetch_max_wait_ms", "100").unwrap();
    c.set("auto_offset_reset", "earliest").unwrap();
    c.set("enable_auto_commit", "false").unwrap();
    c
}

#[tokio::test]
async fn a_producer_counts_what_the_broker_acknowledged() {
    let broker = TestBroker::start();
    create(&broker, "stats-out", 2).await;
    let mut config = ProducerConfig::new(&broker.addr);
    config.set("client_id", "counting").unwrap();
    let producer = Producer::connect(config).await.unwrap();
    let before = producer.statistics();
    assert_eq!(before.kind, "producer");
    assert_eq!(before.client_id, "counting");
    assert_eq!((before.records_sent, before.batches_sent), (0, 0));
    let bytes = produce(&producer, "stats-out", 50).await;
    let s = producer.statistics();
    assert_eq!(s.records_sent, 50);
    assert_eq!(s.bytes_sent, bytes, "payload plus key bytes");
    assert!(s.batches_sent >= 1 && s.batches_sent <= 50, "{s:?}");
    assert_eq!(s.produce_latency.count, s.batches_sent);
    assert!(s.produce_latency.p50_us > 0, "{s:?}");
    assert!(s.produce_latency.p50_us <= s.produce_latency.p99_us);
    assert!(s.produce_latency.p99_us <= s.produce_latency.max_us);
    assert!(s.requests >= s.batches_sent, "{s:?}");
    assert_eq!(s.in_flight_requests, 0);
    assert!(s.partitions.is_empty());
    assert_eq!((s.records_received, s.fetch_latency.count), (0, 0));
    let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    assert_eq!(json["records_sent"], 50);
    assert_eq!(json["kind"], "producer");
    producer.close(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn a_failed_request_is_counted_by_its_class() {
    let broker = TestBroker::start();
    let producer = Producer::connect(ProducerConfig::new(&broker.addr))
        .await
        .unwrap();
    let error = producer
        .send(ProducerRecord::new("no-such-topic", "x"))
        .await
        .expect_err("the topic does not exist");
    let s = producer.statistics();
    let class = error.class().name();
    assert!(s.errors_of(class) >= 1, "{class}: {s:?}");
    assert_eq!(s.errors.values().sum::<u64>(), s.errors_of(class), "{s:?}");
    producer.close(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn a_consumer_counts_what_it_received_and_its_lag() {
    let broker = TestBroker::start();
    create(&broker, "stats-in", 1).await;
    let producer = Producer::connect(ProducerConfig::new(&broker.addr))
        .await
        .unwrap();
    let bytes = produce(&producer, "stats-in", 30).await;
    producer.close(Duration::from_secs(5)).await.unwrap();

    // Lag before everything was consumed: 30 minus what one small poll
    // returned (the group committed nothing; earliest starts at 0).
    let first = Consumer::connect(consumer_config(&broker, "g-first"))
        .await
        .unwrap();
    first
        .subscribe(Subscription::Topics(vec!["stats-in".into()]))
        .await
        .unwrap();
    let got = first
        .poll_max(Duration::from_millis(10), 1)
        .await
        .unwrap()
        .len() as u64;
    let s = first.statistics().await.unwrap();
    assert_eq!(s.partitions.len(), 1, "{s:?}");
    let p = &s.partitions[0];
    assert_eq!((p.topic.as_str(), p.partition), ("stats-in", 0));
    assert_eq!(p.end_offset, 30);
    assert_eq!(p.position, Some(got));
    assert_eq!(p.lag, Some(30 - got));
    first.close().await.unwrap();

    // After consuming everything: lag 0, every record received.
    let c = Consumer::connect(consumer_config(&broker, "g-all"))
        .await
        .unwrap();
    c.subscribe(Subscription::Topics(vec!["stats-in".into()]))
        .await
        .unwrap();
    let mut n = 0;
    eventually_async!(WAIT, "every record", async {
        n += c.poll(Duration::from_millis(200)).await.unwrap().len();
        (n >= 30).then_some(()).ok_or(format!("{n} of 30"))
    });
    let s = c.statistics().await.unwrap();
    assert_eq!(s.kind, "consumer");
    assert_eq!(s.records_received, 30);
    assert_eq!(s.bytes_received, bytes);
    assert!(s.fetch_latency.count >= 1, "{s:?}");
    assert_eq!(s.records_sent, 0);
    let p = &s.partitions[0];
    assert_eq!((p.position, p.end_offset, p.lag), (Some(30), 30, Some(0)));
    c.close().await.unwrap();
}

#[test]
fn the_statistics_listener_runs_on_the_callback_thread() {
    let broker = TestBroker::start();
    let mut config = ProducerConfig::new(&broker.addr);
    config.set("statistics_interval_ms", "50").unwrap();
    let producer = blocking::Producer::connect(config).unwrap();
    let admin = blocking::Admin::connect(ClientConfig::new(&broker.addr)).unwrap();
    admin.create_topic(&NewTopic::new("periodic")).unwrap();
    producer
        .send_and_wait(ProducerRecord::new("periodic", "x"))
        .unwrap();
    let (tx, rx) = mpsc::channel::<(Statistics, Option<String>)>();
    let tx = std::sync::Mutex::new(tx);
    producer
        .set_statistics_listener(
            None, // the statistics_interval_ms option
            Some(Arc::new(move |s: Statistics| {
                let thread = std::thread::current().name().map(str::to_owned);
                let _ = tx.lock().unwrap().send((s, thread));
            })),
        )
        .unwrap();
    for _ in 0..2 {
        let (s, thread) = rx.recv_timeout(WAIT).expect("a snapshot every 50 ms");
        assert_eq!(s.records_sent, 1);
        assert_eq!(
            thread.as_deref(),
            Some("cursus-producer-cb"),
            "never cursus-io"
        );
    }
    // Cleared: no more snapshots (one may have been queued already).
    producer.set_statistics_listener(None, None).unwrap();
    while rx.recv_timeout(Duration::from_millis(300)).is_ok() {}
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    producer.close(Some(Duration::from_secs(5))).unwrap();
}

#[test]
fn a_blocking_consumer_reports_lag_periodically() {
    let broker = TestBroker::start();
    let admin = blocking::Admin::connect(ClientConfig::new(&broker.addr)).unwrap();
    admin
        .create_topic(&NewTopic::new("lagging").partitions(1))
        .unwrap();
    let producer = blocking::Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    for i in 0..5 {
        producer
            .send_and_wait(ProducerRecord::new("lagging", format!("{i}")))
            .unwrap();
    }
    let consumer = blocking::Consumer::connect(consumer_config(&broker, "g-lag")).unwrap();
    consumer.subscribe(&["lagging".to_owned()]).unwrap();
    let got = consumer
        .poll_max(Some(Duration::from_millis(10)), 2)
        .unwrap()
        .len() as u64;
    let (tx, rx) = mpsc::channel::<(Statistics, Option<String>)>();
    let tx = std::sync::Mutex::new(tx);
    consumer
        .set_statistics_listener(
            Some(Duration::from_millis(50)),
            Some(Arc::new(move |s: Statistics| {
                let thread = std::thread::current().name().map(str::to_owned);
                let _ = tx.lock().unwrap().send((s, thread));
            })),
        )
        .unwrap();
    let (s, thread) = rx.recv_timeout(WAIT).expect("a snapshot");
    assert_eq!(thread.as_deref(), Some("cursus-consumer-cb"));
    assert_eq!(s.kind, "consumer");
    assert_eq!(s.partitions.len(), 1, "{s:?}");
    assert_eq!(s.partitions[0].lag, Some(5 - got));
    consumer.set_statistics_listener(None, None).unwrap();
    consumer.close().unwrap();
    producer.close(Some(Duration::from_secs(5))).unwrap();
}

#[test]
fn the_error_listener_hears_that_membership_was_lost() {
    let broker = TestBroker::start();
    let admin = blocking::Admin::connect(ClientConfig::new(&broker.addr)).unwrap();
    admin
        .create_topic(&NewTopic::new("members").partitions(2))
        .unwrap();
    let a = blocking::Consumer::connect(consumer_config(&broker, "g-lost")).unwrap();
    let (tx, rx) = mpsc::channel::<(Error, Option<String>)>();
    let tx = std::sync::Mutex::new(tx);
    a.set_error_listener(Some(Arc::new(move |e: Error| {
        let thread = std::thread::current().name().map(str::to_owned);
        let _ = tx.lock().unwrap().send((e, thread));
    })))
    .unwrap();
    a.subscribe(&["members".to_owned()]).unwrap();
    a.poll(Some(Duration::from_millis(10))).unwrap();
    let member = a.member_id().unwrap().expect("joined");
    // A second member makes the group rebalance: A's heartbeat learns
    // that its generation is over (membership lost, in the background).
    let b = blocking::Consumer::connect(consumer_config(&broker, "g-lost")).unwrap();
    b.subscribe(&["members".to_owned()]).unwrap();
    b.poll(Some(Duration::from_millis(10))).unwrap();
    let (error, thread) = rx.recv_timeout(WAIT).expect("membership lost");
    assert_eq!(error.field("member"), Some(member.as_str()), "{error}");
    assert_eq!(thread.as_deref(), Some("cursus-consumer-cb"));
    b.close().unwrap();
    a.close().unwrap();
}

#[test]
fn the_error_listener_hears_a_lost_connection() {
    let mut broker = TestBroker::start();
    let producer = blocking::Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let (tx, rx) = mpsc::channel::<Error>();
    let tx = std::sync::Mutex::new(tx);
    producer
        .set_error_listener(Some(Arc::new(move |e: Error| {
            let _ = tx.lock().unwrap().send(e);
        })))
        .unwrap();
    broker.kill();
    let error = rx.recv_timeout(WAIT).expect("connection lost");
    assert_eq!(error.code(), "connection_lost", "{error}");
    assert!(error.field("broker").is_some(), "{error}");
    producer.close(Some(Duration::from_secs(1))).ok();
}
