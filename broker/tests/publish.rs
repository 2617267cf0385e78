//! PUBLISH over real TCP: text and batch forms, acks, partitioning,
//! idempotent producers, errors and durability across `kill -9`.

mod common;

use bytes::Bytes;
use common::*;
use cursus_wire::partitioner::partition_for_key;
use cursus_wire::{Acks, Batch, Command, ErrorClass, ErrorPayload, Record, Status};

fn ack(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("AckResponse JSON")
}

fn record(payload: &str) -> Record {
    Record::new(Bytes::copy_from_slice(payload.as_bytes()))
}

#[tokio::test]
async fn text_publish_returns_the_ack_response() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=t partitions=1").await;
    let a = ack(&c
        .ok("PUBLISH topic=t acks=1 producerId=producer-1 seqNum=0 epoch=3 message=hello world")
        .await);
    assert_eq!(
        a,
        serde_json::json!({
            "status": "OK", "last_offset": 0, "producer_id": "producer-1",
            "producer_epoch": 3, "seq_start": 0, "seq_end": 0,
            "leader": broker.addr.to_string()
        })
    );
    let raw = c
        .ok("PUBLISH topic=t acks=all producerId=p message=x")
        .await;
    // Field order as documented.
    let positions: Vec<usize> = [
        "status",
        "last_offset",
        "producer_id",
        "producer_epoch",
        "seq_start",
        "seq_end",
        "leader",
    ]
    .iter()
    .map(|k| raw.find(&format!("\"{k}\":")).expect(k))
    .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{raw}");
    assert_eq!(ack(&raw)["last_offset"], 1);
    let b = c
        .consume("CONSUME topic=t partition=0 offset=0 member=m")
        .await;
    assert_eq!(b.records.len(), 2);
    assert_eq!(&b.records[0].payload[..], b"hello world");
    assert_eq!(b.records[0].offset, 0);
    assert_eq!(b.records[0].producer_id, "producer-1");
    assert_eq!(b.records[0].epoch, 3);
    assert!(b.records[0].timestamp > 0, "broker timestamp");
    assert_eq!(b.records[1].offset, 1);
}

#[tokio::test]
async fn acks_zero_gets_no_response_frame() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=z partitions=1").await;
    c.send_line("PUBLISH topic=z acks=0 producerId=p message=fire")
        .await;
    // Even a failing acks=0 publish is silent.
    c.send_line("PUBLISH topic=missing acks=0 producerId=p message=lost")
        .await;
    let batch = Batch {
        acks: Acks::None,
        records: vec![record("batched")],
        ..Batch::new("z", 0)
    };
    let bytes = batch
        .to_bytes(cursus_wire::RecordVersionPolicy::Minimal)
        .unwrap();
    c.send(Command::Publish, bytes).await;
    let list = c.send_line("LIST").await;
    let first = c.recv().await.unwrap();
    assert_eq!(first.request_id, list, "the first reply is the LIST's");
    assert_eq!(first.command, Command::List);
    // The fire-and-forget data becomes readable.
    let b = c
        .consume("CONSUME topic=z partition=0 offset=0 member=m wait_ms=10000 batch=2")
        .await;
    assert!(!b.records.is_empty());
    assert_eq!(&b.records[0].payload[..], b"fire");
}

#[tokio::test]
async fn keyed_records_follow_partition_for_key() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=k partitions=5").await;
    let keys = ["user-1", "user-2", "order-77", "a", "zz-top", "k9"];
    for key in keys {
        c.ok(&format!(
            "PUBLISH topic=k acks=1 producerId=p key={key} message=v-{key}"
        ))
        .await;
    }
    // A batch with keyed records and no partition (-1) is routed per record.
    let batch = Batch {
        records: keys
            .iter()
            .map(|k| Record {
                key: Bytes::copy_from_slice(k.as_bytes()),
                partition: -1,
                ..record(&format!("b-{k}"))
            })
            .collect(),
        ..Batch::new("k", -1)
    };
    assert_eq!(c.publish_batch(&batch).await.status, Status::Ok);
    for p in 0..5u32 {
        let b = c
            .consume(&format!("CONSUME topic=k partition={p} offset=0 member=m"))
            .await;
        for r in &b.records {
            assert_eq!(partition_for_key(&r.key, 5), p, "key {:?}", r.key);
            assert_eq!(r.partition, p as i32);
        }
        let expected = keys
            .iter()
            .filter(|k| partition_for_key(k.as_bytes(), 5) == p)
            .count();
        assert_eq!(b.records.len(), expected * 2, "partition {p}");
    }
}

