//! The group consumer.
//!
//! Lifecycle (spec §6): JOIN_GROUP → SYNC_GROUP → FETCH_OFFSET for every
//! assigned partition → fetch; a heartbeat every `heartbeat_interval_ms`.
//! When a heartbeat or a commit reports GEN_MISMATCH, NOT_OWNER or
//! member_not_found, the next `poll` rebalances: it stops fetching, commits
//! what was delivered while still the owner (with auto-commit), rejoins,
//! re-syncs and refetches the committed offsets. The broker's committed
//! offset is always the resume point; commits carry `lastDelivered + 1`.

mod control;
mod fetcher;
mod group;
mod rebalance;
mod record;
pub(crate) mod stats;

use crate::client::{Cluster, Idempotence, Lane};
use crate::config::ConsumerConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::group::batch_offsets;
pub use crate::protocol::group::TopicPartition;
use crate::wire::{Command, CommandPayload, ErrorClass};
use fetcher::FetchEvent;
use group::Group;
pub use rebalance::{LostDelivery, RebalanceEvent, RebalanceListener};
pub use record::{ConsumerRecord, RecordEvent};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// What a consumer subscribes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscription {
    /// These topics.
    Topics(Vec<String>),
    /// Every topic matching a glob (`*`, `?`).
    Pattern(String),
}

struct State {
    subscription: Option<Subscription>,
    group: Option<Group>,
    /// The assignment the application was last told of (the rebalance
    /// listener's view), which `assignment()` returns.
    owned: Vec<TopicPartition>,
    /// Parent of every fetcher's stop token.
    fetch_cancel: CancellationToken,
    events: Option<mpsc::Receiver<FetchEvent>>,
    /// Where new fetchers send; `None` while no fetching may start (before
    /// a join completed, and while the rebalance listener runs).
    events_tx: Option<mpsc::Sender<FetchEvent>>,
    /// The running fetcher of each partition: its id and its stop token.
    fetchers: HashMap<TopicPartition, (u64, CancellationToken)>,
    next_fetcher: u64,
    /// Records received but not yet returned (beyond `max_poll_records`).
    buffer: VecDeque<ConsumerRecord>,
    /// The offset of the next record `poll` returns, per assigned
    /// partition (moved by poll and by seek).
    positions: HashMap<TopicPartition, u64>,
    /// Assigned partitions whose records poll does not return.
    paused: BTreeSet<TopicPartition>,
    /// Next offset after the last record returned, per partition: what a
    /// commit covers. Never moves backwards (the broker refuses commits
    /// that regress), also after a seek backwards.
    delivered: HashMap<TopicPartition, u64>,
    /// Last offset committed by this consumer, per partition.
    committed: HashMap<TopicPartition, u64>,
    last_auto_commit: Instant,
}

/// A consumer-group member. Methods take `&self`; calls are serialised,
/// except [`Consumer::wakeup`] and [`Consumer::close`], which interrupt a
/// poll blocked in another task.
///
/// ```no_run
/// use cursus::consumer::{Consumer, Subscription};
/// use cursus::ConsumerConfig;
/// use std::time::Duration;
///
/// # async fn demo() -> cursus::Result<()> {
/// let consumer = Consumer::connect(ConsumerConfig::new("127.0.0.1:9000", "billing")).await?;
/// consumer.subscribe(Subscription::Topics(vec!["orders".into()])).await?;
/// for record in consumer.poll(Duration::from_secs(1)).await? {
///     println!("{}:{}@{} {:?}", record.topic, record.partition, record.offset, record.payload);
/// }
/// consumer.commit_sync().await?; // commits exactly what poll returned
/// consumer.close().await?;
/// # Ok(())
/// # }
/// ```
pub struct Consumer {
    cluster: Arc<Cluster>,
    config: ConsumerConfig,
    state: Mutex<State>,
    closed: AtomicBool,
    /// Cancelled by `close`: a poll blocked in another task or thread
    /// returns at once instead of holding the state until its timeout.
    closing: CancellationToken,
    /// `wakeup()`: the blocked (or next) poll returns what it has.
    wakeup: tokio::sync::Notify,
    wakeup_pending: AtomicBool,
    /// Set by the heartbeat task (or a failed commit) when membership is lost.
    rebalance: Arc<tokio::sync::Notify>,
    rebalance_needed: Arc<AtomicBool>,
    listeners: rebalance::Listeners,
    /// Set once `close` started (it may still be telling the listener).
    close_started: AtomicBool,
}

