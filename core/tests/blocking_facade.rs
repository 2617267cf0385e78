//! The synchronous facade the bindings call: callbacks on dispatcher
//! threads, delivery accounting, interrupting a blocked poll.

use cursus::blocking::{Admin, Producer};
use cursus::producer::ProducerRecord;
use cursus::{ClientConfig, ErrorKind, ProducerConfig};
use cursus_testkit::TestBroker;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

mod common;
use common::{consumer, take, topic, WAIT};

#[test]
fn produce_and_consume_without_an_async_runtime() {
    let broker = TestBroker::start();
    topic(&broker, "sync", 2);
    let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let md = producer
        .send_and_wait(ProducerRecord::new("sync", "first").partition(0))
        .unwrap();
    assert_eq!(md.offset, Some(0));
    let (tx, rx) = mpsc::channel();
    for i in 0..10 {
        let tx = tx.clone();
        producer
            .send_with_callback(ProducerRecord::new("sync", format!("cb{i}")), move |r| {
                tx.send(r.map(|m| m.offset)).unwrap();
            })
            .unwrap();
    }
    producer.flush(Some(Duration::from_secs(10))).unwrap();
    for _ in 0..10 {
        assert!(
            rx.try_recv().unwrap().unwrap().is_some(),
            "flush waited for the callbacks"
        );
    }
    producer.close(Some(Duration::from_secs(5))).unwrap();
    let e = producer
        .send(ProducerRecord::new("sync", "late"))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);

    let consumer = consumer(&broker, "sync-group", &[]);
    consumer.subscribe(&["sync".to_owned()]).unwrap();
    assert_eq!(
        consumer.member_id().unwrap(),
        None,
        "joins on the first poll"
    );
    assert_eq!(take(&consumer, 11, 500).len(), 11);
    let (tx, rx) = mpsc::channel();
    consumer.commit_async(move |r| tx.send(r).unwrap()).unwrap();
    rx.recv_timeout(WAIT).unwrap().unwrap();
    let status = Admin::connect(ClientConfig::new(&broker.addr))
        .unwrap()
        .group_status("sync-group")
        .unwrap();
    assert_eq!(
        consumer.member_id().unwrap().as_deref(),
        Some(status.members[0].member_id.as_str())
    );
    consumer.close().unwrap();
    assert_eq!(consumer.member_id().unwrap_err().kind(), ErrorKind::Closed);
}

#[test]
fn callbacks_run_on_the_producer_thread_and_may_send_and_flush() {
    let broker = TestBroker::start();
    topic(&broker, "reentry", 1);
    let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let (tx, rx) = mpsc::channel();
    let inner = producer.clone();
    producer
        .send_with_callback(ProducerRecord::new("reentry", "outer"), move |r| {
            let thread = std::thread::current().name().map(str::to_owned);
            r.unwrap();
            // Re-entry: a blocking send and a flush of the same producer.
            let nested = inner.send_and_wait(ProducerRecord::new("reentry", "inner"));
            let flushed = inner.flush(Some(Duration::from_secs(10)));
            tx.send((thread, nested.map(|m| m.offset), flushed))
                .unwrap();
        })
        .unwrap();
    let (thread, nested, flushed) = rx.recv_timeout(WAIT).unwrap();
    assert_eq!(thread.as_deref(), Some("cursus-producer-cb"));
    assert_eq!(nested.unwrap(), Some(1));
    flushed.unwrap();
    producer.close(Some(Duration::from_secs(5))).unwrap();
}

#[test]
fn a_blocked_callback_does_not_hold_up_another_producer() {
    let broker = TestBroker::start();
    topic(&broker, "slow", 1);
    let slow = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let fast = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let (entered_tx, entered_rx) = mpsc::channel();
    slow.send_with_callback(ProducerRecord::new("slow", "a"), move |_| {
        entered_tx.send(()).unwrap();
        // Held until the other producer's callback has run.
        let _ = gate_rx.recv_timeout(WAIT);
    })
    .unwrap();
    entered_rx.recv_timeout(WAIT).unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    fast.send_with_callback(ProducerRecord::new("slow", "b"), move |r| {
        done_tx.send(r.map(|m| m.offset)).unwrap();
    })
    .unwrap();
    let offset = done_rx
        .recv_timeout(WAIT)
        .expect("ran while the other callback is held");
    assert_eq!(offset.unwrap(), Some(1));
    gate_tx.send(()).unwrap();
    slow.close(Some(Duration::from_secs(10))).unwrap();
    fast.close(Some(Duration::from_secs(10))).unwrap();
}

