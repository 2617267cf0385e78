//! How queued records report their outcome, settled once per batch.
//!
//! A batch being formed in a partition's queue owns one [`Replies`]: a
//! shared [`Slot`] that every [`Delivery`] of the batch points into (an
//! index, no channel or allocation per record), and the batch's delivery
//! callbacks with one dispatcher [`Promise`] for all of them. When the
//! broker answers, the sender settles the batch once: it stores the
//! outcome in the slot (waking the deliveries being awaited) and hands one
//! job to the dispatcher that runs the batch's callbacks in offset order,
//! so callbacks never run on an I/O thread.
//!
//! A record handed to `send_in_order` that has to wait for buffer space
//! gets a slot of its own before it is queued; once queued, its batch
//! forwards the record's outcome to that slot.

use super::{Delivery, RecordMetadata, Shared};
use crate::dispatch::Promise;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};

/// A delivery callback.
pub(crate) type Callback = Box<dyn FnOnce(Result<RecordMetadata>) + Send + 'static>;

/// Where the records of a published batch were stored.
#[derive(Debug, Clone)]
pub(super) enum Stored {
    /// Consecutively, ending at this offset (`None` with acks=0).
    Ending(Option<u64>),
    /// Record by record (transactions: one TXN_PUBLISH per record).
    Each(Vec<u64>),
}

impl Stored {
    /// The offset of record `i` of `n`.
    pub(super) fn offset(&self, i: usize, n: usize) -> Option<u64> {
        match self {
            Stored::Ending(last) => last.map(|last| last + 1 + i as u64 - n as u64),
            Stored::Each(offsets) => offsets.get(i).copied(),
        }
    }
}

/// What a settled slot holds.
#[derive(Debug, Clone)]
enum Settled {
    /// A batch of `n` records of `partition`, stored as `stored`.
    Batch {
        partition: u32,
        stored: Stored,
        n: usize,
    },
    /// One record's own outcome (a slot of its own).
    One(RecordMetadata),
}

/// The outcome of a batch, shared by the deliveries of its records.
pub(crate) struct Slot {
    topic: String,
    state: Mutex<SlotState>,
    /// A delivery is being awaited: the sender sends the batch holding it
    /// without waiting out `linger_ms`.
    expedite: AtomicBool,
    /// The producer, to wake its sender when a delivery is first awaited.
    producer: Weak<Shared>,
}

#[derive(Default)]
struct SlotState {
    outcome: Option<std::result::Result<Settled, Error>>,
    /// Deliveries being awaited.
    wakers: Vec<Waker>,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot").field("topic", &self.topic).finish()
    }
}

