//! The transactional consume-process-produce loop: a feeder writes unique
//! values (`in-<n>`) to [`TXN_IN_TOPIC`]; the processor reads them as a
//! member of [`TXN_GROUP`] (read_committed) and, per poll, writes one
//! output record per input to [`TXN_OUT_TOPIC`]
//! (`txn-<number>-<index>-<count>-<input>`) and commits them with the
//! consumed offsets in one transaction.
//!
//! On any failure the transaction is aborted and both clients are
//! replaced: the new consumer resumes from the group's committed offsets
//! (the aborted transaction's input is read again) and the new producer's
//! `init_transactions` fences the old session and aborts anything it left
//! open, as `docs/transactions.md` prescribes.

use super::{
    client_config, connect_retrying, consumer_config, producer_config, TXN_GROUP, TXN_IN_TOPIC,
    TXN_OUT_TOPIC,
};
use crate::ledger::{lock, Ledger, TxnAttempt, TxnOutcome};
use cursus::admin::Admin;
use cursus::consumer::{Consumer, ConsumerRecord, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{Error, TopicPartition};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The transactional id of the processor.
pub const TRANSACTIONAL_ID: &str = "chaos-processor";

/// The output value of input `input`, the `index`-th of `count` records of
/// transaction `number`.
pub fn output_value(number: u64, index: usize, count: usize, input: &str) -> String {
    format!("txn-{number}-{index}-{count}-{input}")
}

/// Reads an output value back: `(number, index, count, input)`.
pub fn parse_output(v: &[u8]) -> Option<(u64, u32, u32, String)> {
    let s = std::str::from_utf8(v).ok()?.strip_prefix("txn-")?;
    let mut parts = s.splitn(4, '-');
    Some((
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.to_owned(),
    ))
}

/// Writes `in-<n>` values to the input topic at up to `rate` per second
/// until `stop`, recording the acknowledged ones.
pub async fn feed(addr: String, rate: u64, ledger: Arc<Ledger>, stop: CancellationToken) {
    let Some(producer) =
        connect_retrying(&stop, || Producer::connect(producer_config(&addr, &[]))).await
    else {
        return;
    };
    let started = Instant::now();
    let mut pending = std::collections::VecDeque::new();
    let mut n = 0u64;
    while !stop.is_cancelled() {
        n += 1;
        let value = format!("in-{n}");
        if let Ok(d) = producer
            .send(ProducerRecord::new(TXN_IN_TOPIC, value.clone()))
            .await
        {
            pending.push_back((value, d));
        }
        while pending.len() >= 32 {
            let (v, d) = pending.pop_front().expect("non-empty");
            if d.await.is_ok() {
                lock(&ledger.txn_inputs).push(v);
            }
        }
        let due = started + Duration::from_micros(n * 1_000_000 / rate.max(1));
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep_until(due) => {}
        }
    }
    for (v, d) in pending {
        if d.await.is_ok() {
            lock(&ledger.txn_inputs).push(v);
        }
    }
    let _ = producer.close(Duration::from_secs(30)).await;
}

/// The processor's two clients.
struct Clients {
    consumer: Consumer,
    producer: Producer,
}

async fn connect(addr: &str, batch: usize, stop: &CancellationToken) -> Option<Clients> {
    let consumer = connect_retrying(stop, || async {
        let c = Consumer::connect(consumer_config(addr, TXN_GROUP, batch)).await?;
        c.subscribe(Subscription::Topics(vec![TXN_IN_TOPIC.into()]))
            .await?;
        Ok(c)
    })
    .await?;
    let producer = connect_retrying(stop, || async {
        let p = Producer::connect(producer_config(
            addr,
            &[("transactional_id", TRANSACTIONAL_ID)],
        ))
        .await?;
        if let Err(e) = p.init_transactions().await {
            let _ = p.close(Duration::from_secs(1)).await;
            return Err(e);
        }
        Ok(p)
    })
    .await?;
    Some(Clients { consumer, producer })
}

async fn close(clients: Clients) {
    let _ = clients.producer.close(Duration::from_secs(2)).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), clients.consumer.close()).await;
}

