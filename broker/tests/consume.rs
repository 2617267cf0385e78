//! CONSUME and STREAM over real TCP.

mod common;

use common::*;
use cursus_wire::{Batch, ErrorClass, ErrorPayload, Frame, Kind, Status};

async fn fill(c: &mut Client, topic: &str, partition: u32, n: usize) {
    for i in 0..n {
        c.ok(&format!(
            "PUBLISH topic={topic} partition={partition} acks=1 producerId=p message=m{i}"
        ))
        .await;
    }
}

#[tokio::test]
async fn consume_reads_batches_from_an_offset() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=c partitions=2").await;
    fill(&mut c, "c", 1, 10).await;
    let b = c
        .consume("CONSUME topic=c partition=1 offset=3 member=m group=g batch=4 isolation=read_committed")
        .await;
    assert_eq!(b.topic, "c");
    assert_eq!(b.partition, 1);
    let offsets: Vec<u64> = b.records.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, [3, 4, 5, 6]);
    assert_eq!(&b.records[0].payload[..], b"m3");
    let b = c
        .consume("CONSUME topic=c partition=1 offset=8 member=m isolation=read_uncommitted")
        .await;
    assert_eq!(b.records.len(), 2);
    // At the end: an empty batch, not an error.
    let b = c
        .consume("CONSUME topic=c partition=1 offset=10 member=m")
        .await;
    assert!(b.records.is_empty());
    let b = c
        .consume("CONSUME topic=c partition=0 offset=0 member=m wait_ms=50")
        .await;
    assert!(b.records.is_empty());
}

#[tokio::test]
async fn consume_errors() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=c partitions=1").await;
    c.ok("CREATE topic=secret partitions=1 auth_policy=deny_read")
        .await;
    let cases: &[(&str, &str, ErrorClass)] = &[
        (
            "CONSUME partition=0 offset=0 member=m",
            "missing_topic",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=x partition=0 offset=0 member=m",
            "topic_not_found",
            ErrorClass::NotFound,
        ),
        (
            "CONSUME topic=c offset=0 member=m",
            "missing_partition",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=c partition=0 member=m",
            "missing_offset",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=c partition=0 offset=0",
            "missing_member",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=c partition=a offset=0 member=m",
            "invalid_partition",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=c partition=0 offset=-1 member=m",
            "invalid_offset",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=c partition=3 offset=0 member=m",
            "partition_not_found",
            ErrorClass::NotFound,
        ),
        (
            "CONSUME topic=c partition=0 offset=0 member=m batch=0",
            "invalid_consume_syntax",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=c partition=0 offset=0 member=m wait_ms=soon",
            "invalid_consume_syntax",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=c partition=0 offset=0 member=m isolation=dirty",
            "invalid_consume_syntax",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=c partition=0 offset=0 member=m autoOffsetReset=middle",
            "invalid_consume_syntax",
            ErrorClass::Validation,
        ),
        (
            "CONSUME topic=secret partition=0 offset=0 member=m",
            "NOT_AUTHORIZED_FOR_TOPIC",
            ErrorClass::Authorization,
        ),
    ];
    for (line, code, class) in cases {
        let e = c.error(line).await;
        assert_eq!((e.code.as_str(), e.class), (*code, *class), "{line}");
    }
}

#[tokio::test]
async fn long_poll_returns_when_data_arrives() {
    let broker = TestBroker::start();
    let mut admin = broker.client().await;
    admin.ok("CREATE topic=lp partitions=1").await;
    let mut consumer = broker.client().await;
    let id = consumer
        .send_line("CONSUME topic=lp partition=0 offset=0 member=m wait_ms=30000")
        .await;
    admin
        .ok("PUBLISH topic=lp acks=1 producerId=p message=wake-up")
        .await;
    let frame = consumer.recv().await.expect("reply");
    assert_eq!(frame.request_id, id);
    let b = Batch::decode(frame.payload).unwrap();
    assert_eq!(b.records.len(), 1);
    assert_eq!(&b.records[0].payload[..], b"wake-up");
}

