//! Background upkeep of the coordinator: open transactions past their
//! deadline (`transaction_timeout_ms`) are aborted with markers, prepared
//! ones left unfinished past it are finished as decided, and
//! completed transactions older than `transactional_id_expiration_ms` keep
//! only a tombstone (producer id and epoch).

use std::time::Duration;

use tracing::{info, warn};

use super::coordinator::now_ms;
use super::state::TxnSnapshot;
use crate::broker::Broker;

/// How often the pass runs: a quarter of the transaction timeout, between
/// 10 ms and 1 s (commands also abort overdue transactions lazily).
pub fn check_interval(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// One pass over every transactional id.
pub async fn expire(broker: &Broker) {
    let txns = &broker.txns;
    let expiration = txns.settings().transactional_id_expiration.as_millis() as u64;
    let now = now_ms();
    for s in txns.snapshots() {
        // In a cluster only the id's coordinator acts on it.
        let due = (overdue(&s, now) || stale(&s, now, expiration))
            && txns.coordinates(&s.transactional_id);
        if !due {
            continue;
        }
        let Some(mut guard) = txns.lock_id(&s.transactional_id).await else {
            continue;
        };
        let Some(current) = guard.as_mut() else {
            continue;
        };
        let now = now_ms();
        if overdue(current, now) {
            if let Err(e) = txns.finish_unresolved(broker, current, "timeout").await {
                warn!(transactional_id = %current.transactional_id, state = %current.state, error = %e, "finishing the transaction past its deadline failed; retrying later");
            }
        } else if stale(current, now, expiration) {
            let tombstone = TxnSnapshot {
                messages: 0,
                participants: Default::default(),
                offsets: None,
                stream_appends: Default::default(),
                expired: true,
                updated_ms: now,
                ..current.clone()
            };
            match txns.replace(current, tombstone).await {
                Ok(()) => {
                    info!(transactional_id = %current.transactional_id, "transactional id expired")
                }
                Err(e) => {
                    warn!(transactional_id = %current.transactional_id, error = %e, "expiration failed")
                }
            }
        }
    }
}

/// Unresolved past its deadline: open (aborted), or prepared and left
/// unfinished, e.g. by a client that gave up after a marker could not be
/// written (finished as decided; until then its records hold every
/// participant's stable offset).
fn overdue(s: &TxnSnapshot, now: u64) -> bool {
    !s.expired && s.state.is_unresolved() && s.deadline_ms > 0 && now >= s.deadline_ms
}

/// Completed longer than the expiration ago. (An initialised epoch that
/// never began a transaction has nothing to discard and stays usable.)
fn stale(s: &TxnSnapshot, now: u64, expiration: u64) -> bool {
    !s.expired && s.state.is_complete() && now >= s.updated_ms.saturating_add(expiration)
}
