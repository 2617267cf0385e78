//! Connection-level behaviour over real TCP: handshake, rejections,
//! pipelining, malformed input, the connection limit, timeouts.

mod common;

use bytes::Bytes;
use common::*;
use cursus_wire::{Batch, Command, CommandPayload, Compression, ErrorClass, Frame, Status};

fn negotiation(min: u16, max: u16, compressions: &[u8]) -> Vec<u8> {
    let mut payload = Vec::new();
    payload.extend_from_slice(&min.to_be_bytes());
    payload.extend_from_slice(&max.to_be_bytes());
    payload.extend_from_slice(&(compressions.len() as u16).to_be_bytes());
    payload.extend_from_slice(compressions);
    frame_bytes(&Frame::negotiation_request(payload))
}

#[tokio::test]
async fn handshake_under_every_compression_then_requests_work() {
    let broker = TestBroker::start();
    for compression in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
    ] {
        let mut c = Client::connect(broker.addr, compression).await;
        let name = format!("c-{compression}");
        c.ok(&format!("CREATE topic={name} partitions=1")).await;
        let list = c.ok("LIST").await;
        assert!(list.contains(&name), "{list}");
        // A payload large enough to actually compress.
        let message = "x".repeat(4096);
        c.ok(&format!(
            "PUBLISH topic={name} acks=1 producerId=p message={message}"
        ))
        .await;
        let batch = c
            .consume(&format!(
                "CONSUME topic={name} partition=0 offset=0 member=m"
            ))
            .await;
        assert_eq!(batch.records.len(), 1);
        assert_eq!(batch.records[0].payload.len(), 4096);
    }
}

#[tokio::test]
async fn broker_picks_the_first_offered_compression() {
    let broker = TestBroker::start();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(broker.addr).await.unwrap();
    s.write_all(&negotiation(1, 5, &[3, 1, 0])).await.unwrap();
    let mut reply = [0u8; 35];
    within(s.read_exact(&mut reply)).await.unwrap();
    assert_eq!(reply[6], 2, "kind NEGOTIATION_RESPONSE");
    assert_eq!(reply[7], 0, "negotiation frames are uncompressed");
    assert_eq!(&reply[32..], &[0, 2, 3], "version 2, lz4");
}

#[tokio::test]
async fn handshake_rejections_close_without_reply() {
    let broker = TestBroker::start();
    // First frame is a request, not a negotiation.
    let list = Frame::request(Command::List, 1, CommandPayload::new().to_bytes().unwrap());
    assert!(closed_without_reply(broker.addr, &frame_bytes(&list)).await);
    // Version range excluding 2.
    assert!(closed_without_reply(broker.addr, &negotiation(3, 4, &[0])).await);
    assert!(closed_without_reply(broker.addr, &negotiation(1, 1, &[0])).await);
    // Bad payloads: no compression, unknown id, duplicates, trailing bytes, min 0.
    assert!(closed_without_reply(broker.addr, &negotiation(2, 2, &[])).await);
    assert!(closed_without_reply(broker.addr, &negotiation(2, 2, &[7])).await);
    assert!(closed_without_reply(broker.addr, &negotiation(2, 2, &[1, 1])).await);
    assert!(closed_without_reply(broker.addr, &negotiation(0, 2, &[0])).await);
    let trailing = frame_bytes(&Frame::negotiation_request(vec![0, 2, 0, 2, 0, 1, 0, 9]));
    assert!(closed_without_reply(broker.addr, &trailing).await);
    // Not a frame at all.
    assert!(closed_without_reply(broker.addr, b"LIST\r\n_padding_to_more_than_32_bytes____").await);
    // The broker still serves well-behaved clients.
    let mut c = broker.client().await;
    c.ok("LIST").await;
}

#[tokio::test]
async fn handshake_must_complete_within_the_idle_timeout() {
    let broker = TestBroker::start_with(&["--idle-timeout-ms", "200"]);
    // Send nothing: the broker closes once the handshake deadline passes.
    assert!(closed_without_reply(broker.addr, &[]).await);
}

