//! The transactional producer against a real broker
//! (`docs/transactions.md`).

use cursus::client::{Cluster, Idempotence, Lane};
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ErrorClass, ErrorKind, ProducerConfig, TopicPartition};
use cursus_testkit::TestBroker;
use cursus_wire::{Batch, Command, CommandPayload};
use std::time::Duration;

mod common;
use common::create_topic as create;

async fn transactional(broker: &TestBroker, id: &str) -> Producer {
    let mut c = ProducerConfig::new(&broker.addr);
    c.set("transactional_id", id).unwrap();
    Producer::connect(c).await.unwrap()
}

/// Payloads of a partition from offset 0 with a raw CONSUME at `isolation`.
async fn read(broker: &TestBroker, topic: &str, partition: u32, isolation: &str) -> Vec<String> {
    let cluster = Cluster::new(ClientConfig::new(&broker.addr)).unwrap();
    let payload = CommandPayload::new()
        .field("topic", topic)
        .field("partition", partition)
        .field("offset", 0)
        .field("member", "reader")
        .field("group", "raw-reader")
        .field("isolation", isolation)
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
    Batch::decode(reply)
        .unwrap()
        .records
        .into_iter()
        .map(|r| String::from_utf8(r.payload.to_vec()).unwrap())
        .collect()
}

async fn send_all(producer: &Producer, topic: &str, prefix: &str, n: usize) -> Vec<(u32, u64)> {
    let mut deliveries = Vec::new();
    for i in 0..n {
        let record = ProducerRecord::new(topic, format!("{prefix}{i}")).key(format!("k{i}"));
        deliveries.push(producer.send(record).await.unwrap());
    }
    let mut stored = Vec::new();
    for d in deliveries {
        let md = d.await.unwrap();
        stored.push((md.partition, md.offset.unwrap()));
    }
    stored
}

#[tokio::test]
async fn a_commit_makes_every_record_visible_at_once() {
    let broker = TestBroker::start();
    create(&broker, "t", 2).await;
    let p = transactional(&broker, "tx-1").await;
    p.init_transactions().await.unwrap();
    p.begin_transaction().await.unwrap();
    let stored = send_all(&p, "t", "v", 10).await;
    // Every record has its own offset, even though each went alone.
    let mut unique = stored.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 10);
    let visible = |c: Vec<String>, d: Vec<String>| c.len() + d.len();
    assert_eq!(
        visible(
            read(&broker, "t", 0, "read_committed").await,
            read(&broker, "t", 1, "read_committed").await
        ),
        0,
        "open records are hidden"
    );
    assert_eq!(
        visible(
            read(&broker, "t", 0, "read_uncommitted").await,
            read(&broker, "t", 1, "read_uncommitted").await
        ),
        10
    );
    p.commit_transaction().await.unwrap();
    let mut all = read(&broker, "t", 0, "read_committed").await;
    all.extend(read(&broker, "t", 1, "read_committed").await);
    all.sort();
    let mut want: Vec<String> = (0..10).map(|i| format!("v{i}")).collect();
    want.sort();
    assert_eq!(all, want);
}

#[tokio::test]
async fn every_transaction_after_the_first_starts_a_new_session() {
    let broker = TestBroker::start();
    create(&broker, "t", 1).await;
    let p = transactional(&broker, "tx-many").await;
    p.init_transactions().await.unwrap();
    for round in 0..3 {
        p.begin_transaction().await.unwrap();
        send_all(&p, "t", &format!("r{round}-"), 3).await;
        if round == 1 {
            p.abort_transaction().await.unwrap();
        } else {
            p.commit_transaction().await.unwrap();
        }
    }
    assert_eq!(
        read(&broker, "t", 0, "read_committed").await,
        ["r0-0", "r0-1", "r0-2", "r2-0", "r2-1", "r2-2"]
    );
}

