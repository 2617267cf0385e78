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

// ------------------------------------------------------------- proofs

/// `OK proof=<JSON>`: the JSON text.
async fn proof_ok(c: &mut Client, line: &str) -> String {
    let reply = c.ok(line).await;
    reply
        .strip_prefix("OK proof=")
        .unwrap_or_else(|| panic!("{reply}"))
        .to_owned()
}

/// A failed proof: the typed error's code and its `proof` field as JSON.
async fn proof_err(c: &mut Client, line: &str) -> (String, serde_json::Value) {
    let e = c.error(line).await;
    let json = e
        .fields
        .get("proof")
        .unwrap_or_else(|| panic!("{line}: no proof field in {e:?}"));
    assert!(
        json.starts_with(r#"{"topic":"#) && !json.contains('\n'),
        "compact JSON in key order: {json}"
    );
    (e.code.clone(), serde_json::from_str(json).unwrap())
}

/// Stops `broker`, runs `tamper` on the data directory, starts it again.
fn restart_after(mut broker: TestBroker, tamper: impl FnOnce(&std::path::Path)) -> TestBroker {
    broker.kill9();
    tamper(&broker.data_dir());
    let dir = broker.dir.take().unwrap();
    TestBroker::start_in(dir, Vec::new())
}

/// Appends `record` (key `m`) to partition `partition` of `topic` straight
/// through the storage layer, as a foreign writer or a damaged copy of the
/// data could leave it: the broker itself never writes such a record (it
/// refuses PUBLISH on a replay topic and checks every append), so this is
/// the only honest way to show what a proof finds in a log it did not
/// write. The broker must be stopped.
fn write_foreign_record(data: &std::path::Path, topic: &str, partition: u32, mut record: Record) {
    use cursus_broker::storage::{LogConfig, PartitionLog};
    let log = PartitionLog::open(
        data.join("topics").join(topic).join(partition.to_string()),
        LogConfig::default(),
    )
    .unwrap();
    record.topic = topic.to_owned();
    record.partition = partition as i32;
    record.offset = log.log_end_offset();
    record.timestamp = 1;
    let mut buf = bytes::BytesMut::new();
    record
        .encode(cursus_wire::RecordVersion::V3, &mut buf)
        .unwrap();
    let info = log.append(&[(1, buf.freeze())]).unwrap();
    log.sync_to(info.last_offset).unwrap();
}

fn foreign_event(seq: u64, event_id: &str, payload: &str, digest_of: &str) -> Record {
    use sha2::{Digest, Sha256};
    let digest: String = Sha256::digest(digest_of.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Record {
        key: Bytes::from_static(b"m"),
        aggregate_version: seq,
        event_type: "Scored".into(),
        event_id: event_id.into(),
        payload_digest: digest,
        producer_id: "p1".into(),
        seq_num: seq,
        ..Record::new(payload.to_owned())
    }
}

#[tokio::test]
async fn a_complete_proof_and_its_json() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    replay_topic(&mut c, "r").await;
    let p = part("m");
    // Another match first, so that m's first offset is not 0 … and one on
    // offset 0 whose first_offset is omitted.
    let n = neighbour("m");
    let first = append(&mut c, "r", &n, 1, "x").await;
    assert_eq!(first, 0);
    let o1 = append(&mut c, "r", "m", 1, "abc").await;
    let o2 = append(&mut c, "r", "m", 2, "def").await;
    let hwm = leo(&mut c, "r", p).await;
    let json = proof_ok(&mut c, "AGGREGATE_REPLAY_PROOF topic=r match_id=m").await;
    assert_eq!(
        json,
        format!(
            r#"{{"topic":"r","partition":{p},"match_id":"m","earliest_retained_sequence":1,"latest_retained_sequence":2,"first_offset":{o1},"last_offset":{o2},"event_count":2,"first_event_id":"m-1","last_event_id":"m-2","sequence_complete":true,"retention_complete_from_sequence_one":true,"proof_hwm":{hwm},"status":"complete"}}"#
        )
    );
    // Offsets 0 are omitted (as every zero starred field); key= is an alias; the right partition and
    // expected_last_sequence are accepted.
    let json = proof_ok(
        &mut c,
        &format!("AGGREGATE_REPLAY_PROOF topic=r key={n} partition={p} expected_last_sequence=1"),
    )
    .await;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v.get("first_offset").is_none(), "{json}");
    assert!(v.get("last_offset").is_none(), "{json}");
    assert_eq!(v["event_count"], 1);
}

