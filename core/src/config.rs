//! Typed configuration for clients, producers and consumers.
//!
//! Every binding passes options by name through [`ProducerConfig::set`],
//! [`ConsumerConfig::set`] or [`ClientConfig::set`], so option names,
//! defaults and validation are the same in every language. The tables
//! returned by `options()` document each name with its default.

use crate::error::{Error, Result};
use crate::wire::Compression;
use std::path::PathBuf;
use std::time::Duration;

/// The kind of value an option takes (its text form is what `set` parses;
/// bindings with typed values, such as Python keywords, check the type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionType {
    /// A non-negative integer (`5000`).
    Integer,
    /// `true` or `false`.
    Boolean,
    /// Text (`all`, `gzip`, a path).
    String,
    /// A comma-separated list (`host1:9000,host2:9000`).
    List,
}

impl OptionType {
    /// `integer`, `boolean`, `string` or `list`.
    pub fn name(self) -> &'static str {
        match self {
            OptionType::Integer => "integer",
            OptionType::Boolean => "boolean",
            OptionType::String => "string",
            OptionType::List => "list",
        }
    }
}

/// One documented option: name, value type, default (as text) and
/// description.
#[derive(Debug, Clone, Copy)]
pub struct OptionDoc {
    /// Option name, as passed to `set`.
    pub name: &'static str,
    /// The kind of value it takes.
    pub ty: OptionType,
    /// Default value, as text.
    pub default: &'static str,
    /// What the option does.
    pub doc: &'static str,
}

const CLIENT_OPTIONS: &[OptionDoc] = &[
    OptionDoc { name: "bootstrap_servers", ty: OptionType::List, default: "127.0.0.1:9000", doc: "Comma-separated host:port list of brokers to connect to first." },
    OptionDoc { name: "client_id", ty: OptionType::String, default: "cursus", doc: "Name used as the prefix of member ids and producer ids." },
    OptionDoc { name: "compression", ty: OptionType::String, default: "none", doc: "Preferred payload compression: none, gzip, snappy or lz4 (none is always offered as the fallback)." },
    OptionDoc { name: "tls", ty: OptionType::Boolean, default: "false", doc: "Connect with TLS 1.2 or later." },
    OptionDoc { name: "tls_ca_file", ty: OptionType::String, default: "", doc: "PEM file with the CA certificates to trust (implies tls)." },
    OptionDoc { name: "tls_cert_file", ty: OptionType::String, default: "", doc: "PEM client certificate chain for mutual TLS (needs tls_key_file)." },
    OptionDoc { name: "tls_key_file", ty: OptionType::String, default: "", doc: "PEM private key of the client certificate." },
    OptionDoc { name: "tls_server_name", ty: OptionType::String, default: "", doc: "Name to verify in the broker certificate (default: the host of the address)." },
    OptionDoc { name: "principal", ty: OptionType::String, default: "", doc: "AUTH principal; sent after the handshake when set (needs token)." },
    OptionDoc { name: "token", ty: OptionType::String, default: "", doc: "AUTH token." },
    OptionDoc { name: "connect_timeout_ms", ty: OptionType::Integer, default: "5000", doc: "Deadline for TCP connect, TLS, handshake and AUTH." },
    OptionDoc { name: "request_timeout_ms", ty: OptionType::Integer, default: "30000", doc: "Deadline for one request's reply." },
    OptionDoc { name: "max_in_flight", ty: OptionType::Integer, default: "5", doc: "Requests pipelined on one connection before the next one waits." },
    OptionDoc { name: "retries", ty: OptionType::Integer, default: "5", doc: "Attempts after the first for retryable (routing, availability) failures." },
    OptionDoc { name: "retry_backoff_ms", ty: OptionType::Integer, default: "100", doc: "First backoff before a retry; doubles per attempt, with jitter." },
    OptionDoc { name: "retry_backoff_max_ms", ty: OptionType::Integer, default: "5000", doc: "Upper bound of the retry backoff." },
    OptionDoc { name: "socket_buffer_bytes", ty: OptionType::Integer, default: "2097152", doc: "TCP send and receive buffer size." },
    OptionDoc { name: "metadata_max_age_ms", ty: OptionType::Integer, default: "300000", doc: "How long cached topic metadata is trusted." },
    OptionDoc { name: "statistics_interval_ms", ty: OptionType::Integer, default: "0", doc: "How often a statistics listener gets a snapshot; 0 (the default) never." },
];

