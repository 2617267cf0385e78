//! Consumer control through the synchronous API the bindings call: seek,
//! position, pause and resume, committed offsets, the rebalance listener,
//! record fields and producer timestamps.

use cursus::blocking::{Consumer, EventStore, Producer};
use cursus::consumer::{LostDelivery, RebalanceEvent};
use cursus::eventstore::Event;
use cursus::producer::ProducerRecord;
use cursus::{ClientConfig, ErrorKind, ProducerConfig, TopicPartition};
use cursus_testkit::{eventually, TestBroker};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// How long a wait polls: a hundred 50 ms polls.
const POLLS: Duration = Duration::from_secs(5);

mod common;
use common::{consumer, take, topic, WAIT};

fn produce(broker: &TestBroker, name: &str, n: u32) {
    let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    for i in 0..n {
        producer
            .send(ProducerRecord::new(name, format!("m{i}")).partition(0))
            .unwrap();
    }
    producer.flush(None).unwrap();
    producer.close(None).unwrap();
}

fn tp(name: &str, partition: u32) -> TopicPartition {
    TopicPartition::new(name, partition)
}

/// Polls until the group is joined (the first poll joins).
fn join(c: &Consumer) {
    eventually(POLLS, "the group to be joined", || {
        c.poll_max(Some(Duration::from_millis(50)), 1).unwrap();
        !c.assignment().unwrap().is_empty()
    });
}

