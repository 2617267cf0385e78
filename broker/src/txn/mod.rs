//! Transactions (docs/transactions.md): exactly-once consume-process-produce
//! through a broker-managed coordinator.
//!
//! * [`state`] — the state of one transactional id and its state machine;
//! * [`journal`] — `__transaction_state.journal`, one synced snapshot per
//!   accepted transition, compacted when it grows;
//! * [`coordinator`] — the commands' rules under a per-id lock;
//! * [`commit`] — END_TXN: the seven-step commit and the abort;
//! * [`requests`] — the parsed requests the coordinator takes;
//! * [`participants`] — where a transaction's partition and group
//!   operations run (the seam's transaction half);
//! * [`append`] — TXN_PUBLISH records and control markers in partitions;
//! * [`markers`] — the control-marker record layout;
//! * [`index`] — the per-partition transaction index (last stable offset,
//!   aborted ranges, markers) behind read_committed;
//! * [`recovery`] — finishing interrupted work before `/ready`;
//! * [`expiry`] — transaction timeouts and transactional-id expiration.

pub mod append;
pub mod commit;
pub mod coordinator;
pub mod expiry;
pub mod index;
pub mod journal;
pub mod markers;
pub mod participants;
pub mod recovery;
pub mod requests;
pub mod state;

pub use commit::CRASH_POINTS;
pub use coordinator::{TxnCoordinator, TxnSettings, TxnTopicRemoval};
pub use journal::{TxnJournal, TxnReplayError};
pub use recovery::recover;

/// A boxed, sendable future of the replicator.
pub type TxnFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// Distributed mode: the coordinator's durable state goes through the
/// cluster (Raft) instead of `__transaction_state.journal`, and the
/// replicator keeps the cluster's copy of every id's state.
pub trait TxnReplicator: Send + Sync + std::fmt::Debug {
    /// Commits `snapshot` (TXN_SYNC) and keeps it as the id's replicated
    /// state; `Err` carries the refusal as error text.
    fn sync(&self, snapshot: state::TxnSnapshot) -> TxnFuture<Result<(), String>>;
    /// The latest replicated state of every id.
    fn snapshots(&self) -> Vec<state::TxnSnapshot>;
    /// A TXN_SYNC of `transactional_id` was fenced: this broker lost the
    /// id, whose state it takes from the cluster again at the next sync.
    fn fenced(&self, transactional_id: &str);
    /// The cluster's state of `transactional_id` when taking it over was
    /// deferred because a command held the id (see
    /// [`TxnCoordinator::adopt`]); taken once.
    fn take_deferred(&self, transactional_id: &str) -> Option<state::TxnSnapshot>;
    /// A producer number unique in the cluster.
    fn allocate_producer_id(&self) -> TxnFuture<Result<u64, String>>;
    /// True when this broker coordinates `transactional_id` now.
    fn coordinates(&self, transactional_id: &str) -> bool;
}
