//! The background task that turns ready queues into PUBLISH batches and
//! completes each record's delivery.

use super::accumulator::Drained;
use super::reply::Stored;
use super::Shared;
use crate::client::{Idempotence, Lane};
use crate::config::ProducerAcks;
use crate::error::{Error, Result};
use crate::protocol::publish::AckResponse;
use crate::protocol::reply::parse_json;
use crate::wire::{Batch, Command, RecordRef, RecordVersionPolicy};
use bytes::BytesMut;
use std::sync::atomic::Ordering;
use std::sync::Arc;

mod transactional;

/// Runs until the producer is closed and nothing is left to send.
pub(super) async fn run(shared: Arc<Shared>) {
    loop {
        let closing = shared.closed.load(Ordering::SeqCst);
        let (ready, next_due) = {
            let mut acc = shared.accumulator.lock().unwrap_or_else(|p| p.into_inner());
            if closing && acc.is_empty() {
                return;
            }
            acc.drain_ready(shared.config.linger, shared.config.batch_size, closing)
        };
        for batch in ready {
            tokio::spawn(send(Arc::clone(&shared), batch));
        }
        match next_due {
            Some(due) => {
                tokio::select! {
                    _ = shared.wake.notified() => {}
                    _ = tokio::time::sleep_until(due.into()) => {}
                }
            }
            None => shared.wake.notified().await,
        }
    }
}

/// Sends one batch and completes its records.
async fn send(shared: Arc<Shared>, batch: Drained) {
    let (topic, partition) = batch.tp.clone();
    let timeout = shared.config.delivery_timeout;
    let started = std::time::Instant::now();
    let publishing = async {
        match &shared.txn {
            Some(txn) => transactional::publish(&shared, txn, &batch)
                .await
                .map(Stored::Each),
            None => publish(&shared, &batch, started + timeout)
                .await
                .map(Stored::Ending),
        }
    };
    let result = match tokio::time::timeout(timeout, publishing).await {
        Ok(r) => r,
        Err(_) => Err(Error::timeout(format!(
            "batch for {topic}/{partition} not acknowledged within delivery_timeout_ms ({} ms)",
            timeout.as_millis()
        ))),
    };
    let stats = shared.cluster.events();
    match &result {
        Ok(_) => stats.stats().batch_acknowledged(
            batch.records.len() as u64,
            batch
                .records
                .iter()
                .map(|r| (r.payload.len() + r.key.len()) as u64)
                .sum(),
            started.elapsed(),
        ),
        Err(e) => stats.report_error(
            e.clone()
                .with_field("topic", &topic)
                .with_field("partition", partition)
                .with_field("records", batch.records.len()),
        ),
    }
    let failed_epoch = match &result {
        Err(e) => {
            if e.kind() == crate::error::ErrorKind::Broker
                && e.class() == crate::wire::ErrorClass::Routing
            {
                shared.cluster.invalidate_metadata(&topic);
                shared
                    .accumulator
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .forget_topic(&topic);
            }
            match &shared.txn {
                // The transaction can only abort now; its epoch (and so
                // its sequences) ends with it.
                Some(txn) => {
                    txn.send_failed(e);
                    None
                }
                None => shared.config.enable_idempotence.then_some(batch.epoch),
            }
        }
        Ok(_) => None,
    };
    // One settlement for the whole batch, then its memory goes back.
    let tp = batch.tp;
    batch.replies.settle(&topic, partition, result.as_ref());
    drop(batch.records);
    drop(batch._memory);
    shared
        .accumulator
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .complete(&tp, failed_epoch);
    shared.drained.notify_waiters();
    shared.wake.notify_one();
}

/// Publishes the batch to the partition leader; returns the last offset
/// (`None` with acks=0). Retryable failures are retried until `deadline`
/// (the batch's delivery timeout), each retry on the leader named by
/// refreshed metadata, with the same sequence numbers and epoch so an
/// idempotent batch that did land is deduplicated.
async fn publish(
    shared: &Shared,
    batch: &Drained,
    deadline: std::time::Instant,
) -> Result<Option<u64>> {
    let (topic, partition) = &batch.tp;
    let config = &shared.config;
    let idempotent = config.enable_idempotence;
    let count = batch.records.len() as u64;
    let header = Batch {
        topic: topic.clone(),
        partition: *partition as i32,
        acks: config.acks.wire(),
        idempotent,
        batch_start: if idempotent { batch.first_seq } else { 0 },
        batch_end: if idempotent {
            batch.first_seq + count - 1
        } else {
            0
        },
        records: Vec::new(),
    };
    // Encoded straight from the queue: nothing is built per record.
    let records = batch.records.iter().enumerate().map(|(i, q)| RecordRef {
        payload: &q.payload,
        key: &q.key,
        timestamp: q.timestamp,
        metadata: q.metadata(),
        producer_id: &shared.producer_id,
        seq_num: if idempotent {
            batch.first_seq + i as u64
        } else {
            0
        },
        epoch: if idempotent { batch.epoch } else { 0 },
        ..Default::default()
    });
    let mut encoded = BytesMut::new();
    header.encode_borrowed(records, RecordVersionPolicy::Minimal, &mut encoded)?;
    let bytes = encoded.freeze();
    if config.acks == ProducerAcks::None {
        let leader = shared.cluster.leader(topic, *partition).await?;
        let conn = shared.cluster.connection(&leader, Lane::PRODUCE).await?;
        conn.send_without_reply(Command::Publish, bytes).await?;
        return Ok(None);
    }
    // Only deduplicated batches may be repeated after an unknown outcome.
    let idempotence = if idempotent {
        Idempotence::Safe
    } else {
        Idempotence::Unsafe
    };
    // Retried (a failover followed) until the delivery timeout, unless
    // retries are off: the deadline, not the retry count, bounds a batch.
    let deadline = (shared.cluster.config().retries > 0).then_some(deadline);
    let reply = shared
        .cluster
        .request_leader_bytes(
            topic,
            *partition,
            Lane::PRODUCE,
            Command::Publish,
            bytes,
            idempotence,
            None,
            deadline,
        )
        .await?;
    let ack: AckResponse = parse_json(&reply)?;
    Ok(Some(ack.last_offset))
}