#[test]
fn send_in_order_keeps_call_order_without_awaiting() {
    let broker = TestBroker::start();
    topic(&broker, "ordered", 1);
    let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let engine = producer.as_async().unwrap();
    // Handed over before any future is polled, metadata not yet cached.
    let futures: Vec<_> = (0..200)
        .map(|i| engine.send_in_order(ProducerRecord::new("ordered", format!("{i}"))))
        .collect();
    let offsets = cursus::blocking::block_on_engine(async {
        let mut out = Vec::new();
        for f in futures.into_iter().rev() {
            out.push(f.await.unwrap().offset.unwrap());
        }
        out.reverse();
        out
    })
    .unwrap();
    assert_eq!(offsets, (0..200).collect::<Vec<u64>>());
    producer.close(Some(Duration::from_secs(5))).unwrap();
}

#[test]
fn auto_commit_and_close_commit_only_what_the_application_took() {
    let broker = TestBroker::start();
    topic(&broker, "taken", 1);
    let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    for i in 0..10 {
        producer
            .send(ProducerRecord::new("taken", format!("v{i}")))
            .unwrap();
    }
    producer.close(Some(Duration::from_secs(10))).unwrap();

    let auto = [("enable_auto_commit", "true"), ("max_poll_records", "10")];
    let first = consumer(&broker, "taken-group", &auto);
    first.subscribe(&["taken".to_owned()]).unwrap();
    assert_eq!(take(&first, 3, 1), vec![0, 1, 2]);
    first.close().unwrap();

    let second = consumer(&broker, "taken-group", &auto);
    second.subscribe(&["taken".to_owned()]).unwrap();
    assert_eq!(take(&second, 7, 10), (3..10).collect::<Vec<u64>>());
    second.close().unwrap();
}

#[test]
fn close_and_wakeup_interrupt_a_blocked_poll() {
    let broker = TestBroker::start();
    topic(&broker, "idle", 1);
    let consumer = Arc::new(consumer(&broker, "idle-group", &[]));
    consumer.subscribe(&["idle".to_owned()]).unwrap();
    let polls = Arc::new(AtomicUsize::new(0));

    // wakeup: the blocked poll returns, empty.
    let (tx, rx) = mpsc::channel();
    let (c, p) = (Arc::clone(&consumer), Arc::clone(&polls));
    std::thread::spawn(move || {
        p.fetch_add(1, Ordering::SeqCst);
        tx.send(c.poll(None).map(|r| r.len())).unwrap();
    });
    while polls.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    // Until the poll is blocked, the wakeup applies to it when it starts.
    consumer.wakeup().unwrap();
    assert_eq!(rx.recv_timeout(WAIT).unwrap().unwrap(), 0);

    // close: the blocked poll fails with `closed`, and close returns.
    let (tx, rx) = mpsc::channel();
    let c = Arc::clone(&consumer);
    std::thread::spawn(move || tx.send(c.poll(None)).unwrap());
    std::thread::sleep(Duration::from_millis(200));
    consumer.close().unwrap();
    let e = rx.recv_timeout(WAIT).unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);
}

#[tokio::test]
async fn blocking_calls_inside_a_runtime_fail_instead_of_panicking() {
    let e = Admin::connect(ClientConfig::new("127.0.0.1:1")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("async runtime"), "{e}");
}

/// `close` racing with senders: every send that was accepted has had its
/// callback run by the time `close` returns (close waits for callbacks, and
/// nothing is accepted once it started), so a binding may stop its own
/// callback executor right after close.
#[test]
fn close_racing_with_senders_runs_every_accepted_callback_before_returning() {
    let broker = TestBroker::start();
    topic(&broker, "close-race", 2);
    let rounds: usize = std::env::var("CURSUS_STRESS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    for round in 0..rounds {
        let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(std::sync::Barrier::new(5));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (producer, accepted, ran, barrier) = (
                    producer.clone(),
                    Arc::clone(&accepted),
                    Arc::clone(&ran),
                    Arc::clone(&barrier),
                );
                std::thread::spawn(move || {
                    barrier.wait();
                    for i in 0..2000 {
                        let ran = Arc::clone(&ran);
                        let sent = producer.send_with_callback(
                            ProducerRecord::new("close-race", format!("v{i}")),
                            move |_| {
                                ran.fetch_add(1, Ordering::SeqCst);
                            },
                        );
                        match sent {
                            Ok(()) => {
                                accepted.fetch_add(1, Ordering::SeqCst);
                            }
                            Err(e) => {
                                assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
                                return;
                            }
                        }
                    }
                })
            })
            .collect();
        barrier.wait();
        std::thread::sleep(Duration::from_micros((round as u64 * 397) % 3000));
        producer.close(Some(Duration::from_secs(30))).unwrap();
        let ran_at_close = ran.load(Ordering::SeqCst);
        for w in workers {
            w.join().unwrap();
        }
        let accepted = accepted.load(Ordering::SeqCst);
        assert_eq!(
            ran_at_close, accepted,
            "round {round}: {accepted} sends accepted, {ran_at_close} callbacks run when close returned"
        );
    }
}
