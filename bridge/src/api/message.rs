//! A consumed record, held by handle (C's one-message poll).

use crate::registry::Handle;
use cursus::ConsumerRecord;
use cursus_bridge_macros::bridge_fn;

/// One consumed record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message(pub ConsumerRecord);

impl From<ConsumerRecord> for Message {
    fn from(r: ConsumerRecord) -> Message {
        Message(r)
    }
}

impl Handle for Message {
    const KIND: &'static str = "message";
}

/// The topic of the message.
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_topic(message: &Message) -> &str {
    &message.0.topic
}

/// The partition of the message.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn message_partition(message: &Message) -> i32 {
    message.0.partition as i32
}

/// The offset of the message.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(fallback = "-1")]
pub fn message_offset(message: &Message) -> i64 {
    message.0.offset as i64
}

/// The timestamp in milliseconds since the epoch (0 when unknown).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn message_timestamp(message: &Message) -> i64 {
    message.0.timestamp
}

/// The key bytes (empty when the record has no key).
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_key(message: &Message) -> &[u8] {
    &message.0.key
}

/// The value bytes (binary; may contain NUL bytes).
///
/// Thread-safety: safe from any thread while the message is alive.
#[bridge_fn]
pub fn message_payload(message: &Message) -> &[u8] {
    &message.0.payload
}
