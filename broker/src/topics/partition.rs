//! One live partition: its durable log, the append lock with the producer
//! sequence state, the transaction index (last stable offset, aborted
//! ranges, markers), the stream index of an event-sourcing topic, and the
//! signal that wakes long polls and streams.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};

use bytes::Bytes;
use cursus_wire::{ErrorClass, ErrorPayload, Record};
use tokio::sync::{watch, Mutex};

use super::producers::ProducerTable;
use crate::eventsource::{PendingEvent, Reservation, StreamIndex};
use crate::storage::{AppendInfo, PartitionLog, StorageError, StoredRecord};
use crate::txn::index::TxnIndex;
use crate::txn::markers::{classify, MarkerKind, TxnRecordKind};

/// Records read per chunk while rebuilding producer state.
const REBUILD_CHUNK: usize = 4096;

/// What waiters on a partition observe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionSignal {
    /// The durable offset (high-water mark): reads see everything below it.
    pub durable: u64,
    /// The last stable offset: read_committed reads stop here (the first
    /// offset of the earliest unresolved transaction, else `durable`).
    pub stable: u64,
    /// The partition was removed (topic deleted) or reset (truncated):
    /// readers of this generation must stop.
    pub closed: bool,
}

/// Why [`Partition::append_replica`] appended nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaAppendError {
    /// The entries do not start at this replica's log end: the leader
    /// resends from `log_end`.
    #[error("replica log ends at offset {log_end}, not at {expected}")]
    OffsetMismatch {
        /// The base offset the leader sent the entries for.
        expected: u64,
        /// This replica's log end offset.
        log_end: u64,
    },
    /// This partition generation ended (reset or deleted): look the
    /// partition up again.
    #[error("partition generation closed")]
    Closed,
    /// The log refused the append or the sync.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A partition of a live topic.
///
/// A TRUNCATE replaces the `Partition` (same log, fresh state and signal)
/// and closes the old one, so a waiter always knows its generation ended.
#[derive(Debug)]
pub struct Partition {
    id: u32,
    log: Arc<PartitionLog>,
    signal: watch::Sender<PartitionSignal>,
    /// A background flush is scheduled and has not started yet.
    flush_scheduled: AtomicBool,
    /// Distributed mode: the committed high-water mark; read_committed
    /// readers never pass it (`u64::MAX` in standalone mode).
    commit_limit: AtomicU64,
    /// Distributed mode: the leader epoch this generation was opened to
    /// serve (0: a follower's generation, or standalone). A write waits
    /// for its commit in this epoch: a generation that lost leadership
    /// never sees its writes committed under a later leader's mark.
    leader_epoch: AtomicU64,
    /// Serializes appends of this partition and holds the producer
    /// sequence state they check and update.
    pub writer: Mutex<ProducerTable>,
    /// Transactions with records here (see [`TxnIndex`]).
    txn: StdMutex<TxnIndex>,
    /// Event streams (event-sourcing topics; empty otherwise). Changed only
    /// under [`writer`](Self::writer).
    streams: StdMutex<StreamIndex>,
}

/// A partition's state rebuilt from its log at startup.
#[derive(Debug, Default)]
pub struct RebuiltState {
    /// Producer sequence state.
    pub producers: ProducerTable,
    /// Transaction index.
    pub txn: TxnIndex,
    /// Stream index (event-sourcing topics).
    pub streams: StreamIndex,
}

impl Partition {
    /// Wraps an open log with `producers` as its sequence state and no
    /// transactions.
    pub fn new(id: u32, log: Arc<PartitionLog>, producers: ProducerTable) -> Partition {
        Self::rebuilt(
            id,
            log,
            RebuiltState {
                producers,
                txn: TxnIndex::new(),
                streams: StreamIndex::new(),
            },
        )
    }

