//! The transaction commands' requests after parsing (TXN_PUBLISH,
//! TXN_APPEND_STREAM, SEND_OFFSETS_TO_TXN), as the handlers in
//! `crate::commands::txn` hand them to the [`super::TxnCoordinator`].

use bytes::Bytes;

use crate::eventsource::replay::payload_digest;

/// A TXN_PUBLISH request after parsing.
#[derive(Debug, Clone)]
pub struct PublishRequest {
    /// Transactional id.
    pub transactional_id: String,
    /// Producer id.
    pub producer_id: String,
    /// Epoch.
    pub epoch: i64,
    /// Sequence number (> 0).
    pub seq: u64,
    /// Topic.
    pub topic: String,
    /// Explicit partition.
    pub partition: Option<u32>,
    /// Key (may be empty).
    pub key: Bytes,
    /// Payload.
    pub payload: Bytes,
    /// Metadata (empty: none), e.g. a producer's trace context.
    pub metadata: String,
}

/// A TXN_APPEND_STREAM request after parsing.
#[derive(Debug, Clone)]
pub struct StreamRequest {
    /// Transactional id.
    pub transactional_id: String,
    /// Producer id.
    pub producer_id: String,
    /// Epoch.
    pub epoch: i64,
    /// Stream sequence number (> 0), per topic in the epoch.
    pub seq: u64,
    /// Topic.
    pub topic: String,
    /// Aggregate key.
    pub key: String,
    /// The version the event gets (current + 1).
    pub expected_version: u64,
    /// Schema version.
    pub schema_version: u32,
    /// Event type (may be empty).
    pub event_type: String,
    /// Metadata (may be empty).
    pub metadata: String,
    /// Event id (may be empty).
    pub event_id: String,
    /// Payload.
    pub payload: Bytes,
}

impl StreamRequest {
    /// A digest of everything but the session and the sequence: an
    /// identical resend has the same.
    pub(super) fn fingerprint(&self) -> String {
        let mut text = String::new();
        for part in [
            self.key.as_str(),
            &self.expected_version.to_string(),
            &self.schema_version.to_string(),
            &self.event_type,
            &self.metadata,
            &self.event_id,
        ] {
            text.push_str(&part.len().to_string());
            text.push(':');
            text.push_str(part);
        }
        let mut bytes = text.into_bytes();
        bytes.extend_from_slice(&self.payload);
        payload_digest(&bytes)
    }
}

/// A SEND_OFFSETS_TO_TXN request after parsing.
#[derive(Debug, Clone)]
pub struct OffsetsRequest {
    /// Transactional id.
    pub transactional_id: String,
    /// Producer id.
    pub producer_id: String,
    /// Epoch.
    pub epoch: i64,
    /// Topic of the offsets.
    pub topic: String,
    /// Consumer group.
    pub group: String,
    /// Member id.
    pub member: String,
    /// Generation.
    pub generation: u64,
    /// `(partition, next offset)` entries.
    pub entries: Vec<(u32, u64)>,
}
