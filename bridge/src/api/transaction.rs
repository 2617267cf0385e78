//! Transactions of a producer configured with `transactional_id`
//! (`docs/transactions.md`): exactly-once consume-process-produce.
//!
//! Each step has a blocking form and an `_async` form whose callback gets
//! the outcome on the producer's callback thread (for languages whose API
//! returns futures or honours cancellation while the broker decides).

use super::{Callback, Consumer, Producer, TopicPartitionList};
use cursus::blocking::TransactionStep;
use cursus::{Error, Result, TopicPartition};
use cursus_bridge_macros::bridge_fn;

/// The explicit offsets of a list: every entry needs one.
pub(crate) fn offsets_of(list: &TopicPartitionList) -> Result<Vec<(TopicPartition, u64)>> {
    list.entries()
        .into_iter()
        .map(|(tp, offset)| {
            u64::try_from(offset)
                .map(|o| (tp.clone(), o))
                .map_err(|_| Error::invalid_argument(format!("{tp} has no offset")))
        })
        .collect()
}

/// Obtains the producer's transactional session from the broker, fencing
/// any older producer with the same `transactional_id` and aborting a
/// transaction it left open. Call once before the first transaction.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_init_transactions(producer: &Producer) -> Result<()> {
    producer.init_transactions()
}

/// Begins a transaction: records sent until commit or abort belong to
/// it. Every transaction after the first re-initialises the session (the
/// broker allows one transaction per epoch), so this may wait on the broker.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_begin_transaction(producer: &Producer) -> Result<()> {
    producer.begin_transaction()
}

/// Adds what `consumer` has delivered so far (the offset after the last
/// record each partition returned) to the open transaction, fenced by the
/// consumer's group session: committed with the transaction's records, or
/// not at all. The consumer must have joined its group (polled once).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_send_consumer_offsets(producer: &Producer, consumer: &Consumer) -> Result<()> {
    producer.send_consumer_offsets(consumer)
}

/// Adds explicit next offsets (every entry of `offsets` needs one) to the
/// open transaction, fenced by `consumer`'s group session.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_send_offsets_to_transaction(
    producer: &Producer,
    offsets: &TopicPartitionList,
    consumer: &Consumer,
) -> Result<()> {
    let group = consumer.group_metadata()?;
    producer.send_offsets_to_transaction(&offsets_of(offsets)?, &group)
}

/// Waits for every send of the open transaction, then commits it. A lost
/// reply is retried with the same epoch until the broker decides (up to
/// `delivery_timeout_ms`); still undecided, the error is returned and the
/// commit may be called again. After a failed send it fails: abort.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_commit_transaction(producer: &Producer) -> Result<()> {
    producer.commit_transaction()
}

/// Waits for the open transaction's sends to finish, then aborts it: none
/// of its records or offsets become visible to read_committed consumers.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_abort_transaction(producer: &Producer) -> Result<()> {
    producer.abort_transaction()
}

/// Starts `init_transactions` in the background; `callback` is then
/// called exactly once with the outcome on the producer's callback thread.
/// If starting fails, the error is returned and the callback is never
/// called.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_init_transactions_async(producer: &Producer, callback: Callback<()>) -> Result<()> {
    producer.transaction_async(TransactionStep::Init, callback)
}

/// Starts `begin_transaction` in the background (callback as for
/// `producer_init_transactions_async`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_begin_transaction_async(producer: &Producer, callback: Callback<()>) -> Result<()> {
    producer.transaction_async(TransactionStep::Begin, callback)
}

/// Takes `consumer`'s delivered offsets and group session now and adds
/// them to the open transaction in the background (callback as for
/// `producer_init_transactions_async`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_send_consumer_offsets_async(
    producer: &Producer,
    consumer: &Consumer,
    callback: Callback<()>,
) -> Result<()> {
    let group = consumer.group_metadata()?;
    let offsets = consumer.delivered_offsets()?;
    producer.transaction_async(TransactionStep::SendOffsets(offsets, group), callback)
}

/// Adds explicit next offsets (every entry of `offsets` needs one), fenced
/// by `consumer`'s group session taken now, to the open transaction in the
/// background (callback as for `producer_init_transactions_async`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_send_offsets_to_transaction_async(
    producer: &Producer,
    offsets: &TopicPartitionList,
    consumer: &Consumer,
    callback: Callback<()>,
) -> Result<()> {
    let offsets = offsets_of(offsets)?;
    let group = consumer.group_metadata()?;
    producer.transaction_async(TransactionStep::SendOffsets(offsets, group), callback)
}

/// Starts `commit_transaction` in the background (callback as for
/// `producer_init_transactions_async`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_commit_transaction_async(
    producer: &Producer,
    callback: Callback<()>,
) -> Result<()> {
    producer.transaction_async(TransactionStep::Commit, callback)
}

/// Starts `abort_transaction` in the background (callback as for
/// `producer_init_transactions_async`).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn producer_abort_transaction_async(producer: &Producer, callback: Callback<()>) -> Result<()> {
    producer.transaction_async(TransactionStep::Abort, callback)
}
