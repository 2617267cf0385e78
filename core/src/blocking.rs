//! The synchronous API: what synchronous Rust code and the C, Java and
//! Python bindings call.
//!
//! Every call blocks the calling thread on the process's engine runtime
//! (see `runtime`): two I/O threads shared by every client, which only ever
//! run engine work. Callbacks (delivery reports, commit outcomes) run on a
//! dispatcher thread of their client ([`crate::dispatch`]), so a callback may
//! call the SDK again (`send`, `flush`, `commit`, even of the same client)
//! and a slow callback delays only its own client's callbacks.
//!
//! Misuse fails with a clear error instead of hanging or panicking: a
//! blocking call made from inside an async runtime (`invalid_argument`),
//! and an object used in a process `fork()`ed after it was created
//! (`used_after_fork`, kind `Closed`); a child process creates its own
//! clients normally.
//!
//! Timeouts follow one contract in every language: `flush` and `close`
//! take `Option<Duration>`, `None` meaning no limit; the SDK's default for
//! both, which the bindings apply when the caller gives none, is
//! [`DEFAULT_TIMEOUT`].

use crate::admin::{
    Admin as AsyncAdmin, ClusterBroker, ClusterStatus, DeleteOutcome, GroupStatus, LeaderElection,
    NewTopic, PartitionOffsets, TopicDescription, TopicInfo, TopicMetadata, TruncateOutcome,
};
use crate::config::{ClientConfig, ConsumerConfig, ProducerConfig};
use crate::consumer::{
    Consumer as AsyncConsumer, ConsumerRecord, RebalanceListener, Subscription, TopicPartition,
};
use crate::dispatch::Dispatcher;
use crate::error::{Error, Result};
use crate::events::{ErrorListener, StatisticsListener};
use crate::eventstore::{
    Aggregate, Appended, Cursor, Event, EventStore as AsyncEventStore, Page, RangeEvent,
    ReplayProof, Snapshot, StoredEvent,
};
use crate::producer::{
    Delivery, GroupMetadata, Producer as AsyncProducer, ProducerRecord, RecordMetadata,
};
use crate::runtime::block_on;
pub use crate::runtime::{poll_once, watch_forks, ProcessLocal};
use crate::stats::Statistics;
use std::time::{Duration, Instant};

/// The default of `flush` and `close` timeouts in every language: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A handle to the engine runtime, for bindings that bridge its futures
/// into another event loop (asyncio).
pub fn runtime_handle() -> Result<tokio::runtime::Handle> {
    crate::runtime::handle()
}

/// Runs `future` to completion on the engine runtime (for bindings that
/// drive an engine future from a blocking call of their own).
pub fn block_on_engine<F: std::future::Future>(future: F) -> Result<F::Output> {
    block_on(future)
}

fn deadline_of(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| Instant::now().checked_add(t))
}

/// Blocking admin client.
#[derive(Debug)]
pub struct Admin {
    inner: ProcessLocal<AsyncAdmin>,
}

impl Admin {
    /// Connects (see [`crate::admin::Admin::connect`]).
    pub fn connect(config: ClientConfig) -> Result<Admin> {
        let inner = block_on(AsyncAdmin::connect(config))??;
        Ok(Admin {
            inner: ProcessLocal::new(inner),
        })
    }

    /// The async admin client this wraps (for bindings with an async API).
    pub fn as_async(&self) -> Result<&AsyncAdmin> {
        self.inner.get()
    }

    /// Creates a topic, or patches the settings of an existing one.
    pub fn create_topic(&self, topic: &NewTopic) -> Result<TopicInfo> {
        self.inner.run(|a| a.create_topic(topic))
    }

    /// Replaces the min_in_sync_replicas override (`None` = broker default).
    pub fn alter_topic_config(
        &self,
        topic: &str,
        min_in_sync_replicas: Option<u32>,
    ) -> Result<TopicInfo> {
        self.inner
            .run(|a| a.alter_topic_config(topic, min_in_sync_replicas))
    }

    /// Deletes a topic (with `if_exists`, a missing topic is not an error).
    pub fn delete_topic(&self, topic: &str, if_exists: bool) -> Result<DeleteOutcome> {
        self.inner.run(|a| a.delete_topic(topic, if_exists))
    }

    /// Drops every record of a topic, if its revision is `expected_revision`.
    pub fn truncate_topic(&self, topic: &str, expected_revision: u64) -> Result<TruncateOutcome> {
        self.inner
            .run(|a| a.truncate_topic(topic, expected_revision))
    }

