//! Hostile input: random bytes, truncated frames, bad checksums, oversized
//! lengths, wrong kinds/status/ids, garbage after a valid handshake, and more
//! connections than the limit. Each offending connection is closed without a
//! reply, the broker keeps serving well-behaved clients and its memory stays
//! bounded.

mod common;

use bytes::Bytes;
use common::*;
use cursus_wire::{Acks, Batch, Command, CommandPayload, Frame, Record, RecordVersionPolicy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Seed of the deterministic byte generator.
const SEED: u64 = 0x5eed_c0de_2026_1130;
/// Random-bytes cases per phase (before and after the handshake).
const RANDOM_CASES: usize = 48;
/// The frame payload limit.
const MAX_PAYLOAD: u32 = 64 * 1024 * 1024;
/// Allowed RSS growth of the broker over the hostile phase.
const RSS_BOUND_KIB: u64 = 256 * 1024;

/// splitmix64: small, seeded, good enough for fuzz-style inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn negotiation() -> Vec<u8> {
    let payload = [0u8, 2, 0, 2, 0, 1, 0];
    frame_bytes(&Frame::negotiation_request(payload.to_vec()))
}

/// A connected socket that completed the handshake (no compression).
async fn negotiated(addr: std::net::SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(&negotiation())
        .await
        .expect("write negotiation");
    let mut reply = [0u8; 35];
    within(s.read_exact(&mut reply))
        .await
        .expect("negotiation response");
    assert_eq!(reply[6], 2, "NEGOTIATION_RESPONSE");
    s
}

/// Writes `bytes` (the broker may close before all are written), optionally
/// half-closes, then expects the broker to close the connection without
/// sending anything.
async fn expect_closed(mut s: TcpStream, bytes: &[u8], half_close: bool, case: &str) {
    let _ = s.write_all(bytes).await;
    if half_close {
        let _ = s.shutdown().await;
    }
    let mut buf = [0u8; 256];
    match within(s.read(&mut buf)).await {
        Ok(0) | Err(_) => {}
        Ok(n) => panic!("{case}: broker replied {n} bytes instead of closing"),
    }
}

/// Sends `bytes` on a fresh connection, before any handshake.
async fn raw_case(broker: &TestBroker, bytes: &[u8], half_close: bool, case: &str) {
    let s = TcpStream::connect(broker.addr).await.expect("connect");
    expect_closed(s, bytes, half_close, case).await;
}

/// Sends `bytes` on a fresh connection right after a valid handshake.
async fn negotiated_case(broker: &TestBroker, bytes: &[u8], half_close: bool, case: &str) {
    let s = negotiated(broker.addr).await;
    expect_closed(s, bytes, half_close, case).await;
}

fn list_frame() -> Vec<u8> {
    frame_bytes(&Frame::request(
        Command::List,
        7,
        CommandPayload::new().to_bytes().unwrap(),
    ))
}

fn publish_frame() -> Vec<u8> {
    let batch = Batch {
        acks: Acks::Leader,
        records: (0..4)
            .map(|i| Record::new(Bytes::from(format!("hostile-{i}"))))
            .collect(),
        ..Batch::new("h", 0)
    };
    frame_bytes(&Frame::request(
        Command::Publish,
        8,
        batch.to_bytes(RecordVersionPolicy::Minimal).unwrap(),
    ))
}

/// `frame` with header bytes `at..` replaced by `value`.
fn patched(mut frame: Vec<u8>, at: usize, value: &[u8]) -> Vec<u8> {
    frame[at..at + value.len()].copy_from_slice(value);
    frame
}

