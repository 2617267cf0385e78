//! The asyncio producer's submission queue.
//!
//! asyncio's `send` returns one awaitable for "queued and acknowledged", and
//! the engine's enqueue step is itself async (it may wait for metadata or
//! buffer space). Spawning one engine task per send let two records of one
//! partition overtake each other, and let `flush` or `close` run before
//! records sent earlier were even queued. Every send, flush and close of an
//! `AsyncProducer` goes through this FIFO instead: one worker task per
//! producer performs them in call order, so records keep their order and a
//! flush or close covers every record sent before it. Cancelling the
//! awaitable of a send does not take back a record already handed over.

use cursus::producer::{Delivery, Producer, ProducerRecord, RecordMetadata};
use cursus::{Error, Result};
use std::future::Future;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

enum Op {
    Send(ProducerRecord, oneshot::Sender<Result<Delivery>>),
    Flush(Option<Duration>, oneshot::Sender<Result<()>>),
    Close(Duration, oneshot::Sender<Result<()>>),
}

/// A producer whose operations take effect in the order they are called.
#[derive(Clone)]
pub(crate) struct OrderedProducer {
    queue: mpsc::UnboundedSender<Op>,
}

impl OrderedProducer {
    /// Starts the worker on the engine runtime.
    pub(crate) fn start(producer: Producer) -> Result<OrderedProducer> {
        let (queue, ops) = mpsc::unbounded_channel();
        cursus::blocking::spawn(worker(producer, ops))?;
        Ok(OrderedProducer { queue })
    }

    /// Hands the record over now (call order is queue order); the future
    /// resolves once it is acknowledged.
    pub(crate) fn send(
        &self,
        record: ProducerRecord,
    ) -> impl Future<Output = Result<RecordMetadata>> + Send + 'static {
        let queued = self.submit(move |reply| Op::Send(record, reply));
        async move { queued.await?.await }
    }

    /// Flushes everything sent before this call (and whatever is queued
    /// when the flush runs).
    pub(crate) fn flush(
        &self,
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<()>> + Send + 'static {
        self.submit(move |reply| Op::Flush(timeout, reply))
    }

    /// Closes after every record sent before this call was queued.
    pub(crate) fn close(
        &self,
        timeout: Duration,
    ) -> impl Future<Output = Result<()>> + Send + 'static {
        self.submit(move |reply| Op::Close(timeout, reply))
    }

    fn submit<T: Send + 'static>(
        &self,
        op: impl FnOnce(oneshot::Sender<Result<T>>) -> Op,
    ) -> impl Future<Output = Result<T>> + Send + 'static {
        let (reply, outcome) = oneshot::channel();
        let queued = self.queue.send(op(reply)).is_ok();
        async move {
            if !queued {
                return Err(Error::closed("producer"));
            }
            // The worker ends (dropping `reply`) only after the producer closed.
            outcome
                .await
                .unwrap_or_else(|_| Err(Error::closed("producer")))
        }
    }
}

async fn worker(producer: Producer, mut ops: mpsc::UnboundedReceiver<Op>) {
    while let Some(op) = ops.recv().await {
        match op {
            Op::Send(record, reply) => {
                let _ = reply.send(producer.send(record).await);
            }
            // Runs beside later sends: it only has to start after the
            // records before it were queued.
            Op::Flush(timeout, reply) => {
                let producer = producer.clone();
                tokio::spawn(async move {
                    let _ = reply.send(producer.flush(timeout).await);
                });
            }
            // Later sends still queued then fail with `closed` in order.
            Op::Close(timeout, reply) => {
                let _ = reply.send(producer.close(timeout).await);
            }
        }
    }
}
