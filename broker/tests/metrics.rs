//! `GET /metrics` on the health port of a real broker: request and error
//! counters, traffic, latency and fsync histograms, and the partition and
//! group gauges read from the broker's state at scrape time.

mod common;

use bytes::Bytes;
use common::*;
use cursus_wire::{Batch, Record, Status};

/// Records published to the topic.
const N: u64 = 5;

/// A scrape: the status code, the header block and the body.
fn scrape(broker: &TestBroker) -> (u16, String, String) {
    http_fetch(broker.health, "/metrics")
}

/// The value of the sample `series` (name and labels exactly as the text
/// format renders them), if present.
fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.trim().parse().expect("numeric sample"))
}

/// Like [`sample`], failing the test when the series is missing.
fn value(body: &str, series: &str) -> f64 {
    sample(body, series).unwrap_or_else(|| panic!("no {series} in:\n{body}"))
}

const LEO: &str = r#"cursus_partition_log_end_offset{topic="m",partition="0"}"#;
const LAG: &str = r#"cursus_group_lag{group="g",topic="m",partition="0"}"#;

#[tokio::test]
async fn metrics_follow_publish_consume_commit_and_errors() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=m partitions=1").await;
    // N publish requests: N - 1 text commands and one CBV2 batch.
    for i in 0..N - 1 {
        c.ok(&format!(
            "PUBLISH topic=m partition=0 acks=1 producerId=p message=m{i}"
        ))
        .await;
    }
    let batch = Batch {
        records: vec![Record::new(Bytes::from_static(b"batched"))],
        ..Batch::new("m", 0)
    };
    assert_eq!(c.publish_batch(&batch).await.status, Status::Ok);
    let f = kv(&c.ok("JOIN_GROUP topic=m group=g member=a").await);
    let (member, generation) = (f["member"].clone(), f["generation"].clone());
    c.ok(&format!(
        "SYNC_GROUP topic=m group=g member={member} generation={generation}"
    ))
    .await;
    let batch = c
        .consume(&format!(
            "CONSUME topic=m partition=0 offset=0 group=g member={member}"
        ))
        .await;
    assert_eq!(batch.records.len() as u64, N);
    let commit = |offset: u64| {
        format!(
            "COMMIT_OFFSET topic=m partition=0 group=g offset={offset} \
             member={member} generation={generation}"
        )
    };

    // Part of the records committed: the rest is the lag.
    c.ok(&commit(2)).await;
    let (status, head, body) = scrape(&broker);
    assert_eq!(status, 200, "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert_eq!(value(&body, LEO), N as f64);
    assert_eq!(value(&body, LAG), (N - 2) as f64);

    // Everything committed, and a request that fails.
    c.ok(&commit(N)).await;
    let e = c
        .error("CONSUME topic=missing partition=0 offset=0 member=x")
        .await;
    // A reply's latency is recorded once it is written, which the client
    // may see first; the next request on the connection starts only after.
    c.ok("LIST").await;
    let (status, _, body) = scrape(&broker);
    assert_eq!(status, 200);
    assert_eq!(value(&body, LEO), N as f64);
    assert_eq!(value(&body, LAG), 0.0);
    assert!(value(&body, r#"cursus_requests_total{command="PUBLISH"}"#) >= N as f64);
    assert!(value(&body, r#"cursus_requests_total{command="CONSUME"}"#) >= 2.0);
    assert_eq!(
        value(
            &body,
            &format!(
                r#"cursus_request_errors_total{{command="CONSUME",code="{}"}}"#,
                e.code
            )
        ),
        1.0
    );
    assert!(value(&body, "cursus_received_bytes_total") > 0.0);
    assert!(value(&body, "cursus_sent_bytes_total") > 0.0);
    assert_eq!(
        value(&body, r#"cursus_connections_open{listener="plain"}"#),
        1.0
    );
    assert_eq!(
        value(
            &body,
            r#"cursus_connections_accepted_total{listener="plain"}"#
        ),
        1.0
    );
    assert_eq!(
        value(&body, "cursus_publish_latency_seconds_count"),
        N as f64
    );
    assert!(value(&body, "cursus_publish_latency_seconds_sum") > 0.0);
    assert_eq!(
        value(&body, r#"cursus_publish_latency_seconds_bucket{le="+Inf"}"#),
        N as f64
    );
    // Two consumes were answered (one with an error).
    assert_eq!(value(&body, "cursus_consume_latency_seconds_count"), 2.0);
    // acks=1 publishes are synced before their reply.
    assert!(value(&body, "cursus_fsync_latency_seconds_count") > 0.0);
}

#[tokio::test]
async fn a_closed_connection_leaves_the_open_gauge() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("LIST").await;
    let (_, _, body) = scrape(&broker);
    assert_eq!(
        value(&body, r#"cursus_connections_open{listener="plain"}"#),
        1.0
    );
    c.request("EXIT").await;
    assert!(c.is_closed().await);
    drop(c);
    // The broker's side of the connection ends after it closed the socket;
    // nothing announces that over HTTP, so poll (bounded).
    let body = eventually(SAFETY, "the connection to be counted closed", || {
        let (_, _, body) = scrape(&broker);
        let open = value(&body, r#"cursus_connections_open{listener="plain"}"#);
        if open == 0.0 {
            Ok(body)
        } else {
            Err(open)
        }
    });
    assert_eq!(
        value(
            &body,
            r#"cursus_connections_accepted_total{listener="plain"}"#
        ),
        1.0
    );
}

#[tokio::test]
async fn a_deleted_topic_leaves_the_partition_gauges() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=gone partitions=2").await;
    let (_, _, body) = scrape(&broker);
    assert_eq!(
        value(
            &body,
            r#"cursus_partition_log_end_offset{topic="gone",partition="1"}"#
        ),
        0.0
    );
    c.ok("DELETE topic=gone").await;
    let (_, _, body) = scrape(&broker);
    assert!(!body.contains(r#"topic="gone""#), "{body}");
}
