//! The producer against a real broker.

use bytes::Bytes;
use cursus::admin::Admin;
use cursus::client::{Cluster, Idempotence, Lane};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ErrorKind, ProducerConfig};
use cursus_testkit::{eventually_async, TestBroker};
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{Batch, Command, CommandPayload, Compression, Record};
use std::time::Duration;

mod common;
use common::create_topic as setup;

fn config(broker: &TestBroker, pairs: &[(&str, &str)]) -> ProducerConfig {
    let mut c = ProducerConfig::new(&broker.addr);
    for (k, v) in pairs {
        c.set(k, v).unwrap();
    }
    c
}

/// Reads a partition from offset 0 with a raw CONSUME.
async fn read_partition(broker: &TestBroker, topic: &str, partition: u32) -> Vec<Record> {
    let cluster = Cluster::new(ClientConfig::new(&broker.addr)).unwrap();
    let payload = CommandPayload::new()
        .field("topic", topic)
        .field("partition", partition)
        .field("offset", 0)
        .field("member", "reader")
        .field("group", "raw-reader")
        .field("batch", 8192);
    let reply = cluster
        .request(
            None,
            Lane::CONTROL,
            Command::Consume,
            &payload,
            Idempotence::Safe,
        )
        .await
        .unwrap();
    Batch::decode(reply).unwrap().records
}

#[tokio::test]
async fn send_flush_and_read_back_under_every_compression() {
    let broker = TestBroker::start();
    for &c in Compression::ALL {
        let topic = format!("p-{}", c.name());
        setup(&broker, &topic, 1).await;
        let producer = Producer::connect(config(&broker, &[("compression", c.name())]))
            .await
            .unwrap();
        let mut deliveries = Vec::new();
        for i in 0..100u32 {
            let payload = Bytes::from(format!("record-{i}").repeat(3));
            deliveries.push(
                producer
                    .send(ProducerRecord::new(&topic, payload))
                    .await
                    .unwrap(),
            );
        }
        producer.flush(Some(Duration::from_secs(30))).await.unwrap();
        let mut offsets = Vec::new();
        for d in deliveries {
            let md = d.await.unwrap();
            assert_eq!(md.partition, 0);
            offsets.push(md.offset.unwrap());
        }
        assert_eq!(offsets, (0..100).collect::<Vec<u64>>());
        let records = read_partition(&broker, &topic, 0).await;
        assert_eq!(records.len(), 100);
        assert_eq!(records[7].payload, Bytes::from("record-7".repeat(3)));
        producer.close(Duration::from_secs(5)).await.unwrap();
    }
}

