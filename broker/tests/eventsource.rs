//! Event sourcing against the real broker (docs/event-sourcing.md): every
//! command's reply and error, the two-frame replies at the frame level,
//! READ_STREAM paging and snapshots, BROWSE_MESSAGES budgets,
//! READ_STREAM_HISTORY completeness, restarts, retention, DELETE and
//! TRUNCATE.

mod common;
mod txn_common;

use bytes::Bytes;
use common::*;
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{Acks, Batch, Command, ErrorClass, ErrorPayload, Frame, Kind, Record, Status};
use txn_common::Session;

const ES: &str = "es";
const PARTITIONS: u32 = 3;

async fn es_topic(c: &mut Client, name: &str) {
    c.ok(&format!(
        "CREATE topic={name} partitions={PARTITIONS} event_sourcing=true"
    ))
    .await;
}

fn part(key: &str) -> u32 {
    partition_for_key(key.as_bytes(), PARTITIONS)
}

/// APPEND_STREAM `key` version `v` with payload `msg`, expecting success;
/// returns the offset.
async fn append(c: &mut Client, topic: &str, key: &str, v: u64, msg: &str) -> u64 {
    let f = kv(&c
        .ok(&format!(
            "APPEND_STREAM topic={topic} key={key} version={v} event_type=E{v} message={msg}"
        ))
        .await);
    assert_eq!(f["version"], v.to_string());
    assert_eq!(f["partition"], part(key).to_string());
    f["offset"].parse().unwrap()
}

async fn version(c: &mut Client, topic: &str, key: &str) -> u64 {
    let reply = c
        .ok(&format!("STREAM_VERSION topic={topic} key={key}"))
        .await;
    reply
        .strip_prefix("OK version=")
        .unwrap_or_else(|| panic!("{reply}"))
        .parse()
        .unwrap()
}

/// A two-frame exchange: both frames are kind 4 RESPONSE, status OK, with
/// the request's id and command; returns the envelope text and the batch.
async fn two(c: &mut Client, line: &str) -> (String, Batch) {
    let id = c.send_line(line).await;
    let (command, _) = cursus_wire::CommandPayload::parse_line(line).unwrap();
    let first = c.recv().await.expect("envelope frame");
    check_ok_frame(&first, command, id, line);
    let envelope = String::from_utf8(first.payload.to_vec()).unwrap();
    assert!(
        envelope.starts_with(r#"{"status":"OK""#),
        "{line}: {envelope}"
    );
    let second = c.recv().await.expect("batch frame");
    check_ok_frame(&second, command, id, line);
    let batch = Batch::decode(second.payload.clone()).expect("CBV2 batch");
    // Batch header bytes: magic, version 2, flags 0.
    assert_eq!(&second.payload[..8], b"CBV2\x00\x02\x00\x00");
    assert_eq!(
        batch.acks,
        Acks::Leader,
        "batches are written with acks \"1\""
    );
    (envelope, batch)
}

/// Kind 4, status OK, `command`, request `id`, also in the raw header bytes.
fn check_ok_frame(frame: &Frame, command: Command, id: u64, line: &str) {
    assert_eq!(frame.kind, Kind::Response, "{line}");
    assert_eq!(frame.status, Status::Ok, "{line}: {:?}", error_of(frame));
    assert_eq!(frame.request_id, id, "{line}");
    assert_eq!(frame.command, command, "{line}");
    let raw = frame_bytes(frame);
    assert_eq!(raw[6], 4, "kind byte");
    assert_eq!(&raw[8..10], &command.id().to_be_bytes(), "command bytes");
    assert_eq!(&raw[10..12], &[0, 1], "status bytes (OK)");
    assert_eq!(&raw[12..20], &id.to_be_bytes(), "request id bytes");
}

fn error_of(frame: &Frame) -> Option<ErrorPayload> {
    ErrorPayload::decode(frame.payload.clone()).ok()
}

/// A JSON-envelope error: one status-OK frame, no batch after it (the next
/// request's reply comes next).
async fn envelope_error(c: &mut Client, line: &str) -> String {
    let frame = c.request(line).await;
    assert_eq!(frame.kind, Kind::Response);
    assert_eq!(frame.status, Status::Ok, "{line}");
    let text = String::from_utf8(frame.payload.to_vec()).unwrap();
    // Nothing else follows: the next request is answered next.
    let probe = c.request("LIST").await;
    assert!(
        probe.payload.starts_with(b"OK count="),
        "{line}: a batch followed"
    );
    text
}

fn payloads(batch: &Batch) -> Vec<String> {
    batch
        .records
        .iter()
        .map(|r| String::from_utf8(r.payload.to_vec()).unwrap())
        .collect()
}

fn versions(batch: &Batch) -> Vec<u64> {
    batch.records.iter().map(|r| r.aggregate_version).collect()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

// ------------------------------------------------------------------ append

#[tokio::test]
async fn append_assigns_versions_and_reports_conflicts() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    let help = c.ok("HELP").await;
    for cmd in [
        "APPEND_STREAM",
        "READ_STREAM",
        "STREAM_VERSION",
        "SAVE_SNAPSHOT",
        "READ_SNAPSHOT",
        "BROWSE_MESSAGES",
        "READ_STREAM_HISTORY",
    ] {
        assert!(help.contains(cmd), "{help}");
    }

    assert_eq!(version(&mut c, ES, "order-1").await, 0);
    let p = part("order-1");
    assert_eq!(
        c.ok("APPEND_STREAM topic=es key=order-1 version=1 event_type=Created message={\"n\":1}")
            .await,
        format!("OK version=1 offset=0 partition={p}")
    );
    assert_eq!(
        c.ok("APPEND_STREAM topic=es key=order-1 version=2 message=second")
            .await,
        format!("OK version=2 offset=1 partition={p}")
    );
    assert_eq!(version(&mut c, ES, "order-1").await, 2);

    for (v, current) in [(2, 2), (1, 2), (4, 2)] {
        let e = c
            .error(&format!(
                "APPEND_STREAM topic=es key=order-1 version={v} message=x"
            ))
            .await;
        assert_eq!(e.code, "version_conflict");
        assert_eq!(e.class, ErrorClass::Conflict);
        assert!(!e.retryable);
        assert_eq!(e.fields["current"], current.to_string());
        assert_eq!(e.fields["expected"], v.to_string());
    }
    // A new aggregate starts at 1.
    let e = c
        .error("APPEND_STREAM topic=es key=order-2 version=2 message=x")
        .await;
    assert_eq!(e.code, "version_conflict");
    assert_eq!(e.fields["current"], "0");
    append(&mut c, ES, "order-2", 1, "x").await;
    assert_eq!(version(&mut c, ES, "order-1").await, 2);
    assert_eq!(version(&mut c, ES, "order-2").await, 1);
}

#[tokio::test]
async fn an_exact_retry_by_event_id_answers_the_original_append() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    let p = part("order-9");
    let first = c
        .ok("APPEND_STREAM topic=es key=order-9 version=1 event_id=e-1 message=a")
        .await;
    assert_eq!(first, format!("OK version=1 offset=0 partition={p}"));
    c.ok("APPEND_STREAM topic=es key=order-9 version=2 event_id=e-2 message=b")
        .await;
    // The same version and event id again: the original reply, nothing appended.
    for (v, id, offset) in [(1, "e-1", 0), (2, "e-2", 1)] {
        let again = c
            .ok(&format!(
                "APPEND_STREAM topic=es key=order-9 version={v} event_id={id} message=x"
            ))
            .await;
        assert_eq!(
            again,
            format!("OK version={v} offset={offset} partition={p}")
        );
    }
    assert_eq!(version(&mut c, ES, "order-9").await, 2);
    // Another id at a taken version, an id of another version, or no id:
    // a conflict as before.
    for line in [
        "version=2 event_id=e-3 message=b",
        "version=2 event_id=e-1 message=b",
        "version=2 message=b",
    ] {
        let e = c
            .error(&format!("APPEND_STREAM topic=es key=order-9 {line}"))
            .await;
        assert_eq!(e.code, "version_conflict", "{line}");
        assert_eq!(e.fields["current"], "2");
    }
}

