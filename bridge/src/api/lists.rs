//! Lists as handles: partitions with offsets, partition offsets, strings.

use crate::registry::Handle;
use cursus::{Result, TopicPartition};
use cursus_bridge_macros::{bridge_fn, bridge_results};
use std::sync::Mutex;

/// Topic partitions, each with an offset (-1 when it has none): what a
/// consumer's assignment is and what `consumer_commit_offsets` takes.
#[derive(Debug, Default)]
pub struct TopicPartitionList(Mutex<Vec<(TopicPartition, i64)>>);

impl Handle for TopicPartitionList {
    const KIND: &'static str = "topic partition list";
}

impl TopicPartitionList {
    /// A list of partitions without offsets.
    pub fn from_partitions(partitions: Vec<TopicPartition>) -> TopicPartitionList {
        TopicPartitionList(Mutex::new(
            partitions.into_iter().map(|tp| (tp, -1)).collect(),
        ))
    }

    /// A list of partitions with offsets (-1: none).
    pub fn from_offsets(entries: Vec<(TopicPartition, i64)>) -> TopicPartitionList {
        TopicPartitionList(Mutex::new(entries))
    }

    /// The entries, in order.
    pub fn entries(&self) -> Vec<(TopicPartition, i64)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn get<T>(&self, index: usize, f: impl FnOnce(&(TopicPartition, i64)) -> T) -> Option<T> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(index)
            .map(f)
    }
}

/// Creates an empty topic partition list.
///
/// Thread-safety: safe from any thread; a list is internally locked.
#[bridge_fn(out = "list")]
pub fn topic_partition_list_new() -> Result<TopicPartitionList> {
    Ok(TopicPartitionList::default())
}

/// Appends `topic`/`partition` with `offset` (-1: none).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_partition_list_add(
    list: &TopicPartitionList,
    topic: &str,
    partition: u32,
    offset: i64,
) -> Result<()> {
    if topic.is_empty() {
        return Err(cursus::Error::invalid_argument("topic is empty"));
    }
    list.0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((TopicPartition::new(topic, partition), offset.max(-1)));
    Ok(())
}

/// The number of entries.
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn topic_partition_list_count(list: &TopicPartitionList) -> usize {
    list.0.lock().unwrap_or_else(|p| p.into_inner()).len()
}

/// The topic of entry `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the list is alive.
#[bridge_fn]
pub fn topic_partition_list_topic(list: &TopicPartitionList, index: usize) -> Option<String> {
    list.get(index, |(tp, _)| tp.topic.clone())
}

/// The partition of entry `index` (-1 when out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_partition_list_partition(list: &TopicPartitionList, index: usize) -> i64 {
    list.get(index, |(tp, _)| i64::from(tp.partition))
        .unwrap_or(-1)
}

/// The offset of entry `index` (-1 when it has none or is out of range).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn topic_partition_list_offset(list: &TopicPartitionList, index: usize) -> i64 {
    list.get(index, |(_, o)| *o).unwrap_or(-1)
}

bridge_results! {
    /// One partition's offsets (LIST_OFFSETS).
    #[result(engine = "cursus::PartitionOffsets", item)]
    pub struct PartitionOffsets {
        /// The partition id.
        pub partition: u32,
        /// The earliest retained offset.
        pub earliest: u64,
        /// The next readable committed offset (where `latest` consumers
        /// start).
        pub latest: u64,
        /// The log end offset.
        #[field(java = "logEndOffset")]
        pub leo: u64,
        /// The high-water mark.
        #[field(java = "highWatermark")]
        pub hwm: u64,
    }

    /// The offsets of a topic's partitions (LIST_OFFSETS).
    #[result(list)]
    pub struct PartitionOffsetsList(pub Vec<PartitionOffsets>);
}

/// A list of strings (topic names, group names, HELP lines) for C; Java
/// and Python get their own string arrays.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringList(pub Vec<String>);

impl Handle for StringList {
    const KIND: &'static str = "string list";
}

/// The number of strings.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(langs = "c")]
pub fn string_list_count(list: &StringList) -> usize {
    list.0.len()
}

/// String `index` (none when out of range).
///
/// Thread-safety: safe from any thread while the list is alive.
#[bridge_fn(langs = "c")]
pub fn string_list_get(list: &StringList, index: usize) -> Option<&str> {
    list.0.get(index).map(String::as_str)
}
