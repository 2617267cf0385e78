//! Durable storage of the reference broker.
//!
//! Plain synchronous code on `std::fs`: the async server calls it from
//! `spawn_blocking` or dedicated threads. Every type is `Send + Sync` with
//! internal locking, and damaged files produce [`StorageError::Corruption`],
//! never panics or silently missing data.
//!
//! * [`PartitionLog`] — one directory per partition holding segment files
//!   (`<base offset, 20 digits>.log`) of length + CRC32C framed entries
//!   (offset, timestamp, opaque record bytes) with sparse offset indexes
//!   (`.index`), group commit ([`PartitionLog::sync_to`]), reads capped at the
//!   durable tail, recovery on open and retention.
//! * [`Journal`] — a generic checksummed append-only record file with
//!   synchronous appends and atomic compaction, for coordinator state.
//! * [`Manifest`] — the `__topic_metadata.json` topic manifest (format 3).
//! * [`atomic_file`] — crash-safe whole-file replacement.
//! * [`io`] — the durability-relevant file calls, with injectable faults
//!   (`--storage-fault`, testing only).
//!
//! Durability model: an entry is durable once an fdatasync of its segment
//! completed; the high-water mark ([`PartitionLog::durable_offset`]) is the
//! offset after the durable prefix and reads never go beyond it. A segment is
//! fdatasynced before the next one is created, so only the last segment can
//! end in a torn write; recovery truncates such a tail and refuses to open on
//! damage anywhere else. After recovery everything on disk is durable
//! (HWM = LEO).

pub mod atomic_file;
pub mod compaction;
mod error;
mod frame;
mod group_commit;
mod index;
pub mod io;
pub mod journal;
pub mod manifest;
mod partition_log;
mod recovery;
mod retention;
mod segment;

pub use error::{Result, StorageError};
pub use journal::{Journal, DEFAULT_MAX_JOURNAL_RECORD_BYTES};
pub use manifest::{
    AuthPolicy, CleanupPolicy, Manifest, Partitioner, TopicDefinition, MANIFEST_FILE_NAME,
    MANIFEST_FORMAT,
};
pub use partition_log::{
    AppendInfo, LogConfig, PartitionLog, StoredRecord, DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_MAX_RECORD_BYTES, DEFAULT_SEGMENT_BYTES, MAX_APPEND_BYTES, MAX_SEGMENT_BYTES,
};
pub use retention::RetentionOutcome;

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        assert_send_sync::<PartitionLog>();
        assert_send_sync::<Journal>();
        assert_send_sync::<Manifest>();
        assert_send_sync::<StorageError>();
    }
}
