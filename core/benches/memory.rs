//! Memory: the broker's resident set per 1,000 idle connections, and the
//! resident set of an idle Rust client. Writes target/bench/memory.json.
//!
//! - Broker: a release broker started by the testkit; its VmRSS
//!   (`/proc/<pid>/status`) is read, then `CURSUS_BENCH_CONNECTIONS`
//!   (default 1,000; the broker is started with `max_connections` above
//!   that) TCP connections are opened from this process, each
//!   completing the protocol handshake (compression negotiation) through
//!   the engine's own connection code, and VmRSS is read again. The
//!   figure is the growth scaled to 1,000 connections.
//! - Client: this bench runs itself again as a child process (so that
//!   nothing of the broker-side run is counted), which reads its own VmRSS
//!   with the engine's runtime up, connects a producer (one record sent
//!   and acknowledged) and a group consumer (subscribed, one poll), and
//!   reads VmRSS again: the idle client's total and its growth.
//!
//! ```sh
//! cargo bench -p cursus --bench memory
//! ```

use cursus::admin::{Admin, NewTopic};
use cursus::client::connection::Connection;
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use cursus_testkit::{rss_kib_of, TestBroker};
use std::time::Duration;

/// Set in the child process: the broker address to connect the client to.
const CHILD_ENV: &str = "CURSUS_BENCH_MEMORY_CHILD";

#[tokio::main]
async fn main() -> cursus::Result<()> {
    if let Ok(addr) = std::env::var(CHILD_ENV) {
        return child(&addr).await;
    }
    let connections: usize = std::env::var("CURSUS_BENCH_CONNECTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    // Room for them all: the broker's default limit is 1,000 connections.
    let broker =
        TestBroker::start_with_config(&format!("max_connections = {}\n", connections + 100));
    let config = ClientConfig::new(&broker.addr);
    // One connection first, so that what the first one sets up once is
    // not counted as per-connection cost.
    let first = Connection::connect(&broker.addr, &config).await?;
    let before = broker.rss_kib().expect("broker VmRSS");
    let mut open = Vec::with_capacity(connections);
    for _ in 0..connections {
        open.push(Connection::connect(&broker.addr, &config).await?);
    }
    let after = broker.rss_kib().expect("broker VmRSS");
    let per_1000 = (after.saturating_sub(before)) as f64 * 1000.0 / connections as f64;
    println!(
        "broker RSS: {before} KiB idle, {after} KiB with {connections} more connections \
         = {per_1000:.0} KiB per 1,000 connections"
    );
    for c in &open {
        c.close();
    }
    first.close();
    drop(open);

    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    admin
        .create_topic(&NewTopic::new("memory").partitions(1))
        .await?;
    admin.close().await;
    let out = std::process::Command::new(std::env::current_exe().expect("own executable"))
        .env(CHILD_ENV, &broker.addr)
        .output()
        .expect("run the client child");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("client "))
        .unwrap_or_else(|| {
            panic!(
                "child said: {text} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let nums: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (runtime_only, with_clients) = (nums[0], nums[1]);
    println!(
        "idle Rust client (producer + consumer): {with_clients} KiB RSS, \
         {} KiB over the process with the runtime only ({runtime_only} KiB)",
        with_clients.saturating_sub(runtime_only)
    );
    let json = format!(
        "{{\"command\": \"cargo bench -p cursus --bench memory\", \
         \"broker_idle_rss_kib\": {before}, \"broker_connections\": {connections}, \
         \"broker_rss_with_connections_kib\": {after}, \
         \"broker_rss_per_1000_connections_kib\": {per_1000:.0}, \
         \"rust_client_process_rss_kib\": {with_clients}, \
         \"rust_client_runtime_only_rss_kib\": {runtime_only}, \
         \"rust_client_rss_growth_kib\": {}}}\n",
        with_clients.saturating_sub(runtime_only)
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).ok();
    std::fs::write(dir.join("memory.json"), json).ok();
    Ok(())
}

/// The child: VmRSS with the runtime only, then with an idle producer and
/// consumer connected; prints `client <before> <after>`.
async fn child(addr: &str) -> cursus::Result<()> {
    let me = std::process::id();
    let before = rss_kib_of(me).expect("own VmRSS");
    let producer = Producer::connect(ProducerConfig::new(addr)).await?;
    producer
        .send(ProducerRecord::new("memory", "x"))
        .await?
        .await?;
    let consumer = Consumer::connect(ConsumerConfig::new(addr, "memory-group")).await?;
    consumer
        .subscribe(Subscription::Topics(vec!["memory".into()]))
        .await?;
    while consumer.poll(Duration::from_millis(500)).await?.is_empty() {}
    let after = rss_kib_of(me).expect("own VmRSS");
    println!("client {before} {after}");
    consumer.close().await?;
    producer.close(Duration::from_secs(10)).await?;
    Ok(())
}
