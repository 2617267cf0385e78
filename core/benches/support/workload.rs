//! The engine's reference loops, one copy for every harness that times the
//! engine: `core/benches/engine.rs`, `core/benches/cluster.rs`,
//! `core/examples/bench_native.rs` (`make bench-peer`) and
//! `ffi-c/examples/bench_send.rs` (the reference the bindings are divided
//! by). Each includes this file with `#[path]`, so they all time the same
//! work.
#![allow(dead_code)] // not every harness uses both loops

use cursus::consumer::Consumer;
use cursus::producer::{Producer, ProducerRecord};
use std::time::{Duration, Instant};

/// Deliveries held before the oldest is awaited: memory stays flat however
/// many records are sent.
const IN_FLIGHT: usize = 50_000;

/// Sends `records` records, record `i` made by `record(i)`, and waits for
/// every acknowledgement; returns records/s from the first send to the last
/// acknowledgement.
pub async fn produce_all(
    producer: &Producer,
    records: usize,
    mut record: impl FnMut(usize) -> ProducerRecord,
) -> cursus::Result<f64> {
    let started = Instant::now();
    let mut pending = std::collections::VecDeque::new();
    for i in 0..records {
        pending.push_back(producer.send(record(i)).await?);
        while pending.len() > IN_FLIGHT {
            pending.pop_front().expect("non-empty").await?;
        }
    }
    producer.flush(None).await?;
    for delivery in pending {
        delivery.await?;
    }
    Ok(records as f64 / started.elapsed().as_secs_f64())
}

/// Polls `consumer` (subscribed, not yet joined) until `records` records
/// arrived; returns records/s from the call, the group join included.
pub async fn consume_all(consumer: &Consumer, records: usize) -> cursus::Result<f64> {
    let started = Instant::now();
    let mut seen = 0;
    while seen < records {
        seen += consumer.poll(Duration::from_secs(5)).await?.len();
    }
    Ok(records as f64 / started.elapsed().as_secs_f64())
}

/// What [`produce_all_timed`] measured.
pub struct Timed {
    /// Records per second from the first send to the last acknowledgement.
    pub rate: f64,
    /// Every record's time from its send call to its acknowledgement
    /// reaching the application, sorted.
    pub acks: Vec<Duration>,
}

impl Timed {
    /// The `q` quantile (0.5 = median) of the acknowledgement times, in µs.
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.acks.is_empty() {
            return f64::NAN;
        }
        let i = ((self.acks.len() as f64 * q) as usize).min(self.acks.len() - 1);
        self.acks[i].as_secs_f64() * 1e6
    }
}

/// [`produce_all`] with every record's produce-to-acknowledgement time:
/// the same records, the same bound of `IN_FLIGHT` unacknowledged records
/// and the same flush at the end, but each outcome arrives through
/// `send_with_callback`, stamped when it reaches the application. (A
/// `Delivery` cannot time its own record without being polled, and polling
/// one sends its batch at once, which would change the batching.)
pub async fn produce_all_timed(
    producer: &Producer,
    records: usize,
    mut record: impl FnMut(usize) -> ProducerRecord,
) -> cursus::Result<Timed> {
    use std::sync::{Arc, Mutex};
    use std::task::{Poll, Waker};

    struct State {
        acks: Vec<Duration>,
        done: usize,
        error: Option<cursus::Error>,
        /// The sending loop, waiting until `done` reaches `until`.
        waiter: Option<(usize, Waker)>,
    }
    let state = Arc::new(Mutex::new(State {
        acks: Vec::with_capacity(records),
        done: 0,
        error: None,
        waiter: None,
    }));
    fn lock(s: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
        s.lock().unwrap_or_else(|p| p.into_inner())
    }
    let until = |done: usize| {
        let state = Arc::clone(&state);
        std::future::poll_fn(move |cx| {
            let mut s = lock(&state);
            if s.done >= done {
                return Poll::Ready(s.error.take());
            }
            s.waiter = Some((done, cx.waker().clone()));
            Poll::Pending
        })
    };
    let started = Instant::now();
    for i in 0..records {
        if i > IN_FLIGHT {
            if let Some(e) = until(i - IN_FLIGHT).await {
                return Err(e);
            }
        }
        let outcome = Arc::clone(&state);
        let sent = Instant::now();
        producer
            .send_with_callback(record(i), move |result| {
                let took = sent.elapsed();
                let mut s = lock(&outcome);
                match result {
                    Ok(_) => s.acks.push(took),
                    Err(e) => {
                        s.error.get_or_insert(e);
                    }
                }
                s.done += 1;
                if s.waiter.as_ref().is_some_and(|(n, _)| s.done >= *n) {
                    let (_, waker) = s.waiter.take().expect("waiter");
                    waker.wake();
                }
            })
            .await?;
    }
    producer.flush(None).await?;
    if let Some(e) = until(records).await {
        return Err(e);
    }
    let rate = records as f64 / started.elapsed().as_secs_f64();
    let mut acks = std::mem::take(&mut lock(&state).acks);
    acks.sort_unstable();
    Ok(Timed { rate, acks })
}
