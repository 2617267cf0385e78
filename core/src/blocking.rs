//! The synchronous facade the C, Python and Java layers call.
//!
//! One multi-threaded tokio runtime is started lazily for the whole process
//! and shared by every object; each blocking call runs its future on it.
//! Delivery callbacks run on the runtime's worker threads while no engine
//! lock is held, so a callback may call back into the library.
//!
//! Two misuses fail with a clear error instead of hanging or panicking:
//! calling a blocking method from inside an async runtime, and using an
//! object in a process `fork()`ed after the object was created (the
//! runtime's threads do not survive a fork).

use crate::admin::Admin as AsyncAdmin;
use crate::config::{ClientConfig, ProducerConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::producer::{Delivery, Producer as AsyncProducer, ProducerRecord, RecordMetadata};
use crate::protocol::admin::{
    DeleteOutcome, GroupStatus, NewTopic, PartitionOffsets, TopicDescription, TopicInfo,
    TopicMetadata, TruncateOutcome,
};
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

struct Engine {
    runtime: tokio::runtime::Runtime,
    pid: u32,
}

fn engine() -> Result<&'static Engine> {
    static ENGINE: OnceLock<std::result::Result<Engine, String>> = OnceLock::new();
    let engine = ENGINE
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("cursus-engine")
                .enable_all()
                .build()
                .map(|runtime| Engine {
                    runtime,
                    pid: std::process::id(),
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::internal(format!("cannot start the engine runtime: {e}")))?;
    check_pid(engine.pid)?;
    Ok(engine)
}

fn check_pid(pid: u32) -> Result<()> {
    if std::process::id() != pid {
        return Err(Error::new(
            ErrorKind::Closed,
            "this object was created before fork(); create a new client in the child process",
        )
        .with_code("used_after_fork"));
    }
    Ok(())
}

/// Runs `future` to completion on the engine runtime.
pub fn block_on<F: Future>(future: F) -> Result<F::Output> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::invalid_argument(
            "a blocking Cursus call was made from inside an async runtime; use the async API there",
        ));
    }
    Ok(engine()?.runtime.block_on(future))
}

/// Spawns `future` on the engine runtime (for completion callbacks).
pub fn spawn<F>(future: F) -> Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    engine()?.runtime.spawn(future);
    Ok(())
}

/// A handle to the engine runtime, for bindings that bridge its futures
/// into another event loop (e.g. asyncio).
pub fn runtime_handle() -> Result<tokio::runtime::Handle> {
    Ok(engine()?.runtime.handle().clone())
}

/// Guards every call of an object: the process must be the one that
/// created it.
#[derive(Debug, Clone, Copy)]
struct Owner {
    pid: u32,
}

impl Owner {
    fn new() -> Self {
        Owner {
            pid: std::process::id(),
        }
    }

    fn run<F: Future<Output = Result<T>>, T>(&self, future: F) -> Result<T> {
        check_pid(self.pid)?;
        block_on(future)?
    }
}

/// Blocking admin client.
#[derive(Debug)]
pub struct Admin {
    inner: AsyncAdmin,
    owner: Owner,
}

impl Admin {
    /// Connects (see [`crate::admin::Admin::connect`]).
    pub fn connect(config: ClientConfig) -> Result<Admin> {
        let inner = block_on(AsyncAdmin::connect(config))??;
        Ok(Admin {
            inner,
            owner: Owner::new(),
        })
    }

    /// Creates or patches a topic.
    pub fn create_topic(&self, topic: &NewTopic) -> Result<TopicInfo> {
        self.owner.run(self.inner.create_topic(topic))
    }

    /// Replaces the min_in_sync_replicas override (`None` = broker default).
    pub fn alter_topic_config(
        &self,
        topic: &str,
        min_in_sync_replicas: Option<u32>,
    ) -> Result<TopicInfo> {
        self.owner
            .run(self.inner.alter_topic_config(topic, min_in_sync_replicas))
    }

    /// Deletes a topic.
    pub fn delete_topic(&self, topic: &str, if_exists: bool) -> Result<DeleteOutcome> {
        self.owner.run(self.inner.delete_topic(topic, if_exists))
    }

    /// Truncates a topic at its current revision.
    pub fn truncate_topic(&self, topic: &str, expected_revision: u64) -> Result<TruncateOutcome> {
        self.owner
            .run(self.inner.truncate_topic(topic, expected_revision))
    }

    /// Lists topic names.
    pub fn list_topics(&self) -> Result<Vec<String>> {
        self.owner.run(self.inner.list_topics())
    }

    /// DESCRIBE.
    pub fn describe_topic(&self, topic: &str) -> Result<TopicDescription> {
        self.owner.run(self.inner.describe_topic(topic))
    }

    /// METADATA.
    pub fn metadata(&self, topic: &str) -> Result<TopicMetadata> {
        self.owner.run(self.inner.metadata(topic))
    }

    /// LIST_OFFSETS.
    pub fn list_offsets(
        &self,
        topic: &str,
        partition: Option<u32>,
    ) -> Result<Vec<PartitionOffsets>> {
        self.owner.run(self.inner.list_offsets(topic, partition))
    }

    /// GROUP_STATUS.
    pub fn group_status(&self, group: &str) -> Result<GroupStatus> {
        self.owner.run(self.inner.group_status(group))
    }

    /// LIST_GROUPS.
    pub fn list_groups(&self) -> Result<Vec<String>> {
        self.owner.run(self.inner.list_groups())
    }

    /// HELP.
    pub fn help(&self) -> Result<Vec<String>> {
        self.owner.run(self.inner.help())
    }

