//! Transactions against the real broker (docs/transactions.md): every
//! command's reply and error, fencing, idempotent retries, read isolation
//! and the last stable offset, consumer offsets in transactions, timeouts,
//! expiration and the DELETE/TRUNCATE guard.

mod common;
mod txn_common;

use common::*;
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{Batch, ErrorClass, Status};
use txn_common::*;

async fn topic(c: &mut Client, name: &str, partitions: u32) {
    c.ok(&format!("CREATE topic={name} partitions={partitions}"))
        .await;
}

#[tokio::test]
async fn every_command_answers_its_documented_reply() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "out", 2).await;
    topic(&mut c, "in", 1).await;
    let help = c.ok("HELP").await;
    for cmd in [
        "INIT_PRODUCER_ID",
        "BEGIN_TXN",
        "TXN_PUBLISH",
        "SEND_OFFSETS_TO_TXN",
        "END_TXN",
        "TXN_STATUS",
    ] {
        assert!(help.contains(cmd), "{help}");
    }
    let f = kv(&c.ok("FIND_COORDINATOR transactional_id=tx").await);
    assert_eq!(f["port"], broker.addr.port().to_string());

    let s = Session::init(&mut c, "tx").await;
    assert_eq!(s.pid, "txn-1");
    assert_eq!(s.epoch, 0);
    let st = s.status(&mut c).await;
    assert_eq!(st["state"], "empty");
    assert_eq!(st["mode"], "exactly_once");
    assert_eq!(st["producerId"], "txn-1");

    let b = s.begin(&mut c).await;
    assert_eq!(b["state"], "open");
    assert_eq!(b["producerId"], "txn-1");
    assert_eq!(b["epoch"], "0");
    assert_eq!(b["transactional_id"], "tx");
    // A retried BEGIN_TXN of the open transaction is answered again.
    assert_eq!(s.begin(&mut c).await["state"], "open");

    let reply = kv(&c.ok(&s.publish_line("out", 1, 1, "hello")).await);
    assert_eq!(reply["transactional_id"], "tx");
    assert_eq!(reply["topic"], "out");
    assert_eq!(reply["partition"], "1");
    assert_eq!(reply["offset"], "0");
    // partition omitted: the topic's partitioner picks one.
    let any = kv(&c
        .ok(&format!(
            "TXN_PUBLISH {} topic=out seqNum=1 key=k message=keyed",
            s.args()
        ))
        .await);
    assert_eq!(any["appended"], "true");

    let (member, generation, _) = join(&mut c, "in", "g", "m").await;
    let staged = kv(&c
        .ok(&format!(
            "SEND_OFFSETS_TO_TXN {} topic=in group=g member={member} generation={generation} offsets=P0:3",
            s.args()
        ))
        .await);
    assert_eq!(staged["staged_offsets"], "1");
    assert_eq!(staged["transactional_id"], "tx");

    let st = s.status(&mut c).await;
    assert_eq!(st["state"], "open");
    assert_eq!(st["messages"], "2");
    assert_eq!(st["offsets"], "1");

    let end = s.end(&mut c, "commit").await;
    assert_eq!(end["state"], "committed");
    assert_eq!(end["messages"], "2");
    assert_eq!(end["offsets"], "1");
    let st = s.status(&mut c).await;
    assert_eq!(st["state"], "committed");
    assert_eq!(
        st["participants"].parse::<u32>().unwrap(),
        st_partitions(&any)
    );
    assert_eq!(fetch_offset(&mut c, "in", 0, "g").await, Some(3));
    assert_eq!(committed(&mut c, "out", 1).await[0], "hello");
}

/// Participants after publishing to partition 1 and to `keyed`'s partition.
fn st_partitions(keyed: &std::collections::HashMap<String, String>) -> u32 {
    if keyed["partition"] == "1" {
        1
    } else {
        2
    }
}