    /// The topic names.
    pub fn list_topics(&self) -> Result<Vec<String>> {
        self.inner.run(|a| a.list_topics())
    }

    /// A topic's definition and partitions (DESCRIBE).
    pub fn describe_topic(&self, topic: &str) -> Result<TopicDescription> {
        self.inner.run(|a| a.describe_topic(topic))
    }

    /// A topic's definition and partition leaders (METADATA).
    pub fn metadata(&self, topic: &str) -> Result<TopicMetadata> {
        self.inner.run(|a| a.metadata(topic))
    }

    /// The offsets of one partition, or of every partition (LIST_OFFSETS).
    pub fn list_offsets(
        &self,
        topic: &str,
        partition: Option<u32>,
    ) -> Result<Vec<PartitionOffsets>> {
        self.inner.run(|a| a.list_offsets(topic, partition))
    }

    /// A consumer group's state and members (GROUP_STATUS).
    pub fn group_status(&self, group: &str) -> Result<GroupStatus> {
        self.inner.run(|a| a.group_status(group))
    }

    /// The consumer group names.
    pub fn list_groups(&self) -> Result<Vec<String>> {
        self.inner.run(|a| a.list_groups())
    }

    /// The cluster's state (CLUSTER_STATUS, distributed mode): the Raft
    /// leader, every broker, and every partition's leader, epoch,
    /// committed high-water mark, replicas and ISR. A standalone broker
    /// refuses it with `distribution_not_enabled`.
    pub fn cluster_status(&self) -> Result<ClusterStatus> {
        self.inner.run(|a| a.cluster_status())
    }

    /// Makes `broker_id` (an active in-sync replica) the leader of
    /// `topic`/`partition` (ELECT_LEADER, distributed mode); electing the
    /// current leader again changes nothing (`changed` false). Errors as
    /// in [`crate::admin::Admin::elect_leader`].
    pub fn elect_leader(
        &self,
        topic: &str,
        partition: u32,
        broker_id: &str,
    ) -> Result<LeaderElection> {
        self.inner
            .run(|a| a.elect_leader(topic, partition, broker_id))
    }

    /// The registered brokers (LIST_CLUSTER, distributed mode). A
    /// standalone broker refuses it with `distribution_not_enabled`.
    pub fn list_cluster(&self) -> Result<Vec<ClusterBroker>> {
        self.inner.run(|a| a.list_cluster())
    }

    /// The broker's HELP lines.
    pub fn help(&self) -> Result<Vec<String>> {
        self.inner.run(|a| a.help())
    }

    /// Closes the client (idempotent).
    pub fn close(&self) -> Result<()> {
        self.inner.run(|a| async {
            a.close().await;
            Ok(())
        })
    }
}

/// One step of a transaction, for [`Producer::transaction_async`].
#[derive(Debug, Clone)]
pub enum TransactionStep {
    /// `init_transactions`.
    Init,
    /// `begin_transaction`.
    Begin,
    /// `send_offsets_to_transaction` with these offsets of this group
    /// session (see [`Consumer::group_metadata`] and
    /// [`Consumer::delivered_offsets`]).
    SendOffsets(Vec<(TopicPartition, u64)>, GroupMetadata),
    /// `commit_transaction`.
    Commit,
    /// `abort_transaction`.
    Abort,
}

/// Blocking producer. Cheap to clone; clones share one producer.
#[derive(Debug, Clone)]
pub struct Producer {
    inner: std::sync::Arc<ProcessLocal<AsyncProducer>>,
}

impl Producer {
    /// Connects and starts the sender.
    pub fn connect(config: ProducerConfig) -> Result<Producer> {
        let inner = block_on(AsyncProducer::connect(config))??;
        Ok(Producer {
            inner: std::sync::Arc::new(ProcessLocal::new(inner)),
        })
    }

    /// The async producer this wraps (for bindings with an async API).
    pub fn as_async(&self) -> Result<&AsyncProducer> {
        self.inner.get()
    }

    /// Queues a record (blocking up to `max_block_ms` for buffer space) and
    /// returns its pending delivery.
    pub fn send(&self, record: ProducerRecord) -> Result<Delivery> {
        self.inner.run(|p| p.send(record))
    }

    /// Sends a record and waits for its acknowledgement.
    pub fn send_and_wait(&self, record: ProducerRecord) -> Result<RecordMetadata> {
        let mut delivery = self.send(record)?;
        self.wait(&mut delivery, None)
    }

