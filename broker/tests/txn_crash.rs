//! Transactions across crashes: the broker aborts itself at each commit
//! crash point (`--crash-point`), is restarted on the same data directory,
//! and the transaction must be wholly visible (records on both partitions,
//! the consumer offset, TXN_STATUS committed) or wholly invisible. Also:
//! open transactions are aborted by a restart, a torn journal tail is
//! recovered and mid-file corruption keeps the broker not ready.

mod common;
mod txn_common;

use std::time::Duration;

use common::*;
use txn_common::*;

/// Restarts on the same data directory without extra flags.
fn restart_plain(mut broker: TestBroker) -> TestBroker {
    broker.kill9();
    let dir = broker.dir.take().expect("dir");
    TestBroker::start_in(dir, Vec::new())
}

/// What is visible of the crash transaction after the restart.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    state: String,
    p0: Vec<String>,
    p1: Vec<String>,
    offset: Option<u64>,
}

async fn crash_at(point: &str) -> Outcome {
    let mut broker = TestBroker::start_with(&["--crash-point", point]);
    {
        let mut c = broker.client().await;
        c.ok("CREATE topic=in partitions=1").await;
        c.ok("CREATE topic=out partitions=2").await;
        let (member, generation, _) = join(&mut c, "in", "g", "worker").await;
        let s = Session::init(&mut c, "crash").await;
        s.begin(&mut c).await;
        s.publish(&mut c, "out", 0, 1, "zero-a").await;
        s.publish(&mut c, "out", 1, 1, "one-a").await;
        s.publish(&mut c, "out", 0, 2, "zero-b").await;
        c.ok(&format!(
            "SEND_OFFSETS_TO_TXN {} topic=in group=g member={member} generation={generation} offsets=P0:5",
            s.args()
        ))
        .await;
        // The broker aborts during the commit: no reply, the connection drops.
        c.send_line(&s.end_line("commit")).await;
        assert!(c.is_closed().await, "{point}: END_TXN was answered");
    }
    broker.wait_exit("the broker to abort at the crash point");
    let broker = restart_plain(broker);
    let mut c = broker.client().await;
    let state = status(&mut c, "crash").await["state"].clone();
    let outcome = Outcome {
        state,
        p0: committed(&mut c, "out", 0).await,
        p1: committed(&mut c, "out", 1).await,
        offset: fetch_offset(&mut c, "in", 0, "g").await,
    };
    // Exactly one marker per partition whatever happened.
    for p in 0..2 {
        let markers = uncommitted(&mut c, "out", p)
            .await
            .into_iter()
            .filter(|m| m == MARKER)
            .count();
        assert_eq!(markers, 1, "{point}: partition {p}");
    }
    outcome
}

fn committed_outcome() -> Outcome {
    Outcome {
        state: "committed".into(),
        p0: vec!["zero-a".into(), "zero-b".into()],
        p1: vec!["one-a".into()],
        offset: Some(5),
    }
}

#[tokio::test]
async fn a_crash_before_prepare_aborts() {
    let outcome = crash_at("txn_before_prepare").await;
    assert_eq!(
        outcome,
        Outcome {
            state: "aborted".into(),
            p0: vec![],
            p1: vec![],
            offset: None,
        }
    );
}

#[tokio::test]
async fn a_crash_after_prepare_commits() {
    assert_eq!(crash_at("txn_after_prepare").await, committed_outcome());
}

#[tokio::test]
async fn a_crash_after_the_markers_commits() {
    assert_eq!(crash_at("txn_after_markers").await, committed_outcome());
}

#[tokio::test]
async fn a_crash_after_the_decision_commits() {
    assert_eq!(crash_at("txn_after_decision").await, committed_outcome());
}

#[tokio::test]
async fn a_restart_aborts_open_transactions() {
    let broker = TestBroker::start();
    let s = {
        let mut c = broker.client().await;
        c.ok("CREATE topic=t partitions=1").await;
        let s = Session::init(&mut c, "open").await;
        s.begin(&mut c).await;
        s.publish(&mut c, "t", 0, 1, "unfinished").await;
        s
    };
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(s.status(&mut c).await["state"], "aborted");
    let e = c.error(&s.end_line("commit")).await;
    assert_eq!(e.code, "transaction_aborted");
    // The stable offset is released: later records are visible.
    c.ok("PUBLISH topic=t partition=0 acks=1 producerId=p message=after")
        .await;
    assert_eq!(committed(&mut c, "t", 0).await, vec!["after"]);
    assert_eq!(
        uncommitted(&mut c, "t", 0).await,
        vec!["unfinished", MARKER, "after"]
    );
    // The same producer continues with a new epoch.
    let next = Session::init(&mut c, "open").await;
    assert_eq!(next.epoch, s.epoch + 1);
    next.begin(&mut c).await;
    next.publish(&mut c, "t", 0, 1, "again").await;
    next.end(&mut c, "commit").await;
    assert_eq!(committed(&mut c, "t", 0).await, vec!["after", "again"]);
}

#[tokio::test]
async fn committed_state_survives_a_restart() {
    let broker = TestBroker::start();
    {
        let mut c = broker.client().await;
        c.ok("CREATE topic=t partitions=1").await;
        let s = Session::init(&mut c, "k").await;
        s.begin(&mut c).await;
        s.publish(&mut c, "t", 0, 1, "kept").await;
        s.end(&mut c, "commit").await;
    }
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    let st = status(&mut c, "k").await;
    assert_eq!(st["state"], "committed");
    assert_eq!(st["messages"], "1");
    assert_eq!(committed(&mut c, "t", 0).await, vec!["kept"]);
    // The producer-id counter survived: a new id gets the next number.
    assert_eq!(Session::init(&mut c, "other").await.pid, "txn-2");
    let again = Session::init(&mut c, "k").await;
    assert_eq!((again.pid.as_str(), again.epoch), ("txn-1", 1));
}

#[tokio::test]
async fn a_torn_journal_tail_is_recovered_and_the_commit_finished() {
    let mut broker = TestBroker::start();
    {
        let mut c = broker.client().await;
        c.ok("CREATE topic=t partitions=1").await;
        let s = Session::init(&mut c, "torn").await;
        s.begin(&mut c).await;
        s.publish(&mut c, "t", 0, 1, "x").await;
        s.end(&mut c, "commit").await;
    }
    broker.kill9();
    // Tear the last record (the `committed` decision): what is left ends in
    // prepare_commit, which recovery finishes without a second marker.
    let path = broker.data_dir().join("__transaction_state.journal");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    let broker = restart_plain(broker);
    broker.wait_ready();
    let mut c = broker.client().await;
    assert_eq!(status(&mut c, "torn").await["state"], "committed");
    assert_eq!(committed(&mut c, "t", 0).await, vec!["x"]);
    assert_eq!(uncommitted(&mut c, "t", 0).await, vec!["x", MARKER]);
}

#[tokio::test]
async fn mid_file_journal_corruption_keeps_the_broker_not_ready() {
    let mut broker = TestBroker::start();
    {
        let mut c = broker.client().await;
        let a = Session::init(&mut c, "a").await;
        a.begin(&mut c).await;
        Session::init(&mut c, "b").await;
    }
    assert!(broker.terminate());
    let path = broker.data_dir().join("__transaction_state.journal");
    let mut bytes = std::fs::read(&path).unwrap();
    // Damage the first record's body; valid records follow it.
    bytes[12] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let broker = restart_plain(broker);
    for _ in 0..10 {
        assert_eq!(broker.http_get("/live"), 200);
        assert_eq!(broker.http_get("/ready"), 503);
        std::thread::sleep(Duration::from_millis(50));
    }
}