#[tokio::test]
async fn malformed_requests_are_validation_errors() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "v").await;
    s.begin(&mut c).await;
    let a = s.args();
    let cases = [
        ("INIT_PRODUCER_ID", "missing_transactional_id"),
        (
            "BEGIN_TXN producerId=txn-1 epoch=0",
            "missing_transactional_id",
        ),
        (
            "BEGIN_TXN transactional_id=v epoch=0",
            "missing_producer_id",
        ),
        (
            "BEGIN_TXN transactional_id=v producerId=txn-1",
            "invalid_epoch",
        ),
        (
            "BEGIN_TXN transactional_id=v producerId=txn-1 epoch=x",
            "invalid_epoch",
        ),
        (
            &format!("TXN_PUBLISH {a} topic=t partition=0 seqNum=0 message=m"),
            "invalid_seq_num",
        ),
        (
            &format!("TXN_PUBLISH {a} topic=t partition=0 seqNum=x message=m"),
            "invalid_seq_num",
        ),
        (
            &format!("TXN_PUBLISH {a} topic=t partition=0 message=m"),
            "invalid_seq_num",
        ),
        (
            &format!("TXN_PUBLISH {a} topic=t partition=0 seqNum=1"),
            "missing_message",
        ),
        (
            &format!("END_TXN {a} result=maybe"),
            "invalid_transaction_result",
        ),
        (
            &format!("SEND_OFFSETS_TO_TXN {a} topic=t member=m generation=1 offsets=P0:1"),
            "missing_group",
        ),
        (
            &format!("SEND_OFFSETS_TO_TXN {a} topic=t group=g generation=1 offsets=P0:1"),
            "missing_member",
        ),
        (
            &format!("SEND_OFFSETS_TO_TXN {a} topic=t group=g member=m offsets=P0:1"),
            "missing_generation",
        ),
        (
            &format!("SEND_OFFSETS_TO_TXN {a} topic=t group=g member=m generation=1 offsets=0:1"),
            "invalid_txn_offsets",
        ),
        (
            &format!("SEND_OFFSETS_TO_TXN {a} topic=t group=g member=m generation=1"),
            "invalid_txn_offsets",
        ),
    ];
    for (line, code) in cases {
        let e = c.error(line).await;
        assert_eq!(e.code, code, "{line}: {}", e.render());
        assert_eq!(e.class, ErrorClass::Validation, "{line}");
        assert!(!e.retryable);
    }
    let e = c.error(&format!("END_TXN {a} result=maybe")).await;
    assert_eq!(e.fields["value"], "maybe");
    // Nothing above changed the transaction.
    assert_eq!(s.status(&mut c).await["messages"], "0");
}

#[tokio::test]
async fn a_negative_partition_is_routed_like_no_partition() {
    // TXN_PUBLISH partition=-1 means "not chosen", as on PUBLISH.
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "neg", 3).await;
    topic(&mut c, "neg_unkeyed", 3).await;
    let s = Session::init(&mut c, "neg").await;
    s.begin(&mut c).await;
    let a = s.args();
    // Sequence numbers count per partition.
    let mut seqs = [0u64; 3];
    for key in ["user-1", "user-2", "order-77", "a", "zz-top", "k9"] {
        let expected = partition_for_key(key.as_bytes(), 3);
        seqs[expected as usize] += 1;
        let seq = seqs[expected as usize];
        let r = kv(&c
            .ok(&format!(
                "TXN_PUBLISH {a} topic=neg partition=-1 seqNum={seq} key={key} message={key}"
            ))
            .await);
        assert_eq!(r["partition"], expected.to_string(), "key {key}");
    }
    // Without a key, the keyless round robin, shared with records that
    // name no partition: three in a row cover every partition (each the
    // first record there, so each seqNum=1).
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..3 {
        let partition = if i % 2 == 0 { " partition=-1" } else { "" };
        let r = kv(&c
            .ok(&format!(
                "TXN_PUBLISH {a} topic=neg_unkeyed{partition} seqNum=1 message=m{i}"
            ))
            .await);
        seen.insert(r["partition"].clone());
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    // Any other value that is not a partition number is still refused.
    for (value, code) in [
        ("x", "invalid_partition"),
        ("1.5", "invalid_partition"),
        ("-1x", "invalid_partition"),
        ("3", "partition_not_found"),
    ] {
        let e = c
            .error(&format!(
                "TXN_PUBLISH {a} topic=neg partition={value} seqNum=9 message=bad"
            ))
            .await;
        assert_eq!(e.code, code, "partition={value}");
    }
    assert_eq!(s.status(&mut c).await["messages"], "9");
    assert_eq!(s.end(&mut c, "commit").await["state"], "committed");
}

