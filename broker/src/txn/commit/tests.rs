//! The commit protocol against participants that fail on cue: a
//! standalone broker whose [`Participants`] are the local ones with
//! scripted failures of the group fence and of marker writes, the faults
//! a cluster meets (an unreachable group coordinator or partition leader)
//! and a single broker never does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use cursus_wire::{CommandPayload, ErrorPayload};
use tokio_util::sync::CancellationToken;

use crate::broker::Broker;
use crate::config::Config;
use crate::placement::{BoxFuture, Mode, Standalone};
use crate::topics::TopicPatch;
use crate::txn::append::{Appended, TxnEvent, TxnRecord};
use crate::txn::expiry::expire;
use crate::txn::markers::MarkerKind;
use crate::txn::participants::{GroupOffsets, Local, MarkerWrite, Participants, PendingConflict};
use crate::txn::requests::{OffsetsRequest, PublishRequest};
use crate::txn::state::{EndResult, TxnState};

/// The standalone participants the scripted ones delegate to.
const LOCAL: &Local = &Local;

/// [`Local`] with scripted failures. The group is not a real one: its
/// fence passes unless a failure is scripted for that check, and
/// materializing its offsets does nothing.
#[derive(Debug, Default)]
struct Scripted {
    /// Group fence checks so far (SEND_OFFSETS_TO_TXN is the first).
    checks: AtomicU32,
    /// The error of the n-th fence check (1-based).
    fence_failures: Mutex<HashMap<u32, ErrorPayload>>,
    /// Marker writes that fail once: partition, kind, error.
    marker_failures: Mutex<Vec<(u32, MarkerKind, ErrorPayload)>>,
}

impl Participants for Scripted {
    fn data<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        rec: &'a TxnRecord<'a>,
    ) -> BoxFuture<'a, Result<Appended, ErrorPayload>> {
        LOCAL.data(broker, topic, partition, rec)
    }

    fn event<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        ev: &'a TxnEvent<'a>,
    ) -> BoxFuture<'a, Result<Appended, ErrorPayload>> {
        LOCAL.event(broker, topic, partition, ev)
    }

    fn marker<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        marker: MarkerWrite<'a>,
    ) -> BoxFuture<'a, Result<bool, ErrorPayload>> {
        let mut failures = self.marker_failures.lock().unwrap();
        let failure = failures
            .iter()
            .position(|(p, kind, _)| *p == partition && *kind == marker.kind)
            .map(|i| failures.remove(i).2);
        drop(failures);
        match failure {
            Some(e) => Box::pin(async move { Err(e) }),
            None => LOCAL.marker(broker, topic, partition, marker),
        }
    }

    fn release<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        producer_id: &'a str,
        epoch: i64,
    ) -> BoxFuture<'a, ()> {
        LOCAL.release(broker, topic, partition, producer_id, epoch)
    }

    fn check_pending<'a>(
        &'a self,
        broker: &'a Broker,
        topic: &'a str,
        partition: u32,
        producer_id: &'a str,
        epoch: i64,
    ) -> BoxFuture<'a, Result<Option<PendingConflict>, ErrorPayload>> {
        LOCAL.check_pending(broker, topic, partition, producer_id, epoch)
    }

    fn validate_offsets<'a>(
        &'a self,
        _: &'a Broker,
        _: GroupOffsets<'a>,
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        let n = self.checks.fetch_add(1, Ordering::SeqCst) + 1;
        let failure = self.fence_failures.lock().unwrap().remove(&n);
        Box::pin(async move { failure.map_or(Ok(()), Err) })
    }

    fn materialize_offsets<'a>(
        &'a self,
        _: &'a Broker,
        _: &'a str,
        _: &'a [(String, u32, u64)],
    ) -> BoxFuture<'a, Result<(), ErrorPayload>> {
        Box::pin(async { Ok(()) })
    }
}

/// A broker on `dir` with the scripted participants and a two-partition
/// topic `out`.
async fn broker(dir: &std::path::Path, scripted: Arc<Scripted>) -> Broker {
    broker_with_timeout(dir, scripted, Config::default().transaction_timeout).await
}

/// [`broker`] with `transaction_timeout`.
async fn broker_with_timeout(
    dir: &std::path::Path,
    scripted: Arc<Scripted>,
    transaction_timeout: Duration,
) -> Broker {
    let config = Config {
        data_dir: dir.join("data"),
        transaction_timeout,
        ..Config::default()
    };
    let broker = Broker::open(
        config,
        "127.0.0.1:9000".into(),
        None,
        Default::default(),
        CancellationToken::new(),
    )
    .expect("a broker opens on an empty data directory");
    broker.install(Mode {
        placement: Arc::new(Standalone),
        catalog: Arc::new(Standalone),
        participants: scripted,
        admin: None,
    });
    let (_, p) = CommandPayload::parse_line("CREATE topic=out partitions=2").unwrap();
    broker
        .topics
        .create(&TopicPatch::parse(&p).unwrap())
        .await
        .unwrap();
    broker
}

