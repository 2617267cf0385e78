//! Consumer groups and durable offsets (specification §4 group commands and
//! §6 "Consumer Group Protocol").
//!
//! * [`selector`] — `topic=` / `topics=` / `pattern=` subscriptions and their
//!   concrete topic-partition expansion;
//! * [`assignment`] — deterministic round-robin partition assignment;
//! * [`member_id`] — `<prefix>-NNNN` member ids and timestamps;
//! * [`records`] — the versioned records of `__consumer_offsets` and the
//!   state they replay into;
//! * [`offsets_store`] — the synced, compacted `__consumer_offsets` journal;
//! * [`membership`] — member sessions, generations, rebalances, expiry;
//! * [`coordinator`] — the commands' rules under one lock: registration,
//!   joins, heartbeats, commits, and durable writes before replies;
//! * [`lifecycle`] — the DELETE/TRUNCATE guard, tombstones, and startup
//!   cleanup of groups of vanished topics;
//! * [`status`] — the GROUP_STATUS document;
//! * [`errors`] — the typed errors with the specification's fields.
//!
//! The data path only needs [`OffsetLookup`]: CONSUME and STREAM start from
//! a committed offset when one exists.

pub mod assignment;
pub mod coordinator;
pub mod errors;
pub mod lifecycle;
pub mod member_id;
pub mod membership;
pub mod offsets_store;
pub mod records;
pub mod selector;
pub mod status;

pub use assignment::TopicPartition;
pub use coordinator::{Coordinator, MemberView, Registered};
pub use lifecycle::TopicRemoval;
pub use offsets_store::ReplayError;
pub use selector::Selector;
pub use status::{GroupStatus, MemberStatus};

/// Looks up the committed next offset of a consumer group, which takes
/// precedence over the `offset=` of a CONSUME request.
pub trait OffsetLookup: Send + Sync {
    /// The committed next offset of `group` on `topic`/`partition`, if any.
    fn committed_offset(&self, topic: &str, group: &str, partition: u32) -> Option<u64>;
}

/// Distributed mode: writes a group record through the cluster (Raft)
/// instead of the local `__consumer_offsets` journal.
pub trait GroupReplicator: Send + Sync + std::fmt::Debug {
    /// Commits `record`; `Ok` carries the cluster's groups version after
    /// it, `Err` why it was not committed. With `member_commit` (a
    /// member's COMMIT_OFFSET or BATCH_COMMIT, or a membership change) the
    /// cluster refuses it unless this broker coordinates the group when it
    /// is applied and no offset or generation goes back
    /// (`NOT_COORDINATOR`, `offset_regression`, `GEN_MISMATCH`): this
    /// broker checked it against its own copy, which may be older.
    fn replicate(
        &self,
        record: records::RecordBody,
        member_commit: bool,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<u64, cursus_wire::ErrorPayload>> + Send>,
    >;

    /// The coordinator's copy now reflects the cluster's groups up to
    /// groups version `version`.
    fn synced(&self, version: u64);
}

/// A lookup for which nothing is committed (tools and tests without a
/// coordinator).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCommittedOffsets;

impl OffsetLookup for NoCommittedOffsets {
    fn committed_offset(&self, _topic: &str, _group: &str, _partition: u32) -> Option<u64> {
        None
    }
}
