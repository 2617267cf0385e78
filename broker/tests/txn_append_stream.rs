//! TXN_APPEND_STREAM against the real broker (docs/aggregate-replay.md):
//! events appended inside a transaction are invisible until the commit,
//! which shows them together with the transaction's records and consumer
//! offsets; an abort, a timeout or a re-initialisation leaves no version
//! behind; key reservations; identical resends; sequences; replay topics;
//! and kill -9 (plain and at commit crash points): committed events are
//! visible and contiguous after the restart, aborted and open ones never.

mod common;
mod txn_common;

use std::collections::HashMap;

use common::*;
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{Batch, ErrorClass, Status};
use txn_common::*;

const ES_PARTITIONS: u32 = 2;

fn part(key: &str) -> u32 {
    partition_for_key(key.as_bytes(), ES_PARTITIONS)
}

async fn es_topic(c: &mut Client, name: &str) {
    c.ok(&format!(
        "CREATE topic={name} partitions={ES_PARTITIONS} event_sourcing=true"
    ))
    .await;
}

/// The TXN_APPEND_STREAM line of `s` (event `E<version>`).
fn line(s: &Session, topic: &str, key: &str, version: u64, seq: u64, msg: &str) -> String {
    format!(
        "TXN_APPEND_STREAM {} topic={topic} key={key} expected_version={version} seqNum={seq} \
         event_type=E{version} message={msg}",
        s.args()
    )
}

/// TXN_APPEND_STREAM, expecting success; returns the reply fields.
async fn txn_append(
    c: &mut Client,
    s: &Session,
    topic: &str,
    key: &str,
    version: u64,
    seq: u64,
    msg: &str,
) -> HashMap<String, String> {
    let f = kv(&c.ok(&line(s, topic, key, version, seq, msg)).await);
    assert_eq!(f["transactional_id"], s.id);
    assert_eq!(f["appended"], "true");
    assert_eq!(f["topic"], topic);
    assert_eq!(f["partition"], part(key).to_string());
    assert_eq!(f["version"], version.to_string());
    assert_eq!(f["state"], "open");
    f
}

async fn version(c: &mut Client, topic: &str, key: &str) -> u64 {
    let reply = c
        .ok(&format!("STREAM_VERSION topic={topic} key={key}"))
        .await;
    reply.strip_prefix("OK version=").unwrap().parse().unwrap()
}

/// READ_STREAM: `(version, payload)` of each event.
async fn events(c: &mut Client, topic: &str, key: &str) -> Vec<(u64, String)> {
    let id = c
        .send_line(&format!("READ_STREAM topic={topic} key={key}"))
        .await;
    let first = c.recv().await.unwrap();
    assert_eq!((first.request_id, first.status), (id, Status::Ok));
    let second = c.recv().await.unwrap();
    let batch = Batch::decode(second.payload).unwrap();
    batch
        .records
        .iter()
        .map(|r| {
            (
                r.aggregate_version,
                String::from_utf8_lossy(&r.payload).into_owned(),
            )
        })
        .collect()
}

/// READ_STREAM_HISTORY's envelope as JSON.
async fn history(c: &mut Client, topic: &str, key: &str) -> serde_json::Value {
    let id = c
        .send_line(&format!("READ_STREAM_HISTORY topic={topic} key={key}"))
        .await;
    let first = c.recv().await.unwrap();
    assert_eq!((first.request_id, first.status), (id, Status::Ok));
    c.recv().await.unwrap();
    serde_json::from_slice(&first.payload).unwrap()
}

fn plain_line(topic: &str, key: &str, version: u64, msg: &str) -> String {
    format!("APPEND_STREAM topic={topic} key={key} version={version} message={msg}")
}

