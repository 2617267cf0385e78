//! Aggregate replay topics against the real broker
//! (docs/aggregate-replay.md): the topic policy, PUBLISH refused,
//! APPEND_STREAM's identity rules and exact retries, AGGREGATE_REPLAY_PROOF
//! with each status, and AGGREGATE_EVENT_RANGE_READ.

mod common;
mod txn_common;

use bytes::Bytes;
use common::*;
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{Batch, ErrorClass, Record, Status};
use txn_common::Session;

const PARTITIONS: u32 = 2;
/// SHA-256 of `abc` (FIPS 180-2 test vector).
const SHA256_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

fn part(key: &str) -> u32 {
    partition_for_key(key.as_bytes(), PARTITIONS)
}

async fn replay_topic(c: &mut Client, name: &str) -> String {
    c.ok(&format!(
        "CREATE topic={name} partitions={PARTITIONS} event_sourcing=true idempotent=true \
         aggregate_replay=true"
    ))
    .await
}

/// The APPEND_STREAM line of event `seq` of `key` (event id `<key>-<seq>`).
fn append_line(topic: &str, key: &str, seq: u64, msg: &str) -> String {
    format!(
        "APPEND_STREAM topic={topic} key={key} version={seq} event_type=Scored \
         event_id={key}-{seq} producerId=p1 seqNum={seq} epoch=0 message={msg}"
    )
}

/// Appends event `seq` of `key`; returns its offset.
async fn append(c: &mut Client, topic: &str, key: &str, seq: u64, msg: &str) -> u64 {
    let f = kv(&c.ok(&append_line(topic, key, seq, msg)).await);
    assert_eq!(f["version"], seq.to_string());
    assert_eq!(f["partition"], part(key).to_string());
    f["offset"].parse().unwrap()
}

async fn leo(c: &mut Client, topic: &str, partition: u32) -> u64 {
    let line = c
        .ok(&format!("LIST_OFFSETS topic={topic} partition={partition}"))
        .await;
    line.split(':')
        .find_map(|t| t.strip_prefix("leo="))
        .unwrap()
        .parse()
        .unwrap()
}

/// READ_STREAM's batch (the second frame).
async fn read_stream(c: &mut Client, topic: &str, key: &str) -> Batch {
    let id = c
        .send_line(&format!("READ_STREAM topic={topic} key={key}"))
        .await;
    let first = c.recv().await.unwrap();
    assert_eq!((first.request_id, first.status), (id, Status::Ok));
    let second = c.recv().await.unwrap();
    assert_eq!(second.request_id, id);
    Batch::decode(second.payload).unwrap()
}

#[tokio::test]
async fn the_topic_policy_is_validated_echoed_persisted_and_frozen() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    let e = c
        .error("CREATE topic=r aggregate_replay=true idempotent=true")
        .await;
    assert_eq!(e.code, "invalid_topic_policy");
    assert_eq!(e.fields["field"], "aggregate_replay");
    assert!(e.fields.contains_key("reason"));
    let e = c
        .error("CREATE topic=r aggregate_replay=true event_sourcing=true")
        .await;
    assert_eq!(
        (e.code.as_str(), e.fields["field"].as_str()),
        ("invalid_topic_policy", "idempotent")
    );
    let e = c
        .error("CREATE topic=r event_sourcing=true idempotent=true aggregate_replay=yes")
        .await;
    assert_eq!(e.code, "invalid_aggregate_replay");
    assert_eq!(e.class, ErrorClass::Validation);
    assert!(c.ok("LIST").await.starts_with("OK count=0"));

    let line = replay_topic(&mut c, "r").await;
    assert_eq!(kv(&line)["aggregate_replay"], "true");
    // Repeating the CREATE is a no-op; an ordinary topic says false.
    assert_eq!(kv(&replay_topic(&mut c, "r").await)["revision"], "1");
    let plain = c.ok("CREATE topic=plain event_sourcing=true").await;
    assert_eq!(kv(&plain)["aggregate_replay"], "false");

    for (topic, want) in [("r", true), ("plain", false)] {
        let describe = c.ok(&format!("DESCRIBE topic={topic}")).await;
        let json: serde_json::Value = serde_json::from_str(&describe).unwrap();
        assert_eq!(json["definition"]["policy"]["aggregate_replay"], want);
        let meta = kv(&c.ok(&format!("METADATA topic={topic}")).await);
        assert_eq!(meta["aggregate_replay"], want.to_string());
    }

    // The partition count is frozen; the flag is immutable.
    let e = c
        .error(
            "CREATE topic=r partitions=3 event_sourcing=true idempotent=true aggregate_replay=true",
        )
        .await;
    assert_eq!(e.code, "create_topic_failed");
    assert!(
        e.fields["reason"].contains("aggregate replay topic"),
        "{e:?}"
    );
    let e = c.error("CREATE topic=r aggregate_replay=false").await;
    assert_eq!(e.code, "invalid_aggregate_replay");
    let e = c.error("CREATE topic=plain aggregate_replay=true").await;
    assert_eq!(e.code, "invalid_aggregate_replay");

    // Persisted in the manifest.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    let meta = kv(&c.ok("METADATA topic=r").await);
    assert_eq!(meta["aggregate_replay"], "true");
    assert_eq!(meta["partitions"], PARTITIONS.to_string());
}