#[tokio::test]
async fn offset_out_of_range_reports_requested_earliest_latest() {
    let broker = TestBroker::start_with(&[
        "--segment-bytes",
        "400",
        "--retention-check-interval-ms",
        "50",
    ]);
    let mut c = broker.client().await;
    c.ok("CREATE topic=r partitions=1 retention_bytes=800")
        .await;
    // Beyond the end.
    let e = c
        .error("CONSUME topic=r partition=0 offset=5 member=m")
        .await;
    assert_eq!(e.code, "OFFSET_OUT_OF_RANGE");
    assert_eq!(e.class, ErrorClass::Conflict);
    assert_eq!(
        (
            e.fields["requested"].as_str(),
            e.fields["earliest"].as_str(),
            e.fields["latest"].as_str()
        ),
        ("5", "0", "0")
    );
    // Below the retained start, once retention removed old segments.
    fill(&mut c, "r", 0, 60).await;
    // Retention runs on its own schedule; there is no event to await.
    let earliest = earliest_at_least(&mut c, "r", 0, 1).await;
    // Retention may still be deleting; retry until a read at the reported
    // earliest offset succeeds.
    let (earliest, read) =
        eventually_async!(SAFETY, "a read at the reported earliest offset", async {
            let e = c
                .error("CONSUME topic=r partition=0 offset=0 member=m")
                .await;
            assert_eq!(e.code, "OFFSET_OUT_OF_RANGE");
            assert_eq!(e.fields["requested"], "0");
            assert_eq!(e.fields["latest"], "60");
            let reported: u64 = e.fields["earliest"].parse().unwrap();
            assert!(reported >= earliest);
            let read = format!("CONSUME topic=r partition=0 offset={reported} member=m");
            c.try_ok(&read).await.map(|payload| (reported, payload))
        });
    assert_eq!(Batch::decode(read).unwrap().records[0].offset, earliest);

    // A stream from below the retained start closes with offset_out_of_range.
    let mut s = broker.client().await;
    let id = s
        .send_line("STREAM topic=r partition=0 member=m offset=0")
        .await;
    let frame = s.recv().await.unwrap();
    assert_eq!(
        (frame.kind, frame.status, frame.request_id),
        (Kind::Stream, Status::StreamEnd, id)
    );
    let text = String::from_utf8(frame.payload.to_vec()).unwrap();
    assert!(
        text.starts_with("STREAM_CONTROL type=CLOSE reason=offset_out_of_range offset=0"),
        "{text}"
    );
    // Retention keeps running, so the start may have moved on since.
    let reported: u64 = text
        .split_whitespace()
        .find_map(|t| t.strip_prefix("earliest="))
        .unwrap_or_else(|| panic!("no earliest in {text}"))
        .parse()
        .unwrap();
    assert!(reported >= earliest, "{text}");
}

fn control_text(frame: &Frame) -> String {
    String::from_utf8(frame.payload.to_vec()).unwrap()
}

#[tokio::test]
async fn stream_pushes_data_keepalives_and_closes() {
    let broker = TestBroker::start_with(&["--stream-keepalive-ms", "100"]);
    let mut admin = broker.client().await;
    admin.ok("CREATE topic=s partitions=1").await;
    fill(&mut admin, "s", 0, 2).await;
    let mut s = broker.client().await;
    let id = s
        .send_line("STREAM topic=s partition=0 member=m group=g batch=100")
        .await;
    // The connection is dedicated: this LIST is never answered.
    s.send_line("LIST").await;
    let mut seen = Vec::new();
    let mut keepalive = false;
    let mut refilled = false;
    while seen.len() < 5 || !keepalive {
        let frame = s.recv().await.expect("stream frame");
        assert_eq!((frame.kind, frame.request_id), (Kind::Stream, id));
        assert_eq!(frame.status, Status::Ok);
        if frame.payload.is_empty() {
            keepalive = true;
            // Several keepalives may pass before the new records arrive:
            // publish them once only.
            if seen.len() == 2 && !refilled {
                refilled = true;
                fill(&mut admin, "s", 0, 3).await;
            }
            continue;
        }
        let b = Batch::decode(frame.payload).unwrap();
        seen.extend(b.records.iter().map(|r| r.offset));
    }
    assert_eq!(seen, [0, 1, 2, 3, 4]);
    admin.ok("DELETE topic=s").await;
    let end = loop {
        let frame = s.recv().await.expect("close frame");
        if !frame.payload.is_empty() {
            break frame;
        }
    };
    assert_eq!((end.kind, end.status), (Kind::Stream, Status::StreamEnd));
    assert_eq!(
        control_text(&end),
        "STREAM_CONTROL type=CLOSE reason=removed offset=5"
    );
}

