//! What a client tells its application besides call results: background
//! errors (an error listener) and periodic statistics (a statistics
//! listener), both run on the client's dispatcher thread (never on an
//! engine I/O thread), and the client's [`StatsRecorder`].
//!
//! Every client's `Cluster` (the connection pool) owns one
//! [`ClientEvents`], so engine code anywhere reports with
//! `cluster.events().report_error(e)`.
//!
//! Background errors that reach the error listener: a heartbeat that
//! failed for good (membership lost: the next poll rejoins), a producer
//! batch that failed (its records' deliveries fail too), a fenced
//! transactional producer, and a broker connection lost while requests
//! were waiting on it.

use crate::dispatch::Dispatcher;
use crate::error::Error;
use crate::stats::{Statistics, StatsRecorder};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A listener for background errors.
pub type ErrorListener = Arc<dyn Fn(Error) + Send + Sync>;

/// A listener for periodic statistics snapshots.
pub type StatisticsListener = Arc<dyn Fn(Statistics) + Send + Sync>;

/// Takes a snapshot (for the periodic statistics task); `None` once the
/// client is gone.
pub(crate) type Snapshotter =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Option<Statistics>> + Send>> + Send + Sync>;

/// A client's listeners, its dispatcher and its statistics counters.
#[derive(Default)]
pub struct ClientEvents {
    dispatcher: OnceLock<Dispatcher>,
    stats: StatsRecorder,
    error_listener: Mutex<Option<ErrorListener>>,
    /// The periodic statistics task, stopped when replaced or dropped.
    statistics_task: Mutex<Option<CancellationToken>>,
}

impl std::fmt::Debug for ClientEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientEvents").finish_non_exhaustive()
    }
}

impl Drop for ClientEvents {
    fn drop(&mut self) {
        if let Some(task) = self
            .statistics_task
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            task.cancel();
        }
    }
}

impl ClientEvents {
    /// The client's dispatcher: the one [`adopt`](Self::adopt)ed, else one
    /// of its own (thread `cursus-events`).
    pub fn dispatcher(&self) -> &Dispatcher {
        self.dispatcher
            .get_or_init(|| Dispatcher::new("cursus-events"))
    }

    /// Makes `dispatcher` (the client's callback dispatcher) run the
    /// listeners too; ignored once a dispatcher is in use.
    pub fn adopt(&self, dispatcher: &Dispatcher) {
        let _ = self.dispatcher.set(dispatcher.clone());
    }

    /// The statistics counters.
    pub fn stats(&self) -> &StatsRecorder {
        &self.stats
    }

    /// Sets (or with `None` clears) the error listener.
    pub fn set_error_listener(&self, listener: Option<ErrorListener>) {
        *self
            .error_listener
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = listener;
    }

    /// Reports a background error: logged, and handed to the error
    /// listener (if any) on the dispatcher thread.
    pub fn report_error(&self, error: Error) {
        tracing::debug!(%error, "background error");
        let listener = self
            .error_listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(listener) = listener {
            self.dispatcher().run(move || listener(error));
        }
    }

    /// Replaces the periodic statistics task: with a listener, `snapshot`
    /// runs every `interval` on the engine runtime and the listener gets its
    /// result on the dispatcher thread; the task ends when the snapshot says
    /// the client is gone. A listener with a zero interval (the
    /// `statistics_interval_ms` option left at 0) would never be called: it
    /// is refused ([`check_statistics_interval`]), and the old one stays.
    pub(crate) fn set_statistics_listener(
        &self,
        interval: Duration,
        listener: Option<StatisticsListener>,
        snapshot: Snapshotter,
    ) -> crate::Result<()> {
        if listener.is_some() {
            check_statistics_interval(interval)?;
        }
        let mut task = self
            .statistics_task
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(old) = task.take() {
            old.cancel();
        }
        let Some(listener) = listener else {
            return Ok(());
        };
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(h) => h,
            Err(_) => crate::runtime::handle()?,
        };
        let cancel = CancellationToken::new();
        let dispatcher = self.dispatcher().clone();
        let stop = cancel.clone();
        runtime.spawn(async move {
            let mut ticks =
                tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = ticks.tick() => {}
                }
                let taken = tokio::select! {
                    _ = stop.cancelled() => return,
                    s = snapshot() => s,
                };
                let Some(statistics) = taken else { return };
                let listener = Arc::clone(&listener);
                dispatcher.run(move || listener(statistics));
            }
        });
        *task = Some(cancel);
        Ok(())
    }
}

/// The one statistics rule, for every language: a statistics listener is
/// called every `statistics_interval_ms`, so setting one while that interval
/// is 0 (the default) fails with `invalid_argument` (field `option`) instead
/// of never calling it.
pub fn check_statistics_interval(interval: Duration) -> crate::Result<()> {
    if interval.is_zero() {
        return Err(crate::Error::invalid_argument(
            "a statistics listener is called every statistics_interval_ms: set statistics_interval_ms > 0",
        )
        .with_field("option", "statistics_interval_ms"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_statistics_interval;
    use std::time::Duration;

    #[test]
    fn a_listener_needs_an_interval() {
        let e = check_statistics_interval(Duration::ZERO).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert_eq!(e.field("option"), Some("statistics_interval_ms"));
        assert!(check_statistics_interval(Duration::from_millis(1)).is_ok());
    }
}
