//! The retry policy of the specification: follow routing errors at once,
//! back off on availability errors, and never blindly repeat a request whose
//! outcome is unknown unless repeating it is safe.

use crate::error::{Error, ErrorKind};
use crate::wire::ErrorClass;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Whether repeating a request can change the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotence {
    /// Reads, presence-aware patches, deduplicated publishes: repeating is safe.
    Safe,
    /// Repeating could apply it twice: retry only when it surely was not applied.
    Unsafe,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Retry at once at this address (a routing redirect).
    Redirect(String),
    /// Retry after a backoff, refreshing routing first.
    Backoff,
    /// Give up and return the error.
    Fail,
}

/// Decides how to handle `error`. `sent` is false when the request surely
/// never left this process (e.g. the connection could not be opened).
pub fn decide(error: &Error, sent: bool, idempotence: Idempotence) -> Decision {
    match error.kind() {
        // The broker's deadline passed: it says whether the request was
        // applied (docs/standalone-rules.md). Never applied: always safe to
        // repeat; maybe applied: only when repeating is safe.
        ErrorKind::Broker if error.is_broker_code("request_timeout") => {
            match error.field("outcome") {
                Some("not_accepted") => Decision::Backoff,
                _ if idempotence == Idempotence::Safe => Decision::Backoff,
                _ => Decision::Fail,
            }
        }
        // An elected partition leader still rebuilding its state answers
        // `leader_not_available`, a code the registry does not list (so it
        // arrives as internal and not retryable); it means "not applied,
        // ask again shortly", like `leader_not_found`.
        ErrorKind::Broker if error.is_broker_code("leader_not_available") => Decision::Backoff,
        ErrorKind::Broker => match error.class() {
            // The broker did not apply a request it answered with a
            // routing or availability error: retrying is always allowed.
            ErrorClass::Routing => match redirect_address(error) {
                Some(addr) => Decision::Redirect(addr),
                None => Decision::Backoff,
            },
            ErrorClass::Availability if error.retryable() => Decision::Backoff,
            _ => Decision::Fail,
        },
        ErrorKind::Io | ErrorKind::Timeout => {
            if !sent || idempotence == Idempotence::Safe {
                Decision::Backoff
            } else {
                Decision::Fail
            }
        }
        _ => Decision::Fail,
    }
}

/// The address a routing error points at: `leader=host:port`, or
/// `host=` plus `port=` (NOT_COORDINATOR).
pub fn redirect_address(error: &Error) -> Option<String> {
    if let Some(leader) = error.field("leader").filter(|l| l.contains(':')) {
        return Some(leader.to_owned());
    }
    match (error.field("host"), error.field("port")) {
        (Some(h), Some(p)) if !h.is_empty() && !p.is_empty() => Some(format!("{h}:{p}")),
        _ => None,
    }
}

/// Bounded exponential backoff with full jitter.
#[derive(Debug, Clone)]
pub struct Backoff {
    base: Duration,
    max: Duration,
    attempt: u32,
}

impl Backoff {
    /// Starts at `base`, doubling up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Backoff {
            base,
            max,
            attempt: 0,
        }
    }

    /// The next delay: uniform in [ceiling/2, ceiling], where the ceiling
    /// doubles per attempt up to `max`.
    pub fn next_delay(&mut self) -> Duration {
        let exp = self.base.saturating_mul(1u32 << self.attempt.min(20));
        self.attempt = self.attempt.saturating_add(1);
        let ceiling = exp.min(self.max);
        let half = ceiling / 2;
        half + Duration::from_nanos(random_u64() % (half.as_nanos() as u64 + 1))
    }
}

/// A cheap random number for jitter (no cryptographic use).
fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ErrorPayload;

    #[test]
    fn routing_redirects_and_availability_backs_off() {
        let e: Error = ErrorPayload::new("NOT_LEADER")
            .with_field("leader", "h:9")
            .into();
        assert_eq!(
            decide(&e, true, Idempotence::Unsafe),
            Decision::Redirect("h:9".into())
        );
        let e: Error = ErrorPayload::new("NOT_COORDINATOR")
            .with_field("host", "c")
            .with_field("port", "1")
            .into();
        assert_eq!(
            decide(&e, true, Idempotence::Unsafe),
            Decision::Redirect("c:1".into())
        );
        let e: Error = ErrorPayload::new("coordinator_not_available").into();
        assert_eq!(decide(&e, true, Idempotence::Unsafe), Decision::Backoff);
    }

    #[test]
    fn a_leader_not_yet_serving_is_waited_for() {
        for code in ["leader_not_found", "leader_not_available"] {
            let e: Error = ErrorPayload::new(code).with_field("topic", "t").into();
            assert_eq!(
                decide(&e, true, Idempotence::Unsafe),
                Decision::Backoff,
                "{code}"
            );
        }
    }

    #[test]
    fn fencing_conflict_validation_are_not_retried() {
        for code in [
            "GEN_MISMATCH",
            "offset_regression",
            "invalid_acks",
            "NOT_AUTHORIZED_FOR_TOPIC",
            "topic_not_found",
        ] {
            let e: Error = ErrorPayload::new(code).into();
            assert_eq!(
                decide(&e, true, Idempotence::Safe),
                Decision::Fail,
                "{code}"
            );
        }
    }

    #[test]
    fn unknown_outcome_is_retried_only_when_safe() {
        let e = Error::io("reset");
        assert_eq!(decide(&e, true, Idempotence::Unsafe), Decision::Fail);
        assert_eq!(decide(&e, false, Idempotence::Unsafe), Decision::Backoff);
        assert_eq!(decide(&e, true, Idempotence::Safe), Decision::Backoff);
    }

    #[test]
    fn request_timeout_is_retried_by_its_outcome() {
        let timeout = |outcome: &str| -> Error {
            ErrorPayload::new("request_timeout")
                .with_field("outcome", outcome)
                .into()
        };
        let not_accepted = timeout("not_accepted");
        assert_eq!(
            decide(&not_accepted, true, Idempotence::Unsafe),
            Decision::Backoff
        );
        assert_eq!(
            decide(&not_accepted, true, Idempotence::Safe),
            Decision::Backoff
        );
        let unknown = timeout("unknown");
        assert_eq!(decide(&unknown, true, Idempotence::Unsafe), Decision::Fail);
        assert_eq!(decide(&unknown, true, Idempotence::Safe), Decision::Backoff);
        let unsaid: Error = ErrorPayload::new("request_timeout").into();
        assert_eq!(decide(&unsaid, true, Idempotence::Unsafe), Decision::Fail);
    }

    #[test]
    fn backoff_grows_and_is_bounded() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(1000));
        let delays: Vec<_> = (0..8).map(|_| b.next_delay()).collect();
        assert!(delays[0] >= Duration::from_millis(50) && delays[0] <= Duration::from_millis(100));
        assert!(delays.iter().all(|d| *d <= Duration::from_millis(1000)));
        assert!(delays[7] >= Duration::from_millis(500));
    }
}
