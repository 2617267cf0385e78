//! The `timeout` argument of `flush` and `close`, sync and asyncio.
//!
//! Left out (or `cursus.DEFAULT_TIMEOUT`), it is the bridge's default: the
//! marker goes to `cursus_bridge::timeout`, which alone knows it is 30 s.
//! `None` is no limit; a number is seconds.

use crate::errors::IntoPyResult;
use cursus_bridge::timeout;
use pyo3::prelude::*;
use std::time::Duration;

/// `cursus.DEFAULT_TIMEOUT`: the `timeout` of `flush`/`close` meaning the
/// library's default (30 s in every Cursus language).
#[pyclass(frozen, module = "cursus")]
pub struct DefaultTimeout;

#[pymethods]
impl DefaultTimeout {
    /// The library's default in seconds (30.0), read from it.
    #[getter]
    fn seconds(&self) -> f64 {
        timeout::DEFAULT.as_secs_f64()
    }

    fn __repr__(&self) -> &'static str {
        "cursus.DEFAULT_TIMEOUT"
    }
}

/// A `flush`/`close` timeout as given: the default, or `None`/seconds.
pub(crate) enum FlushTimeout {
    /// Left out, or `cursus.DEFAULT_TIMEOUT`.
    Default,
    /// Seconds (`None`: no limit).
    Given(Option<f64>),
}

impl<'py> FromPyObject<'py> for FlushTimeout {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        if ob.is_instance_of::<DefaultTimeout>() {
            return Ok(FlushTimeout::Default);
        }
        Ok(FlushTimeout::Given(ob.extract()?))
    }
}

impl FlushTimeout {
    /// The wait (`None`: no limit), the default resolved by the bridge.
    pub(crate) fn resolve(self, py: Python<'_>) -> PyResult<Option<Duration>> {
        match self {
            FlushTimeout::Default => timeout::with_default(timeout::USE_DEFAULT).py_err(py),
            FlushTimeout::Given(seconds) => crate::sync::duration(py, seconds),
        }
    }
}
