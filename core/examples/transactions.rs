//! Exactly-once consume-process-produce: reads `input` as a member of a
//! group, writes an upper-cased copy of each record to `output`, and
//! commits the output together with the consumed offsets in one
//! transaction per poll. Run it twice with the same transactional id and
//! the newer process fences the older one.
//!
//! ```sh
//! cargo run -p cursus --example transactions -- 127.0.0.1:9000 input output upper 100
//! ```

use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ConsumerConfig, ProducerConfig};
use std::time::Duration;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let mut args = std::env::args().skip(1);
    let broker = args.next().unwrap_or_else(|| "127.0.0.1:9000".into());
    let input = args.next().unwrap_or_else(|| "input".into());
    let output = args.next().unwrap_or_else(|| "output".into());
    let group = args.next().unwrap_or_else(|| "upper".into());
    let want: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(100);

    // read_committed (the default) skips aborted input.
    let consumer = Consumer::connect(ConsumerConfig::new(&broker, &group)).await?;
    consumer
        .subscribe(Subscription::Topics(vec![input]))
        .await?;

    let mut config = ProducerConfig::new(&broker);
    // One transactional id per input partition set; a restarted process
    // with the same id fences its predecessor.
    config.set("transactional_id", &format!("{group}-processor"))?;
    let producer = Producer::connect(config).await?;
    producer.init_transactions().await?;

    let mut done = 0;
    let mut idle_polls = 0;
    while done < want && idle_polls < 20 {
        let records = consumer.poll(Duration::from_millis(500)).await?;
        if records.is_empty() {
            idle_polls += 1;
            continue;
        }
        idle_polls = 0;
        producer.begin_transaction().await?;
        let outcome = async {
            for r in &records {
                let upper = String::from_utf8_lossy(&r.payload).to_uppercase();
                let mut out = ProducerRecord::new(&output, upper);
                if let Some(key) = &r.key {
                    out = out.key(key.clone());
                }
                producer.send(out).await?;
            }
            // The consumed positions commit with the output, or not at all.
            producer.send_consumer_offsets(&consumer).await?;
            producer.commit_transaction().await
        }
        .await;
        if let Err(e) = outcome {
            eprintln!("transaction failed ({e}); aborting");
            producer.abort_transaction().await?;
            return Err(e);
        }
        done += records.len();
    }
    println!("processed {done} records exactly once");
    producer.close(Duration::from_secs(10)).await?;
    consumer.close().await
}
