//! Client configuration handles.

use crate::config::{ClientKind, ConfigBuilder};
use crate::registry::Handle;
use cursus::Result;
use cursus_bridge_macros::bridge_fn;
use std::sync::{Mutex, MutexGuard};

/// Options for creating a client (see [`crate::config`]).
#[derive(Debug, Default)]
pub struct Config(Mutex<ConfigBuilder>);

impl Handle for Config {
    const KIND: &'static str = "config";
}

impl Config {
    /// A configuration for one kind of client, or for any.
    pub fn new(kind: Option<ClientKind>) -> Config {
        Config(Mutex::new(ConfigBuilder::new(kind)))
    }

    /// The options set so far.
    pub fn builder(&self) -> MutexGuard<'_, ConfigBuilder> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Creates an empty configuration (every option at its default) that any
/// kind of client may use: `set` accepts an option some kind knows, and
/// each client uses the options of its own kind. A configuration may be
/// destroyed as soon as the clients made from it exist.
///
/// Thread-safety: safe from any thread; a configuration is internally locked.
#[bridge_fn(out = "config")]
pub fn config_new() -> Result<Config> {
    Ok(Config::new(None))
}

/// Creates an empty configuration for one kind of client: `kind` is
/// `"admin"`, `"producer"` or `"consumer"`. Every `set` is then checked
/// against that kind's options, and an unknown name fails with a message
/// naming the kind and listing its options.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "config")]
pub fn config_new_for(kind: &str) -> Result<Config> {
    Ok(Config::new(Some(kind.parse()?)))
}

/// Sets one option by name (the same names in every language:
/// `bootstrap_servers`, `acks`, `linger_ms`, `group_id`, ...). The value is
/// checked at once: an unknown name or a bad value fails with
/// `invalid_argument` and a message naming the option (and, for an unknown
/// name, listing the known ones).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn config_set(config: &Config, key: &str, value: &str) -> Result<()> {
    config.builder().set(key, value)
}

/// Checks a configuration made for one kind of client (`config_new_for`)
/// as creating that client would before connecting: each option and the
/// rules between options (`enable_idempotence=true` needs `acks=all`; a
/// consumer needs `group_id`). Fails with `invalid_argument` naming the
/// problem, and for a configuration made by `config_new` (no kind).
///
/// Thread-safety: safe from any thread.
#[bridge_fn]
pub fn config_validate(config: &Config) -> Result<()> {
    config.builder().validate()
}

/// The options of a kind of client (`"admin"`, `"producer"` or
/// `"consumer"`) as a flat list of (name, type, default, description)
/// quadruples; the type is `integer`, `boolean`, `string` or `list`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "options")]
pub fn config_options(kind: &str) -> Result<Vec<String>> {
    let kind: ClientKind = kind.parse()?;
    Ok(kind
        .options()
        .iter()
        .flat_map(|o| {
            [
                o.name.to_owned(),
                o.ty.name().to_owned(),
                o.default.to_owned(),
                o.doc.to_owned(),
            ]
        })
        .collect())
}
