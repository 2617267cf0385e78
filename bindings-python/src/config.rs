//! Keyword arguments as engine options. Names, defaults, validation and
//! messages are the bridge's (`cursus_bridge::config`, `::topic`); this
//! module only turns Python values into the options' text, checking each
//! value's Python type against the option's documented type, so that
//! `linger_ms=True` or `linger_ms={}` is a `TypeError` as Python users expect.

use crate::errors::IntoPyResult;
use cursus::config::OptionType;
use cursus::{ClientConfig, ConsumerConfig, NewTopic, ProducerConfig};
use cursus_bridge::config::{ClientKind, ConfigBuilder};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString, PyTuple};

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

fn wrong(what: &str, name: &str, expected: &str, value: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "{what} {name}: expected {expected}, got {}",
        type_name(value)
    ))
}

/// The text of `value` for an option of type `ty`. A `str` is always taken
/// as the option's text form (as every other language passes options), and
/// checked by the engine.
fn option_text(
    what: &str,
    name: &str,
    ty: OptionType,
    value: &Bound<'_, PyAny>,
) -> PyResult<String> {
    if value.is_instance_of::<PyString>() {
        return value.extract();
    }
    let is_int = value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>();
    match ty {
        OptionType::Integer if is_int => Ok(value.str()?.to_string()),
        OptionType::Integer => Err(wrong(what, name, "an int (or its text)", value)),
        OptionType::Boolean if value.is_instance_of::<PyBool>() => {
            Ok(if value.extract::<bool>()? {
                "true"
            } else {
                "false"
            }
            .to_owned())
        }
        OptionType::Boolean => Err(wrong(what, name, "a bool (or its text)", value)),
        // Text options also take numbers (acks=1).
        OptionType::String if is_int => Ok(value.str()?.to_string()),
        OptionType::String => Err(wrong(what, name, "a str", value)),
        OptionType::List
            if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() =>
        {
            let mut items = Vec::new();
            for item in value.iter()? {
                let item = item?;
                if !item.is_instance_of::<PyString>() {
                    return Err(wrong(what, name, "a str or a list of str", value));
                }
                items.push(item.extract::<String>()?);
            }
            Ok(items.join(","))
        }
        OptionType::List => Err(wrong(what, name, "a str or a list of str", value)),
    }
}

/// The options of `kind` from keyword arguments (`None` values mean "the
/// default" and are skipped).
pub fn builder(
    py: Python<'_>,
    kind: ClientKind,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<ConfigBuilder> {
    // A client is being made: the engine's log level follows the `cursus`
    // logger's (levels set after this apply from the next client on, or
    // at once after `cursus.sync_log_level()`).
    crate::logbridge::sync_level(py);
    let options = kind.options();
    let mut b = ConfigBuilder::new(Some(kind));
    let with_callbacks = matches!(kind, ClientKind::Producer | ClientKind::Consumer);
    for (k, v) in kwargs.into_iter().flat_map(|kw| kw.iter()) {
        if v.is_none() {
            continue;
        }
        let name: String = k.extract()?;
        // `error_cb` / `stats_cb`: callables, not engine options (taken by
        // `listeners::ClientCallbacks`).
        if with_callbacks && crate::listeners::CALLBACK_OPTIONS.contains(&name.as_str()) {
            crate::listeners::check_callable(&name, &v)?;
            continue;
        }
        let text = match options.iter().find(|o| o.name == name) {
            Some(o) => option_text("option", &name, o.ty, &v)?,
            // Unknown: the bridge names the kind and lists its options.
            None => v.str()?.to_string(),
        };
        b.set(&name, &text).py_err(py)?;
    }
    Ok(b)
}

/// A producer config from keyword arguments.
pub fn producer(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ProducerConfig> {
    let cfg = builder(py, ClientKind::Producer, kwargs)?
        .producer()
        .py_err(py)?;
    check_stats_interval(py, &cfg.client, kwargs)?;
    Ok(cfg)
}

/// A consumer config from keyword arguments.
pub fn consumer(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ConsumerConfig> {
    let cfg = builder(py, ClientKind::Consumer, kwargs)?
        .consumer()
        .py_err(py)?;
    check_stats_interval(py, &cfg.client, kwargs)?;
    Ok(cfg)
}

/// A `stats_cb` needs `statistics_interval_ms`: the engine's rule
/// (`check_statistics_interval`, the same error in every language), checked
/// here before connecting rather than after.
fn check_stats_interval(
    py: Python<'_>,
    client: &ClientConfig,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let has_stats_cb = match kwargs {
        Some(kw) => kw.get_item("stats_cb")?.is_some_and(|v| !v.is_none()),
        None => false,
    };
    if has_stats_cb {
        cursus::events::check_statistics_interval(client.statistics_interval).py_err(py)?;
    }
    Ok(())
}

/// An admin client config from keyword arguments.
pub fn client(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ClientConfig> {
    builder(py, ClientKind::Admin, kwargs)?.admin().py_err(py)
}

/// The engine's `NewTopic` from `create_topic`'s keyword arguments (`None`
/// values are unset fields; an unknown keyword is a `TypeError`, as for any
/// Python function).
pub fn new_topic(
    py: Python<'_>,
    name: &str,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NewTopic> {
    let mut pairs = Vec::new();
    for (k, v) in options.into_iter().flat_map(|kw| kw.iter()) {
        if v.is_none() {
            continue;
        }
        let key: String = k.extract()?;
        let ty = cursus_bridge::topic::option_type(&key).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "create_topic() got an unexpected keyword argument '{key}'"
            ))
        })?;
        pairs.push((key.clone(), option_text("topic option", &key, ty, &v)?));
    }
    cursus_bridge::topic::new_topic(name, pairs).py_err(py)
}

/// Checks keyword arguments for `kind` without connecting (the asyncio
/// clients call it when they are constructed).
#[pyfunction]
#[pyo3(signature = (kind, **config))]
pub fn _check_config(
    py: Python<'_>,
    kind: &str,
    config: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let kind: ClientKind = kind.parse().py_err(py)?;
    match kind {
        ClientKind::Producer => producer(py, config).map(drop),
        ClientKind::Consumer => consumer(py, config).map(drop),
        _ => builder(py, kind, config)?.validate().py_err(py),
    }
}

fn table(kind: ClientKind) -> Vec<(&'static str, &'static str, &'static str)> {
    kind.options()
        .into_iter()
        .map(|o| (o.name, o.default, o.doc))
        .collect()
}

/// The options an `AdminClient` accepts: `(name, default, description)`.
#[pyfunction]
pub fn client_options() -> Vec<(&'static str, &'static str, &'static str)> {
    table(ClientKind::Admin)
}

/// The options a `Producer` accepts: `(name, default, description)`.
#[pyfunction]
pub fn producer_options() -> Vec<(&'static str, &'static str, &'static str)> {
    table(ClientKind::Producer)
}

/// The options a `Consumer` accepts: `(name, default, description)`.
#[pyfunction]
pub fn consumer_options() -> Vec<(&'static str, &'static str, &'static str)> {
    table(ClientKind::Consumer)
}