#[tokio::test]
async fn round_robin_spreads_records() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=rr partitions=3 partitioner=round_robin")
        .await;
    for i in 0..9 {
        // Keys are ignored under round_robin.
        c.ok(&format!(
            "PUBLISH topic=rr acks=1 producerId=p key=same message={i}"
        ))
        .await;
    }
    c.ok("CREATE topic=unkeyed partitions=3").await;
    for i in 0..6 {
        c.ok(&format!(
            "PUBLISH topic=unkeyed acks=1 producerId=p message={i}"
        ))
        .await;
    }
    for (topic, per) in [("rr", "3"), ("unkeyed", "2")] {
        let offsets = c.ok(&format!("LIST_OFFSETS topic={topic}")).await;
        for p in 0..3 {
            assert!(
                offsets.contains(&format!("P{p}:earliest=0:latest={per}:")),
                "{offsets}"
            );
        }
    }
}

#[tokio::test]
async fn a_negative_partition_is_routed_like_no_partition() {
    // Clients send partition=-1 for "not chosen" (as the public Cursus
    // broker accepts): keyed records go to their key's partition.
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=neg partitions=3").await;
    let keys = ["user-1", "user-2", "order-77", "a", "zz-top", "k9"];
    for key in keys {
        c.ok(&format!(
            "PUBLISH topic=neg partition=-1 acks=1 producerId=p key={key} message={key}"
        ))
        .await;
    }
    for p in 0..3u32 {
        let b = c
            .consume(&format!(
                "CONSUME topic=neg partition={p} offset=0 member=m"
            ))
            .await;
        let got: Vec<&[u8]> = b.records.iter().map(|r| &r.key[..]).collect();
        let expected: Vec<&[u8]> = keys
            .iter()
            .filter(|k| partition_for_key(k.as_bytes(), 3) == p)
            .map(|k| k.as_bytes())
            .collect();
        assert_eq!(got, expected, "partition {p}");
    }
    // Without a key, the keyless round robin, shared with records that
    // name no partition: alternating the two spreads evenly.
    c.ok("CREATE topic=neg_unkeyed partitions=3").await;
    for i in 0..6 {
        let partition = if i % 2 == 0 { " partition=-1" } else { "" };
        c.ok(&format!(
            "PUBLISH topic=neg_unkeyed{partition} acks=1 producerId=p message={i}"
        ))
        .await;
    }
    let offsets = c.ok("LIST_OFFSETS topic=neg_unkeyed").await;
    for p in 0..3 {
        assert!(
            offsets.contains(&format!("P{p}:earliest=0:latest=2:")),
            "{offsets}"
        );
    }
    // Any other value that is not a partition number is still refused.
    for (value, code) in [
        ("x", "invalid_partition"),
        ("1.5", "invalid_partition"),
        ("-1x", "invalid_partition"),
        ("4294967296", "invalid_partition"),
        ("3", "partition_not_found"),
    ] {
        let e = c
            .error(&format!(
                "PUBLISH topic=neg_unkeyed partition={value} acks=1 producerId=p message=bad"
            ))
            .await;
        assert_eq!(e.code, code, "partition={value}");
    }
    let after = c.ok("LIST_OFFSETS topic=neg_unkeyed").await;
    assert_eq!(after, offsets, "refused records were not appended");
}

