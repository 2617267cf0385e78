//! The state of one transactional id and the rules of its state machine.
//!
//! A [`TxnSnapshot`] is what the coordinator keeps per transactional id and
//! what one journal record stores. The functions here decide, without any
//! I/O, what a command must do in the current state; the coordinator then
//! performs the writes.
//!
//! ```text
//!   INIT ─► empty ─BEGIN─► open ─END commit─► prepare_commit ─► committed
//!                            │                      │ (revalidation fails)
//!                            └─END abort / timeout / re-INIT / recovery─►
//!                                         prepare_abort ─► aborted
//! ```
//!
//! One epoch runs at most one transaction: after `committed` or `aborted`
//! only INIT_PRODUCER_ID (a new epoch) starts another.

use std::collections::{BTreeMap, BTreeSet};

use cursus_wire::ErrorPayload;
use serde::{Deserialize, Serialize};

/// Where a transaction is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxnState {
    /// Initialised epoch without a transaction yet.
    Empty,
    /// BEGIN_TXN accepted; records and offsets may be added.
    Open,
    /// The commit is durably decided to proceed (markers being written).
    PrepareCommit,
    /// The abort is durably decided (abort markers being written).
    PrepareAbort,
    /// Final: output and offsets visible.
    Committed,
    /// Final: nothing of the transaction is visible.
    Aborted,
}

impl TxnState {
    /// The name replies and the journal use.
    pub fn as_str(self) -> &'static str {
        match self {
            TxnState::Empty => "empty",
            TxnState::Open => "open",
            TxnState::PrepareCommit => "prepare_commit",
            TxnState::PrepareAbort => "prepare_abort",
            TxnState::Committed => "committed",
            TxnState::Aborted => "aborted",
        }
    }

    /// Open or in the middle of finishing: its records are not resolved.
    pub fn is_unresolved(self) -> bool {
        matches!(
            self,
            TxnState::Open | TxnState::PrepareCommit | TxnState::PrepareAbort
        )
    }

    /// Committed or aborted.
    pub fn is_complete(self) -> bool {
        matches!(self, TxnState::Committed | TxnState::Aborted)
    }
}

impl std::fmt::Display for TxnState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A topic-partition a transaction appended to (or registered to append to).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Participant {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
}

/// Consumer offsets staged by SEND_OFFSETS_TO_TXN, all of one group session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StagedOffsets {
    /// Consumer group.
    pub group: String,
    /// Member id of the session.
    pub member: String,
    /// Generation of the session.
    pub generation: u64,
    /// Next offset to read, by topic and partition.
    pub entries: BTreeMap<String, BTreeMap<u32, u64>>,
}

impl StagedOffsets {
    /// Number of distinct topic-partitions staged.
    pub fn count(&self) -> usize {
        self.entries.values().map(BTreeMap::len).sum()
    }

    /// Every entry as `(topic, partition, offset)`.
    pub fn flat(&self) -> Vec<(String, u32, u64)> {
        self.entries
            .iter()
            .flat_map(|(t, ps)| ps.iter().map(move |(p, o)| (t.clone(), *p, *o)))
            .collect()
    }
}

/// One TXN_APPEND_STREAM accepted in the current epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamAppend {
    /// Its sequence number (per topic, from 1).
    pub seq: u64,
    /// Digest of the request's content (key, version, event fields,
    /// payload): an identical resend matches it.
    pub fingerprint: String,
    /// The partition it went to.
    pub partition: u32,
    /// The version the event gets at the commit.
    pub version: u64,
    /// Offset of its record.
    pub offset: u64,
}

