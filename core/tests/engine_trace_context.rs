//! Trace context carried by records (docs/observability.md, "Trace context
//! in records"), through a real broker: sent by the plain and the
//! transactional producer, read back by a consumer.

use cursus::producer::{Producer, ProducerRecord};
use cursus::{ConsumerRecord, ProducerConfig, TraceContext};
use cursus_testkit::{eventually_async, TestBroker};
use std::time::Duration;

mod common;
use common::create_topic as create;

const WAIT: Duration = Duration::from_secs(20);
const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn context() -> TraceContext {
    TraceContext::new(PARENT, Some("vendor=opaque")).unwrap()
}

/// The four records of the contract: context only, context next to the
/// application's JSON object, context with metadata that cannot carry
/// it, and no context.
fn records(topic: &str) -> Vec<ProducerRecord> {
    vec![
        ProducerRecord::new(topic, "traced").trace_context(context()),
        ProducerRecord::new(topic, "traced-with-json")
            .metadata(r#"{"tenant":"acme"}"#)
            .trace_context(context()),
        ProducerRecord::new(topic, "traced-with-text")
            .metadata("plain text")
            .trace_context(context()),
        ProducerRecord::new(topic, "untraced"),
    ]
}

/// Polls `topic` from the start until `n` records arrived, in offset order.
async fn consume(broker: &TestBroker, topic: &str, n: usize) -> Vec<ConsumerRecord> {
    let consumer = common::subscribed(broker, topic).await;
    let mut got = Vec::new();
    eventually_async!(WAIT, "every record", async {
        got.extend(consumer.poll(Duration::from_millis(200)).await.unwrap());
        (got.len() >= n)
            .then_some(())
            .ok_or(format!("{} of {n}", got.len()))
    });
    consumer.close().await.unwrap();
    got.sort_by_key(|r| r.offset);
    got
}

fn check(got: &[ConsumerRecord]) {
    let payloads: Vec<&[u8]> = got.iter().map(|r| &r.payload[..]).collect();
    assert_eq!(
        payloads,
        [
            &b"traced"[..],
            b"traced-with-json",
            b"traced-with-text",
            b"untraced"
        ]
    );
    assert_eq!(got[0].trace_context(), Some(context()));
    let with_json = got[1].trace_context().expect("context next to JSON");
    assert_eq!(with_json.trace_id(), "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(with_json.span_id(), "b7ad6b7169203331");
    assert_eq!(with_json.tracestate(), Some("vendor=opaque"));
    let json: serde_json::Value =
        serde_json::from_str(got[1].metadata.as_deref().unwrap()).unwrap();
    assert_eq!(json["tenant"], "acme", "the application's metadata is kept");
    // Text metadata cannot carry a context: kept, and no context.
    assert_eq!(got[2].metadata.as_deref(), Some("plain text"));
    assert_eq!(got[2].trace_context(), None);
    // A record sent without a context carries none (and no metadata).
    assert_eq!(got[3].metadata, None);
    assert_eq!(got[3].trace_context(), None);
}

#[tokio::test]
async fn a_plain_producer_sends_the_context_a_consumer_reads() {
    let broker = TestBroker::start();
    create(&broker, "traced", 1).await;
    let producer = Producer::connect(ProducerConfig::new(&broker.addr))
        .await
        .unwrap();
    for record in records("traced") {
        producer.send(record.partition(0)).await.unwrap();
    }
    producer.close(Duration::from_secs(5)).await.unwrap();
    check(&consume(&broker, "traced", 4).await);
}

#[tokio::test]
async fn a_transactional_producer_sends_the_context_a_consumer_reads() {
    let broker = TestBroker::start();
    create(&broker, "traced-txn", 1).await;
    let mut config = ProducerConfig::new(&broker.addr);
    config.set("transactional_id", "tracer").unwrap();
    let producer = Producer::connect(config).await.unwrap();
    producer.init_transactions().await.unwrap();
    producer.begin_transaction().await.unwrap();
    for record in records("traced-txn") {
        producer.send(record.partition(0)).await.unwrap();
    }
    producer.commit_transaction().await.unwrap();
    producer.close(Duration::from_secs(5)).await.unwrap();
    check(&consume(&broker, "traced-txn", 4).await);
}