const PRODUCER_OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        name: "acks",
        ty: OptionType::String,
        default: "all",
        doc: "0 (no reply), 1 (durable leader append) or all/-1 (all in-sync replicas).",
    },
    OptionDoc {
        name: "linger_ms",
        ty: OptionType::Integer,
        default: "5",
        doc: "How long a partition batch waits for more records before it is sent.",
    },
    OptionDoc {
        name: "batch_size",
        ty: OptionType::Integer,
        default: "16384",
        doc: "Payload bytes that make a partition batch ready at once.",
    },
    OptionDoc {
        name: "buffer_memory",
        ty: OptionType::Integer,
        default: "33554432",
        doc: "Bytes of unsent records the producer may hold; send blocks beyond it.",
    },
    OptionDoc {
        name: "max_block_ms",
        ty: OptionType::Integer,
        default: "60000",
        doc: "How long send waits for buffer space before failing.",
    },
    OptionDoc {
        name: "enable_idempotence",
        ty: OptionType::Boolean,
        default: "false",
        doc: "Per-partition sequence numbers so retries never duplicate (needs acks=all).",
    },
    OptionDoc {
        name: "delivery_timeout_ms",
        ty: OptionType::Integer,
        default: "120000",
        doc: "Upper bound on the time from send to acknowledgement, retries included.",
    },
    OptionDoc {
        name: "transactional_id",
        ty: OptionType::String,
        default: "",
        doc: "Makes the producer transactional (implies idempotence and acks=all); sends then belong to transactions.",
    },
];

const CONSUMER_OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        name: "group_id",
        ty: OptionType::String,
        default: "",
        doc: "Consumer group (required).",
    },
    OptionDoc {
        name: "auto_offset_reset",
        ty: OptionType::String,
        default: "earliest",
        doc: "Where to resume when no usable offset exists: earliest, latest or error.",
    },
    OptionDoc {
        name: "isolation_level",
        ty: OptionType::String,
        default: "read_committed",
        doc: "read_committed or read_uncommitted.",
    },
    OptionDoc {
        name: "enable_auto_commit",
        ty: OptionType::Boolean,
        default: "false",
        doc: "Commit the positions of delivered records every auto_commit_interval_ms.",
    },
    OptionDoc {
        name: "auto_commit_interval_ms",
        ty: OptionType::Integer,
        default: "5000",
        doc: "Interval of automatic commits.",
    },
    OptionDoc {
        name: "heartbeat_interval_ms",
        ty: OptionType::Integer,
        default: "3000",
        doc: "Interval of group heartbeats.",
    },
    OptionDoc {
        name: "max_poll_records",
        ty: OptionType::Integer,
        default: "500",
        doc: "Most records one poll returns.",
    },
    OptionDoc {
        name: "fetch_max_wait_ms",
        ty: OptionType::Integer,
        default: "500",
        doc: "Longest broker-side wait of one fetch (CONSUME wait_ms).",
    },
    OptionDoc {
        name: "fetch_max_records",
        ty: OptionType::Integer,
        default: "1000",
        doc: "Most records one fetch asks for (CONSUME batch).",
    },
    OptionDoc {
        name: "consume_mode",
        ty: OptionType::String,
        default: "poll",
        doc: "poll (CONSUME long polls) or stream (broker push over STREAM).",
    },
];

fn parse_u64(key: &str, value: &str) -> Result<u64> {
    value.trim().parse::<u64>().map_err(|_| {
        Error::invalid_argument(format!(
            "option {key}: expected a non-negative integer, got {value:?}"
        ))
    })
}

fn parse_ms(key: &str, value: &str) -> Result<Duration> {
    parse_u64(key, value).map(Duration::from_millis)
}

fn parse_positive(key: &str, value: &str) -> Result<u64> {
    match parse_u64(key, value)? {
        0 => Err(Error::invalid_argument(format!(
            "option {key}: must be greater than 0"
        ))),
        n => Ok(n),
    }
}

fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(Error::invalid_argument(format!(
            "option {key}: expected true or false, got {value:?}"
        ))),
    }
}

fn unknown(kind: &str, key: &str, tables: &[&[OptionDoc]]) -> Error {
    let names: Vec<&str> = tables
        .iter()
        .flat_map(|t| t.iter().map(|o| o.name))
        .collect();
    Error::invalid_argument(format!(
        "unknown {kind} option {key:?}; known options: {}",
        names.join(", ")
    ))
}

/// Applies name/value pairs over a default config, then validates it.
fn build_from_pairs<'a, C: Default>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    set: fn(&mut C, &str, &str) -> Result<()>,
    validate: fn(&C) -> Result<()>,
) -> Result<C> {
    let mut c = C::default();
    for (k, v) in pairs {
        set(&mut c, k, v)?;
    }
    validate(&c)?;
    Ok(c)
}

/// TLS settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// PEM CA bundle; when `None` the connection trusts nothing and fails,
    /// so a CA is required.
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate chain (mutual TLS).
    pub cert_file: Option<PathBuf>,
    /// PEM client private key.
    pub key_file: Option<PathBuf>,
    /// Name to verify instead of the address's host.
    pub server_name: Option<String>,
}

/// True for an option whose value is a secret (the AUTH `token`): every
/// `Debug`, `repr` and `toString` of a configuration prints `<redacted>`.
pub fn is_secret_option(name: &str) -> bool {
    name == "token"
}

/// AUTH credentials. `Debug` shows the principal, never the token.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// Principal.
    pub principal: String,
    /// Token.
    pub token: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("principal", &self.principal)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// Connection settings shared by every client object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Brokers to bootstrap from (`host:port`).
    pub bootstrap_servers: Vec<String>,
    /// Prefix of member and producer ids.
    pub client_id: String,
    /// Preferred compression.
    pub compression: Compression,
    /// TLS, when enabled.
    pub tls: Option<TlsConfig>,
    /// AUTH credentials, when set.
    pub credentials: Option<Credentials>,
    /// Connect + TLS + handshake + AUTH deadline.
    pub connect_timeout: Duration,
    /// Per-request deadline.
    pub request_timeout: Duration,
    /// Pipelined requests per connection.
    pub max_in_flight: usize,
    /// Retries of retryable failures.
    pub retries: u32,
    /// First retry backoff.
    pub retry_backoff: Duration,
    /// Largest retry backoff.
    pub retry_backoff_max: Duration,
    /// TCP buffer sizes.
    pub socket_buffer_bytes: usize,
    /// Metadata cache lifetime.
    pub metadata_max_age: Duration,
    /// How often a statistics listener gets a snapshot; zero: never.
    pub statistics_interval: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            bootstrap_servers: vec!["127.0.0.1:9000".to_owned()],
            client_id: "cursus".to_owned(),
            compression: Compression::None,
            tls: None,
            credentials: None,
            connect_timeout: Duration::from_millis(5000),
            request_timeout: Duration::from_millis(30_000),
            max_in_flight: 5,
            retries: 5,
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_millis(5000),
            socket_buffer_bytes: 2 * 1024 * 1024,
            metadata_max_age: Duration::from_millis(300_000),
            statistics_interval: Duration::ZERO,
        }
    }
}

