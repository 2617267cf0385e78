//! Storage for replication (#21): a replica's append of a leader's stored
//! entries (`Partition::append_replica`) and the reset of a partition from
//! its (optionally truncated) log (`TopicRegistry::reset_partition`), on a
//! real broker serving a free loopback port from its own temporary
//! directory, in-process so the test can reach the registry.

mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use common::{Client, SAFETY};
use cursus_broker::broker::Broker;
use cursus_broker::config::Config;
use cursus_broker::server::listener;
use cursus_broker::topics::partition::ReplicaAppendError;
use cursus_broker::topics::{producer_checkpoint, Partition};
use cursus_wire::Compression;
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A broker serving a loopback port, with the handle the test needs.
struct Node {
    broker: Arc<Broker>,
    addr: SocketAddr,
    shutdown: CancellationToken,
    server: JoinHandle<()>,
}

impl Node {
    /// Opens (recovering) the data directory `dir/data` and serves it;
    /// segments of `segment_bytes` so a few records roll them.
    async fn start(dir: &TempDir, segment_bytes: u64) -> Node {
        let config = Config {
            data_dir: dir.path().join("data"),
            segment_bytes,
            ..Config::default()
        };
        let shutdown = CancellationToken::new();
        let broker = Arc::new(
            Broker::open(
                config,
                "127.0.0.1:0".into(),
                None,
                Default::default(),
                shutdown.clone(),
            )
            .expect("broker opens"),
        );
        cursus_broker::txn::recover(&broker)
            .await
            .expect("transaction recovery");
        let plain = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = plain.local_addr().unwrap();
        let server = tokio::spawn(listener::run(Arc::clone(&broker), Some(plain), None));
        Node {
            broker,
            addr,
            shutdown,
            server,
        }
    }

    async fn client(&self) -> Client {
        Client::connect(self.addr, Compression::None).await
    }

    /// Stops serving and waits until the broker is released.
    async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(SAFETY, self.server)
            .await
            .expect("listener stops")
            .unwrap();
    }

    fn partition(&self, topic: &str, id: u32) -> Arc<Partition> {
        let topic = self.broker.topics.get(topic).expect("topic exists");
        Arc::clone(topic.partition(id).expect("partition exists"))
    }

    fn partition_dir(&self, topic: &str, id: u32) -> PathBuf {
        self.partition(topic, id).log().dir().to_path_buf()
    }

    fn log_end(&self, topic: &str) -> u64 {
        self.partition(topic, 0).log().log_end_offset()
    }
}

fn publish(producer: &str, seq: u64) -> String {
    format!(
        "PUBLISH topic=r partition=0 acks=all producerId={producer} seqNum={seq} epoch=0 \
         isIdempotent=true message=m{seq}-padding-padding-padding"
    )
}

fn last_offset(ack: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(ack).expect("AckResponse JSON");
    v["last_offset"].as_u64().expect("last_offset")
}

#[tokio::test]
async fn reset_partition_drops_truncated_sequences_and_keeps_older_ones_deduplicated() {
    let dir = tempfile::tempdir().unwrap();
    // Three or four records per segment: rolls write the producer checkpoint.
    let node = Node::start(&dir, 400).await;
    let mut c = node.client().await;
    c.ok("CREATE topic=r partitions=1 idempotent=true").await;
    for seq in 1..=10 {
        assert_eq!(last_offset(&c.ok(&publish("p", seq)).await), seq - 1);
    }
    // The checkpoint names a record the truncation below removes.
    let pdir = node.partition_dir("r", 0);
    let checkpointed = producer_checkpoint::load(&pdir).unwrap()["p"];
    let stale = checkpointed.last_offset;
    let cut = 4;
    assert!(stale >= cut, "{checkpointed:?}");

    let old = node.partition("r", 0);
    let old_signal = old.subscribe();
    node.broker
        .topics
        .reset_partition("r", 0, Some(cut))
        .await
        .unwrap();
    // The old generation ended; the new one starts at the cut.
    assert!(old.is_closed());
    assert!(old_signal.borrow().closed, "waiters see the generation end");
    let new = node.partition("r", 0);
    assert!(!Arc::ptr_eq(&old, &new));
    assert!(!new.is_closed());
    assert_eq!(node.log_end("r"), cut);
    assert_eq!(new.log().durable_offset(), cut);
    let producer = new.writer.lock().await.get("p").unwrap();
    assert_eq!((producer.last_seq, producer.last_offset), (cut, cut - 1));
    // The checkpoint no longer names anything at or past the cut.
    let checkpointed = producer_checkpoint::load(&pdir).unwrap();
    assert!(checkpointed.values().all(|e| e.last_offset < cut));

    // A sequence below the cut is still a duplicate: nothing is appended.
    assert_eq!(last_offset(&c.ok(&publish("p", 2)).await), cut - 1);
    assert_eq!(node.log_end("r"), cut);
    // The retried sequence that was cut is appended again.
    assert_eq!(last_offset(&c.ok(&publish("p", cut + 1)).await), cut);
    assert_eq!(node.log_end("r"), cut + 1);
    // The next one follows it; one that skips ahead is a gap.
    assert_eq!(last_offset(&c.ok(&publish("p", cut + 2)).await), cut + 1);
    let e = c.error(&publish("p", cut + 4)).await;
    assert_eq!(e.code, "invalid_producer_sequence");
    assert_eq!(e.fields["expected"], (cut + 3).to_string());

    // Other records take the log past the offsets the old checkpoint named;
    // after a restart the producer is still where the new log says.
    for seq in 1..=8 {
        c.ok(&publish("q", seq)).await;
    }
    assert!(node.log_end("r") > stale);
    drop(c);
    node.stop().await;
    let node = Node::start(&dir, 400).await;
    let mut c = node.client().await;
    assert_eq!(last_offset(&c.ok(&publish("p", cut + 2)).await), cut + 1);
    let end = node.log_end("r");
    assert_eq!(last_offset(&c.ok(&publish("p", cut + 3)).await), end);
    drop(c);
    node.stop().await;
}