#[tokio::test]
async fn every_command_validates_its_fields() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    c.ok("CREATE topic=plain partitions=1").await;
    let cases: &[(&str, &str)] = &[
        ("APPEND_STREAM key=k version=1 message=m", "missing_topic"),
        ("APPEND_STREAM topic=es version=1 message=m", "missing_key"),
        ("APPEND_STREAM topic=es key=k message=m", "missing_version"),
        (
            "APPEND_STREAM topic=es key=k version=0 message=m",
            "invalid_version",
        ),
        (
            "APPEND_STREAM topic=es key=k version=x message=m",
            "invalid_version",
        ),
        (
            "APPEND_STREAM topic=es key=k version=-1 message=m",
            "invalid_version",
        ),
        ("APPEND_STREAM topic=es key=k version=1", "missing_message"),
        (
            "APPEND_STREAM topic=es key=k version=1 schema_version=x message=m",
            "invalid_schema_version",
        ),
        (
            "APPEND_STREAM topic=es key=k version=1 schema_version=-2 message=m",
            "invalid_schema_version",
        ),
        (
            "APPEND_STREAM topic=nope key=k version=1 message=m",
            "topic_not_found",
        ),
        (
            "APPEND_STREAM topic=plain key=k version=1 message=m",
            "event_sourcing_not_enabled",
        ),
        ("STREAM_VERSION key=k", "missing_topic"),
        ("STREAM_VERSION topic=es", "missing_key"),
        ("STREAM_VERSION topic=nope key=k", "topic_not_found"),
        (
            "STREAM_VERSION topic=plain key=k",
            "event_sourcing_not_enabled",
        ),
        ("SAVE_SNAPSHOT topic=es version=1 message=s", "missing_key"),
        ("SAVE_SNAPSHOT topic=es key=k message=s", "missing_version"),
        (
            "SAVE_SNAPSHOT topic=es key=k version=0 message=s",
            "invalid_version",
        ),
        ("SAVE_SNAPSHOT topic=es key=k version=1", "missing_message"),
        (
            "SAVE_SNAPSHOT topic=plain key=k version=1 message=s",
            "event_sourcing_not_enabled",
        ),
        ("READ_SNAPSHOT topic=es", "missing_key"),
        ("READ_SNAPSHOT topic=nope key=k", "topic_not_found"),
        (
            "READ_SNAPSHOT topic=plain key=k",
            "event_sourcing_not_enabled",
        ),
        ("READ_STREAM topic=es", "missing_key"),
        ("READ_STREAM key=k", "missing_topic"),
        ("READ_STREAM topic=nope key=k", "topic_not_found"),
        (
            "READ_STREAM topic=plain key=k",
            "event_sourcing_not_enabled",
        ),
        (
            "READ_STREAM topic=es key=k max_events=0",
            "invalid_max_events",
        ),
        (
            "READ_STREAM topic=es key=k max_events=4097",
            "invalid_max_events",
        ),
        (
            "READ_STREAM topic=es key=k max_bytes=1023",
            "invalid_max_bytes",
        ),
        (
            "READ_STREAM topic=es key=k max_bytes=33554433",
            "invalid_max_bytes",
        ),
        ("READ_STREAM_HISTORY topic=es", "missing_key"),
        ("READ_STREAM_HISTORY key=k", "missing_topic"),
        ("READ_STREAM_HISTORY topic=nope key=k", "topic_not_found"),
        (
            "READ_STREAM_HISTORY topic=plain key=k",
            "event_sourcing_not_enabled",
        ),
    ];
    for (line, code) in cases {
        let e = c.error(line).await;
        assert_eq!(e.code, *code, "{line}: {}", e.render());
    }
    let e = c
        .error("APPEND_STREAM topic=plain key=k version=1 message=m")
        .await;
    assert_eq!(e.fields["topic"], "plain");
    assert_eq!(e.class, ErrorClass::Validation);
    let e = c.error("READ_STREAM topic=es key=k max_events=0").await;
    assert_eq!(e.fields["max_events"], "0");
    // Nothing was appended by the failed attempts.
    assert_eq!(version(&mut c, ES, "k").await, 0);
    // The connection is still in step (no stray second frames).
    assert!(c.ok("LIST").await.starts_with("OK count=2"));
}