impl ClientConfig {
    /// The documented client options.
    pub fn options() -> &'static [OptionDoc] {
        CLIENT_OPTIONS
    }

    /// A config for one bootstrap address.
    pub fn new(bootstrap: impl Into<String>) -> Self {
        ClientConfig {
            bootstrap_servers: vec![bootstrap.into()],
            ..Default::default()
        }
    }

    /// Sets one option by name; returns `Ok(false)` when the name is not a
    /// client option (so wrappers can try their own names).
    pub(crate) fn try_set(&mut self, key: &str, value: &str) -> Result<bool> {
        let tls = |c: &mut ClientConfig| c.tls.get_or_insert_with(TlsConfig::default).clone();
        match key {
            "bootstrap_servers" => {
                let servers: Vec<String> = value
                    .split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect();
                if servers.is_empty() {
                    return Err(Error::invalid_argument(
                        "option bootstrap_servers: at least one host:port is required",
                    ));
                }
                for s in &servers {
                    if !s
                        .rsplit_once(':')
                        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
                    {
                        return Err(Error::invalid_argument(format!(
                            "option bootstrap_servers: {s:?} is not host:port"
                        )));
                    }
                }
                self.bootstrap_servers = servers;
            }
            "client_id" => {
                let v = value.trim();
                if v.is_empty() || v.chars().any(char::is_whitespace) {
                    return Err(Error::invalid_argument(
                        "option client_id: must be non-empty without whitespace",
                    ));
                }
                self.client_id = v.to_owned();
            }
            "compression" => {
                self.compression = Compression::from_config_name(value).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "option compression: expected none, gzip, snappy or lz4, got {value:?}"
                    ))
                })?
            }
            "tls" => {
                if parse_bool(key, value)? {
                    self.tls = Some(tls(self));
                } else {
                    self.tls = None;
                }
            }
            "tls_ca_file" | "tls_cert_file" | "tls_key_file" | "tls_server_name" => {
                let mut t = tls(self);
                let v = value.trim();
                let opt = (!v.is_empty()).then(|| v.to_owned());
                match key {
                    "tls_ca_file" => t.ca_file = opt.map(PathBuf::from),
                    "tls_cert_file" => t.cert_file = opt.map(PathBuf::from),
                    "tls_key_file" => t.key_file = opt.map(PathBuf::from),
                    _ => t.server_name = opt,
                }
                self.tls = Some(t);
            }
            "principal" | "token" => {
                if value.chars().any(char::is_whitespace) || value.is_empty() {
                    return Err(Error::invalid_argument(format!(
                        "option {key}: must be non-empty without whitespace"
                    )));
                }
                let c = self.credentials.get_or_insert_with(|| Credentials {
                    principal: String::new(),
                    token: String::new(),
                });
                if key == "principal" {
                    c.principal = value.to_owned();
                } else {
                    c.token = value.to_owned();
                }
            }
            "connect_timeout_ms" => {
                self.connect_timeout = Duration::from_millis(parse_positive(key, value)?)
            }
            "request_timeout_ms" => {
                self.request_timeout = Duration::from_millis(parse_positive(key, value)?)
            }
            "max_in_flight" => {
                self.max_in_flight = parse_positive(key, value)?.min(10_000) as usize
            }
            "retries" => self.retries = parse_u64(key, value)?.min(u32::MAX as u64) as u32,
            "retry_backoff_ms" => self.retry_backoff = parse_ms(key, value)?,
            "retry_backoff_max_ms" => self.retry_backoff_max = parse_ms(key, value)?,
            "socket_buffer_bytes" => {
                self.socket_buffer_bytes = parse_positive(key, value)?.min(1 << 30) as usize
            }
            "metadata_max_age_ms" => self.metadata_max_age = parse_ms(key, value)?,
            "statistics_interval_ms" => self.statistics_interval = parse_ms(key, value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Sets one client option by name.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        if self.try_set(key, value)? {
            Ok(())
        } else {
            Err(unknown("admin", key, &[CLIENT_OPTIONS]))
        }
    }

    /// Checks cross-option rules.
    pub fn validate(&self) -> Result<()> {
        if let Some(c) = &self.credentials {
            if c.principal.is_empty() || c.token.is_empty() {
                return Err(Error::invalid_argument(
                    "principal and token must be set together",
                ));
            }
        }
        if let Some(t) = &self.tls {
            if t.cert_file.is_some() != t.key_file.is_some() {
                return Err(Error::invalid_argument(
                    "tls_cert_file and tls_key_file must be set together",
                ));
            }
        }
        if self.retry_backoff_max < self.retry_backoff {
            return Err(Error::invalid_argument(
                "retry_backoff_max_ms must not be below retry_backoff_ms",
            ));
        }
        Ok(())
    }
}

/// Producer acknowledgement level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProducerAcks {
    /// No reply; nothing confirms the write.
    None,
    /// Durable leader append.
    Leader,
    /// All in-sync replicas.
    All,
}

