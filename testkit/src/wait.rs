//! Waiting for a condition that no event announces (a broker becoming
//! ready, a replicated change reaching another member, a background pass
//! having run): probe it every [`POLL_INTERVAL`] until it holds or the
//! timeout passes, and then fail saying what was awaited and what the
//! probe saw last.
//!
//! A probe returns a [`Probe`]: `bool`, `Option<T>` (the value once it is
//! there) or `Result<T, E>` (`Err` says what was seen instead). Use
//! [`eventually`] from synchronous code and
//! [`eventually_async!`](crate::eventually_async) where the probe awaits;
//! [`poll_until`] and [`poll_until_async!`](crate::poll_until_async) where
//! a timeout is an outcome rather than a failure.
//!
//! ```no_run
//! use std::time::Duration;
//! # fn ready() -> bool { true }
//! # fn leader() -> Result<String, String> { Ok("b1".into()) }
//! cursus_testkit::eventually(Duration::from_secs(30), "the broker is ready", ready);
//! let leader = cursus_testkit::eventually(Duration::from_secs(30), "a leader", leader);
//! ```

use std::fmt::Debug;
use std::time::{Duration, Instant};

/// How long a wait sleeps between two probes.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// What one probe found: the awaited value, or what it saw instead.
pub trait Probe {
    /// What the wait returns once the condition holds.
    type Value;
    /// The value, or a description of what was seen instead.
    fn found(self) -> Result<Self::Value, String>;
}

impl Probe for bool {
    type Value = ();

    fn found(self) -> Result<(), String> {
        self.then_some(()).ok_or_else(|| "false".to_owned())
    }
}

impl<T> Probe for Option<T> {
    type Value = T;

    fn found(self) -> Result<T, String> {
        self.ok_or_else(|| "nothing yet".to_owned())
    }
}

impl<T, E: Debug> Probe for Result<T, E> {
    type Value = T;

    fn found(self) -> Result<T, String> {
        self.map_err(|seen| format!("{seen:?}"))
    }
}

/// One wait: its deadline and what it waits for.
#[derive(Debug)]
pub struct Wait {
    what: String,
    timeout: Duration,
    deadline: Instant,
}

impl Wait {
    /// A wait for `what` that fails once `timeout` has passed.
    pub fn new(timeout: Duration, what: impl Into<String>) -> Wait {
        Wait {
            what: what.into(),
            timeout,
            deadline: Instant::now() + timeout,
        }
    }

    /// The probe's value, or `Err` with what it saw when the timeout has
    /// passed, or `Ok(None)`: probe again.
    pub fn try_check<P: Probe>(&self, probe: P) -> Result<Option<P::Value>, String> {
        match probe.found() {
            Ok(value) => Ok(Some(value)),
            Err(seen) if Instant::now() >= self.deadline => Err(seen),
            Err(_) => Ok(None),
        }
    }

    /// The probe's value, or `None`: probe again. Panics, naming what was
    /// awaited and what the probe saw, once the timeout has passed.
    pub fn check<P: Probe>(&self, probe: P) -> Option<P::Value> {
        self.try_check(probe).unwrap_or_else(|seen| {
            panic!(
                "timed out after {:?} waiting for {}; last seen: {seen}",
                self.timeout, self.what
            )
        })
    }
}

