//! What the workloads were told: every acknowledgement (and every
//! transaction's outcome as the producer saw it), kept for the checker.
//! Only what the broker confirmed is recorded as acknowledged; a call that
//! ultimately failed is "not acknowledged", which the checker allows to be
//! either present or absent (never partially, for a transaction).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// One record an idempotent producer had acknowledged.
#[derive(Debug, Clone)]
pub struct Acked {
    /// Producer number.
    pub producer: u32,
    /// The producer's sequence number for the value.
    pub seq: u64,
    /// Partition the broker stored it in.
    pub partition: u32,
    /// Offset the broker stored it at.
    pub offset: u64,
}

/// How a transaction ended, as the producer saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnOutcome {
    /// `commit_transaction` returned Ok: every record must be visible.
    Committed,
    /// Never committed (aborted, or the commit was refused before any
    /// END_TXN commit): no record may be visible.
    Aborted,
    /// The commit failed with an outcome the producer cannot know: all
    /// records or none.
    Unknown,
}

/// One transaction of the consume-process-produce loop.
#[derive(Debug, Clone)]
pub struct TxnAttempt {
    /// Transaction number (in every output value).
    pub number: u64,
    /// Records it produced.
    pub records: u32,
    /// Its outcome.
    pub outcome: TxnOutcome,
    /// The error that decided a non-committed outcome.
    pub error: Option<String>,
}

/// One acknowledged event-store append.
#[derive(Debug, Clone)]
pub struct EsAck {
    /// Aggregate key.
    pub aggregate: String,
    /// Version the broker gave the event.
    pub version: u64,
    /// The event's payload (unique per append).
    pub payload: String,
}

/// One acknowledged offset commit of a group consumer.
#[derive(Debug, Clone)]
pub struct CommitAck {
    /// Group.
    pub group: String,
    /// Consumer number.
    pub consumer: u32,
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Next offset committed.
    pub offset: u64,
}

/// One reading of a group's committed offset by the monitor (a single
/// task reading in turn, so its readings of a partition are ordered).
#[derive(Debug, Clone)]
pub struct CommittedSample {
    /// Group.
    pub group: String,
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Committed next offset read back.
    pub offset: u64,
}

/// Everything acknowledged during a run. Shared by all workloads.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Idempotent producers' acknowledged records.
    pub produced: Mutex<Vec<Acked>>,
    /// Sends that ultimately failed (not acknowledged).
    pub produce_failures: AtomicU64,
    /// Values the transaction feeder had acknowledged on the input topic.
    pub txn_inputs: Mutex<Vec<String>>,
    /// Every transaction attempt of the processor.
    pub txns: Mutex<Vec<TxnAttempt>>,
    /// True once the processor consumed the input to its end after the
    /// killer stopped (then every input must be in the output once).
    pub txn_drained: std::sync::atomic::AtomicBool,
    /// Acknowledged event-store appends.
    pub es_appends: Mutex<Vec<EsAck>>,
    /// Appends answered `version_conflict`.
    pub es_conflicts: AtomicU64,
    /// Appends that failed otherwise (outcome unknown).
    pub es_failures: AtomicU64,
    /// Acknowledged offset commits.
    pub commits: Mutex<Vec<CommitAck>>,
    /// The monitor's committed-offset readings.
    pub committed_samples: Mutex<Vec<CommittedSample>>,
    /// Records the group consumers polled (the partition readers of
    /// `--cluster`).
    pub consumed: AtomicU64,
    /// `--cluster`: what the partition readers saw while the killer ran,
    /// (partition, offset) -> value; nothing seen may change later.
    pub partition_reads: Mutex<std::collections::HashMap<(u32, u64), Vec<u8>>>,
    /// Cluster runs: when each availability probe's record was
    /// acknowledged, (partition, time).
    pub probe_acks: Mutex<Vec<(u32, tokio::time::Instant)>>,
}

/// Locks a ledger list (a panicked workload must not hide the rest).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Ledger {
    /// Counts one more of `counter`.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