#[tokio::test]
async fn publish_cannot_claim_a_stream_version_and_partitions_are_fixed() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    // A plain PUBLISH to an event-sourcing topic is allowed and is not an event.
    c.ok("PUBLISH topic=es key=a acks=1 producerId=p message=plain")
        .await;
    assert_eq!(version(&mut c, ES, "a").await, 0);
    let batch = Batch {
        acks: Acks::Leader,
        records: vec![Record {
            key: Bytes::from_static(b"a"),
            aggregate_version: 1,
            producer_id: "p".into(),
            ..Record::new(Bytes::from_static(b"forged"))
        }],
        ..Batch::new(ES, part("a") as i32)
    };
    let frame = c.publish_batch(&batch).await;
    assert_eq!(frame.status, Status::Error);
    let e = ErrorPayload::decode(frame.payload).unwrap();
    assert_eq!(e.code, "invalid_aggregate_version");
    append(&mut c, ES, "a", 1, "real").await;
    // The partition count of an aggregate's topic never changes.
    let e = c
        .error("CREATE topic=es partitions=4 event_sourcing=true")
        .await;
    assert_eq!(e.code, "invalid_partitions");
    assert_eq!(
        e.fields["reason"],
        "event_sourcing_partition_count_is_fixed"
    );
    // After a restart the plain record is still not part of the stream.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(version(&mut c, ES, "a").await, 1);
}

// ------------------------------------------------------------- READ_STREAM

#[tokio::test]
async fn read_stream_answers_two_frames_with_the_events() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    let p = part("acc-7");
    c.ok("APPEND_STREAM topic=es key=acc-7 version=1 event_type=Opened schema_version=3 metadata={\"by\": \"ann\"} message={\"balance\": 0}")
        .await;
    c.ok("APPEND_STREAM topic=es key=acc-7 version=2 message=deposit 10")
        .await;
    // Another aggregate on the same partition is not part of this stream.
    let other = (0..)
        .map(|i| format!("other-{i}"))
        .find(|k| part(k) == p)
        .unwrap();
    append(&mut c, ES, &other, 1, "noise").await;
    c.ok("APPEND_STREAM topic=es key=acc-7 version=3 event_type=Closed message=bye")
        .await;

    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=acc-7").await;
    assert_eq!(
        envelope,
        format!(
            r#"{{"status":"OK","topic":"es","key":"acc-7","partition":{p},"count":3,"has_more":false}}"#
        )
    );
    assert_eq!(batch.topic, ES);
    assert_eq!(batch.partition, p as i32);
    assert!(!batch.idempotent);
    assert_eq!(batch.records.len(), 3);
    let first = &batch.records[0];
    assert_eq!(first.payload, Bytes::from_static(b"{\"balance\": 0}"));
    assert_eq!(first.key, Bytes::from_static(b"acc-7"));
    assert_eq!(first.event_type, "Opened");
    assert_eq!(first.schema_version, 3);
    assert_eq!(first.aggregate_version, 1);
    assert_eq!(first.metadata, "{\"by\": \"ann\"}");
    assert_eq!(first.offset, 0);
    assert_eq!(first.topic, ES);
    assert_eq!(first.partition, p as i32);
    assert!(first.timestamp > 0);
    // Presence bits: timestamp, key, event_type, schema_version,
    // aggregate_version, metadata.
    assert_eq!(first.presence(), 0x1 | 0x4 | 0x8 | 0x10 | 0x20 | 0x40);
    let second = &batch.records[1];
    assert_eq!(second.payload, Bytes::from_static(b"deposit 10"));
    assert_eq!(second.event_type, "");
    assert_eq!(second.schema_version, 1, "schema_version defaults to 1");
    assert_eq!(second.metadata, "");
    assert_eq!(second.presence(), 0x1 | 0x4 | 0x10 | 0x20);
    assert_eq!(versions(&batch), vec![1, 2, 3]);
    assert_eq!(
        batch.records.iter().map(|r| r.offset).collect::<Vec<_>>(),
        vec![0, 1, 3]
    );

    // from_version selects the tail.
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=acc-7 from_version=3").await;
    assert_eq!(json(&envelope)["count"], 1);
    assert_eq!(payloads(&batch), vec!["bye"]);
    // Past the head and for an unknown aggregate: an empty batch.
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=acc-7 from_version=9").await;
    assert_eq!(json(&envelope)["count"], 0);
    assert!(batch.records.is_empty());
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=nobody").await;
    assert_eq!(
        envelope,
        format!(
            r#"{{"status":"OK","topic":"es","key":"nobody","partition":{},"count":0,"has_more":false}}"#,
            part("nobody")
        )
    );
    assert_eq!(batch.partition, part("nobody") as i32);
    assert!(batch.records.is_empty());
}

#[tokio::test]
async fn invalid_from_version_is_a_json_error_envelope() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    append(&mut c, ES, "a", 1, "x").await;
    for (raw, text) in [
        (
            "0",
            r#"{"status":"ERROR","error":"invalid_from_version from_version=0"}"#,
        ),
        (
            "abc",
            r#"{"status":"ERROR","error":"invalid_from_version from_version=abc"}"#,
        ),
    ] {
        let line = format!("READ_STREAM topic=es key=a from_version={raw}");
        assert_eq!(envelope_error(&mut c, &line).await, text);
    }
}

#[tokio::test]
async fn read_stream_pages_by_events_and_bytes() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    for v in 1..=10 {
        append(&mut c, ES, "p", v, &format!("e{v}")).await;
    }
    // By events.
    let mut from = 1;
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let (envelope, batch) = two(
            &mut c,
            &format!("READ_STREAM topic=es key=p from_version={from} max_events=4"),
        )
        .await;
        let env = json(&envelope);
        pages += 1;
        assert_eq!(env["count"], batch.records.len());
        seen.extend(versions(&batch));
        if env["has_more"] == true {
            from = env["next_version"].as_u64().unwrap();
            assert_eq!(from, *seen.last().unwrap() + 1);
        } else {
            assert!(env.get("next_version").is_none(), "{envelope}");
            break;
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, (1..=10).collect::<Vec<_>>());
    // Exactly the page size left: no further page.
    let (envelope, _) = two(
        &mut c,
        "READ_STREAM topic=es key=p from_version=7 max_events=4",
    )
    .await;
    assert_eq!(json(&envelope)["has_more"], false);
    // Exact envelope of an early-stopping page.
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=p max_events=2").await;
    assert_eq!(
        envelope,
        format!(
            r#"{{"status":"OK","topic":"es","key":"p","partition":{},"count":2,"has_more":true,"next_version":3}}"#,
            part("p")
        )
    );
    assert_eq!(versions(&batch), vec![1, 2]);

    // By bytes: each event costs payload + key + event type + 64.
    let big = "b".repeat(400);
    for v in 1..=5 {
        append(&mut c, ES, "big", v, &big).await;
    }
    // 400 + 3 + 2 + 64 = 469 bytes per event: two fit in 1024.
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=big max_bytes=1024").await;
    let env = json(&envelope);
    assert_eq!(versions(&batch), vec![1, 2]);
    assert_eq!(env["has_more"], true);
    assert_eq!(env["next_version"], 3);
    // One event larger than the page budget.
    let huge = "h".repeat(2000);
    append(&mut c, ES, "huge", 1, &huge).await;
    let e = c
        .error("READ_STREAM topic=es key=huge max_bytes=1024")
        .await;
    assert_eq!(e.code, "event_exceeds_page_budget");
    assert_eq!(e.fields["version"], "1");
    let (_, batch) = two(&mut c, "READ_STREAM topic=es key=huge").await;
    assert_eq!(batch.records[0].payload.len(), 2000);
}

