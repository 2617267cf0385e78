//! A delivery the caller waits on is sent at once, not at the end of
//! `linger_ms`; only its own partition goes early.
//!
//! Every producer here lingers for an hour, so nothing would be sent during
//! the test on its own. The assertions are on what the broker acknowledged
//! (the producer's statistics and the returned offsets), never on time: the
//! awaited record comes back while a record of another partition, queued
//! before it, is still unsent; a batch sent early holds the records queued
//! before the awaited one and nothing else. The outer timeout only turns a
//! regression (waiting out the hour) into a failure instead of a hang.

use cursus::blocking;
use cursus::producer::{Producer, ProducerRecord};
use cursus::ProducerConfig;
use cursus_testkit::TestBroker;
use std::sync::mpsc;
use std::time::Duration;

/// An hour: far longer than any test run.
const LINGER_MS: &str = "3600000";
/// Only guards against a hang; no assertion depends on it.
const HANG_GUARD: Duration = Duration::from_secs(120);

mod common;
use common::create_topic as setup;

fn config(broker: &TestBroker) -> ProducerConfig {
    let mut c = ProducerConfig::new(&broker.addr);
    c.set("linger_ms", LINGER_MS).unwrap();
    c.set("acks", "1").unwrap();
    c
}

#[tokio::test]
async fn an_awaited_delivery_sends_its_partition_at_once_and_only_it() {
    let broker = TestBroker::start();
    setup(&broker, "exp", 2).await;
    let producer = Producer::connect(config(&broker)).await.unwrap();
    // Queued first, on partition 0, and never awaited before the flush.
    let other = producer
        .send(ProducerRecord::new("exp", "other").partition(0))
        .await
        .unwrap();
    let awaited = producer
        .send(ProducerRecord::new("exp", "awaited").partition(1))
        .await
        .unwrap();
    let stored = tokio::time::timeout(HANG_GUARD, awaited)
        .await
        .expect("the awaited delivery waited out linger_ms")
        .unwrap();
    assert_eq!((stored.partition, stored.offset), (1, Some(0)));
    let s = producer.statistics();
    assert_eq!(
        (s.records_sent, s.batches_sent),
        (1, 1),
        "only the awaited record's batch was sent: {s:?}"
    );
    producer.flush(None).await.unwrap();
    let stored = other.await.unwrap();
    assert_eq!((stored.partition, stored.offset), (0, Some(0)));
    assert_eq!(producer.statistics().records_sent, 2);
    producer.close(Duration::from_secs(10)).await.unwrap();
}

#[tokio::test]
async fn an_expedited_batch_carries_the_records_queued_before_in_order() {
    let broker = TestBroker::start();
    setup(&broker, "exp-order", 1).await;
    let producer = Producer::connect(config(&broker)).await.unwrap();
    let mut first = Vec::new();
    for i in 0..5 {
        first.push(
            producer
                .send(ProducerRecord::new("exp-order", format!("r{i}")))
                .await
                .unwrap(),
        );
    }
    let last = producer
        .send(ProducerRecord::new("exp-order", "last"))
        .await
        .unwrap();
    let stored = tokio::time::timeout(HANG_GUARD, last)
        .await
        .expect("the awaited delivery waited out linger_ms")
        .unwrap();
    assert_eq!(stored.offset, Some(5));
    let s = producer.statistics();
    assert_eq!((s.records_sent, s.batches_sent), (6, 1), "{s:?}");
    for (i, d) in first.into_iter().enumerate() {
        assert_eq!(d.await.unwrap().offset, Some(i as u64));
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
}

#[tokio::test]
async fn send_in_order_awaited_is_sent_at_once() {
    let broker = TestBroker::start();
    setup(&broker, "exp-in-order", 1).await;
    let producer = Producer::connect(config(&broker)).await.unwrap();
    let first = producer.send_in_order(ProducerRecord::new("exp-in-order", "a"));
    let second = producer.send_in_order(ProducerRecord::new("exp-in-order", "b"));
    let stored = tokio::time::timeout(HANG_GUARD, second)
        .await
        .expect("the awaited delivery waited out linger_ms")
        .unwrap();
    assert_eq!(stored.offset, Some(1));
    assert_eq!(first.await.unwrap().offset, Some(0));
    assert_eq!(producer.statistics().batches_sent, 1);
    producer.close(Duration::from_secs(10)).await.unwrap();
}

#[test]
fn blocking_send_and_wait_does_not_wait_out_linger() {
    let broker = TestBroker::start();
    blocking::block_on_engine(setup(&broker, "exp-blocking", 2)).unwrap();
    let producer = blocking::Producer::connect(config(&broker)).unwrap();
    // A callback record queued first on partition 0: not waited on.
    let (tx, rx) = mpsc::channel();
    producer
        .send_with_callback(
            ProducerRecord::new("exp-blocking", "cb").partition(0),
            move |r| {
                tx.send(r).unwrap();
            },
        )
        .unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    let waiter = {
        let producer = producer.clone();
        std::thread::spawn(move || {
            let r = producer.send_and_wait(ProducerRecord::new("exp-blocking", "w").partition(1));
            done_tx.send(r).unwrap();
        })
    };
    let stored = done_rx
        .recv_timeout(HANG_GUARD)
        .expect("send_and_wait waited out linger_ms")
        .unwrap();
    waiter.join().unwrap();
    assert_eq!((stored.partition, stored.offset), (1, Some(0)));
    let s = producer.statistics().unwrap();
    assert_eq!((s.records_sent, s.batches_sent), (1, 1), "{s:?}");
    // The callback's partition is still lingering: flush sends it.
    assert!(rx.try_recv().is_err(), "partition 0 was sent early");
    producer.flush(None).unwrap();
    let r = rx
        .try_recv()
        .expect("flush waits for the callback")
        .unwrap();
    assert_eq!((r.partition, r.offset), (0, Some(0)));
    producer.close(None).unwrap();
}
