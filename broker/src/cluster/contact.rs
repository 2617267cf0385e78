//! A broker's contact with the Raft leader, as a lease: the coordinators
//! here may answer only while this broker's copy of the replicated state
//! is known to be recent.
//!
//! A broker paused past its session (SIGSTOP, a VM freeze) or cut off from
//! the Raft leader wakes with a copy that still names it the coordinator
//! of groups that moved meanwhile, with the committed offsets of before.
//! Its heartbeats tell it: each acknowledged one carries the leader's
//! applied index, and the broker is *in contact* while some heartbeat sent
//! less than a session timeout ago has an index this broker has applied.
//! The Raft leader marks a broker inactive (moving its groups) only after
//! a session timeout without a heartbeat, so a broker in contact has not
//! been deposed behind its back; one that lost contact refuses until it
//! heard from the leader again and caught up with what the leader had
//! applied then. (The Raft leader confirms its own leadership with a
//! quorum instead of a heartbeat.)

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The Raft leader's answer to HEARTBEAT_CLUSTER.
#[derive(Debug, Serialize, Deserialize)]
pub struct HeartbeatAnswer {
    /// The leader's applied log index when it answered.
    pub applied: u64,
}

impl HeartbeatAnswer {
    /// Decodes an answer. A broker of before the lease answers `OK`
    /// without an index: taken as index 0 (in contact, without the
    /// catching-up guarantee), so that a mixed-version cluster keeps its
    /// coordinators during a rolling upgrade.
    pub fn decode(body: &[u8]) -> Option<HeartbeatAnswer> {
        if body == b"OK" {
            return Some(HeartbeatAnswer { applied: 0 });
        }
        serde_json::from_slice(body).ok()
    }

    /// The encoded answer.
    pub fn encode(&self) -> bytes::Bytes {
        bytes::Bytes::from(serde_json::to_vec(self).unwrap_or_default())
    }
}

/// The acknowledged contacts of the last lease period.
#[derive(Debug)]
pub struct Contact {
    /// How long an acknowledged contact counts (the session timeout).
    lease: Duration,
    /// (when the contact was sent, the leader's applied index), oldest first.
    acks: Mutex<VecDeque<(Instant, u64)>>,
}

impl Contact {
    /// No contact yet; each one counts for `lease`.
    pub fn new(lease: Duration) -> Contact {
        Contact {
            lease,
            acks: Mutex::new(VecDeque::new()),
        }
    }

    /// A contact sent at `sent` was acknowledged with the leader's applied
    /// index `index`.
    pub fn acknowledged(&self, sent: Instant, index: u64) {
        let mut acks = self.lock();
        acks.push_back((sent, index));
        let lease = self.lease;
        acks.retain(|(at, _)| at.elapsed() < lease);
    }

    /// True when a contact sent less than a lease ago has an index at most
    /// `applied` (this broker's applied index).
    pub fn fresh(&self, applied: u64) -> bool {
        self.lock()
            .iter()
            .any(|(at, index)| at.elapsed() < self.lease && *index <= applied)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(Instant, u64)>> {
        self.acks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_once_caught_up_with_a_recent_contact() {
        let c = Contact::new(Duration::from_secs(60));
        assert!(!c.fresh(100), "no contact yet");
        c.acknowledged(Instant::now(), 10);
        assert!(!c.fresh(9), "behind the leader's index");
        assert!(c.fresh(10));
        // A later contact the broker has not caught up with yet does not
        // take the earlier one's lease away.
        c.acknowledged(Instant::now(), 20);
        assert!(c.fresh(15));
    }

    #[test]
    fn a_contact_older_than_the_lease_does_not_count() {
        let c = Contact::new(Duration::from_millis(50));
        let long_ago = Instant::now() - Duration::from_millis(100);
        c.acknowledged(long_ago, 0);
        assert!(!c.fresh(u64::MAX), "a paused broker woke");
        c.acknowledged(Instant::now(), 5);
        assert!(c.fresh(5));
        assert_eq!(c.lock().len(), 1, "the expired contact was dropped");
    }

    #[test]
    fn answers_decode_old_and_new() {
        assert_eq!(HeartbeatAnswer::decode(b"OK").unwrap().applied, 0);
        let a = HeartbeatAnswer { applied: 42 }.encode();
        assert_eq!(HeartbeatAnswer::decode(&a).unwrap().applied, 42);
        assert!(HeartbeatAnswer::decode(b"garbage").is_none());
    }
}