#[tokio::test]
async fn publish_is_refused_on_a_replay_topic() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    replay_topic(&mut c, "r").await;
    let e = c
        .error("PUBLISH topic=r producerId=p acks=1 key=m message=x")
        .await;
    assert_eq!(e.code, "aggregate_publish_requires_append_stream");
    assert_eq!(e.fields["topic"], "r");
    assert_eq!(e.class, ErrorClass::Internal);
    let batch = Batch {
        records: vec![Record {
            producer_id: "p".into(),
            key: Bytes::from_static(b"m"),
            ..Record::new("x")
        }],
        ..Batch::new("r", -1)
    };
    let frame = c.publish_batch(&batch).await;
    assert_eq!(frame.status, Status::Error);
    let e = cursus_wire::ErrorPayload::decode(frame.payload).unwrap();
    assert_eq!(e.code, "aggregate_publish_requires_append_stream");
    // A transactional publish too (only TXN_APPEND_STREAM writes events).
    let s = Session::init(&mut c, "t1").await;
    s.begin(&mut c).await;
    let e = c.error(&s.publish_line("r", 0, 1, "x")).await;
    assert_eq!(e.code, "aggregate_publish_requires_append_stream");
    assert_eq!(leo(&mut c, "r", 0).await + leo(&mut c, "r", 1).await, 0);
}

#[tokio::test]
async fn appends_need_an_identity_and_store_it() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    replay_topic(&mut c, "r").await;
    let base = "APPEND_STREAM topic=r key=m version=1";
    for (line, code) in [
        (
            format!("{base} producerId=p seqNum=1 message=abc"),
            "missing_event_id",
        ),
        (
            format!("{base} event_id=e seqNum=1 message=abc"),
            "missing_producer_id",
        ),
        (
            format!("{base} event_id=e producerId=p message=abc"),
            "invalid_producer_sequence",
        ),
        (
            format!("{base} event_id=e producerId=p seqNum=0 message=abc"),
            "invalid_producer_sequence",
        ),
        (
            format!("{base} event_id=e producerId=p seqNum=x message=abc"),
            "invalid_producer_sequence",
        ),
        (
            format!("{base} event_id=e producerId=p seqNum=1 epoch=-1 message=abc"),
            "invalid_producer_epoch",
        ),
    ] {
        assert_eq!(c.error(&line).await.code, code, "{line}");
    }
    assert_eq!(leo(&mut c, "r", part("m")).await, 0, "nothing appended");

    // epoch is optional (0).
    let f = kv(&c
        .ok(
            "APPEND_STREAM topic=r key=m version=1 event_type=Started event_id=m-1 \
             producerId=p1 seqNum=7 message=abc",
        )
        .await);
    assert_eq!(f["version"], "1");
    append(&mut c, "r", "m", 2, "second").await;
    let batch = read_stream(&mut c, "r", "m").await;
    let r = &batch.records[0];
    assert_eq!(r.event_id, "m-1");
    assert_eq!(r.payload_digest, SHA256_ABC);
    assert_eq!((r.producer_id.as_str(), r.seq_num, r.epoch), ("p1", 7, 0));
    assert_eq!((r.aggregate_version, r.event_type.as_str()), (1, "Started"));
    assert_eq!(batch.records[1].event_id, "m-2");
    assert_eq!(batch.records[1].payload_digest.len(), 64);
    // seqNum is stored, not checked for order (the version orders events).
    c.ok(
        "APPEND_STREAM topic=r key=m version=3 event_id=m-3 producerId=p1 seqNum=1 \
          message=third",
    )
    .await;
}