/// READ_STREAM reads an aggregate's events in spans of the log
/// (commands/eventsource/read.rs): events interleaved with another
/// aggregate's, events far apart (more than a span's gap of 64 records),
/// and large events past a span's 1 MiB read budget all come back once, in
/// version order, with their own payloads.
#[tokio::test]
async fn read_stream_finds_events_between_other_aggregates() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=one partitions=1 event_sourcing=true")
        .await;
    let put = |key: &str, v: u64, msg: String| {
        format!("APPEND_STREAM topic=one key={key} version={v} event_type=E message={msg}")
    };
    let mut lines = Vec::new();
    // a and b interleaved; c with 100 records of filler between its events.
    for v in 1..=30 {
        lines.push(put("a", v, format!("a{v}")));
        lines.push(put("b", v, format!("b{v}")));
    }
    let mut filler = 0;
    for v in 1..=3 {
        lines.push(put("c", v, format!("c{v}")));
        for _ in 0..100 {
            filler += 1;
            lines.push(put("f", filler, format!("f{filler}")));
        }
    }
    // Five events of 300 KiB: a span's 1 MiB budget takes about three.
    let big = |v: u64| format!("{v}{}", "x".repeat(300 * 1024));
    for v in 1..=5 {
        lines.push(put("big", v, big(v)));
    }
    for line in &lines {
        c.ok(line).await;
    }
    for (key, n) in [("a", 30u64), ("b", 30), ("c", 3), ("f", 300)] {
        let (_, batch) = two(
            &mut c,
            &format!("READ_STREAM topic=one key={key} max_events=4096"),
        )
        .await;
        assert_eq!(versions(&batch), (1..=n).collect::<Vec<_>>(), "{key}");
        let expected: Vec<String> = (1..=n).map(|v| format!("{key}{v}")).collect();
        assert_eq!(payloads(&batch), expected, "{key}");
    }
    let (_, batch) = two(&mut c, "READ_STREAM topic=one key=big").await;
    assert_eq!(versions(&batch), vec![1, 2, 3, 4, 5]);
    let expected: Vec<String> = (1..=5).map(big).collect();
    assert!(payloads(&batch) == expected, "the big events' payloads");
}

// --------------------------------------------------------------- snapshots

#[tokio::test]
async fn snapshots_follow_the_documented_rules() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    let p = part("cart");
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=cart").await,
        "OK snapshot=null"
    );
    let e = c
        .error("SAVE_SNAPSHOT topic=es key=cart version=1 message=s")
        .await;
    assert_eq!(e.code, "snapshot_version_exceeds_stream");
    assert_eq!(e.class, ErrorClass::Conflict);
    assert_eq!(e.fields["version"], "1");
    assert_eq!(e.fields["current"], "0");
    for v in 1..=4 {
        append(&mut c, ES, "cart", v, &format!("e{v}")).await;
    }
    let e = c
        .error("SAVE_SNAPSHOT topic=es key=cart version=5 message=s")
        .await;
    assert_eq!(e.fields["current"], "4");
    assert_eq!(
        c.ok("SAVE_SNAPSHOT topic=es key=cart version=2 message={\"items\": [\"a b\"]}")
            .await,
        format!("OK version=2 partition={p}")
    );
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=cart").await,
        r#"OK snapshot={"version":2,"payload":"{\"items\": [\"a b\"]}"}"#
    );
    // READ_STREAM includes the snapshot when its version ≥ from_version and
    // starts the events after it.
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=cart").await;
    assert_eq!(
        envelope,
        format!(
            r#"{{"status":"OK","topic":"es","key":"cart","partition":{p},"count":2,"snapshot":{{"version":2,"payload":"{{\"items\": [\"a b\"]}}"}},"has_more":false}}"#
        )
    );
    assert_eq!(versions(&batch), vec![3, 4]);
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=cart from_version=2").await;
    assert!(json(&envelope).get("snapshot").is_some());
    assert_eq!(versions(&batch), vec![3, 4]);
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=cart from_version=3").await;
    assert!(json(&envelope).get("snapshot").is_none(), "{envelope}");
    assert_eq!(versions(&batch), vec![3, 4]);
    // A snapshot at the head: no events after it.
    c.ok("SAVE_SNAPSHOT topic=es key=cart version=4 message=four")
        .await;
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=cart").await;
    let env = json(&envelope);
    assert_eq!(env["snapshot"]["version"], 4);
    assert_eq!(env["snapshot"]["payload"], "four");
    assert_eq!(env["count"], 0);
    assert!(batch.records.is_empty());
    // Paging after a snapshot continues after it.
    append(&mut c, ES, "cart", 5, "e5").await;
    append(&mut c, ES, "cart", 6, "e6").await;
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=cart max_events=1").await;
    let env = json(&envelope);
    assert_eq!(env["snapshot"]["version"], 4);
    assert_eq!(versions(&batch), vec![5]);
    assert_eq!(env["next_version"], 6);
    // A later snapshot replaces an earlier one, even a lower version.
    c.ok("SAVE_SNAPSHOT topic=es key=cart version=3 message=three")
        .await;
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=cart").await,
        r#"OK snapshot={"version":3,"payload":"three"}"#
    );
    // Snapshots are per aggregate.
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=other").await,
        "OK snapshot=null"
    );

    // Snapshots and versions survive a crash.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=cart").await,
        r#"OK snapshot={"version":3,"payload":"three"}"#
    );
    assert_eq!(version(&mut c, ES, "cart").await, 6);
    let (_, batch) = two(&mut c, "READ_STREAM topic=es key=cart").await;
    assert_eq!(versions(&batch), vec![4, 5, 6]);
    let e = c
        .error("APPEND_STREAM topic=es key=cart version=6 message=again")
        .await;
    assert_eq!(e.fields["current"], "6");
    append(&mut c, ES, "cart", 7, "e7").await;
    assert!(broker
        .data_dir()
        .join("topics/es/__snapshots.journal")
        .exists());
}

