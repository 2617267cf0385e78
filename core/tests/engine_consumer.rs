//! The group consumer against a real broker.

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::consumer::{Consumer, ConsumerRecord, RebalanceEvent, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::TopicPartition;
use cursus::{ClientConfig, ConsumerConfig, ErrorKind, ProducerConfig};
use cursus_testkit::{eventually_async, TestBroker};
use std::time::Duration;

mod common;
use common::create_topic as create;

async fn produce(broker: &TestBroker, topic: &str, range: std::ops::Range<u32>) {
    let producer = Producer::connect(ProducerConfig::new(&broker.addr))
        .await
        .unwrap();
    let mut pending = Vec::new();
    for i in range {
        pending.push(
            producer
                .send(ProducerRecord::new(topic, format!("m{i}")).key(format!("k{i}")))
                .await
                .unwrap(),
        );
    }
    producer.flush(None).await.unwrap();
    for p in pending {
        p.await.unwrap();
    }
    producer.close(Duration::from_secs(5)).await.unwrap();
}

async fn consumer(broker: &TestBroker, group: &str, pairs: &[(&str, &str)]) -> Consumer {
    let mut c = ConsumerConfig::new(&broker.addr, group);
    c.set("heartbeat_interval_ms", "100").unwrap();
    c.set("fetch_max_wait_ms", "100").unwrap();
    for (k, v) in pairs {
        c.set(k, v).unwrap();
    }
    Consumer::connect(c).await.unwrap()
}

/// Polls until `want` records arrived (bounded by a generous deadline).
async fn poll_n(c: &Consumer, want: usize) -> Vec<ConsumerRecord> {
    let mut got = Vec::new();
    eventually_async!(Duration::from_secs(30), format!("{want} records"), async {
        got.extend(c.poll(Duration::from_millis(200)).await.unwrap());
        (got.len() >= want).then_some(()).ok_or(got.len())
    });
    got
}

#[tokio::test]
async fn consume_commit_and_resume() {
    let broker = TestBroker::start();
    create(&broker, "orders", 3).await;
    produce(&broker, "orders", 0..100).await;
    let c = consumer(&broker, "g1", &[]).await;
    c.subscribe(Subscription::Topics(vec!["orders".into()]))
        .await
        .unwrap();
    let got = poll_n(&c, 100).await;
    let mut payloads: Vec<String> = got
        .iter()
        .map(|r| String::from_utf8(r.payload.to_vec()).unwrap())
        .collect();
    payloads.sort();
    let mut want: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
    want.sort();
    assert_eq!(payloads, want);
    // Per partition, offsets arrive in order.
    for p in 0..3 {
        let offsets: Vec<u64> = got
            .iter()
            .filter(|r| r.partition == p)
            .map(|r| r.offset)
            .collect();
        assert!(offsets.windows(2).all(|w| w[1] == w[0] + 1), "{offsets:?}");
    }
    c.commit_sync().await.unwrap();
    for p in 0..3 {
        let n = got.iter().filter(|r| r.partition == p).count() as u64;
        assert_eq!(
            c.committed(&TopicPartition::new("orders", p))
                .await
                .unwrap(),
            Some(n).filter(|n| *n > 0)
        );
    }
    c.close().await.unwrap();
    // The same group resumes after the commits: only new records come.
    produce(&broker, "orders", 100..110).await;
    let c = consumer(&broker, "g1", &[]).await;
    c.subscribe(Subscription::Topics(vec!["orders".into()]))
        .await
        .unwrap();
    let got = poll_n(&c, 10).await;
    assert!(got.iter().all(|r| r.payload.starts_with(b"m10")), "{got:?}");
    assert!(c.poll(Duration::from_millis(300)).await.unwrap().is_empty());
    c.close().await.unwrap();
}

#[tokio::test]
async fn two_members_split_the_partitions() {
    let broker = TestBroker::start();
    create(&broker, "shared", 4).await;
    let a = consumer(&broker, "g2", &[]).await;
    a.subscribe(Subscription::Topics(vec!["shared".into()]))
        .await
        .unwrap();
    a.poll(Duration::from_millis(10)).await.unwrap();
    assert_eq!(a.assignment().await.unwrap().len(), 4);
    let b = consumer(&broker, "g2", &[]).await;
    b.subscribe(Subscription::Topics(vec!["shared".into()]))
        .await
        .unwrap();
    b.poll(Duration::from_millis(10)).await.unwrap();
    // A learns of the rebalance through its heartbeat and rejoins on poll.
    let (x, y) = eventually_async!(Duration::from_secs(20), "the rebalance", async {
        a.poll(Duration::from_millis(50)).await.unwrap();
        b.poll(Duration::from_millis(50)).await.unwrap();
        let (x, y) = (a.assignment().await.unwrap(), b.assignment().await.unwrap());
        let ga = a.membership().await.unwrap().1;
        let gb = b.membership().await.unwrap().1;
        match x.len() == 2 && y.len() == 2 && ga == gb {
            true => Ok((x, y)),
            false => Err((x, y)),
        }
    });
    let mut all: Vec<_> = x.into_iter().chain(y).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 4, "every partition exactly once");
    // When B leaves, A gets everything back.
    b.close().await.unwrap();
    eventually_async!(
        Duration::from_secs(20),
        "every partition back to A",
        async {
            let assigned = a.assignment().await.unwrap();
            if assigned.len() == 4 {
                return Ok(());
            }
            a.poll(Duration::from_millis(50)).await.unwrap();
            Err(assigned)
        }
    );
    a.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebalance_during_a_poll_is_not_an_empty_result() {
    let broker = TestBroker::start();
    create(&broker, "midpoll", 2).await;
    let a = std::sync::Arc::new(consumer(&broker, "g-midpoll", &[]).await);
    a.subscribe(Subscription::Topics(vec!["midpoll".into()]))
        .await
        .unwrap();
    a.poll(Duration::from_millis(10)).await.unwrap();
    // A's listener tells when A rejoined (assigned one partition of two).
    let (rejoined_tx, mut rejoined) = tokio::sync::mpsc::unbounded_channel();
    a.set_rebalance_listener(Some(std::sync::Arc::new(move |event: &RebalanceEvent| {
        if let RebalanceEvent::Assigned(_) = event {
            let _ = rejoined_tx.send(());
        }
    })));
    // A waits for records; B's join is a rebalance A's heartbeat detects
    // in the middle of that wait (60 s: a hang guard).
    let mut waiting = tokio::spawn({
        let a = std::sync::Arc::clone(&a);
        async move { a.poll(Duration::from_secs(60)).await }
    });
    let b = consumer(&broker, "g-midpoll", &[]).await;
    b.subscribe(Subscription::Topics(vec!["midpoll".into()]))
        .await
        .unwrap();
    b.poll(Duration::from_millis(10)).await.unwrap();
    // The poll must rejoin and wait on, not hand back [].
    tokio::select! {
        polled = &mut waiting => panic!("the poll ended before rejoining: {polled:?}"),
        _ = rejoined.recv() => {}
    }
    produce(&broker, "midpoll", 0..20).await;
    let records = waiting.await.unwrap().unwrap();
    assert!(!records.is_empty(), "a poll across a rebalance returned []");
    let mine = a.assignment().await.unwrap();
    assert_eq!(mine.len(), 1, "A owns one partition after the rebalance");
    assert!(records.iter().all(|r| r.topic_partition() == mine[0]));
    b.close().await.unwrap();
    a.close().await.unwrap();
}

#[tokio::test]
async fn offset_reset_policies() {
    let broker = TestBroker::start();
    create(&broker, "reset", 1).await;
    produce(&broker, "reset", 0..10).await;
    let latest = consumer(&broker, "g-latest", &[("auto_offset_reset", "latest")]).await;
    latest
        .subscribe(Subscription::Topics(vec!["reset".into()]))
        .await
        .unwrap();
    assert!(latest
        .poll(Duration::from_millis(300))
        .await
        .unwrap()
        .is_empty());
    produce(&broker, "reset", 10..15).await;
    let got = poll_n(&latest, 5).await;
    assert_eq!(got[0].offset, 10);
    let earliest = consumer(&broker, "g-earliest", &[]).await;
    earliest
        .subscribe(Subscription::Topics(vec!["reset".into()]))
        .await
        .unwrap();
    assert_eq!(poll_n(&earliest, 15).await[0].offset, 0);
    let strict = consumer(&broker, "g-error", &[("auto_offset_reset", "error")]).await;
    strict
        .subscribe(Subscription::Topics(vec!["reset".into()]))
        .await
        .unwrap();
    let e = strict.poll(Duration::from_millis(300)).await.unwrap_err();
    assert_eq!(e.code(), "no_committed_offset");
}

#[tokio::test]
async fn async_commit_and_stream_mode() {
    let broker = TestBroker::start();
    create(&broker, "s", 2).await;
    produce(&broker, "s", 0..40).await;
    let c = consumer(&broker, "g-stream", &[("consume_mode", "stream")]).await;
    c.subscribe(Subscription::Topics(vec!["s".into()]))
        .await
        .unwrap();
    let got = poll_n(&c, 40).await;
    assert_eq!(got.len(), 40);
    c.commit_async().await.unwrap().await.unwrap().unwrap();
    let mut total = 0;
    for p in 0..2 {
        total += c
            .committed(&TopicPartition::new("s", p))
            .await
            .unwrap()
            .unwrap_or(0);
    }
    assert_eq!(total, 40);
    c.close().await.unwrap();
}

#[tokio::test]
async fn a_stream_the_broker_closes_for_idleness_is_reopened() {
    // The broker ends an idle stream with STREAM_CONTROL type=CLOSE
    // reason=timeout; the consumer opens another from its position and
    // hands out neither a gap nor a repeat.
    let broker = TestBroker::start_with_config("stream_timeout_ms = 150\n");
    create(&broker, "idle", 1).await;
    produce(&broker, "idle", 0..5).await;
    let c = consumer(&broker, "g-idle", &[("consume_mode", "stream")]).await;
    c.subscribe(Subscription::Topics(vec!["idle".into()]))
        .await
        .unwrap();
    let first: Vec<_> = poll_n(&c, 5).await.into_iter().map(|r| r.offset).collect();
    assert_eq!(first, [0, 1, 2, 3, 4]);
    // Several stream lifetimes pass with nothing to deliver.
    assert!(c.poll(Duration::from_millis(700)).await.unwrap().is_empty());
    produce(&broker, "idle", 5..8).await;
    let later: Vec<_> = poll_n(&c, 3).await.into_iter().map(|r| r.offset).collect();
    assert_eq!(later, [5, 6, 7]);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_survive_a_broker_crash() {
    let mut broker = TestBroker::start();
    create(&broker, "crash", 1).await;
    produce(&broker, "crash", 0..20).await;
    let c = consumer(&broker, "g-crash", &[("max_poll_records", "8")]).await;
    c.subscribe(Subscription::Topics(vec!["crash".into()]))
        .await
        .unwrap();
    let first = c.poll(Duration::from_secs(5)).await.unwrap();
    assert_eq!(first.len(), 8);
    c.commit_sync().await.unwrap();
    broker.kill_and_restart();
    let c2 = consumer(&broker, "g-crash", &[]).await;
    c2.subscribe(Subscription::Topics(vec!["crash".into()]))
        .await
        .unwrap();
    let rest = poll_n(&c2, 12).await;
    assert_eq!(rest[0].offset, 8);
    assert_eq!(rest.len(), 12);
}

#[tokio::test]
async fn closed_and_unsubscribed_consumers_fail_cleanly() {
    let broker = TestBroker::start();
    let c = consumer(&broker, "g-closed", &[]).await;
    let e = c.poll(Duration::from_millis(10)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    c.close().await.unwrap();
    c.close().await.unwrap();
    assert_eq!(
        c.poll(Duration::from_millis(10)).await.unwrap_err().kind(),
        ErrorKind::Closed
    );
}

#[tokio::test]
async fn reading_past_the_last_commit_keeps_moving() {
    // The broker starts CONSUME at the committed offset only when offset=
    // is lower: a consumer that committed early must still read ahead.
    let broker = TestBroker::start();
    create(&broker, "ahead", 1).await;
    produce(&broker, "ahead", 0..3000).await;
    let c = consumer(
        &broker,
        "g-ahead",
        &[("fetch_max_records", "200"), ("max_poll_records", "100")],
    )
    .await;
    c.subscribe(Subscription::Topics(vec!["ahead".into()]))
        .await
        .unwrap();
    let first = c.poll(Duration::from_secs(5)).await.unwrap();
    c.commit_sync().await.unwrap();
    let rest = poll_n(&c, 3000 - first.len()).await;
    let offsets: Vec<u64> = first.iter().chain(&rest).map(|r| r.offset).collect();
    assert_eq!(offsets, (0..3000).collect::<Vec<u64>>());
    c.close().await.unwrap();
}

#[tokio::test]
async fn auto_commit_commits_delivered_positions() {
    let broker = TestBroker::start();
    create(&broker, "auto", 1).await;
    produce(&broker, "auto", 0..5).await;
    let c = consumer(
        &broker,
        "g-auto",
        &[
            ("enable_auto_commit", "true"),
            ("auto_commit_interval_ms", "1"),
        ],
    )
    .await;
    c.subscribe(Subscription::Topics(vec!["auto".into()]))
        .await
        .unwrap();
    assert_eq!(poll_n(&c, 5).await.len(), 5);
    // The next poll once the interval (1 ms) has passed commits what the
    // previous ones delivered. Without the pause, a poll within 1 ms of the
    // last commit rightly skips it (about 1 run in 15 failed so).
    tokio::time::sleep(Duration::from_millis(5)).await;
    c.poll(Duration::from_millis(10)).await.unwrap();
    assert_eq!(
        c.committed(&TopicPartition::new("auto", 0)).await.unwrap(),
        Some(5)
    );
    produce(&broker, "auto", 5..7).await;
    poll_n(&c, 2).await;
    // close commits too.
    c.close().await.unwrap();
    let check = consumer(&broker, "g-auto", &[]).await;
    assert_eq!(
        check
            .committed(&TopicPartition::new("auto", 0))
            .await
            .unwrap(),
        Some(7)
    );
}

#[tokio::test]
async fn offset_out_of_range_applies_the_reset_policy() {
    // Tiny segments and a byte limit make retention drop old records fast.
    let broker =
        TestBroker::start_with_config("segment_bytes = 400\nretention_check_interval_ms = 20\n");
    let admin = Admin::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    admin
        .create_topic(&NewTopic {
            retention_bytes: Some(800),
            ..NewTopic::new("gone").partitions(1)
        })
        .await
        .unwrap();
    produce(&broker, "gone", 0..2).await;
    // Commit offset 1, then let retention remove everything before it.
    let c = consumer(&broker, "g-gone", &[]).await;
    c.subscribe(Subscription::Topics(vec!["gone".into()]))
        .await
        .unwrap();
    poll_n(&c, 2).await;
    c.commit_offsets(&[(TopicPartition::new("gone", 0), 1)])
        .await
        .unwrap();
    c.close().await.unwrap();
    produce(&broker, "gone", 2..60).await;
    eventually_async!(Duration::from_secs(20), "retention to run", async {
        let earliest = admin.list_offsets("gone", Some(0)).await.unwrap()[0].earliest;
        (earliest > 1).then_some(()).ok_or(earliest)
    });
    let earliest = admin.list_offsets("gone", Some(0)).await.unwrap()[0].earliest;
    // auto_offset_reset=error surfaces the gap...
    let strict = consumer(&broker, "g-gone", &[("auto_offset_reset", "error")]).await;
    strict
        .subscribe(Subscription::Topics(vec!["gone".into()]))
        .await
        .unwrap();
    let e = eventually_async!(
        Duration::from_secs(20),
        "the offset gap to surface",
        async {
            match strict.poll(Duration::from_millis(200)).await {
                Err(e) => Ok(e),
                Ok(r) => {
                    assert!(r.is_empty(), "{r:?}");
                    Err("no error yet")
                }
            }
        }
    );
    assert_eq!(e.code(), "OFFSET_OUT_OF_RANGE", "{e}");
    strict.close().await.unwrap();
    // ...and earliest resumes from the first retained record.
    let lenient = consumer(&broker, "g-gone", &[]).await;
    lenient
        .subscribe(Subscription::Topics(vec!["gone".into()]))
        .await
        .unwrap();
    let got = poll_n(&lenient, 1).await;
    assert!(got[0].offset >= earliest, "{} < {earliest}", got[0].offset);
}