impl ProducerAcks {
    /// Parses `0`, `1`, `all` or `-1`.
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "0" => Ok(ProducerAcks::None),
            "1" => Ok(ProducerAcks::Leader),
            "all" | "-1" => Ok(ProducerAcks::All),
            _ => Err(Error::invalid_argument(format!(
                "option acks: expected 0, 1, all or -1, got {value:?}"
            ))),
        }
    }

    /// The batch `acks` field.
    pub fn wire(self) -> crate::wire::Acks {
        match self {
            ProducerAcks::None => crate::wire::Acks::None,
            ProducerAcks::Leader => crate::wire::Acks::Leader,
            ProducerAcks::All => crate::wire::Acks::All,
        }
    }
}

/// Producer settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerConfig {
    /// Connection settings.
    pub client: ClientConfig,
    /// Acknowledgement level.
    pub acks: ProducerAcks,
    /// Batch linger.
    pub linger: Duration,
    /// Bytes that make a batch ready.
    pub batch_size: usize,
    /// Bytes of unsent records allowed.
    pub buffer_memory: usize,
    /// Longest wait for buffer space.
    pub max_block: Duration,
    /// Idempotent sequences.
    pub enable_idempotence: bool,
    /// Longest time from send to acknowledgement.
    pub delivery_timeout: Duration,
    /// Transactional id: set, the producer is transactional (see
    /// `docs/transactions.md`); `None` for a plain producer.
    pub transactional_id: Option<String>,
}

impl Default for ProducerConfig {
    fn default() -> Self {
        ProducerConfig {
            client: ClientConfig::default(),
            acks: ProducerAcks::All,
            linger: Duration::from_millis(5),
            batch_size: 16 * 1024,
            buffer_memory: 32 * 1024 * 1024,
            max_block: Duration::from_millis(60_000),
            enable_idempotence: false,
            delivery_timeout: Duration::from_millis(120_000),
            transactional_id: None,
        }
    }
}

impl ProducerConfig {
    /// The documented producer options (client options apply too).
    pub fn options() -> &'static [OptionDoc] {
        PRODUCER_OPTIONS
    }

    /// A producer config for one bootstrap address.
    pub fn new(bootstrap: impl Into<String>) -> Self {
        ProducerConfig {
            client: ClientConfig::new(bootstrap),
            ..Default::default()
        }
    }

    /// Sets a producer or client option by name.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "acks" => self.acks = ProducerAcks::parse(value)?,
            "linger_ms" => self.linger = parse_ms(key, value)?,
            "batch_size" => {
                self.batch_size =
                    parse_positive(key, value)?.min(crate::wire::MAX_PAYLOAD as u64 / 2) as usize
            }
            "buffer_memory" => {
                self.buffer_memory = parse_positive(key, value)?.min(u32::MAX as u64) as usize
            }
            "max_block_ms" => self.max_block = parse_ms(key, value)?,
            "enable_idempotence" => self.enable_idempotence = parse_bool(key, value)?,
            "delivery_timeout_ms" => {
                self.delivery_timeout = Duration::from_millis(parse_positive(key, value)?)
            }
            "transactional_id" => {
                let id = value.trim();
                self.transactional_id = (!id.is_empty()).then(|| id.to_owned());
            }
            _ => {
                if !self.client.try_set(key, value)? {
                    return Err(unknown(
                        "producer",
                        key,
                        &[PRODUCER_OPTIONS, CLIENT_OPTIONS],
                    ));
                }
            }
        }
        Ok(())
    }

    /// Builds a config from name/value pairs over the defaults.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        build_from_pairs(pairs, Self::set, Self::validate)
    }

    /// Checks cross-option rules.
    pub fn validate(&self) -> Result<()> {
        self.client.validate()?;
        if self.enable_idempotence && self.acks != ProducerAcks::All {
            return Err(Error::invalid_argument(
                "enable_idempotence=true requires acks=all",
            ));
        }
        if let Some(id) = &self.transactional_id {
            if self.acks != ProducerAcks::All {
                return Err(Error::invalid_argument(
                    "transactional_id requires acks=all",
                ));
            }
            if id.chars().any(|c| c.is_whitespace() || c.is_control()) || id.len() > 249 {
                return Err(Error::invalid_argument(format!(
                    "option transactional_id: 1 to 249 characters without whitespace, got {id:?}"
                )));
            }
        }
        Ok(())
    }
}