/// The durable state of one transactional id (one journal record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnSnapshot {
    /// The transactional id.
    pub transactional_id: String,
    /// Broker-managed producer id (`txn-<n>`), stable across epochs.
    pub producer_id: String,
    /// Current producer epoch.
    pub epoch: i64,
    /// State of the epoch's transaction.
    pub state: TxnState,
    /// Records appended in the transaction.
    #[serde(default)]
    pub messages: u64,
    /// Topic-partitions the transaction touched.
    #[serde(default)]
    pub participants: BTreeSet<Participant>,
    /// Staged consumer offsets.
    #[serde(default)]
    pub offsets: Option<StagedOffsets>,
    /// Wall-clock deadline of an open transaction (ms since the epoch).
    #[serde(default)]
    pub deadline_ms: u64,
    /// Wall-clock time of the last transition (ms since the epoch).
    #[serde(default)]
    pub updated_ms: u64,
    /// Expired: only the producer id and epoch are kept.
    #[serde(default)]
    pub expired: bool,
    /// TXN_APPEND_STREAM appends of this epoch by topic. Kept in memory
    /// only: a restart aborts an open transaction, and the commit and
    /// recovery work from the partitions' pending events, rebuilt from the
    /// log.
    #[serde(skip)]
    pub stream_appends: BTreeMap<String, Vec<StreamAppend>>,
}

/// The outcome END_TXN asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndResult {
    /// `result=commit`.
    Commit,
    /// `result=abort`.
    Abort,
}

impl EndResult {
    /// Parses `result=` (case-insensitive).
    pub fn parse(value: &str) -> Result<EndResult, ErrorPayload> {
        match value.trim().to_ascii_lowercase().as_str() {
            "commit" => Ok(EndResult::Commit),
            "abort" => Ok(EndResult::Abort),
            _ => Err(ErrorPayload::new("invalid_transaction_result").with_field("value", value)),
        }
    }
}

/// What INIT_PRODUCER_ID must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitPlan {
    /// Bump the epoch (the transaction, if any, is complete).
    Bump,
    /// Abort the unresolved transaction first, then bump.
    AbortThenBump,
}

/// What BEGIN_TXN must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeginPlan {
    /// Open the transaction.
    Open,
    /// Already open in this epoch: answer OK again (a retried BEGIN_TXN).
    AlreadyOpen,
}

/// What END_TXN must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndPlan {
    /// Already finished with the requested result: answer it again.
    Repeat,
    /// Run the commit from the start (validate, prepare, revalidate, ...).
    Commit,
    /// Finish a commit already durably prepared (markers where missing,
    /// decision, offsets); no revalidation.
    ResumeCommit,
    /// Abort (or finish a prepared abort).
    Abort,
    /// Finish the prepared abort, then answer `transaction_aborted`.
    AbortThenRefuse,
}

/// `transaction_not_found transactional_id=<id>`.
pub fn not_found(id: &str) -> ErrorPayload {
    ErrorPayload::new("transaction_not_found").with_field("transactional_id", id)
}

/// `transaction_not_open transactional_id=<id> state=<state>`.
pub fn not_open(id: &str, state: TxnState) -> ErrorPayload {
    ErrorPayload::new("transaction_not_open")
        .with_field("transactional_id", id)
        .with_field("state", state)
}

/// `transaction_aborted transactional_id=<id>`.
pub fn aborted(id: &str) -> ErrorPayload {
    ErrorPayload::new("transaction_aborted").with_field("transactional_id", id)
}

impl TxnSnapshot {
    /// The first epoch of a new transactional id.
    pub fn new(transactional_id: &str, producer_id: String, now_ms: u64) -> TxnSnapshot {
        TxnSnapshot {
            transactional_id: transactional_id.to_owned(),
            producer_id,
            epoch: 0,
            state: TxnState::Empty,
            messages: 0,
            participants: BTreeSet::new(),
            offsets: None,
            deadline_ms: 0,
            updated_ms: now_ms,
            expired: false,
            stream_appends: BTreeMap::new(),
        }
    }

    /// Number of staged topic-partitions.
    pub fn offset_count(&self) -> usize {
        self.offsets.as_ref().map_or(0, StagedOffsets::count)
    }