#[tokio::test]
async fn unknown_ids_are_not_found() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    for line in [
        "TXN_STATUS transactional_id=nope",
        "BEGIN_TXN transactional_id=nope producerId=txn-1 epoch=0",
        "END_TXN transactional_id=nope producerId=txn-1 epoch=0 result=abort",
        "TXN_PUBLISH transactional_id=nope producerId=txn-1 epoch=0 topic=t seqNum=1 message=m",
    ] {
        let e = c.error(line).await;
        assert_eq!(e.code, "transaction_not_found", "{line}");
        assert_eq!(e.class, ErrorClass::NotFound);
        assert_eq!(e.fields["transactional_id"], "nope");
    }
}

#[tokio::test]
async fn reinitialization_fences_the_old_epoch_and_aborts_its_transaction() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let old = Session::init(&mut c, "f").await;
    old.begin(&mut c).await;
    old.publish(&mut c, "t", 0, 1, "stale").await;
    let new = Session::init(&mut c, "f").await;
    assert_eq!(new.pid, old.pid, "the producer id is stable");
    assert_eq!(new.epoch, old.epoch + 1);
    let st = new.status(&mut c).await;
    assert_eq!(st["state"], "empty");
    assert_eq!(st["epoch"], "1");

    for line in [
        old.publish_line("t", 0, 2, "late"),
        old.end_line("commit"),
        old.end_line("abort"),
        old.begin_line(),
    ] {
        let e = c.error(&line).await;
        assert_eq!(e.code, "producer_fenced", "{line}");
        assert_eq!(e.class, ErrorClass::Fencing);
        assert_eq!(e.fields["current"], "1");
        assert_eq!(e.fields["got"], "0");
        assert_eq!(e.fields["transactional_id"], "f");
    }
    let e = c
        .error("BEGIN_TXN transactional_id=f producerId=txn-99 epoch=1")
        .await;
    assert_eq!(e.code, "producer_fenced");

    // The re-init aborted the open transaction with a marker.
    assert!(committed(&mut c, "t", 0).await.is_empty());
    assert_eq!(uncommitted(&mut c, "t", 0).await, vec!["stale", MARKER]);
    let (latest, hwm) = latest_and_hwm(&mut c, "t", 0).await;
    assert_eq!((latest, hwm), (2, 2));

    // The new epoch starts its sequences at 1 again.
    new.begin(&mut c).await;
    new.publish(&mut c, "t", 0, 1, "fresh").await;
    new.end(&mut c, "commit").await;
    assert_eq!(committed(&mut c, "t", 0).await, vec!["fresh"]);
}

#[tokio::test]
async fn a_partition_that_saw_a_newer_epoch_rejects_an_older_one() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "e").await;
    s.begin(&mut c).await;
    // An idempotent producer using the same id with a newer epoch.
    c.ok("PUBLISH topic=t partition=0 acks=all isIdempotent=true producerId=txn-1 epoch=5 seqNum=1 message=x")
        .await;
    let e = c.error(&s.publish_line("t", 0, 1, "m")).await;
    assert_eq!(e.code, "stale_producer_epoch");
    assert_eq!(e.class, ErrorClass::Fencing);
    assert_eq!(e.fields["current"], "5");
}

