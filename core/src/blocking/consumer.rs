//! The blocking group consumer.

use std::time::Duration;

use super::{deadline_of, ProcessLocal, DEFAULT_TIMEOUT};
use crate::config::ConsumerConfig;
use crate::consumer::{
    Consumer as AsyncConsumer, ConsumerRecord, LostDelivery, RebalanceListener, Subscription,
    TopicPartition,
};
use crate::dispatch::Dispatcher;
use crate::error::{Error, Result};
use crate::events::{ErrorListener, StatisticsListener};
use crate::producer::GroupMetadata;
use crate::runtime::block_on;
use crate::stats::Statistics;

/// Blocking group consumer. Its methods may be called from several threads;
/// `close` and `wakeup` from another thread interrupt a blocked `poll`.
#[derive(Debug)]
pub struct Consumer {
    /// Shared with the periodic statistics task (which holds it weakly).
    inner: std::sync::Arc<ProcessLocal<AsyncConsumer>>,
    /// Runs commit callbacks. ProcessLocal like the engine consumer, so a forked
    /// child that drops a parent's consumer leaks it instead of touching
    /// the parent's dispatcher state.
    dispatcher: ProcessLocal<Dispatcher>,
}

impl Consumer {
    /// Connects (see [`crate::consumer::Consumer::connect`]).
    pub fn connect(config: ConsumerConfig) -> Result<Consumer> {
        let inner = block_on(AsyncConsumer::connect(config))??;
        let dispatcher = Dispatcher::new("cursus-consumer-cb");
        // Listeners run on the commit callback thread too.
        inner.events().adopt(&dispatcher);
        Ok(Consumer {
            inner: std::sync::Arc::new(ProcessLocal::new(inner)),
            dispatcher: ProcessLocal::new(dispatcher),
        })
    }

    /// The async consumer this wraps (for bindings with an async API).
    pub fn as_async(&self) -> Result<&AsyncConsumer> {
        self.inner.get()
    }

    /// Subscribes to topics (replacing any earlier subscription).
    pub fn subscribe(&self, topics: &[String]) -> Result<()> {
        self.inner
            .run(|c| c.subscribe(Subscription::Topics(topics.to_vec())))
    }

    /// Subscribes to every topic matching a glob pattern (`*`, `?`).
    pub fn subscribe_pattern(&self, pattern: &str) -> Result<()> {
        self.inner
            .run(|c| c.subscribe(Subscription::Pattern(pattern.to_owned())))
    }

    /// Returns up to `max_poll_records` records, waiting at most `timeout`
    /// (`None`: no limit) for the first one.
    pub fn poll(&self, timeout: Option<Duration>) -> Result<Vec<ConsumerRecord>> {
        let max = self.inner.get()?.max_poll_records();
        self.poll_max(timeout, max)
    }

    /// Returns up to `max_records` records (see
    /// [`crate::consumer::Consumer::poll_max`]: only what is returned counts
    /// as delivered), waiting at most `timeout` (`None`: no limit).
    pub fn poll_max(
        &self,
        timeout: Option<Duration>,
        max_records: usize,
    ) -> Result<Vec<ConsumerRecord>> {
        let timeout = timeout.unwrap_or(Duration::MAX);
        self.inner.run(|c| c.poll_max(timeout, max_records))
    }

    /// Makes the next poll return records of `tp` from `offset` on (see
    /// [`crate::consumer::Consumer::seek`]).
    pub fn seek(&self, tp: &TopicPartition, offset: u64) -> Result<()> {
        self.inner.run(|c| c.seek(tp, offset))
    }

    /// The offset of the next record poll returns for `tp`.
    pub fn position(&self, tp: &TopicPartition) -> Result<u64> {
        self.inner.run(|c| c.position(tp))
    }

    /// Stops returning records of these partitions until `resume`.
    pub fn pause(&self, partitions: &[TopicPartition]) -> Result<()> {
        self.inner.run(|c| c.pause(partitions))
    }

    /// Returns records of these partitions again, from their positions.
    pub fn resume(&self, partitions: &[TopicPartition]) -> Result<()> {
        self.inner.run(|c| c.resume(partitions))
    }

    /// The paused partitions, sorted.
    pub fn paused(&self) -> Result<Vec<TopicPartition>> {
        self.inner.run(|c| c.paused())
    }

