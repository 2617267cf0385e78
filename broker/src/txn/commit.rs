//! END_TXN: the commit protocol and the abort.
//!
//! A commit follows the seed's seven steps: validate the state and the
//! staged offsets against the group; (the offsets are part of the
//! snapshot); persist `prepare_commit`; revalidate the group fence (on
//! failure abort); append commit markers to every participant; persist
//! `committed` (the decision); materialize the offsets in
//! `__consumer_offsets` and only then release the partitions' stable
//! offsets, so output and offsets show together. Every step on a
//! participant partition or group runs where it lives
//! ([`Participants`](super::participants::Participants)), and the markers
//! carry the placement's coordinator epoch.

use cursus_wire::{ErrorClass, ErrorPayload};
use tracing::{error, info, warn};

use super::coordinator::{now_ms, TxnCoordinator};
use super::markers::MarkerKind;
use super::participants::{GroupOffsets, MarkerWrite};
use super::state::{aborted, not_found, EndPlan, EndResult, TxnSnapshot, TxnState};
use crate::broker::Broker;

/// The crash points `--crash-point` accepts, in commit order.
pub const CRASH_POINTS: [&str; 4] = [
    "txn_before_prepare",
    "txn_after_prepare",
    "txn_after_markers",
    "txn_after_decision",
];

impl TxnCoordinator {
    /// Aborts the process at `point` when it is the configured crash point.
    fn crash_point(&self, point: &str, id: &str) {
        if self.settings.crash_point.as_deref() == Some(point) {
            error!(
                crash_point = point,
                transactional_id = id,
                "crash point reached: aborting the process"
            );
            eprintln!(
                "cursus-broker: crash point {point} reached (transactional_id={id}): aborting"
            );
            std::process::abort();
        }
    }

    /// END_TXN. Returns the final snapshot.
    pub async fn end(
        &self,
        broker: &Broker,
        id: &str,
        producer_id: &str,
        epoch: i64,
        result: EndResult,
    ) -> Result<TxnSnapshot, ErrorPayload> {
        let mut guard = self.session(broker, id, producer_id, epoch).await?;
        let current = guard.as_mut().ok_or_else(|| not_found(id))?;
        match current.plan_end(result)? {
            EndPlan::Repeat => {
                if current.state == TxnState::Committed {
                    // Idempotent: finishes step 7 if an earlier try failed there.
                    self.finish_committed(broker, current).await?;
                }
            }
            EndPlan::Commit => self.commit(broker, current, false).await?,
            EndPlan::ResumeCommit => self.commit(broker, current, true).await?,
            EndPlan::Abort => self.abort(broker, current, "requested").await?,
            EndPlan::AbortThenRefuse => {
                self.abort(broker, current, "prepared").await?;
                return Err(aborted(id));
            }
        }
        Ok(current.clone())
    }

    /// Checks the staged offsets against their group (the fence).
    async fn validate_staged(
        &self,
        broker: &Broker,
        snapshot: &TxnSnapshot,
    ) -> Result<(), ErrorPayload> {
        let Some(staged) = &snapshot.offsets else {
            return Ok(());
        };
        for (topic, partitions) in &staged.entries {
            let entries: Vec<(u32, u64)> = partitions.iter().map(|(p, o)| (*p, *o)).collect();
            let offsets = GroupOffsets {
                group: &staged.group,
                topic,
                member: &staged.member,
                generation: staged.generation,
                entries: &entries,
            };
            broker
                .participants()
                .validate_offsets(broker, offsets)
                .await?;
        }
        Ok(())
    }