#[tokio::test]
async fn reset_partition_rebuilds_the_stream_index() {
    let dir = tempfile::tempdir().unwrap();
    let node = Node::start(&dir, 64 * 1024 * 1024).await;
    let mut c = node.client().await;
    c.ok("CREATE topic=es partitions=1 event_sourcing=true")
        .await;
    for v in 1..=6 {
        c.ok(&format!(
            "APPEND_STREAM topic=es key=acc version={v} event_type=E{v} message=e{v}"
        ))
        .await;
        c.ok(&format!(
            "APPEND_STREAM topic=es key=other version={v} event_type=E{v} message=o{v}"
        ))
        .await;
    }
    assert_eq!(
        c.ok("STREAM_VERSION topic=es key=acc").await,
        "OK version=6"
    );
    // Offsets alternate acc, other: keep acc 1..=3 and other 1..=2.
    node.broker
        .topics
        .reset_partition("es", 0, Some(5))
        .await
        .unwrap();
    assert_eq!(node.log_end("es"), 5);
    assert_eq!(
        c.ok("STREAM_VERSION topic=es key=acc").await,
        "OK version=3"
    );
    assert_eq!(
        c.ok("STREAM_VERSION topic=es key=other").await,
        "OK version=2"
    );
    // The stream continues from the kept head.
    let e = c
        .error("APPEND_STREAM topic=es key=acc version=5 event_type=E message=x")
        .await;
    assert_eq!(e.code, "version_conflict");
    c.ok("APPEND_STREAM topic=es key=acc version=4 event_type=E4 message=again")
        .await;
    assert_eq!(
        c.ok("STREAM_VERSION topic=es key=acc").await,
        "OK version=4"
    );
    drop(c);
    node.stop().await;
}

#[tokio::test]
async fn append_replica_copies_stored_entries_at_the_same_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let node = Node::start(&dir, 64 * 1024 * 1024).await;
    let mut c = node.client().await;
    c.ok("CREATE topic=r partitions=1 idempotent=true").await;
    c.ok("CREATE topic=copy partitions=1 idempotent=true").await;
    for seq in 1..=5 {
        c.ok(&publish("p", seq)).await;
    }
    // The leader's stored entries, as a replica fetches them.
    let stored = node.partition("r", 0).read(0, 100, 1 << 20).await.unwrap();
    assert_eq!(stored.len(), 5);
    let entries = |from: usize, to: usize| -> Vec<(i64, Bytes)> {
        stored[from..to]
            .iter()
            .map(|r| (r.timestamp, r.data.clone()))
            .collect()
    };

    let replica = node.partition("copy", 0);
    let mut signal = replica.subscribe();
    match replica.append_replica(entries(2, 5), 2).await {
        Err(ReplicaAppendError::OffsetMismatch { expected, log_end }) => {
            assert_eq!((expected, log_end), (2, 0));
        }
        other => panic!("expected an offset mismatch, got {other:?}"),
    }
    assert_eq!(replica.log().log_end_offset(), 0);
    let info = replica.append_replica(entries(0, 3), 0).await.unwrap();
    assert_eq!((info.base_offset, info.last_offset), (0, 2));
    // Durable and announced when it returns.
    assert_eq!(replica.log().durable_offset(), 3);
    assert_eq!(signal.borrow_and_update().durable, 3);
    let info = replica.append_replica(entries(3, 5), 3).await.unwrap();
    assert_eq!((info.base_offset, info.last_offset), (3, 4));
    match replica.append_replica(entries(3, 5), 3).await {
        Err(ReplicaAppendError::OffsetMismatch { log_end, .. }) => assert_eq!(log_end, 5),
        other => panic!("expected an offset mismatch, got {other:?}"),
    }
    let copied = replica.read(0, 100, 1 << 20).await.unwrap();
    assert_eq!(copied, stored);
    // No producer state while following...
    assert!(replica.writer.lock().await.get("p").is_none());
    // ...until the partition is rebuilt from its log (promotion).
    node.broker
        .topics
        .reset_partition("copy", 0, None)
        .await
        .unwrap();
    match replica.append_replica(entries(0, 1), 5).await {
        Err(ReplicaAppendError::Closed) => {}
        other => panic!("expected the old generation closed, got {other:?}"),
    }
    let promoted = node.partition("copy", 0);
    assert_eq!(promoted.log().log_end_offset(), 5);
    let producer = promoted.writer.lock().await.get("p").unwrap();
    assert_eq!((producer.last_seq, producer.last_offset), (5, 4));
    let ack = c
        .ok(
            "PUBLISH topic=copy partition=0 acks=all producerId=p seqNum=5 epoch=0 \
             isIdempotent=true message=m5-padding-padding-padding",
        )
        .await;
    assert_eq!(last_offset(&ack), 4, "deduplicated from the copied log");

    let e = node
        .broker
        .topics
        .reset_partition("copy", 3, None)
        .await
        .unwrap_err();
    assert_eq!(e.code, "partition_not_found");
    let e = node
        .broker
        .topics
        .reset_partition("missing", 0, None)
        .await
        .unwrap_err();
    assert_eq!(e.code, "topic_not_found");
    drop(c);
    node.stop().await;
}
