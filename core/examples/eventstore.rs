//! An event-sourced bank account: loads the aggregate (latest snapshot +
//! later events), appends deposits at the loaded version, retries on a
//! version conflict, and snapshots every 5 events.
//!
//! ```sh
//! cargo run -p cursus --example eventstore -- 127.0.0.1:9000 accounts acct-1 12
//! ```
//! (the topic must exist with `event_sourcing=true`; the example creates it)

use cursus::admin::{Admin, NewTopic};
use cursus::eventstore::{Aggregate, Event, EventStore};
use cursus::ClientConfig;

/// Folds one event into the balance.
fn apply(balance: i64, payload: &[u8]) -> i64 {
    balance
        + std::str::from_utf8(payload)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0)
}

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let mut args = std::env::args().skip(1);
    let broker = args.next().unwrap_or_else(|| "127.0.0.1:9000".into());
    let topic = args.next().unwrap_or_else(|| "accounts".into());
    let account = args.next().unwrap_or_else(|| "acct-1".into());
    let deposits: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(12);

    let admin = Admin::connect(ClientConfig::new(&broker)).await?;
    let mut t = NewTopic::new(&topic);
    t.event_sourcing = Some(true);
    admin.create_topic(&t).await?;
    admin.close().await;

    let store = EventStore::connect(ClientConfig::new(&broker)).await?;
    let mut done = 0;
    while done < deposits {
        let (mut aggregate, snapshot, events) =
            Aggregate::load(&store, &topic, &account, 5).await?;
        let mut balance = snapshot.map_or(0, |s| s.payload.parse().unwrap_or(0));
        for e in &events {
            balance = apply(balance, &e.payload);
        }
        while done < deposits {
            let amount = 10 * (done as i64 + 1);
            match aggregate
                .append(&store, &Event::new("Deposited", amount.to_string()))
                .await
            {
                Ok(_) => {}
                // Another writer appended first: reload and try again.
                Err(e) if e.is_broker_code("version_conflict") => break,
                Err(e) => return Err(e),
            }
            balance += amount;
            done += 1;
            // Saved when due; a failed snapshot is logged, never the append's error.
            aggregate.auto_snapshot(&store, &balance.to_string()).await;
        }
        println!(
            "{account}: version {}, balance {balance}",
            aggregate.version()
        );
    }
    store.close().await;
    Ok(())
}