    /// Fails unless `(producer_id, epoch)` is the current session:
    /// `transaction_not_found` for an expired id, `producer_fenced` for an
    /// older epoch (or any other mismatch).
    pub fn check_session(&self, producer_id: &str, epoch: i64) -> Result<(), ErrorPayload> {
        if self.expired {
            return Err(not_found(&self.transactional_id));
        }
        if producer_id != self.producer_id || epoch != self.epoch {
            return Err(ErrorPayload::new("producer_fenced")
                .with_field("transactional_id", &self.transactional_id)
                .with_field("producer", producer_id)
                .with_field("current", self.epoch)
                .with_field("got", epoch));
        }
        Ok(())
    }

    /// INIT_PRODUCER_ID: refused while a commit is prepared.
    pub fn plan_init(&self) -> Result<InitPlan, ErrorPayload> {
        match self.state {
            TxnState::PrepareCommit if !self.expired => {
                Err(ErrorPayload::new("transaction_not_abortable")
                    .with_field("transactional_id", &self.transactional_id)
                    .with_field("state", self.state))
            }
            TxnState::Open | TxnState::PrepareAbort if !self.expired => Ok(InitPlan::AbortThenBump),
            _ => Ok(InitPlan::Bump),
        }
    }

    /// The next epoch's snapshot (after any unresolved transaction was
    /// aborted): same producer id, epoch + 1, nothing staged.
    pub fn next_epoch(&self, now_ms: u64) -> TxnSnapshot {
        TxnSnapshot {
            epoch: self.epoch + 1,
            state: TxnState::Empty,
            messages: 0,
            participants: BTreeSet::new(),
            offsets: None,
            deadline_ms: 0,
            updated_ms: now_ms,
            expired: false,
            stream_appends: BTreeMap::new(),
            ..self.clone()
        }
    }

    /// BEGIN_TXN in the current (already checked) session.
    pub fn plan_begin(&self) -> Result<BeginPlan, ErrorPayload> {
        match self.state {
            TxnState::Empty => Ok(BeginPlan::Open),
            TxnState::Open => Ok(BeginPlan::AlreadyOpen),
            _ => Err(ErrorPayload::new("producer_reinitialization_required")
                .with_field("transactional_id", &self.transactional_id)
                .with_field("epoch", self.epoch)),
        }
    }

    /// TXN_PUBLISH and SEND_OFFSETS_TO_TXN need an open transaction.
    pub fn require_open(&self) -> Result<(), ErrorPayload> {
        if self.state == TxnState::Open {
            Ok(())
        } else {
            Err(not_open(&self.transactional_id, self.state))
        }
    }

    /// END_TXN in the current (already checked) session.
    pub fn plan_end(&self, result: EndResult) -> Result<EndPlan, ErrorPayload> {
        let id = &self.transactional_id;
        match (result, self.state) {
            (_, TxnState::Empty) => Err(not_open(id, self.state)),
            (EndResult::Commit, TxnState::Open) => Ok(EndPlan::Commit),
            (EndResult::Commit, TxnState::PrepareCommit) => Ok(EndPlan::ResumeCommit),
            (EndResult::Commit, TxnState::Committed) => Ok(EndPlan::Repeat),
            (EndResult::Commit, TxnState::PrepareAbort) => Ok(EndPlan::AbortThenRefuse),
            (EndResult::Commit, TxnState::Aborted) => Err(aborted(id)),
            (EndResult::Abort, TxnState::Open | TxnState::PrepareAbort) => Ok(EndPlan::Abort),
            (EndResult::Abort, TxnState::Aborted) => Ok(EndPlan::Repeat),
            (EndResult::Abort, TxnState::PrepareCommit) => {
                Err(ErrorPayload::new("transaction_not_abortable")
                    .with_field("transactional_id", id)
                    .with_field("state", self.state))
            }
            (EndResult::Abort, TxnState::Committed) => {
                Err(ErrorPayload::new("transaction_already_committed")
                    .with_field("transactional_id", id))
            }
        }
    }

