//! Aggregate replay topics and transactional stream appends against a real
//! broker (`docs/aggregate-replay.md`).

use cursus::admin::{Admin, NewTopic};
use cursus::eventstore::{Event, EventStore, ReplayProof};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ErrorKind, ProducerConfig};
use cursus_testkit::TestBroker;

async fn topic(broker: &TestBroker, name: &str, replay: bool) {
    let admin = Admin::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    let mut t = NewTopic::new(name).partitions(2);
    t.event_sourcing = Some(true);
    if replay {
        t.idempotent = Some(true);
        t.aggregate_replay = Some(true);
    }
    let info = admin.create_topic(&t).await.unwrap();
    assert_eq!(info.aggregate_replay, replay);
    admin.close().await;
}

async fn store(broker: &TestBroker) -> EventStore {
    EventStore::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap()
}

#[tokio::test]
async fn a_replay_topic_deduplicates_by_event_id_and_proves_the_stream() {
    let broker = TestBroker::start();
    topic(&broker, "matches", true).await;
    let s = store(&broker).await;
    let first = s
        .append("matches", "m", 0, &Event::new("Start", "go").event_id("e1"))
        .await
        .unwrap();
    let again = s
        .append("matches", "m", 0, &Event::new("Start", "go").event_id("e1"))
        .await
        .unwrap();
    assert_eq!(again, first, "an exact retry answers the original append");
    let e = s
        .append(
            "matches",
            "m",
            0,
            &Event::new("Start", "other").event_id("e1"),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), "aggregate_identity_conflict");
    for v in 1..4 {
        // Generated ids.
        s.append("matches", "m", v, &Event::new("Goal", format!("g{v}")))
            .await
            .unwrap();
    }
    let proof = s.replay_proof("matches", "m", Some(4)).await.unwrap();
    assert!(proof.is_complete(), "{proof:?}");
    assert_eq!(
        (proof.event_count, proof.first_event_id.as_str()),
        (4, "e1")
    );
    let e = s.replay_proof("matches", "m", Some(0)).await.unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::InvalidArgument,
        "0 is no sequence: {e}"
    );
    let e = s.replay_proof("matches", "m", Some(7)).await.unwrap_err();
    let failed = ReplayProof::from_error(&e).expect("the error carries its proof");
    assert_eq!(failed.event_count, 4, "{e}");
    let (proof, events) = s.event_range("matches", "m", 2, 3, None).await.unwrap();
    assert!(proof.is_complete());
    let seqs: Vec<u64> = events.iter().map(|e| e.event_sequence).collect();
    assert_eq!(seqs, [2, 3]);
    assert_eq!(events[0].payload, "g1");

    let producer = Producer::connect(ProducerConfig::new(&broker.addr))
        .await
        .unwrap();
    let e = producer
        .send(ProducerRecord::new("matches", "plain"))
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(e.code(), "aggregate_publish_requires_append_stream");
}

#[tokio::test]
async fn a_transactional_append_is_a_version_only_once_committed() {
    let broker = TestBroker::start();
    topic(&broker, "ledger", false).await;
    let s = store(&broker).await;
    s.append("ledger", "acct", 0, &Event::new("Opened", "open"))
        .await
        .unwrap();
    let mut config = ProducerConfig::new(&broker.addr);
    config.set("transactional_id", "ledger-tx").unwrap();
    let p = Producer::connect(config).await.unwrap();
    p.init_transactions().await.unwrap();

    p.begin_transaction().await.unwrap();
    p.append_stream("ledger", "acct", 1, &Event::new("Credited", "never"))
        .await
        .unwrap();
    p.abort_transaction().await.unwrap();
    assert_eq!(s.stream_version("ledger", "acct").await.unwrap(), 1);

    p.begin_transaction().await.unwrap();
    let staged = p
        .append_stream("ledger", "acct", 1, &Event::new("Credited", "credit"))
        .await
        .unwrap();
    assert_eq!(staged.version, 2);
    assert_eq!(s.stream_version("ledger", "acct").await.unwrap(), 1);
    let e = s
        .append("ledger", "acct", 1, &Event::new("Debited", "race"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "stream_version_reserved");
    p.commit_transaction().await.unwrap();
    assert_eq!(s.stream_version("ledger", "acct").await.unwrap(), 2);
    let (_, events) = s.read_stream("ledger", "acct", 1).await.unwrap();
    let payloads: Vec<&[u8]> = events.iter().map(|e| &e.payload[..]).collect();
    assert_eq!(payloads, [&b"open"[..], b"credit"]);

    // Outside a transaction it is refused.
    let e = p
        .append_stream("ledger", "acct", 2, &Event::new("X", "x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}