impl std::fmt::Debug for Consumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("group", &self.config.group_id)
            .finish()
    }
}

impl Consumer {
    /// Validates `config` and connects to a bootstrap broker.
    pub async fn connect(config: ConsumerConfig) -> Result<Consumer> {
        config.validate()?;
        let cluster = Cluster::new(config.client.clone())?;
        cluster.any_broker(Lane::CONTROL).await?;
        Ok(Consumer {
            cluster,
            config,
            state: Mutex::new(State {
                subscription: None,
                group: None,
                owned: Vec::new(),
                fetch_cancel: CancellationToken::new(),
                events: None,
                events_tx: None,
                fetchers: HashMap::new(),
                next_fetcher: 0,
                buffer: VecDeque::new(),
                positions: HashMap::new(),
                paused: BTreeSet::new(),
                delivered: HashMap::new(),
                committed: HashMap::new(),
                last_auto_commit: Instant::now(),
            }),
            closed: AtomicBool::new(false),
            closing: CancellationToken::new(),
            wakeup: tokio::sync::Notify::new(),
            wakeup_pending: AtomicBool::new(false),
            rebalance: Arc::new(tokio::sync::Notify::new()),
            rebalance_needed: Arc::new(AtomicBool::new(false)),
            listeners: rebalance::Listeners::new(),
            close_started: AtomicBool::new(false),
        })
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            Err(Error::closed("consumer"))
        } else {
            Ok(())
        }
    }

    /// Subscribes to topics (replacing any earlier subscription); the group
    /// is joined on the next `poll`.
    pub async fn subscribe(&self, subscription: Subscription) -> Result<()> {
        self.check_open()?;
        match &subscription {
            Subscription::Topics(t) if t.is_empty() => {
                return Err(Error::invalid_argument(
                    "subscribe needs at least one topic",
                ))
            }
            Subscription::Topics(t)
                if t.iter()
                    .any(|t| t.is_empty() || t.contains(char::is_whitespace)) =>
            {
                return Err(Error::invalid_argument(
                    "topic names must be non-empty without whitespace",
                ))
            }
            Subscription::Pattern(p) if p.is_empty() || p.contains(char::is_whitespace) => {
                return Err(Error::invalid_argument(
                    "pattern must be non-empty without whitespace",
                ))
            }
            _ => {}
        }
        let state = self.revoke_all().await;
        let mut state = match state {
            Some(s) => s,
            None => self.state.lock().await,
        };
        self.leave(&mut state).await;
        state.subscription = Some(subscription);
        Ok(())
    }

    /// Tells the rebalance listener (if any) that the whole assignment is
    /// being revoked, with the state unlocked so that it may commit; then
    /// returns the state locked again. `None` when there was nothing to
    /// tell.
    async fn revoke_all(&self) -> Option<MutexGuard<'_, State>> {
        if !self.listeners.is_set() {
            return None;
        }
        let state = self.state.lock().await;
        if state.group.is_none() || state.owned.is_empty() {
            return Some(state);
        }
        let owned = state.owned.clone();
        drop(state);
        self.listeners.tell(RebalanceEvent::Revoked(owned)).await;
        Some(self.state.lock().await)
    }

    /// The partitions currently assigned (empty before the first poll).
    /// Fails with `closed` once the consumer is closed.
    pub async fn assignment(&self) -> Result<Vec<TopicPartition>> {
        self.check_open()?;
        let state = self.state.lock().await;
        Ok(state.owned.clone())
    }

    /// The most records one poll returns (option `max_poll_records`).
    pub fn max_poll_records(&self) -> usize {
        self.config.max_poll_records
    }

    /// This member's id in its group (as `GROUP_STATUS` lists it), once
    /// joined: the first poll after subscribing joins. `None` before.
    pub async fn member_id(&self) -> Result<Option<String>> {
        self.check_open()?;
        Ok(self.membership().await.map(|(id, _)| id))
    }

    /// The member id and generation, once joined.
    pub async fn membership(&self) -> Option<(String, u64)> {
        let state = self.state.lock().await;
        state
            .group
            .as_ref()
            .map(|g| (g.member_id.clone(), g.generation))
    }

    /// The group session (group, member, generation) a transactional
    /// producer fences consumed offsets with (Kafka's `groupMetadata()`).
    /// Fails before the group is joined (the first poll joins).
    pub async fn group_metadata(&self) -> Result<crate::producer::GroupMetadata> {
        self.check_open()?;
        let (member_id, generation) = self.membership().await.ok_or_else(|| {
            Error::invalid_argument("the consumer has not joined its group yet: poll first")
        })?;
        Ok(crate::producer::GroupMetadata {
            group_id: self.config.group_id.clone(),
            member_id,
            generation,
        })
    }

    /// For every partition, the offset after the last record `poll`
    /// returned: what `commit_sync` commits, and what a transaction's
    /// `send_consumer_offsets` stages.
    pub async fn delivered_offsets(&self) -> Result<Vec<(TopicPartition, u64)>> {
        self.check_open()?;
        let state = self.state.lock().await;
        let mut out: Vec<_> = state
            .delivered
            .iter()
            .map(|(tp, o)| (tp.clone(), *o))
            .collect();
        out.sort();
        Ok(out)
    }

    /// The consumer group (the `group_id` option).
    pub fn group_id(&self) -> &str {
        &self.config.group_id
    }

    /// Returns up to `max_poll_records` records, waiting at most `timeout`
    /// for the first one (see [`Consumer::poll_max`]).
    pub async fn poll(&self, timeout: Duration) -> Result<Vec<ConsumerRecord>> {
        self.poll_max(timeout, self.config.max_poll_records).await
    }

    /// Returns up to `max_records` (at most `max_poll_records`) records,
    /// waiting at most `timeout` for the first one. Joins or rebalances the
    /// group first when needed.
    ///
    /// Only the records returned count as delivered: records fetched
    /// beyond `max_records` stay buffered in the engine for the next poll,
    /// and commits (explicit, automatic or at close) cover only what was
    /// returned. Records buffered for a partition a rebalance takes away
    /// are dropped, never returned.
    ///
    /// Returns only when it has records, when `timeout` has passed, or
    /// after [`Consumer::wakeup`] (then with what it has, possibly
    /// nothing): never an empty result before the deadline otherwise. A
    /// rebalance the heartbeat detects while the poll waits, a listener
    /// that subscribes anew, and a fetch that finds this member fenced
    /// (GEN_MISMATCH, NOT_OWNER, member_not_found) are not the caller's
    /// business: the poll rejoins the group and waits on. Fails with
    /// `closed` when [`Consumer::close`] is called meanwhile, and with
    /// `invalid_argument` when called from the rebalance listener (it
    /// would wait for the listener to return).
    ///
    /// Cancel-safe: a poll dropped while it waits (a binding interrupted
    /// by a signal) has taken no record; the next poll returns them.
    pub async fn poll_max(
        &self,
        timeout: Duration,
        max_records: usize,
    ) -> Result<Vec<ConsumerRecord>> {
        self.check_open()?;
        if max_records == 0 {
            return Err(Error::invalid_argument("max_records must be at least 1"));
        }
        if self.in_rebalance_listener() {
            return Err(Error::invalid_argument(
                "poll cannot be called from the rebalance listener",
            ));
        }
        let max = max_records.min(self.config.max_poll_records);
        let start = tokio::time::Instant::now();
        loop {
            let remaining = timeout.saturating_sub(start.elapsed());
            let polled = tokio::select! {
                biased;
                _ = self.closing.cancelled() => Err(Error::closed("consumer")),
                polled = self.poll_round(remaining, max) => polled,
            };
            match polled {
                Ok(Round::Done(records)) => return Ok(records),
                // The assignment changed under the wait: the next round
                // rejoins.
                Ok(Round::Rejoin) => {}
                // A fetch found this member fenced (its coordinator moved,
                // its session expired): a rebalance, not the caller's
                // error. The next round rejoins (note_fencing asked for
                // it).
                Err(e) if is_membership_error(&e) => {
                    tracing::info!(error = %e, "fetch fenced: rejoining the group");
                }
                Err(e) => return Err(e),
            }
            // Out of time: the deadline, and the next poll rejoins.
            if start.elapsed() >= timeout {
                return Ok(Vec::new());
            }
        }
    }

    /// Makes the poll blocked now, or else the next poll, return at once
    /// with the records it has (possibly none). Safe from any thread.
    pub fn wakeup(&self) {
        self.wakeup_pending.store(true, Ordering::SeqCst);
        self.wakeup.notify_waiters();
    }

    /// One round of a poll: rejoins when needed, then collects records.
    async fn poll_round(&self, timeout: Duration, max: usize) -> Result<Round> {
        // A timeout too large for the clock (`Duration::MAX`) means no limit.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(timeout)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        let mut state = self.state.lock().await;
        if state.subscription.is_none() {
            return Err(Error::invalid_argument("poll before subscribe"));
        }
        if state.group.is_none() || self.rebalance_needed.swap(false, Ordering::SeqCst) {
            state = self.rejoin(state).await?;
            if state.events.is_none() {
                // The listener closed the consumer or subscribed anew.
                self.check_open()?;
                return Ok(Round::Rejoin);
            }
        }
        if self.config.enable_auto_commit
            && state.last_auto_commit.elapsed() >= self.config.auto_commit_interval
        {
            state.last_auto_commit = Instant::now();
            if let Err(e) = self.commit_delivered(&mut state).await {
                tracing::warn!(error = %e, "auto-commit failed");
                self.cluster.report_error(e);
            }
        }
        let mut out: Vec<ConsumerRecord> = Vec::with_capacity(state.buffer.len().min(max));
        loop {
            let take = (max - out.len()).min(state.buffer.len());
            out.extend(state.buffer.drain(..take));
            if out.len() >= max {
                break;
            }
            // Take whatever is ready without waiting, then wait only if
            // nothing has been collected yet.
            let next = {
                let events = state
                    .events
                    .as_mut()
                    .expect("joined consumers have an event channel");
                match events.try_recv() {
                    Ok(ev) => Some(ev),
                    Err(_) if !out.is_empty() => None,
                    Err(_) => {
                        let rebalance = self.rebalance.notified();
                        let woken = self.wakeup.notified();
                        tokio::pin!(woken);
                        woken.as_mut().enable();
                        if self.wakeup_pending.swap(false, Ordering::SeqCst) {
                            None
                        } else {
                            tokio::select! {
                                ev = events.recv() => ev,
                                _ = tokio::time::sleep_until(deadline) => None,
                                // Nothing taken yet: rejoin and wait on.
                                _ = rebalance => return Ok(Round::Rejoin),
                                _ = woken => {
                                    self.wakeup_pending.store(false, Ordering::SeqCst);
                                    None
                                }
                            }
                        }
                    }
                }
            };
            match next {
                Some(FetchEvent::Records(id, records)) => {
                    // Records of a replaced fetcher (seek, pause) are stale.
                    let current = records.first().is_some_and(|r| {
                        state.fetchers.get(&r.topic_partition()).map(|f| f.0) == Some(id)
                    });
                    if current {
                        state.buffer.extend(records);
                    }
                }
                Some(FetchEvent::Failed(id, tp, e)) => {
                    if state.fetchers.get(&tp).map(|f| f.0) != Some(id) {
                        continue;
                    }
                    // That fetcher has stopped: a seek or resume restarts it.
                    state.fetchers.remove(&tp);
                    if out.is_empty() {
                        self.note_fencing(&e);
                        return Err(e.with_field("partition_failed", tp));
                    }
                    // Hand out what we have; the failure surfaces next time.
                    tracing::warn!(%tp, error = %e, "fetch failed");
                    break;
                }
                None => break,
            }
        }
        // Once per run of one partition's records (a fetch's worth), not
        // per record: the position after the run's last record.
        for run in out.chunk_by(|a, b| a.partition == b.partition && a.topic == b.topic) {
            let last = run.last().expect("chunks are never empty");
            let tp = last.topic_partition();
            let next = last.offset + 1;
            state.positions.insert(tp.clone(), next);
            let delivered = state.delivered.entry(tp).or_insert(next);
            *delivered = (*delivered).max(next);
        }
        Ok(Round::Done(out))
    }

    /// Commits, for every partition, the offset after the last record
    /// returned by `poll` (COMMIT_OFFSET per partition). Membership errors
    /// (GEN_MISMATCH, NOT_OWNER, member_not_found) make the next poll
    /// rejoin; they are returned so the caller knows the commit failed.
    pub async fn commit_sync(&self) -> Result<()> {
        self.check_open()?;
        let mut state = self.state.lock().await;
        self.commit_delivered(&mut state).await
    }

    /// Commits explicit next offsets (`lastProcessed + 1`) synchronously.
    pub async fn commit_offsets(&self, offsets: &[(TopicPartition, u64)]) -> Result<()> {
        self.check_open()?;
        let mut state = self.state.lock().await;
        let group = state
            .group
            .as_ref()
            .ok_or_else(|| Error::invalid_argument("commit before the group was joined"))?
            .clone_identity();
        for (tp, offset) in offsets {
            self.commit_one(&group, tp, *offset).await?;
            state.committed.insert(tp.clone(), *offset);
        }
        Ok(())
    }

    /// Commits the delivered positions with one BATCH_COMMIT per topic,
    /// in the background; the returned future resolves with the outcome.
    /// It may be dropped: the commit still happens.
    pub async fn commit_async(&self) -> Result<tokio::task::JoinHandle<Result<()>>> {
        self.check_open()?;
        let state = self.state.lock().await;
        let group = state
            .group
            .as_ref()
            .ok_or_else(|| Error::invalid_argument("commit before the group was joined"))?
            .clone_identity();
        let mut by_topic: BTreeMap<String, Vec<(u32, u64)>> = BTreeMap::new();
        for (tp, offset) in &state.delivered {
            if state.committed.get(tp) != Some(offset) {
                by_topic
                    .entry(tp.topic.clone())
                    .or_default()
                    .push((tp.partition, *offset));
            }
        }
        drop(state);
        let cluster = Arc::clone(&self.cluster);
        let group_id = self.config.group_id.clone();
        let flag = Arc::clone(&self.rebalance_needed);
        let wake = Arc::clone(&self.rebalance);
        Ok(tokio::spawn(async move {
            for (topic, mut offsets) in by_topic {
                offsets.sort_unstable();
                let payload = CommandPayload::new()
                    .field("topic", &topic)
                    .field("group", &group_id)
                    .field("member", &group.member_id)
                    .field("generation", group.generation)
                    .field("offsets", batch_offsets(&offsets));
                let result = cluster
                    .request(
                        None,
                        Lane::CONTROL,
                        Command::BatchCommit,
                        &payload,
                        Idempotence::Safe,
                    )
                    .await;
                if let Err(e) = result {
                    if is_membership_error(&e) {
                        flag.store(true, Ordering::SeqCst);
                        wake.notify_waiters();
                    }
                    return Err(e);
                }
            }
            Ok(())
        }))
    }

    /// The broker's committed next offset of a partition (`None` when the
    /// group committed nothing there).
    pub async fn committed(&self, tp: &TopicPartition) -> Result<Option<u64>> {
        self.check_open()?;
        group::fetch_committed(&self.cluster, &self.config.group_id, tp).await
    }

    /// Commits delivered positions (with auto-commit), leaves the group and
    /// closes the connections. Closing twice is harmless.
    pub async fn close(&self) -> Result<()> {
        if self.close_started.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        // A poll blocked elsewhere gives the state up now.
        self.closing.cancel();
        // The listener may still commit (the consumer is not closed yet).
        let state = self.revoke_all().await;
        self.closed.store(true, Ordering::SeqCst);
        let mut state = match state {
            Some(s) => s,
            None => self.state.lock().await,
        };
        let mut result = Ok(());
        if self.config.enable_auto_commit && state.group.is_some() {
            result = self.commit_delivered(&mut state).await;
        }
        self.leave(&mut state).await;
        self.cluster.close().await;
        match result {
            Err(e) if !is_membership_error(&e) => Err(e),
            _ => Ok(()),
        }
    }

    fn note_fencing(&self, e: &Error) {
        if is_membership_error(e) {
            self.rebalance_needed.store(true, Ordering::SeqCst);
        }
    }

    async fn commit_delivered(&self, state: &mut State) -> Result<()> {
        let Some(group) = state.group.as_ref().map(Group::clone_identity) else {
            return Ok(());
        };
        self.commit_delivered_as(&group, state).await
    }

    /// Commits, as `group`, what was delivered and not yet committed.
    async fn commit_delivered_as(&self, group: &group::Identity, state: &mut State) -> Result<()> {
        let pending: Vec<(TopicPartition, u64)> = state
            .delivered
            .iter()
            .filter(|(tp, o)| state.committed.get(*tp) != Some(*o))
            .map(|(tp, o)| (tp.clone(), *o))
            .collect();
        for (tp, offset) in pending {
            self.commit_one(group, &tp, offset).await?;
            state.committed.insert(tp, offset);
        }
        Ok(())
    }

    async fn commit_one(
        &self,
        group: &group::Identity,
        tp: &TopicPartition,
        offset: u64,
    ) -> Result<()> {
        let payload = CommandPayload::new()
            .field("topic", &tp.topic)
            .field("partition", tp.partition)
            .field("group", &self.config.group_id)
            .field("offset", offset)
            .field("member", &group.member_id)
            .field("generation", group.generation);
        // Commits are monotonic and repeating the same offset is a no-op on
        // the broker, so a commit whose reply was lost may be sent again.
        let result = self
            .cluster
            .request(
                None,
                Lane::CONTROL,
                Command::CommitOffset,
                &payload,
                Idempotence::Safe,
            )
            .await;
        if let Err(e) = &result {
            self.note_fencing(e);
        }
        result.map(|_| ())
    }

    /// Stops fetching and the heartbeat, and leaves the group.
    async fn leave(&self, state: &mut State) {
        stop_fetching(state);
        state.owned.clear();
        state.positions.clear();
        state.paused.clear();
        if let Some(g) = state.group.take() {
            g.leave(&self.cluster, &self.config.group_id).await;
        }
    }

    /// The rebalance of spec §6: stop, commit what was delivered while still
    /// the owner (auto-commit), rejoin, re-sync, tell the listener what was
    /// revoked (or lost) and assigned, and fetch again: partitions kept
    /// from the previous assignment continue from their position, new
    /// ones from the committed offset.
    async fn rejoin<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
    ) -> Result<MutexGuard<'a, State>> {
        stop_fetching(&mut state);
        let previous = state.group.take();
        if let Some(g) = &previous {
            if self.config.enable_auto_commit {
                // Delivered partitions are all still owned here: entries of
                // partitions a rebalance took away were dropped then.
                if let Err(e) = self
                    .commit_delivered_as(&g.clone_identity(), &mut state)
                    .await
                {
                    tracing::info!(error = %e, "commit before rebalance failed (partitions may have moved)");
                }
            }
            g.stop_heartbeat();
        }
        let subscription = state.subscription.clone().expect("subscribed");
        let group = Group::join(
            &self.cluster,
            &self.config,
            &subscription,
            previous.as_ref().map(|g| g.member_id.as_str()),
            Arc::clone(&self.rebalance_needed),
            Arc::clone(&self.rebalance),
        )
        .await?;
        // The same member id: still a member, some partitions may have
        // moved. A new one: the session had expired, everything was lost.
        let same_member = previous
            .as_ref()
            .is_some_and(|p| p.member_id == group.member_id);
        let old = std::mem::take(&mut state.owned);
        let (kept, gone): (Vec<_>, Vec<_>) = old
            .into_iter()
            .partition(|tp| same_member && group.assignments.contains(tp));
        let added: Vec<TopicPartition> = group
            .assignments
            .iter()
            .filter(|tp| !kept.contains(tp))
            .cloned()
            .collect();
        let initial = group::initial_positions(&self.cluster, &self.config, &added).await?;
        for tp in &gone {
            state.positions.remove(tp);
            state.paused.remove(tp);
            state.delivered.remove(tp);
            state.committed.remove(tp);
        }
        if !same_member {
            state.delivered.clear();
            state.committed.clear();
        }
        state.positions.extend(initial);
        state.owned = group.assignments.clone();
        state.group = Some(group);
        if self.listeners.is_set() {
            drop(state);
            if !gone.is_empty() {
                let event = if same_member {
                    RebalanceEvent::Revoked(gone)
                } else {
                    RebalanceEvent::Lost(gone)
                };
                self.listeners.tell(event).await;
            }
            self.listeners.tell(RebalanceEvent::Assigned(added)).await;
            state = self.state.lock().await;
            if self.closed.load(Ordering::SeqCst) || state.group.is_none() {
                return Ok(state);
            }
        }
        self.start_fetching(&mut state);
        Ok(state)
    }

    /// Starts a fetcher for every assigned partition that is not paused.
    fn start_fetching(&self, state: &mut State) {
        let count = state.owned.len().max(1);
        let (tx, rx) = mpsc::channel(2 * count);
        state.fetch_cancel = CancellationToken::new();
        state.events = Some(rx);
        state.events_tx = Some(tx);
        let owned = state.owned.clone();
        for tp in owned {
            if !state.paused.contains(&tp) {
                self.start_fetcher(state, tp);
            }
        }
    }

    /// (Re)starts the fetcher of `tp` at its position, replacing any
    /// running one; nothing while fetching may not start.
    fn start_fetcher(&self, state: &mut State, tp: TopicPartition) {
        let (Some(tx), Some(group)) = (state.events_tx.clone(), state.group.as_ref()) else {
            return;
        };
        let Some(&position) = state.positions.get(&tp) else {
            return;
        };
        state.next_fetcher += 1;
        let id = state.next_fetcher;
        let cancel = state.fetch_cancel.child_token();
        let spec = fetcher::FetchSpec {
            cluster: Arc::clone(&self.cluster),
            config: self.config.clone(),
            tp: tp.clone(),
            position,
            member_id: group.member_id.clone(),
            id,
        };
        if let Some((_, running)) = state.fetchers.insert(tp, (id, cancel.clone())) {
            running.cancel();
        }
        fetcher::start(spec, tx, cancel);
    }
}

/// How one round of a poll ended.
enum Round {
    /// Records, the deadline or a wake-up: what the poll returns.
    Done(Vec<ConsumerRecord>),
    /// The assignment changed before any record was taken (a rebalance the
    /// heartbeat detected, a listener that subscribed anew): rejoin and
    /// wait on.
    Rejoin,
}

/// Stops every fetcher and drops what they fetched but poll did not
/// return.
fn stop_fetching(state: &mut State) {
    state.fetch_cancel.cancel();
    state.fetchers.clear();
    state.events = None;
    state.events_tx = None;
    state.buffer.clear();
}

/// Errors that mean this member lost its membership or ownership.
pub fn is_membership_error(e: &Error) -> bool {
    e.kind() == ErrorKind::Broker
        && e.class() == ErrorClass::Fencing
        && matches!(e.code(), "GEN_MISMATCH" | "NOT_OWNER" | "member_not_found")
}
