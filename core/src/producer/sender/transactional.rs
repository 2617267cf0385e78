//! Publishing a batch of a transaction: one TXN_PUBLISH per record, sent
//! to the transaction coordinator.
//!
//! The records are pipelined on one connection, all of them at once
//! under one in-flight slot (the batch counts as one request against
//! `max_in_flight`, as a PUBLISH batch does), so the broker appends them
//! back to back and their fsyncs are shared. If one fails with an
//! error that allows a retry (a lost connection, an availability error),
//! it and every record after it are sent again one at a time, in order,
//! with the same sequence numbers: the broker answers a sequence it
//! already appended with the original offset, and the in-order resend
//! never presents a sequence gap.

use super::super::accumulator::Drained;
use super::super::transaction::Transactions;
use super::super::Shared;
use crate::client::{Idempotence, Lane};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::reply::OkReply;
use crate::protocol::txn::{self, TxnRecord};
use crate::wire::{Command, ErrorClass};
use bytes::Bytes;

/// Publishes the batch; returns each record's offset.
pub(super) async fn publish(
    shared: &Shared,
    txn: &Transactions,
    batch: &Drained,
) -> Result<Vec<u64>> {
    let (topic, partition) = &batch.tp;
    let session = txn
        .session()
        .ok_or_else(|| Error::internal("transactional send without a session"))?;
    let requests = batch
        .records
        .iter()
        .enumerate()
        .map(|(i, q)| {
            // `check_text_record` admitted only UTF-8 text.
            let key = std::str::from_utf8(&q.key).unwrap_or_default();
            let payload = std::str::from_utf8(&q.payload).unwrap_or_default();
            txn::publish(
                txn.id(),
                &session,
                &TxnRecord {
                    topic,
                    partition: *partition,
                    seq: batch.first_seq + i as u64,
                    key,
                    payload,
                    metadata: q.metadata(),
                },
            )
            .to_bytes()
            .map_err(Error::from)
        })
        .collect::<Result<Vec<Bytes>>>()?;
    let cluster = &shared.cluster;
    let coordinator = cluster.txn_coordinator(txn.id(), false).await?;
    let timeout = cluster.config().request_timeout;
    let mut offsets = Vec::with_capacity(requests.len());
    let first_failure = match cluster.connection(&coordinator, Lane::PRODUCE).await {
        Ok(conn) => {
            let replies = conn
                .request_pipelined(Command::TxnPublish, &requests, timeout)
                .await;
            let mut failure = None;
            for reply in replies {
                match reply.and_then(|r| offset_of(&r)) {
                    Ok(offset) => offsets.push(offset),
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            failure
        }
        Err(e) => Some(e),
    };
    let Some(error) = first_failure else {
        return Ok(offsets);
    };
    if !may_resend(&error) {
        return Err(error);
    }
    tracing::debug!(%error, from = offsets.len(), "resending transactional records in order");
    for bytes in &requests[offsets.len()..] {
        let reply = cluster
            .request_bytes(
                Some(&coordinator),
                Lane::PRODUCE,
                Command::TxnPublish,
                bytes.clone(),
                Idempotence::Safe,
                None,
            )
            .await?;
        offsets.push(offset_of(&reply)?);
    }
    Ok(offsets)
}

/// The offset a TXN_PUBLISH reply reports.
fn offset_of(reply: &[u8]) -> Result<u64> {
    txn::published_offset(&OkReply::parse(reply)?)
}

/// A failed pipelined record may be sent again (with its sequence) when
/// it may not have been appended or the broker asked for a retry; a
/// sequence gap follows from an earlier failure in the same pipeline. Its
/// sequence makes a resend safe even after a `request_timeout` whose
/// outcome is unknown.
fn may_resend(e: &Error) -> bool {
    match e.kind() {
        ErrorKind::Io | ErrorKind::Timeout => true,
        ErrorKind::Broker => {
            matches!(e.class(), ErrorClass::Availability | ErrorClass::Routing)
                || e.is_broker_code("invalid_producer_sequence")
                || e.is_broker_code("request_timeout")
        }
        _ => false,
    }
}