#[tokio::test]
async fn one_transaction_per_epoch() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "o").await;
    let e = c.error(&s.end_line("commit")).await;
    assert_eq!(e.code, "transaction_not_open");
    assert_eq!(e.fields["state"], "empty");
    let e = c.error(&s.publish_line("t", 0, 1, "m")).await;
    assert_eq!(e.code, "transaction_not_open");
    s.begin(&mut c).await;
    s.end(&mut c, "commit").await;
    let e = c.error(&s.begin_line()).await;
    assert_eq!(e.code, "producer_reinitialization_required");
    assert_eq!(e.class, ErrorClass::Conflict);
    assert_eq!(e.fields["epoch"], "0");
    let e = c.error(&s.publish_line("t", 0, 1, "m")).await;
    assert_eq!(e.code, "transaction_not_open");
    assert_eq!(e.fields["state"], "committed");
    let next = Session::init(&mut c, "o").await;
    next.begin(&mut c).await;
}

#[tokio::test]
async fn a_retried_publish_is_answered_with_the_original_offset() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    c.ok("PUBLISH topic=t partition=0 acks=1 producerId=plain message=before")
        .await;
    let s = Session::init(&mut c, "i").await;
    s.begin(&mut c).await;
    let first = s.publish(&mut c, "t", 0, 1, "one").await;
    let second = s.publish(&mut c, "t", 0, 2, "two").await;
    assert_eq!((first, second), (1, 2));
    assert_eq!(s.publish(&mut c, "t", 0, 1, "one").await, first);
    assert_eq!(s.publish(&mut c, "t", 0, 2, "two").await, second);
    let e = c.error(&s.publish_line("t", 0, 9, "gap")).await;
    assert_eq!(e.code, "invalid_producer_sequence");
    assert_eq!(s.status(&mut c).await["messages"], "2");
    assert_eq!(
        uncommitted(&mut c, "t", 0).await,
        vec!["before", "one", "two"]
    );
    s.end(&mut c, "commit").await;
    assert_eq!(
        committed(&mut c, "t", 0).await,
        vec!["before", "one", "two"]
    );
}

/// Records pipelined on one connection (sent before any reply is read),
/// as the engine sends a transaction's batch: each is answered in order
/// with the outcome it would have alone, across partitions and a request
/// of another kind in between, and a sequence gap refuses only the
/// records it concerns.
#[tokio::test]
async fn pipelined_publishes_are_answered_in_order_with_their_own_outcomes() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "p", 2).await;
    let s = Session::init(&mut c, "pipe").await;
    s.begin(&mut c).await;
    let mut sent = Vec::new();
    for seq in 1..=40u64 {
        for partition in 0..2 {
            let line = s.publish_line("p", partition, seq, &format!("r{partition}-{seq}"));
            sent.push((c.send_line(&line).await, Some((partition, seq - 1))));
        }
    }
    // A resend, a gap and a request of another kind, still pipelined.
    sent.push((
        c.send_line(&s.publish_line("p", 0, 3, "r0-3")).await,
        Some((0, 2)),
    ));
    sent.push((c.send_line(&s.publish_line("p", 1, 50, "gap")).await, None));
    let status = c
        .send_line(&format!("TXN_STATUS transactional_id={}", s.id))
        .await;
    sent.push((
        c.send_line(&s.publish_line("p", 1, 41, "r1-41")).await,
        Some((1, 40)),
    ));
    for (id, expected) in &sent[..sent.len() - 1] {
        let frame = c.recv().await.expect("reply");
        assert_eq!(frame.request_id, *id, "replies keep the request order");
        let text = String::from_utf8_lossy(&frame.payload).into_owned();
        match expected {
            Some((partition, offset)) => {
                assert_eq!(frame.status, Status::Ok, "{text}");
                let f = kv(&text);
                assert_eq!(f["partition"], partition.to_string());
                assert_eq!(f["offset"], offset.to_string());
            }
            None => {
                let e = cursus_wire::ErrorPayload::decode(frame.payload).unwrap();
                assert_eq!(e.code, "invalid_producer_sequence");
            }
        }
    }
    let frame = c.recv().await.expect("status reply");
    assert_eq!(frame.request_id, status);
    assert_eq!(
        kv(&String::from_utf8_lossy(&frame.payload))["messages"],
        "80"
    );
    let (id, _) = sent[sent.len() - 1];
    let frame = c.recv().await.expect("reply");
    assert_eq!((frame.request_id, frame.status), (id, Status::Ok));
    s.end(&mut c, "commit").await;
    assert_eq!(committed(&mut c, "p", 0).await.len(), 40);
    assert_eq!(committed(&mut c, "p", 1).await.len(), 41);
}

