//! The group consumer.

use super::lists::TopicPartitionList;
use super::{Callback, Config, Message};
use crate::registry::Handle;
use crate::{records, timeout};
use cursus::{Result, TopicPartition};
use cursus_bridge_macros::bridge_fn;

pub use cursus::blocking::Consumer;

impl Handle for Consumer {
    const KIND: &'static str = "consumer";
}

/// Connects a group consumer with `config` (option `group_id` is required;
/// `auto_offset_reset`, `enable_auto_commit`, `max_poll_records`, ... are
/// optional).
///
/// Thread-safety: safe from any thread. A consumer may be shared between
/// threads; `close` and `wakeup` from another thread interrupt a blocked
/// poll.
#[bridge_fn(out = "consumer")]
pub fn consumer_new(config: &Config) -> Result<Consumer> {
    let config = config.builder().consumer()?;
    Consumer::connect(config)
}

/// Subscribes to topics, replacing any earlier subscription; the group is
/// joined on the next poll.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn consumer_subscribe(consumer: &Consumer, topics: &[String]) -> Result<()> {
    consumer.subscribe(topics)
}

/// Subscribes to every topic whose name matches the glob `pattern` (`*`,
/// `?`), replacing any earlier subscription.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn consumer_subscribe_pattern(consumer: &Consumer, pattern: &str) -> Result<()> {
    consumer.subscribe_pattern(pattern)
}

/// Waits at most `timeout_ms` (`-1`: no limit) for the next message; none
/// when nothing arrived in time, or after `consumer_wakeup`. Only the
/// messages returned count as delivered: commits (explicit, automatic or
/// at close) cover exactly those. A close from another thread makes it
/// fail with `closed` at once.
///
/// Thread-safety: safe from any thread; one poll at a time per consumer is
/// the intended use.
#[bridge_fn(out = "message")]
pub fn consumer_poll(consumer: &Consumer, timeout_ms: i64) -> Result<Option<Message>> {
    let timeout = timeout::required(timeout_ms)?;
    Ok(consumer
        .poll_max(timeout, 1)?
        .into_iter()
        .next()
        .map(Message::from))
}

/// Like `consumer_poll`, but returns up to `max_records` (at most the
/// `max_poll_records` option) records at once, packed in the record view
/// layout of `bridge/src/records.rs`.
///
/// Thread-safety: as `consumer_poll`.
#[bridge_fn(out = "records")]
pub fn consumer_poll_batch(
    consumer: &Consumer,
    timeout_ms: i64,
    max_records: u32,
) -> Result<Vec<u8>> {
    let timeout = timeout::required(timeout_ms)?;
    records::pack(&consumer.poll_max(timeout, max_records as usize)?)
}

/// Makes the poll blocked now (or else the next one) return at once with
/// no message.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn consumer_wakeup(consumer: &Consumer) -> Result<()> {
    consumer.wakeup()
}

/// Commits the positions of the messages returned so far, synchronously.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn consumer_commit(consumer: &Consumer) -> Result<()> {
    consumer.commit_sync()
}

/// Commits the positions of the messages returned so far in the
/// background; `callback` is then called exactly once with the outcome, on
/// this consumer's callback thread. If starting fails, the error is
/// returned and the callback is never called.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn consumer_commit_async(consumer: &Consumer, callback: Callback<()>) -> Result<()> {
    consumer.commit_async(callback)
}

/// Commits explicit next offsets (the offset after the last record
/// processed), synchronously and in list order: every entry of `offsets`
/// needs an offset. The consumer must have joined its group (polled once
/// after subscribing). On failure the entries before the failing one stay
/// committed.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn consumer_commit_offsets(consumer: &Consumer, offsets: &TopicPartitionList) -> Result<()> {
    consumer.commit_offsets(&super::transaction::offsets_of(offsets)?)
}

/// The group's committed next offset of a partition, or -1 when the group
/// committed nothing there.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "offset")]
pub fn consumer_committed(consumer: &Consumer, topic: &str, partition: u32) -> Result<i64> {
    let tp = TopicPartition::new(topic, partition);
    Ok(consumer.committed(&tp)?.map_or(-1, |o| o as i64))
}

/// This member's id in its group (as the admin's group status lists it),
/// or an empty string before it has joined: the first poll after
/// subscribing joins.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "member_id")]
pub fn consumer_member_id(consumer: &Consumer) -> Result<String> {
    Ok(consumer.member_id()?.unwrap_or_default())
}

/// The partitions currently assigned to this member (empty before the
/// first poll).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "partitions")]
pub fn consumer_assignment(consumer: &Consumer) -> Result<TopicPartitionList> {
    Ok(TopicPartitionList::from_partitions(consumer.assignment()?))
}

/// Commits what was returned (with `enable_auto_commit`), leaves the group
/// and closes; a poll blocked in another thread fails with `closed` at
/// once. Closing twice is harmless. The handle must still be destroyed.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn consumer_close(consumer: &Consumer) -> Result<()> {
    consumer.close()
}
