//! Keyword-argument configuration: every keyword is an engine option name
//! passed through the engine's `set`, so names, defaults and validation are
//! the engine's.

use crate::errors::IntoPyResult;
use cursus::config::OptionDoc;
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

/// Renders one keyword value as the engine's option text: `True`/`False`
/// as `true`/`false`, sequences joined with commas, anything else `str()`.
fn option_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if value.is_instance_of::<PyBool>() {
        return Ok(if value.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .to_owned());
    }
    if value.is_instance_of::<PyString>() {
        return value.extract::<String>();
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let parts: Vec<String> = value
            .iter()?
            .map(|item| item.and_then(|i| option_text(&i)))
            .collect::<PyResult<_>>()?;
        return Ok(parts.join(","));
    }
    Ok(value.str()?.to_string())
}

/// The (name, text) pairs of the keyword arguments; `None` values are skipped
/// so that they mean "the engine default".
fn pairs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            if v.is_none() {
                continue;
            }
            out.push((k.extract::<String>()?, option_text(&v)?));
        }
    }
    Ok(out)
}

/// Builds a producer config from keyword arguments.
pub fn producer(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ProducerConfig> {
    let mut c = ProducerConfig::default();
    for (k, v) in pairs(kwargs)? {
        c.set(&k, &v).py_err(py)?;
    }
    c.validate().py_err(py)?;
    Ok(c)
}

/// Builds a consumer config from keyword arguments.
pub fn consumer(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ConsumerConfig> {
    let mut c = ConsumerConfig::default();
    for (k, v) in pairs(kwargs)? {
        c.set(&k, &v).py_err(py)?;
    }
    c.validate().py_err(py)?;
    Ok(c)
}

/// Builds an admin (client) config from keyword arguments.
pub fn client(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ClientConfig> {
    let mut c = ClientConfig::default();
    for (k, v) in pairs(kwargs)? {
        c.set(&k, &v).py_err(py)?;
    }
    c.validate().py_err(py)?;
    Ok(c)
}

fn table(docs: &[&[OptionDoc]]) -> Vec<(&'static str, &'static str, &'static str)> {
    docs.iter()
        .flat_map(|t| t.iter().map(|o| (o.name, o.default, o.doc)))
        .collect()
}

/// The options an `AdminClient` accepts: `(name, default, description)`.
#[pyfunction]
pub fn client_options() -> Vec<(&'static str, &'static str, &'static str)> {
    table(&[ClientConfig::options()])
}

/// The options a `Producer` accepts: `(name, default, description)`.
#[pyfunction]
pub fn producer_options() -> Vec<(&'static str, &'static str, &'static str)> {
    table(&[ProducerConfig::options(), ClientConfig::options()])
}

/// The options a `Consumer` accepts: `(name, default, description)`.
#[pyfunction]
pub fn consumer_options() -> Vec<(&'static str, &'static str, &'static str)> {
    table(&[ConsumerConfig::options(), ClientConfig::options()])
}
