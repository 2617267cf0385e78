//! The rebalance listener: what the application is told when its
//! assignment changes, and where that runs.
//!
//! The listener runs on a thread of the consumer's own (a
//! [`Dispatcher`]), never on an engine I/O thread, while `poll` waits for
//! it with the consumer's state unlocked: so the listener may call the
//! consumer again (`commit_sync`, `seek`, `pause`, `position`, ...), but
//! not `poll` (a blocking poll from there fails with `invalid_argument`).

use crate::dispatch::Dispatcher;
use crate::protocol::group::TopicPartition;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A change of a consumer's assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RebalanceEvent {
    /// These partitions were added to the assignment. Told after every
    /// join of the group (possibly with an empty list), before any record
    /// of them is returned; `seek`, `pause` and `position` work on them
    /// here.
    Assigned(Vec<TopicPartition>),
    /// These partitions are being taken away while this consumer is still
    /// a member: by `close`, by a new `subscribe`, or by a rebalance the
    /// broker started. Told before the consumer lets go of them; on
    /// `close` and `subscribe` a commit here still succeeds. When the
    /// broker moved them to another member, it has already fenced this
    /// member's generation for them (the coordinator reassigns at once,
    /// spec §6): their records returned but not committed will be
    /// delivered again to the new owner.
    Revoked(Vec<TopicPartition>),
    /// The session expired (or the member was removed): these partitions
    /// were lost without a chance to commit; the new member starts over.
    Lost(Vec<TopicPartition>),
}

impl RebalanceEvent {
    /// The partitions the event is about.
    pub fn partitions(&self) -> &[TopicPartition] {
        match self {
            RebalanceEvent::Assigned(p) | RebalanceEvent::Revoked(p) | RebalanceEvent::Lost(p) => p,
        }
    }

    /// `"assigned"`, `"revoked"` or `"lost"`.
    pub fn kind(&self) -> &'static str {
        match self {
            RebalanceEvent::Assigned(_) => "assigned",
            RebalanceEvent::Revoked(_) => "revoked",
            RebalanceEvent::Lost(_) => "lost",
        }
    }
}

/// A rebalance listener: called once per event, one at a time.
pub type RebalanceListener = Arc<dyn Fn(&RebalanceEvent) + Send + Sync + 'static>;

/// How a listener is told that partitions were lost: the one rule for the
/// bindings whose listeners have a callback per kind (a listener without a
/// lost callback gets a loss as a revocation, as Kafka's clients do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LostDelivery {
    /// As [`RebalanceEvent::Lost`]: the listener has a lost callback.
    #[default]
    AsLost,
    /// As [`RebalanceEvent::Revoked`]: the listener has no lost callback.
    AsRevoked,
}

impl LostDelivery {
    /// The event a listener with this delivery is told for `event`.
    fn deliver(self, event: RebalanceEvent) -> RebalanceEvent {
        match (self, event) {
            (LostDelivery::AsRevoked, RebalanceEvent::Lost(p)) => RebalanceEvent::Revoked(p),
            (_, event) => event,
        }
    }
}

/// The listener slot and the thread it runs on.
pub(super) struct Listeners {
    listener: Mutex<Option<(RebalanceListener, LostDelivery)>>,
    dispatcher: Dispatcher,
    /// Set while the listener runs: a `close` or `subscribe` the listener
    /// itself makes would otherwise wait for the listener to return.
    busy: Arc<AtomicBool>,
}

impl Listeners {
    pub fn new() -> Listeners {
        Listeners {
            listener: Mutex::new(None),
            dispatcher: Dispatcher::new("cursus-rebalance"),
            busy: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn set(&self, listener: Option<RebalanceListener>, lost: LostDelivery) {
        *self.listener.lock().unwrap_or_else(|p| p.into_inner()) = listener.map(|l| (l, lost));
    }

    pub fn is_set(&self) -> bool {
        self.listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// True on the listener's thread (inside the listener).
    pub fn is_current_thread(&self) -> bool {
        self.dispatcher.is_current_thread()
    }

    /// Runs the listener (if any) with `event` on the listener thread and
    /// waits until it returned. A panicking listener is logged by the
    /// dispatcher; the consumer goes on. Skipped while the listener runs
    /// (a call it made itself).
    pub async fn tell(&self, event: RebalanceEvent) {
        if self.busy.load(Ordering::SeqCst) {
            tracing::debug!(
                kind = event.kind(),
                "rebalance listener busy; not told again"
            );
            return;
        }
        let Some((listener, lost)) = self
            .listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        else {
            return;
        };
        let event = lost.deliver(event);
        tracing::debug!(
            kind = event.kind(),
            partitions = event.partitions().len(),
            "rebalance listener"
        );
        let (done, returned) = tokio::sync::oneshot::channel::<()>();
        let busy = Arc::clone(&self.busy);
        busy.store(true, Ordering::SeqCst);
        self.dispatcher.run(move || {
            // Cleared even if the listener panics (the dispatcher goes on).
            struct Clear(Arc<AtomicBool>);
            impl Drop for Clear {
                fn drop(&mut self) {
                    self.0.store(false, Ordering::SeqCst);
                }
            }
            {
                let _clear = Clear(busy);
                listener(&event);
            }
            // Only now: a poll woken by `done` may tell the next event at
            // once, and must not find the listener still marked busy.
            let _ = done.send(());
        });
        let _ = returned.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_is_told_as_a_revocation_to_a_listener_without_a_lost_callback() {
        let lost = || RebalanceEvent::Lost(vec![TopicPartition::new("t", 1)]);
        let revoked = RebalanceEvent::Revoked(vec![TopicPartition::new("t", 1)]);
        assert_eq!(LostDelivery::AsRevoked.deliver(lost()), revoked);
        assert_eq!(LostDelivery::AsLost.deliver(lost()), lost());
        assert_eq!(LostDelivery::AsRevoked.deliver(revoked.clone()), revoked);
        let assigned = RebalanceEvent::Assigned(vec![]);
        assert_eq!(LostDelivery::AsRevoked.deliver(assigned.clone()), assigned);
    }
}
