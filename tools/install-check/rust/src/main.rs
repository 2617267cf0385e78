//! A first Cursus program, as a user writes it from the README: create a
//! topic, send one record, read it back through a consumer group.

use cursus::blocking::{Admin, Consumer, Producer};
use cursus::{ClientConfig, ConsumerConfig, NewTopic, ProducerConfig, ProducerRecord};
use std::time::Duration;

fn main() -> cursus::Result<()> {
    let bootstrap = std::env::var("CURSUS_TEST_BROKER").unwrap_or_else(|_| "127.0.0.1:9000".into());
    let admin = Admin::connect(ClientConfig::new(&bootstrap))?;
    admin.create_topic(&NewTopic::new("first-rust").partitions(1))?;

    let producer = Producer::connect(ProducerConfig::new(&bootstrap))?;
    let stored = producer.send_and_wait(ProducerRecord::new("first-rust", "hello").key("k"))?;
    producer.close(Some(cursus::blocking::DEFAULT_TIMEOUT))?;

    let consumer = Consumer::connect(ConsumerConfig::new(&bootstrap, "first-rust"))?;
    consumer.subscribe(&["first-rust".to_owned()])?;
    let mut got = Vec::new();
    for _ in 0..100 {
        got.extend(consumer.poll(Some(Duration::from_millis(200)))?);
        if !got.is_empty() {
            break;
        }
    }
    consumer.commit_sync()?;
    consumer.close()?;
    admin.close()?;
    let record = got.first().expect("the record came back");
    assert_eq!(&record.payload[..], b"hello");
    println!("rust: sent to partition {} offset {:?}, read back {:?}", stored.partition, stored.offset, record.payload);
    Ok(())
}