#[tokio::test]
async fn committed_appends_show_together_with_publishes_and_offsets() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, "es").await;
    c.ok("CREATE topic=out partitions=1").await;
    c.ok("CREATE topic=in partitions=1").await;
    assert!(c.ok("HELP").await.contains("TXN_APPEND_STREAM"));
    c.ok(&plain_line("es", "a", 1, "plain-1")).await;

    let s = Session::init(&mut c, "tx").await;
    s.begin(&mut c).await;
    let first = txn_append(&mut c, &s, "es", "a", 2, 1, "a-2").await;
    txn_append(&mut c, &s, "es", "a", 3, 2, "a-3").await;
    txn_append(&mut c, &s, "es", "b", 1, 3, "b-1").await;
    // The version is the head + 1, counting the transaction's own events.
    let e = c.error(&line(&s, "es", "a", 3, 4, "again")).await;
    assert_eq!(e.code, "version_conflict");
    assert_eq!(e.fields["current"], "3");
    s.publish(&mut c, "out", 0, 1, "output").await;
    let (member, generation, _) = join(&mut c, "in", "g", "m").await;
    c.ok(&format!(
        "SEND_OFFSETS_TO_TXN {} topic=in group=g member={member} generation={generation} \
         offsets=P0:7",
        s.args()
    ))
    .await;

    // Open: appended (the log end moved) but invisible everywhere.
    let pa = part("a");
    let (latest, hwm) = latest_and_hwm(&mut c, "es", pa).await;
    assert_eq!(latest, first["offset"].parse::<u64>().unwrap());
    assert!(hwm > latest);
    assert_eq!(version(&mut c, "es", "a").await, 1);
    assert_eq!(version(&mut c, "es", "b").await, 0);
    assert_eq!(events(&mut c, "es", "a").await, vec![(1, "plain-1".into())]);
    assert_eq!(history(&mut c, "es", "a").await["head_version"], 1);
    assert_eq!(committed(&mut c, "es", pa).await, vec!["plain-1"]);
    assert!(committed(&mut c, "out", 0).await.is_empty());
    assert_eq!(fetch_offset(&mut c, "in", 0, "g").await, None);
    let st = s.status(&mut c).await;
    assert_eq!(st["messages"], "4");

    let end = s.end(&mut c, "commit").await;
    assert_eq!(end["state"], "committed");
    assert_eq!(end["messages"], "4");
    assert_eq!(version(&mut c, "es", "a").await, 3);
    assert_eq!(version(&mut c, "es", "b").await, 1);
    assert_eq!(
        events(&mut c, "es", "a").await,
        vec![(1, "plain-1".into()), (2, "a-2".into()), (3, "a-3".into())]
    );
    assert_eq!(history(&mut c, "es", "a").await["completeness"], "complete");
    assert_eq!(committed(&mut c, "out", 0).await, vec!["output"]);
    assert_eq!(fetch_offset(&mut c, "in", 0, "g").await, Some(7));
    // The reservation ended with the commit.
    c.ok(&plain_line("es", "a", 4, "plain-4")).await;

    // The committed events are indexed from the log after a restart.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(version(&mut c, "es", "a").await, 4);
    assert_eq!(version(&mut c, "es", "b").await, 1);
    let versions: Vec<u64> = events(&mut c, "es", "a")
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    assert_eq!(versions, vec![1, 2, 3, 4]);
}

#[tokio::test]
async fn an_abort_leaves_no_version_behind() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, "es").await;
    let s = Session::init(&mut c, "tx").await;
    s.begin(&mut c).await;
    txn_append(&mut c, &s, "es", "a", 1, 1, "a-1").await;
    txn_append(&mut c, &s, "es", "a", 2, 2, "a-2").await;
    let end = s.end(&mut c, "abort").await;
    assert_eq!(end["state"], "aborted");
    assert_eq!(version(&mut c, "es", "a").await, 0);
    assert!(events(&mut c, "es", "a").await.is_empty());
    assert!(committed(&mut c, "es", part("a")).await.is_empty());
    // The key is free again and its versions start over.
    c.ok(&plain_line("es", "a", 1, "plain-1")).await;
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(events(&mut c, "es", "a").await, vec![(1, "plain-1".into())]);
    c.ok(&plain_line("es", "a", 2, "plain-2")).await;
}

#[tokio::test]
async fn keys_are_reserved_until_the_transaction_ends() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, "es").await;
    let s1 = Session::init(&mut c, "one").await;
    s1.begin(&mut c).await;
    txn_append(&mut c, &s1, "es", "a", 1, 1, "a-1").await;

    let s2 = Session::init(&mut c, "two").await;
    s2.begin(&mut c).await;
    let e = c.error(&line(&s2, "es", "a", 1, 1, "mine")).await;
    assert_eq!(e.code, "stream_version_reserved");
    assert_eq!(e.class, ErrorClass::Conflict);
    assert_eq!(
        (
            e.fields["topic"].as_str(),
            e.fields["key"].as_str(),
            e.fields["transactional_id"].as_str()
        ),
        ("es", "a", "one")
    );
    let e = c.error(&plain_line("es", "a", 1, "plain")).await;
    assert_eq!(e.code, "stream_version_reserved");
    assert_eq!(e.fields["transactional_id"], "one");
    // The rejected attempt did not use up s2's sequence 1.
    txn_append(&mut c, &s2, "es", "b", 1, 1, "b-1").await;
    // The topic cannot be deleted or truncated meanwhile.
    assert_eq!(
        c.error("DELETE topic=es").await.code,
        "topic_delete_blocked"
    );
    assert_eq!(
        c.error("TRUNCATE topic=es expected_revision=1").await.code,
        "topic_truncate_blocked"
    );
    // Re-initialising "one" aborts its transaction and frees the key.
    let again = Session::init(&mut c, "one").await;
    assert_eq!(again.epoch, 1);
    assert_eq!(s1.status(&mut c).await["state"], "empty");
    assert_eq!(version(&mut c, "es", "a").await, 0);
    c.ok(&plain_line("es", "a", 1, "plain")).await;
    s2.end(&mut c, "commit").await;
    assert_eq!(version(&mut c, "es", "b").await, 1);
    assert_eq!(events(&mut c, "es", "a").await, vec![(1, "plain".into())]);
}