/// Probes until `probe` finds its value, which is returned; panics with
/// `what` and the last observation once `timeout` has passed.
pub fn eventually<P: Probe>(
    timeout: Duration,
    what: &str,
    mut probe: impl FnMut() -> P,
) -> P::Value {
    let wait = Wait::new(timeout, what);
    loop {
        if let Some(value) = wait.check(probe()) {
            return value;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Probes until `probe` finds its value (`Ok`) or `timeout` has passed
/// (`Err` with the last observation).
pub fn poll_until<P: Probe>(
    timeout: Duration,
    mut probe: impl FnMut() -> P,
) -> Result<P::Value, String> {
    let wait = Wait::new(timeout, "");
    loop {
        if let Some(value) = wait.try_check(probe())? {
            return Ok(value);
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Sleeps one [`POLL_INTERVAL`] on the tokio runtime (between the probes of
/// [`eventually_async!`](crate::eventually_async)).
pub async fn pause() {
    tokio::time::sleep(POLL_INTERVAL).await;
}

/// [`eventually`] for a probe that awaits: `eventually_async!(timeout,
/// what, async { ... })` evaluates the block anew for every probe (so it
/// may borrow the test's clients mutably) until it finds its value, which
/// the macro evaluates to; panics with `what` and the last observation
/// once `timeout` has passed.
///
/// ```no_run
/// # async fn example(mut count: impl FnMut() -> u32) {
/// use std::time::Duration;
/// let n = cursus_testkit::eventually_async!(Duration::from_secs(30), "two records", async {
///     let n = count();
///     if n >= 2 { Ok(n) } else { Err(n) }
/// });
/// # }
/// ```
#[macro_export]
macro_rules! eventually_async {
    ($timeout:expr, $what:expr, $probe:expr $(,)?) => {{
        let wait = $crate::Wait::new($timeout, $what);
        loop {
            if let ::std::option::Option::Some(value) = wait.check($probe.await) {
                break value;
            }
            $crate::pause().await;
        }
    }};
}

/// [`poll_until`] for a probe that awaits: `poll_until_async!(timeout,
/// async { ... })` evaluates to `Ok` with the value the block found, or to
/// `Err` with its last observation once `timeout` has passed.
#[macro_export]
macro_rules! poll_until_async {
    ($timeout:expr, $probe:expr $(,)?) => {{
        let wait = $crate::Wait::new($timeout, "");
        loop {
            match wait.try_check($probe.await) {
                ::std::result::Result::Ok(::std::option::Option::Some(value)) => {
                    break ::std::result::Result::Ok(value)
                }
                ::std::result::Result::Ok(::std::option::Option::None) => $crate::pause().await,
                ::std::result::Result::Err(seen) => break ::std::result::Result::Err(seen),
            }
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_the_value_once_the_probe_finds_it() {
        let mut calls = 0;
        let value = eventually(Duration::from_secs(5), "the third call", || {
            calls += 1;
            (calls == 3).then_some(calls * 10)
        });
        assert_eq!((value, calls), (30, 3));
        eventually(Duration::from_secs(5), "true", || true);
    }

    #[test]
    fn a_timeout_names_what_was_awaited_and_the_last_observation() {
        let failed = std::panic::catch_unwind(|| {
            eventually(Duration::from_millis(50), "a miracle", || {
                Err::<(), _>("still 7")
            })
        });
        let message = *failed.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains("waiting for a miracle"), "{message}");
        assert!(message.contains("last seen: \"still 7\""), "{message}");
    }

    #[test]
    fn poll_until_reports_a_timeout_as_a_value() {
        assert_eq!(
            poll_until(Duration::from_millis(30), || None::<u8>),
            Err("nothing yet".into())
        );
        assert_eq!(poll_until(Duration::from_millis(30), || Some(4)), Ok(4));
    }

    #[test]
    fn the_async_probe_may_borrow_mutably() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut seen = Vec::new();
        let n = rt.block_on(async {
            eventually_async!(Duration::from_secs(5), "three probes", async {
                seen.push(seen.len());
                if seen.len() == 3 {
                    Ok(seen.len())
                } else {
                    Err(seen.len())
                }
            })
        });
        assert_eq!((n, seen), (3, vec![0, 1, 2]));
        let timed_out: Result<(), String> = rt.block_on(async {
            poll_until_async!(Duration::from_millis(30), async { Err::<(), _>("never") })
        });
        assert_eq!(timed_out, Err("\"never\"".into()));
    }
}