#[tokio::test]
async fn keys_explicit_partitions_and_round_robin() {
    let broker = TestBroker::start();
    setup(&broker, "keyed", 4).await;
    let producer = Producer::connect(config(&broker, &[("linger_ms", "1")]))
        .await
        .unwrap();
    for key in ["alpha", "beta", "gamma", "user-42", "ключ"] {
        let md = producer
            .send(ProducerRecord::new("keyed", "v").key(key.as_bytes().to_vec()))
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!(md.partition, partition_for_key(key.as_bytes(), 4), "{key}");
    }
    let md = producer
        .send(ProducerRecord::new("keyed", "v").partition(2))
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(md.partition, 2);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..8 {
        seen.insert(
            producer
                .send(ProducerRecord::new("keyed", "v"))
                .await
                .unwrap()
                .await
                .unwrap()
                .partition,
        );
    }
    assert_eq!(
        seen.len(),
        4,
        "unkeyed records spread round-robin: {seen:?}"
    );
    let e = producer
        .send(ProducerRecord::new("keyed", "v").partition(9))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = producer
        .send(ProducerRecord::new("no-such-topic", "v"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "topic_not_found");
}

#[tokio::test]
async fn binary_payloads_and_keys_survive() {
    let broker = TestBroker::start();
    setup(&broker, "bin", 1).await;
    let producer = Producer::connect(config(&broker, &[])).await.unwrap();
    let payload: Vec<u8> = (0..=255u8).chain([0, 0, 0xff]).collect();
    producer
        .send(ProducerRecord::new("bin", payload.clone()).key(vec![0u8, 1, 0xfe]))
        .await
        .unwrap()
        .await
        .unwrap();
    let records = read_partition(&broker, "bin", 0).await;
    assert_eq!(records[0].payload, payload);
    assert_eq!(records[0].key, vec![0u8, 1, 0xfe]);
}

#[tokio::test]
async fn idempotent_producer_gets_consecutive_offsets() {
    let broker = TestBroker::start();
    setup(&broker, "idem", 2).await;
    let producer = Producer::connect(config(&broker, &[("enable_idempotence", "true")]))
        .await
        .unwrap();
    let mut deliveries = Vec::new();
    for i in 0..50 {
        deliveries.push(
            producer
                .send(ProducerRecord::new("idem", format!("m{i}")).partition(i % 2))
                .await
                .unwrap(),
        );
    }
    producer.flush(None).await.unwrap();
    for d in deliveries {
        d.await.unwrap();
    }
    let records = read_partition(&broker, "idem", 1).await;
    assert_eq!(records.len(), 25);
    let seqs: Vec<u64> = records.iter().map(|r| r.seq_num).collect();
    assert_eq!(seqs, (1..=25).collect::<Vec<u64>>());
    assert!(records
        .iter()
        .all(|r| r.producer_id == producer.producer_id()));
}

#[tokio::test]
async fn acks_zero_gets_no_offset_but_the_data_arrives() {
    let broker = TestBroker::start();
    setup(&broker, "fire", 1).await;
    let producer = Producer::connect(config(&broker, &[("acks", "0")]))
        .await
        .unwrap();
    for i in 0..10 {
        let md = producer
            .send(ProducerRecord::new("fire", format!("f{i}")))
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!(md.offset, None);
    }
    // acks=0 data becomes readable once the broker's background flush ran.
    let admin = Admin::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    eventually_async!(Duration::from_secs(5), "all 10 records written", async {
        let latest = admin.list_offsets("fire", Some(0)).await.unwrap()[0].latest;
        (latest == 10).then_some(()).ok_or(latest)
    });
}

#[tokio::test]
async fn full_buffer_blocks_then_fails_clearly() {
    let broker = TestBroker::start();
    setup(&broker, "small", 1).await;
    // A long linger keeps the first record queued, holding the memory.
    let producer = Producer::connect(config(
        &broker,
        &[
            ("buffer_memory", "1000"),
            ("max_block_ms", "50"),
            ("linger_ms", "60000"),
            ("batch_size", "100000"),
        ],
    ))
    .await
    .unwrap();
    let first = producer
        .send(ProducerRecord::new("small", vec![1u8; 800]))
        .await
        .unwrap();
    let e = producer
        .send(ProducerRecord::new("small", vec![2u8; 800]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(e.code(), "max_block_exceeded");
    let e = producer
        .send(ProducerRecord::new("small", vec![3u8; 5000]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "record_too_large");
    // Flushing sends the queued record despite the linger.
    producer.flush(Some(Duration::from_secs(10))).await.unwrap();
    assert_eq!(first.await.unwrap().offset, Some(0));
}

#[tokio::test]
async fn closed_producer_refuses_sends_and_close_is_idempotent() {
    let broker = TestBroker::start();
    setup(&broker, "c", 1).await;
    let producer = Producer::connect(config(&broker, &[("linger_ms", "60000")]))
        .await
        .unwrap();
    let pending = producer
        .send(ProducerRecord::new("c", "queued"))
        .await
        .unwrap();
    producer.close(Duration::from_secs(10)).await.unwrap();
    // close flushed the queued record before shutting down.
    assert_eq!(pending.await.unwrap().offset, Some(0));
    producer.close(Duration::from_secs(1)).await.unwrap();
    let e = producer
        .send(ProducerRecord::new("c", "late"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);
    let e = producer.flush(None).await.unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::Closed, "closed"));
}

#[tokio::test]
async fn acked_records_survive_a_broker_crash() {
    let mut broker = TestBroker::start();
    setup(&broker, "durable", 1).await;
    let producer = Producer::connect(config(&broker, &[("acks", "1")]))
        .await
        .unwrap();
    for i in 0..20 {
        producer
            .send(ProducerRecord::new("durable", format!("d{i}")))
            .await
            .unwrap()
            .await
            .unwrap();
    }
    broker.kill_and_restart();
    let records = read_partition(&broker, "durable", 0).await;
    assert_eq!(records.len(), 20);
    // The producer reconnects by itself after the crash.
    let md = producer
        .send(ProducerRecord::new("durable", "after"))
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(md.offset, Some(20));
}

#[tokio::test]
async fn a_zero_flush_with_a_record_queued_times_out_at_once() {
    // Linger keeps the record queued; a flush that may not wait must say
    // so every time, however fast the broker would have acknowledged.
    let broker = TestBroker::start();
    setup(&broker, "zero", 1).await;
    let producer = Producer::connect(config(&broker, &[("linger_ms", "60000")]))
        .await
        .unwrap();
    for round in 0..20 {
        let delivery = producer
            .send(ProducerRecord::new("zero", "x").partition(0))
            .await
            .unwrap();
        let e = producer.flush(Some(Duration::ZERO)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout, "round {round}: {e}");
        // The zero flush still asked for the record to go: it is acknowledged
        // without waiting out the linger.
        producer.flush(Some(Duration::from_secs(10))).await.unwrap();
        delivery.await.unwrap();
    }
    // Nothing queued: a zero flush succeeds.
    producer.flush(Some(Duration::ZERO)).await.unwrap();
    producer.close(Duration::from_secs(5)).await.unwrap();
}

/// The async `send_batch`, as the blocking one: one callback with every
/// outcome in record order; a record that cannot be queued fails alone; a
/// closed producer refuses the batch and never calls back.
#[tokio::test]
async fn async_send_batch_reports_every_outcome_in_order() {
    let broker = TestBroker::start();
    setup(&broker, "batched", 2).await;
    let producer = Producer::connect(config(&broker, &[("linger_ms", "1")]))
        .await
        .unwrap();
    let mut records: Vec<ProducerRecord> = (0..5)
        .map(|i| ProducerRecord::new("batched", format!("v{i}")).partition(1))
        .collect();
    records[2] = ProducerRecord::new("batched", "bad").partition(7);
    let (tx, rx) = tokio::sync::oneshot::channel();
    producer
        .send_batch(records, move |outcomes| {
            let _ = tx.send(outcomes);
        })
        .await
        .unwrap();
    let outcomes = rx.await.unwrap();
    assert_eq!(outcomes.len(), 5);
    assert_eq!(
        outcomes[2].as_ref().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let offsets: Vec<u64> = [0, 1, 3, 4]
        .iter()
        .map(|&i| outcomes[i].as_ref().unwrap().offset.unwrap())
        .collect();
    assert_eq!(offsets, [0, 1, 2, 3]);

    producer.close(Duration::from_secs(10)).await.unwrap();
    let e = producer
        .send_batch(vec![ProducerRecord::new("batched", "x")], |_| {
            panic!("a refused batch never calls back")
        })
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);
}