    /// Queues a record; `callback` is then called exactly once with the
    /// outcome, on this producer's callback thread. If queueing fails, the
    /// error is returned and the callback is never called.
    pub fn send_with_callback<F>(&self, record: ProducerRecord, callback: F) -> Result<()>
    where
        F: FnOnce(Result<RecordMetadata>) + Send + 'static,
    {
        self.inner.run(|p| p.send_with_callback(record, callback))
    }

    /// Queues every record of `records`, in order, in one blocking call
    /// (each waits up to `max_block_ms` for buffer space); `callback` is
    /// then called exactly once, on this producer's callback thread, with
    /// every record's outcome in the order of `records`.
    ///
    /// A record that cannot be queued (an invalid partition, a record too
    /// large, buffer space that stayed full) fails alone: its slot holds
    /// the error and the records after it are still sent. Only a batch
    /// that cannot start (a closed producer, one used after `fork`)
    /// returns an error, and then the callback is never called. `flush`
    /// and `close` wait for the callback as for `send_with_callback`'s.
    pub fn send_batch<F>(&self, records: Vec<ProducerRecord>, callback: F) -> Result<()>
    where
        F: FnOnce(Vec<Result<RecordMetadata>>) + Send + 'static,
    {
        let this = self.inner.get()?;
        if this.is_closed() {
            return Err(Error::closed("producer"));
        }
        // One engine crossing for the whole batch. Each record's outcome
        // lands in its slot on the dispatcher thread, in the order the
        // engine settles them (offset order per partition, as single sends'
        // callbacks); the record settled last runs `callback`, so batches'
        // callbacks keep that order too. The extra count is this call's own:
        // a batch whose records all settled while it was still queueing
        // (or that had none) is handed to the dispatcher below.
        let batch = std::sync::Arc::new(BatchSlots {
            state: std::sync::Mutex::new(BatchState {
                outcomes: (0..records.len()).map(|_| None).collect(),
                remaining: records.len() + 1,
                callback: Some(callback),
            }),
        });
        block_on(async {
            for (i, record) in records.into_iter().enumerate() {
                let slot = std::sync::Arc::clone(&batch);
                let queued = this
                    .send_with_callback(record, move |outcome| {
                        if let Some(done) = slot.settle(i, outcome) {
                            done();
                        }
                    })
                    .await;
                if let Err(e) = queued {
                    // Never the last settlement: this call's count is held.
                    let _ = batch.settle(i, Err(e));
                }
            }
        })?;
        if let Some(done) = batch.release() {
            this.dispatcher().run(done);
        }
        Ok(())
    }

    /// Waits for a pending delivery, at most `timeout` (`None`: no limit).
    /// A timed-out wait returns a timeout error and the delivery continues.
    pub fn wait(
        &self,
        delivery: &mut Delivery,
        timeout: Option<Duration>,
    ) -> Result<RecordMetadata> {
        self.inner.get()?;
        wait_delivery(delivery, timeout)
    }

    /// Obtains the transactional session (see
    /// [`AsyncProducer::init_transactions`]).
    pub fn init_transactions(&self) -> Result<()> {
        self.inner.run(|p| p.init_transactions())
    }

    /// Begins a transaction (see [`AsyncProducer::begin_transaction`]).
    pub fn begin_transaction(&self) -> Result<()> {
        self.inner.run(|p| p.begin_transaction())
    }

    /// Adds consumed offsets of `group`'s session to the open transaction.
    pub fn send_offsets_to_transaction(
        &self,
        offsets: &[(TopicPartition, u64)],
        group: &GroupMetadata,
    ) -> Result<()> {
        self.inner
            .run(|p| p.send_offsets_to_transaction(offsets, group))
    }

    /// Adds what `consumer` delivered to the open transaction (see
    /// [`AsyncProducer::send_consumer_offsets`]).
    pub fn send_consumer_offsets(&self, consumer: &Consumer) -> Result<()> {
        let consumer = consumer.as_async()?;
        self.inner.run(|p| p.send_consumer_offsets(consumer))
    }

    /// Appends an event inside the open transaction (see
    /// [`AsyncProducer::append_stream`]).
    pub fn append_stream(
        &self,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: &Event,
    ) -> Result<Appended> {
        self.inner
            .run(|p| p.append_stream(topic, key, expected_version, event))
    }

    /// Commits the open transaction (see
    /// [`AsyncProducer::commit_transaction`]).
    pub fn commit_transaction(&self) -> Result<()> {
        self.inner.run(|p| p.commit_transaction())
    }

