//! The synchronous facade the FFI layers call.

use cursus::blocking::{Admin, Consumer, Producer};
use cursus::producer::ProducerRecord;
use cursus::protocol::admin::NewTopic;
use cursus::{ClientConfig, ConsumerConfig, ErrorKind, ProducerConfig};
use cursus_testkit::TestBroker;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn produce_and_consume_without_an_async_runtime() {
    let broker = TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).unwrap();
    admin
        .create_topic(&NewTopic::new("sync").partitions(2))
        .unwrap();
    let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let md = producer
        .send_and_wait(ProducerRecord::new("sync", "first").partition(0))
        .unwrap();
    assert_eq!(md.offset, Some(0));
    // Completion callbacks run on an engine thread, once each.
    let (tx, rx) = mpsc::channel();
    for i in 0..10 {
        let tx = tx.clone();
        producer
            .send_with_callback(ProducerRecord::new("sync", format!("cb{i}")), move |r| {
                tx.send(r.map(|m| m.offset)).unwrap();
            })
            .unwrap();
    }
    producer.flush(Some(Duration::from_secs(10))).unwrap();
    for _ in 0..10 {
        assert!(rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap()
            .unwrap()
            .is_some());
    }
    producer.close(Duration::from_secs(5)).unwrap();
    let e = producer
        .send(ProducerRecord::new("sync", "late"))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);

    let mut config = ConsumerConfig::new(&broker.addr, "sync-group");
    config.set("fetch_max_wait_ms", "50").unwrap();
    let consumer = Consumer::connect(config).unwrap();
    consumer.subscribe(&["sync".to_owned()]).unwrap();
    let mut got = 0;
    for _ in 0..100 {
        got += consumer.poll(Duration::from_millis(100)).unwrap().len();
        if got == 11 {
            break;
        }
    }
    assert_eq!(got, 11);
    let (tx, rx) = mpsc::channel();
    consumer.commit_async(move |r| tx.send(r).unwrap()).unwrap();
    rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
    consumer.close().unwrap();
    admin.close().unwrap();
}

#[tokio::test]
async fn blocking_calls_inside_a_runtime_fail_instead_of_panicking() {
    let e = Admin::connect(ClientConfig::new("127.0.0.1:1")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("async runtime"), "{e}");
}
