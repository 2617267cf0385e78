//! Consumer-group state the data path needs.
//!
//! Group coordination (JOIN_GROUP, SYNC_GROUP, HEARTBEAT, COMMIT_OFFSET, the
//! `__consumer_offsets` store) arrives in the next issue. Until then the
//! broker only needs to ask "is there a committed offset?" when it resolves
//! the start of a CONSUME or STREAM, and the answer is always "no".

/// Looks up the committed next offset of a consumer group, which takes
/// precedence over the `offset=` of a CONSUME request.
pub trait OffsetLookup: Send + Sync {
    /// The committed next offset of `group` on `topic`/`partition`, if any.
    fn committed_offset(&self, topic: &str, group: &str, partition: u32) -> Option<u64>;
}

/// The lookup used until group coordination exists: nothing is committed.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCommittedOffsets;

impl OffsetLookup for NoCommittedOffsets {
    fn committed_offset(&self, _topic: &str, _group: &str, _partition: u32) -> Option<u64> {
        None
    }
}