    /// Stages `entries` of `topic` for the session `(group, member,
    /// generation)`: one session per transaction, and a repeated
    /// topic-partition may only keep or advance its offset. Returns the
    /// new staged set (self is unchanged).
    pub fn stage_offsets(
        &self,
        group: &str,
        member: &str,
        generation: u64,
        topic: &str,
        entries: &[(u32, u64)],
    ) -> Result<StagedOffsets, ErrorPayload> {
        let mut staged = match &self.offsets {
            Some(s) => {
                if s.group != group || s.member != member || s.generation != generation {
                    return Err(ErrorPayload::new("invalid_txn_offsets")
                        .with_field("reason", "session_mismatch")
                        .with_field("transactional_id", &self.transactional_id)
                        .with_field("group", group)
                        .with_field("staged_group", &s.group)
                        .with_field("staged_member", &s.member)
                        .with_field("staged_generation", s.generation));
                }
                s.clone()
            }
            None => StagedOffsets {
                group: group.to_owned(),
                member: member.to_owned(),
                generation,
                entries: BTreeMap::new(),
            },
        };
        let per_topic = staged.entries.entry(topic.to_owned()).or_default();
        for &(partition, offset) in entries {
            if let Some(&current) = per_topic.get(&partition) {
                if offset < current {
                    return Err(ErrorPayload::new("offset_regression")
                        .with_field(
                            "reason",
                            format!("offset {offset} is below the staged offset {current}"),
                        )
                        .with_field("group", group)
                        .with_field("topic", topic)
                        .with_field("partition", partition)
                        .with_field("current", current)
                        .with_field("requested", offset));
                }
            }
            per_topic.insert(partition, offset);
        }
        Ok(staged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(state: TxnState) -> TxnSnapshot {
        TxnSnapshot {
            state,
            ..TxnSnapshot::new("tx", "txn-1".into(), 0)
        }
    }

    #[test]
    fn sessions_are_fenced_by_producer_and_epoch() {
        let s = snapshot(TxnState::Open).next_epoch(0);
        assert_eq!(s.epoch, 1);
        s.check_session("txn-1", 1).unwrap();
        let e = s.check_session("txn-1", 0).unwrap_err();
        assert_eq!(e.code, "producer_fenced");
        assert_eq!(e.fields["current"], "1");
        assert_eq!(e.fields["got"], "0");
        assert_eq!(
            s.check_session("txn-2", 1).unwrap_err().code,
            "producer_fenced"
        );
        let expired = TxnSnapshot {
            expired: true,
            ..s.clone()
        };
        assert_eq!(
            expired.check_session("txn-1", 1).unwrap_err().code,
            "transaction_not_found"
        );
    }

    #[test]
    fn one_transaction_per_epoch() {
        assert_eq!(
            snapshot(TxnState::Empty).plan_begin().unwrap(),
            BeginPlan::Open
        );
        assert_eq!(
            snapshot(TxnState::Open).plan_begin().unwrap(),
            BeginPlan::AlreadyOpen
        );
        for done in [TxnState::Committed, TxnState::Aborted] {
            let e = snapshot(done).plan_begin().unwrap_err();
            assert_eq!(e.code, "producer_reinitialization_required");
            assert_eq!(e.fields["epoch"], "0");
        }
    }

    #[test]
    fn end_transitions() {
        use EndResult::*;
        let plan = |state, r| snapshot(state).plan_end(r);
        assert_eq!(plan(TxnState::Open, Commit).unwrap(), EndPlan::Commit);
        assert_eq!(plan(TxnState::Open, Abort).unwrap(), EndPlan::Abort);
        assert_eq!(
            plan(TxnState::PrepareCommit, Commit).unwrap(),
            EndPlan::ResumeCommit
        );
        assert_eq!(plan(TxnState::Committed, Commit).unwrap(), EndPlan::Repeat);
        assert_eq!(plan(TxnState::Aborted, Abort).unwrap(), EndPlan::Repeat);
        assert_eq!(plan(TxnState::PrepareAbort, Abort).unwrap(), EndPlan::Abort);
        assert_eq!(
            plan(TxnState::PrepareAbort, Commit).unwrap(),
            EndPlan::AbortThenRefuse
        );
        let code = |state, r| plan(state, r).unwrap_err().code;
        assert_eq!(code(TxnState::Aborted, Commit), "transaction_aborted");
        assert_eq!(
            code(TxnState::Committed, Abort),
            "transaction_already_committed"
        );
        assert_eq!(
            code(TxnState::PrepareCommit, Abort),
            "transaction_not_abortable"
        );
        assert_eq!(code(TxnState::Empty, Commit), "transaction_not_open");
        assert_eq!(code(TxnState::Empty, Abort), "transaction_not_open");
    }

    #[test]
    fn init_aborts_open_work_and_refuses_a_prepared_commit() {
        assert_eq!(
            snapshot(TxnState::Open).plan_init().unwrap(),
            InitPlan::AbortThenBump
        );
        assert_eq!(
            snapshot(TxnState::PrepareAbort).plan_init().unwrap(),
            InitPlan::AbortThenBump
        );
        assert_eq!(
            snapshot(TxnState::Committed).plan_init().unwrap(),
            InitPlan::Bump
        );
        assert_eq!(
            snapshot(TxnState::Empty).plan_init().unwrap(),
            InitPlan::Bump
        );
        let e = snapshot(TxnState::PrepareCommit).plan_init().unwrap_err();
        assert_eq!(e.code, "transaction_not_abortable");
        assert_eq!(e.fields["state"], "prepare_commit");
        let next = snapshot(TxnState::Committed).next_epoch(5);
        assert_eq!((next.epoch, next.state), (1, TxnState::Empty));
        assert_eq!(next.producer_id, "txn-1");
    }

    #[test]
    fn staged_offsets_keep_one_session_and_never_move_back() {
        let mut s = snapshot(TxnState::Open);
        s.offsets = Some(
            s.stage_offsets("g", "m", 3, "t", &[(0, 5), (1, 2)])
                .unwrap(),
        );
        s.offsets = Some(s.stage_offsets("g", "m", 3, "u", &[(0, 1)]).unwrap());
        assert_eq!(s.offset_count(), 3);
        s.offsets = Some(s.stage_offsets("g", "m", 3, "t", &[(0, 5)]).unwrap());
        assert_eq!(
            s.stage_offsets("g", "m", 3, "t", &[(0, 4)])
                .unwrap_err()
                .code,
            "offset_regression"
        );
        assert_eq!(
            s.stage_offsets("g", "m", 4, "t", &[(0, 9)])
                .unwrap_err()
                .code,
            "invalid_txn_offsets"
        );
        assert_eq!(
            s.offsets.unwrap().flat(),
            vec![
                ("t".to_owned(), 0, 5),
                ("t".to_owned(), 1, 2),
                ("u".to_owned(), 0, 1)
            ]
        );
    }

    #[test]
    fn snapshots_round_trip_through_json() {
        let mut s = snapshot(TxnState::PrepareCommit);
        s.participants.insert(Participant {
            topic: "t".into(),
            partition: 1,
        });
        s.offsets = Some(s.stage_offsets("g", "m", 1, "t", &[(0, 7)]).unwrap());
        let json = serde_json::to_vec(&s).unwrap();
        assert_eq!(serde_json::from_slice::<TxnSnapshot>(&json).unwrap(), s);
        let text = String::from_utf8(json).unwrap();
        assert!(text.contains("\"state\":\"prepare_commit\""), "{text}");
    }
}