#[tokio::test]
async fn end_txn_retries_are_idempotent_and_outcomes_cannot_flip() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "c").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "m").await;
    let first = s.end(&mut c, "commit").await;
    assert_eq!(s.end(&mut c, "commit").await, first);
    let e = c.error(&s.end_line("abort")).await;
    assert_eq!(e.code, "transaction_already_committed");
    assert_eq!(e.class, ErrorClass::Conflict);
    // Exactly one commit marker.
    assert_eq!(uncommitted(&mut c, "t", 0).await, vec!["m", MARKER]);

    let a = Session::init(&mut c, "a").await;
    a.begin(&mut c).await;
    a.publish(&mut c, "t", 0, 1, "gone").await;
    let aborted = a.end(&mut c, "abort").await;
    assert_eq!(aborted["state"], "aborted");
    assert_eq!(a.end(&mut c, "abort").await, aborted);
    let e = c.error(&a.end_line("commit")).await;
    assert_eq!(e.code, "transaction_aborted");
    assert_eq!(e.class, ErrorClass::Conflict);
    assert_eq!(committed(&mut c, "t", 0).await, vec!["m"]);
    assert_eq!(
        uncommitted(&mut c, "t", 0).await,
        vec!["m", MARKER, "gone", MARKER]
    );
}

#[tokio::test]
async fn read_committed_hides_open_and_aborted_records_and_markers() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    c.ok("PUBLISH topic=t partition=0 acks=1 producerId=p message=p0")
        .await;
    let s = Session::init(&mut c, "r").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "a1").await;
    s.publish(&mut c, "t", 0, 2, "a2").await;
    assert_eq!(committed(&mut c, "t", 0).await, vec!["p0"]);
    assert_eq!(uncommitted(&mut c, "t", 0).await, vec!["p0", "a1", "a2"]);
    // The default isolation is read_committed.
    let b = c
        .consume("CONSUME topic=t partition=0 offset=0 member=x")
        .await;
    assert_eq!(b.records.len(), 1);
    s.end(&mut c, "commit").await;
    assert_eq!(committed(&mut c, "t", 0).await, vec!["p0", "a1", "a2"]);
    assert_eq!(
        uncommitted(&mut c, "t", 0).await,
        vec!["p0", "a1", "a2", MARKER]
    );

    let s = Session::init(&mut c, "r").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "x1").await;
    s.end(&mut c, "abort").await;
    c.ok("PUBLISH topic=t partition=0 acks=1 producerId=p message=p1")
        .await;
    let seen = read(&mut c, "t", 0, 0, "read_committed").await;
    let payloads: Vec<&str> = seen.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(payloads, vec!["p0", "a1", "a2", "p1"]);
    assert_eq!(seen.last().unwrap().0, 6);
    // A read starting inside the left-out range skips to the next visible record.
    let from_abort = read(&mut c, "t", 0, 4, "read_committed").await;
    assert_eq!(from_abort, vec![(6, "p1".to_owned())]);
    // A range with nothing visible answers an empty batch.
    let b = c
        .consume("CONSUME topic=t partition=0 offset=7 member=x isolation=read_committed")
        .await;
    assert!(b.records.is_empty());
    let marker = read(&mut c, "t", 0, 3, "read_uncommitted").await;
    assert_eq!(marker[0].1, MARKER);
}