/// How a failed commit ended: refused before any END_TXN commit, aborted
/// by the broker (recovery, timeout, group fence), or unknown.
fn commit_failure(e: &Error) -> TxnOutcome {
    match e.code() {
        "invalid_transaction_state"
        | "transaction_aborted"
        | "GEN_MISMATCH"
        | "NOT_OWNER"
        | "member_not_found"
        | "group_not_found"
        | "offset_regression" => TxnOutcome::Aborted,
        _ => TxnOutcome::Unknown,
    }
}

/// True when the group committed the whole input (checked once the feeder
/// stopped).
async fn caught_up(admin: &Admin, consumer: &Consumer) -> bool {
    let Ok(ends) = admin.list_offsets(TXN_IN_TOPIC, None).await else {
        return false;
    };
    for end in ends {
        let tp = TopicPartition::new(TXN_IN_TOPIC, end.partition);
        match consumer.committed(&tp).await {
            Ok(Some(c)) if c >= end.hwm => {}
            Ok(None) if end.hwm == 0 => {}
            _ => return false,
        }
    }
    true
}

/// Runs the processor, at most `batch` inputs per transaction, until
/// `inputs_done` is cancelled and the whole input is committed (then marks
/// the ledger drained), or until `give_up`.
pub async fn process(
    addr: String,
    batch: usize,
    ledger: Arc<Ledger>,
    inputs_done: CancellationToken,
    give_up: CancellationToken,
) {
    let Some(admin) = connect_retrying(&give_up, || Admin::connect(client_config(&addr))).await
    else {
        return;
    };
    let mut number = 0u64;
    'session: while !give_up.is_cancelled() {
        let Some(clients) = connect(&addr, batch, &give_up).await else {
            break;
        };
        loop {
            if give_up.is_cancelled() {
                close(clients).await;
                break 'session;
            }
            let records = match clients.consumer.poll(Duration::from_millis(300)).await {
                Ok(r) => r,
                Err(_) => {
                    close(clients).await;
                    continue 'session;
                }
            };
            if records.is_empty() {
                if inputs_done.is_cancelled() && caught_up(&admin, &clients.consumer).await {
                    ledger.txn_drained.store(true, Ordering::SeqCst);
                    close(clients).await;
                    break 'session;
                }
                continue;
            }
            number += 1;
            let (outcome, error) = transact(&clients, number, &records).await;
            if outcome != TxnOutcome::Committed || error.is_some() {
                lock(&ledger.txns).push(TxnAttempt {
                    number,
                    records: records.len() as u32,
                    outcome,
                    error: error.map(|e| e.to_string()),
                });
                let _ = clients.producer.abort_transaction().await;
                close(clients).await;
                continue 'session;
            }
            lock(&ledger.txns).push(TxnAttempt {
                number,
                records: records.len() as u32,
                outcome,
                error: None,
            });
        }
    }
    admin.close().await;
}

/// One transaction over `records`: its outcome and the error behind a
/// non-committed one.
async fn transact(
    clients: &Clients,
    number: u64,
    records: &[ConsumerRecord],
) -> (TxnOutcome, Option<Error>) {
    let producer = &clients.producer;
    if let Err(e) = producer.begin_transaction().await {
        return (TxnOutcome::Aborted, Some(e));
    }
    let staged = async {
        for (i, r) in records.iter().enumerate() {
            let input = String::from_utf8_lossy(&r.payload);
            let value = output_value(number, i, records.len(), &input);
            // Deliveries are awaited by the commit (a failed one fails it).
            drop(
                producer
                    .send(ProducerRecord::new(TXN_OUT_TOPIC, value))
                    .await?,
            );
        }
        producer.send_consumer_offsets(&clients.consumer).await
    }
    .await;
    if let Err(e) = staged {
        // No END_TXN commit was sent: the transaction can only abort.
        return (TxnOutcome::Aborted, Some(e));
    }
    match producer.commit_transaction().await {
        Ok(()) => (TxnOutcome::Committed, None),
        Err(e) => (commit_failure(&e), Some(e)),
    }
}