/// Where a consumer starts when no usable offset exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoOffsetReset {
    /// From the earliest retained record.
    Earliest,
    /// From the end: only new records.
    Latest,
    /// Fail instead of skipping or replaying.
    Error,
}

/// Which records a consumer sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    /// Hide open and aborted transactional records.
    ReadCommitted,
    /// Everything in the committed log.
    ReadUncommitted,
}

impl IsolationLevel {
    /// The CONSUME/STREAM `isolation` value.
    pub fn as_str(self) -> &'static str {
        match self {
            IsolationLevel::ReadCommitted => "read_committed",
            IsolationLevel::ReadUncommitted => "read_uncommitted",
        }
    }
}

/// How a consumer fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumeMode {
    /// CONSUME long polls.
    Poll,
    /// STREAM push.
    Stream,
}

/// Consumer settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerConfig {
    /// Connection settings.
    pub client: ClientConfig,
    /// Group id (required).
    pub group_id: String,
    /// Reset policy.
    pub auto_offset_reset: AutoOffsetReset,
    /// Isolation.
    pub isolation_level: IsolationLevel,
    /// Automatic commits.
    pub enable_auto_commit: bool,
    /// Automatic commit interval.
    pub auto_commit_interval: Duration,
    /// Heartbeat interval.
    pub heartbeat_interval: Duration,
    /// Records per poll.
    pub max_poll_records: usize,
    /// Broker-side fetch wait.
    pub fetch_max_wait: Duration,
    /// Records per fetch.
    pub fetch_max_records: usize,
    /// Poll or stream.
    pub consume_mode: ConsumeMode,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        ConsumerConfig {
            client: ClientConfig::default(),
            group_id: String::new(),
            auto_offset_reset: AutoOffsetReset::Earliest,
            isolation_level: IsolationLevel::ReadCommitted,
            enable_auto_commit: false,
            auto_commit_interval: Duration::from_millis(5000),
            heartbeat_interval: Duration::from_millis(3000),
            max_poll_records: 500,
            fetch_max_wait: Duration::from_millis(500),
            fetch_max_records: 1000,
            consume_mode: ConsumeMode::Poll,
        }
    }
}

