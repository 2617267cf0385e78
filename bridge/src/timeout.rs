//! The one timeout contract, in every language.
//!
//! `flush` and `close` default to [`DEFAULT`] (30 s) and may be told to wait
//! without limit; `poll` has no default. Across the C ABI and JNI a timeout
//! is a number of milliseconds with two reserved values:
//!
//! | ms | meaning |
//! |---|---|
//! | `>= 0` | that many milliseconds |
//! | [`NO_LIMIT`] (`-1`) | wait until done |
//! | [`USE_DEFAULT`] (`-2`) | 30 s for `flush`/`close` (invalid for `poll`) |
//!
//! Any other negative value is an `invalid_argument` error. [`DEFAULT`]
//! is the only definition of the 30 s: every binding passes the marker
//! ([`USE_DEFAULT`]) for it (C `CURSUS_DEFAULT_TIMEOUT`, C++
//! `cursus::default_timeout`, Python `cursus.DEFAULT_TIMEOUT` and a left-out
//! `timeout`, Java `close()`/`flush()`, Go a context without deadline), and
//! asks `default_timeout_ms` (`crate::api::library`) where it needs the
//! number (Go slicing a cancellable flush). Python maps `None` to no limit;
//! Java `Duration`s at or above `Long.MAX_VALUE` ms mean no limit.

use cursus::{Error, Result};
use std::time::Duration;

/// The default of `flush` and `close`.
pub const DEFAULT: Duration = cursus::blocking::DEFAULT_TIMEOUT;
/// Milliseconds meaning "no limit".
pub const NO_LIMIT: i64 = -1;
/// Milliseconds meaning "the default" (30 s).
pub const USE_DEFAULT: i64 = -2;

/// A `flush`/`close` timeout from milliseconds (`None`: no limit).
pub fn with_default(ms: i64) -> Result<Option<Duration>> {
    match ms {
        USE_DEFAULT => Ok(Some(DEFAULT)),
        _ => required(ms),
    }
}

/// A timeout without default (`poll`) from milliseconds (`None`: no limit).
pub fn required(ms: i64) -> Result<Option<Duration>> {
    match ms {
        NO_LIMIT => Ok(None),
        ms if ms >= 0 => Ok(Some(Duration::from_millis(ms as u64))),
        ms => Err(Error::invalid_argument(format!(
            "timeout_ms must be >= 0, -1 (no limit) or -2 (the default), got {ms}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_values() {
        assert_eq!(with_default(-2).unwrap(), Some(Duration::from_secs(30)));
        assert_eq!(with_default(-1).unwrap(), None);
        assert_eq!(with_default(0).unwrap(), Some(Duration::ZERO));
        assert_eq!(required(250).unwrap(), Some(Duration::from_millis(250)));
        assert!(required(-2).is_err(), "poll has no default");
        assert!(with_default(-3).is_err());
    }
}