#[tokio::test]
async fn stream_start_errors_are_stream_frames() {
    let broker = TestBroker::start();
    let mut s = broker.client().await;
    let id = s.send_line("STREAM topic=nope partition=0 member=m").await;
    let frame = s.recv().await.unwrap();
    assert_eq!(
        (frame.kind, frame.status, frame.request_id),
        (Kind::Stream, Status::Error, id)
    );
    let e = ErrorPayload::decode(frame.payload).unwrap();
    assert_eq!(e.code, "topic_not_found");
    // The stream never started, so the connection still serves requests.
    assert!(s.ok("LIST").await.starts_with("OK"));
    s.ok("CREATE topic=t partitions=1").await;
    assert_eq!(
        s.error("STREAM topic=t member=m").await.code,
        "missing_partition"
    );
    assert_eq!(
        s.error("STREAM topic=t partition=0").await.code,
        "missing_member"
    );
}

#[tokio::test]
async fn stream_closes_with_stopped_on_shutdown() {
    let mut broker = TestBroker::start();
    let mut admin = broker.client().await;
    admin.ok("CREATE topic=q partitions=1").await;
    fill(&mut admin, "q", 0, 1).await;
    let mut s = broker.client().await;
    s.send_line("STREAM topic=q partition=0 member=m").await;
    let first = s.recv().await.unwrap();
    assert_eq!(Batch::decode(first.payload).unwrap().records.len(), 1);
    let stop = tokio::task::spawn_blocking(move || {
        let ok = broker.terminate();
        (ok, broker)
    });
    let end = loop {
        let frame = s.recv().await.expect("close frame");
        if !frame.payload.is_empty() {
            break frame;
        }
    };
    assert_eq!(end.status, Status::StreamEnd);
    assert_eq!(
        control_text(&end),
        "STREAM_CONTROL type=CLOSE reason=stopped offset=1"
    );
    let (exited_cleanly, _broker) = stop.await.unwrap();
    assert!(exited_cleanly);
}

#[tokio::test]
async fn truncate_closes_streams_and_restarts_at_offset_zero() {
    let broker = TestBroker::start();
    let mut admin = broker.client().await;
    admin.ok("CREATE topic=g partitions=1").await;
    fill(&mut admin, "g", 0, 3).await;
    let mut s = broker.client().await;
    s.send_line("STREAM topic=g partition=0 member=m").await;
    let first = s.recv().await.unwrap();
    assert_eq!(Batch::decode(first.payload).unwrap().records.len(), 3);
    admin.ok("TRUNCATE topic=g expected_revision=1").await;
    let end = loop {
        let frame = s.recv().await.expect("close frame");
        if !frame.payload.is_empty() {
            break frame;
        }
    };
    assert_eq!(end.status, Status::StreamEnd);
    assert_eq!(
        control_text(&end),
        "STREAM_CONTROL type=CLOSE reason=removed offset=3"
    );
    // The new generation starts at 0 and is readable.
    fill(&mut admin, "g", 0, 1).await;
    let b = admin
        .consume("CONSUME topic=g partition=0 offset=0 member=m")
        .await;
    assert_eq!(b.records.len(), 1);
    assert_eq!(&b.records[0].payload[..], b"m0");
}