    /// The committed next offset of each partition (`None`: none), in the
    /// order asked.
    pub fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<u64>)>> {
        self.inner.run(|c| c.committed_offsets(partitions))
    }

    /// Sets or removes the rebalance listener (see
    /// [`crate::consumer::RebalanceEvent`]); it runs on a thread of this
    /// consumer's own and may call the consumer again, except `poll`.
    pub fn set_rebalance_listener(&self, listener: Option<RebalanceListener>) -> Result<()> {
        self.set_rebalance_listener_with(listener, LostDelivery::AsLost)
    }

    /// [`Consumer::set_rebalance_listener`] for a listener that says
    /// whether it has a lost callback (see [`LostDelivery`]).
    pub fn set_rebalance_listener_with(
        &self,
        listener: Option<RebalanceListener>,
        lost: LostDelivery,
    ) -> Result<()> {
        self.inner
            .get()?
            .set_rebalance_listener_with(listener, lost);
        Ok(())
    }

    /// Makes the blocked (or the next) poll return at once with what it
    /// has. Safe from any thread, and from a signal-handling thread.
    pub fn wakeup(&self) -> Result<()> {
        self.inner.get()?.wakeup();
        Ok(())
    }

    /// The group session a transactional producer fences offsets with.
    pub fn group_metadata(&self) -> Result<GroupMetadata> {
        self.inner.run(|c| c.group_metadata())
    }

    /// The offset after the last returned record, per partition.
    pub fn delivered_offsets(&self) -> Result<Vec<(TopicPartition, u64)>> {
        self.inner.run(|c| c.delivered_offsets())
    }

    /// Commits the positions of the records returned so far (COMMIT_OFFSET).
    pub fn commit_sync(&self) -> Result<()> {
        self.inner.run(|c| c.commit_sync())
    }

    /// Commits explicit next offsets synchronously.
    pub fn commit_offsets(&self, offsets: &[(TopicPartition, u64)]) -> Result<()> {
        self.inner.run(|c| c.commit_offsets(offsets))
    }

    /// Commits the positions of the records returned so far in the
    /// background (BATCH_COMMIT); `callback` gets the outcome on this
    /// consumer's callback thread. If starting fails, the error is returned
    /// and the callback is never called.
    pub fn commit_async<F>(&self, callback: F) -> Result<()>
    where
        F: FnOnce(Result<()>) + Send + 'static,
    {
        let task = self.inner.run(|c| c.commit_async())?;
        self.dispatcher.get()?.run_after(task, move |joined| {
            callback(
                joined.unwrap_or_else(|e| Err(Error::internal(format!("commit task failed: {e}")))),
            )
        })
    }

    /// The committed next offset of a partition, if any.
    pub fn committed(&self, tp: &TopicPartition) -> Result<Option<u64>> {
        self.inner.run(|c| c.committed(tp))
    }

    /// This consumer's statistics, with the lag of each assigned partition
    /// (see [`crate::consumer::Consumer::statistics`]).
    pub fn statistics(&self) -> Result<Statistics> {
        self.inner.run(|c| c.statistics())
    }

    /// Sets (or with `None` clears) the listener of background errors,
    /// called on this consumer's callback thread.
    pub fn set_error_listener(&self, listener: Option<ErrorListener>) -> Result<()> {
        self.inner.get()?.set_error_listener(listener);
        Ok(())
    }

    /// Sets (or with `None` clears) the statistics listener, called every
    /// `interval` (`None`: the `statistics_interval_ms` option; zero:
    /// never) on this consumer's callback thread with
    /// [`Consumer::statistics`]'s snapshot.
    pub fn set_statistics_listener(
        &self,
        interval: Option<Duration>,
        listener: Option<StatisticsListener>,
    ) -> Result<()> {
        crate::consumer::stats::set_listener_with(
            self.inner.get()?,
            std::sync::Arc::downgrade(&self.inner),
            interval,
            listener,
        )
    }

    /// The assigned partitions.
    pub fn assignment(&self) -> Result<Vec<TopicPartition>> {
        self.inner.run(|c| c.assignment())
    }

    /// This member's id in its group, once joined (see
    /// [`crate::consumer::Consumer::member_id`]).
    pub fn member_id(&self) -> Result<Option<String>> {
        self.inner.run(|c| c.member_id())
    }

    /// Commits (with auto-commit) what was returned, leaves the group and
    /// closes; a poll blocked in another thread fails with `closed` at
    /// once. Waits for pending commit callbacks (except on the callback
    /// thread). Closing twice is harmless.
    pub fn close(&self) -> Result<()> {
        let closed = self.inner.run(|c| c.close());
        let deadline = deadline_of(Some(DEFAULT_TIMEOUT));
        if !self.dispatcher.get()?.wait_idle(deadline) {
            tracing::warn!("consumer closed with commit callbacks still running");
        }
        closed
    }
}