#[tokio::test]
async fn calls_out_of_order_are_refused_with_a_typed_error() {
    let broker = TestBroker::start();
    create(&broker, "t", 1).await;
    let p = transactional(&broker, "tx-order").await;
    let e = p.begin_transaction().await.unwrap_err();
    assert_eq!(e.code(), "invalid_transaction_state");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    p.init_transactions().await.unwrap();
    let e = p
        .send(ProducerRecord::new("t", "outside"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "invalid_transaction_state");
    assert_eq!(
        p.commit_transaction().await.unwrap_err().code(),
        "invalid_transaction_state"
    );
    p.begin_transaction().await.unwrap();
    assert_eq!(
        p.begin_transaction().await.unwrap_err().code(),
        "invalid_transaction_state"
    );
    // TXN_PUBLISH is a text command: binary payloads are refused up front.
    let e = p
        .send(ProducerRecord::new("t", vec![0xffu8, 0xfe]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    p.abort_transaction().await.unwrap();

    let plain = Producer::connect(ProducerConfig::new(&broker.addr))
        .await
        .unwrap();
    assert_eq!(
        plain.init_transactions().await.unwrap_err().code(),
        "invalid_transaction_state"
    );
}

#[tokio::test]
async fn a_newer_producer_fences_the_older_one_for_good() {
    let broker = TestBroker::start();
    create(&broker, "t", 1).await;
    let old = transactional(&broker, "tx-zombie").await;
    old.init_transactions().await.unwrap();
    old.begin_transaction().await.unwrap();
    send_all(&old, "t", "old-", 2).await;
    let new = transactional(&broker, "tx-zombie").await;
    new.init_transactions().await.unwrap();

    let delivery = old.send(ProducerRecord::new("t", "late")).await.unwrap();
    let e = delivery.await.unwrap_err();
    assert_eq!(e.class(), ErrorClass::Fencing, "{e}");
    assert_eq!(e.code(), "producer_fenced");
    for e in [
        old.commit_transaction().await.unwrap_err(),
        old.begin_transaction().await.unwrap_err(),
    ] {
        assert_eq!(e.code(), "producer_fenced", "{e}");
    }

    new.begin_transaction().await.unwrap();
    send_all(&new, "t", "new-", 1).await;
    new.commit_transaction().await.unwrap();
    assert_eq!(read(&broker, "t", 0, "read_committed").await, ["new-0"]);
}

#[tokio::test]
async fn a_lost_commit_reply_is_retried_to_one_commit() {
    let broker = TestBroker::start_with_config("faults = [\"END_TXN:drop-after:1\"]\n");
    create(&broker, "t", 1).await;
    let p = transactional(&broker, "tx-lost").await;
    p.init_transactions().await.unwrap();
    p.begin_transaction().await.unwrap();
    send_all(&p, "t", "once-", 4).await;
    p.commit_transaction().await.unwrap();
    assert_eq!(
        read(&broker, "t", 0, "read_committed").await,
        ["once-0", "once-1", "once-2", "once-3"]
    );
}

#[tokio::test]
async fn records_resent_after_a_lost_connection_are_stored_once() {
    let broker = TestBroker::start_with_config("faults = [\"TXN_PUBLISH:drop-after:1\"]\n");
    create(&broker, "t", 1).await;
    let p = transactional(&broker, "tx-resend").await;
    p.init_transactions().await.unwrap();
    p.begin_transaction().await.unwrap();
    let stored = send_all(&p, "t", "r", 20).await;
    let offsets: Vec<u64> = stored.iter().map(|(_, o)| *o).collect();
    assert_eq!(offsets, (0..20).collect::<Vec<_>>());
    p.commit_transaction().await.unwrap();
    let got = read(&broker, "t", 0, "read_committed").await;
    assert_eq!(got, (0..20).map(|i| format!("r{i}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_failed_send_allows_only_an_abort() {
    let broker = TestBroker::start_with_config(
        "faults = [\"TXN_PUBLISH:error:1:transaction_publish_failed\"]\n",
    );
    create(&broker, "t", 1).await;
    let p = transactional(&broker, "tx-failed").await;
    p.init_transactions().await.unwrap();
    p.begin_transaction().await.unwrap();
    let delivery = p.send(ProducerRecord::new("t", "lost")).await.unwrap();
    assert_eq!(
        delivery.await.unwrap_err().code(),
        "transaction_publish_failed"
    );
    let e = p.commit_transaction().await.unwrap_err();
    assert_eq!(e.code(), "invalid_transaction_state");
    assert_eq!(e.field("cause"), Some("transaction_publish_failed"));
    p.abort_transaction().await.unwrap();
    p.begin_transaction().await.unwrap();
    send_all(&p, "t", "ok-", 1).await;
    p.commit_transaction().await.unwrap();
    assert_eq!(read(&broker, "t", 0, "read_committed").await, ["ok-0"]);
}

#[tokio::test]
async fn consumed_offsets_commit_with_the_output() {
    let broker = TestBroker::start();
    create(&broker, "in", 1).await;
    create(&broker, "out", 1).await;
    let plain = Producer::connect(ProducerConfig::new(&broker.addr))
        .await
        .unwrap();
    for i in 0..5 {
        plain
            .send(ProducerRecord::new("in", format!("in-{i}")))
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let mut cc = ConsumerConfig::default();
    cc.set("bootstrap_servers", &broker.addr).unwrap();
    cc.set("group_id", "proc").unwrap();
    let consumer = Consumer::connect(cc).await.unwrap();
    consumer
        .subscribe(Subscription::Topics(vec!["in".into()]))
        .await
        .unwrap();
    let mut taken = 0;
    while taken < 5 {
        taken += consumer.poll(Duration::from_secs(10)).await.unwrap().len();
    }
    let group = consumer.group_metadata().await.unwrap();
    assert_eq!(group.group_id, "proc");
    assert_eq!(
        consumer.delivered_offsets().await.unwrap(),
        [(TopicPartition::new("in", 0), 5)]
    );

    let p = transactional(&broker, "proc-1").await;
    p.init_transactions().await.unwrap();
    p.begin_transaction().await.unwrap();
    send_all(&p, "out", "out-", 5).await;
    p.send_consumer_offsets(&consumer).await.unwrap();
    let tp = TopicPartition::new("in", 0);
    assert_eq!(consumer.committed(&tp).await.unwrap(), None);
    p.commit_transaction().await.unwrap();
    assert_eq!(consumer.committed(&tp).await.unwrap(), Some(5));
    assert_eq!(read(&broker, "out", 0, "read_committed").await.len(), 5);
    consumer.close().await.unwrap();
}
