//! Consumer control, statistics, background errors and logging with the
//! synchronous API: replays a topic from the start through a rebalance
//! listener, prints the lag, and logs through `tracing`.
//!
//! ```sh
//! cargo run -p cursus --example consumer_control -- 127.0.0.1:9000 orders replayer
//! ```

use cursus::blocking::Consumer;
use cursus::consumer::RebalanceEvent;
use cursus::ConsumerConfig;
use std::sync::{Arc, Weak};
use std::time::Duration;

fn main() -> cursus::Result<()> {
    // The engine logs through `tracing`; any subscriber receives it.
    tracing_subscriber::fmt()
        .with_env_filter("cursus=info")
        .init();
    let mut args = std::env::args().skip(1);
    let bootstrap = args.next().unwrap_or_else(|| "127.0.0.1:9000".into());
    let topic = args.next().unwrap_or_else(|| "orders".into());
    let group = args.next().unwrap_or_else(|| "replayer".into());

    let mut config = ConsumerConfig::new(&bootstrap, &group);
    config.set("enable_auto_commit", "false")?;
    let consumer = Arc::new(Consumer::connect(config)?);
    let weak: Weak<Consumer> = Arc::downgrade(&consumer);
    // Runs on the consumer's listener thread while poll waits.
    consumer.set_rebalance_listener(Some(Arc::new(move |event: &RebalanceEvent| {
        let Some(c) = weak.upgrade() else { return };
        match event {
            RebalanceEvent::Assigned(parts) => {
                for tp in parts {
                    let _ = c.seek(tp, 0); // replay from the start
                }
            }
            RebalanceEvent::Revoked(_) => {
                let _ = c.commit_sync(); // succeeds at close and subscribe
            }
            RebalanceEvent::Lost(parts) => eprintln!("lost {parts:?}"),
        }
    })))?;
    consumer.set_error_listener(Some(Arc::new(|e| eprintln!("background error: {e}"))))?;
    consumer.subscribe(&[topic])?;
    let mut total = 0;
    loop {
        let records = consumer.poll(Some(Duration::from_secs(2)))?;
        if records.is_empty() {
            break;
        }
        total += records.len();
    }
    for p in consumer.statistics()?.partitions {
        // No position yet (nothing committed or returned): lag unknown.
        println!(
            "{}:{} position {:?} lag {:?}",
            p.topic, p.partition, p.position, p.lag
        );
    }
    println!("replayed {total} records");
    consumer.close()
}
