//! Sends keyed records and prints where each landed.
//!
//! ```sh
//! cargo run -p cursus --example producer -- 127.0.0.1:9000 orders 1000
//! ```

use cursus::producer::{Producer, ProducerRecord};
use cursus::ProducerConfig;
use std::time::Duration;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let mut args = std::env::args().skip(1);
    let broker = args.next().unwrap_or_else(|| "127.0.0.1:9000".into());
    let topic = args.next().unwrap_or_else(|| "orders".into());
    let count: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);

    let mut config = ProducerConfig::new(broker);
    config.set("compression", "lz4")?;
    config.set("enable_idempotence", "true")?;
    let producer = Producer::connect(config).await?;

    let mut deliveries = Vec::with_capacity(count as usize);
    for i in 0..count {
        let record =
            ProducerRecord::new(&topic, format!("order #{i}")).key(format!("customer-{}", i % 10));
        deliveries.push(producer.send(record).await?);
    }
    producer.flush(Some(Duration::from_secs(30))).await?;
    let mut last = None;
    for d in deliveries {
        last = Some(d.await?);
    }
    if let Some(md) = last {
        println!(
            "sent {count} records; last went to {}/{} at offset {:?}",
            md.topic, md.partition, md.offset
        );
    }
    producer.close(Duration::from_secs(10)).await
}
