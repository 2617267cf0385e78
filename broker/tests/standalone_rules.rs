//! Rules of docs/standalone-rules.md checked against the real broker: topic
//! wildcards in CONSUME and STREAM, the STREAM timeout, request_timeout
//! outcomes, required group parameters and the connection limit.

mod common;

use common::*;
use cursus_wire::{Batch, ErrorPayload, Frame, Kind, Status};

async fn fill(c: &mut Client, topic: &str, n: usize) {
    for i in 0..n {
        c.ok(&format!(
            "PUBLISH topic={topic} partition=0 acks=1 producerId=p message=m{i}"
        ))
        .await;
    }
}

fn text(frame: &Frame) -> String {
    String::from_utf8_lossy(&frame.payload).into_owned()
}

#[tokio::test]
async fn consume_topic_wildcards_resolve_to_exactly_one_topic() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=orders.eu partitions=1").await;
    c.ok("CREATE topic=orders.us partitions=1").await;
    c.ok("CREATE topic=payments partitions=1").await;
    fill(&mut c, "payments", 2).await;
    let b = c
        .consume("CONSUME topic=pay* partition=0 offset=0 member=m")
        .await;
    assert_eq!((b.topic.as_str(), b.records.len()), ("payments", 2));
    let b = c
        .consume("CONSUME topic=orders.?u partition=0 offset=0 member=m")
        .await;
    assert_eq!(b.topic, "orders.eu");
    let e = c
        .error("CONSUME topic=refunds* partition=0 offset=0 member=m")
        .await;
    assert_eq!(
        (e.code.as_str(), e.fields["topic"].as_str()),
        ("topic_not_found", "refunds*")
    );
    let e = c
        .error("CONSUME topic=orders.* partition=0 offset=0 member=m")
        .await;
    assert_eq!(e.code, "invalid_consume_syntax");
    assert_eq!(e.fields["reason"], "ambiguous_topic_pattern");
    assert_eq!(e.fields["matches"], "orders.eu,orders.us");
}

#[tokio::test]
async fn a_wildcard_is_authorized_against_the_topic_it_resolves_to() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=secret partitions=1 auth_policy=deny_read")
        .await;
    let e = c
        .error("CONSUME topic=sec*t partition=0 offset=0 member=m")
        .await;
    assert_eq!(e.code, "NOT_AUTHORIZED_FOR_TOPIC");
    assert_eq!(e.fields["topic"], "secret");
}

#[tokio::test]
async fn stream_topic_wildcards() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=a1 partitions=1").await;
    c.ok("CREATE topic=a2 partitions=1").await;
    c.ok("CREATE topic=b1 partitions=1").await;
    fill(&mut c, "b1", 1).await;
    let mut s = broker.client().await;
    let id = s.send_line("STREAM topic=a? partition=0 member=m").await;
    let frame = s.recv().await.unwrap();
    assert_eq!(
        (frame.kind, frame.status, frame.request_id),
        (Kind::Stream, Status::Error, id)
    );
    let e = ErrorPayload::decode(frame.payload).unwrap();
    assert_eq!(e.code, "invalid_stream_syntax");
    assert_eq!(e.fields["reason"], "ambiguous_topic_pattern");
    assert_eq!(e.fields["matches"], "a1,a2");
    let id = s.send_line("STREAM topic=*1 partition=0 member=m").await;
    let e = ErrorPayload::decode(s.recv().await.unwrap().payload).unwrap();
    assert_eq!(e.fields["matches"], "a1,b1");
    s.send_line("STREAM topic=b* partition=0 member=m").await;
    let frame = s.recv().await.unwrap();
    assert_eq!((frame.kind, frame.status), (Kind::Stream, Status::Ok));
    assert_ne!(frame.request_id, id);
    let b = Batch::decode(frame.payload).unwrap();
    assert_eq!((b.topic.as_str(), b.records.len()), ("b1", 1));
}

#[tokio::test]
async fn a_stream_without_records_for_the_timeout_is_closed() {
    let broker =
        TestBroker::start_with(&["--stream-timeout-ms", "300", "--stream-keepalive-ms", "50"]);
    let mut c = broker.client().await;
    c.ok("CREATE topic=s partitions=1").await;
    fill(&mut c, "s", 2).await;
    let mut s = broker.client().await;
    s.send_line("STREAM topic=s partition=0 member=m").await;
    let mut records = 0;
    let end = loop {
        let frame = s.recv().await.expect("stream frame");
        if frame.status == Status::StreamEnd {
            break frame;
        }
        if !frame.payload.is_empty() {
            records += Batch::decode(frame.payload).unwrap().records.len();
        }
    };
    assert_eq!(records, 2);
    assert_eq!(
        text(&end),
        "STREAM_CONTROL type=CLOSE reason=timeout offset=2"
    );
    assert!(s.is_closed().await);
}

#[tokio::test]
async fn request_timeout_outcome_follows_the_point_of_no_return() {
    let broker = TestBroker::start_with(&[
        "--request-timeout-ms",
        "200",
        "--fault",
        "CREATE:delay:1:2000",
        "--fault",
        "PUBLISH:delay:1:2000",
        "--fault",
        "PUBLISH:delay-after:1:2000",
        "--fault",
        "LIST_GROUPS:delay-after:1:2000",
    ]);
    let mut c = broker.client().await;
    let outcome = |e: ErrorPayload| {
        assert_eq!(e.code, "request_timeout");
        e.fields["outcome"].clone()
    };
    // Timed out before it started: not applied.
    assert_eq!(
        outcome(c.error("CREATE topic=zz9 partitions=1").await),
        "not_accepted"
    );
    assert!(
        !c.ok("LIST").await.contains("zz9"),
        "CREATE was not applied"
    );
    c.ok("CREATE topic=zz9 partitions=1").await;
    let publish = "PUBLISH topic=zz9 partition=0 acks=1 producerId=p message=x";
    assert_eq!(outcome(c.error(publish).await), "not_accepted");
    assert!(c.ok("LIST_OFFSETS topic=zz9").await.contains("latest=0"));
    // Timed out after the append: applied, and the client cannot know.
    assert_eq!(outcome(c.error(publish).await), "unknown");
    assert!(c.ok("LIST_OFFSETS topic=zz9").await.contains("latest=1"));
    // A read is never applied.
    assert_eq!(outcome(c.error("LIST_GROUPS").await), "not_accepted");
}

#[tokio::test]
async fn group_commands_need_their_parameters() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=g1 partitions=1").await;
    let joined = c.ok("JOIN_GROUP topic=g1 group=g member=m").await;
    let member = kv(&joined)["member"].clone();
    let e = c
        .error(&format!("SYNC_GROUP topic=g1 group=g member={member}"))
        .await;
    assert_eq!(
        (e.code.as_str(), e.fields["command"].as_str()),
        ("missing_generation", "SYNC_GROUP")
    );
    c.ok(&format!(
        "SYNC_GROUP topic=g1 group=g member={member} generation=1"
    ))
    .await;
    for command in ["HEARTBEAT", "LEAVE_GROUP"] {
        let e = c
            .error(&format!("{command} group=g member={member} generation=1"))
            .await;
        assert_eq!(
            (e.code.as_str(), e.fields["command"].as_str()),
            ("missing_topic", command)
        );
    }
    c.ok(&format!(
        "HEARTBEAT topic=g1 group=g member={member} generation=1"
    ))
    .await;
    c.ok(&format!("LEAVE_GROUP topic=g1 group=g member={member}"))
        .await;
}