    /// Aborts the open transaction (see
    /// [`AsyncProducer::abort_transaction`]).
    pub fn abort_transaction(&self) -> Result<()> {
        self.inner.run(|p| p.abort_transaction())
    }

    /// Runs one transaction step in the background; `callback` is then
    /// called exactly once with the outcome, on this producer's callback
    /// thread. If starting fails, the error is returned and the callback
    /// is never called.
    pub fn transaction_async<F>(&self, step: TransactionStep, callback: F) -> Result<()>
    where
        F: FnOnce(Result<()>) + Send + 'static,
    {
        let this = self.inner.get()?;
        // Refused at the start, as `Consumer::commit_async` is: the
        // callback runs only for a step that started.
        if this.is_closed() {
            return Err(Error::closed("producer"));
        }
        let producer = this.clone();
        let work = async move {
            match step {
                TransactionStep::Init => producer.init_transactions().await,
                TransactionStep::Begin => producer.begin_transaction().await,
                TransactionStep::SendOffsets(offsets, group) => {
                    producer.send_offsets_to_transaction(&offsets, &group).await
                }
                TransactionStep::Commit => producer.commit_transaction().await,
                TransactionStep::Abort => producer.abort_transaction().await,
            }
        };
        this.dispatcher().run_after(work, callback)
    }

    /// This producer's statistics now.
    pub fn statistics(&self) -> Result<Statistics> {
        Ok(self.inner.get()?.statistics())
    }

    /// Sets (or with `None` clears) the listener of background errors,
    /// called on this producer's callback thread.
    pub fn set_error_listener(&self, listener: Option<ErrorListener>) -> Result<()> {
        self.inner.get()?.set_error_listener(listener);
        Ok(())
    }

    /// Sets (or with `None` clears) the statistics listener, called every
    /// `interval` (`None`: the `statistics_interval_ms` option; zero:
    /// never) on this producer's callback thread.
    pub fn set_statistics_listener(
        &self,
        interval: Option<Duration>,
        listener: Option<StatisticsListener>,
    ) -> Result<()> {
        self.inner
            .get()?
            .set_statistics_listener(interval, listener)
    }

    /// Sends everything queued and waits, at most `timeout` (`None`: no
    /// limit), until every record sent before the call is acknowledged or
    /// failed and its callback has returned. Called from a delivery
    /// callback, it waits for the acknowledgements only: the callbacks
    /// behind the running one cannot run before it returns.
    pub fn flush(&self, timeout: Option<Duration>) -> Result<()> {
        let deadline = deadline_of(timeout);
        self.inner.run(|p| p.flush(timeout))?;
        self.wait_callbacks(deadline, "flush")
    }

    /// Stops taking records, flushes within `timeout` (`None`: no limit),
    /// fails what is left, waits for the callbacks (as `flush` does) and
    /// closes. Closing twice is harmless.
    pub fn close(&self, timeout: Option<Duration>) -> Result<()> {
        let deadline = deadline_of(timeout);
        let closed = self
            .inner
            .run(|p| p.close(timeout.unwrap_or(Duration::MAX)));
        let callbacks = self.wait_callbacks(deadline, "close");
        closed.and(callbacks)
    }

    fn wait_callbacks(&self, deadline: Option<Instant>, what: &str) -> Result<()> {
        let dispatcher = self.inner.get()?.dispatcher();
        if dispatcher.wait_idle(deadline) {
            Ok(())
        } else {
            Err(Error::timeout(format!(
                "{what}: delivery callbacks were still running at the deadline"
            )))
        }
    }
}

/// The outcomes of one `send_batch`, filled in as its records settle.
struct BatchSlots<F> {
    state: std::sync::Mutex<BatchState<F>>,
}

struct BatchState<F> {
    outcomes: Vec<Option<Result<RecordMetadata>>>,
    /// Records not settled yet, plus one while `send_batch` runs.
    remaining: usize,
    callback: Option<F>,
}

