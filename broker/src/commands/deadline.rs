//! The point of no return of a request against its processing deadline
//! (docs/standalone-rules.md "request_timeout outcomes").
//!
//! The connection runs every request inside [`scope`] with a fresh
//! [`Deadline`]. A mutating handler calls [`point_of_no_return`] right before
//! it starts changing state; when the request timeout fires, the connection
//! calls [`Deadline::expire`]. Both are one compare-and-swap on the same
//! state, so exactly one of them wins:
//!
//! * the deadline won: the handler has not applied anything and never will
//!   (its `point_of_no_return` fails, or its future is dropped before it
//!   gets there): `request_timeout outcome=not_accepted`;
//! * the handler won: it may have applied: `outcome=unknown`.
//!
//! Read-only commands never call it, so their timeouts are always
//! `not_accepted`. Mutating commands whose handler has no precise point
//! (see [`super::execute`]) pass it before the handler starts.

use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use cursus_wire::ErrorPayload;

const OPEN: u8 = 0;
const APPLYING: u8 = 1;
const EXPIRED: u8 = 2;

/// What a timed-out request's client is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing was applied.
    NotAccepted,
    /// The request may have been applied.
    Unknown,
}

impl Outcome {
    /// The `outcome=` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::NotAccepted => "not_accepted",
            Outcome::Unknown => "unknown",
        }
    }

    /// `ERROR: request_timeout outcome=<…>`.
    pub fn error(self) -> ErrorPayload {
        ErrorPayload::new("request_timeout").with_field("outcome", self.as_str())
    }
}

/// One request's race between its handler and its timeout.
#[derive(Debug, Clone, Default)]
pub struct Deadline(Arc<AtomicU8>);

impl Deadline {
    /// A deadline nobody has passed yet.
    pub fn new() -> Deadline {
        Deadline::default()
    }

    /// The handler side: `Ok` when the handler may apply (also when it
    /// already passed), `request_timeout outcome=not_accepted` when the
    /// deadline won.
    pub fn pass(&self) -> Result<(), ErrorPayload> {
        match self
            .0
            .compare_exchange(OPEN, APPLYING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(APPLYING) => Ok(()),
            Err(_) => Err(Outcome::NotAccepted.error()),
        }
    }

    /// The timeout side: the outcome to report.
    pub fn expire(&self) -> Outcome {
        match self
            .0
            .compare_exchange(OPEN, EXPIRED, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(EXPIRED) => Outcome::NotAccepted,
            Err(_) => Outcome::Unknown,
        }
    }
}

tokio::task_local! {
    static CURRENT: Deadline;
}

/// Runs `request` (a dispatch) with `deadline` as its deadline.
pub async fn scope<F: Future>(deadline: Deadline, request: F) -> F::Output {
    CURRENT.scope(deadline, request).await
}

/// Called by a mutating handler right before it changes state: fails with
/// `request_timeout outcome=not_accepted` when the request's deadline has
/// already won. Outside a request scope (tests, background work) it always
/// passes.
pub fn point_of_no_return() -> Result<(), ErrorPayload> {
    CURRENT.try_with(Deadline::pass).unwrap_or(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_side_wins() {
        let d = Deadline::new();
        assert!(d.pass().is_ok());
        assert!(d.pass().is_ok());
        assert_eq!(d.expire(), Outcome::Unknown);

        let d = Deadline::new();
        assert_eq!(d.expire(), Outcome::NotAccepted);
        let e = d.pass().unwrap_err();
        assert_eq!(e.code, "request_timeout");
        assert_eq!(e.fields["outcome"], "not_accepted");
        assert_eq!(d.expire(), Outcome::NotAccepted);
    }

    #[tokio::test]
    async fn the_scope_carries_the_deadline() {
        assert!(point_of_no_return().is_ok());
        let d = Deadline::new();
        d.expire();
        let inner = scope(d, async { point_of_no_return() }).await;
        assert!(inner.is_err());
    }
}
