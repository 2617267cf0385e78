//! `send_batch`: many records in one call, one callback with every outcome.

use super::{Producer, ProducerRecord, RecordMetadata};
use crate::error::{Error, Result};

impl Producer {
    /// Queues every record of `records`, in order, in one call (each waits
    /// up to `max_block_ms` for buffer space); `callback` is then called
    /// exactly once, on this producer's callback thread, with every
    /// record's outcome in the order of `records` (the blocking facade's
    /// `send_batch` is this one, run to completion).
    ///
    /// A record that cannot be queued (an invalid partition, a record too
    /// large, buffer space that stayed full) fails alone: its slot holds
    /// the error and the records after it are still sent. Only a batch
    /// that cannot start (a closed producer) returns an error, and then the
    /// callback is never called. `flush` and `close` wait for the callback
    /// as for `send_with_callback`'s.
    pub async fn send_batch<F>(&self, records: Vec<ProducerRecord>, callback: F) -> Result<()>
    where
        F: FnOnce(Vec<Result<RecordMetadata>>) + Send + 'static,
    {
        if self.is_closed() {
            return Err(Error::closed("producer"));
        }
        // Each record's outcome lands in its slot on the dispatcher thread,
        // in the order the engine settles them (offset order per partition,
        // as single sends' callbacks); the record settled last runs
        // `callback`, so batches' callbacks keep that order too. The extra
        // count is this call's own: a batch whose records all settled while
        // it was still queueing (or that had none) is handed to the
        // dispatcher below.
        let batch = std::sync::Arc::new(BatchSlots {
            state: std::sync::Mutex::new(BatchState {
                outcomes: (0..records.len()).map(|_| None).collect(),
                remaining: records.len() + 1,
                callback: Some(callback),
            }),
        });
        for (i, record) in records.into_iter().enumerate() {
            let slot = std::sync::Arc::clone(&batch);
            let queued = self
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
        if let Some(done) = batch.release() {
            self.dispatcher().run(done);
        }
        Ok(())
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
