//! The engine's reference loops, one copy for every harness that times the
//! engine: `core/benches/engine.rs`, `core/examples/bench_native.rs` (`make
//! bench-peer`) and `ffi-c/examples/bench_send.rs` (the reference the
//! bindings are divided by). Each includes this file with `#[path]`, so they
//! all time the same work.
#![allow(dead_code)] // not every harness uses both loops

use cursus::consumer::Consumer;
use cursus::producer::{Producer, ProducerRecord};
use std::time::{Duration, Instant};

/// Deliveries held before the oldest is awaited: memory stays flat however
/// many records are sent.
const IN_FLIGHT: usize = 50_000;

/// Sends `records` records, record `i` made by `record(i)`, and waits for
/// every acknowledgement; returns records/s from the first send to the last
/// acknowledgement.
pub async fn produce_all(
    producer: &Producer,
    records: usize,
    mut record: impl FnMut(usize) -> ProducerRecord,
) -> cursus::Result<f64> {
    let started = Instant::now();
    let mut pending = std::collections::VecDeque::new();
    for i in 0..records {
        pending.push_back(producer.send(record(i)).await?);
        while pending.len() > IN_FLIGHT {
            pending.pop_front().expect("non-empty").await?;
        }
    }
    producer.flush(None).await?;
    for delivery in pending {
        delivery.await?;
    }
    Ok(records as f64 / started.elapsed().as_secs_f64())
}

/// Polls `consumer` (subscribed, not yet joined) until `records` records
/// arrived; returns records/s from the call, the group join included.
pub async fn consume_all(consumer: &Consumer, records: usize) -> cursus::Result<f64> {
    let started = Instant::now();
    let mut seen = 0;
    while seen < records {
        seen += consumer.poll(Duration::from_secs(5)).await?.len();
    }
    Ok(records as f64 / started.elapsed().as_secs_f64())
}