#[tokio::test]
async fn control_markers_carry_the_documented_fields() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "m").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "v").await;
    s.end(&mut c, "commit").await;
    let b = c
        .consume("CONSUME topic=t partition=0 offset=0 member=x isolation=read_uncommitted")
        .await;
    let data = &b.records[0];
    assert_eq!(data.transactional_id, "m");
    assert_eq!(data.producer_id, "txn-1");
    assert_eq!(data.seq_num, 1);
    assert_eq!(data.transaction_state.to_string(), "open");
    let m = &b.records[1];
    assert_eq!(&m.payload[..], MARKER.as_bytes());
    assert_eq!(m.transaction_marker.to_string(), "commit");
    assert_eq!(m.transaction_state.to_string(), "committed");
    assert_eq!(m.control_batch_type.to_string(), "transaction");
    assert_eq!(m.control_batch_version, 2);
    assert_eq!(m.control_batch_coordinator_epoch, 1);
    assert_eq!(m.control_batch_key.as_deref(), Some(&[0u8, 0, 0, 1][..]));
    assert_eq!(
        m.control_batch_value.as_deref(),
        Some(&[0u8, 0, 0, 0, 0, 1][..])
    );
    assert_eq!((m.producer_id.as_str(), m.epoch), ("txn-1", 0));
}

#[tokio::test]
async fn an_open_transaction_holds_back_later_committed_ones() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let a = Session::init(&mut c, "A").await;
    let b = Session::init(&mut c, "B").await;
    a.begin(&mut c).await;
    b.begin(&mut c).await;
    a.publish(&mut c, "t", 0, 1, "a").await;
    b.publish(&mut c, "t", 0, 1, "b").await;
    b.end(&mut c, "commit").await;
    // B is committed but after A's first record: not visible yet.
    assert!(committed(&mut c, "t", 0).await.is_empty());
    assert_eq!(latest_and_hwm(&mut c, "t", 0).await, (0, 3));
    a.end(&mut c, "commit").await;
    assert_eq!(committed(&mut c, "t", 0).await, vec!["a", "b"]);
    assert_eq!(latest_and_hwm(&mut c, "t", 0).await, (4, 4));
}

#[tokio::test]
async fn aborting_releases_the_stable_offset() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let a = Session::init(&mut c, "A").await;
    a.begin(&mut c).await;
    a.publish(&mut c, "t", 0, 1, "a").await;
    c.ok("PUBLISH topic=t partition=0 acks=1 producerId=p message=plain")
        .await;
    assert!(committed(&mut c, "t", 0).await.is_empty());
    a.end(&mut c, "abort").await;
    assert_eq!(committed(&mut c, "t", 0).await, vec!["plain"]);
}

#[tokio::test]
async fn a_long_poll_wakes_when_the_transaction_commits() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    let mut reader = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "w").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "late").await;
    let id = reader
        .send_line("CONSUME topic=t partition=0 offset=0 member=x wait_ms=30000")
        .await;
    s.end(&mut c, "commit").await;
    let frame = reader.recv().await.expect("reply");
    assert_eq!(frame.request_id, id);
    assert_eq!(frame.status, Status::Ok);
    let batch = Batch::decode(frame.payload).unwrap();
    let payloads: Vec<&[u8]> = batch.records.iter().map(|r| &r.payload[..]).collect();
    assert_eq!(payloads, vec![&b"late"[..]]);
}

#[tokio::test]
async fn a_read_committed_stream_pushes_committed_records_only() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    let mut streamer = broker.client().await;
    topic(&mut c, "t", 1).await;
    let aborted = Session::init(&mut c, "x").await;
    aborted.begin(&mut c).await;
    aborted.publish(&mut c, "t", 0, 1, "never").await;
    aborted.end(&mut c, "abort").await;
    streamer
        .send_line("STREAM topic=t partition=0 member=s offset=0")
        .await;
    let s = Session::init(&mut c, "y").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "one").await;
    s.publish(&mut c, "t", 0, 2, "two").await;
    s.end(&mut c, "commit").await;
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let frame = streamer.recv().await.expect("stream frame");
        assert_eq!(frame.status, Status::Ok);
        if frame.payload.is_empty() {
            continue; // keepalive
        }
        let batch = Batch::decode(frame.payload).unwrap();
        seen.extend(
            batch
                .records
                .iter()
                .map(|r| String::from_utf8_lossy(&r.payload).into_owned()),
        );
    }
    assert_eq!(seen, vec!["one", "two"]);
}

