//! Completion callbacks as the bridge takes them.
//!
//! A language layer wraps its own callback (a C function pointer with user
//! data, a Java completion object, a Python callable) into a [`Callback`];
//! the engine calls it exactly once, on the client's dispatcher thread,
//! never on an I/O thread and never with an engine lock held (see
//! `cursus::dispatch`). So the callback may block briefly or call the SDK
//! again; a slow one delays only its own client's callbacks.

use cursus::Result;

/// A callback for the outcome of one operation.
pub type Callback<T> = Box<dyn FnOnce(Result<T>) + Send + 'static>;

/// A repeating callback: called once per event (a statistics snapshot, a
/// background error, a log record), on the client's dispatcher thread (log
/// records: on the process's log thread), never on an I/O thread. The event
/// is lent for the duration of the call. An `Option<Listener<T>>` argument
/// of `None` (C NULL, Java null) clears the listener.
pub type Listener<T> = std::sync::Arc<dyn Fn(&T) + Send + Sync + 'static>;
