//! Consumes a topic as a member of a group, committing after processing.
//!
//! ```sh
//! cargo run -p cursus --example consumer_group -- 127.0.0.1:9000 orders billing 1000
//! ```

use cursus::consumer::{Consumer, Subscription};
use cursus::ConsumerConfig;
use std::time::Duration;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let mut args = std::env::args().skip(1);
    let broker = args.next().unwrap_or_else(|| "127.0.0.1:9000".into());
    let topic = args.next().unwrap_or_else(|| "orders".into());
    let group = args.next().unwrap_or_else(|| "billing".into());
    let want: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);

    let consumer = Consumer::connect(ConsumerConfig::new(broker, group)).await?;
    consumer
        .subscribe(Subscription::Topics(vec![topic]))
        .await?;
    let mut seen = 0;
    let mut idle_polls = 0;
    while seen < want && idle_polls < 20 {
        let records = consumer.poll(Duration::from_millis(500)).await?;
        idle_polls = if records.is_empty() {
            idle_polls + 1
        } else {
            0
        };
        for r in &records {
            // Process the record, then commit lastProcessed + 1 below.
            let _ = (&r.key, &r.payload);
        }
        seen += records.len();
        consumer.commit_sync().await?;
    }
    println!(
        "consumed {seen} records; assignment {:?}",
        consumer.assignment().await?
    );
    consumer.close().await
}