// ------------------------------------------------------------------ browse

#[tokio::test]
async fn browse_messages_pages_with_budgets() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=b partitions=2").await;
    for i in 0..10 {
        c.ok(&format!(
            "PUBLISH topic=b partition=1 acks=1 producerId=p key=k{i} message=m{i}"
        ))
        .await;
    }
    let (envelope, batch) = two(&mut c, "BROWSE_MESSAGES topic=b partition=1 from_offset=0").await;
    assert_eq!(
        envelope,
        r#"{"status":"OK","topic":"b","partition":1,"next_offset":10,"earliest_offset":0,"readable_end_offset":10,"has_more":false}"#
    );
    assert_eq!(batch.topic, "b");
    assert_eq!(batch.partition, 1);
    assert_eq!(batch.records.len(), 10);
    assert_eq!(batch.records[3].payload, Bytes::from_static(b"m3"));
    assert_eq!(batch.records[3].key, Bytes::from_static(b"k3"));
    assert_eq!(batch.records[3].offset, 3);

    // Record limit: next_offset after the last returned record.
    let (envelope, batch) = two(
        &mut c,
        "BROWSE_MESSAGES topic=b partition=1 from_offset=2 max_records=3",
    )
    .await;
    assert_eq!(
        envelope,
        r#"{"status":"OK","topic":"b","partition":1,"next_offset":5,"earliest_offset":0,"readable_end_offset":10,"has_more":true}"#
    );
    assert_eq!(payloads(&batch), vec!["m2", "m3", "m4"]);
    // Byte budget: each record costs 2 + 2 + 64 = 68 bytes.
    let (envelope, batch) = two(
        &mut c,
        "BROWSE_MESSAGES topic=b partition=1 from_offset=0 max_bytes=140",
    )
    .await;
    let env = json(&envelope);
    assert_eq!(batch.records.len(), 2);
    assert_eq!(env["next_offset"], 2);
    assert_eq!(env["has_more"], true);
    let (_, batch) = two(
        &mut c,
        "BROWSE_MESSAGES topic=b partition=1 from_offset=0 max_bytes=136",
    )
    .await;
    assert_eq!(batch.records.len(), 2, "a record that fits exactly is kept");
    // to_offset is an exclusive bound.
    let (envelope, batch) = two(
        &mut c,
        "BROWSE_MESSAGES topic=b partition=1 from_offset=4 to_offset=6",
    )
    .await;
    assert_eq!(
        envelope,
        r#"{"status":"OK","topic":"b","partition":1,"next_offset":6,"earliest_offset":0,"readable_end_offset":6,"has_more":false}"#
    );
    assert_eq!(payloads(&batch), vec!["m4", "m5"]);
    // Exactly max_records left: the record limit was hit.
    let (envelope, _) = two(
        &mut c,
        "BROWSE_MESSAGES topic=b partition=1 from_offset=8 max_records=2",
    )
    .await;
    let env = json(&envelope);
    assert_eq!(env["next_offset"], 10);
    assert_eq!(env["has_more"], false);
    // From the readable end or past it: no records.
    for from in [10, 50] {
        let (envelope, batch) = two(
            &mut c,
            &format!("BROWSE_MESSAGES topic=b partition=1 from_offset={from}"),
        )
        .await;
        assert_eq!(
            envelope,
            r#"{"status":"OK","topic":"b","partition":1,"next_offset":10,"earliest_offset":0,"readable_end_offset":10,"has_more":false}"#
        );
        assert!(batch.records.is_empty());
    }
    // An empty partition.
    let (envelope, _) = two(&mut c, "BROWSE_MESSAGES topic=b partition=0 from_offset=0").await;
    assert_eq!(
        envelope,
        r#"{"status":"OK","topic":"b","partition":0,"next_offset":0,"earliest_offset":0,"readable_end_offset":0,"has_more":false}"#
    );
    // A first record over the budget.
    let e = c
        .error("BROWSE_MESSAGES topic=b partition=1 from_offset=0 max_bytes=10")
        .await;
    assert_eq!(e.code, "record_too_large");
    assert_eq!(e.fields["offset"], "0");
    assert_eq!(e.fields["size"], "68");
    assert_eq!(e.fields["max_bytes"], "10");
    // Browsing never touches group offsets.
    let b = c
        .consume("CONSUME topic=b partition=1 offset=0 member=m group=g")
        .await;
    assert_eq!(b.records.len(), 10);
}

#[tokio::test]
async fn browse_messages_validates_in_the_documented_order() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=b partitions=1").await;
    c.ok("PUBLISH topic=b partition=0 acks=1 producerId=p message=m")
        .await;
    let cases = [
        (
            "BROWSE_MESSAGES partition=x from_offset=y max_records=0",
            "missing_topic",
        ),
        ("BROWSE_MESSAGES topic=b from_offset=y", "missing_partition"),
        (
            "BROWSE_MESSAGES topic=b partition=x from_offset=y",
            "invalid_partition",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=-1 from_offset=0",
            "invalid_partition",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=0 max_records=0",
            "missing_from_offset",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=0 from_offset=y max_records=0",
            "invalid_from_offset",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=0 from_offset=0 max_records=0 max_bytes=0",
            "invalid_max_records",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=0 from_offset=0 max_records=1001",
            "invalid_max_records",
        ),
        (
            "BROWSE_MESSAGES topic=nope partition=0 from_offset=0 max_bytes=0",
            "invalid_max_bytes",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=0 from_offset=0 max_bytes=4194305",
            "invalid_max_bytes",
        ),
        (
            "BROWSE_MESSAGES topic=nope partition=9 from_offset=0 to_offset=x",
            "topic_not_found",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=9 from_offset=0 to_offset=x",
            "partition_not_found",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=0 from_offset=5 to_offset=4",
            "invalid_to_offset",
        ),
        (
            "BROWSE_MESSAGES topic=b partition=0 from_offset=0 to_offset=x",
            "invalid_to_offset",
        ),
    ];
    for (line, code) in cases {
        let e = c.error(line).await;
        assert_eq!(e.code, code, "{line}: {}", e.render());
    }
    // Boundaries are accepted.
    two(
        &mut c,
        "BROWSE_MESSAGES topic=b partition=0 from_offset=0 max_records=1000 max_bytes=4194304 to_offset=0",
    )
    .await;
    two(
        &mut c,
        "BROWSE_MESSAGES topic=b partition=0 from_offset=0 max_records=1 max_bytes=1000",
    )
    .await;
}