impl<F: FnOnce(Vec<Result<RecordMetadata>>) + Send + 'static> BatchSlots<F> {
    /// Records record `i`'s outcome; returns the batch's callback, bound to
    /// every outcome, once nothing remains.
    fn settle(&self, i: usize, outcome: Result<RecordMetadata>) -> Option<impl FnOnce() + Send> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.outcomes[i] = Some(outcome);
        st.remaining -= 1;
        Self::finished(&mut st)
    }

    /// Drops `send_batch`'s own count (every record was handed over).
    fn release(&self) -> Option<impl FnOnce() + Send> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.remaining -= 1;
        Self::finished(&mut st)
    }

    fn finished(st: &mut BatchState<F>) -> Option<impl FnOnce() + Send> {
        if st.remaining > 0 {
            return None;
        }
        let callback = st.callback.take()?;
        let outcomes: Vec<Result<RecordMetadata>> = std::mem::take(&mut st.outcomes)
            .into_iter()
            .map(|o| o.unwrap_or_else(|| Err(Error::internal("a batch record was never settled"))))
            .collect();
        Some(move || callback(outcomes))
    }
}

/// Waits for a delivery on the engine runtime, at most `timeout`.
pub fn wait_delivery(delivery: &mut Delivery, timeout: Option<Duration>) -> Result<RecordMetadata> {
    block_on(async {
        match timeout {
            None => delivery.await,
            Some(t) => tokio::time::timeout(t, delivery).await.map_err(|_| {
                Error::timeout(format!(
                    "delivery not acknowledged within {} ms",
                    t.as_millis()
                ))
            })?,
        }
    })?
}

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
        if self.inner.get()?.in_rebalance_listener() {
            // The listener's poll would wait for the listener to return.
            return Err(Error::invalid_argument(
                "poll cannot be called from the rebalance listener",
            ));
        }
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
        self.inner.get()?.set_rebalance_listener(listener);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unbounded_timeout_has_no_deadline() {
        assert!(deadline_of(Some(Duration::MAX)).is_none());
        assert!(deadline_of(None).is_none());
        assert!(deadline_of(Some(Duration::from_secs(1))).is_some());
    }

    #[test]
    fn a_batch_reports_every_record_once_in_order() {
        let broker = cursus_testkit::TestBroker::start();
        let admin = Admin::connect(ClientConfig::new(&broker.addr)).unwrap();
        admin
            .create_topic(&crate::admin::NewTopic::new("batch").partitions(2))
            .unwrap();
        admin.close().unwrap();
        let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
        let mut records: Vec<ProducerRecord> = (0..10)
            .map(|i| ProducerRecord::new("batch", format!("v{i}")).partition(0))
            .collect();
        // Partition 9 does not exist: that record alone fails.
        records[4] = ProducerRecord::new("batch", "bad").partition(9);
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        let counted = std::sync::Arc::clone(&calls);
        let same = producer.clone();
        producer
            .send_batch(records, move |outcomes| {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let on_dispatcher = same.as_async().unwrap().dispatcher().is_current_thread();
                tx.send((outcomes, on_dispatcher)).unwrap();
            })
            .unwrap();
        // flush waits for the batch's callback.
        producer.flush(Some(Duration::from_secs(20))).unwrap();
        let (outcomes, on_dispatcher) = rx.try_recv().unwrap();
        assert!(on_dispatcher);
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(outcomes.len(), 10);
        let err = outcomes[4].as_ref().unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        let offsets: Vec<u64> = outcomes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 4)
            .map(|(_, o)| {
                let md = o.as_ref().unwrap();
                assert_eq!(md.partition, 0);
                md.offset.unwrap()
            })
            .collect();
        assert_eq!(offsets, (0..9).collect::<Vec<u64>>());

        // Batches' callbacks run in the order their records settle.
        let (tx, rx) = std::sync::mpsc::channel();
        for name in ["a", "b", "c"] {
            let tx = tx.clone();
            let batch = (0..3)
                .map(|_| ProducerRecord::new("batch", name).partition(1))
                .collect();
            producer
                .send_batch(batch, move |outcomes| {
                    let offsets: Vec<u64> = outcomes
                        .iter()
                        .map(|o| o.as_ref().unwrap().offset.unwrap())
                        .collect();
                    tx.send((name, offsets)).unwrap();
                })
                .unwrap();
        }
        // An empty batch calls back too, with nothing.
        let empty = tx.clone();
        producer
            .send_batch(Vec::new(), move |outcomes| {
                assert!(outcomes.is_empty());
                empty.send(("empty", Vec::new())).unwrap();
            })
            .unwrap();
        producer.flush(Some(Duration::from_secs(20))).unwrap();
        let seen: Vec<_> = rx.try_iter().collect();
        assert!(seen.contains(&("empty", Vec::new())));
        let ordered: Vec<_> = seen.into_iter().filter(|(n, _)| *n != "empty").collect();
        assert_eq!(
            ordered,
            vec![
                ("a", vec![0, 1, 2]),
                ("b", vec![3, 4, 5]),
                ("c", vec![6, 7, 8])
            ]
        );

        // A closed producer refuses the batch and never calls back.
        producer.close(Some(Duration::from_secs(5))).unwrap();
        let refused = producer.send_batch(vec![ProducerRecord::new("batch", "x")], |_| {
            panic!("a refused batch has no callback")
        });
        assert_eq!(refused.unwrap_err().kind(), crate::ErrorKind::Closed);
    }
}