#[test]
fn seek_moves_the_position_and_commits_never_regress() {
    let broker = TestBroker::start();
    topic(&broker, "s", 1);
    produce(&broker, "s", 20);
    let c = consumer(&broker, "g", &[("auto_offset_reset", "earliest")]);
    c.subscribe(&["s".into()]).unwrap();
    let unassigned = c.seek(&tp("s", 0), 3).unwrap_err();
    assert_eq!(unassigned.code(), "partition_not_assigned");
    assert_eq!(take(&c, 10, 10), (0..10).collect::<Vec<_>>());
    assert_eq!(c.position(&tp("s", 0)).unwrap(), 10);

    // Backwards: the records come again; commits stay at 10.
    c.seek(&tp("s", 0), 2).unwrap();
    assert_eq!(c.position(&tp("s", 0)).unwrap(), 2);
    assert_eq!(take(&c, 3, 3), vec![2, 3, 4]);
    assert_eq!(c.position(&tp("s", 0)).unwrap(), 5);
    c.commit_sync().unwrap();
    assert_eq!(c.committed(&tp("s", 0)).unwrap(), Some(10));

    // Forwards, past what is buffered.
    c.seek(&tp("s", 0), 17).unwrap();
    assert_eq!(take(&c, 3, 10), vec![17, 18, 19]);
    c.commit_sync().unwrap();
    assert_eq!(
        c.committed_offsets(&[tp("s", 0)]).unwrap(),
        vec![(tp("s", 0), Some(20))]
    );
    assert_eq!(
        c.position(&tp("s", 1)).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    c.close().unwrap();
}

#[test]
fn paused_partitions_return_nothing_until_resumed() {
    let broker = TestBroker::start();
    topic(&broker, "p", 2);
    produce(&broker, "p", 10);
    let c = consumer(&broker, "g", &[("auto_offset_reset", "earliest")]);
    c.subscribe(&["p".into()]).unwrap();
    join(&c);
    // The join's poll may have returned a record: start from 0 again.
    c.seek(&tp("p", 0), 0).unwrap();
    c.pause(&[tp("p", 0)]).unwrap();
    c.pause(&[tp("p", 0)]).unwrap(); // harmless twice
    assert_eq!(c.paused().unwrap(), vec![tp("p", 0)]);
    for _ in 0..5 {
        let got = c.poll(Some(Duration::from_millis(60))).unwrap();
        assert!(got.is_empty(), "a paused partition returned {got:?}");
    }
    assert_eq!(c.position(&tp("p", 0)).unwrap(), 0);
    assert!(c.pause(&[tp("other", 0)]).is_err());
    c.resume(&[tp("p", 0)]).unwrap();
    assert!(c.paused().unwrap().is_empty());
    assert_eq!(take(&c, 10, 10), (0..10).collect::<Vec<_>>());
    c.close().unwrap();
}

#[test]
fn committed_offsets_answers_in_the_order_asked() {
    let broker = TestBroker::start();
    topic(&broker, "c", 2);
    produce(&broker, "c", 4);
    let c = consumer(&broker, "g", &[("auto_offset_reset", "earliest")]);
    c.subscribe(&["c".into()]).unwrap();
    assert_eq!(take(&c, 4, 10).len(), 4);
    c.commit_sync().unwrap();
    assert_eq!(
        c.committed_offsets(&[tp("c", 1), tp("c", 0)]).unwrap(),
        vec![(tp("c", 1), None), (tp("c", 0), Some(4))]
    );
    c.close().unwrap();
}

type Events = Arc<Mutex<Vec<RebalanceEvent>>>;

fn record_events(c: &Consumer) -> (Events, mpsc::Receiver<String>) {
    let events: Events = Arc::default();
    let (threads, thread_names) = mpsc::channel();
    let seen = Arc::clone(&events);
    let threads = Mutex::new(threads);
    c.set_rebalance_listener(Some(Arc::new(move |e: &RebalanceEvent| {
        let name = std::thread::current().name().unwrap_or("").to_owned();
        let _ = threads.lock().unwrap().send(name);
        seen.lock().unwrap().push(e.clone());
    })))
    .unwrap();
    (events, thread_names)
}

#[test]
fn the_listener_is_told_of_every_change_before_records_flow() {
    let broker = TestBroker::start();
    topic(&broker, "r", 2);
    let a = consumer(&broker, "g", &[("heartbeat_interval_ms", "50")]);
    let (events, threads) = record_events(&a);
    a.subscribe(&["r".into()]).unwrap();
    join(&a);
    assert_eq!(
        events.lock().unwrap().clone(),
        vec![RebalanceEvent::Assigned(vec![tp("r", 0), tp("r", 1)])]
    );
    assert_eq!(threads.recv_timeout(WAIT).unwrap(), "cursus-rebalance");

    // A second member takes one partition: the first is told at its next
    // poll what it lost, then what it gained (nothing).
    let b = consumer(&broker, "g", &[("heartbeat_interval_ms", "50")]);
    b.subscribe(&["r".into()]).unwrap();
    join(&b);
    let moved = b.assignment().unwrap();
    assert_eq!(moved.len(), 1);
    eventually(POLLS, "A's revocation and new assignment", || {
        let seen = events.lock().unwrap().len();
        if seen < 3 {
            a.poll(Some(Duration::from_millis(50))).unwrap();
        }
        (seen >= 3).then_some(()).ok_or(seen)
    });
    let seen = events.lock().unwrap().clone();
    assert_eq!(
        seen[1..],
        [
            RebalanceEvent::Revoked(moved.clone()),
            RebalanceEvent::Assigned(vec![])
        ]
    );
    assert_eq!(a.assignment().unwrap().len(), 1);
    assert!(!a.assignment().unwrap().contains(&moved[0]));
    b.close().unwrap();
    a.close().unwrap();
    assert!(
        matches!(events.lock().unwrap().last(), Some(RebalanceEvent::Revoked(p)) if p.len() == 2 || p.len() == 1)
    );
}

#[test]
fn the_listener_may_seek_on_assignment_and_commit_on_close() {
    let broker = TestBroker::start();
    topic(&broker, "l", 1);
    produce(&broker, "l", 10);
    let c = Arc::new(consumer(
        &broker,
        "g",
        &[
            ("enable_auto_commit", "false"),
            ("auto_offset_reset", "earliest"),
        ],
    ));
    let weak = Arc::downgrade(&c);
    let committed = Arc::new(Mutex::new(None));
    let outcome = Arc::clone(&committed);
    c.set_rebalance_listener(Some(Arc::new(move |e: &RebalanceEvent| {
        let c = weak.upgrade().expect("the consumer outlives its listener");
        match e {
            RebalanceEvent::Assigned(p) if !p.is_empty() => c.seek(&p[0], 6).unwrap(),
            RebalanceEvent::Revoked(_) => {
                // A poll here would wait for itself: refused.
                assert!(c.poll(Some(Duration::ZERO)).is_err());
                *outcome.lock().unwrap() = Some(c.commit_sync().map_err(|e| e.to_string()));
            }
            _ => {}
        }
    })))
    .unwrap();
    c.subscribe(&["l".into()]).unwrap();
    assert_eq!(take(&c, 4, 10), vec![6, 7, 8, 9]);
    c.close().unwrap();
    assert_eq!(*committed.lock().unwrap(), Some(Ok(())));
    let again = consumer(&broker, "g", &[]);
    assert_eq!(again.committed(&tp("l", 0)).unwrap(), Some(10));
    again.close().unwrap();
}

#[test]
fn records_carry_every_field_and_the_producer_timestamp() {
    let broker = TestBroker::start();
    topic(&broker, "f", 1);
    let producer = Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let stamped = producer
        .send_and_wait(
            ProducerRecord::new("f", "with")
                .key("k")
                .timestamp(1_234_567),
        )
        .unwrap();
    assert_eq!(stamped.timestamp, 1_234_567);
    let now = producer
        .send_and_wait(ProducerRecord::new("f", "").key(""))
        .unwrap();
    producer.close(None).unwrap();
    let c = consumer(&broker, "g", &[("auto_offset_reset", "earliest")]);
    c.subscribe(&["f".into()]).unwrap();
    let mut got = Vec::new();
    eventually(POLLS, "both records", || {
        got.extend(c.poll(Some(Duration::from_millis(50))).unwrap());
        (got.len() >= 2).then_some(()).ok_or(got.len())
    });
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].key.as_deref(), Some(&b"k"[..]));
    assert_eq!(got[0].timestamp, 1_234_567);
    assert_eq!(got[1].key, None, "an empty key cannot travel");
    assert_eq!(got[1].timestamp, now.timestamp);
    assert_eq!(
        (got[1].metadata.as_ref(), got[1].event.as_ref()),
        (None, None)
    );
    c.close().unwrap();

    // An event's fields.
    let store = EventStore::connect(ClientConfig::new(&broker.addr)).unwrap();
    let admin = cursus::blocking::Admin::connect(ClientConfig::new(&broker.addr)).unwrap();
    let mut es = cursus::NewTopic::new("es").partitions(1);
    es.event_sourcing = Some(true);
    admin.create_topic(&es).unwrap();
    admin.close().unwrap();
    store
        .append(
            "es",
            "agg-1",
            0,
            &Event::new("Opened", "{}")
                .metadata("{\"by\":\"t\"}")
                .schema_version(2),
        )
        .unwrap();
    let c = consumer(&broker, "g2", &[("auto_offset_reset", "earliest")]);
    c.subscribe(&["es".into()]).unwrap();
    let got = eventually(POLLS, "the event", || {
        Some(c.poll(Some(Duration::from_millis(50))).unwrap()).filter(|got| !got.is_empty())
    });
    let event = got[0].event.as_ref().expect("an event");
    assert_eq!(
        (
            event.event_type.as_str(),
            event.schema_version,
            event.aggregate_version
        ),
        ("Opened", 2, 1)
    );
    assert_eq!(got[0].metadata.as_deref(), Some("{\"by\":\"t\"}"));
    assert_eq!(got[0].key.as_deref(), Some(&b"agg-1"[..]));
    c.close().unwrap();
}

