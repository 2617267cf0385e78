//! Sends handed over in call order ([`Producer::send_in_order`]).
//!
//! `send` is async because queueing may wait for topic metadata or buffer
//! space; a caller that cannot await each send before the next (an asyncio
//! `send` returning an awaitable, a callback) would otherwise let two
//! records of one partition overtake each other. `send_in_order` fixes the
//! order when it is called:
//!
//! - fast path: nothing is waiting, the topic's metadata is cached and
//!   buffer memory is free, so the record is queued at once, on the
//!   caller's thread, without a task;
//! - otherwise it joins a FIFO waiting room that one worker task per
//!   producer empties in order, each record waiting for memory at most
//!   `max_block_ms` from its call.
//!
//! `flush` and `close` count the waiting room as queued, so they cover
//! every record handed over before them.

use super::reply::Reply;
use super::{Admission, Producer, ProducerRecord};
use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::time::Instant;

/// The waiting room of one producer.
#[derive(Default)]
pub(super) struct Ordered {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    waiting: VecDeque<Waiting>,
    /// A worker task is emptying the room (it may hold one record).
    worker: bool,
}

struct Waiting {
    record: ProducerRecord,
    reply: Reply,
    deadline: Instant,
}

impl Ordered {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Nothing waits to be queued.
    pub(super) fn is_idle(&self) -> bool {
        let state = self.lock();
        state.waiting.is_empty() && !state.worker
    }

    /// Fails every record still waiting (at close).
    pub(super) fn fail_all(&self, error: &Error) {
        let waiting: Vec<Waiting> = self.lock().waiting.drain(..).collect();
        for w in waiting {
            w.reply.send(Err(error.clone()));
        }
    }
}

impl Producer {
    /// The synchronous half of `send_in_order`: queues the record now or
    /// puts it in the waiting room.
    pub(super) fn admit_in_order(&self, record: ProducerRecord, reply: Reply) -> Result<()> {
        self.check_admission(Admission::New)?;
        let size = self.check_record(&record)?;
        let shared = &self.shared;
        let mut state = shared.ordered.lock();
        if state.waiting.is_empty() && !state.worker {
            if let Some(metadata) = shared.cluster.cached_metadata(&record.topic) {
                let partition = self.partition_in(&record, &metadata.topic)?;
                if let Ok(permit) = Arc::clone(&shared.memory).try_acquire_many_owned(size as u32) {
                    return self.push(record, partition, size, permit, Admission::New, || reply);
                }
            }
        }
        state.waiting.push_back(Waiting {
            record,
            reply,
            deadline: self.block_deadline(),
        });
        if !state.worker {
            state.worker = true;
            shared.runtime.spawn(worker(self.clone()));
        }
        Ok(())
    }
}

/// Queues the waiting records in order, then ends.
async fn worker(producer: Producer) {
    loop {
        let next = {
            let mut state = producer.shared.ordered.lock();
            match state.waiting.pop_front() {
                Some(w) => w,
                None => {
                    state.worker = false;
                    break;
                }
            }
        };
        let mut reply = Some(next.reply);
        let queued = producer
            .enqueue(next.record, Admission::HandedOver, next.deadline, || {
                reply.take().expect("the reply is built once")
            })
            .await;
        if let (Err(e), Some(reply)) = (queued, reply.take()) {
            reply.send(Err(e));
        }
    }
    producer.shared.drained.notify_waiters();
}
