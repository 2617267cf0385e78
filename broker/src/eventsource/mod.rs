//! Event sourcing storage: the per-partition [`StreamIndex`] (aggregate key
//! → versions and offsets) and the per-topic [`SnapshotStore`]. The
//! commands live in [`crate::commands::eventsource`]; the contract is
//! `docs/event-sourcing.md`.

pub mod index;
pub mod replay;
pub mod reservation;
pub mod snapshots;

pub use index::{Entry, PendingConflict, PendingEvent, Reservation, StreamIndex};
pub use reservation::check_reservation;
pub use snapshots::{Snapshot, SnapshotStore, SNAPSHOT_JOURNAL_FILE};