#[tokio::test]
async fn consumer_offsets_join_the_transaction_under_the_group_fence() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "in", 2).await;
    topic(&mut c, "out", 1).await;
    let (m1, _, _) = join(&mut c, "in", "g", "c1").await;
    let (m2, generation, mine2) = join(&mut c, "in", "g", "c2").await;
    let (_, g1, mine1) = join(&mut c, "in", "g", &m1).await;
    assert_eq!(g1, generation);
    let p1 = *mine1.iter().next().unwrap();
    let p2 = *mine2.iter().next().unwrap();
    c.ok(&format!(
        "COMMIT_OFFSET topic=in partition={p1} group=g member={m1} generation={generation} offset=10"
    ))
    .await;

    let s = Session::init(&mut c, "eos").await;
    s.begin(&mut c).await;
    let send = |member: &str, generation: u64, offsets: &str| {
        format!(
            "SEND_OFFSETS_TO_TXN {} topic=in group=g member={member} generation={generation} offsets={offsets}",
            s.args()
        )
    };
    let e = c
        .error(&send(&m1, generation + 7, &format!("P{p1}:11")))
        .await;
    assert_eq!(e.code, "GEN_MISMATCH");
    assert_eq!(e.class, ErrorClass::Fencing);
    let e = c.error(&send(&m1, generation, &format!("P{p2}:11"))).await;
    assert_eq!(e.code, "NOT_OWNER");
    let e = c.error(&send(&m1, generation, &format!("P{p1}:5"))).await;
    assert_eq!(e.code, "offset_regression");
    assert_eq!(e.class, ErrorClass::Conflict);
    let e = c
        .error(&send("ghost", generation, &format!("P{p1}:11")))
        .await;
    assert_eq!(e.code, "member_not_found");
    let e = c
        .error(&format!(
            "SEND_OFFSETS_TO_TXN {} topic=in group=nogroup member={m1} generation=1 offsets=P0:1",
            s.args()
        ))
        .await;
    assert_eq!(e.code, "group_not_found");

    let staged = kv(&c.ok(&send(&m1, generation, &format!("P{p1}:12"))).await);
    assert_eq!(staged["staged_offsets"], "1");
    // Repeating a partition may keep or advance it, never lower it.
    let e = c.error(&send(&m1, generation, &format!("P{p1}:11"))).await;
    assert_eq!(e.code, "offset_regression");
    c.ok(&send(&m1, generation, &format!("P{p1}:15"))).await;
    // Another member's session cannot join this transaction.
    let e = c.error(&send(&m2, generation, &format!("P{p2}:1"))).await;
    assert_eq!(e.code, "invalid_txn_offsets");

    s.publish(&mut c, "out", 0, 1, "result").await;
    assert_eq!(fetch_offset(&mut c, "in", p1, "g").await, Some(10));
    let end = s.end(&mut c, "commit").await;
    assert_eq!(end["offsets"], "1");
    assert_eq!(fetch_offset(&mut c, "in", p1, "g").await, Some(15));
    assert_eq!(committed(&mut c, "out", 0).await, vec!["result"]);
}

#[tokio::test]
async fn a_commit_that_fails_revalidation_aborts() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "in", 2).await;
    topic(&mut c, "out", 1).await;
    let (m1, generation, mine) = join(&mut c, "in", "g", "c1").await;
    let p = *mine.iter().next().unwrap();
    let s = Session::init(&mut c, "rv").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "out", 0, 1, "result").await;
    c.ok(&format!(
        "SEND_OFFSETS_TO_TXN {} topic=in group=g member={m1} generation={generation} offsets=P{p}:4",
        s.args()
    ))
    .await;
    // A second member joins: the group rebalances to a new generation.
    join(&mut c, "in", "g", "c2").await;
    let e = c.error(&s.end_line("commit")).await;
    assert_eq!(e.code, "GEN_MISMATCH");
    let st = s.status(&mut c).await;
    assert_eq!(st["state"], "aborted");
    let e = c.error(&s.end_line("commit")).await;
    assert_eq!(e.code, "transaction_aborted");
    assert!(committed(&mut c, "out", 0).await.is_empty());
    assert_eq!(uncommitted(&mut c, "out", 0).await, vec!["result", MARKER]);
    assert_eq!(fetch_offset(&mut c, "in", p, "g").await, None);
}