    /// Wraps an open log with the state [`rebuild_state`](Self::rebuild_state)
    /// found in it.
    pub fn rebuilt(id: u32, log: Arc<PartitionLog>, mut state: RebuiltState) -> Partition {
        state.producers.set_checkpoint_dir(log.dir());
        let durable = log.durable_offset();
        let (signal, _) = watch::channel(PartitionSignal {
            durable,
            stable: state.txn.stable_offset(durable),
            closed: false,
        });
        Partition {
            id,
            log,
            signal,
            flush_scheduled: AtomicBool::new(false),
            commit_limit: AtomicU64::new(u64::MAX),
            leader_epoch: AtomicU64::new(0),
            writer: Mutex::new(state.producers),
            txn: StdMutex::new(state.txn),
            streams: StdMutex::new(state.streams),
        }
    }

    /// Partition number.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The leader epoch this generation serves (0: none).
    pub fn leader_epoch(&self) -> u64 {
        self.leader_epoch.load(Ordering::Acquire)
    }

    /// Distributed mode: this generation serves leader epoch `epoch`
    /// (set once by the new leader before it serves).
    pub fn serve_leader_epoch(&self, epoch: u64) {
        self.leader_epoch.store(epoch, Ordering::Release);
    }

    /// The durable log.
    pub fn log(&self) -> &Arc<PartitionLog> {
        &self.log
    }

    /// Subscribes to durable-offset advances and closure.
    pub fn subscribe(&self) -> watch::Receiver<PartitionSignal> {
        self.signal.subscribe()
    }

    /// True once the partition was removed or reset.
    pub fn is_closed(&self) -> bool {
        self.signal.borrow().closed
    }

    /// Distributed mode: sets the committed high-water mark that bounds
    /// read_committed reads, waking waiters when it moves.
    pub fn set_commit_limit(&self, hwm: u64) {
        if self.commit_limit.swap(hwm, Ordering::AcqRel) != hwm {
            self.publish_durable();
        }
    }

    /// Distributed mode: raises the committed high-water mark to `hwm`
    /// (never lowers it) when a write of this leader epoch was seen
    /// committed before the reconciler caught up.
    pub fn raise_commit_limit(&self, hwm: u64) {
        if self.commit_limit.fetch_max(hwm, Ordering::AcqRel) < hwm {
            self.publish_durable();
        }
    }

    /// The durable offset, bounded by the committed high-water mark: what
    /// read_committed may reach before transactions are considered.
    fn committed_end(&self) -> u64 {
        self.log
            .durable_offset()
            .min(self.commit_limit.load(Ordering::Acquire))
    }

    /// Wakes waiters if the durable or the stable offset moved.
    pub fn publish_durable(&self) {
        let durable = self.log.durable_offset();
        let committed = durable.min(self.commit_limit.load(Ordering::Acquire));
        let stable = self.txn_index().stable_offset(committed);
        self.signal.send_if_modified(|s| {
            if s.durable == durable && s.stable == stable {
                return false;
            }
            s.durable = durable;
            s.stable = stable;
            true
        });
    }

    fn txn_index(&self) -> std::sync::MutexGuard<'_, TxnIndex> {
        self.txn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the transaction index, then wakes waiters if the stable
    /// offset moved.
    pub fn with_txn_index<R>(&self, f: impl FnOnce(&mut TxnIndex) -> R) -> R {
        let out = f(&mut self.txn_index());
        self.publish_durable();
        out
    }

