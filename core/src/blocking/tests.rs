//! Tests of the blocking API.

use std::time::Duration;

use super::{deadline_of, Admin, Producer};
use crate::config::{ClientConfig, ProducerConfig};
use crate::producer::ProducerRecord;

#[test]
fn an_unbounded_timeout_has_no_deadline() {
    assert!(deadline_of(Some(Duration::MAX)).is_none());
    assert!(deadline_of(None).is_none());
    assert!(deadline_of(Some(Duration::from_secs(1))).is_some());
}

#[test]
fn a_batch_reports_every_record_once_in_order() {
    let broker = cursus_testkit::TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).unwrap();
    admin
        .create_topic(&crate::admin::NewTopic::new("batch").partitions(2))
        .unwrap();
    admin.close().unwrap();
    let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let mut records: Vec<ProducerRecord> = (0..10)
        .map(|i| ProducerRecord::new("batch", format!("v{i}")).partition(0))
        .collect();
    // Partition 9 does not exist: that record alone fails.
    records[4] = ProducerRecord::new("batch", "bad").partition(9);
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let counted = std::sync::Arc::clone(&calls);
    let same = producer.clone();
    producer
        .send_batch(records, move |outcomes| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let on_dispatcher = same.as_async().unwrap().dispatcher().is_current_thread();
            tx.send((outcomes, on_dispatcher)).unwrap();
        })
        .unwrap();
    // flush waits for the batch's callback.
    producer.flush(Some(Duration::from_secs(20))).unwrap();
    let (outcomes, on_dispatcher) = rx.try_recv().unwrap();
    assert!(on_dispatcher);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(outcomes.len(), 10);
    let err = outcomes[4].as_ref().unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
    let offsets: Vec<u64> = outcomes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 4)
        .map(|(_, o)| {
            let md = o.as_ref().unwrap();
            assert_eq!(md.partition, 0);
            md.offset.unwrap()
        })
        .collect();
    assert_eq!(offsets, (0..9).collect::<Vec<u64>>());

    // Batches' callbacks run in the order their records settle.
    let (tx, rx) = std::sync::mpsc::channel();
    for name in ["a", "b", "c"] {
        let tx = tx.clone();
        let batch = (0..3)
            .map(|_| ProducerRecord::new("batch", name).partition(1))
            .collect();
        producer
            .send_batch(batch, move |outcomes| {
                let offsets: Vec<u64> = outcomes
                    .iter()
                    .map(|o| o.as_ref().unwrap().offset.unwrap())
                    .collect();
                tx.send((name, offsets)).unwrap();
            })
            .unwrap();
    }
    // An empty batch calls back too, with nothing.
    let empty = tx.clone();
    producer
        .send_batch(Vec::new(), move |outcomes| {
            assert!(outcomes.is_empty());
            empty.send(("empty", Vec::new())).unwrap();
        })
        .unwrap();
    producer.flush(Some(Duration::from_secs(20))).unwrap();
    let seen: Vec<_> = rx.try_iter().collect();
    assert!(seen.contains(&("empty", Vec::new())));
    let ordered: Vec<_> = seen.into_iter().filter(|(n, _)| *n != "empty").collect();
    assert_eq!(
        ordered,
        vec![
            ("a", vec![0, 1, 2]),
            ("b", vec![3, 4, 5]),
            ("c", vec![6, 7, 8])
        ]
    );

    // A closed producer refuses the batch and never calls back.
    producer.close(Some(Duration::from_secs(5))).unwrap();
    let refused = producer.send_batch(vec![ProducerRecord::new("batch", "x")], |_| {
        panic!("a refused batch has no callback")
    });
    assert_eq!(refused.unwrap_err().kind(), crate::ErrorKind::Closed);
}
