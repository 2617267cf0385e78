//! The blocking producer: sends, batches, transactions and the wait for
//! its delivery callbacks.

use std::time::{Duration, Instant};

use super::{deadline_of, Consumer, ProcessLocal};
use crate::config::ProducerConfig;
use crate::consumer::TopicPartition;
use crate::error::{Error, Result};
use crate::events::{ErrorListener, StatisticsListener};
use crate::eventstore::{Appended, Event};
use crate::producer::{
    Delivery, GroupMetadata, Producer as AsyncProducer, ProducerRecord, RecordMetadata,
};
use crate::runtime::block_on;
use crate::stats::Statistics;

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
        // One engine crossing for the whole batch.
        block_on(this.send_batch(records, callback))?
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

    /// Starts [`Producer::append_stream`] in the background, without a
    /// thread per call; `callback` is then called exactly once with the
    /// outcome, on this producer's callback thread. If starting fails (a
    /// closed producer), the error is returned and the callback is never
    /// called.
    pub fn append_stream_async<F>(
        &self,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: Event,
        callback: F,
    ) -> Result<()>
    where
        F: FnOnce(Result<Appended>) + Send + 'static,
    {
        let this = self.inner.get()?;
        if this.is_closed() {
            return Err(Error::closed("producer"));
        }
        let producer = this.clone();
        let (topic, key) = (topic.to_owned(), key.to_owned());
        let work = async move {
            producer
                .append_stream(&topic, &key, expected_version, &event)
                .await
        };
        this.dispatcher().run_after(work, callback)
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