#[tokio::test]
async fn an_open_transaction_past_its_timeout_is_aborted() {
    let broker = TestBroker::start_with(&["--transaction-timeout-ms", "1500"]);
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "slow").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "too-late").await;
    eventually_async!(SAFETY, "the transaction timeout to abort", async {
        let state = s.status(&mut c).await["state"].clone();
        (state == "aborted").then_some(()).ok_or(state)
    });
    let e = c.error(&s.end_line("commit")).await;
    assert_eq!(e.code, "transaction_aborted");
    assert!(committed(&mut c, "t", 0).await.is_empty());
    assert_eq!(uncommitted(&mut c, "t", 0).await, vec!["too-late", MARKER]);
    assert_eq!(latest_and_hwm(&mut c, "t", 0).await, (2, 2));
}

#[tokio::test]
async fn completed_transactions_expire_to_a_tombstone() {
    let broker = TestBroker::start_with(&["--transactional-id-expiration-ms", "100"]);
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "old").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "kept").await;
    s.end(&mut c, "commit").await;
    eventually_async!(SAFETY, "the completed transaction to expire", async {
        let frame = c.request("TXN_STATUS transactional_id=old").await;
        if frame.status != Status::Error {
            return Err(String::from_utf8_lossy(&frame.payload).into_owned());
        }
        let e = cursus_wire::ErrorPayload::decode(frame.payload).unwrap();
        assert_eq!(e.code, "transaction_not_found");
        Ok(())
    });
    // The tombstone keeps the producer id and epoch.
    let again = Session::init(&mut c, "old").await;
    assert_eq!(again.pid, s.pid);
    assert_eq!(again.epoch, s.epoch + 1);
    assert_eq!(committed(&mut c, "t", 0).await, vec!["kept"]);
}

#[tokio::test]
async fn delete_and_truncate_wait_for_open_transactions() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    topic(&mut c, "t", 1).await;
    let s = Session::init(&mut c, "d").await;
    s.begin(&mut c).await;
    s.publish(&mut c, "t", 0, 1, "m").await;
    let e = c.error("DELETE topic=t").await;
    assert_eq!(e.code, "topic_delete_blocked");
    assert_eq!(e.class, ErrorClass::Conflict);
    assert_eq!(e.fields["topic"], "t");
    assert_eq!(e.fields["transactional_id"], "d");
    let e = c.error("TRUNCATE topic=t expected_revision=1").await;
    assert_eq!(e.code, "topic_truncate_blocked");
    assert_eq!(e.fields["transactional_id"], "d");
    s.end(&mut c, "commit").await;
    c.ok("TRUNCATE topic=t expected_revision=1").await;
    assert_eq!(s.status(&mut c).await["participants"], "0");
    let again = Session::init(&mut c, "d").await;
    again.begin(&mut c).await;
    again.publish(&mut c, "t", 0, 1, "n").await;
    again.end(&mut c, "abort").await;
    let f = kv(&c.ok("DELETE topic=t").await);
    assert_eq!(f["deleted"], "true");
    assert_eq!(again.status(&mut c).await["participants"], "0");
}

#[tokio::test]
async fn internal_and_missing_topics_are_refused() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    let s = Session::init(&mut c, "n").await;
    s.begin(&mut c).await;
    let e = c.error(&s.publish_line("nope", 0, 1, "m")).await;
    assert_eq!(e.code, "topic_not_found");
    let e = c
        .error(&s.publish_line("__consumer_offsets", 0, 1, "m"))
        .await;
    assert_eq!(e.code, "internal_txn_publish_forbidden");
    topic(&mut c, "t", 1).await;
    let e = c.error(&s.publish_line("t", 3, 1, "m")).await;
    assert_eq!(e.code, "partition_not_found");
    assert_eq!(s.status(&mut c).await["participants"], "0");
}