    /// Runs `f` on the stream index. Mutations must hold
    /// [`writer`](Self::writer) (the version check and the append are one
    /// step).
    pub fn with_streams<R>(&self, f: impl FnOnce(&mut StreamIndex) -> R) -> R {
        f(&mut self.streams.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The last stable offset (see [`PartitionSignal::stable`]).
    pub fn stable_offset(&self) -> u64 {
        let end = self.committed_end();
        self.txn_index().stable_offset(end)
    }

    /// Marks this generation as ended and wakes every waiter.
    pub fn close(&self) {
        self.signal.send_modify(|s| s.closed = true);
    }

    /// Appends already-encoded records (`(timestamp, bytes)`) off the async
    /// threads. The caller holds [`writer`](Self::writer).
    pub async fn append(&self, entries: Vec<(i64, Bytes)>) -> Result<AppendInfo, StorageError> {
        let log = Arc::clone(&self.log);
        blocking(move || log.append(&entries)).await
    }

    /// Appends a leader's stored entries (`(timestamp, record bytes)` as
    /// [`StoredRecord`] carries them) at the same offsets, then waits until
    /// they are durable and wakes readers. Under [`writer`](Self::writer):
    /// refuses with [`ReplicaAppendError::OffsetMismatch`] when the log does
    /// not end at `expected_base`. Producer state, the transaction index and
    /// the stream index are left alone (a follower rebuilds them from the
    /// log when promoted, see `TopicRegistry::reset_partition`).
    pub async fn append_replica(
        &self,
        entries: Vec<(i64, Bytes)>,
        expected_base: u64,
    ) -> Result<AppendInfo, ReplicaAppendError> {
        let info = {
            let _writer = self.writer.lock().await;
            if self.is_closed() {
                return Err(ReplicaAppendError::Closed);
            }
            let log_end = self.log.log_end_offset();
            if log_end != expected_base {
                return Err(ReplicaAppendError::OffsetMismatch {
                    expected: expected_base,
                    log_end,
                });
            }
            self.append(entries).await?
        };
        // Outside the writer lock, as publishes sync: concurrent syncs share
        // one fdatasync.
        self.sync_to(info.last_offset).await?;
        Ok(info)
    }

    /// Waits until `offset` is durable, then wakes readers.
    pub async fn sync_to(&self, offset: u64) -> Result<(), StorageError> {
        let log = Arc::clone(&self.log);
        let result = blocking(move || log.sync_to(offset)).await;
        self.publish_durable();
        result
    }

    /// Makes any unsynced appends durable (acks=0 data), then wakes readers.
    pub async fn flush(&self) -> Result<(), StorageError> {
        if self.log.durable_offset() >= self.log.log_end_offset() {
            // Nothing unsynced: skip the trip to the blocking pool.
            return Ok(());
        }
        let log = Arc::clone(&self.log);
        let result = blocking(move || log.flush_if_dirty().map(|_| ())).await;
        self.publish_durable();
        result
    }

    /// Schedules a background flush (acks=0 appends) unless one is already
    /// pending, so a flood of unacknowledged publishes costs one flush task
    /// at a time rather than one per message.
    pub fn schedule_flush(self: &Arc<Self>) {
        if self.flush_scheduled.swap(true, Ordering::AcqRel) {
            return;
        }
        let partition = Arc::clone(self);
        tokio::spawn(async move {
            // Cleared before flushing: appends made from now on schedule again.
            partition.flush_scheduled.store(false, Ordering::Release);
            if let Err(e) = partition.flush().await {
                if !partition.is_closed() {
                    tracing::warn!(partition = partition.id, error = %e, "background flush failed");
                }
            }
        });
    }

    /// Reads durable records from `from` (see [`PartitionLog::read`];
    /// compaction placeholders left out, see [`read_records`]).
    pub async fn read(
        &self,
        from: u64,
        max_records: usize,
        max_bytes: usize,
    ) -> Result<Vec<StoredRecord>, StorageError> {
        let log = Arc::clone(&self.log);
        blocking(move || read_records(&log, from, max_records, max_bytes)).await
    }

    /// Reads what a read_committed reader may see from `from`: records
    /// below the stable offset, without control markers and records of
    /// aborted transactions. Scans past ranges holding only left-out
    /// records. Returns the records and the offset the scan reached (where
    /// the next read continues).
    pub async fn read_committed(
        &self,
        from: u64,
        max_records: usize,
        max_bytes: usize,
    ) -> Result<(Vec<StoredRecord>, u64), StorageError> {
        let mut next = from;
        loop {
            let (stable, filter) = {
                let index = self.txn_index();
                let stable = index.stable_offset(self.committed_end());
                (stable, index.filter(next, stable))
            };
            // Up to the stable offset only (0 still checks the range).
            let room = stable.saturating_sub(next).min(max_records as u64) as usize;
            let chunk = self.read(next, room, max_bytes).await?;
            // Below the stable offset a compacted log has gaps, so a read of
            // `room` records can reach past it: leave those for later.
            let past_stable = chunk.last().is_some_and(|r| r.offset >= stable);
            let chunk: Vec<StoredRecord> =
                chunk.into_iter().filter(|r| r.offset < stable).collect();
            let Some(last) = chunk.last().map(|r| r.offset) else {
                return Ok((Vec::new(), if past_stable { stable } else { next }));
            };
            next = last + 1;
            let visible: Vec<StoredRecord> =
                chunk.into_iter().filter(|r| filter.visible(r)).collect();
            if !visible.is_empty() || next >= stable {
                return Ok((visible, next));
            }
        }
    }

    /// Rebuilds the producer sequence state, the transaction index and,
    /// when `event_sourcing`, the stream index from every retained record,
    /// reading the log once (blocking; used during recovery).
    pub fn rebuild_state(
        log: &PartitionLog,
        event_sourcing: bool,
    ) -> Result<RebuiltState, StorageError> {
        let mut table = ProducerTable::new();
        let mut txn = TxnIndex::new();
        let mut streams = StreamIndex::new();
        let mut next = log.earliest_offset();
        loop {
            let chunk = read_records(log, next, REBUILD_CHUNK, 16 << 20)?;
            let Some(last) = chunk.last() else { break };
            next = last.offset + 1;
            for stored in &chunk {
                let record = Record::decode(stored.data.clone()).map_err(|e| {
                    StorageError::corruption(
                        log.dir(),
                        stored.offset,
                        format!("stored record does not decode: {e}"),
                    )
                })?;
                if !record.producer_id.is_empty() && record.seq_num > 0 {
                    table.observe(
                        &record.producer_id,
                        record.epoch,
                        record.seq_num,
                        stored.offset,
                    );
                }
                match classify(&record) {
                    TxnRecordKind::Plain => {
                        if event_sourcing && record.aggregate_version > 0 {
                            index_event(&mut streams, log, &record, stored.offset);
                        }
                    }
                    TxnRecordKind::Data => {
                        txn.record(
                            &record.producer_id,
                            record.epoch,
                            &record.transactional_id,
                            record.seq_num,
                            stored.offset,
                        );
                        if event_sourcing && record.aggregate_version > 0 {
                            stage_event(&mut streams, &record, stored.offset);
                        }
                    }
                    TxnRecordKind::Marker(kind) => {
                        txn.replay_marker(&record.producer_id, record.epoch, kind, stored.offset);
                        match kind {
                            MarkerKind::Commit => {
                                for e in streams.commit_pending(&record.producer_id, record.epoch) {
                                    warn_not_indexed(log, &streams, &e.key, e.version, e.offset);
                                }
                            }
                            MarkerKind::Abort => {
                                streams.abort_pending(&record.producer_id, record.epoch)
                            }
                        }
                    }
                }
            }
        }
        // Producers whose records retention or compaction removed. An entry
        // at or past the log end names a record the log no longer has (cut
        // by `truncate_to`, or an unsynced tail lost in a crash): a retry of
        // it must be appended again, so it is left out.
        let log_end = log.log_end_offset();
        for (id, e) in super::producer_checkpoint::load(log.dir())? {
            if e.last_offset < log_end {
                table.observe(&id, e.epoch, e.last_seq, e.last_offset);
            }
        }
        Ok(RebuiltState {
            producers: table,
            txn,
            streams,
        })
    }
}

/// [`PartitionLog::read`] without the data-less placeholders compaction
/// leaves at the end of a segment (no topic record is empty); reads on past
/// a chunk of only placeholders.
pub fn read_records(
    log: &PartitionLog,
    from: u64,
    max_records: usize,
    max_bytes: usize,
) -> Result<Vec<StoredRecord>, StorageError> {
    let mut next = from;
    loop {
        let mut chunk = log.read(next, max_records, max_bytes)?;
        let Some(last) = chunk.last().map(|r| r.offset) else {
            return Ok(chunk);
        };
        chunk.retain(|r| !r.data.is_empty());
        if !chunk.is_empty() {
            return Ok(chunk);
        }
        next = last + 1;
    }
}

/// Replays one stored event record into `streams` (rebuild).
fn index_event(streams: &mut StreamIndex, log: &PartitionLog, record: &Record, offset: u64) {
    let Ok(key) = std::str::from_utf8(&record.key) else {
        return;
    };
    if key.is_empty() {
        return;
    }
    if !streams.replay_event(key, record.aggregate_version, offset, &record.event_id) {
        warn_not_indexed(log, streams, key, record.aggregate_version, offset);
    }
}

fn warn_not_indexed(
    log: &PartitionLog,
    streams: &StreamIndex,
    key: &str,
    version: u64,
    offset: u64,
) {
    tracing::warn!(
        dir = %log.dir().display(),
        offset,
        key,
        version,
        head = streams.head(key),
        "event record does not continue its stream; not indexed"
    );
}

/// Stages a transactional event record found at rebuild: indexed when its
/// commit marker is replayed, dropped at an abort marker.
fn stage_event(streams: &mut StreamIndex, record: &Record, offset: u64) {
    let Ok(key) = std::str::from_utf8(&record.key) else {
        return;
    };
    if key.is_empty() {
        return;
    }
    let owner = Reservation {
        transactional_id: record.transactional_id.clone(),
        producer_id: record.producer_id.clone(),
        epoch: record.epoch,
    };
    streams.stage(
        &owner,
        PendingEvent {
            key: key.to_owned(),
            version: record.aggregate_version,
            offset,
            event_id: record.event_id.clone(),
        },
    );
}

/// Writes the durable producer checkpoint of `producers` (see
/// [`super::producer_checkpoint`]) off the async threads.
pub async fn checkpoint_producers(producers: &ProducerTable) -> Result<(), StorageError> {
    let Some(dir) = producers.checkpoint_dir().map(Path::to_path_buf) else {
        return Ok(());
    };
    let snapshot = producers.clone();
    blocking(move || super::producer_checkpoint::write(&dir, &snapshot)).await
}

/// Runs blocking storage work on the blocking pool.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(StorageError::InvalidArgument(format!(
            "storage task failed: {e}"
        )))
    })
}

