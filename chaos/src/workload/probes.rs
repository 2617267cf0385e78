//! Availability probes, for the cluster runs: one idempotent acks=all
//! producer per partition of [`IDEM_TOPIC`], writing to that partition only
//! (`idem-<100 + partition>-<sequence>`, checked like every producer's
//! values) at [`RATE`] records per second, with each acknowledgement's
//! time recorded. The longest time a partition acknowledged nothing is its
//! unavailability (a producer writing to every partition would stall on
//! the slowest one and blur the others).

use super::producers::{settle, value};
use super::{connect_retrying, producer_config, IDEM_TOPIC};
use crate::ledger::{lock, Ledger};
use cursus::producer::{Producer, ProducerRecord};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Records per second of each probe.
const RATE: u64 = 20;

/// Deliveries a probe keeps outstanding.
const WINDOW: usize = 8;

/// The producer number of `partition`'s probe (in its values).
pub fn producer_id(partition: u32) -> u32 {
    100 + partition
}

/// Probes `partition` until `stop`: every acknowledgement goes to the
/// ledger with its time.
pub async fn run(partition: u32, addr: String, ledger: Arc<Ledger>, stop: CancellationToken) {
    let Some(producer) =
        connect_retrying(&stop, || Producer::connect(producer_config(&addr, &[]))).await
    else {
        return;
    };
    let id = producer_id(partition);
    let mut pending = VecDeque::new();
    let started = Instant::now();
    let mut seq = 0u64;
    while !stop.is_cancelled() {
        seq += 1;
        let record = ProducerRecord::new(IDEM_TOPIC, value(id, seq)).partition(partition);
        match producer.send(record).await {
            // Awaited at once (the time of the acknowledgement is the point).
            Ok(d) => {
                pending.push_back((seq, tokio::spawn(async move { (d.await, Instant::now()) })))
            }
            Err(_) => Ledger::bump(&ledger.produce_failures),
        }
        while pending.len() >= WINDOW {
            let (s, h) = pending.pop_front().expect("non-empty");
            note(id, s, h.await, &ledger);
        }
        let due = started + Duration::from_micros(seq * 1_000_000 / RATE);
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep_until(due) => {}
        }
    }
    for (s, h) in pending {
        note(id, s, h.await, &ledger);
    }
    let _ = producer.close(Duration::from_secs(30)).await;
}

/// A delivery's outcome and when it arrived.
type Outcome = (cursus::Result<cursus::RecordMetadata>, Instant);

/// Records a probe's settled delivery: its time, then as every producer's.
fn note(id: u32, seq: u64, joined: Result<Outcome, tokio::task::JoinError>, ledger: &Ledger) {
    let Ok((outcome, at)) = joined else {
        Ledger::bump(&ledger.produce_failures);
        return;
    };
    if let Ok(meta) = &outcome {
        lock(&ledger.probe_acks).push((meta.partition, at));
    }
    settle(id, seq, outcome, ledger);
}

/// Each partition's longest time without an acknowledgement of its probe,
/// counting the gaps that began before `until` (the end of the faults).
pub fn longest_gaps(ledger: &Ledger, until: Instant) -> BTreeMap<u32, Duration> {
    let mut by_partition: BTreeMap<u32, Vec<Instant>> = BTreeMap::new();
    for (p, at) in lock(&ledger.probe_acks).iter() {
        by_partition.entry(*p).or_default().push(*at);
    }
    by_partition
        .into_iter()
        .map(|(p, mut times)| {
            times.sort_unstable();
            let gap = times
                .windows(2)
                .filter(|w| w[0] <= until)
                .map(|w| w[1] - w[0])
                .max()
                .unwrap_or_default();
            (p, gap)
        })
        .collect()
}