impl ConsumerConfig {
    /// The documented consumer options (client options apply too).
    pub fn options() -> &'static [OptionDoc] {
        CONSUMER_OPTIONS
    }

    /// A consumer config for one bootstrap address and group.
    pub fn new(bootstrap: impl Into<String>, group_id: impl Into<String>) -> Self {
        ConsumerConfig {
            client: ClientConfig::new(bootstrap),
            group_id: group_id.into(),
            ..Default::default()
        }
    }

    /// Sets a consumer or client option by name.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "group_id" => {
                let v = value.trim();
                if v.is_empty() || v.chars().any(char::is_whitespace) {
                    return Err(Error::invalid_argument("option group_id: must be non-empty without whitespace"));
                }
                self.group_id = v.to_owned();
            }
            "auto_offset_reset" => {
                self.auto_offset_reset = match value.trim().to_ascii_lowercase().as_str() {
                    "earliest" => AutoOffsetReset::Earliest,
                    "latest" => AutoOffsetReset::Latest,
                    "error" | "none" => AutoOffsetReset::Error,
                    _ => return Err(Error::invalid_argument(format!("option auto_offset_reset: expected earliest, latest or error, got {value:?}"))),
                }
            }
            "isolation_level" => {
                self.isolation_level = match value.trim().to_ascii_lowercase().as_str() {
                    "read_committed" => IsolationLevel::ReadCommitted,
                    "read_uncommitted" => IsolationLevel::ReadUncommitted,
                    _ => return Err(Error::invalid_argument(format!("option isolation_level: expected read_committed or read_uncommitted, got {value:?}"))),
                }
            }
            "enable_auto_commit" => self.enable_auto_commit = parse_bool(key, value)?,
            "auto_commit_interval_ms" => self.auto_commit_interval = Duration::from_millis(parse_positive(key, value)?),
            "heartbeat_interval_ms" => self.heartbeat_interval = Duration::from_millis(parse_positive(key, value)?),
            "max_poll_records" => self.max_poll_records = parse_positive(key, value)?.min(100_000) as usize,
            "fetch_max_wait_ms" => self.fetch_max_wait = Duration::from_millis(parse_u64(key, value)?.min(30_000)),
            "fetch_max_records" => self.fetch_max_records = parse_positive(key, value)?.min(8192) as usize,
            "consume_mode" => {
                self.consume_mode = match value.trim().to_ascii_lowercase().as_str() {
                    "poll" => ConsumeMode::Poll,
                    "stream" => ConsumeMode::Stream,
                    _ => return Err(Error::invalid_argument(format!("option consume_mode: expected poll or stream, got {value:?}"))),
                }
            }
            _ => {
                if !self.client.try_set(key, value)? {
                    return Err(unknown("consumer", key, &[CONSUMER_OPTIONS, CLIENT_OPTIONS]));
                }
            }
        }
        Ok(())
    }

    /// Builds a config from name/value pairs over the defaults.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        build_from_pairs(pairs, Self::set, Self::validate)
    }

    /// Checks cross-option rules.
    pub fn validate(&self) -> Result<()> {
        self.client.validate()?;
        if self.group_id.is_empty() {
            return Err(Error::invalid_argument("option group_id is required"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_types_match_their_defaults() {
        let all = CLIENT_OPTIONS
            .iter()
            .chain(PRODUCER_OPTIONS)
            .chain(CONSUMER_OPTIONS);
        for o in all {
            match o.ty {
                OptionType::Integer => assert!(o.default.parse::<u64>().is_ok(), "{}", o.name),
                OptionType::Boolean => {
                    assert!(["true", "false"].contains(&o.default), "{}", o.name)
                }
                OptionType::String | OptionType::List => {}
            }
        }
    }

    #[test]
    fn defaults_match_the_documentation() {
        let p = ProducerConfig::default();
        assert_eq!(p.linger, Duration::from_millis(5));
        assert_eq!(p.client.socket_buffer_bytes, 2 << 20);
        let c = ConsumerConfig::default();
        assert_eq!(c.heartbeat_interval, Duration::from_secs(3));
        assert_eq!(c.auto_offset_reset, AutoOffsetReset::Earliest);
        // Every documented default parses through `set`.
        for o in ClientConfig::options()
            .iter()
            .chain(ProducerConfig::options())
        {
            if !o.default.is_empty() {
                ProducerConfig::default()
                    .set(o.name, o.default)
                    .unwrap_or_else(|e| panic!("{}: {e}", o.name));
            }
        }
        for o in ConsumerConfig::options() {
            if !o.default.is_empty() {
                ConsumerConfig::default()
                    .set(o.name, o.default)
                    .unwrap_or_else(|e| panic!("{}: {e}", o.name));
            }
        }
    }

    #[test]
    fn bad_values_are_clear_errors() {
        let mut p = ProducerConfig::default();
        let e = p.set("linger_ms", "soon").unwrap_err();
        assert_eq!(e.code(), "invalid_argument");
        assert!(e.message().contains("linger_ms"), "{e}");
        let e = p.set("lingerms", "5").unwrap_err();
        assert!(e.message().contains("known options"), "{e}");
        assert!(p.set("compression", "zstd").is_err());
        assert!(p.set("bootstrap_servers", "nohost").is_err());
        assert!(p.set("acks", "2").is_err());
        p.set("acks", "1").unwrap();
        p.set("enable_idempotence", "true").unwrap();
        assert!(p.validate().is_err(), "idempotence needs acks=all");
    }

    #[test]
    fn consumer_needs_a_group() {
        assert!(ConsumerConfig::from_pairs([("bootstrap_servers", "h:1")]).is_err());
        let c =
            ConsumerConfig::from_pairs([("group_id", "g"), ("consume_mode", "STREAM")]).unwrap();
        assert_eq!(c.consume_mode, ConsumeMode::Stream);
    }
}
