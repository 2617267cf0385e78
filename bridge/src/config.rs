//! Client configuration from name/value pairs: the option setter behind
//! `cursus_config_set`, Go's `WithOption`, Python's keyword arguments and
//! Java's `Config.Builder.set`.
//!
//! A configuration is made for one kind of client (admin, producer,
//! consumer): every `set` is checked by that kind's engine config at once,
//! so an unknown name or a bad value fails there, with a message naming the
//! kind and listing its options. A generic configuration (C's
//! `cursus_config_new`) takes any option some kind knows; each client then
//! uses the options of its own kind.

use cursus::config::OptionDoc;
use cursus::{ClientConfig, ConsumerConfig, Error, ProducerConfig, Result};
use std::str::FromStr;

/// The kind of client a configuration is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientKind {
    /// An admin client.
    Admin,
    /// A producer.
    Producer,
    /// A group consumer.
    Consumer,
}

impl ClientKind {
    /// Every kind.
    pub const ALL: [ClientKind; 3] = [
        ClientKind::Admin,
        ClientKind::Producer,
        ClientKind::Consumer,
    ];

    /// `admin`, `producer` or `consumer`.
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Admin => "admin",
            ClientKind::Producer => "producer",
            ClientKind::Consumer => "consumer",
        }
    }

    /// The options this kind takes: its own, then the shared client ones.
    pub fn options(self) -> Vec<OptionDoc> {
        let own: &[OptionDoc] = match self {
            ClientKind::Admin => &[],
            ClientKind::Producer => ProducerConfig::options(),
            ClientKind::Consumer => ConsumerConfig::options(),
        };
        own.iter().chain(ClientConfig::options()).copied().collect()
    }

    /// Checks one option against this kind's engine config.
    fn check(self, key: &str, value: &str) -> Result<()> {
        match self {
            ClientKind::Admin => ClientConfig::default().set(key, value),
            ClientKind::Producer => ProducerConfig::default().set(key, value),
            ClientKind::Consumer => ConsumerConfig::default().set(key, value),
        }
    }

    fn knows(self, key: &str) -> bool {
        self.options().iter().any(|o| o.name == key)
    }
}

impl FromStr for ClientKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<ClientKind> {
        match s {
            "admin" => Ok(ClientKind::Admin),
            "producer" => Ok(ClientKind::Producer),
            "consumer" => Ok(ClientKind::Consumer),
            other => Err(Error::invalid_argument(format!(
                "unknown client kind {other:?}: expected admin, producer or consumer"
            ))),
        }
    }
}

/// Options set so far, checked as they are set. `Debug` redacts secrets.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ConfigBuilder {
    kind: Option<ClientKind>,
    entries: Vec<(String, String)>,
}

impl std::fmt::Debug for ConfigBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries: Vec<(&str, &str)> = self
            .entries
            .iter()
            .map(|(k, v)| {
                let shown = if cursus::config::is_secret_option(k) {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                (k.as_str(), shown)
            })
            .collect();
        f.debug_struct("ConfigBuilder")
            .field("kind", &self.kind)
            .field("entries", &entries)
            .finish()
    }
}

impl ConfigBuilder {
    /// A configuration for one kind of client, or for any (`None`).
    pub fn new(kind: Option<ClientKind>) -> ConfigBuilder {
        ConfigBuilder {
            kind,
            entries: Vec::new(),
        }
    }

    /// A configuration for `kind` from name/value pairs.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(
        kind: ClientKind,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<ConfigBuilder> {
        let mut b = ConfigBuilder::new(Some(kind));
        for (k, v) in pairs {
            b.set(k.as_ref(), v.as_ref())?;
        }
        Ok(b)
    }

    /// The kind this configuration is for (`None`: any).
    pub fn kind(&self) -> Option<ClientKind> {
        self.kind
    }