#[tokio::test]
async fn browse_reads_committed_records_up_to_the_stable_offset() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=1").await;
    c.ok("PUBLISH topic=t partition=0 acks=1 producerId=p message=p0")
        .await;
    let s = Session::init(&mut c, "tx").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "open1").await;
    c.ok("PUBLISH topic=t partition=0 acks=1 producerId=p message=p2")
        .await;
    // The open transaction holds the readable end at its first record.
    let (envelope, batch) = two(&mut c, "BROWSE_MESSAGES topic=t partition=0 from_offset=0").await;
    let env = json(&envelope);
    assert_eq!(env["readable_end_offset"], 1);
    assert_eq!(env["next_offset"], 1);
    assert_eq!(payloads(&batch), vec!["p0"]);
    s.end(&mut c, "abort").await;
    // Aborted records and the marker are skipped.
    let (envelope, batch) = two(&mut c, "BROWSE_MESSAGES topic=t partition=0 from_offset=0").await;
    let env = json(&envelope);
    assert_eq!(env["readable_end_offset"], 4);
    assert_eq!(env["next_offset"], 4);
    assert_eq!(payloads(&batch), vec!["p0", "p2"]);
}

// ----------------------------------------------------------------- history

#[tokio::test]
async fn history_pages_and_reports_completeness() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    let p = part("h");
    for v in 1..=7 {
        append(&mut c, ES, "h", v, &format!("e{v}")).await;
    }
    // A snapshot never replaces history.
    c.ok("SAVE_SNAPSHOT topic=es key=h version=5 message=s")
        .await;
    let (envelope, batch) = two(&mut c, "READ_STREAM_HISTORY topic=es key=h").await;
    assert_eq!(
        envelope,
        format!(
            r#"{{"status":"OK","topic":"es","key":"h","partition":{p},"head_version":7,"completeness":"complete","has_more":false}}"#
        )
    );
    assert_eq!(versions(&batch), (1..=7).collect::<Vec<_>>());
    assert_eq!(batch.records[0].event_type, "E1");
    assert_eq!(batch.records[0].schema_version, 1);

    // Record-limited pages.
    let (envelope, batch) = two(
        &mut c,
        "READ_STREAM_HISTORY topic=es key=h from_version=2 to_version=6 max_records=2",
    )
    .await;
    assert_eq!(
        envelope,
        format!(
            r#"{{"status":"OK","topic":"es","key":"h","partition":{p},"next_version":4,"head_version":7,"completeness":"complete","has_more":true}}"#
        )
    );
    assert_eq!(versions(&batch), vec![2, 3]);
    let (envelope, batch) = two(
        &mut c,
        "READ_STREAM_HISTORY topic=es key=h from_version=4 to_version=6 max_records=2",
    )
    .await;
    assert_eq!(json(&envelope)["next_version"], 6);
    assert_eq!(versions(&batch), vec![4, 5]);
    let (envelope, batch) = two(
        &mut c,
        "READ_STREAM_HISTORY topic=es key=h from_version=6 to_version=6 max_records=2",
    )
    .await;
    let env = json(&envelope);
    assert!(env.get("next_version").is_none(), "{envelope}");
    assert_eq!(env["has_more"], false);
    assert_eq!(versions(&batch), vec![6]);
    // Exactly the limit up to `to`: nothing more to ask for.
    let (envelope, _) = two(
        &mut c,
        "READ_STREAM_HISTORY topic=es key=h from_version=6 max_records=2",
    )
    .await;
    let env = json(&envelope);
    assert_eq!(env["has_more"], false);
    assert_eq!(env["completeness"], "complete");

    // Byte-limited page: still complete, resumable. Each event costs
    // 2 + 1 + 2 + 64 = 69 bytes.
    let (envelope, batch) = two(&mut c, "READ_STREAM_HISTORY topic=es key=h max_bytes=150").await;
    let env = json(&envelope);
    assert_eq!(versions(&batch), vec![1, 2]);
    assert_eq!(env["completeness"], "complete");
    assert_eq!(env["next_version"], 3);
    assert_eq!(env["has_more"], true);

    // An aggregate without events.
    let (envelope, batch) = two(&mut c, "READ_STREAM_HISTORY topic=es key=ghost").await;
    assert_eq!(
        envelope,
        format!(
            r#"{{"status":"OK","topic":"es","key":"ghost","partition":{},"head_version":0,"completeness":"complete","has_more":false}}"#,
            part("ghost")
        )
    );
    assert!(batch.records.is_empty());

    // Handler errors are JSON envelopes.
    for (line, text) in [
        (
            "READ_STREAM_HISTORY topic=es key=h from_version=0",
            "invalid_from_version from_version=0",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=h max_records=0",
            "invalid_max_records max_records=0",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=h max_records=1001",
            "invalid_max_records max_records=1001",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=h max_bytes=0",
            "invalid_max_bytes max_bytes=0",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=h max_bytes=4194305",
            "invalid_max_bytes max_bytes=4194305",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=h to_version=8",
            "invalid_to_version from_version=1 head_version=7 to_version=8",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=h from_version=3 to_version=2",
            "invalid_to_version from_version=3 head_version=7 to_version=2",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=h to_version=x",
            "invalid_to_version to_version=x",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=ghost to_version=1",
            "invalid_to_version from_version=1 head_version=0 to_version=1",
        ),
        (
            "READ_STREAM_HISTORY topic=es key=h max_bytes=10",
            "record_too_large offset=0 version=1",
        ),
    ] {
        let got = envelope_error(&mut c, line).await;
        let want = format!(
            r#"{{"status":"ERROR","error":{}}}"#,
            serde_json::Value::String(text.to_owned())
        );
        assert_eq!(got, want, "{line}");
    }
}