#[tokio::test]
async fn identical_resends_and_sequences() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, "es").await;
    es_topic(&mut c, "other").await;
    let s = Session::init(&mut c, "tx").await;
    s.begin(&mut c).await;
    let first = c.ok(&line(&s, "es", "a", 1, 1, "a-1")).await;
    let p = part("a");
    let (_, hwm) = latest_and_hwm(&mut c, "es", p).await;
    // The identical command: the same reply, no second record.
    assert_eq!(c.ok(&line(&s, "es", "a", 1, 1, "a-1")).await, first);
    assert_eq!(latest_and_hwm(&mut c, "es", p).await.1, hwm);
    // The same sequence with other content, and a gap, are refused.
    let e = c.error(&line(&s, "es", "a", 1, 1, "changed")).await;
    assert_eq!(e.code, "invalid_seq_num");
    let e = c.error(&line(&s, "es", "a", 2, 3, "a-2")).await;
    assert_eq!(e.code, "invalid_seq_num");
    assert_eq!(
        (e.fields["expected"].as_str(), e.fields["got"].as_str()),
        ("2", "3")
    );
    txn_append(&mut c, &s, "es", "a", 2, 2, "a-2").await;
    // Each topic counts from 1; TXN_PUBLISH has its own per-partition
    // sequences.
    txn_append(&mut c, &s, "other", "a", 1, 1, "o-1").await;
    s.publish(&mut c, "es", p, 1, "published").await;
    s.publish(&mut c, "es", p, 2, "published-2").await;
    txn_append(&mut c, &s, "es", "a", 3, 3, "a-3").await;
    s.end(&mut c, "commit").await;
    let versions: Vec<u64> = events(&mut c, "es", "a")
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    assert_eq!(versions, vec![1, 2, 3]);
    assert_eq!(version(&mut c, "other", "a").await, 1);
    let visible = committed(&mut c, "es", p).await;
    assert_eq!(
        visible,
        vec!["a-1", "a-2", "published", "published-2", "a-3"]
    );
}

#[tokio::test]
async fn malformed_and_misplaced_requests() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, "es").await;
    c.ok("CREATE topic=plain partitions=1").await;
    let s = Session::init(&mut c, "tx").await;
    let a = s.args();
    let e = c.error(&line(&s, "es", "a", 1, 1, "x")).await;
    assert_eq!(e.code, "transaction_not_open");
    s.begin(&mut c).await;
    for (l, code) in [
        (
            "TXN_APPEND_STREAM topic=es key=a expected_version=1 seqNum=1 message=x".to_owned(),
            "missing_transactional_id",
        ),
        (
            format!("TXN_APPEND_STREAM {a} key=a expected_version=1 seqNum=1 message=x"),
            "missing_topic",
        ),
        (
            format!("TXN_APPEND_STREAM {a} topic=es expected_version=1 seqNum=1 message=x"),
            "missing_key",
        ),
        (
            format!("TXN_APPEND_STREAM {a} topic=es key=a seqNum=1 message=x"),
            "invalid_expected_version",
        ),
        (
            format!("TXN_APPEND_STREAM {a} topic=es key=a expected_version=0 seqNum=1 message=x"),
            "invalid_expected_version",
        ),
        (
            format!("TXN_APPEND_STREAM {a} topic=es key=a expected_version=1 message=x"),
            "invalid_seq_num",
        ),
        (
            format!("TXN_APPEND_STREAM {a} topic=es key=a expected_version=1 seqNum=1"),
            "missing_message",
        ),
        (
            format!(
                "TXN_APPEND_STREAM {a} topic=es key=a expected_version=1 seqNum=1 \
                 schema_version=x message=x"
            ),
            "invalid_schema_version",
        ),
        (
            line(&s, "plain", "a", 1, 1, "x"),
            "event_sourcing_not_enabled",
        ),
        (line(&s, "nope", "a", 1, 1, "x"), "topic_not_found"),
        (
            format!(
                "TXN_APPEND_STREAM transactional_id=tx producerId={} epoch=9 topic=es key=a \
                 expected_version=1 seqNum=1 message=x",
                s.pid
            ),
            "producer_fenced",
        ),
    ] {
        assert_eq!(c.error(&l).await.code, code, "{l}");
    }
    // None of them used up sequence 1.
    txn_append(&mut c, &s, "es", "a", 1, 1, "x").await;
}

