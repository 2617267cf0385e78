//! Quickstart: create a topic, produce 1,000 records, read them back through
//! a consumer group and commit. `make demo` runs this against a local broker.
//!
//! ```sh
//! cargo run -p cursus --example quickstart -- 127.0.0.1:9000
//! ```

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use std::time::{Duration, Instant};

const TOPIC: &str = "quickstart-rust";
const GROUP: &str = "quickstart-rust";
const RECORDS: usize = 1000;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bootstrap = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9000".into());
    let started = Instant::now();

    // CREATE on an existing topic is a no-op patch, so reruns are fine.
    let admin = Admin::connect(ClientConfig::new(bootstrap.clone())).await?;
    let mut topic = NewTopic::new(TOPIC);
    topic.partitions = Some(3);
    admin.create_topic(&topic).await?;
    admin.close().await;

    let producer = Producer::connect(ProducerConfig::new(bootstrap.clone())).await?;
    let mut deliveries = Vec::with_capacity(RECORDS);
    for i in 0..RECORDS {
        let record = ProducerRecord::new(TOPIC, format!("rust record {i}")).key(format!("key-{i}"));
        deliveries.push(producer.send(record).await?);
    }
    producer.flush(None).await?;
    for delivery in deliveries {
        delivery.await?; // each record's partition and offset
    }
    producer.close(Duration::from_secs(10)).await?;

    let mut config = ConsumerConfig::new(bootstrap, GROUP);
    config.set("auto_offset_reset", "earliest")?;
    let consumer = Consumer::connect(config).await?;
    consumer
        .subscribe(Subscription::Topics(vec![TOPIC.into()]))
        .await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut consumed = 0;
    while consumed < RECORDS {
        if Instant::now() > deadline {
            return Err(format!("only {consumed} of {RECORDS} records arrived within 60 s").into());
        }
        consumed += consumer.poll(Duration::from_millis(500)).await?.len();
    }
    consumer.commit_sync().await?;
    consumer.close().await?;

    println!(
        "rust: produced {RECORDS}, consumed {consumed} through group {GROUP}, committed ({} ms)",
        started.elapsed().as_millis()
    );
    Ok(())
}