#[tokio::test]
async fn retention_keeps_heads_and_history_reports_what_it_removed() {
    // Tiny segments and a fast retention pass; the topic keeps 1 byte, so
    // every sealed segment goes.
    let broker = TestBroker::start_with(&[
        "--segment-bytes",
        "300",
        "--retention-check-interval-ms",
        "50",
    ]);
    let mut c = broker.client().await;
    c.ok("CREATE topic=es partitions=1 event_sourcing=true retention_bytes=1")
        .await;
    let filler = "f".repeat(200);
    // gone: every event in a sealed segment. split: v1 sealed, v2 active.
    c.ok("APPEND_STREAM topic=es key=gone version=1 message=g1")
        .await;
    c.ok("APPEND_STREAM topic=es key=gone version=2 message=g2")
        .await;
    c.ok("APPEND_STREAM topic=es key=split version=1 message=s1")
        .await;
    c.ok("SAVE_SNAPSHOT topic=es key=gone version=2 message=snap")
        .await;
    for v in 1..=3 {
        c.ok(&format!(
            "APPEND_STREAM topic=es key=filler version={v} message={filler}"
        ))
        .await;
    }
    // Wait until retention removed the sealed segments.
    earliest_at_least(&mut c, "es", 0, 3).await;
    // The active segment holds the last filler; append split v2 there.
    let f = kv(&c
        .ok("APPEND_STREAM topic=es key=split version=2 message=s2")
        .await);
    let s2_offset: u64 = f["offset"].parse().unwrap();

    check_after_retention(&mut c, s2_offset).await;
    // Restart on the same data directory: the heads come back from the
    // floors recorded before retention, so versions are never reused.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    check_after_retention(&mut c, s2_offset).await;
    c.ok("APPEND_STREAM topic=es key=gone version=3 message=g3")
        .await;
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=gone").await,
        r#"OK snapshot={"version":2,"payload":"snap"}"#
    );
}

/// What a stream looks like after retention removed its first events.
async fn check_after_retention(c: &mut Client, s2_offset: u64) {
    let offsets = c.ok("LIST_OFFSETS topic=es partition=0").await;
    let first: u64 = offsets
        .split(':')
        .find_map(|t| t.strip_prefix("earliest="))
        .unwrap()
        .parse()
        .unwrap();
    assert!((3..=s2_offset).contains(&first), "{offsets}");
    assert_eq!(version(c, "es", "gone").await, 2);
    assert_eq!(version(c, "es", "split").await, 2);
    let (envelope, batch) = two(c, "READ_STREAM_HISTORY topic=es key=gone").await;
    assert_eq!(
        envelope,
        r#"{"status":"OK","topic":"es","key":"gone","partition":0,"head_version":2,"completeness":"unknown","has_more":false}"#
    );
    assert!(batch.records.is_empty());
    let (envelope, batch) = two(c, "READ_STREAM_HISTORY topic=es key=split").await;
    assert_eq!(
        envelope,
        r#"{"status":"OK","topic":"es","key":"split","partition":0,"head_version":2,"completeness":"partial","has_more":false}"#
    );
    assert!(batch.records.is_empty());
    let (envelope, batch) = two(c, "READ_STREAM_HISTORY topic=es key=split from_version=2").await;
    assert_eq!(json(&envelope)["completeness"], "complete");
    assert_eq!(payloads(&batch), vec!["s2"]);
    // READ_STREAM returns what is retained; the snapshot still applies.
    let (envelope, batch) = two(c, "READ_STREAM topic=es key=split").await;
    assert_eq!(json(&envelope)["count"], 1);
    assert_eq!(versions(&batch), vec![2]);
    let (envelope, batch) = two(c, "READ_STREAM topic=es key=gone").await;
    assert_eq!(json(&envelope)["snapshot"]["version"], 2);
    assert!(batch.records.is_empty());
    // A browse below the log start is a range error.
    let e = c
        .error("BROWSE_MESSAGES topic=es partition=0 from_offset=0")
        .await;
    assert_eq!(e.code, "range_error");
    assert_eq!(e.fields["requested"], "0");
    let e = c
        .error("APPEND_STREAM topic=es key=gone version=1 message=again")
        .await;
    assert_eq!(e.code, "version_conflict");
    assert_eq!(e.fields["current"], "2");
}

// ------------------------------------------------------- DELETE / TRUNCATE

#[tokio::test]
async fn truncate_and_delete_remove_streams_and_snapshots() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    c.ok("CREATE topic=plain partitions=1").await;
    for v in 1..=3 {
        append(&mut c, ES, "a", v, &format!("a{v}")).await;
    }
    c.ok("SAVE_SNAPSHOT topic=es key=a version=3 message=s3")
        .await;
    let journal = broker.data_dir().join("topics/es/__snapshots.journal");
    assert!(journal.exists());
    assert!(!broker
        .data_dir()
        .join("topics/plain/__snapshots.journal")
        .exists());

    let f = kv(&c.ok("TRUNCATE topic=es expected_revision=1").await);
    assert_eq!(f["truncated"], "true");
    assert_eq!(version(&mut c, ES, "a").await, 0);
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=a").await,
        "OK snapshot=null"
    );
    let (envelope, batch) = two(&mut c, "READ_STREAM topic=es key=a").await;
    assert_eq!(json(&envelope)["count"], 0);
    assert!(json(&envelope).get("snapshot").is_none());
    assert!(batch.records.is_empty());
    let (envelope, _) = two(&mut c, "READ_STREAM_HISTORY topic=es key=a").await;
    assert_eq!(json(&envelope)["head_version"], 0);
    assert_eq!(json(&envelope)["completeness"], "complete");
    let e = c
        .error("SAVE_SNAPSHOT topic=es key=a version=1 message=s")
        .await;
    assert_eq!(e.code, "snapshot_version_exceeds_stream");
    // The stream starts again at 1, at offset 0.
    assert_eq!(
        c.ok("APPEND_STREAM topic=es key=a version=1 message=new")
            .await,
        format!("OK version=1 offset=0 partition={}", part("a"))
    );

    // The truncated state survives a crash.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(version(&mut c, ES, "a").await, 1);
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=a").await,
        "OK snapshot=null"
    );
    let (_, batch) = two(&mut c, "READ_STREAM topic=es key=a").await;
    assert_eq!(payloads(&batch), vec!["new"]);

    // DELETE removes everything; a re-created topic starts empty.
    c.ok("SAVE_SNAPSHOT topic=es key=a version=1 message=s1")
        .await;
    assert_eq!(c.ok("DELETE topic=es").await, "OK topic=es deleted=true");
    let e = c.error("STREAM_VERSION topic=es key=a").await;
    assert_eq!(e.code, "topic_not_found");
    assert!(!broker.data_dir().join("topics/es").exists());
    es_topic(&mut c, ES).await;
    assert_eq!(version(&mut c, ES, "a").await, 0);
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=a").await,
        "OK snapshot=null"
    );
    append(&mut c, ES, "a", 1, "fresh").await;
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(version(&mut c, ES, "a").await, 1);
    assert_eq!(
        c.ok("READ_SNAPSHOT topic=es key=a").await,
        "OK snapshot=null"
    );
    let (_, batch) = two(&mut c, "READ_STREAM topic=es key=a").await;
    assert_eq!(payloads(&batch), vec!["fresh"]);
}