/// A transaction `t` with one record in each partition of `out` and
/// offsets of group `g` staged (fence check 1). Returns its session.
async fn open_transaction(broker: &Broker) -> (String, i64) {
    let s = broker.txns.init(broker, "t").await.unwrap();
    let (pid, epoch) = (s.producer_id.clone(), s.epoch);
    broker.txns.begin(broker, "t", &pid, epoch).await.unwrap();
    for partition in 0..2 {
        let (_, appended) = broker
            .txns
            .publish(
                broker,
                &PublishRequest {
                    transactional_id: "t".into(),
                    producer_id: pid.clone(),
                    epoch,
                    seq: 1,
                    topic: "out".into(),
                    partition: Some(partition),
                    key: Bytes::new(),
                    payload: Bytes::from_static(b"result"),
                    metadata: String::new(),
                },
            )
            .await
            .unwrap();
        appended.durable.wait().await.unwrap();
    }
    let offsets = OffsetsRequest {
        transactional_id: "t".into(),
        producer_id: pid.clone(),
        epoch,
        topic: "in".into(),
        group: "g".into(),
        member: "m".into(),
        generation: 1,
        entries: vec![(0, 5)],
    };
    broker.txns.send_offsets(broker, &offsets).await.unwrap();
    (pid, epoch)
}

/// The marker of `(pid, epoch)` in each partition of `out`.
fn markers(broker: &Broker, pid: &str, epoch: i64) -> Vec<Option<MarkerKind>> {
    let topic = broker.topics.get("out").unwrap();
    (0..2)
        .map(|p| {
            topic
                .partition(p)
                .unwrap()
                .with_txn_index(|ix| ix.marker_for(pid, epoch).map(|m| m.kind))
        })
        .collect()
}

async fn state(broker: &Broker) -> TxnState {
    broker.txns.status("t").await.unwrap().state
}

/// The revalidation after `prepare_commit` fails, then one abort marker
/// cannot be written: the abort is journaled before its markers, so the
/// client's retried commit finishes the abort (and is told so) instead of
/// writing a commit marker where an abort marker already is. This is the
/// state a cluster run met: one partition with an abort marker, another
/// with none, and `prepare_commit` journaled; every retry then failed on
/// the abort marker and the partitions' stable offsets never moved.
#[tokio::test]
async fn an_abort_after_prepare_commit_is_journaled_before_its_markers() {
    let dir = tempfile::tempdir().unwrap();
    let scripted = Arc::new(Scripted::default());
    let broker = broker(dir.path(), Arc::clone(&scripted)).await;
    let (pid, epoch) = open_transaction(&broker).await;
    // Check 2 is step 1 (passes), check 3 the revalidation (fails).
    scripted.fence_failures.lock().unwrap().insert(
        3,
        ErrorPayload::new("GEN_MISMATCH").with_field("group", "g"),
    );
    scripted.marker_failures.lock().unwrap().push((
        0,
        MarkerKind::Abort,
        ErrorPayload::new("replication_unavailable").with_field("reason", "leader unreachable"),
    ));

    let e = broker
        .txns
        .end(&broker, "t", &pid, epoch, EndResult::Commit)
        .await
        .unwrap_err();
    assert_eq!(e.code, "transaction_abort_marker_failed", "{e}");
    assert_eq!(state(&broker).await, TxnState::PrepareAbort);
    assert_eq!(
        markers(&broker, &pid, epoch),
        [None, Some(MarkerKind::Abort)]
    );

    let e = broker
        .txns
        .end(&broker, "t", &pid, epoch, EndResult::Commit)
        .await
        .unwrap_err();
    assert_eq!(e.code, "transaction_aborted", "{e}");
    assert_eq!(state(&broker).await, TxnState::Aborted);
    assert_eq!(
        markers(&broker, &pid, epoch),
        [Some(MarkerKind::Abort), Some(MarkerKind::Abort)]
    );
    // Released: the aborted records no longer hold the stable offsets.
    let topic = broker.topics.get("out").unwrap();
    for p in 0..2 {
        let partition = topic.partition(p).unwrap();
        assert_eq!(partition.stable_offset(), partition.log().log_end_offset());
    }
}