#[tokio::test]
async fn idle_connections_are_not_dropped() {
    let broker = TestBroker::start_with(&["--idle-timeout-ms", "100"]);
    let mut c = broker.client().await;
    // Idle for several idle timeouts; no event to await here.
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert!(c.ok("LIST").await.starts_with("OK count="));
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=pipe partitions=1").await;
    let mut ids = Vec::new();
    for i in 0..50 {
        let line = if i % 2 == 0 {
            format!("PUBLISH topic=pipe acks=1 producerId=p message=m{i}")
        } else {
            "LIST".to_owned()
        };
        ids.push(c.send_line(&line).await);
    }
    for (i, id) in ids.iter().enumerate() {
        let frame = c.recv().await.expect("reply");
        assert_eq!(frame.request_id, *id);
        assert_eq!(frame.status, Status::Ok);
        let expected = if i % 2 == 0 {
            Command::Publish
        } else {
            Command::List
        };
        assert_eq!(frame.command, expected);
        if i % 2 == 0 {
            let ack: serde_json::Value = serde_json::from_slice(&frame.payload).unwrap();
            assert_eq!(ack["last_offset"], (i / 2) as u64);
        }
    }
}

#[tokio::test]
async fn pipelined_publishes_to_several_partitions_then_a_read_sees_them_all() {
    // A PUBLISH is answered once durable while the connection reads on, so
    // batches for several partitions are in flight together; replies still
    // come in request order, and a CONSUME queued behind them answers only
    // after them, with every acknowledged record.
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=overlap partitions=4").await;
    let mut ids = Vec::new();
    for i in 0..40 {
        ids.push(
            c.send_line(&format!(
                "PUBLISH topic=overlap partition={} acks=1 producerId=p message=m{i}",
                i % 4
            ))
            .await,
        );
    }
    let read = c
        .send_line("CONSUME topic=overlap partition=3 offset=0 member=m batch=100")
        .await;
    for (i, id) in ids.iter().enumerate() {
        let frame = c.recv().await.expect("ack");
        assert_eq!((frame.request_id, frame.status), (*id, Status::Ok));
        let ack: serde_json::Value = serde_json::from_slice(&frame.payload).unwrap();
        assert_eq!(ack["last_offset"], (i / 4) as u64, "ack {i}");
    }
    let frame = c.recv().await.expect("consume reply");
    assert_eq!((frame.request_id, frame.status), (read, Status::Ok));
    let batch = Batch::decode(frame.payload).unwrap();
    let got: Vec<_> = batch.records.iter().map(|r| r.payload.clone()).collect();
    let want: Vec<_> = (0..10)
        .map(|k| Bytes::from(format!("m{}", 4 * k + 3)))
        .collect();
    assert_eq!(got, want);
}

#[tokio::test]
async fn malformed_frame_closes_only_that_connection() {
    let broker = TestBroker::start();
    let mut good = broker.client().await;
    let mut bad = broker.client().await;
    // Corrupt the CRC of an otherwise valid request.
    let mut bytes = frame_bytes(&Frame::request(
        Command::List,
        1,
        CommandPayload::new().to_bytes().unwrap(),
    ));
    bytes[31] ^= 0xff;
    bad.send_raw(&bytes).await;
    assert!(bad.is_closed().await);
    assert!(good.ok("LIST").await.starts_with("OK"));
}

#[tokio::test]
async fn invalid_requests_close_without_reply() {
    let broker = TestBroker::start();
    let mut control = broker.client().await;
    // A negotiation frame after the handshake.
    let mut c = broker.client().await;
    c.send_raw(&negotiation(2, 2, &[0])).await;
    assert!(c.is_closed().await);
    // NEGOTIATE as a request command.
    let mut c = broker.client().await;
    c.send(
        Command::Negotiate,
        CommandPayload::new().to_bytes().unwrap(),
    )
    .await;
    assert!(c.is_closed().await);
    // A batch under a command other than PUBLISH.
    let mut c = broker.client().await;
    let batch = Batch::new("t", 0)
        .to_bytes(cursus_wire::RecordVersionPolicy::Minimal)
        .unwrap();
    c.send(Command::Consume, batch).await;
    assert!(c.is_closed().await);
    // A payload that is neither CBV2 nor CRQ2.
    let mut c = broker.client().await;
    c.send(Command::List, Bytes::from_static(b"LIST")).await;
    assert!(c.is_closed().await);
    // A CRQ2 payload that violates the schema (field name upper-case first).
    let mut c = broker.client().await;
    let mut raw = vec![0x43, 0x52, 0x51, 0x32, 0, 2, 0, 0, 0, 1];
    for s in ["Topic", "x"] {
        raw.extend_from_slice(&(s.len() as u32).to_be_bytes());
        raw.extend_from_slice(s.as_bytes());
    }
    c.send(Command::List, Bytes::from(raw)).await;
    assert!(c.is_closed().await);
    // A wrong kind from the client (a RESPONSE frame).
    let mut c = broker.client().await;
    c.send_frame(Frame::response(Command::List, 9, Status::Ok, Bytes::new()))
        .await;
    assert!(c.is_closed().await);
    assert!(control.ok("LIST").await.starts_with("OK"));
}

