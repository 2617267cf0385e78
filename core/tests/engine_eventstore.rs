//! The event store against a real broker (`docs/event-sourcing.md`).

use cursus::admin::{Admin, NewTopic};
use cursus::eventstore::{Aggregate, Completeness, Cursor, Event, EventStore, PageLimits};
use cursus::{ClientConfig, ErrorClass, ErrorKind};
use cursus_testkit::TestBroker;

async fn setup(broker: &TestBroker, topic: &str, event_sourcing: bool) -> EventStore {
    let admin = Admin::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    let mut t = NewTopic::new(topic).partitions(3);
    t.event_sourcing = Some(event_sourcing);
    admin.create_topic(&t).await.unwrap();
    admin.close().await;
    EventStore::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap()
}

#[tokio::test]
async fn appended_events_read_back_with_every_field() {
    let broker = TestBroker::start();
    let store = setup(&broker, "orders", true).await;
    assert_eq!(store.stream_version("orders", "o-1").await.unwrap(), 0);
    let first = store
        .append(
            "orders",
            "o-1",
            0,
            &Event::new("Created", r#"{"id":1}"#)
                .metadata(r#"{"by":"alice"}"#)
                .schema_version(2),
        )
        .await
        .unwrap();
    assert_eq!(first.version, 1);
    let second = store
        .append("orders", "o-1", 1, &Event::new("Paid", "10"))
        .await
        .unwrap();
    assert_eq!(second.version, 2);
    assert_eq!(
        second.partition, first.partition,
        "one aggregate, one partition"
    );
    assert!(second.offset > first.offset);

    let (snapshot, events) = store.read_stream("orders", "o-1", 1).await.unwrap();
    assert!(snapshot.is_none());
    assert_eq!(events.len(), 2);
    let e = &events[0];
    assert_eq!(
        (e.version, e.event_type.as_str(), e.schema_version),
        (1, "Created", 2)
    );
    assert_eq!(e.metadata, r#"{"by":"alice"}"#);
    assert_eq!(&e.payload[..], br#"{"id":1}"#);
    assert_eq!(&e.key[..], b"o-1");
    assert_eq!(e.offset, first.offset);
    assert_eq!(events[1].schema_version, 1, "the broker's default");
    assert_eq!(store.stream_version("orders", "o-1").await.unwrap(), 2);
}

#[tokio::test]
async fn a_stale_expected_version_is_a_conflict_with_fields() {
    let broker = TestBroker::start();
    let store = setup(&broker, "acct", true).await;
    store
        .append("acct", "a", 0, &Event::new("Opened", "x"))
        .await
        .unwrap();
    let e = store
        .append("acct", "a", 0, &Event::new("Opened", "again"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broker);
    assert_eq!(e.code(), "version_conflict");
    assert_eq!(e.class(), ErrorClass::Conflict);
    assert_eq!(e.field("current"), Some("1"));
    assert!(e.field("expected").is_some());
}

#[tokio::test]
async fn snapshots_start_stream_reads() {
    let broker = TestBroker::start();
    let store = setup(&broker, "carts", true).await;
    assert_eq!(store.read_snapshot("carts", "c").await.unwrap(), None);
    for v in 0..5 {
        store
            .append(
                "carts",
                "c",
                v,
                &Event::new("Added", format!("item-{}", v + 1)),
            )
            .await
            .unwrap();
    }
    let e = store
        .save_snapshot("carts", "c", 6, "too far")
        .await
        .unwrap_err();
    assert_eq!(e.code(), "snapshot_version_exceeds_stream");
    store.save_snapshot("carts", "c", 3, "three").await.unwrap();
    let snap = store.read_snapshot("carts", "c").await.unwrap().unwrap();
    assert_eq!((snap.version, snap.payload.as_str()), (3, "three"));
    let (snapshot, events) = store.read_stream("carts", "c", 1).await.unwrap();
    assert_eq!(snapshot.map(|s| s.version), Some(3));
    let versions: Vec<u64> = events.iter().map(|e| e.version).collect();
    assert_eq!(versions, [4, 5]);
}

#[tokio::test]
async fn cursors_page_through_streams_history_and_browse() {
    let broker = TestBroker::start();
    let store = setup(&broker, "long", true).await;
    for v in 0..25 {
        store
            .append("long", "k", v, &Event::new("E", format!("e{}", v + 1)))
            .await
            .unwrap();
    }
    let limits = PageLimits {
        max_records: Some(10),
        max_bytes: None,
    };
    let mut cursor = Cursor::stream("long", "k", 1).with_limits(limits);
    let mut versions = Vec::new();
    let mut pages = 0;
    while let Some(page) = store.next_page(&mut cursor).await.unwrap() {
        pages += 1;
        versions.extend(page.events.iter().map(|e| e.version));
    }
    assert_eq!(versions, (1..=25).collect::<Vec<_>>());
    assert_eq!(pages, 3);
    assert!(cursor.is_done());

    let mut history = Cursor::history("long", "k", 1, None).with_limits(limits);
    let mut seen = 0;
    while let Some(page) = store.next_page(&mut history).await.unwrap() {
        assert_eq!(page.completeness, Some(Completeness::Complete));
        assert_eq!(page.head_version, Some(25));
        seen += page.events.len();
    }
    assert_eq!(seen, 25);

    let partition = store.read_stream("long", "k", 25).await.unwrap().1[0].partition;
    let mut browse = Cursor::browse("long", partition, 0, Some(12)).with_limits(PageLimits {
        max_records: Some(5),
        max_bytes: None,
    });
    let mut offsets = Vec::new();
    while let Some(page) = store.next_page(&mut browse).await.unwrap() {
        offsets.extend(page.events.iter().map(|e| e.offset));
    }
    assert_eq!(offsets, (0..12).collect::<Vec<_>>());
}

#[tokio::test]
async fn the_aggregate_cycle_snapshots_every_n_events() {
    let broker = TestBroker::start();
    let store = setup(&broker, "counters", true).await;
    let (mut agg, snapshot, events) = Aggregate::load(&store, "counters", "c", 3).await.unwrap();
    assert!(snapshot.is_none() && events.is_empty());
    let mut saved = Vec::new();
    for i in 0..7 {
        agg.append(&store, &Event::new("Counted", i.to_string()))
            .await
            .unwrap();
        if agg.auto_snapshot(&store, &agg.version().to_string()).await {
            saved.push(agg.version());
        }
    }
    assert_eq!(saved, [3, 6]);
    let (again, snapshot, events) = Aggregate::load(&store, "counters", "c", 3).await.unwrap();
    assert_eq!(again.version(), 7);
    assert_eq!(snapshot.map(|s| s.version), Some(6));
    assert_eq!(events.len(), 1);

    // A second writer moved on: the stale aggregate's append conflicts.
    let (mut stale, _, _) = Aggregate::load(&store, "counters", "c", 0).await.unwrap();
    agg.append(&store, &Event::new("Counted", "x"))
        .await
        .unwrap();
    let e = stale
        .append(&store, &Event::new("Counted", "y"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "version_conflict");
}

#[tokio::test]
async fn an_aggregate_append_keeps_the_callers_event_id_and_returns_the_stored_event() {
    let broker = TestBroker::start();
    let store = setup(&broker, "ids", true).await;
    let (mut agg, _, _) = Aggregate::load(&store, "ids", "a", 0).await.unwrap();
    let first = agg
        .append(&store, &Event::new("Opened", "1").schema_version(2))
        .await
        .unwrap();
    let second = agg
        .append(
            &store,
            &Event::new("Moved", "2").metadata("m").event_id("caller-2"),
        )
        .await
        .unwrap();
    let (_, read) = store.read_stream("ids", "a", 1).await.unwrap();
    for (stored, read) in [first, second].iter().zip(&read) {
        // As a read returns it, but for the timestamp the reply lacks.
        assert_eq!(stored.timestamp, 0);
        assert_eq!(
            cursus::eventstore::StoredEvent {
                timestamp: read.timestamp,
                ..stored.clone()
            },
            *read
        );
    }
    assert_eq!(read.len(), 2);
    assert_eq!(agg.version(), 2);

    // A bad id is the engine's invalid_argument, and nothing moves.
    for bad in ["", "two words", "tab\tid"] {
        let e = agg
            .append(&store, &Event::new("Moved", "3").event_id(bad))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad:?}: {e}");
    }
    assert_eq!(agg.version(), 2);
    assert_eq!(store.stream_version("ids", "a").await.unwrap(), 2);
}

#[tokio::test]
async fn a_failed_automatic_snapshot_leaves_the_append_standing_and_stays_due() {
    let broker = TestBroker::start();
    let store = setup(&broker, "snaps", true).await;
    let (mut agg, _, _) = Aggregate::load(&store, "snaps", "s", 1).await.unwrap();
    agg.append(&store, &Event::new("Counted", "1"))
        .await
        .unwrap();
    assert!(agg.snapshot_due());
    // The save fails (through a closed store): no error, reported at warn.
    let closed = EventStore::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    closed.close().await;
    assert!(!agg.auto_snapshot(&closed, "1").await);
    assert!(agg.snapshot_due(), "still due: the next append tries again");
    assert_eq!(agg.snapshot_version(), 0);
    agg.append(&store, &Event::new("Counted", "2"))
        .await
        .unwrap();
    assert!(agg.auto_snapshot(&store, "2").await);
    assert!(!agg.snapshot_due());
    assert_eq!(agg.snapshot_version(), 2);
}

#[tokio::test]
async fn bad_input_is_refused_with_typed_errors() {
    let broker = TestBroker::start();
    let store = setup(&broker, "plain", false).await;
    let e = store
        .append("plain", "a", 0, &Event::new("X", "v"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "event_sourcing_not_enabled");
    for key in ["", "has space"] {
        let e = store
            .append("plain", key, 0, &Event::new("X", "v"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{key:?}");
    }
    let e = store
        .next_page(&mut Cursor::stream("plain", "a", 0))
        .await
        .unwrap_err();
    assert_ne!(e.kind(), ErrorKind::Protocol, "{e}");
}
