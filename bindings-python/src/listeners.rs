//! Python callables as engine listeners: the rebalance listener, the error
//! callback (`error_cb`) and the statistics callback (`stats_cb`).
//!
//! The engine calls every listener on a dispatcher thread of the client's
//! own (never on an I/O thread); here that thread takes the GIL (unless the
//! interpreter is exiting) and calls Python. An exception a callback
//! raises is logged through `logging` (logger `cursus`, with its
//! traceback) and the client goes on: it never reaches the engine.
//!
//! The callables are owned by the engine's listener slot: they stay alive
//! until the listener is replaced or cleared (a client clears its
//! listeners when it is closed) or the client is dropped.

use crate::errors::to_py;
use crate::types::{Statistics, TopicPartition};
use cursus::consumer::{LostDelivery, RebalanceEvent, RebalanceListener};
use cursus::events::{ErrorListener, StatisticsListener};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Logs an exception a user callback raised (logger `cursus`, level
/// error, with the traceback); if even logging fails, the exception goes
/// to `sys.unraisablehook`.
pub(crate) fn log_callback_error(py: Python<'_>, what: &str, err: PyErr) {
    let logged = (|| -> PyResult<()> {
        let logger = py
            .import_bound("logging")?
            .call_method1("getLogger", ("cursus",))?;
        let exc_info = (
            err.get_type_bound(py),
            err.value_bound(py),
            err.traceback_bound(py),
        );
        let kwargs = PyDict::new_bound(py);
        kwargs.set_item("exc_info", exc_info)?;
        logger.call_method(
            "error",
            ("exception in the %s callback (ignored)", what),
            Some(&kwargs),
        )?;
        Ok(())
    })();
    if let Err(e) = logged {
        err.write_unraisable_bound(py, None);
        e.write_unraisable_bound(py, None);
    }
}

/// Calls `callback(*args)` and logs what it raises.
fn call_logged(
    py: Python<'_>,
    what: &str,
    callback: &Py<PyAny>,
    args: impl IntoPy<Py<pyo3::types::PyTuple>>,
) {
    if let Err(err) = callback.call1(py, args) {
        log_callback_error(py, what, err);
    }
}

/// The `error_cb` and `stats_cb` keyword arguments of a producer or a
/// consumer (not engine options: they are taken out before the options are
/// parsed).
#[derive(Default)]
pub(crate) struct ClientCallbacks {
    /// `error_cb(error: CursusError)`.
    pub error_cb: Option<Py<PyAny>>,
    /// `stats_cb(statistics: Statistics)`.
    pub stats_cb: Option<Py<PyAny>>,
}

/// The callback keyword arguments (names reserved for producers and
/// consumers).
pub(crate) const CALLBACK_OPTIONS: [&str; 2] = ["error_cb", "stats_cb"];

impl ClientCallbacks {
    /// Takes `error_cb` / `stats_cb` from keyword arguments (`None` values
    /// are unset); a value that is not callable is a `TypeError`.
    pub fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ClientCallbacks> {
        let mut out = ClientCallbacks::default();
        let Some(kwargs) = kwargs else {
            return Ok(out);
        };
        for name in CALLBACK_OPTIONS {
            let Some(value) = kwargs.get_item(name)? else {
                continue;
            };
            if value.is_none() {
                continue;
            }
            check_callable(name, &value)?;
            let slot = if name == "error_cb" {
                &mut out.error_cb
            } else {
                &mut out.stats_cb
            };
            *slot = Some(value.unbind());
        }
        Ok(out)
    }

    /// The engine error listener, if `error_cb` was given.
    pub fn error_listener(&self, py: Python<'_>) -> Option<ErrorListener> {
        self.error_cb
            .as_ref()
            .map(|cb| error_listener(cb.clone_ref(py)))
    }

    /// The engine statistics listener, if `stats_cb` was given.
    pub fn statistics_listener(&self, py: Python<'_>) -> Option<StatisticsListener> {
        self.stats_cb
            .as_ref()
            .map(|cb| statistics_listener(cb.clone_ref(py)))
    }
}

/// A `TypeError` unless `value` is callable.
pub(crate) fn check_callable(name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if value.is_callable() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(format!(
            "{name}: expected a callable, got {}",
            value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )))
    }
}

/// `callback(error)` with the `CursusError` of each background error.
pub(crate) fn error_listener(callback: Py<PyAny>) -> ErrorListener {
    Arc::new(move |error: cursus::Error| {
        crate::with_gil_if_alive(|py| {
            let exc = to_py(py, &error).into_value(py);
            call_logged(py, "error_cb", &callback, (exc,));
        });
    })
}

/// `callback(statistics)` with each periodic snapshot.
pub(crate) fn statistics_listener(callback: Py<PyAny>) -> StatisticsListener {
    Arc::new(move |statistics: cursus::Statistics| {
        crate::with_gil_if_alive(|py| match Py::new(py, Statistics::from(statistics)) {
            Ok(s) => call_logged(py, "stats_cb", &callback, (s,)),
            Err(e) => log_callback_error(py, "stats_cb", e),
        });
    })
}

