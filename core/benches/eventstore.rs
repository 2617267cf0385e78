//! Event-store throughput through the engine against the reference broker
//! (a release build on a free loopback port): appends per second to one
//! aggregate (each append waits for the previous: versions are serial) and
//! to 1,000 aggregates (one writer task per aggregate), and the time to
//! load an aggregate of 10,000 events without and with a snapshot. Writes
//! target/bench/eventstore.json.
//!
//! ```sh
//! cargo bench -p cursus --bench eventstore
//! CURSUS_BENCH_EVENTS=50000 cargo bench -p cursus --bench eventstore
//! ```

use cursus::admin::{Admin, NewTopic};
use cursus::eventstore::{Event, EventStore};
use cursus::ClientConfig;
use cursus_testkit::TestBroker;
use std::sync::Arc;
use std::time::Instant;

const PAYLOAD: usize = 100;
const AGGREGATES: u64 = 1_000;
const LONG_STREAM: u64 = 10_000;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let events: u64 = std::env::var("CURSUS_BENCH_EVENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let broker = TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    let mut topic = NewTopic::new("es").partitions(4);
    topic.event_sourcing = Some(true);
    admin.create_topic(&topic).await?;
    let store = Arc::new(EventStore::connect(ClientConfig::new(&broker.addr)).await?);
    let payload = "x".repeat(PAYLOAD);

    let started = Instant::now();
    for v in 0..events {
        store
            .append("es", "single", v, &Event::new("E", payload.clone()))
            .await?;
    }
    let one = events as f64 / started.elapsed().as_secs_f64();

    let per_aggregate = (events / AGGREGATES).max(1);
    let started = Instant::now();
    let mut writers = Vec::new();
    for a in 0..AGGREGATES {
        let store = Arc::clone(&store);
        let payload = payload.clone();
        writers.push(tokio::spawn(async move {
            let key = format!("agg-{a}");
            for v in 0..per_aggregate {
                store
                    .append("es", &key, v, &Event::new("E", payload.clone()))
                    .await?;
            }
            Ok::<(), cursus::Error>(())
        }));
    }
    for w in writers {
        w.await.expect("writer task")?;
    }
    let many = (per_aggregate * AGGREGATES) as f64 / started.elapsed().as_secs_f64();

    for v in 0..LONG_STREAM {
        store
            .append("es", "long", v, &Event::new("E", payload.clone()))
            .await?;
    }
    let started = Instant::now();
    let (_, replayed) = store.read_stream("es", "long", 1).await?;
    let load_full_ms = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(replayed.len() as u64, LONG_STREAM);
    store
        .save_snapshot("es", "long", LONG_STREAM, "state")
        .await?;
    let started = Instant::now();
    let (snapshot, after) = store.read_stream("es", "long", 1).await?;
    let load_snapshot_ms = started.elapsed().as_secs_f64() * 1e3;
    assert!(snapshot.is_some() && after.is_empty());

    println!(
        "append, one aggregate: {events} x {PAYLOAD} B = {one:.0} events/s ({:.0} µs per append)",
        1e6 / one
    );
    println!(
        "append, {AGGREGATES} aggregates: {} x {PAYLOAD} B = {many:.0} events/s",
        per_aggregate * AGGREGATES
    );
    println!("load {LONG_STREAM} events: {load_full_ms:.1} ms without a snapshot, {load_snapshot_ms:.1} ms with one");
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    let json = format!(
        "{{\"payload_bytes\": {PAYLOAD}, \"append_one_aggregate_events_per_s\": {one:.0}, \"append_{AGGREGATES}_aggregates_events_per_s\": {many:.0}, \"load_{LONG_STREAM}_events_ms\": {load_full_ms:.1}, \"load_with_snapshot_ms\": {load_snapshot_ms:.1}}}\n"
    );
    std::fs::write(out.join("eventstore.json"), json).ok();
    store.close().await;
    Ok(())
}
