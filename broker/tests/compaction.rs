//! Log compaction against the real broker: a reader of a compacted
//! partition sees each key's newest value at its original offset, keyless
//! records stay, tombstones go after their retention, and event-sourcing
//! topics are never compacted.

mod common;

use bytes::Bytes;
use common::*;
use cursus_wire::{Acks, Batch, Record, Status};

/// Small segments and a fast cleaner.
const FAST: [&str; 4] = ["--segment-bytes", "300", "--compaction-interval-ms", "30"];

fn rec(key: &str, value: &str) -> Record {
    Record {
        key: Bytes::copy_from_slice(key.as_bytes()),
        ..Record::new(Bytes::copy_from_slice(value.as_bytes()))
    }
}

async fn publish(c: &mut Client, topic: &str, records: Vec<Record>) {
    for r in records {
        let batch = Batch {
            acks: Acks::All,
            records: vec![r],
            ..Batch::new(topic, 0)
        };
        let frame = c.publish_batch(&batch).await;
        assert_eq!(frame.status, Status::Ok, "{:?}", frame.payload);
    }
}

/// `(offset, key, value)` of every record from offset 0.
async fn read_all(c: &mut Client, topic: &str) -> Vec<(u64, String, String)> {
    let batch = c
        .consume(&format!(
            "CONSUME topic={topic} partition=0 offset=0 member=m isolation=read_uncommitted"
        ))
        .await;
    batch
        .records
        .iter()
        .map(|r| {
            (
                r.offset,
                String::from_utf8_lossy(&r.key).into_owned(),
                String::from_utf8_lossy(&r.payload).into_owned(),
            )
        })
        .collect()
}

/// Polls until `read_all` returns `want` (bounded by [`SAFETY`]).
async fn await_log(c: &mut Client, topic: &str, want: &[(u64, String, String)]) {
    eventually_async!(SAFETY, format!("{topic} to become {want:?}"), async {
        let got = read_all(c, topic).await;
        if got == want {
            Ok(())
        } else {
            Err(got)
        }
    });
}

fn owned(v: &[(u64, &str, &str)]) -> Vec<(u64, String, String)> {
    v.iter()
        .map(|(o, k, v)| (*o, k.to_string(), v.to_string()))
        .collect()
}

/// Keyless filler that pushes the earlier records into sealed segments.
fn filler() -> Vec<Record> {
    (0..6).map(|i| rec("", &format!("fill{i}"))).collect()
}

#[tokio::test]
async fn a_reader_sees_the_newest_value_of_each_key_at_its_offset() {
    let broker = TestBroker::start_with(&FAST);
    let mut c = broker.client().await;
    c.ok("CREATE topic=c partitions=1 cleanup_policy=compact")
        .await;
    let mut records = vec![
        rec("a", "a1"),
        rec("b", "b1"),
        rec("", "free1"),
        rec("a", "a2"),
        rec("c", "c1"),
        rec("b", "b2"),
        rec("a", "a3"),
        rec("", "free2"),
        rec("c", "c2"),
    ];
    records.extend(filler());
    publish(&mut c, "c", records).await;
    let mut want = owned(&[
        (2, "", "free1"),
        (5, "b", "b2"),
        (6, "a", "a3"),
        (7, "", "free2"),
        (8, "c", "c2"),
    ]);
    for i in 0..6 {
        want.push((9 + i, String::new(), format!("fill{i}")));
    }
    await_log(&mut c, "c", &want).await;
    // The partition's offsets did not move; a read inside a gap starts at
    // the next record.
    assert!(c.ok("LIST_OFFSETS topic=c").await.contains("earliest=0"));
    assert!(c.ok("LIST_OFFSETS topic=c").await.contains("latest=15"));
    let batch = c
        .consume("CONSUME topic=c partition=0 offset=3 member=m")
        .await;
    assert_eq!(batch.records[0].offset, 5);
    // The compacted log survives a crash and appends keep their offsets.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(read_all(&mut c, "c").await, want);
    publish(&mut c, "c", vec![rec("a", "a4")]).await;
    assert_eq!(read_all(&mut c, "c").await.last().unwrap().0, 15);
}

#[tokio::test]
async fn tombstones_go_once_older_than_their_retention() {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = FAST.iter().map(|s| s.to_string()).collect();
    args.extend([
        "--compaction-tombstone-retention-ms".into(),
        "3600000".into(),
    ]);
    let broker = TestBroker::start_in(dir, args.clone());
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=1 cleanup_policy=compact")
        .await;
    let mut records = vec![rec("x", "x1"), rec("y", "y1"), rec("x", "")];
    records.extend(filler());
    publish(&mut c, "t", records).await;
    let mut want = owned(&[(1, "y", "y1"), (2, "x", "")]);
    for i in 0..6 {
        want.push((3 + i, String::new(), format!("fill{i}")));
    }
    // Young: the delete is still visible.
    await_log(&mut c, "t", &want).await;
    // Restarted with a zero retention the tombstone goes, the rest stays.
    let mut broker = broker;
    broker.kill9();
    let dir = broker.dir.take().unwrap();
    let n = args.len();
    args[n - 1] = "0".into();
    let broker = TestBroker::start_in(dir, args);
    let mut c = broker.client().await;
    want.remove(1);
    await_log(&mut c, "t", &want).await;
}

#[tokio::test]
async fn event_sourcing_topics_are_never_compacted() {
    let broker = TestBroker::start_with(&FAST);
    let mut c = broker.client().await;
    let e = c
        .error("CREATE topic=bad event_sourcing=true cleanup_policy=compact")
        .await;
    assert_eq!(e.fields["field"], "cleanup_policy");
    c.ok("CREATE topic=es partitions=1 event_sourcing=true")
        .await;
    // Nor can one be altered to it.
    c.error("ALTER_TOPIC_CONFIG topic=es cleanup_policy=compact")
        .await;
    for v in 1..=12 {
        c.ok(&format!(
            "APPEND_STREAM topic=es key=order-1 version={v} event_type=E message=m{v}"
        ))
        .await;
    }
    // A compacted topic next to it shows that cleaner passes ran: the second
    // wait covers at least one whole pass over every topic.
    c.ok("CREATE topic=c partitions=1 cleanup_policy=compact")
        .await;
    for round in 0..2u64 {
        let mut records = vec![rec("k", "old"), rec("k", "new")];
        records.extend(filler());
        publish(&mut c, "c", records).await;
        let gone = 8 * round;
        eventually_async!(SAFETY, "topic c to be compacted", async {
            let log = read_all(&mut c, "c").await;
            match log.iter().any(|(o, _, v)| v == "old" && *o >= gone) {
                true => Err(log),
                false => Ok(()),
            }
        });
    }
    let events = read_all(&mut c, "es").await;
    let versions: Vec<u64> = events.iter().map(|(o, _, _)| *o).collect();
    assert_eq!(versions, (0..12).collect::<Vec<u64>>());
}