impl Slot {
    pub(super) fn new(topic: String, producer: Weak<Shared>) -> Arc<Slot> {
        Arc::new(Slot {
            topic,
            state: Mutex::new(SlotState::default()),
            expedite: AtomicBool::new(false),
            producer,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A delivery waits on this slot.
    pub(super) fn expedited(&self) -> bool {
        self.expedite.load(Ordering::Relaxed)
    }

    fn settle(&self, outcome: std::result::Result<Settled, Error>) {
        let wakers = {
            let mut state = self.lock();
            if state.outcome.is_some() {
                return;
            }
            state.outcome = Some(outcome);
            std::mem::take(&mut state.wakers)
        };
        for w in wakers {
            w.wake();
        }
    }

    /// Record `index`'s outcome, or registers `cx` to be woken with it.
    pub(super) fn poll(
        &self,
        index: usize,
        timestamp: i64,
        cx: &mut Context<'_>,
    ) -> Poll<Result<RecordMetadata>> {
        {
            let mut state = self.lock();
            match &state.outcome {
                Some(Ok(Settled::Batch {
                    partition,
                    stored,
                    n,
                })) => {
                    return Poll::Ready(Ok(RecordMetadata {
                        topic: self.topic.clone(),
                        partition: *partition,
                        offset: stored.offset(index, *n),
                        timestamp,
                    }))
                }
                Some(Ok(Settled::One(m))) => return Poll::Ready(Ok(m.clone())),
                Some(Err(e)) => return Poll::Ready(Err(e.clone())),
                None => {
                    if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
                        state.wakers.push(cx.waker().clone());
                    }
                }
            }
        }
        // Awaited for the first time: ask the sender to send this batch
        // now rather than at the end of its linger.
        if !self.expedite.swap(true, Ordering::Relaxed) {
            if let Some(shared) = self.producer.upgrade() {
                shared.wake.notify_one();
            }
        }
        Poll::Pending
    }
}

/// The outcome destinations of one batch. Dropped unsettled (the producer
/// went away), it reports `closed` to every record.
pub(super) struct Replies {
    /// Created with the batch's first `Delivery`.
    slot: Option<Arc<Slot>>,
    /// One dispatcher promise for all the batch's callbacks.
    promise: Option<Promise>,
    /// `(index in the batch, timestamp, callback)`. In a mutex only so
    /// that a batch is `Sync` (the sender holds it across awaits); only
    /// ever reached through `get_mut`, never locked.
    callbacks: Mutex<Vec<(u32, i64, Callback)>>,
    /// Records with a slot of their own: `(index, timestamp, slot)`.
    forwards: Vec<(u32, i64, Arc<Slot>)>,
    /// Records in the batch so far.
    len: u32,
}

/// Where one record's outcome goes.
pub(super) enum Want {
    /// A [`Delivery`], returned by the push.
    Delivery,
    /// A callback run on the dispatcher.
    Callback(Callback),
    /// A delivery handed out before the record was queued.
    Forward(Arc<Slot>),
}

impl Want {
    /// Reports `error` for a record that was not queued (a callback is
    /// never called then: the caller got the error).
    pub(super) fn fail(self, error: &Error) {
        if let Want::Forward(slot) = self {
            slot.settle(Err(error.clone()));
        }
    }
}

impl Replies {
    pub(super) fn new() -> Replies {
        Replies {
            slot: None,
            promise: None,
            callbacks: Mutex::new(Vec::new()),
            forwards: Vec::new(),
            len: 0,
        }
    }

    /// Adds the next record of the batch; returns its delivery when one
    /// is wanted.
    pub(super) fn add(
        &mut self,
        want: Want,
        timestamp: i64,
        topic: &str,
        shared: &Arc<Shared>,
    ) -> Option<Delivery> {
        let index = self.len;
        self.len += 1;
        match want {
            Want::Delivery => {
                let slot = self
                    .slot
                    .get_or_insert_with(|| Slot::new(topic.to_owned(), Arc::downgrade(shared)));
                Some(Delivery::batch(Arc::clone(slot), index as usize, timestamp))
            }
            Want::Callback(callback) => {
                if self.promise.is_none() {
                    self.promise = Some(shared.dispatcher.promise());
                }
                callbacks_of(&mut self.callbacks).push((index, timestamp, callback));
                None
            }
            Want::Forward(slot) => {
                if slot.expedited() {
                    // Already awaited: keep the batch expedited too.
                    self.slot
                        .get_or_insert_with(|| Slot::new(topic.to_owned(), Arc::downgrade(shared)))
                        .expedite
                        .store(true, Ordering::Relaxed);
                }
                self.forwards.push((index, timestamp, slot));
                None
            }
        }
    }

    /// A delivery of this batch is awaited.
    pub(super) fn expedited(&self) -> bool {
        self.slot.as_ref().is_some_and(|s| s.expedited())
            || self.forwards.iter().any(|(_, _, s)| s.expedited())
    }

    /// Reports the batch's outcome to every record: one slot update and
    /// one dispatcher job for all the callbacks. Never runs user code here.
    pub(super) fn settle(
        mut self,
        topic: &str,
        partition: u32,
        result: std::result::Result<&Stored, &Error>,
    ) {
        let n = self.len as usize;
        if let Some(slot) = self.slot.take() {
            slot.settle(match result {
                Ok(stored) => Ok(Settled::Batch {
                    partition,
                    stored: stored.clone(),
                    n,
                }),
                Err(e) => Err(e.clone()),
            });
        }
        let metadata = |index: u32, timestamp: i64| -> Result<RecordMetadata> {
            match result {
                Ok(stored) => Ok(RecordMetadata {
                    topic: topic.to_owned(),
                    partition,
                    offset: stored.offset(index as usize, n),
                    timestamp,
                }),
                Err(e) => Err(e.clone()),
            }
        };
        for (index, timestamp, slot) in std::mem::take(&mut self.forwards) {
            slot.settle(metadata(index, timestamp).map(Settled::One));
        }
        let callbacks = std::mem::take(callbacks_of(&mut self.callbacks));
        if let Some(promise) = self.promise.take() {
            let (topic, result) = (topic.to_owned(), result.cloned().map_err(Clone::clone));
            promise.fulfil(move || {
                for (index, timestamp, callback) in callbacks {
                    callback(match &result {
                        Ok(stored) => Ok(RecordMetadata {
                            topic: topic.clone(),
                            partition,
                            offset: stored.offset(index as usize, n),
                            timestamp,
                        }),
                        Err(e) => Err(e.clone()),
                    });
                }
            });
        }
    }

    /// Fails every record of the batch with `error`.
    pub(super) fn fail(self, topic: &str, partition: u32, error: &Error) {
        self.settle(topic, partition, Err(error))
    }
}

impl Drop for Replies {
    fn drop(&mut self) {
        if self.slot.is_some() || self.promise.is_some() || !self.forwards.is_empty() {
            let replies = std::mem::replace(self, Replies::new());
            replies.fail("", 0, &Error::closed("producer"));
        }
    }
}

fn callbacks_of(
    callbacks: &mut Mutex<Vec<(u32, i64, Callback)>>,
) -> &mut Vec<(u32, i64, Callback)> {
    callbacks.get_mut().unwrap_or_else(|p| p.into_inner())
}

/// A slot of its own for a record not queued yet, and its delivery.
pub(super) fn own_slot(topic: &str, shared: &Arc<Shared>) -> (Arc<Slot>, Delivery) {
    let slot = Slot::new(topic.to_owned(), Arc::downgrade(shared));
    (Arc::clone(&slot), Delivery::batch(slot, 0, 0))
}