    /// Closes the client (idempotent).
    pub fn close(&self) -> Result<()> {
        self.owner.run(async {
            self.inner.close().await;
            Ok(())
        })
    }
}

/// Blocking producer.
#[derive(Debug, Clone)]
pub struct Producer {
    inner: AsyncProducer,
    owner: Owner,
}

impl Producer {
    /// Connects and starts the sender.
    pub fn connect(config: ProducerConfig) -> Result<Producer> {
        let inner = block_on(AsyncProducer::connect(config))??;
        Ok(Producer {
            inner,
            owner: Owner::new(),
        })
    }

    /// The async producer this wraps (for bindings with an async API).
    pub fn as_async(&self) -> &AsyncProducer {
        &self.inner
    }

    /// Queues a record (blocking up to `max_block_ms` for buffer space) and
    /// returns its pending delivery.
    pub fn send(&self, record: ProducerRecord) -> Result<Delivery> {
        self.owner.run(self.inner.send(record))
    }

    /// Sends a record and waits for its acknowledgement.
    pub fn send_and_wait(&self, record: ProducerRecord) -> Result<RecordMetadata> {
        let delivery = self.send(record)?;
        self.owner.run(delivery)
    }

    /// Queues a record and calls `callback` with its outcome on an engine
    /// thread. The callback runs exactly once, unless queueing itself fails,
    /// which is returned instead and the callback is never called.
    pub fn send_with_callback<F>(&self, record: ProducerRecord, callback: F) -> Result<()>
    where
        F: FnOnce(Result<RecordMetadata>) + Send + 'static,
    {
        let delivery = self.send(record)?;
        spawn(async move { callback(delivery.await) })
    }

    /// Waits for a pending delivery, at most `timeout` (`None`: no limit).
    /// A timed-out wait returns a timeout error and the delivery continues.
    pub fn wait(
        &self,
        delivery: &mut Delivery,
        timeout: Option<Duration>,
    ) -> Result<RecordMetadata> {
        self.owner.run(async {
            match timeout {
                None => delivery.await,
                Some(t) => tokio::time::timeout(t, delivery).await.map_err(|_| {
                    Error::timeout(format!(
                        "delivery not acknowledged within {} ms",
                        t.as_millis()
                    ))
                })?,
            }
        })
    }

    /// Sends everything queued and waits for it (see the async `flush`).
    pub fn flush(&self, timeout: Option<Duration>) -> Result<()> {
        self.owner.run(self.inner.flush(timeout))
    }

    /// Flushes within `timeout`, then closes (idempotent).
    pub fn close(&self, timeout: Duration) -> Result<()> {
        self.owner.run(self.inner.close(timeout))
    }
}

/// Blocking group consumer.
#[derive(Debug)]
pub struct Consumer {
    inner: crate::consumer::Consumer,
    owner: Owner,
}

impl Consumer {
    /// Connects (see [`crate::consumer::Consumer::connect`]).
    pub fn connect(config: crate::config::ConsumerConfig) -> Result<Consumer> {
        let inner = block_on(crate::consumer::Consumer::connect(config))??;
        Ok(Consumer {
            inner,
            owner: Owner::new(),
        })
    }

    /// The async consumer this wraps (for bindings with an async API).
    pub fn as_async(&self) -> &crate::consumer::Consumer {
        &self.inner
    }

    /// Subscribes to topics.
    pub fn subscribe(&self, topics: &[String]) -> Result<()> {
        self.owner.run(
            self.inner
                .subscribe(crate::consumer::Subscription::Topics(topics.to_vec())),
        )
    }

    /// Subscribes to every topic matching a glob pattern.
    pub fn subscribe_pattern(&self, pattern: &str) -> Result<()> {
        self.owner.run(
            self.inner
                .subscribe(crate::consumer::Subscription::Pattern(pattern.to_owned())),
        )
    }

    /// Polls for records, waiting at most `timeout`. Bindings that must
    /// react to signals call this with short timeouts in a loop.
    pub fn poll(&self, timeout: Duration) -> Result<Vec<crate::consumer::ConsumerRecord>> {
        self.owner.run(self.inner.poll(timeout))
    }

    /// Commits delivered positions synchronously (COMMIT_OFFSET).
    pub fn commit_sync(&self) -> Result<()> {
        self.owner.run(self.inner.commit_sync())
    }

    /// Commits explicit next offsets synchronously.
    pub fn commit_offsets(
        &self,
        offsets: &[(crate::protocol::group::TopicPartition, u64)],
    ) -> Result<()> {
        self.owner.run(self.inner.commit_offsets(offsets))
    }

    /// Commits delivered positions in the background (BATCH_COMMIT) and
    /// calls `callback` with the outcome on an engine thread.
    pub fn commit_async<F>(&self, callback: F) -> Result<()>
    where
        F: FnOnce(Result<()>) + Send + 'static,
    {
        let handle = self.owner.run(self.inner.commit_async())?;
        spawn(async move {
            let outcome = handle
                .await
                .unwrap_or_else(|e| Err(Error::internal(format!("commit task failed: {e}"))));
            callback(outcome)
        })
    }

    /// The committed next offset of a partition, if any.
    pub fn committed(&self, tp: &crate::protocol::group::TopicPartition) -> Result<Option<u64>> {
        self.owner.run(self.inner.committed(tp))
    }

    /// The assigned partitions.
    pub fn assignment(&self) -> Result<Vec<crate::protocol::group::TopicPartition>> {
        self.owner.run(self.inner.assignment())
    }

    /// Commits (with auto-commit), leaves the group and closes (idempotent).
    pub fn close(&self) -> Result<()> {
        self.owner.run(self.inner.close())
    }
}
