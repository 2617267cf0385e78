//! The synchronous API: what synchronous Rust code and the C, Java and
//! Python bindings call.
//!
//! Every call blocks the calling thread on the process's engine runtime
//! (see `runtime`): two I/O threads shared by every client, which only ever
//! run engine work. Callbacks (delivery reports, commit outcomes) run on a
//! dispatcher thread of their client ([`crate::dispatch`]), so a callback may
//! call the SDK again (`send`, `flush`, `commit`, even of the same client)
//! and a slow callback delays only its own client's callbacks.
//!
//! Misuse fails with a clear error instead of hanging or panicking: a
//! blocking call made from inside an async runtime (`invalid_argument`),
//! and an object used in a process `fork()`ed after it was created
//! (`used_after_fork`, kind `Closed`); a child process creates its own
//! clients normally.
//!
//! Timeouts follow one contract in every language: `flush` and `close`
//! take `Option<Duration>`, `None` meaning no limit; the SDK's default for
//! both, which the bindings apply when the caller gives none, is
//! [`DEFAULT_TIMEOUT`].

use std::time::{Duration, Instant};

use crate::error::Result;
use crate::runtime::block_on;
pub use crate::runtime::{poll_once, watch_forks, ProcessLocal};

mod admin;
mod consumer;
mod eventstore;
mod producer;
#[cfg(test)]
mod tests;

pub use admin::Admin;
pub use consumer::Consumer;
pub use eventstore::EventStore;
pub use producer::{wait_delivery, Producer, TransactionStep};

/// The default of `flush` and `close` timeouts in every language: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A handle to the engine runtime, for bindings that bridge its futures
/// into another event loop (asyncio).
pub fn runtime_handle() -> Result<tokio::runtime::Handle> {
    crate::runtime::handle()
}

/// Runs `future` to completion on the engine runtime (for bindings that
/// drive an engine future from a blocking call of their own).
pub fn block_on_engine<F: std::future::Future>(future: F) -> Result<F::Output> {
    block_on(future)
}

fn deadline_of(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| Instant::now().checked_add(t))
}
