//! Consumer control: seek, position, pause and resume, committed offsets
//! of many partitions, and the rebalance listener.
//!
//! Every call works on the assignment the application was last told of
//! (`assignment()`, the rebalance listener's view): a partition outside
//! it is `partition_not_assigned`. The calls may be made from inside the
//! rebalance listener (`seek` in `Assigned` is the usual way to start
//! somewhere else than the committed offset).
//!
//! There is no `offsets_for_times`: the protocol has no command that looks
//! an offset up by time (LIST_OFFSETS reports only `earliest`, `latest`,
//! `leo` and `hwm`), and a client-side search would be wrong for records
//! whose producers set their own timestamps (they need not be ordered).

use super::{Consumer, LostDelivery, RebalanceListener, State, TopicPartition};
use crate::error::{Error, Result};
use crate::wire::ErrorClass;

fn not_assigned(tp: &TopicPartition) -> Error {
    Error::invalid_argument(format!(
        "{tp} is not assigned to this consumer (poll joins the group; assignment() lists the partitions)"
    ))
    .with_code("partition_not_assigned")
    .with_class(ErrorClass::Validation)
    .with_field("topic", &tp.topic)
    .with_field("partition", tp.partition)
}

fn check_assigned(state: &State, tps: &[TopicPartition]) -> Result<()> {
    match tps.iter().find(|tp| !state.owned.contains(tp)) {
        Some(tp) => Err(not_assigned(tp)),
        None => Ok(()),
    }
}

/// Forgets what was fetched for `tp` and not yet returned.
fn drop_fetched(state: &mut State, tp: &TopicPartition) {
    if let Some((_, cancel)) = state.fetchers.remove(tp) {
        cancel.cancel();
    }
    state
        .buffer
        .retain(|r| r.partition != tp.partition || r.topic != tp.topic);
}

impl Consumer {
    /// Makes the next poll return records of `tp` from `offset` on.
    /// Records already fetched for it are dropped. What a commit covers is
    /// unchanged until poll returns records again, and never moves back:
    /// after a seek backwards, records are returned again but commits
    /// stay at the furthest offset returned (the broker refuses commits
    /// that regress). An offset past the end waits for records; one below
    /// the earliest retained follows `auto_offset_reset`.
    pub async fn seek(&self, tp: &TopicPartition, offset: u64) -> Result<()> {
        self.check_open()?;
        let mut state = self.state.lock().await;
        check_assigned(&state, std::slice::from_ref(tp))?;
        drop_fetched(&mut state, tp);
        state.positions.insert(tp.clone(), offset);
        if !state.paused.contains(tp) {
            self.start_fetcher(&mut state, tp.clone());
        }
        Ok(())
    }

    /// The offset of the next record poll returns for `tp`: after the last
    /// one returned, or where the consumer starts (committed offset,
    /// `auto_offset_reset`, or a seek).
    pub async fn position(&self, tp: &TopicPartition) -> Result<u64> {
        self.check_open()?;
        let state = self.state.lock().await;
        check_assigned(&state, std::slice::from_ref(tp))?;
        state
            .positions
            .get(tp)
            .copied()
            .ok_or_else(|| not_assigned(tp))
    }

    /// Stops returning records of these partitions until `resume`; the
    /// consumer stays in its group (heartbeats go on) and their positions
    /// are kept. Records already fetched for them are dropped and fetched
    /// again on resume. Pausing a paused partition is harmless. A
    /// rebalance keeps partitions that stay assigned paused.
    pub async fn pause(&self, partitions: &[TopicPartition]) -> Result<()> {
        self.check_open()?;
        let mut state = self.state.lock().await;
        check_assigned(&state, partitions)?;
        for tp in partitions {
            if state.paused.insert(tp.clone()) {
                drop_fetched(&mut state, tp);
            }
        }
        Ok(())
    }

    /// Returns records of these partitions again, from their positions.
    /// Resuming a partition that is not paused is harmless.
    pub async fn resume(&self, partitions: &[TopicPartition]) -> Result<()> {
        self.check_open()?;
        let mut state = self.state.lock().await;
        check_assigned(&state, partitions)?;
        for tp in partitions {
            if state.paused.remove(tp) {
                self.start_fetcher(&mut state, tp.clone());
            }
        }
        Ok(())
    }

    /// The paused partitions, sorted.
    pub async fn paused(&self) -> Result<Vec<TopicPartition>> {
        self.check_open()?;
        let state = self.state.lock().await;
        Ok(state.paused.iter().cloned().collect())
    }

    /// The broker's committed next offset of each partition (`None` where
    /// the group committed nothing), in the order asked. Any partition of
    /// the group's topics may be asked, assigned or not.
    pub async fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<u64>)>> {
        self.check_open()?;
        let lookups = partitions.iter().map(|tp| async move {
            let offset =
                super::group::fetch_committed(&self.cluster, &self.config.group_id, tp).await?;
            Ok::<_, Error>((tp.clone(), offset))
        });
        futures_util::future::try_join_all(lookups).await
    }

    /// Sets (or, with `None`, removes) the rebalance listener: see
    /// [`super::RebalanceEvent`] for what it is told and when. It runs on
    /// a thread of this consumer's own while poll (or close, or subscribe)
    /// waits for it, so it may call the consumer again, except poll.
    pub fn set_rebalance_listener(&self, listener: Option<RebalanceListener>) {
        self.set_rebalance_listener_with(listener, LostDelivery::AsLost);
    }

    /// [`Consumer::set_rebalance_listener`] for a listener that says
    /// whether it has a lost callback: with [`LostDelivery::AsRevoked`], a
    /// loss is told as [`RebalanceEvent::Revoked`](super::RebalanceEvent).
    pub fn set_rebalance_listener_with(
        &self,
        listener: Option<RebalanceListener>,
        lost: LostDelivery,
    ) {
        self.listeners.set(listener, lost);
    }

    /// True on the rebalance listener's thread: a blocking poll from there
    /// would wait for itself, and fails instead.
    pub fn in_rebalance_listener(&self) -> bool {
        self.listeners.is_current_thread()
    }
}