/// A group coordinator that cannot be reached at step 1 decides nothing:
/// the error is returned, the transaction stays open without markers, and
/// the retried commit commits.
#[tokio::test]
async fn an_unreachable_group_at_step_one_leaves_the_transaction_open() {
    let dir = tempfile::tempdir().unwrap();
    let scripted = Arc::new(Scripted::default());
    let broker = broker(dir.path(), Arc::clone(&scripted)).await;
    let (pid, epoch) = open_transaction(&broker).await;
    scripted.fence_failures.lock().unwrap().insert(
        2,
        ErrorPayload::new("coordinator_not_available").with_field("group", "g"),
    );

    let e = broker
        .txns
        .end(&broker, "t", &pid, epoch, EndResult::Commit)
        .await
        .unwrap_err();
    assert_eq!(e.code, "coordinator_not_available", "{e}");
    assert_eq!(state(&broker).await, TxnState::Open);
    assert_eq!(markers(&broker, &pid, epoch), [None, None]);

    let done = broker
        .txns
        .end(&broker, "t", &pid, epoch, EndResult::Commit)
        .await
        .unwrap();
    assert_eq!(done.state, TxnState::Committed);
    assert_eq!(
        markers(&broker, &pid, epoch),
        [Some(MarkerKind::Commit), Some(MarkerKind::Commit)]
    );
}

/// The same failure at the revalidation (after `prepare_commit`) aborts:
/// the commit cannot wait for the group, and a prepared commit that
/// skipped its fence must not be resumed.
#[tokio::test]
async fn an_unreachable_group_at_revalidation_aborts() {
    let dir = tempfile::tempdir().unwrap();
    let scripted = Arc::new(Scripted::default());
    let broker = broker(dir.path(), Arc::clone(&scripted)).await;
    let (pid, epoch) = open_transaction(&broker).await;
    scripted.fence_failures.lock().unwrap().insert(
        3,
        ErrorPayload::new("coordinator_not_available").with_field("group", "g"),
    );

    let e = broker
        .txns
        .end(&broker, "t", &pid, epoch, EndResult::Commit)
        .await
        .unwrap_err();
    assert_eq!(e.code, "coordinator_not_available", "{e}");
    assert_eq!(state(&broker).await, TxnState::Aborted);
    assert_eq!(
        markers(&broker, &pid, epoch),
        [Some(MarkerKind::Abort), Some(MarkerKind::Abort)]
    );
}

/// A prepared transaction whose client gave up after a marker failed is
/// finished as decided by the upkeep pass once past its deadline: until
/// then its records hold both partitions' stable offsets.
#[tokio::test]
async fn prepared_transactions_left_unfinished_are_finished_past_their_deadline() {
    const TIMEOUT: Duration = Duration::from_millis(300);
    for (fence_failure, decided) in [(None, MarkerKind::Commit), (Some(3), MarkerKind::Abort)] {
        let dir = tempfile::tempdir().unwrap();
        let scripted = Arc::new(Scripted::default());
        let broker = broker_with_timeout(dir.path(), Arc::clone(&scripted), TIMEOUT).await;
        let began = std::time::Instant::now();
        let (pid, epoch) = open_transaction(&broker).await;
        if let Some(check) = fence_failure {
            let e = ErrorPayload::new("GEN_MISMATCH").with_field("group", "g");
            scripted.fence_failures.lock().unwrap().insert(check, e);
        }
        let e = ErrorPayload::new("replication_unavailable").with_field("reason", "unreachable");
        scripted
            .marker_failures
            .lock()
            .unwrap()
            .push((0, decided, e));
        broker
            .txns
            .end(&broker, "t", &pid, epoch, EndResult::Commit)
            .await
            .unwrap_err();
        let prepared = match decided {
            MarkerKind::Commit => TxnState::PrepareCommit,
            MarkerKind::Abort => TxnState::PrepareAbort,
        };
        assert_eq!(state(&broker).await, prepared);

        // Not yet due: the client may still retry.
        expire(&broker).await;
        assert_eq!(state(&broker).await, prepared);
        assert_eq!(markers(&broker, &pid, epoch), [None, Some(decided)]);

        // The deadline is wall-clock time from BEGIN_TXN.
        tokio::time::sleep(TIMEOUT.saturating_sub(began.elapsed()) + Duration::from_millis(20))
            .await;
        expire(&broker).await;
        let done = match decided {
            MarkerKind::Commit => TxnState::Committed,
            MarkerKind::Abort => TxnState::Aborted,
        };
        assert_eq!(state(&broker).await, done);
        assert_eq!(
            markers(&broker, &pid, epoch),
            [Some(decided), Some(decided)]
        );
    }
}