#[tokio::test]
async fn proof_requests_are_checked_in_order() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    replay_topic(&mut c, "r").await;
    c.ok("CREATE topic=es event_sourcing=true").await;
    let other = (PARTITIONS - 1 - part("m")).to_string();
    for (line, code) in [
        ("AGGREGATE_REPLAY_PROOF match_id=m".to_owned(), "missing_topic"),
        ("AGGREGATE_REPLAY_PROOF topic=r".to_owned(), "missing_match_id"),
        (
            "AGGREGATE_REPLAY_PROOF topic=zz match_id=m".to_owned(),
            "topic_not_found",
        ),
        (
            "AGGREGATE_REPLAY_PROOF topic=es match_id=m partition=9".to_owned(),
            "aggregate_replay_not_enabled",
        ),
        (
            format!("AGGREGATE_REPLAY_PROOF topic=r match_id=m partition={other} expected_last_sequence=0"),
            "aggregate_partition_mismatch",
        ),
        (
            "AGGREGATE_REPLAY_PROOF topic=r match_id=m partition=x".to_owned(),
            "aggregate_partition_mismatch",
        ),
        (
            "AGGREGATE_REPLAY_PROOF topic=r match_id=m expected_last_sequence=0".to_owned(),
            "invalid_expected_last_sequence",
        ),
        (
            "AGGREGATE_REPLAY_PROOF topic=r match_id=m expected_last_sequence=two".to_owned(),
            "invalid_expected_last_sequence",
        ),
    ] {
        assert_eq!(c.error(&line).await.code, code, "{line}");
    }
    let e = c
        .error(&format!(
            "AGGREGATE_REPLAY_PROOF topic=r match_id=m partition={other}"
        ))
        .await;
    assert_eq!(e.fields["expected"], part("m").to_string());
    assert_eq!(e.fields["got"], other);
    assert_eq!(e.class, ErrorClass::Internal);
}

#[tokio::test]
async fn not_found_and_an_unexpected_last_sequence() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    replay_topic(&mut c, "r").await;
    let (code, proof) = proof_err(&mut c, "AGGREGATE_REPLAY_PROOF topic=r match_id=m").await;
    assert_eq!(code, "aggregate_proof_not_found");
    assert_eq!(proof["status"], "not_found");
    assert_eq!(proof["event_count"], 0);
    assert_eq!(proof["sequence_complete"], false);
    assert!(proof.get("earliest_retained_sequence").is_none());
    append(&mut c, "r", "m", 1, "a").await;
    append(&mut c, "r", "m", 2, "b").await;
    let (code, proof) = proof_err(
        &mut c,
        "AGGREGATE_REPLAY_PROOF topic=r match_id=m expected_last_sequence=3",
    )
    .await;
    assert_eq!(code, "aggregate_proof_proof_unavailable");
    assert_eq!(proof["status"], "proof_unavailable");
    assert_eq!(proof["latest_retained_sequence"], 2);
    assert!(proof["diagnostic"]
        .as_str()
        .unwrap()
        .contains("expected_last_sequence 3"));
    // The typed error's class: internal, not retryable.
    let e = c
        .error("AGGREGATE_REPLAY_PROOF topic=r match_id=m expected_last_sequence=3")
        .await;
    assert_eq!((e.class, e.retryable), (ErrorClass::Internal, false));
}

