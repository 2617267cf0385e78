//! Storage faults injected with `--storage-fault` (docs/standalone-rules.md,
//! "Storage faults"): a failed fsync fails the partition until a restart, a
//! full disk fails only the append that met it, and a write torn by a crash
//! is cut off by recovery.

mod common;

use std::io::{Read, Write};
use std::net::SocketAddr;

use common::*;
use cursus_wire::{ErrorClass, ErrorPayload};

/// The segment files of partition 0 of `topic` (and nothing else: index
/// files and temporary files do not start with a digit).
fn segment_filter(topic: &str) -> String {
    format!("path=/topics/{topic}/0/0000")
}

/// Restarts the broker on the same data directory without any fault
/// (recovery runs after the startup line: connect a client to await it).
fn restart_without_faults(mut broker: TestBroker) -> TestBroker {
    broker.kill9();
    let dir = broker.dir.take().expect("dir");
    TestBroker::start_in(dir, Vec::new())
}

/// `GET path` on the health listener: status code and body.
fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect health");
    s.set_read_timeout(Some(SAFETY)).ok();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).expect("read health");
    let code = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    (code, body)
}

fn publish_line(topic: &str, message: &str) -> String {
    format!("PUBLISH topic={topic} partition=0 acks=1 producerId=p message={message}")
}

/// The payloads of partition 0 of `topic`, from offset 0.
async fn payloads(c: &mut Client, topic: &str) -> Vec<(u64, String)> {
    let batch = c
        .consume(&format!(
            "CONSUME topic={topic} partition=0 offset=0 member=m batch=100"
        ))
        .await;
    batch
        .records
        .iter()
        .map(|r| (r.offset, String::from_utf8_lossy(&r.payload).into_owned()))
        .collect()
}

fn assert_storage_unavailable(e: &ErrorPayload, topic: &str, reason: &str) {
    assert_eq!(e.code, "storage_unavailable", "{}", e.render());
    assert_eq!((e.class, e.retryable), (ErrorClass::Availability, true));
    let field = |name: &str| e.fields.get(name).map(String::as_str);
    assert_eq!(field("topic"), Some(topic));
    assert_eq!(field("partition"), Some("0"));
    assert_eq!(field("reason"), Some(reason), "{}", e.render());
}

fn segment_len(broker: &TestBroker, topic: &str) -> u64 {
    let path = broker
        .data_dir()
        .join("topics")
        .join(topic)
        .join("0")
        .join(format!("{:020}.log", 0));
    std::fs::metadata(path).expect("segment file").len()
}

#[tokio::test]
async fn failed_fsync_fails_the_partition_until_restart_and_reads_keep_working() {
    let filter = segment_filter("f");
    let fault = format!("fsync:fail:after=2:times=*:{filter}");
    let broker = TestBroker::start_with(&["--storage-fault", &fault]);
    let mut c = broker.client().await;
    c.ok("CREATE topic=f partitions=1").await;
    c.ok("CREATE topic=other partitions=1").await;
    c.ok(&publish_line("f", "one")).await;
    c.ok(&publish_line("f", "two")).await;
    assert_eq!(http_get(broker.health, "/ready").0, 200);

    // The third fdatasync fails: never retried, never acknowledged.
    let e = c.error(&publish_line("f", "three")).await;
    assert_storage_unavailable(&e, "f", "partition_failed");
    // Later writes are refused without touching the disk.
    let e = c.error(&publish_line("f", "four")).await;
    assert_storage_unavailable(&e, "f", "partition_failed");

    // Reads serve what was durable; other partitions are unaffected.
    let read = payloads(&mut c, "f").await;
    assert_eq!(read, [(0, "one".into()), (1, "two".into())]);
    c.ok(&publish_line("other", "fine")).await;

    // /ready turns false and says why.
    let (code, body) = http_get(broker.health, "/ready");
    assert_eq!(code, 503);
    assert!(
        body.contains("storage failed: topic=f partition=0"),
        "{body:?}"
    );

    // A restart recovers the partition from what is on disk.
    let broker = restart_without_faults(broker);
    let mut c = broker.client().await;
    assert_eq!(http_get(broker.health, "/ready").0, 200);
    let read = payloads(&mut c, "f").await;
    assert_eq!(&read[..2], [(0, "one".into()), (1, "two".into())]);
    // "three" was written before its fsync failed: recovery may keep it
    // (never acknowledged, so either way is allowed); "four" never was.
    assert!(read.len() <= 3 && read.iter().all(|(_, p)| p != "four"));
    let ack = c.ok(&publish_line("f", "five")).await;
    assert!(ack.contains("OK"), "{ack}");
}