#[tokio::test]
async fn explicit_partition_and_publish_errors() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=e partitions=2").await;
    c.ok("CREATE topic=locked partitions=1 auth_policy=deny_write")
        .await;
    c.ok("CREATE topic=strict partitions=1 replication_factor=3 min_in_sync_replicas=2")
        .await;
    let a = ack(&c
        .ok("PUBLISH topic=e partition=1 acks=1 producerId=p message=x")
        .await);
    assert_eq!(a["last_offset"], 0);
    let cases: &[(&str, &str, ErrorClass)] = &[
        (
            "PUBLISH acks=1 producerId=p message=x",
            "missing_topic",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=nope acks=1 producerId=p message=x",
            "topic_not_found",
            ErrorClass::NotFound,
        ),
        (
            "PUBLISH topic=e acks=1 message=x",
            "missing_producer_id",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e acks=1 producerId=p",
            "missing_message",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e acks=2 producerId=p message=x",
            "invalid_acks",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e acks=none producerId=p message=x",
            "invalid_acks",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e partition=9 acks=1 producerId=p message=x",
            "partition_not_found",
            ErrorClass::NotFound,
        ),
        (
            "PUBLISH topic=e partition=x acks=1 producerId=p message=x",
            "invalid_partition",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e acks=1 producerId=p seqNum=x message=x",
            "invalid_seq_num",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e acks=1 producerId=p epoch=x message=x",
            "invalid_epoch",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e acks=all producerId=p isIdempotent=maybe message=x",
            "invalid_is_idempotent",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e acks=1 producerId=p isIdempotent=true seqNum=1 message=x",
            "invalid_acks",
            ErrorClass::Validation,
        ),
        (
            "PUBLISH topic=e acks=1 producerId=p transactional_id=tx message=x",
            "transaction_metadata_forbidden",
            ErrorClass::Authorization,
        ),
        (
            "PUBLISH topic=e acks=1 producerId=p transaction_state=open message=x",
            "transaction_metadata_forbidden",
            ErrorClass::Authorization,
        ),
        (
            "PUBLISH topic=__consumer_offsets acks=1 producerId=p message=x",
            "internal_topic_write_forbidden",
            ErrorClass::Authorization,
        ),
        (
            "PUBLISH topic=locked acks=1 producerId=p message=x",
            "NOT_AUTHORIZED_FOR_TOPIC",
            ErrorClass::Authorization,
        ),
        (
            "PUBLISH topic=strict acks=all producerId=p message=x",
            "insufficient_in_sync_replicas",
            ErrorClass::Availability,
        ),
        (
            "PUBLISH topic=strict acks=-1 producerId=p message=x",
            "insufficient_in_sync_replicas",
            ErrorClass::Availability,
        ),
    ];
    for (line, code, class) in cases {
        let e = c.error(line).await;
        assert_eq!((e.code.as_str(), e.class), (*code, *class), "{line}");
    }
    let e = c
        .error("PUBLISH topic=e acks=1 producerId=p transactional_id=tx message=x")
        .await;
    assert_eq!(e.fields["command"], "PUBLISH");
    assert!(
        c.error("PUBLISH topic=strict acks=all producerId=p message=x")
            .await
            .retryable
    );
    // acks=1 is fine with a min ISR override: it needs only the leader.
    c.ok("PUBLISH topic=strict acks=1 producerId=p message=x")
        .await;
    // Nothing was appended by the failures.
    assert!(c
        .ok("LIST_OFFSETS topic=e")
        .await
        .ends_with("P0:earliest=0:latest=0:leo=0:hwm=0,P1:earliest=0:latest=1:leo=1:hwm=1"));
}

#[tokio::test]
async fn batch_publish_and_batch_errors() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=b partitions=2").await;
    let batch = Batch {
        acks: Acks::All,
        records: (0..5)
            .map(|i| Record {
                producer_id: "bp".into(),
                epoch: 1,
                metadata: format!("{{\"i\":{i}}}"),
                ..record(&format!("r{i}"))
            })
            .collect(),
        ..Batch::new("b", 1)
    };
    let frame = c.publish_batch(&batch).await;
    assert_eq!(frame.status, Status::Ok);
    let a: serde_json::Value = serde_json::from_slice(&frame.payload).unwrap();
    assert_eq!(a["last_offset"], 4);
    assert_eq!(a["producer_id"], "bp");
    assert_eq!(a["producer_epoch"], 1);
    let got = c
        .consume("CONSUME topic=b partition=1 offset=2 member=m")
        .await;
    assert_eq!(got.records.len(), 3);
    assert_eq!(got.records[0].offset, 2);
    assert_eq!(got.records[0].metadata, "{\"i\":2}");

    let err = |frame: cursus_wire::Frame| {
        assert_eq!(frame.status, Status::Error);
        ErrorPayload::decode(frame.payload).unwrap().code
    };
    assert_eq!(
        err(c.publish_batch(&Batch::new("b", 0)).await),
        "empty_messages"
    );
    let missing = Batch {
        records: vec![record("x")],
        ..Batch::new("missing", 0)
    };
    assert_eq!(err(c.publish_batch(&missing).await), "topic_not_found");
    let txn = Batch {
        records: vec![Record {
            transactional_id: "tx".into(),
            ..record("x")
        }],
        ..Batch::new("b", 0)
    };
    assert_eq!(
        err(c.publish_batch(&txn).await),
        "transaction_metadata_forbidden"
    );
    let out_of_range = Batch {
        records: vec![Record {
            partition: 7,
            ..record("x")
        }],
        ..Batch::new("b", 7)
    };
    assert_eq!(
        err(c.publish_batch(&out_of_range).await),
        "partition_not_found"
    );
}

