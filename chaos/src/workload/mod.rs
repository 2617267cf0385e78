//! The workloads that run while the broker is being killed, and what they
//! share: topic names, client settings that survive restarts, and a
//! connect loop.

pub mod consumers;
pub mod eventstore;
pub mod partitions;
pub mod probes;
pub mod producers;
pub mod transactions;

use cursus::admin::{Admin, NewTopic};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Topic of the idempotent producers (and of the group consumers).
pub const IDEM_TOPIC: &str = "chaos-idem";
/// Partitions of [`IDEM_TOPIC`].
pub const IDEM_PARTITIONS: u32 = 4;
/// Input of the transactional loop.
pub const TXN_IN_TOPIC: &str = "chaos-txn-in";
/// Partitions of [`TXN_IN_TOPIC`].
pub const TXN_IN_PARTITIONS: u32 = 2;
/// Output of the transactional loop.
pub const TXN_OUT_TOPIC: &str = "chaos-txn-out";
/// Partitions of [`TXN_OUT_TOPIC`].
pub const TXN_OUT_PARTITIONS: u32 = 3;
/// Event-sourcing topic of the appenders.
pub const ES_TOPIC: &str = "chaos-es";
/// Partitions of [`ES_TOPIC`].
pub const ES_PARTITIONS: u32 = 2;
/// Group of the transactional loop's consumer.
pub const TXN_GROUP: &str = "chaos-txn";
/// Group of the group consumers.
pub const READER_GROUP: &str = "chaos-readers";

/// Client options that let work survive a broker restart: retries (with a
/// short backoff, so a restarted broker is found quickly) well beyond the
/// time a restart takes, and bounded waits per attempt.
const CLIENT_OPTIONS: &[(&str, &str)] = &[
    ("connect_timeout_ms", "3000"),
    ("request_timeout_ms", "10000"),
    ("retries", "100000"),
    ("retry_backoff_ms", "50"),
    ("retry_backoff_max_ms", "500"),
    ("client_id", "chaos"),
];

/// Connection settings of every client; `addr` may be a comma-separated
/// bootstrap list (`--cluster`).
pub fn client_config(addr: &str) -> ClientConfig {
    let mut c = ClientConfig::new(addr);
    c.set("bootstrap_servers", addr)
        .expect("valid bootstrap list");
    for (k, v) in CLIENT_OPTIONS {
        c.set(k, v).expect("valid client option");
    }
    c
}

/// An idempotent acks=all producer (`extra` on top, e.g. a
/// transactional id) with a delivery timeout long enough to outlive
/// several restarts.
pub fn producer_config(addr: &str, extra: &[(&str, &str)]) -> ProducerConfig {
    let mut c = ProducerConfig::new(addr);
    c.client = client_config(addr);
    for (k, v) in [
        ("acks", "all"),
        ("enable_idempotence", "true"),
        ("delivery_timeout_ms", "120000"),
        ("linger_ms", "2"),
    ]
    .iter()
    .chain(extra)
    {
        c.set(k, v).expect("valid producer option");
    }
    c
}

/// A read_committed consumer of `group` starting at the earliest offset
/// when the group has none.
pub fn consumer_config(addr: &str, group: &str, max_poll_records: usize) -> ConsumerConfig {
    let mut c = ConsumerConfig::new(addr, group);
    c.client = client_config(addr);
    let max = max_poll_records.to_string();
    for (k, v) in [
        ("isolation_level", "read_committed"),
        ("auto_offset_reset", "earliest"),
        ("enable_auto_commit", "false"),
        ("fetch_max_wait_ms", "200"),
        ("heartbeat_interval_ms", "1000"),
        ("max_poll_records", max.as_str()),
    ] {
        c.set(k, v).expect("valid consumer option");
    }
    c
}

/// Calls `connect` until it succeeds (the broker may be down for a moment)
/// or `stop` is cancelled; `None` when stopped first.
pub async fn connect_retrying<T, F, Fut>(stop: &CancellationToken, mut connect: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = cursus::Result<T>>,
{
    let mut delay = Duration::from_millis(50);
    loop {
        if stop.is_cancelled() {
            return None;
        }
        match connect().await {
            Ok(v) => return Some(v),
            Err(_) => {
                tokio::select! {
                    _ = stop.cancelled() => return None,
                    _ = tokio::time::sleep(delay) => {}
                }
                delay = (delay * 2).min(Duration::from_millis(500));
            }
        }
    }
}

/// Creates the topics of every workload.
pub async fn create_topics(addr: &str) -> cursus::Result<()> {
    let admin = Admin::connect(client_config(addr)).await?;
    let plain = [
        (IDEM_TOPIC, IDEM_PARTITIONS),
        (TXN_IN_TOPIC, TXN_IN_PARTITIONS),
        (TXN_OUT_TOPIC, TXN_OUT_PARTITIONS),
    ];
    for (name, partitions) in plain {
        admin
            .create_topic(&NewTopic::new(name).partitions(partitions))
            .await?;
    }
    let mut es = NewTopic::new(ES_TOPIC).partitions(ES_PARTITIONS);
    es.event_sourcing = Some(true);
    admin.create_topic(&es).await?;
    admin.close().await;
    Ok(())
}

/// Creates the topics of the `--cluster` run (those of every workload,
/// with replication factor 3) and waits until every member serves their
/// METADATA with a leader for every partition: a member may answer
/// `topic_not_found` for a moment after CREATE succeeded (not
/// materialized there yet).
pub async fn create_cluster_topics(bootstrap: &str) -> Result<(), String> {
    let admin = Admin::connect(client_config(bootstrap))
        .await
        .map_err(|e| e.to_string())?;
    let topics = [
        (IDEM_TOPIC, IDEM_PARTITIONS, false),
        (TXN_IN_TOPIC, TXN_IN_PARTITIONS, false),
        (TXN_OUT_TOPIC, TXN_OUT_PARTITIONS, false),
        (ES_TOPIC, ES_PARTITIONS, true),
    ];
    for (name, partitions, event_sourcing) in topics {
        let mut t = NewTopic::new(name).partitions(partitions);
        t.replication_factor = Some(3);
        if event_sourcing {
            t.event_sourcing = Some(true);
        }
        admin
            .create_topic(&t)
            .await
            .map_err(|e| format!("CREATE {name}: {e}"))?;
    }
    admin.close().await;
    for addr in bootstrap.split(',') {
        let admin = Admin::connect(client_config(addr))
            .await
            .map_err(|e| e.to_string())?;
        let give_up = tokio::time::Instant::now() + Duration::from_secs(60);
        for (name, ..) in topics {
            loop {
                match admin.metadata(name).await {
                    Ok(m) if m.leaders.iter().all(|l| !l.is_empty()) => break,
                    Ok(_) if tokio::time::Instant::now() > give_up => {
                        return Err(format!("METADATA {name} at {addr}: leaderless partitions"))
                    }
                    Ok(_) => {}
                    Err(e) if tokio::time::Instant::now() > give_up => {
                        return Err(format!("METADATA {name} at {addr}: {e}"))
                    }
                    Err(_) => {}
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        admin.close().await;
    }
    Ok(())
}