    /// Sets one option (replacing an earlier value of the same name).
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match self.kind {
            Some(kind) => kind.check(key, value)?,
            None => Self::check_any(key, value)?,
        }
        self.entries.retain(|(k, _)| k != key);
        self.entries.push((key.to_owned(), value.to_owned()));
        Ok(())
    }

    /// A generic configuration takes an option some kind accepts.
    fn check_any(key: &str, value: &str) -> Result<()> {
        let mut refused = None;
        for kind in ClientKind::ALL {
            if !kind.knows(key) {
                continue;
            }
            match kind.check(key, value) {
                Ok(()) => return Ok(()),
                Err(e) => refused = Some(e),
            }
        }
        Err(refused.unwrap_or_else(|| {
            let mut names: Vec<&str> = Vec::new();
            for kind in ClientKind::ALL {
                for o in kind.options() {
                    if !names.contains(&o.name) {
                        names.push(o.name);
                    }
                }
            }
            Error::invalid_argument(format!(
                "unknown option {key:?}; known options: {}",
                names.join(", ")
            ))
        }))
    }

    /// The options `kind` uses: all of them for a configuration of that
    /// kind (a configuration of another kind is refused), the ones it knows
    /// for a generic configuration.
    fn entries_for(&self, kind: ClientKind) -> Result<impl Iterator<Item = (&str, &str)>> {
        if let Some(own) = self.kind.filter(|k| *k != kind) {
            return Err(Error::invalid_argument(format!(
                "this configuration was made for a {}, not a {}",
                own.name(),
                kind.name()
            )));
        }
        let generic = self.kind.is_none();
        Ok(self
            .entries
            .iter()
            .filter(move |(k, _)| !generic || kind.knows(k))
            .map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// The admin client's configuration.
    pub fn admin(&self) -> Result<ClientConfig> {
        let mut c = ClientConfig::default();
        for (k, v) in self.entries_for(ClientKind::Admin)? {
            c.set(k, v)?;
        }
        c.validate()?;
        Ok(c)
    }

    /// A producer's configuration.
    pub fn producer(&self) -> Result<ProducerConfig> {
        ProducerConfig::from_pairs(self.entries_for(ClientKind::Producer)?)
    }

    /// A consumer's configuration.
    pub fn consumer(&self) -> Result<ConsumerConfig> {
        ConsumerConfig::from_pairs(self.entries_for(ClientKind::Consumer)?)
    }

    /// Checks everything creating a client of this builder's kind checks
    /// before connecting: each option, and the rules between options
    /// (`enable_idempotence` needs `acks=all`, a consumer needs `group_id`).
    pub fn validate(&self) -> Result<()> {
        match self.kind {
            Some(ClientKind::Admin) => self.admin().map(drop),
            Some(ClientKind::Producer) => self.producer().map(drop),
            Some(ClientKind::Consumer) => self.consumer().map(drop),
            None => Err(crate::error::invalid(
                "a configuration for any kind of client is checked when a client is made                  from it; make one for a kind (admin, producer, consumer) to check it earlier",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_the_token() {
        let mut b = ConfigBuilder::new(Some(ClientKind::Admin));
        b.set("principal", "alice").unwrap();
        b.set("token", "very-secret").unwrap();
        let shown = format!("{b:?}");
        assert!(
            shown.contains("alice") && shown.contains("<redacted>"),
            "{shown}"
        );
        assert!(!shown.contains("very-secret"), "{shown}");
    }

    #[test]
    fn validate_checks_the_rules_between_options() {
        let mut b = ConfigBuilder::new(Some(ClientKind::Producer));
        b.set("enable_idempotence", "true").unwrap();
        b.set("acks", "1").unwrap();
        let e = b.validate().unwrap_err();
        assert_eq!(e.code(), "invalid_argument", "{e}");
        b.set("acks", "all").unwrap();
        b.validate().unwrap();
        let consumer = ConfigBuilder::new(Some(ClientKind::Consumer));
        assert!(consumer
            .validate()
            .unwrap_err()
            .to_string()
            .contains("group_id"));
        assert!(ConfigBuilder::new(None).validate().is_err());
    }

    #[test]
    fn a_kind_names_itself_and_lists_its_own_options() {
        let mut p = ConfigBuilder::new(Some(ClientKind::Producer));
        let e = p.set("group_idd", "x").unwrap_err();
        assert!(
            e.message()
                .starts_with("unknown producer option \"group_idd\""),
            "{e}"
        );
        assert!(e.message().contains("linger_ms"), "{e}");
        assert!(!e.message().contains("group_id,"), "{e}");
        let e = p.set("group_id", "g").unwrap_err();
        assert!(e.message().contains("unknown producer option"), "{e}");
        let mut c = ConfigBuilder::new(Some(ClientKind::Consumer));
        let e = c.set("linger_ms", "5").unwrap_err();
        assert!(e.message().starts_with("unknown consumer option"), "{e}");
        let mut a = ConfigBuilder::new(Some(ClientKind::Admin));
        let e = a.set("acks", "1").unwrap_err();
        assert!(e.message().starts_with("unknown admin option"), "{e}");
    }

    #[test]
    fn bad_values_name_the_option() {
        let mut p = ConfigBuilder::new(Some(ClientKind::Producer));
        let e = p.set("linger_ms", "soon").unwrap_err();
        assert!(e.message().contains("linger_ms"), "{e}");
        let mut g = ConfigBuilder::new(None);
        let e = g.set("acks", "7").unwrap_err();
        assert!(e.message().contains("acks"), "{e}");
        let e = g.set("nope", "1").unwrap_err();
        assert!(e.message().starts_with("unknown option \"nope\""), "{e}");
    }

    #[test]
    fn a_generic_configuration_serves_every_kind() {
        let mut g = ConfigBuilder::new(None);
        g.set("bootstrap_servers", "h:1").unwrap();
        g.set("acks", "1").unwrap();
        g.set("group_id", "g").unwrap();
        assert_eq!(g.admin().unwrap().bootstrap_servers, vec!["h:1"]);
        assert_eq!(g.producer().unwrap().client.bootstrap_servers, vec!["h:1"]);
        assert_eq!(g.consumer().unwrap().group_id, "g");
        let p = ConfigBuilder::from_pairs(ClientKind::Producer, [("acks", "1")]).unwrap();
        assert!(p
            .consumer()
            .unwrap_err()
            .message()
            .contains("made for a producer"));
        assert!(ConfigBuilder::new(Some(ClientKind::Consumer))
            .consumer()
            .unwrap_err()
            .message()
            .contains("group_id"));
    }
}