#[tokio::test]
async fn a_failed_journal_fsync_turns_ready_false_and_names_the_journal() {
    let fault = "fsync:fail:after=1:times=*:path=__transaction_state.journal";
    let broker = TestBroker::start_with(&["--storage-fault", fault]);
    let mut c = broker.client().await;
    assert_eq!(http_get(broker.health, "/ready").0, 200);
    // Transitions sync the journal; one of the first ones meets the fault
    // and is refused, never acknowledged.
    let mut refused = None;
    for n in 0..4 {
        let frame = c
            .request(&format!("INIT_PRODUCER_ID transactional_id=t{n}"))
            .await;
        if frame.status == cursus_wire::Status::Error {
            refused = Some(ErrorPayload::decode(frame.payload).expect("typed error"));
            break;
        }
    }
    let e = refused.expect("a transition met the failed fsync");
    assert_eq!(e.class, ErrorClass::Availability, "{}", e.render());
    let (code, body) = http_get(broker.health, "/ready");
    assert_eq!(code, 503);
    assert!(
        body.contains("storage failed: __transaction_state.journal"),
        "{body:?}"
    );
}

#[tokio::test]
async fn full_disk_fails_only_that_append_and_appends_resume() {
    let filter = segment_filter("d");
    let fault = format!("write:enospc:after=2:times=2:{filter}");
    let broker = TestBroker::start_with(&["--storage-fault", &fault]);
    let mut c = broker.client().await;
    c.ok("CREATE topic=d partitions=1").await;
    c.ok(&publish_line("d", "one")).await;
    c.ok(&publish_line("d", "two")).await;
    let acknowledged_len = segment_len(&broker, "d");

    for message in ["three", "four"] {
        let e = c.error(&publish_line("d", message)).await;
        assert_storage_unavailable(&e, "d", "disk_full");
        // Half the entry was written, then cut back to the last whole one.
        assert_eq!(segment_len(&broker, "d"), acknowledged_len);
    }
    // The disk is not failed: still ready, and appends work again without a
    // restart, continuing right after the acknowledged data.
    assert_eq!(http_get(broker.health, "/ready").0, 200);
    c.ok(&publish_line("d", "five")).await;
    let read = payloads(&mut c, "d").await;
    assert_eq!(
        read,
        [(0, "one".into()), (1, "two".into()), (2, "five".into())]
    );

    // And the log recovers cleanly.
    let broker = restart_without_faults(broker);
    let mut c = broker.client().await;
    assert_eq!(payloads(&mut c, "d").await, read);
}

#[tokio::test]
async fn write_torn_by_a_crash_is_truncated_on_recovery() {
    let filter = segment_filter("s");
    let fault = format!("write:short:after=3:{filter}");
    let broker = TestBroker::start_with(&["--storage-fault", &fault]);
    let mut c = broker.client().await;
    c.ok("CREATE topic=s partitions=1").await;
    for message in ["one", "two", "three"] {
        c.ok(&publish_line("s", message)).await;
    }
    let acknowledged_len = segment_len(&broker, "s");

    // The fourth append writes half its entry, then the process dies.
    c.send_line(&publish_line("s", "four-is-torn")).await;
    assert!(c.recv().await.is_none(), "the broker died without a reply");
    assert!(
        segment_len(&broker, "s") > acknowledged_len,
        "a torn entry is left on disk"
    );

    let broker = restart_without_faults(broker);
    let mut c = broker.client().await; // served once recovery is done
    assert_eq!(segment_len(&broker, "s"), acknowledged_len, "torn tail cut");
    let expected = [(0, "one".into()), (1, "two".into()), (2, "three".into())];
    assert_eq!(payloads(&mut c, "s").await, expected);
    c.ok(&publish_line("s", "four")).await;
    assert_eq!(payloads(&mut c, "s").await[3], (3, "four".into()));
}

#[test]
fn malformed_storage_fault_is_a_startup_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cursus-broker"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--health-listen",
            "127.0.0.1:0",
            "--storage-fault",
            "fsync:short",
        ])
        .output()
        .expect("run broker");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("storage fault"), "{stderr}");
}