#[tokio::test]
async fn rendered_line_that_does_not_parse_is_malformed_input_then_close() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    // Valid CRQ2 whose rendered line re-parses with a duplicate field:
    // `LIST a=1 b=2 b=3`.
    let payload = CommandPayload::new().field("a", "1 b=2").field("b", "3");
    let id = c.send(Command::List, payload.to_bytes().unwrap()).await;
    let frame = c.recv().await.expect("error reply");
    assert_eq!(frame.request_id, id);
    assert_eq!(frame.status, Status::Error);
    let e = cursus_wire::ErrorPayload::decode(frame.payload).unwrap();
    assert_eq!(e.code, "malformed_input");
    assert_eq!(e.fields["reason"], "command_payload_required");
    assert_eq!(e.class, ErrorClass::Validation);
    assert!(c.is_closed().await);
}

#[tokio::test]
async fn message_before_other_fields_gets_the_reference_behaviour() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=order partitions=1").await;
    // message= first: on the rendered line it captures the rest, so the
    // topic and acks fields disappear into the message.
    let payload = CommandPayload::new()
        .field("message", "hello")
        .field("topic", "order")
        .field("producerId", "p");
    let id = c.send(Command::Publish, payload.to_bytes().unwrap()).await;
    let frame = c.recv().await.unwrap();
    assert_eq!(frame.request_id, id);
    assert_eq!(frame.status, Status::Error);
    let e = cursus_wire::ErrorPayload::decode(frame.payload).unwrap();
    assert_eq!(e.code, "missing_topic");
}

#[tokio::test]
async fn connection_limit_closes_the_extra_connection_only() {
    let (dir, path) = config_dir("max_connections = 3\n");
    let broker = TestBroker::start_with(&["--config", path.to_str().unwrap()]);
    let mut clients = Vec::new();
    for _ in 0..3 {
        clients.push(broker.client().await);
    }
    // The fourth connection is accepted by the kernel and closed at once.
    assert!(closed_without_reply(broker.addr, &negotiation(2, 2, &[0])).await);
    for c in &mut clients {
        assert!(c.ok("LIST").await.starts_with("OK"));
    }
    // Closing one frees a slot.
    drop(clients.pop());
    // The broker releases the slot when it notices the close.
    let _reconnected = eventually_async!(SAFETY, "the closed connection's slot", async {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(broker.addr).await.unwrap();
        s.write_all(&negotiation(2, 2, &[0])).await.unwrap();
        let mut buf = [0u8; 35];
        within(s.read_exact(&mut buf)).await.map(|_| s)
    });
    drop(dir);
}

#[tokio::test]
async fn exit_replies_ok_then_closes() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    assert_eq!(c.ok("EXIT").await, "OK");
    assert!(c.is_closed().await);
}

#[tokio::test]
async fn unsupported_commands_get_typed_errors() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    let e = c.error("CLUSTER_STATUS").await;
    assert_eq!(e.code, "distribution_not_enabled");
    assert_eq!(e.class, ErrorClass::Validation);
    c.ok("CREATE topic=t partitions=1").await;
    let e = c
        .error("REASSIGN_PARTITIONS topic=t partition=0 replicas=broker-1")
        .await;
    assert_eq!(e.code, "distribution_not_enabled");
    assert_eq!(e.fields["command"], "REASSIGN_PARTITIONS");
    let e = c.error("REPLICATE_MESSAGE topic=t").await;
    assert_eq!(e.code, "internal_command_unauthorized");
    assert_eq!(e.class, ErrorClass::Authorization);
    // AUTH without principal= and token= (SASL off still checks them).
    let e = c.error("AUTH username=u password=p").await;
    assert_eq!(e.code, "invalid_auth");
    assert_eq!(e.class, ErrorClass::Validation);
    // The connection stays usable.
    assert!(c.ok("HELP").await.starts_with("OK commands="));
}
