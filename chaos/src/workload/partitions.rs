//! Readers by explicit partition assignment, for `--cluster`: in addition
//! to the group consumers, the cluster run reads each partition of
//! [`IDEM_TOPIC`] on its own (CONSUME to the partition leader through the
//! engine's routing, no group), both while the killer runs (recording
//! what was visible, so the checker can tell whether a failover rewrote
//! or truncated it) and in the checker (reading back by partition, with
//! no group coordinator involved).
//!
//! This is the only use of the engine's internals (`cursus::client`, the
//! `internals` feature): the engine has no public partition-assignment API
//! yet.

use super::{client_config, IDEM_TOPIC};
use crate::ledger::{lock, Ledger};
use cursus::client::{Cluster, Idempotence, Lane};
use cursus_wire::{Batch, Command, CommandPayload, ControlBatchType};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Records per CONSUME.
const BATCH: u32 = 500;

/// One CONSUME of `topic`/`partition` from `offset` at its leader (long
/// poll `wait_ms`); the records at or past `offset`, as (offset, value).
pub async fn read_once(
    cluster: &Cluster,
    topic: &str,
    partition: u32,
    offset: u64,
    wait_ms: u64,
) -> cursus::Result<Vec<(u64, Vec<u8>)>> {
    let payload = CommandPayload::new()
        .field("topic", topic)
        .field("partition", partition)
        .field("offset", offset)
        .field("member", "chaos-reader")
        .field("isolation", "read_committed")
        .field("batch", BATCH)
        .field("wait_ms", wait_ms)
        .to_bytes()
        .map_err(cursus::Error::from)?;
    let reply = cluster
        .request_leader_bytes(
            topic,
            partition,
            Lane::CONTROL,
            Command::Consume,
            payload,
            Idempotence::Safe,
            Some(Duration::from_millis(10_000 + wait_ms)),
            None,
        )
        .await?;
    let batch = Batch::decode(reply).map_err(cursus::Error::from)?;
    Ok(batch
        .records
        .into_iter()
        .filter(|r| r.offset >= offset && r.control_batch_type == ControlBatchType::None)
        .map(|r| (r.offset, r.payload.to_vec()))
        .collect())
}

/// Follows `partition` of [`IDEM_TOPIC`] from offset 0 until `stop`,
/// recording every (offset, value) it saw in the ledger (the checker
/// verifies that nothing a reader saw changes or disappears).
pub async fn run(partition: u32, addr: String, ledger: Arc<Ledger>, stop: CancellationToken) {
    let Ok(cluster) = Cluster::new(client_config(&addr)) else {
        return;
    };
    let mut offset = 0u64;
    while !stop.is_cancelled() {
        let records = tokio::select! {
            _ = stop.cancelled() => break,
            r = read_once(&cluster, IDEM_TOPIC, partition, offset, 300) => r,
        };
        let Ok(records) = records else {
            // The engine already retried; try again after a moment.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        ledger
            .consumed
            .fetch_add(records.len() as u64, Ordering::Relaxed);
        let mut seen = lock(&ledger.partition_reads);
        for (o, v) in records {
            offset = o + 1;
            seen.entry((partition, o)).or_insert(v);
        }
    }
    cluster.close().await;
}

/// Reads `topic`/`partition` from offset 0 until a record with value
/// `sentinel` arrived (at most 300 s); every record before it.
pub async fn read_until(
    addr: &str,
    topic: &str,
    partition: u32,
    sentinel: &str,
) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let cluster = Cluster::new(client_config(addr)).map_err(|e| e.to_string())?;
    let give_up = Instant::now() + Duration::from_secs(300);
    let mut out = Vec::new();
    let mut offset = 0u64;
    loop {
        if Instant::now() > give_up {
            return Err(format!(
                "{topic}/{partition}: sentinel not read within 300 s (read up to offset {offset})"
            ));
        }
        let records = match read_once(&cluster, topic, partition, offset, 500).await {
            Ok(r) => r,
            Err(e) if e.retryable() => continue,
            Err(e) => return Err(format!("read {topic}/{partition}@{offset}: {e}")),
        };
        for (o, v) in records {
            offset = o + 1;
            if v == sentinel.as_bytes() {
                cluster.close().await;
                return Ok(out);
            }
            out.push((o, v));
        }
    }
}