/// Maps a storage failure to the typed error a client sees.
pub fn storage_error(topic: &str, partition: u32, err: &StorageError) -> ErrorPayload {
    match err {
        StorageError::OffsetOutOfRange {
            requested,
            earliest,
            latest,
        } => ErrorPayload::new("OFFSET_OUT_OF_RANGE")
            .with_field("requested", requested)
            .with_field("earliest", earliest)
            .with_field("latest", latest)
            .with_field("topic", topic)
            .with_field("partition", partition),
        StorageError::Deleted { .. } => {
            ErrorPayload::new("topic_not_found").with_field("topic", topic)
        }
        // docs/standalone-rules.md "Storage faults": availability, retryable.
        StorageError::Io { .. } | StorageError::Failed { .. } => {
            let reason = match err {
                e if e.is_disk_full() => "disk_full",
                StorageError::Failed { .. } => "partition_failed",
                _ => "io_error",
            };
            let mut e = ErrorPayload::new("storage_unavailable")
                .with_field("topic", topic)
                .with_field("partition", partition)
                .with_field("reason", reason)
                .with_message(err.to_string());
            e.class = ErrorClass::Availability;
            e.retryable = true;
            e
        }
        other => ErrorPayload::new("broker_error")
            .with_field("topic", topic)
            .with_field("partition", partition)
            .with_field("reason", other.to_string()),
    }
}
