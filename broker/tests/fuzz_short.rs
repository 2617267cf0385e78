//! The short, stable-Rust run of the `request_path` fuzz target (the body
//! is `cursus_broker::fuzzing::request_path`, shared with `broker/fuzz`):
//! the committed seed corpus, then deterministic mutations of it, a few
//! seconds at most. `make fuzz` runs the coverage-guided target for long.
//!
//! A test checks the committed seeds are what the code below builds;
//! `CURSUS_UPDATE_SEEDS=1 cargo test -p cursus-broker --test fuzz_short` rewrites the
//! seed corpus (`broker/fuzz/seeds/request_path/`).

#[path = "../../wire/fuzz/short_run.rs"]
mod short_run;

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use cursus_wire::{
    Acks, Batch, Command, CommandPayload, Compression, Frame, NegotiationRequest, Record,
    RecordVersion, RecordVersionPolicy,
};

fn seed_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/request_path")
}

/// Resident set size of this process in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn request_path_short_run() {
    let before = rss_kib();
    let run = short_run::run(
        "request_path",
        &seed_dir(),
        400,
        Duration::from_secs(4),
        cursus_broker::fuzzing::request_path,
    );
    assert!(run.mutations > 0, "{run:?}");
    // Every input gets a fresh broker: nothing may pile up across them.
    let grown_mib = rss_kib().saturating_sub(before) / 1024;
    assert!(grown_mib < 256, "RSS grew by {grown_mib} MiB over {run:?}");
}

/// One client's bytes: the negotiation request, then `frames`.
fn session(compression: Compression, frames: &[Frame]) -> Vec<u8> {
    let request = NegotiationRequest::for_compression(compression);
    let mut out = Frame::negotiation_request(request.encode().unwrap())
        .to_bytes(Compression::None)
        .unwrap()
        .to_vec();
    for f in frames {
        out.extend_from_slice(&f.to_bytes(compression).unwrap());
    }
    out
}

fn lines(lines: &[&str]) -> Vec<Frame> {
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let (command, payload) = CommandPayload::parse_line(line).expect(line);
            Frame::request(command, i as u64 + 1, payload.to_bytes().unwrap())
        })
        .collect()
}

fn publish_batch(id: u64) -> Frame {
    let batch = Batch {
        acks: Acks::Leader,
        records: vec![
            Record {
                key: Bytes::from_static(b"k"),
                producer_id: "p".into(),
                seq_num: 1,
                ..Record::new(Bytes::from_static(b"batched"))
            },
            Record::new(Bytes::from_static(b"second")),
        ],
        ..Batch::new("t", 0)
    };
    let bytes = batch
        .to_bytes(RecordVersionPolicy::Fixed(RecordVersion::V3))
        .unwrap();
    Frame::request(Command::Publish, id, bytes)
}

/// The committed seeds match the sessions below (`CURSUS_UPDATE_SEEDS=1`
/// rewrites them).
#[test]
fn committed_request_path_seeds_are_current() {
    let data = [
        ("handshake-only", session(Compression::None, &[])),
        (
            "topic-lifecycle",
            session(
                Compression::None,
                &lines(&[
                    "CREATE topic=t partitions=2",
                    "PUBLISH topic=t partition=0 acks=1 producerId=p message=hello",
                    "CONSUME topic=t partition=0 offset=0 member=m wait_ms=0",
                    "LIST_OFFSETS topic=t",
                    "DESCRIBE topic=t",
                    "METADATA topic=t",
                    "LIST",
                    "TRUNCATE topic=t",
                    "DELETE topic=t",
                ]),
            ),
        ),
        ("publish-batch", {
            let mut frames = lines(&["CREATE topic=t partitions=1"]);
            frames.push(publish_batch(2));
            frames.extend(lines(&["CONSUME topic=t partition=0 offset=0 member=m"]));
            session(Compression::None, &frames)
        }),
        (
            "gzip-groups",
            session(
                Compression::Gzip,
                &lines(&[
                    "CREATE topic=g partitions=2",
                    "REGISTER_GROUP group=gr topic=g",
                    "JOIN_GROUP group=gr member=w",
                    "FIND_COORDINATOR group=gr",
                    "GROUP_STATUS group=gr",
                    "FETCH_OFFSET topic=g partition=0 group=gr",
                ]),
            ),
        ),
        (
            "lz4-event-stream",
            session(
                Compression::Lz4,
                &lines(&[
                    "CREATE topic=es partitions=1 event_sourcing=true",
                    "APPEND_STREAM topic=es key=a version=1 event_id=ev-1 message=x",
                    "STREAM_VERSION topic=es key=a",
                    "SAVE_SNAPSHOT topic=es key=a version=1 message=s",
                    "READ_SNAPSHOT topic=es key=a",
                ]),
            ),
        ),
        (
            "transaction",
            session(
                Compression::Snappy,
                &lines(&[
                    "CREATE topic=x partitions=1",
                    "INIT_PRODUCER_ID transactional_id=tx",
                    "BEGIN_TXN transactional_id=tx producerId=txn-1 epoch=0",
                    "TXN_STATUS transactional_id=tx",
                    "HELP",
                ]),
            ),
        ),
        ("bad-frame-after-handshake", {
            let mut bytes = session(Compression::None, &lines(&["LIST"]));
            bytes.extend_from_slice(b"CRS2\x00\x02\xff\xff garbage after a valid frame");
            bytes
        }),
        (
            "garbage",
            b"\x00\x02\x00\x02\x00\x04\x01GET / HTTP/1.1\r\n\r\n\xff\xff".to_vec(),
        ),
    ];
    short_run::check_or_write_seeds(&seed_dir(), &data);
}