#[tokio::test]
async fn streams_survive_a_graceful_restart_and_pipelining() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    // Pipelined requests: the two-frame replies stay in order.
    let mut ids = Vec::new();
    for v in 1..=3 {
        ids.push(
            c.send_line(&format!(
                "APPEND_STREAM topic=es key=q version={v} message=q{v}"
            ))
            .await,
        );
    }
    ids.push(c.send_line("READ_STREAM topic=es key=q").await);
    ids.push(c.send_line("STREAM_VERSION topic=es key=q").await);
    let mut frames = Vec::new();
    for _ in 0..6 {
        frames.push(c.recv().await.unwrap());
    }
    let got: Vec<u64> = frames.iter().map(|f| f.request_id).collect();
    assert_eq!(got, vec![ids[0], ids[1], ids[2], ids[3], ids[3], ids[4]]);
    assert_eq!(frames[5].payload, Bytes::from_static(b"OK version=3"));
    let batch = Batch::decode(frames[4].payload.clone()).unwrap();
    assert_eq!(versions(&batch), vec![1, 2, 3]);

    let mut broker = broker;
    assert!(broker.terminate());
    let dir = broker.dir.take().unwrap();
    let broker = TestBroker::start_in(dir, Vec::new());
    let mut c = broker.client().await;
    assert_eq!(version(&mut c, ES, "q").await, 3);
    append(&mut c, ES, "q", 4, "q4").await;
}

/// What a pipelined APPEND_STREAM should be answered with.
enum Expect {
    /// OK at this version (the offset is checked afterwards).
    Appended(&'static str, u64),
    /// OK with the offset the original append of (key, version) got.
    Retry(&'static str, u64),
    /// `version_conflict current= expected=`.
    Conflict(u64, u64),
}

/// Appends to several aggregates on every partition, pipelined on one
/// connection as the engine sends concurrent appends (the broker takes
/// them as runs: one log write and one sync per partition): each is
/// answered in order with the outcome it would have alone. A version
/// conflict in the middle refuses only that append; an exact retry, of an
/// event of an earlier run or of one just before it in the same run,
/// answers the original offset; a read afterwards sees every event once.
#[tokio::test]
async fn pipelined_appends_are_answered_in_order_with_their_own_outcomes() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, ES).await;
    const KEYS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
    let partitions: std::collections::HashSet<u32> = KEYS.iter().map(|k| part(k)).collect();
    assert!(partitions.len() > 1, "the keys span several partitions");
    let line = |key: &str, v: u64, id: &str| {
        format!("APPEND_STREAM topic=es key={key} version={v} event_id={id} message={key}{v}")
    };
    let mut sent = Vec::new();
    for v in 1..=20u64 {
        for key in KEYS {
            let id = c.send_line(&line(key, v, &format!("{key}-{v}"))).await;
            sent.push((id, Expect::Appended(key, v)));
        }
        if v == 10 {
            // A stale expected version, a gap, and exact retries (of an
            // event appended long before, and of the one just sent).
            let id = c.send_line(&line("a", 5, "other")).await;
            sent.push((id, Expect::Conflict(10, 5)));
            let id = c.send_line(&line("d", 30, "gap")).await;
            sent.push((id, Expect::Conflict(10, 30)));
            let id = c.send_line(&line("b", 3, "b-3")).await;
            sent.push((id, Expect::Retry("b", 3)));
            let id = c.send_line(&line("f", 10, "f-10")).await;
            sent.push((id, Expect::Retry("f", 10)));
        }
    }
    let mut offsets = std::collections::HashMap::new();
    for (id, expect) in &sent {
        let frame = c.recv().await.expect("reply");
        assert_eq!(frame.request_id, *id, "replies keep the request order");
        let text = String::from_utf8_lossy(&frame.payload).into_owned();
        match *expect {
            Expect::Appended(key, v) => {
                assert_eq!(frame.status, Status::Ok, "{text}");
                let f = kv(&text);
                assert_eq!(f["version"], v.to_string());
                assert_eq!(f["partition"], part(key).to_string());
                offsets.insert((key, v), f["offset"].parse::<u64>().unwrap());
            }
            Expect::Retry(key, v) => {
                assert_eq!(frame.status, Status::Ok, "{text}");
                assert_eq!(kv(&text)["offset"], offsets[&(key, v)].to_string());
            }
            Expect::Conflict(current, expected) => {
                assert_eq!(frame.status, Status::Error);
                let e = ErrorPayload::decode(frame.payload).unwrap();
                assert_eq!(e.code, "version_conflict");
                assert_eq!(e.fields["current"], current.to_string());
                assert_eq!(e.fields["expected"], expected.to_string());
            }
        }
    }
    // Every event got its own offset, and a partition's offsets follow
    // the order its appends came in.
    for p in partitions {
        let mut mine: Vec<_> = offsets.iter().filter(|((k, _), _)| part(k) == p).collect();
        mine.sort_by_key(|((k, v), _)| (*v, KEYS.iter().position(|x| x == k)));
        let ordered: Vec<u64> = mine.iter().map(|(_, o)| **o).collect();
        assert!(ordered.windows(2).all(|w| w[0] < w[1]), "{ordered:?}");
    }
    for key in KEYS {
        let (_, batch) = two(&mut c, &format!("READ_STREAM topic=es key={key}")).await;
        assert_eq!(versions(&batch), (1..=20).collect::<Vec<u64>>());
        let expected: Vec<String> = (1..=20).map(|v| format!("{key}{v}")).collect();
        assert_eq!(payloads(&batch), expected);
        assert_eq!(version(&mut c, ES, key).await, 20);
    }
}