/// Blocking event store client (see [`crate::eventstore::EventStore`]).
#[derive(Debug)]
pub struct EventStore {
    inner: ProcessLocal<AsyncEventStore>,
}

impl EventStore {
    /// Connects.
    pub fn connect(config: ClientConfig) -> Result<EventStore> {
        let inner = block_on(AsyncEventStore::connect(config))??;
        Ok(EventStore {
            inner: ProcessLocal::new(inner),
        })
    }

    /// The async event store this wraps (for bindings with an async API).
    pub fn as_async(&self) -> Result<&AsyncEventStore> {
        self.inner.get()
    }

    /// Appends `event` if the aggregate is at `expected_version`.
    pub fn append(
        &self,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: &Event,
    ) -> Result<Appended> {
        self.inner
            .run(|s| s.append(topic, key, expected_version, event))
    }

    /// The aggregate's current version (0 when it has no event).
    pub fn stream_version(&self, topic: &str, key: &str) -> Result<u64> {
        self.inner.run(|s| s.stream_version(topic, key))
    }

    /// Saves a snapshot at `version`.
    pub fn save_snapshot(&self, topic: &str, key: &str, version: u64, state: &str) -> Result<()> {
        self.inner
            .run(|s| s.save_snapshot(topic, key, version, state))
    }

    /// The latest snapshot, if any.
    pub fn read_snapshot(&self, topic: &str, key: &str) -> Result<Option<Snapshot>> {
        self.inner.run(|s| s.read_snapshot(topic, key))
    }

    /// Proves an aggregate's retained events (see
    /// [`AsyncEventStore::replay_proof`]).
    pub fn replay_proof(
        &self,
        topic: &str,
        match_id: &str,
        expected_last_sequence: Option<u64>,
    ) -> Result<ReplayProof> {
        self.inner
            .run(|s| s.replay_proof(topic, match_id, expected_last_sequence))
    }

    /// Reads a range of an aggregate's events under a proof (see
    /// [`AsyncEventStore::event_range`]).
    pub fn event_range(
        &self,
        topic: &str,
        match_id: &str,
        from_sequence: u64,
        to_sequence: u64,
        max_records: Option<u32>,
    ) -> Result<(ReplayProof, Vec<RangeEvent>)> {
        self.inner
            .run(|s| s.event_range(topic, match_id, from_sequence, to_sequence, max_records))
    }

    /// The next page of `cursor` (`None` once it is done).
    pub fn next_page(&self, cursor: &mut Cursor) -> Result<Option<Page>> {
        self.inner.run(|s| s.next_page(cursor))
    }

    /// Every page of a stream read: the snapshot and the events after it.
    pub fn read_stream(
        &self,
        topic: &str,
        key: &str,
        from_version: u64,
    ) -> Result<(Option<Snapshot>, Vec<StoredEvent>)> {
        self.inner.run(|s| s.read_stream(topic, key, from_version))
    }

    /// Loads an aggregate (see [`Aggregate::load`]).
    pub fn load_aggregate(
        &self,
        topic: &str,
        key: &str,
        snapshot_every: u64,
    ) -> Result<(Aggregate, Option<Snapshot>, Vec<StoredEvent>)> {
        self.inner
            .run(|s| Aggregate::load(s, topic, key, snapshot_every))
    }

    /// Appends at the aggregate's version (see [`Aggregate::append`]).
    pub fn append_to(&self, aggregate: &mut Aggregate, event: &Event) -> Result<Appended> {
        self.inner.run(|s| aggregate.append(s, event))
    }

    /// Saves the aggregate's snapshot (see [`Aggregate::save_snapshot`]).
    pub fn save_aggregate_snapshot(&self, aggregate: &mut Aggregate, state: &str) -> Result<()> {
        self.inner.run(|s| aggregate.save_snapshot(s, state))
    }

    /// Closes; later calls fail with `closed`.
    pub fn close(&self) -> Result<()> {
        self.inner.run(|s| async {
            s.close().await;
            Ok(())
        })
    }
}