#[tokio::test]
async fn a_sequence_gap_in_a_foreign_record_fails_the_proof() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    replay_topic(&mut c, "r").await;
    append(&mut c, "r", "m", 1, "a").await;
    append(&mut c, "r", "m", 2, "b").await;
    let p = part("m");
    let broker = restart_after(broker, |data| {
        write_foreign_record(data, "r", p, foreign_event(4, "m-4", "d", "d"))
    });
    let mut c = broker.client().await;
    let (code, proof) = proof_err(&mut c, "AGGREGATE_REPLAY_PROOF topic=r match_id=m").await;
    assert_eq!(code, "aggregate_proof_sequence_gap");
    assert_eq!(proof["status"], "sequence_gap");
    assert_eq!(proof["event_count"], 2, "the events before the gap");
    assert_eq!(proof["sequence_complete"], false);
    assert_eq!(proof["retention_complete_from_sequence_one"], true);
    assert_eq!(
        proof["diagnostic"],
        format!("offset 2: sequence 4 follows 2")
    );
    // The stream index skipped the record (it does not continue the
    // stream): the aggregate is still at version 2.
    assert_eq!(c.ok("STREAM_VERSION topic=r key=m").await, "OK version=2");
    let e = c
        .error("AGGREGATE_EVENT_RANGE_READ topic=r match_id=m from_sequence=1 to_sequence=2")
        .await;
    assert_eq!(e.code, "aggregate_range_sequence_gap");
    assert!(e.fields["proof"].contains(r#""status":"sequence_gap""#));
}

#[tokio::test]
async fn identity_conflicts_in_foreign_records_fail_the_proof() {
    let p = part("m");
    for (name, record, needle) in [
        (
            "digest",
            foreign_event(3, "m-3", "tampered", "original"),
            "payload_digest does not match",
        ),
        ("repeat", foreign_event(3, "m-1", "c", "c"), "repeats"),
        ("no id", foreign_event(3, "", "c", "c"), "no event_id"),
        (
            "no sequence",
            foreign_event(0, "m-3", "c", "c"),
            "no sequence",
        ),
    ] {
        let broker = TestBroker::start();
        let mut c = broker.client().await;
        replay_topic(&mut c, "r").await;
        append(&mut c, "r", "m", 1, "a").await;
        append(&mut c, "r", "m", 2, "b").await;
        let broker = restart_after(broker, |data| write_foreign_record(data, "r", p, record));
        let mut c = broker.client().await;
        let (code, proof) = proof_err(&mut c, "AGGREGATE_REPLAY_PROOF topic=r match_id=m").await;
        assert_eq!(code, "aggregate_proof_identity_conflict", "{name}");
        assert_eq!(proof["status"], "identity_conflict");
        assert_eq!(proof["event_count"], 2);
        let diagnostic = proof["diagnostic"].as_str().unwrap();
        assert!(
            diagnostic.starts_with("offset 2: ") && diagnostic.contains(needle),
            "{name}: {diagnostic}"
        );
    }
}

#[tokio::test]
async fn retention_leaves_a_retention_gap() {
    // Tiny segments and a fast retention pass; the topic keeps 1 byte, so
    // every sealed segment goes.
    let broker = TestBroker::start_with(&[
        "--segment-bytes",
        "300",
        "--retention-check-interval-ms",
        "50",
    ]);
    let mut c = broker.client().await;
    c.ok(
        "CREATE topic=r partitions=1 event_sourcing=true idempotent=true \
          aggregate_replay=true retention_bytes=1",
    )
    .await;
    append_one(&mut c, "m", 1, "a").await;
    append_one(&mut c, "m", 2, "b").await;
    let filler = "f".repeat(200);
    for v in 1..=3 {
        append_one(&mut c, "filler", v, &filler).await;
    }
    earliest_at_least(&mut c, "r", 0, 2).await;
    let o3 = append_one(&mut c, "m", 3, "c").await;
    let (code, proof) = proof_err(&mut c, "AGGREGATE_REPLAY_PROOF topic=r match_id=m").await;
    assert_eq!(code, "aggregate_proof_retention_gap");
    assert_eq!(proof["status"], "retention_gap");
    assert_eq!(proof["earliest_retained_sequence"], 3);
    assert_eq!(proof["first_offset"], o3);
    assert_eq!(proof["sequence_complete"], true);
    assert_eq!(proof["retention_complete_from_sequence_one"], false);
    let e = c
        .error("AGGREGATE_EVENT_RANGE_READ topic=r match_id=m from_sequence=3 to_sequence=3")
        .await;
    assert_eq!(e.code, "aggregate_range_retention_gap");
    // The retried event 1 is gone: its identity cannot be checked.
    let e = c
        .error(
            "APPEND_STREAM topic=r key=m version=1 event_id=m-1 producerId=p1 seqNum=1 message=a",
        )
        .await;
    assert_eq!(e.code, "aggregate_proof_unavailable");
}

/// APPEND_STREAM on the one-partition topic `r`.
async fn append_one(c: &mut Client, key: &str, seq: u64, msg: &str) -> u64 {
    let f = kv(&c.ok(&append_line("r", key, seq, msg)).await);
    f["offset"].parse().unwrap()
}

// --------------------------------------------------------- range reads

#[tokio::test]
async fn range_reads() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    replay_topic(&mut c, "r").await;
    let mut offsets = Vec::new();
    for seq in 1..=4 {
        offsets.push(append(&mut c, "r", "m", seq, &format!("payload {seq}")).await);
    }
    let reply = c
        .ok("AGGREGATE_EVENT_RANGE_READ topic=r match_id=m from_sequence=2 to_sequence=3")
        .await;
    let json = reply.strip_prefix("OK range=").unwrap();
    let proof = proof_ok(&mut c, "AGGREGATE_REPLAY_PROOF topic=r match_id=m").await;
    let events: Vec<String> = [2usize, 3]
        .iter()
        .map(|&s| {
            format!(
                r#"{{"offset":{},"match_id":"m","event_sequence":{s},"event_id":"m-{s}","event_type":"Scored","payload":"payload {s}"}}"#,
                offsets[s - 1]
            )
        })
        .collect();
    assert_eq!(
        json,
        format!(r#"{{"proof":{proof},"events":[{}]}}"#, events.join(","))
    );
    // max_records caps the page; the alias and the partition are accepted.
    let reply = c
        .ok(&format!(
            "AGGREGATE_EVENT_RANGE_READ topic=r key=m partition={} from_sequence=1 to_sequence=4 \
             max_records=2",
            part("m")
        ))
        .await;
    let v: serde_json::Value =
        serde_json::from_str(reply.strip_prefix("OK range=").unwrap()).unwrap();
    let seqs: Vec<u64> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event_sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, vec![1, 2]);
    // Beyond the last event: incomplete.
    let e = c
        .error("AGGREGATE_EVENT_RANGE_READ topic=r match_id=m from_sequence=3 to_sequence=9")
        .await;
    assert_eq!(e.code, "aggregate_range_incomplete");
    assert_eq!(
        (
            e.fields["from"].as_str(),
            e.fields["to"].as_str(),
            e.fields["returned"].as_str()
        ),
        ("3", "9", "2")
    );
    // A match without events.
    let e = c
        .error("AGGREGATE_EVENT_RANGE_READ topic=r match_id=none from_sequence=1 to_sequence=1")
        .await;
    assert_eq!(e.code, "aggregate_range_not_found");
    assert!(e.fields["proof"].contains(r#""status":"not_found""#));
    // Field checks.
    let base = "AGGREGATE_EVENT_RANGE_READ topic=r match_id=m";
    for (args, code) in [
        ("to_sequence=2", "invalid_from_sequence"),
        ("from_sequence=0 to_sequence=2", "invalid_from_sequence"),
        ("from_sequence=2", "invalid_to_sequence"),
        ("from_sequence=3 to_sequence=2", "invalid_to_sequence"),
        (
            "from_sequence=1 to_sequence=2 max_records=0",
            "invalid_max_records",
        ),
        (
            "from_sequence=1 to_sequence=2 max_records=x",
            "invalid_max_records",
        ),
    ] {
        assert_eq!(
            c.error(&format!("{base} {args}")).await.code,
            code,
            "{args}"
        );
    }
    assert_eq!(
        c.error("AGGREGATE_EVENT_RANGE_READ topic=r from_sequence=1 to_sequence=2")
            .await
            .code,
        "missing_match_id"
    );
}
