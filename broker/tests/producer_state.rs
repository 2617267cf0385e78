//! Idempotent producer state beyond the log: a late retry is deduplicated
//! after retention removed the producer's records and the broker restarted,
//! and after the producer left memory (`producer_state_ttl_ms`).

mod common;

use common::*;

fn publish(producer: &str, seq: u64) -> String {
    format!(
        "PUBLISH topic=i partition=0 acks=all producerId={producer} seqNum={seq} epoch=0 \
         isIdempotent=true message=m{seq}-padding-padding-padding"
    )
}

fn last_offset(ack: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(ack).expect("AckResponse JSON");
    v["last_offset"].as_u64().expect("last_offset")
}

fn earliest(list_offsets: &str) -> u64 {
    list_offsets
        .split(|c: char| c == ':' || c.is_whitespace())
        .find_map(|t| t.strip_prefix("earliest="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no earliest in {list_offsets}"))
}

#[tokio::test]
async fn a_retry_is_deduplicated_after_retention_and_a_restart() {
    let broker = TestBroker::start_with(&[
        "--segment-bytes",
        "400",
        "--retention-bytes",
        "1000",
        "--retention-check-interval-ms",
        "30",
    ]);
    let mut c = broker.client().await;
    c.ok("CREATE topic=i partitions=1 idempotent=true").await;
    let first = last_offset(&c.ok(&publish("old", 1)).await);
    let second = last_offset(&c.ok(&publish("old", 2)).await);
    assert_eq!((first, second), (0, 1));
    // Another producer writes until retention removed the old one's records.
    let mut seq = 0;
    eventually_async!(
        SAFETY,
        "retention to remove the old producer's records",
        async {
            let earliest = earliest(&c.ok("LIST_OFFSETS topic=i").await);
            if earliest > second {
                return Ok(());
            }
            for _ in 0..20 {
                seq += 1;
                c.ok(&publish("new", seq)).await;
            }
            Err(earliest)
        }
    );
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    // The late retry gets its original offset; the next sequence appends.
    assert_eq!(last_offset(&c.ok(&publish("old", 2)).await), second);
    let e = c.error(&publish("old", 4)).await;
    assert_eq!(
        (e.code.as_str(), e.fields["expected"].as_str()),
        ("invalid_producer_sequence", "3")
    );
}

#[tokio::test]
async fn a_retry_is_deduplicated_after_the_producer_left_memory() {
    let broker = TestBroker::start_with(&["--producer-state-ttl-ms", "50"]);
    let mut c = broker.client().await;
    c.ok("CREATE topic=i partitions=1 idempotent=true").await;
    c.ok(&publish("p", 1)).await;
    let offset = last_offset(&c.ok(&publish("p", 2)).await);
    // Expiry writes the checkpoint before forgetting the producer.
    let checkpoint = broker
        .data_dir()
        .join("topics/i/0/producer_state.checkpoint");
    eventually_async!(SAFETY, format!("producer p in {checkpoint:?}"), async {
        match std::fs::read_to_string(&checkpoint) {
            Ok(text) if text.contains("\"p\"") => Ok(()),
            other => Err(other),
        }
    });
    assert_eq!(last_offset(&c.ok(&publish("p", 2)).await), offset);
    assert_eq!(last_offset(&c.ok(&publish("p", 3)).await), offset + 1);
}