#[tokio::test]
async fn a_timeout_releases_the_reservation() {
    let broker = TestBroker::start_with(&["--transaction-timeout-ms", "1500"]);
    let mut c = broker.client().await;
    es_topic(&mut c, "es").await;
    let s = Session::init(&mut c, "slow").await;
    s.begin(&mut c).await;
    txn_append(&mut c, &s, "es", "a", 1, 1, "too-late").await;
    assert_eq!(
        c.error(&plain_line("es", "a", 1, "x")).await.code,
        "stream_version_reserved"
    );
    eventually_async!(SAFETY, "the transaction timeout to abort", async {
        let state = s.status(&mut c).await["state"].clone();
        (state == "aborted").then_some(()).ok_or(state)
    });
    assert_eq!(
        c.error(&s.end_line("commit")).await.code,
        "transaction_aborted"
    );
    assert_eq!(version(&mut c, "es", "a").await, 0);
    c.ok(&plain_line("es", "a", 1, "in-time")).await;
    assert_eq!(events(&mut c, "es", "a").await, vec![(1, "in-time".into())]);
}

#[tokio::test]
async fn replay_topics_need_event_ids_and_prove_committed_events() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok(&format!(
        "CREATE topic=r partitions={ES_PARTITIONS} event_sourcing=true idempotent=true \
         aggregate_replay=true"
    ))
    .await;
    c.ok("APPEND_STREAM topic=r key=m version=1 event_id=m-1 producerId=p seqNum=1 message=one")
        .await;
    let s = Session::init(&mut c, "tx").await;
    s.begin(&mut c).await;
    let e = c.error(&line(&s, "r", "m", 2, 1, "two")).await;
    assert_eq!(e.code, "missing_event_id");
    let with_id = |seq: u64, version: u64, id: &str, msg: &str| {
        format!(
            "TXN_APPEND_STREAM {} topic=r key=m expected_version={version} seqNum={seq} \
             event_id={id} message={msg}",
            s.args()
        )
    };
    let e = c.error(&with_id(1, 2, "m-1", "two")).await;
    assert_eq!(e.code, "aggregate_identity_conflict");
    assert_eq!(e.fields["event_id"], "m-1");
    c.ok(&with_id(1, 2, "m-2", "two")).await;
    c.ok(&with_id(2, 3, "m-3", "three")).await;
    // Open events are past the proof's high-water mark.
    let proof = c.ok("AGGREGATE_REPLAY_PROOF topic=r match_id=m").await;
    assert!(
        proof.contains(r#""latest_retained_sequence":1,"#),
        "{proof}"
    );
    // A plain append may not reuse a pending event's id either (event ids
    // are unique per partition: another key of m's partition).
    let n = (0..)
        .map(|i| format!("k{i}"))
        .find(|k| part(k) == part("m"))
        .unwrap();
    let e = c
        .error(&format!(
            "APPEND_STREAM topic=r key={n} version=1 event_id=m-3 producerId=p seqNum=2 message=x"
        ))
        .await;
    assert_eq!(e.code, "aggregate_identity_conflict");
    assert_eq!(e.fields["event_id"], "m-3");
    s.end(&mut c, "commit").await;
    let proof = c
        .ok("AGGREGATE_REPLAY_PROOF topic=r match_id=m expected_last_sequence=3")
        .await;
    assert!(proof.contains(r#""event_count":3,"#), "{proof}");
    assert!(proof.contains(r#""last_event_id":"m-3","#), "{proof}");
    // The committed events carry their identity: an exact retry of event 2
    // answers its offset.
    let range = c
        .ok("AGGREGATE_EVENT_RANGE_READ topic=r match_id=m from_sequence=2 to_sequence=2")
        .await;
    let v: serde_json::Value =
        serde_json::from_str(range.strip_prefix("OK range=").unwrap()).unwrap();
    let offset = v["events"][0]["offset"].as_u64().unwrap();
    let f = kv(&c
        .ok("APPEND_STREAM topic=r key=m version=2 event_id=m-2 producerId=p seqNum=3 message=two")
        .await);
    assert_eq!(f["offset"], offset.to_string());
}

// ------------------------------------------------------------- crashes

/// Restarts on the same data directory without extra flags.
fn restart_plain(mut broker: TestBroker) -> TestBroker {
    broker.kill9();
    let dir = broker.dir.take().expect("dir");
    TestBroker::start_in(dir, Vec::new())
}

/// The events of `key` are exactly versions 1..=n with contiguous history.
async fn check_stream(c: &mut Client, key: &str, payloads: &[&str]) {
    let got = events(c, "es", key).await;
    let want: Vec<(u64, String)> = payloads
        .iter()
        .enumerate()
        .map(|(i, p)| (i as u64 + 1, p.to_string()))
        .collect();
    assert_eq!(got, want, "{key}");
    assert_eq!(version(c, "es", key).await, payloads.len() as u64, "{key}");
    if !payloads.is_empty() {
        assert_eq!(history(c, "es", key).await["completeness"], "complete");
    }
}

#[tokio::test]
async fn kill9_keeps_committed_events_and_drops_aborted_and_open_ones() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    es_topic(&mut c, "es").await;
    let done = Session::init(&mut c, "done").await;
    done.begin(&mut c).await;
    txn_append(&mut c, &done, "es", "a", 1, 1, "a-1").await;
    txn_append(&mut c, &done, "es", "a", 2, 2, "a-2").await;
    done.end(&mut c, "commit").await;
    let gone = Session::init(&mut c, "gone").await;
    gone.begin(&mut c).await;
    txn_append(&mut c, &gone, "es", "c", 1, 1, "c-1").await;
    gone.end(&mut c, "abort").await;
    let open = Session::init(&mut c, "open").await;
    open.begin(&mut c).await;
    txn_append(&mut c, &open, "es", "a", 3, 1, "a-3-open").await;
    txn_append(&mut c, &open, "es", "b", 1, 2, "b-1-open").await;
    // Pipelined appends in flight when the broker dies.
    for seq in 3..=6 {
        c.send_line(&line(&open, "es", "b", seq - 1, seq, "b-more"))
            .await;
    }
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(status(&mut c, "open").await["state"], "aborted");
    check_stream(&mut c, "a", &["a-1", "a-2"]).await;
    check_stream(&mut c, "b", &[]).await;
    check_stream(&mut c, "c", &[]).await;
    // Recovery released the reservations of the aborted transaction.
    c.ok(&plain_line("es", "a", 3, "a-3")).await;
    c.ok(&plain_line("es", "b", 1, "b-1")).await;
    check_stream(&mut c, "a", &["a-1", "a-2", "a-3"]).await;
    // And a second restart changes nothing.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    check_stream(&mut c, "a", &["a-1", "a-2", "a-3"]).await;
    check_stream(&mut c, "b", &["b-1"]).await;
}

#[tokio::test]
async fn a_commit_interrupted_at_each_crash_point_shows_all_events_or_none() {
    for (point, visible) in [
        ("txn_before_prepare", false),
        ("txn_after_prepare", true),
        ("txn_after_markers", true),
        ("txn_after_decision", true),
    ] {
        let mut broker = TestBroker::start_with(&["--crash-point", point]);
        {
            let mut c = broker.client().await;
            es_topic(&mut c, "es").await;
            c.ok(&plain_line("es", "a", 1, "a-1")).await;
            let s = Session::init(&mut c, "crash").await;
            s.begin(&mut c).await;
            txn_append(&mut c, &s, "es", "a", 2, 1, "a-2").await;
            txn_append(&mut c, &s, "es", "b", 1, 2, "b-1").await;
            txn_append(&mut c, &s, "es", "a", 3, 3, "a-3").await;
            c.send_line(&s.end_line("commit")).await;
            assert!(c.is_closed().await, "{point}: END_TXN was answered");
        }
        broker.wait_exit("the broker to abort at the crash point");
        let broker = restart_plain(broker);
        let mut c = broker.client().await;
        let state = status(&mut c, "crash").await["state"].clone();
        if visible {
            assert_eq!(state, "committed", "{point}");
            check_stream(&mut c, "a", &["a-1", "a-2", "a-3"]).await;
            check_stream(&mut c, "b", &["b-1"]).await;
            c.ok(&plain_line("es", "a", 4, "a-4")).await;
        } else {
            assert_eq!(state, "aborted", "{point}");
            check_stream(&mut c, "a", &["a-1"]).await;
            check_stream(&mut c, "b", &[]).await;
            c.ok(&plain_line("es", "a", 2, "a-2-plain")).await;
        }
    }
}