/// A key other than `m` living on the same partition.
fn neighbour(of: &str) -> String {
    (0..)
        .map(|i| format!("k{i}"))
        .find(|k| part(k) == part(of))
        .unwrap()
}

/// The retry and conflict rules on events 1 (`one`, at `o1`) and 2 (`two`,
/// at `o2`) of `m`.
async fn check_identities(c: &mut Client, o1: u64, o2: u64) {
    let p = part("m");
    let end = leo(c, "r", p).await;
    // The same event again: its original reply, nothing appended.
    for (seq, msg, offset) in [(1, "one", o1), (2, "two", o2)] {
        let f = kv(&c.ok(&append_line("r", "m", seq, msg)).await);
        assert_eq!(f["offset"], offset.to_string());
        assert_eq!(f["version"], seq.to_string());
        assert_eq!(f["partition"], p.to_string());
    }
    assert_eq!(leo(c, "r", p).await, end);

    // Same sequence, other payload or other event id.
    let e = c.error(&append_line("r", "m", 1, "changed")).await;
    assert_eq!(e.code, "aggregate_identity_conflict");
    assert_eq!(e.fields["sequence"], "1");
    assert_eq!(e.class, ErrorClass::Conflict);
    let e = c
        .error(
            "APPEND_STREAM topic=r key=m version=2 event_id=other producerId=p1 seqNum=2 \
             message=two",
        )
        .await;
    assert_eq!(
        (e.code.as_str(), e.fields["sequence"].as_str()),
        ("aggregate_identity_conflict", "2")
    );
    // A new sequence with an event id already used in the partition, by
    // this aggregate or another one.
    for key in ["m".to_owned(), neighbour("m")] {
        let version = if key == "m" { 3 } else { 1 };
        let e = c
            .error(&format!(
                "APPEND_STREAM topic=r key={key} version={version} event_id=m-1 \
                 producerId=p1 seqNum=3 message=three"
            ))
            .await;
        assert_eq!(e.code, "aggregate_identity_conflict");
        assert_eq!(e.fields["event_id"], "m-1");
    }
    // A gap is the ordinary version conflict.
    let e = c.error(&append_line("r", "m", 5, "five")).await;
    assert_eq!(e.code, "version_conflict");
    assert_eq!(e.fields["current"], "2");
    assert_eq!(leo(c, "r", p).await, end);
}

#[tokio::test]
async fn exact_retries_answer_the_original_offset_and_reuse_is_a_conflict() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    replay_topic(&mut c, "r").await;
    let o1 = append(&mut c, "r", "m", 1, "one").await;
    let o2 = append(&mut c, "r", "m", 2, "two").await;
    check_identities(&mut c, o1, o2).await;
    // The identities are rebuilt from the log after a crash.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    check_identities(&mut c, o1, o2).await;
    append(&mut c, "r", "m", 3, "three").await;
    // Event ids are unique per partition, not per topic.
    let elsewhere = (0..)
        .map(|i| format!("k{i}"))
        .find(|k| part(k) != part("m"))
        .unwrap();
    c.ok(&format!(
        "APPEND_STREAM topic=r key={elsewhere} version=1 event_id=m-1 producerId=p1 seqNum=1 \
         message=x"
    ))
    .await;
}

#[tokio::test]
async fn other_event_sourcing_topics_store_an_event_id_when_given() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=es partitions=2 event_sourcing=true")
        .await;
    c.ok("APPEND_STREAM topic=es key=a version=1 event_id=ev-1 message=x")
        .await;
    c.ok("APPEND_STREAM topic=es key=a version=2 message=y")
        .await;
    let batch = read_stream(&mut c, "es", "a").await;
    assert_eq!(batch.records[0].event_id, "ev-1");
    assert_eq!(batch.records[0].payload_digest, "");
    assert_eq!(batch.records[1].event_id, "");
    // Not a replay topic: PUBLISH stays allowed, no identity is required.
    c.ok("PUBLISH topic=es producerId=p acks=1 message=z").await;
}
