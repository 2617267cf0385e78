//! How a queued record reports its outcome: to an awaiting [`Delivery`]
//! future, or to a callback run on the producer's dispatcher thread.
//!
//! The sender completes the records of a batch in order on an I/O thread;
//! a callback reply only hands a job to the dispatcher there, so callbacks
//! of one partition run in offset order and never on an I/O thread.

use super::{Delivery, RecordMetadata};
use crate::dispatch::{Dispatcher, Promise};
use crate::error::{Error, Result};
use std::sync::Mutex;
use tokio::sync::oneshot;

/// A delivery callback.
pub(crate) type Callback = Box<dyn FnOnce(Result<RecordMetadata>) + Send + 'static>;

/// Where a record's outcome goes.
pub(crate) enum Reply {
    /// To the [`Delivery`] future returned by `send`.
    Future(oneshot::Sender<Result<RecordMetadata>>),
    /// To a callback, on the dispatcher thread.
    Callback(CallbackReply),
}

impl Reply {
    /// A reply for a `Delivery` future, and the future.
    pub(crate) fn future() -> (Reply, Delivery) {
        let (tx, rx) = oneshot::channel();
        (Reply::Future(tx), Delivery { rx })
    }

    /// A reply that runs `callback` on `dispatcher` (pending from now on).
    pub(crate) fn callback(dispatcher: &Dispatcher, callback: Callback) -> Reply {
        Reply::Callback(CallbackReply {
            promise: Some(dispatcher.promise()),
            callback: Mutex::new(Some(callback)),
        })
    }

    /// Reports the outcome (never blocks, never runs user code here).
    pub(crate) fn send(self, outcome: Result<RecordMetadata>) {
        match self {
            Reply::Future(tx) => {
                let _ = tx.send(outcome);
            }
            Reply::Callback(mut c) => c.fulfil(outcome),
        }
    }
}

/// A callback with its place in the dispatcher's queue reserved. Runs
/// exactly once: dropped unsent (the producer went away), it reports
/// `closed`.
pub(crate) struct CallbackReply {
    promise: Option<Promise>,
    /// In a mutex only so that queued records are `Sync` (the sender holds
    /// them across awaits); it is never contended.
    callback: Mutex<Option<Callback>>,
}

impl CallbackReply {
    fn fulfil(&mut self, outcome: Result<RecordMetadata>) {
        let callback = self
            .callback
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let (Some(promise), Some(callback)) = (self.promise.take(), callback) {
            promise.fulfil(move || callback(outcome));
        }
    }
}

impl Drop for CallbackReply {
    fn drop(&mut self) {
        self.fulfil(Err(Error::closed("producer")));
    }
}
