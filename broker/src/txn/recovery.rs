//! Startup recovery, run before the broker reports ready: the journal was
//! replayed and every partition's transaction index rebuilt from its log
//! when the broker opened; this finishes what a crash interrupted.
//!
//! * `prepare_commit`: the commit is finished — commit markers only where
//!   missing, the `committed` decision, the offsets;
//! * `open` and `prepare_abort`: aborted (abort markers where missing,
//!   `aborted`); the producer's connection is gone, and keeping the
//!   transaction open would hold every read_committed reader;
//! * `committed`: offsets re-materialized (idempotent: max with what is
//!   committed);
//! * transactional records in a partition that no coordinator transaction
//!   accounts for (none can be resolved otherwise) get an abort marker.

use std::collections::HashSet;

use cursus_wire::ErrorPayload;
use tracing::{info, warn};

use super::append::{append_marker, release};
use super::markers::MarkerKind;
use super::state::TxnState;
use crate::broker::Broker;

/// Runs recovery; an error leaves the broker not ready.
pub async fn recover(broker: &Broker) -> Result<(), ErrorPayload> {
    let txns = &broker.txns;
    let mut unresolved = HashSet::new();
    let (mut committed, mut aborted) = (0usize, 0usize);
    for snapshot in txns.snapshots() {
        let id = snapshot.transactional_id.clone();
        let Some(mut guard) = txns.lock_id(&id).await else {
            continue;
        };
        let Some(current) = guard.as_mut() else {
            continue;
        };
        if current.expired {
            continue;
        }
        match current.state {
            TxnState::Committed => txns.finish_committed(broker, current).await?,
            TxnState::Aborted | TxnState::Empty => {}
            TxnState::Open | TxnState::PrepareCommit | TxnState::PrepareAbort => {
                txns.finish_unresolved(broker, current, "recovery").await?;
                match current.state {
                    TxnState::Committed => committed += 1,
                    _ => aborted += 1,
                }
            }
        }
        if current.state.is_unresolved() {
            unresolved.insert((current.producer_id.clone(), current.epoch));
        }
    }
    let orphans = abort_orphans(broker, &unresolved).await?;
    info!(committed, aborted, orphans, "transaction recovery finished");
    Ok(())
}

/// Writes abort markers for unresolved transactional records that no
/// coordinator transaction will resolve.
async fn abort_orphans(
    broker: &Broker,
    unresolved: &HashSet<(String, i64)>,
) -> Result<usize, ErrorPayload> {
    let mut count = 0;
    for topic in broker.topics.list() {
        for partition in &topic.partitions {
            let ongoing = partition.with_txn_index(|ix| ix.ongoing());
            for o in ongoing {
                if unresolved.contains(&(o.producer_id.clone(), o.epoch)) {
                    continue;
                }
                warn!(
                    topic = %topic.def.name,
                    partition = partition.id(),
                    producer_id = %o.producer_id,
                    epoch = o.epoch,
                    transactional_id = %o.transactional_id,
                    "aborting transactional records no transaction accounts for"
                );
                append_marker(
                    &broker.topics,
                    &topic.def.name,
                    partition.id(),
                    &o.transactional_id,
                    &o.producer_id,
                    o.epoch,
                    MarkerKind::Abort,
                )
                .await?;
                release(
                    &broker.topics,
                    &topic.def.name,
                    partition.id(),
                    &o.producer_id,
                    o.epoch,
                );
                count += 1;
            }
        }
    }
    Ok(count)
}