/// The broker still answers correctly: the long-lived control connection
/// reads back the known record, and a fresh connection works too.
async fn still_serving(broker: &TestBroker, control: &mut Client, case: &str) {
    let b = control
        .consume("CONSUME topic=h partition=0 offset=0 member=m batch=1")
        .await;
    assert_eq!(b.records.len(), 1, "after {case}");
    assert_eq!(&b.records[0].payload[..], b"known", "after {case}");
    let mut fresh = broker.client().await;
    let list = fresh.ok("LIST").await;
    assert!(list.contains('h'), "after {case}: {list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_closes_only_the_offending_connection() {
    let broker = TestBroker::start();
    let mut control = broker.client().await;
    control.ok("CREATE topic=h partitions=1").await;
    control
        .ok("PUBLISH topic=h partition=0 acks=1 producerId=p message=known")
        .await;
    let rss_before = broker.rss_kib();
    let mut rng = Rng(SEED);

    // Random bytes before and after the handshake. Short inputs leave the
    // broker waiting for the rest of a header, so the client half-closes.
    for i in 0..RANDOM_CASES {
        let len = 1 + (rng.next() % 4096) as usize;
        let bytes = rng.bytes(len);
        raw_case(&broker, &bytes, true, &format!("random #{i} ({len} B)")).await;
        let len = 1 + (rng.next() % 4096) as usize;
        let bytes = rng.bytes(len);
        let case = format!("random after handshake #{i} ({len} B)");
        negotiated_case(&broker, &bytes, true, &case).await;
        still_serving(&broker, &mut control, &case).await;
    }

    // Well-framed requests (valid header and CRC) whose payload is garbage,
    // including garbage behind the CBV2 and CRQ2 magics.
    for i in 0..16 {
        let len = (rng.next() % 2048) as usize;
        let prefix: &[u8] = match i % 3 {
            0 => b"CBV2\x00\x02",
            1 => b"CRQ2\x00\x02",
            _ => b"",
        };
        let payload = [prefix, &rng.bytes(len)].concat();
        let command = if i % 2 == 0 {
            Command::Publish
        } else {
            Command::List
        };
        let bytes = frame_bytes(&Frame::request(command, 1 + i as u64, payload));
        let case = format!("garbage payload #{i}");
        negotiated_case(&broker, &bytes, false, &case).await;
        still_serving(&broker, &mut control, &case).await;
    }

    // Truncated frames, then the client closes its side.
    let publish = publish_frame();
    let negotiation = negotiation();
    for cut in [
        1,
        4,
        8,
        16,
        31,
        32,
        33,
        publish.len() / 2,
        publish.len() - 1,
    ] {
        let case = format!("publish truncated to {cut} B");
        negotiated_case(&broker, &publish[..cut], true, &case).await;
        still_serving(&broker, &mut control, &case).await;
    }
    for cut in [1, 16, 31, 32, negotiation.len() - 1] {
        let case = format!("negotiation truncated to {cut} B");
        raw_case(&broker, &negotiation[..cut], true, &case).await;
    }

    // Bad CRC: in the header, or a flipped payload byte.
    let last = publish.len() - 1;
    let cases: [(&str, Vec<u8>); 3] = [
        ("crc field", patched(publish.clone(), 28, &[0xde, 0xad])),
        (
            "payload byte",
            patched(publish.clone(), last, &[publish[last] ^ 0x01]),
        ),
        (
            "list crc",
            patched(list_frame(), 31, &[list_frame()[31] ^ 0xff]),
        ),
    ];
    for (name, bytes) in &cases {
        let case = format!("bad CRC ({name})");
        negotiated_case(&broker, bytes, false, &case).await;
        still_serving(&broker, &mut control, &case).await;
    }
    let bad_negotiation = patched(negotiation.clone(), 28, &[0, 0, 0, 0]);
    raw_case(&broker, &bad_negotiation, false, "negotiation with bad CRC").await;

    // Oversized lengths: beyond the limit closes at once; exactly the limit
    // with no payload following waits for it, then the client closes.
    let too_big = (MAX_PAYLOAD + 1).to_be_bytes();
    let limit = MAX_PAYLOAD.to_be_bytes();
    let header = |at: usize, value: &[u8]| patched(list_frame()[..32].to_vec(), at, value);
    for (name, bytes, half_close) in [
        ("encoded_length > 64 MiB", header(20, &too_big), false),
        ("decoded_length > 64 MiB", header(24, &too_big), false),
        (
            "both > 64 MiB",
            patched(header(20, &too_big), 24, &too_big),
            false,
        ),
        (
            "encoded_length = 64 MiB, no payload",
            patched(header(20, &limit), 24, &limit),
            true,
        ),
    ] {
        negotiated_case(&broker, &bytes, half_close, name).await;
        still_serving(&broker, &mut control, name).await;
    }
    let mut big_negotiation = negotiation[..32].to_vec();
    big_negotiation[20..24].copy_from_slice(&too_big);
    raw_case(&broker, &big_negotiation, false, "negotiation > 64 MiB").await;
    big_negotiation[20..24].copy_from_slice(&limit);
    big_negotiation[24..28].copy_from_slice(&limit);
    raw_case(
        &broker,
        &big_negotiation,
        true,
        "negotiation = 64 MiB, no payload",
    )
    .await;

    // Wrong magic, version, kind, flags, status, ids.
    let list = list_frame();
    let header_cases: Vec<(String, Vec<u8>)> = vec![
        ("bad magic".into(), patched(list.clone(), 0, b"XRS2")),
        ("version 1".into(), patched(list.clone(), 4, &[0, 1])),
        ("version 3".into(), patched(list.clone(), 4, &[0, 3])),
        ("kind 0".into(), patched(list.clone(), 6, &[0])),
        ("kind 6".into(), patched(list.clone(), 6, &[6])),
        ("kind 255".into(), patched(list.clone(), 6, &[255])),
        (
            "kind NEGOTIATION_REQUEST".into(),
            patched(list.clone(), 6, &[1]),
        ),
        (
            "kind NEGOTIATION_RESPONSE".into(),
            patched(list.clone(), 6, &[2]),
        ),
        (
            "kind RESPONSE".into(),
            patched(patched(list.clone(), 6, &[4]), 10, &[0, 1]),
        ),
        (
            "kind STREAM".into(),
            patched(patched(list.clone(), 6, &[5]), 10, &[0, 1]),
        ),
        ("reserved flags".into(), patched(list.clone(), 7, &[0x81])),
        (
            "flags without explicit bit".into(),
            patched(list.clone(), 7, &[0]),
        ),
        (
            "compression mismatch".into(),
            patched(list.clone(), 7, &[0x03]),
        ),
        (
            "unknown compression".into(),
            patched(list.clone(), 7, &[0x0f]),
        ),
        (
            "unknown command".into(),
            patched(list.clone(), 8, &[0xff, 0xff]),
        ),
        (
            "request status OK".into(),
            patched(list.clone(), 10, &[0, 1]),
        ),
        (
            "request status 0xffff".into(),
            patched(list.clone(), 10, &[0xff, 0xff]),
        ),
        ("request id 0".into(), patched(list.clone(), 12, &[0; 8])),
        (
            "NEGOTIATE as a request".into(),
            frame_bytes(&Frame::request(
                Command::Negotiate,
                3,
                CommandPayload::new().to_bytes().unwrap(),
            )),
        ),
        ("second negotiation".into(), negotiation.clone()),
        (
            "decoded_length differs".into(),
            patched(list.clone(), 24, &[0, 0, 0, 99]),
        ),
    ];
    for (name, bytes) in &header_cases {
        negotiated_case(&broker, bytes, false, name).await;
        still_serving(&broker, &mut control, name).await;
    }
    // A non-negotiation first frame and a negotiation frame with a command.
    raw_case(&broker, &list, false, "request before handshake").await;
    let odd = patched(negotiation.clone(), 8, &[0, 5]);
    raw_case(&broker, &odd, false, "negotiation with a command").await;

    // Many connections at once, each declaring a 64 MiB payload and sending
    // part of it: buffering stays bounded by what actually arrives.
    let mut held = Vec::new();
    let mut declared = list_frame()[..32].to_vec();
    declared[20..24].copy_from_slice(&limit);
    declared[24..28].copy_from_slice(&limit);
    let chunk = rng.bytes(256 * 1024);
    for _ in 0..32 {
        let mut s = negotiated(broker.addr).await;
        s.write_all(&declared).await.expect("header");
        s.write_all(&chunk).await.expect("partial payload");
        held.push(s);
    }
    still_serving(&broker, &mut control, "32 partial 64 MiB frames").await;
    for s in held {
        expect_closed(s, &[], true, "partial 64 MiB frame").await;
    }
    still_serving(&broker, &mut control, "the end of the hostile phase").await;

    let rss_after = broker.rss_kib();
    eprintln!("broker RSS: {rss_before} KiB before, {rss_after} KiB after the hostile phase");
    assert!(
        rss_after < rss_before + RSS_BOUND_KIB,
        "broker RSS grew from {rss_before} KiB to {rss_after} KiB"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_default_limit_are_closed_without_disturbing_others() {
    // Default limits: max_connections = 1000.
    let broker = TestBroker::start();
    let mut clients = Vec::with_capacity(1000);
    for _ in 0..1000 {
        clients.push(broker.client().await);
    }
    clients[0].ok("CREATE topic=many partitions=1").await;

    // 100 more sockets, all open at once: each is closed without a reply.
    let mut extra = Vec::with_capacity(100);
    for _ in 0..100 {
        extra.push(TcpStream::connect(broker.addr).await.expect("connect"));
    }
    let negotiation = negotiation();
    for (i, s) in extra.into_iter().enumerate() {
        expect_closed(s, &negotiation, false, &format!("extra connection {i}")).await;
    }

    // Every one of the first 1000 is still served (pipelined: all requests
    // first, then all replies).
    let mut ids = Vec::with_capacity(clients.len());
    for (i, c) in clients.iter_mut().enumerate() {
        let line = format!("PUBLISH topic=many partition=0 acks=1 producerId=c{i} message=m{i}");
        ids.push(c.send_line(&line).await);
    }
    for (c, id) in clients.iter_mut().zip(&ids) {
        let frame = c.recv().await.expect("reply");
        assert_eq!(frame.request_id, *id);
        assert_eq!(frame.status, cursus_wire::Status::Ok);
    }
    let b = clients[999]
        .consume("CONSUME topic=many partition=0 offset=0 member=m")
        .await;
    assert_eq!(b.records.len(), 1000);

    // Close them all: slots are released as the broker notices each close,
    // so a new client gets in again.
    drop(clients);
    let mut fresh = within(async {
        loop {
            let mut s = TcpStream::connect(broker.addr).await.expect("connect");
            s.write_all(&negotiation).await.expect("write");
            let mut reply = [0u8; 35];
            if s.read_exact(&mut reply).await.is_ok() {
                break s;
            }
            // Refused: no event announces the broker's release of a slot.
            tokio::task::yield_now().await;
        }
    })
    .await;
    fresh.write_all(&list_frame()).await.expect("list");
    let mut header = [0u8; 32];
    within(fresh.read_exact(&mut header)).await.expect("reply");
    assert_eq!(header[6], 4, "RESPONSE");
    assert_eq!(&header[10..12], &[0, 1], "status OK");
    let mut c = broker.client().await;
    assert!(c.ok("LIST").await.contains("many"));
}
