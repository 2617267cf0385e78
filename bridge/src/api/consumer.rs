//! The group consumer.

use super::lists::TopicPartitionList;
use super::{Callback, Config, Message};
use crate::callback::Listener;
use crate::registry::Handle;
use crate::{records, timeout};
use cursus::consumer::LostDelivery;
use cursus::{Result, TopicPartition};
use cursus_bridge_macros::bridge_fn;
use std::sync::Arc;

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

/// Makes the next poll return records of a partition from `offset` on;
/// records already fetched for it are dropped. The partition must be
/// assigned (`partition_not_assigned` otherwise: poll joins the group
/// first; a rebalance listener's `assigned` event is the place to seek
/// before any record is returned). Commits never move backwards: after a
/// seek backwards they stay at the furthest offset returned.
///
/// Thread-safety: safe from any thread, and from the rebalance listener.
#[bridge_fn]
pub fn consumer_seek(consumer: &Consumer, topic: &str, partition: u32, offset: u64) -> Result<()> {
    consumer.seek(&TopicPartition::new(topic, partition), offset)
}

/// The offset of the next record poll returns for an assigned partition.
///
/// Thread-safety: safe from any thread, and from the rebalance listener.
#[bridge_fn(out = "offset")]
pub fn consumer_position(consumer: &Consumer, topic: &str, partition: u32) -> Result<u64> {
    consumer.position(&TopicPartition::new(topic, partition))
}

/// Stops returning records of these assigned partitions (their offsets in
/// the list are ignored) until `consumer_resume`; the consumer stays in its
/// group and their positions are kept.
///
/// Thread-safety: safe from any thread, and from the rebalance listener.
#[bridge_fn]
pub fn consumer_pause(consumer: &Consumer, partitions: &TopicPartitionList) -> Result<()> {
    consumer.pause(&partitions_of(partitions))
}

/// Returns records of these partitions again, from their positions.
///
/// Thread-safety: safe from any thread, and from the rebalance listener.
#[bridge_fn]
pub fn consumer_resume(consumer: &Consumer, partitions: &TopicPartitionList) -> Result<()> {
    consumer.resume(&partitions_of(partitions))
}

/// The paused partitions, sorted.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "partitions")]
pub fn consumer_paused(consumer: &Consumer) -> Result<TopicPartitionList> {
    Ok(TopicPartitionList::from_partitions(consumer.paused()?))
}

/// The group's committed next offset of each listed partition, in list
/// order: a new list whose offsets are the committed ones (-1 where the
/// group committed nothing).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "committed")]
pub fn consumer_committed_list(
    consumer: &Consumer,
    partitions: &TopicPartitionList,
) -> Result<TopicPartitionList> {
    let committed = consumer.committed_offsets(&partitions_of(partitions))?;
    Ok(TopicPartitionList::from_offsets(
        committed
            .into_iter()
            .map(|(tp, o)| (tp, o.map_or(-1, |o| o as i64)))
            .collect(),
    ))
}

/// Sets the rebalance listener (NULL/null removes it). It is called with
/// each change of the assignment: `assigned` after every join of the group
/// (possibly empty), before any record of those partitions is returned;
/// `revoked` before partitions are taken away while still a member (by
/// close, a new subscribe, or a rebalance); `lost` when the session had
/// expired. `has_lost_callback` says whether the listener handles `lost`
/// itself: when false, a loss is told as `revoked` (as Kafka's clients do),
/// the one rule for every binding whose listeners have a callback per kind.
/// It runs on a thread of the consumer's own while poll (or close, or
/// subscribe) waits for it, so it may call the consumer again (commit,
/// seek, pause, position), except poll, which fails there. The event is
/// lent for the duration of the call.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn consumer_set_rebalance_listener(
    consumer: &Consumer,
    listener: Option<Listener<RebalanceEvent>>,
    has_lost_callback: bool,
) -> Result<()> {
    let lost = match has_lost_callback {
        true => LostDelivery::AsLost,
        false => LostDelivery::AsRevoked,
    };
    consumer.set_rebalance_listener_with(
        listener.map(|l| {
            Arc::new(move |e: &cursus::RebalanceEvent| l(&RebalanceEvent(e.clone())))
                as cursus::consumer::RebalanceListener
        }),
        lost,
    )
}

/// A change of a consumer's assignment, as the rebalance listener gets it.
#[derive(Debug, Clone)]
pub struct RebalanceEvent(pub cursus::RebalanceEvent);

impl Handle for RebalanceEvent {
    const KIND: &'static str = "rebalance event";
}

/// The kind of change: `"assigned"`, `"revoked"` or `"lost"`.
///
/// Thread-safety: safe from any thread while the event is alive.
#[bridge_fn]
pub fn rebalance_event_kind(event: &RebalanceEvent) -> &str {
    event.0.kind()
}

/// How many partitions the event is about.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn rebalance_event_count(event: &RebalanceEvent) -> usize {
    event.0.partitions().len()
}

/// The topic of the partition at `index` (none past the end).
///
/// Thread-safety: safe from any thread while the event is alive.
#[bridge_fn]
pub fn rebalance_event_topic(event: &RebalanceEvent, index: usize) -> Option<&str> {
    event.0.partitions().get(index).map(|tp| tp.topic.as_str())
}

/// The partition number at `index` (-1 past the end).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn rebalance_event_partition(event: &RebalanceEvent, index: usize) -> i64 {
    event
        .0
        .partitions()
        .get(index)
        .map_or(-1, |tp| i64::from(tp.partition))
}

/// The partitions of a list (its offsets are not looked at).
fn partitions_of(list: &TopicPartitionList) -> Vec<TopicPartition> {
    list.entries().into_iter().map(|(tp, _)| tp).collect()
}
