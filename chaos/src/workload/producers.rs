//! Idempotent acks=all producers: each writes unique values
//! (`idem-<producer>-<sequence>`) round-robin over the partitions of
//! [`IDEM_TOPIC`] and records every acknowledged (partition, offset).

use super::{connect_retrying, producer_config, IDEM_TOPIC};
use crate::ledger::{lock, Acked, Ledger};
use cursus::producer::{Delivery, Producer, ProducerRecord};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Deliveries one producer keeps outstanding.
const WINDOW: usize = 64;

/// The value producer `producer` writes as its `seq`-th record.
pub fn value(producer: u32, seq: u64) -> String {
    format!("idem-{producer}-{seq}")
}

/// Reads a value written by [`value`] back: `(producer, seq)`.
pub fn parse_value(v: &[u8]) -> Option<(u32, u64)> {
    let s = std::str::from_utf8(v).ok()?.strip_prefix("idem-")?;
    let (p, q) = s.split_once('-')?;
    Some((p.parse().ok()?, q.parse().ok()?))
}

/// Runs producer `id` at up to `rate` records per second until `stop`,
/// then waits for its outstanding deliveries and closes.
pub async fn run(id: u32, addr: String, rate: u64, ledger: Arc<Ledger>, stop: CancellationToken) {
    let Some(producer) =
        connect_retrying(&stop, || Producer::connect(producer_config(&addr, &[]))).await
    else {
        return;
    };
    let mut pending: VecDeque<(u64, Delivery)> = VecDeque::new();
    let started = Instant::now();
    let mut seq = 0u64;
    while !stop.is_cancelled() {
        seq += 1;
        let record = ProducerRecord::new(IDEM_TOPIC, value(id, seq));
        match producer.send(record).await {
            Ok(d) => pending.push_back((seq, d)),
            Err(_) => Ledger::bump(&ledger.produce_failures),
        }
        while pending.len() >= WINDOW {
            let (s, d) = pending.pop_front().expect("non-empty");
            settle(id, s, d.await, &ledger);
        }
        // Pace to `rate`: the point is crash consistency, not throughput,
        // and the two cores are shared with the broker.
        let due = started + Duration::from_micros(seq * 1_000_000 / rate.max(1));
        if due > Instant::now() {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = tokio::time::sleep_until(due) => {}
            }
        }
    }
    for (s, d) in pending {
        settle(id, s, d.await, &ledger);
    }
    let _ = producer.close(Duration::from_secs(30)).await;
}

/// Records the outcome of producer `id`'s record `seq` in the ledger.
pub fn settle(id: u32, seq: u64, outcome: cursus::Result<cursus::RecordMetadata>, ledger: &Ledger) {
    match outcome {
        Ok(meta) => match meta.offset {
            Some(offset) => lock(&ledger.produced).push(Acked {
                producer: id,
                seq,
                partition: meta.partition,
                offset,
            }),
            None => Ledger::bump(&ledger.produce_failures),
        },
        Err(_) => Ledger::bump(&ledger.produce_failures),
    }
}
