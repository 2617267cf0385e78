//! PUBLISH replies: the AckResponse JSON (spec §4, "PUBLISH").

use serde::{Deserialize, Serialize};

/// The broker's acknowledgement of a PUBLISH with acks 1 or all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckResponse {
    /// `OK`.
    #[serde(default)]
    pub status: String,
    /// Offset of the last record of the batch.
    pub last_offset: u64,
    /// Producer id echoed.
    #[serde(default)]
    pub producer_id: String,
    /// Producer epoch.
    #[serde(default)]
    pub producer_epoch: i64,
    /// First sequence of the batch.
    #[serde(default)]
    pub seq_start: u64,
    /// Last sequence of the batch.
    #[serde(default)]
    pub seq_end: u64,
    /// Leader that appended.
    #[serde(default)]
    pub leader: String,
    /// Partition, when the broker reports it.
    #[serde(default)]
    pub partition: Option<u32>,
}
