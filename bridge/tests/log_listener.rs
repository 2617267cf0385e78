//! The log listener: level filtering, the log thread, the queue bound.
//! One test function: the subscriber and the listener are process-wide.

use cursus_bridge::log::{self, LogRecord, MAX_QUEUED};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use tracing::Level;

/// What the listener saw: each record and the thread it ran on.
type Seen = Arc<Mutex<Vec<(LogRecord, Option<String>)>>>;

fn flush() {
    assert!(log::flush(Some(Instant::now() + Duration::from_secs(30))));
}

#[test]
fn records_reach_the_listener_on_the_log_thread_filtered_by_level() {
    let seen: Seen = Arc::default();
    let sink = Arc::clone(&seen);
    log::set_listener(
        Some(Level::INFO),
        Some(Arc::new(move |r: &LogRecord| {
            let thread = std::thread::current().name().map(str::to_owned);
            sink.lock().unwrap().push((r.clone(), thread));
        })),
    );
    assert!(log::install(), "the bridge's subscriber is the process's");

    tracing::debug!(target: "cursus::test", "below the level");
    tracing::info!(target: "cursus::test", partition = 3, topic = "orders", "joined group");
    tracing::warn!(target: "cursus::other", "careful");
    flush();
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        let (first, thread) = &seen[0];
        assert_eq!(first.level_name(), "info");
        assert_eq!(first.target, "cursus::test");
        assert_eq!(first.message, "joined group partition=3 topic=orders");
        assert_eq!(first.dropped, 0);
        assert_eq!(thread.as_deref(), Some("cursus-log"));
        assert_eq!(seen[1].0.level_name(), "warn");
    }

    // Off: nothing is formatted, queued or delivered.
    seen.lock().unwrap().clear();
    log::set_level(None);
    tracing::error!(target: "cursus::test", "never seen");
    flush();
    assert!(seen.lock().unwrap().is_empty());

    // A level by name.
    log::set_level(log::parse_level("debug").unwrap());
    tracing::debug!(target: "cursus::test", "now seen");
    tracing::trace!(target: "cursus::test", "still not");
    flush();
    assert_eq!(seen.lock().unwrap().len(), 1);

    // A listener that falls behind: records beyond the bound are dropped,
    // and the next record delivered says how many.
    seen.lock().unwrap().clear();
    let (entered_tx, entered_rx) = mpsc::channel::<()>();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let gate = Mutex::new((entered_tx, gate_rx));
    let sink = Arc::clone(&seen);
    log::set_listener(
        Some(Level::INFO),
        Some(Arc::new(move |r: &LogRecord| {
            if r.message == "slow" {
                let gate = gate.lock().unwrap();
                gate.0.send(()).unwrap();
                let _ = gate.1.recv_timeout(Duration::from_secs(30));
            }
            sink.lock().unwrap().push((r.clone(), None));
        })),
    );
    tracing::info!(target: "cursus::test", "slow");
    entered_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    for i in 0..MAX_QUEUED + 5 {
        tracing::info!(target: "cursus::test", i, "flood");
    }
    gate_tx.send(()).unwrap();
    flush();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1 + MAX_QUEUED, "the bound holds");
    let dropped: u64 = seen.iter().map(|(r, _)| r.dropped).sum();
    assert_eq!(dropped, 5);
    let reporting = seen.iter().find(|(r, _)| r.dropped > 0).unwrap();
    assert!(
        reporting
            .0
            .message
            .ends_with("[5 earlier log records dropped: the log listener fell behind]"),
        "{}",
        reporting.0.message
    );
    drop(seen);
    log::set_listener(None, None);
}