/// A consumer whose session the broker expires (heartbeats far apart, a
/// short session) and the events its listener was told, `lost` as given:
/// assigned, the loss, assigned anew.
fn expire_a_session(lost: LostDelivery) -> Vec<RebalanceEvent> {
    let broker = TestBroker::start_with_config("group_session_timeout_ms = 300\n");
    topic(&broker, "x", 1);
    let c = consumer(&broker, "g", &[("heartbeat_interval_ms", "1500")]);
    let events: Events = Arc::default();
    let seen = Arc::clone(&events);
    c.set_rebalance_listener_with(
        Some(Arc::new(move |e: &RebalanceEvent| {
            seen.lock().unwrap().push(e.clone())
        })),
        lost,
    )
    .unwrap();
    c.subscribe(&["x".into()]).unwrap();
    join(&c);
    let first = c.member_id().unwrap();
    eventually(POLLS * 4, "the rejoin after the lost membership", || {
        let seen = events.lock().unwrap().len();
        if seen < 3 {
            c.poll(Some(Duration::from_millis(50))).unwrap();
        }
        (seen >= 3).then_some(()).ok_or(seen)
    });
    assert_ne!(
        c.member_id().unwrap(),
        first,
        "a new member after the expiry"
    );
    c.close().unwrap();
    let told = events.lock().unwrap()[..3].to_vec();
    told
}

#[test]
fn an_expired_session_is_told_as_lost_then_assigned_anew() {
    assert_eq!(
        expire_a_session(LostDelivery::AsLost),
        vec![
            RebalanceEvent::Assigned(vec![tp("x", 0)]),
            RebalanceEvent::Lost(vec![tp("x", 0)]),
            RebalanceEvent::Assigned(vec![tp("x", 0)]),
        ]
    );
}

#[test]
fn a_listener_without_a_lost_callback_is_told_a_loss_as_a_revocation() {
    assert_eq!(
        expire_a_session(LostDelivery::AsRevoked),
        vec![
            RebalanceEvent::Assigned(vec![tp("x", 0)]),
            RebalanceEvent::Revoked(vec![tp("x", 0)]),
            RebalanceEvent::Assigned(vec![tp("x", 0)]),
        ]
    );
}
