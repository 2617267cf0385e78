//! Group commit: concurrent appenders share fdatasyncs, and no offset is lost
//! or duplicated. These tests count syncs; none of them measures time.

use std::collections::HashMap;
use std::sync::{Arc, Barrier};
use std::thread;

use bytes::Bytes;
use cursus_broker::storage::{Journal, LogConfig, PartitionLog};

const THREADS: usize = 8;

fn payload(thread: usize, i: usize) -> Bytes {
    Bytes::from(format!("t{thread}-i{i}"))
}

/// Deterministic proof of sharing: in each round all threads append, meet at
/// a barrier, then call `sync_to` for their own offset. The first caller's
/// fdatasync covers all of the round's appends, so every round costs exactly
/// one sync however the threads are scheduled.
#[test]
fn one_sync_per_round_of_concurrent_appends() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(PartitionLog::open(dir.path(), LogConfig::default()).unwrap());
    let rounds = 25;
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (log, barrier) = (log.clone(), barrier.clone());
            thread::spawn(move || {
                let mut offsets = Vec::new();
                for i in 0..rounds {
                    let info = log.append(&[(i as i64, payload(t, i))]).unwrap();
                    barrier.wait();
                    log.sync_to(info.last_offset).unwrap();
                    assert!(log.durable_offset() > info.last_offset);
                    offsets.push(info.base_offset);
                }
                offsets
            })
        })
        .collect();
    let mut all: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort_unstable();
    let appends = (THREADS * rounds) as u64;
    assert_eq!(all, (0..appends).collect::<Vec<_>>());
    assert_eq!(
        log.sync_count(),
        rounds as u64,
        "exactly one fdatasync per round"
    );
    assert_eq!(log.durable_offset(), appends);
}

/// Free-running appenders (acks=1 style: append, then sync own offset) and a
/// concurrent reader: offsets are unique and gap-free, every record is where
/// its append said, reads only ever see a contiguous durable prefix, and the
/// appenders shared syncs.
#[test]
fn concurrent_appenders_share_syncs_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = LogConfig {
        segment_bytes: 64 * 1024,
        ..LogConfig::default()
    };
    let log = Arc::new(PartitionLog::open(dir.path(), cfg.clone()).unwrap());
    let per_thread = 250;
    let total = (THREADS * per_thread) as u64;

    let reader = {
        let log = log.clone();
        thread::spawn(move || {
            let mut next = 0u64;
            while next < total {
                let hwm = log.durable_offset();
                for r in log.read(next, 100, 64 * 1024).unwrap() {
                    assert_eq!(r.offset, next, "reads are contiguous");
                    assert!(r.offset < log.durable_offset().max(hwm));
                    next += 1;
                }
                thread::yield_now();
            }
            next
        })
    };
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let log = log.clone();
            thread::spawn(move || {
                let mut placed = Vec::new();
                for i in 0..per_thread {
                    let n = i % 3 + 1;
                    let batch: Vec<(i64, Bytes)> =
                        (0..n).map(|j| (j as i64, payload(t, i * 10 + j))).collect();
                    let info = log.append(&batch).unwrap();
                    assert_eq!(info.last_offset - info.base_offset + 1, n as u64);
                    log.sync_to(info.last_offset).unwrap();
                    for j in 0..n {
                        placed.push((info.base_offset + j as u64, payload(t, i * 10 + j)));
                    }
                }
                placed
            })
        })
        .collect();
    let placed: HashMap<u64, Bytes> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let leo = log.log_end_offset();
    assert_eq!(placed.len() as u64, leo, "no offset assigned twice");
    let appends = (THREADS * per_thread) as u64;
    let syncs = log.sync_count();
    assert!(
        syncs < appends,
        "{syncs} fdatasyncs for {appends} acknowledged appends: syncs were not shared"
    );
    assert_eq!(log.durable_offset(), leo);

    let check = |log: &PartitionLog| {
        let records = log.read(0, usize::MAX, usize::MAX).unwrap();
        assert_eq!(records.len() as u64, leo);
        for (i, r) in records.iter().enumerate() {
            assert_eq!(r.offset, i as u64);
            assert_eq!(placed[&r.offset], r.data);
        }
    };
    check(&log);
    drop(log);
    let reopened = PartitionLog::open(dir.path(), cfg).unwrap();
    assert_eq!(reopened.log_end_offset(), leo);
    check(&reopened);
    // the reader saw a contiguous prefix of at least `total` records (a lower
    // bound of `leo`: every batch holds at least one entry)
    assert!(reader.join().unwrap() >= total);
}

#[test]
fn journal_appenders_share_syncs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("__transaction_state.journal");
    let (journal, records) = Journal::open(&path).unwrap();
    assert!(records.is_empty());
    let journal = Arc::new(journal);
    let rounds = 20;
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (journal, barrier) = (journal.clone(), barrier.clone());
            thread::spawn(move || {
                for i in 0..rounds {
                    // the barrier makes every thread of a round arrive
                    // together, so syncs are shared
                    barrier.wait();
                    journal.append_sync(&payload(t, i)).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let appends = (THREADS * rounds) as u64;
    assert!(journal.sync_count() < appends);
    assert_eq!(journal.record_count(), appends);
    drop(journal);
    let (_, records) = Journal::open(&path).unwrap();
    let mut got: Vec<Bytes> = records;
    got.sort();
    let mut want: Vec<Bytes> = (0..THREADS)
        .flat_map(|t| (0..rounds).map(move |i| payload(t, i)))
        .collect();
    want.sort();
    assert_eq!(got, want);
}