    /// Checks the group fence (steps 1 and 4); a failure aborts the
    /// transaction and is returned. At step 1 (still open) a failure to
    /// reach the group's coordinator (an availability error) is only
    /// returned: nothing was decided, so the client's retry validates
    /// again. After `prepare_commit` (step 4) every failure aborts, the
    /// abort decision journaled first ([`Self::abort`]).
    async fn validate_or_abort(
        &self,
        broker: &Broker,
        current: &mut TxnSnapshot,
    ) -> Result<(), ErrorPayload> {
        let Err(e) = self.validate_staged(broker, current).await else {
            return Ok(());
        };
        if current.state == TxnState::Open && e.class == ErrorClass::Availability {
            info!(transactional_id = %current.transactional_id, error = %e, "commit cannot check the group fence now; the transaction stays open");
            return Err(e);
        }
        info!(transactional_id = %current.transactional_id, error = %e, "commit fails the group fence: aborting");
        self.abort(broker, current, "group_fence").await?;
        Err(e)
    }

    /// Re-checks that the transaction's pending stream events still
    /// continue their streams (their keys are reserved, so only an
    /// unexpected change fails this); a failure aborts the transaction and
    /// is returned as `stream_version_conflict`.
    async fn check_streams_or_abort(
        &self,
        broker: &Broker,
        current: &mut TxnSnapshot,
    ) -> Result<(), ErrorPayload> {
        for p in current.participants.clone() {
            let checked = broker
                .participants()
                .check_pending(
                    broker,
                    &p.topic,
                    p.partition,
                    &current.producer_id,
                    current.epoch,
                )
                .await?;
            if let Some(conflict) = checked {
                let e = ErrorPayload::new("stream_version_conflict")
                    .with_field("transactional_id", &current.transactional_id)
                    .with_field("topic", &p.topic)
                    .with_field("key", &conflict.key)
                    .with_field("version", conflict.version)
                    .with_field("current", conflict.current);
                info!(transactional_id = %current.transactional_id, error = %e, "a stream moved under the transaction: aborting");
                self.abort(broker, current, "stream_version_conflict")
                    .await?;
                return Err(e);
            }
        }
        Ok(())
    }

    /// The commit (steps 1-7 of the module docs); `resume` finishes a
    /// durably prepared commit (no revalidation: the decision to commit is
    /// already taken).
    pub(super) async fn commit(
        &self,
        broker: &Broker,
        current: &mut TxnSnapshot,
        resume: bool,
    ) -> Result<(), ErrorPayload> {
        let id = current.transactional_id.clone();
        if !resume {
            // 1. validate (the state was checked by plan_end), including
            // that every transactional stream event still continues its
            // stream.
            self.validate_or_abort(broker, current).await?;
            self.check_streams_or_abort(broker, current).await?;
            self.crash_point("txn_before_prepare", &id);
            // 2-3. the staged offsets are in the snapshot; persist prepare_commit.
            let next = TxnSnapshot {
                state: TxnState::PrepareCommit,
                updated_ms: now_ms(),
                ..current.clone()
            };
            self.transition(current, next).await?;
            self.crash_point("txn_after_prepare", &id);
            // 4. revalidate the group fence.
            self.validate_or_abort(broker, current).await?;
        }
        // 5. commit markers where missing.
        self.write_markers(broker, current, MarkerKind::Commit)
            .await?;
        self.crash_point("txn_after_markers", &id);
        // 6. the decision.
        let next = TxnSnapshot {
            state: TxnState::Committed,
            updated_ms: now_ms(),
            ..current.clone()
        };
        self.transition(current, next).await?;
        self.crash_point("txn_after_decision", &id);
        // 7. offsets, then visibility.
        self.finish_committed(broker, current).await?;
        info!(transactional_id = %id, epoch = current.epoch, messages = current.messages, "transaction committed");
        Ok(())
    }

    /// Step 7 of a commit (idempotent): materializes the staged offsets,
    /// then releases the participants' stable offsets.
    pub(super) async fn finish_committed(
        &self,
        broker: &Broker,
        current: &TxnSnapshot,
    ) -> Result<(), ErrorPayload> {
        if let Some(staged) = &current.offsets {
            let entries = staged.flat();
            broker
                .participants()
                .materialize_offsets(broker, &staged.group, &entries)
                .await?;
        }
        self.release_all(broker, current).await;
        Ok(())
    }

    async fn release_all(&self, broker: &Broker, current: &TxnSnapshot) {
        for p in &current.participants {
            broker
                .participants()
                .release(
                    broker,
                    &p.topic,
                    p.partition,
                    &current.producer_id,
                    current.epoch,
                )
                .await;
        }
    }

