//! Values of the library that a binding reads instead of copying.

use cursus::Result;
use cursus_bridge_macros::bridge_fn;

/// The default wait of `flush` and `close`, in milliseconds (30 000): what
/// the marker `-2` (`CURSUS_DEFAULT_TIMEOUT`) stands for. A binding passes
/// the marker, and asks this only where it needs the number itself (Go
/// slices a cancellable flush into short waits).
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "ms")]
pub fn default_timeout_ms() -> Result<i64> {
    Ok(crate::timeout::DEFAULT.as_millis() as i64)
}
