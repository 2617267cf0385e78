//! Maps the engine's one error type onto the Python exception hierarchy
//! defined in `cursus/_errors.py` (rooted at `cursus.CursusError`). The
//! status that picks the exception class, the kind names and the readable
//! text are the bridge's, the same in every language.

use cursus::Error;
use cursus_bridge::error::{kind_name, Status};
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn build(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let module = py.import_bound("cursus._errors")?;
    let fields = PyDict::new_bound(py);
    for (k, v) in e.fields() {
        fields.set_item(k, v)?;
    }
    let exc = module.getattr("_from_engine")?.call1((
        Status::of(e).name(),
        kind_name(e.kind()),
        e.code(),
        e.class().name(),
        e.retryable(),
        e.message(),
        fields,
        e.to_string(),
    ))?;
    // A failed replay proof or range read carries its proof: typed, as
    // `.proof` (the class default is `None`).
    if let Some(proof) = cursus::eventstore::ReplayProof::from_error(e) {
        exc.setattr(
            "proof",
            crate::eventstore::ReplayProof::from(proof).into_py(py),
        )?;
    }
    Ok(PyErr::from_value_bound(exc))
}

/// Converts an engine error into the matching `cursus.CursusError` subclass.
pub fn to_py(py: Python<'_>, e: &Error) -> PyErr {
    build(py, e).unwrap_or_else(|err| err)
}

/// Extension trait: `engine_result.py_err(py)?`.
pub trait IntoPyResult<T> {
    /// Converts the engine error, if any, into a Python exception.
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}

/// The exception of a `closed` error with `code` and `message`, built by
/// the engine like every other (for the asyncio wrappers' own checks: a
/// client used before `connect()` or after `close()`).
#[pyfunction]
pub fn _closed_error(py: Python<'_>, message: &str, code: &str) -> PyObject {
    let e = Error::new(cursus::ErrorKind::Closed, message).with_code(code);
    to_py(py, &e).into_value(py).into_py(py)
}

/// The error raised when a panic is caught at the boundary.
pub fn panic_error(payload: &(dyn std::any::Any + Send)) -> Error {
    cursus_bridge::error::from_panic(payload)
}