    async fn write_markers(
        &self,
        broker: &Broker,
        current: &TxnSnapshot,
        kind: MarkerKind,
    ) -> Result<(), ErrorPayload> {
        // In a cluster, the shard epoch this broker owns the id at: markers
        // of a former owner are refused by the partition leaders.
        let coordinator_epoch = broker.placement().marker_epoch(&current.transactional_id)?;
        let marker = MarkerWrite {
            transactional_id: &current.transactional_id,
            producer_id: &current.producer_id,
            epoch: current.epoch,
            kind,
            coordinator_epoch,
        };
        // The markers are independent (each partition's own append and
        // sync): written together, and all of them durable before this
        // returns, so step 6 still follows every marker.
        let written = futures_util::future::join_all(current.participants.iter().map(|p| {
            broker
                .participants()
                .marker(broker, &p.topic, p.partition, marker)
        }))
        .await;
        for (p, written) in current.participants.iter().zip(written) {
            let written = written
            .map_err(|e| {
                let code = match kind {
                    MarkerKind::Commit => "transaction_commit_failed",
                    MarkerKind::Abort => "transaction_abort_marker_failed",
                };
                warn!(transactional_id = %current.transactional_id, topic = %p.topic, partition = p.partition, error = %e, "marker append failed");
                ErrorPayload::new(code)
                    .with_field("transactional_id", &current.transactional_id)
                    .with_field("topic", &p.topic)
                    .with_field("partition", p.partition)
                    .with_field("reason", e.render())
            })?;
            if !written {
                warn!(transactional_id = %current.transactional_id, topic = %p.topic, partition = p.partition, "participant partition no longer exists; no marker");
            }
        }
        Ok(())
    }

    /// Finishes an unresolved transaction whose client is gone (recovery,
    /// or the upkeep pass past its deadline): a prepared commit commits
    /// (the decision is taken), an open transaction or a prepared abort
    /// aborts. Anything else is left as it is.
    pub(super) async fn finish_unresolved(
        &self,
        broker: &Broker,
        current: &mut TxnSnapshot,
        reason: &str,
    ) -> Result<(), ErrorPayload> {
        match current.state {
            TxnState::PrepareCommit => self.commit(broker, current, true).await,
            TxnState::Open | TxnState::PrepareAbort => self.abort(broker, current, reason).await,
            TxnState::Committed | TxnState::Aborted | TxnState::Empty => Ok(()),
        }
    }

    /// Aborts an open (or finishes a prepared) abort: persist
    /// `prepare_abort`, abort markers where missing, persist `aborted`,
    /// release the stable offsets.
    ///
    /// A commit that fails its revalidation (step 4) aborts from
    /// `prepare_commit`; that state means "commit" to a retry and to
    /// recovery, so `prepare_abort` is journaled before the first abort
    /// marker: if a marker then fails, the retry finishes the abort
    /// instead of writing commit markers next to the abort markers already
    /// written (which left the transaction unfinishable and its
    /// partitions' stable offsets held forever).
    pub(super) async fn abort(
        &self,
        broker: &Broker,
        current: &mut TxnSnapshot,
        reason: &str,
    ) -> Result<(), ErrorPayload> {
        if matches!(current.state, TxnState::Open | TxnState::PrepareCommit) {
            let next = TxnSnapshot {
                state: TxnState::PrepareAbort,
                updated_ms: now_ms(),
                ..current.clone()
            };
            self.transition(current, next).await?;
        }
        self.write_markers(broker, current, MarkerKind::Abort)
            .await?;
        let next = TxnSnapshot {
            state: TxnState::Aborted,
            updated_ms: now_ms(),
            ..current.clone()
        };
        self.transition(current, next).await?;
        self.release_all(broker, current).await;
        info!(transactional_id = %current.transactional_id, epoch = current.epoch, reason, "transaction aborted");
        Ok(())
    }
}

#[cfg(test)]
mod tests;