/// What a rebalance listener calls.
pub(crate) enum RebalanceTarget {
    /// A `cursus.RebalanceListener`-like object: its methods
    /// `on_partitions_assigned`, `on_partitions_revoked` and (when it
    /// defines one of its own) `on_partitions_lost`; without it, the engine
    /// tells a loss as a revocation.
    Object(Py<PyAny>),
    /// The callables of `subscribe(on_assign=, on_revoke=, on_lost=)`;
    /// without `on_lost`, the engine tells a loss as a revocation.
    Callables {
        /// Called with the partitions assigned.
        on_assign: Option<Py<PyAny>>,
        /// Called with the partitions revoked.
        on_revoke: Option<Py<PyAny>>,
        /// Called with the partitions lost.
        on_lost: Option<Py<PyAny>>,
    },
}

impl RebalanceTarget {
    /// The callables of `subscribe`, or `None` when none was given (the
    /// listener set before stays).
    pub fn callables(
        on_assign: Option<Py<PyAny>>,
        on_revoke: Option<Py<PyAny>>,
        on_lost: Option<Py<PyAny>>,
        py: Python<'_>,
    ) -> PyResult<Option<RebalanceTarget>> {
        for (name, cb) in [
            ("on_assign", &on_assign),
            ("on_revoke", &on_revoke),
            ("on_lost", &on_lost),
        ] {
            if let Some(cb) = cb {
                check_callable(name, cb.bind(py))?;
            }
        }
        if on_assign.is_none() && on_revoke.is_none() && on_lost.is_none() {
            return Ok(None);
        }
        Ok(Some(RebalanceTarget::Callables {
            on_assign,
            on_revoke,
            on_lost,
        }))
    }

    /// A listener object (checked for the two required methods).
    pub fn object(py: Python<'_>, listener: Py<PyAny>) -> PyResult<RebalanceTarget> {
        for method in ["on_partitions_assigned", "on_partitions_revoked"] {
            if !listener.bind(py).hasattr(method)? {
                return Err(PyTypeError::new_err(format!(
                    "a rebalance listener needs a method {method}(partitions) \
                     (subclass cursus.RebalanceListener)"
                )));
            }
        }
        Ok(RebalanceTarget::Object(listener))
    }

    fn call(&self, py: Python<'_>, event: &RebalanceEvent) {
        let partitions: Vec<TopicPartition> = event
            .partitions()
            .iter()
            .cloned()
            .map(TopicPartition::from)
            .collect();
        match self {
            RebalanceTarget::Object(listener) => {
                let listener = listener.bind(py);
                let method = match event {
                    RebalanceEvent::Assigned(_) => "on_partitions_assigned",
                    RebalanceEvent::Revoked(_) => "on_partitions_revoked",
                    RebalanceEvent::Lost(_) => "on_partitions_lost",
                };
                if let Err(err) = listener.call_method1(method, (partitions,)) {
                    log_callback_error(py, method, err);
                }
            }
            RebalanceTarget::Callables {
                on_assign,
                on_revoke,
                on_lost,
            } => {
                let (what, callback) = match event {
                    RebalanceEvent::Assigned(_) => ("on_assign", on_assign.as_ref()),
                    RebalanceEvent::Revoked(_) => ("on_revoke", on_revoke.as_ref()),
                    RebalanceEvent::Lost(_) => ("on_lost", on_lost.as_ref()),
                };
                if let Some(callback) = callback {
                    call_logged(py, what, callback, (partitions,));
                }
            }
        }
    }

    /// Whether it has a lost callback of its own: `on_lost`, or an
    /// `on_partitions_lost` other than `cursus.RebalanceListener`'s (which
    /// is never called).
    fn has_lost(&self, py: Python<'_>) -> bool {
        match self {
            RebalanceTarget::Callables { on_lost, .. } => on_lost.is_some(),
            RebalanceTarget::Object(listener) => {
                let Ok(own) = listener.bind(py).get_type().getattr("on_partitions_lost") else {
                    return false;
                };
                let base = py
                    .import_bound("cursus._rebalance")
                    .and_then(|m| m.getattr("RebalanceListener"))
                    .and_then(|c| c.getattr("on_partitions_lost"));
                base.map_or(true, |base| !own.is(&base))
            }
        }
    }

    /// The engine listener and how it is told a loss (see `has_lost`): it
    /// runs on the consumer's listener thread, with `busy` set while Python
    /// runs (the asyncio consumer refuses `poll` meanwhile).
    pub fn into_listener(
        self,
        py: Python<'_>,
        busy: Arc<AtomicBool>,
    ) -> (RebalanceListener, LostDelivery) {
        let lost = match self.has_lost(py) {
            true => LostDelivery::AsLost,
            false => LostDelivery::AsRevoked,
        };
        let listener = Arc::new(move |event: &RebalanceEvent| {
            crate::with_gil_if_alive(|py| {
                struct Clear<'a>(&'a AtomicBool);
                impl Drop for Clear<'_> {
                    fn drop(&mut self) {
                        self.0.store(false, Ordering::SeqCst);
                    }
                }
                busy.store(true, Ordering::SeqCst);
                let _clear = Clear(&busy);
                self.call(py, event);
            });
        });
        (listener, lost)
    }
}
