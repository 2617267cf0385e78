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

use super::reply::{own_slot, Want};
use super::{Admission, Delivery, Producer, ProducerRecord, Pushed};
use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use tokio::time::Instant;

/// The waiting room of one producer.
#[derive(Default)]
pub(super) struct Ordered {
    state: Mutex<State>,
    /// Records wait or a worker runs (mirrors `State`, set under its
    /// lock): while false a send may skip the room without locking it.
    busy: AtomicBool,
}

#[derive(Default)]
struct State {
    waiting: VecDeque<Waiting>,
    /// A worker task is emptying the room (it may hold one record).
    worker: bool,
}

struct Waiting {
    record: ProducerRecord,
    want: Want,
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
            w.want.fail(error);
        }
    }
}

impl Producer {
    /// The synchronous half of `send_in_order`: queues the record now or
    /// puts it in the waiting room; returns its delivery.
    pub(super) fn admit_in_order(&self, record: ProducerRecord) -> Result<Delivery> {
        self.check_admission(Admission::New)?;
        let size = self.check_record(&record)?;
        let shared = &self.shared;
        // Fast path, without a task: nothing waits before this record (a
        // record of the same caller in the room set `busy` before its call
        // returned), the metadata is cached and memory is free.
        let record = if shared.ordered.busy.load(Ordering::SeqCst) {
            record
        } else {
            match shared.memory.try_acquire_many(size as u32) {
                Ok(permit) => match self.push(record, size, Admission::New, Want::Delivery)? {
                    Pushed::Queued(delivery) => {
                        permit.forget();
                        return Ok(delivery.expect("a delivery was wanted"));
                    }
                    Pushed::NoMetadata(record, _) => record,
                },
                Err(_) => record,
            }
        };
        let (slot, delivery) = own_slot(&record.topic, shared);
        let mut state = shared.ordered.lock();
        state.waiting.push_back(Waiting {
            record,
            want: Want::Forward(slot),
            deadline: self.block_deadline(),
        });
        shared.ordered.busy.store(true, Ordering::SeqCst);
        if !state.worker {
            state.worker = true;
            shared.runtime.spawn(worker(self.clone()));
        }
        Ok(delivery)
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
                    producer.shared.ordered.busy.store(false, Ordering::SeqCst);
                    break;
                }
            }
        };
        let Want::Forward(slot) = next.want else {
            unreachable!("the waiting room holds forwarded replies only")
        };
        let queued = producer
            .enqueue(
                next.record,
                Admission::HandedOver,
                Some(next.deadline),
                Want::Forward(std::sync::Arc::clone(&slot)),
            )
            .await;
        if let Err(e) = queued {
            Want::Forward(slot).fail(&e);
        }
    }
    producer.shared.drained.notify_waiters();
}