#[tokio::test]
async fn idempotent_producer_suppresses_duplicates() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=i partitions=1 idempotent=true").await;
    let publish = |seq: u64, epoch: i64| {
        format!(
            "PUBLISH topic=i partition=0 acks=all producerId=prod seqNum={seq} epoch={epoch} \
             isIdempotent=true message=m{seq}-{epoch}"
        )
    };
    let a1 = ack(&c.ok(&publish(1, 0)).await);
    let a2 = ack(&c.ok(&publish(2, 0)).await);
    assert_eq!(
        (a1["last_offset"].as_u64(), a2["last_offset"].as_u64()),
        (Some(0), Some(1))
    );
    // A retried sequence is acknowledged with its original offset, not appended.
    let dup = ack(&c.ok(&publish(2, 0)).await);
    assert_eq!(dup["last_offset"], 1);
    assert_eq!(dup["seq_start"], 2);
    // Gaps and stale epochs are rejected.
    let e = c.error(&publish(4, 0)).await;
    assert_eq!(e.code, "invalid_producer_sequence");
    assert_eq!(e.fields["expected"], "3");
    // A higher epoch fences the old session and restarts at 1.
    assert_eq!(
        c.error(&publish(2, 1)).await.code,
        "invalid_producer_sequence"
    );
    assert_eq!(ack(&c.ok(&publish(1, 1)).await)["last_offset"], 2);
    let e = c.error(&publish(3, 0)).await;
    assert_eq!(e.code, "stale_producer_epoch");
    assert_eq!(e.class, ErrorClass::Fencing);
    assert_eq!(e.fields["current"], "1");
    assert_eq!(e.fields["got"], "0");
    // A fresh producer must start at 1.
    let e = c
        .error("PUBLISH topic=i acks=all producerId=other seqNum=5 isIdempotent=true message=x")
        .await;
    assert_eq!(e.code, "invalid_producer_sequence");
    assert!(c
        .ok("LIST_OFFSETS topic=i")
        .await
        .ends_with("latest=3:leo=3:hwm=3"));

    // The sequence state is rebuilt from the log after a crash.
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    assert_eq!(ack(&c.ok(&publish(1, 1)).await)["last_offset"], 2);
    assert_eq!(ack(&c.ok(&publish(2, 1)).await)["last_offset"], 3);

    // Idempotent batches dedup per record.
    let batch = |seqs: &[u64]| Batch {
        acks: Acks::All,
        idempotent: true,
        records: seqs
            .iter()
            .map(|s| Record {
                producer_id: "bprod".into(),
                seq_num: *s,
                ..record(&format!("s{s}"))
            })
            .collect(),
        ..Batch::new("i", 0)
    };
    let frame = c.publish_batch(&batch(&[1, 2])).await;
    assert_eq!(frame.status, Status::Ok);
    let frame = c.publish_batch(&batch(&[1, 2, 3])).await;
    let a: serde_json::Value = serde_json::from_slice(&frame.payload).unwrap();
    assert_eq!(a["last_offset"], 6);
    assert_eq!(
        (a["seq_start"].as_u64(), a["seq_end"].as_u64()),
        (Some(1), Some(3))
    );
    assert!(c
        .ok("LIST_OFFSETS topic=i")
        .await
        .ends_with("latest=7:leo=7:hwm=7"));
    // Idempotent batches need acks=all.
    let weak = Batch {
        acks: Acks::Leader,
        ..batch(&[4])
    };
    let frame = c.publish_batch(&weak).await;
    assert_eq!(
        ErrorPayload::decode(frame.payload).unwrap().code,
        "invalid_acks"
    );
}

#[tokio::test]
async fn acknowledged_data_survives_kill_9() {
    let broker = TestBroker::start();
    let mut c = broker.client().await;
    c.ok("CREATE topic=d partitions=2").await;
    let mut acked = Vec::new();
    for i in 0..40 {
        let partition = i % 2;
        let a = ack(&c
            .ok(&format!(
                "PUBLISH topic=d partition={partition} acks=1 producerId=p message=payload-{i}"
            ))
            .await);
        acked.push((
            partition,
            a["last_offset"].as_u64().unwrap(),
            format!("payload-{i}"),
        ));
    }
    let batch = Batch {
        acks: Acks::Leader,
        records: (0..10).map(|i| record(&format!("batch-{i}"))).collect(),
        ..Batch::new("d", 0)
    };
    assert_eq!(c.publish_batch(&batch).await.status, Status::Ok);
    drop(c);
    let broker = broker.crash_and_restart();
    let mut c = broker.client().await;
    for partition in 0..2 {
        let b = c
            .consume(&format!(
                "CONSUME topic=d partition={partition} offset=0 member=m"
            ))
            .await;
        for (p, offset, payload) in acked.iter().filter(|(p, _, _)| *p == partition) {
            let r = &b.records[*offset as usize];
            assert_eq!(
                (r.offset, &r.payload[..], *p),
                (*offset, payload.as_bytes(), partition)
            );
        }
        if partition == 0 {
            assert_eq!(b.records.len(), 30);
            assert_eq!(&b.records[29].payload[..], b"batch-9");
        }
    }
    // New appends continue after the recovered tail.
    let a = ack(&c
        .ok("PUBLISH topic=d partition=1 acks=1 producerId=p message=after")
        .await);
    assert_eq!(a["last_offset"], 20);
}
