//! Broker configuration: command-line flags, an optional TOML file and the
//! defaults of the product specification.
//!
//! Precedence: a flag given on the command line wins over the same key in
//! the TOML file, which wins over the built-in default. Every TOML key has
//! the flag's name with `_` instead of `-` (e.g. `--max-connections` is
//! `max_connections`).

use crate::auth::users::{UserEntry, Users};
use crate::cluster::config::{
    parse_join, parse_peers, ClusterConfig, DEFAULT_HEARTBEAT_MS, DEFAULT_SESSION_TIMEOUT_MS,
};
use crate::cluster::internal_tls::InternalTlsFiles;
use crate::faults::FaultRule;
use crate::storage::io::StorageFault;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use serde::Deserialize;

use crate::storage::CleanupPolicy;

/// Command-line flags. Every value is optional so that an omitted flag can
/// fall back to the config file; the documented default applies when neither
/// gives it.
#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "cursus-broker",
    version,
    about = "Cursus reference broker (Wire v2, standalone mode)",
    long_about = "Cursus reference broker (Wire v2, standalone mode).\n\n\
        Every option can also be set in a TOML file given with --config, using the \
        option name with '_' instead of '-' (e.g. max_connections = 100). Flags given \
        on the command line override the file."
)]
pub struct Cli {
    /// TOML configuration file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Client listener address (Wire v2). Port 0 picks a free port; "off" turns the
    /// plain listener off (only with --tls-listen). [default: 127.0.0.1:9000]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// TLS listener address (Wire v2 over TLS 1.2/1.3), next to the plain one. Port 0
    /// picks a free port. Needs --tls-cert-file and --tls-key-file. [default: off]
    #[arg(long, value_name = "ADDR")]
    pub tls_listen: Option<String>,
    /// Server certificate chain of the TLS listener (PEM). Re-read on SIGHUP.
    #[arg(long, value_name = "FILE")]
    pub tls_cert_file: Option<PathBuf>,
    /// Private key of the TLS listener (PEM). Re-read on SIGHUP.
    #[arg(long, value_name = "FILE")]
    pub tls_key_file: Option<PathBuf>,
    /// CA certificates (PEM) that sign client certificates; turns on mutual TLS.
    /// Re-read on SIGHUP. [default: off]
    #[arg(long, value_name = "FILE")]
    pub tls_client_ca_file: Option<PathBuf>,
    /// Require AUTH: every command except AUTH, HELP and EXIT needs an
    /// authenticated principal. Users are configured as [[users]] in the --config
    /// file (see docs/security.md). [default: off]
    #[arg(long)]
    pub enable_sasl: bool,
    /// HTTP health listener (/live, /ready). Port 0 picks a free port. [default: 127.0.0.1:9080]
    #[arg(long, value_name = "ADDR")]
    pub health_listen: Option<String>,
    /// Address clients are told to connect to (METADATA leaders, FIND_COORDINATOR, acks).
    /// [default: the bound client address]
    #[arg(long, value_name = "HOST:PORT")]
    pub advertised_addr: Option<String>,
    /// Broker id reported as replica, ISR member and coordinator id. [default: broker-1]
    #[arg(long, value_name = "ID")]
    pub broker_id: Option<String>,
    /// Directory holding the topic manifest and partition logs. [default: ./cursus-data]
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Maximum concurrent client connections; further connections are closed at once.
    /// [default: 1000]
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Request processing timeout in milliseconds. [default: 30000]
    #[arg(long, value_name = "MS")]
    pub request_timeout_ms: Option<u64>,
    /// Client idle timeout in milliseconds: the handshake must complete within
    /// min(idle, request) timeout; idle connections are not dropped. [default: 5000]
    #[arg(long, value_name = "MS")]
    pub idle_timeout_ms: Option<u64>,
    /// Partition count of a topic created without partitions=. [default: 4]
    #[arg(long, value_name = "N")]
    pub default_partitions: Option<u32>,
    /// Replication factor of a topic created without replication_factor=. [default: 3]
    #[arg(long, value_name = "N")]
    pub default_replication_factor: Option<u32>,
    /// Cleanup policy of a new topic: delete, compact or delete,compact. [default: delete]
    #[arg(long, value_name = "POLICY")]
    pub default_cleanup_policy: Option<String>,
    /// Broker minimum in-sync replicas, used when a topic has no override. [default: 1]
    #[arg(long, value_name = "N")]
    pub min_insync_replicas: Option<u32>,
    /// Roll partition log segments at this size in bytes. [default: 67108864]
    #[arg(long, value_name = "BYTES")]
    pub segment_bytes: Option<u64>,
    /// Broker retention in hours for topics without an override; 0 keeps data forever.
    /// [default: 168]
    #[arg(long, value_name = "HOURS")]
    pub retention_hours: Option<u64>,
    /// Broker retention in bytes per partition for topics without an override; 0 means
    /// unlimited. [default: 0]
    #[arg(long, value_name = "BYTES")]
    pub retention_bytes: Option<u64>,
    /// Interval of the background retention pass in milliseconds. [default: 60000]
    #[arg(long, value_name = "MS")]
    pub retention_check_interval_ms: Option<u64>,
    /// Interval of the background flush of unacknowledged (acks=0) data. [default: 200]
    #[arg(long, value_name = "MS")]
    pub flush_interval_ms: Option<u64>,
    /// Keepalive interval of an idle STREAM in milliseconds. [default: 1000]
    #[arg(long, value_name = "MS")]
    pub stream_keepalive_ms: Option<u64>,
    /// A STREAM that delivered no record for this many milliseconds is closed
    /// with STREAM_CONTROL type=CLOSE reason=timeout; 0 = never. [default: 300000]
    #[arg(long, value_name = "MS")]
    pub stream_timeout_ms: Option<u64>,
    /// Interval of the background compaction pass over topics with
    /// cleanup_policy compact or delete,compact, in milliseconds. [default: 60000]
    #[arg(long, value_name = "MS")]
    pub compaction_interval_ms: Option<u64>,
    /// Compaction removes a tombstone (a keyed record with an empty value) once
    /// its timestamp is older than this many milliseconds. [default: 86400000]
    #[arg(long, value_name = "MS")]
    pub compaction_tombstone_retention_ms: Option<u64>,
    /// An idempotent producer without a publish for this many milliseconds is
    /// dropped from memory (its state stays in the partition's durable
    /// producer_state.checkpoint). [default: 1800000]
    #[arg(long, value_name = "MS")]
    pub producer_state_ttl_ms: Option<u64>,
    /// Consumer group session timeout in milliseconds: a member without a
    /// JOIN_GROUP, SYNC_GROUP or HEARTBEAT for this long is removed and its
    /// group rebalances. [default: 30000]
    #[arg(long, value_name = "MS")]
    pub group_session_timeout_ms: Option<u64>,
    /// Deadline of an open transaction in milliseconds: past it the broker
    /// aborts the transaction (abort markers). [default: 60000]
    #[arg(long, value_name = "MS")]
    pub transaction_timeout_ms: Option<u64>,
    /// Age in milliseconds after which a completed transaction keeps only its
    /// producer id and epoch. [default: 604800000]
    #[arg(long, value_name = "MS")]
    pub transactional_id_expiration_ms: Option<u64>,
    /// Testing hook: abort the process (as kill -9 would) at this step of the
    /// first transaction commit reaching it: txn_before_prepare,
    /// txn_after_prepare, txn_after_markers or txn_after_decision. Off by default.
    #[arg(long, value_name = "NAME")]
    pub crash_point: Option<String>,
    /// Log filter (tracing syntax, e.g. info or cursus_broker=debug); RUST_LOG overrides it.
    /// [default: info]
    #[arg(long, value_name = "FILTER")]
    pub log_level: Option<String>,
    /// Inject a fault, for testing clients: COMMAND:ACTION:TIMES[:ERROR|:MS], e.g.
    /// PUBLISH:drop-after:1, LIST:error:*:NOT_LEADER or PUBLISH:delay-after:1:500.
    /// ACTION is error, error-after, drop-after, delay or delay-after (the last two
    /// take milliseconds); TIMES a count or *. Repeatable; none by default.
    #[arg(long = "fault", value_name = "SPEC")]
    pub faults: Vec<String>,
    /// Distributed mode: this broker's Raft node id (≥ 1). Needs --cluster-peers;
    /// see docs/cluster.md. [default: standalone]
    #[arg(long, value_name = "N")]
    pub node_id: Option<u64>,
    /// Distributed mode: the broker-to-broker listener (Raft, replication,
    /// heartbeats). [default: this node's address in --cluster-peers]
    #[arg(long, value_name = "ADDR")]
    pub cluster_listen: Option<String>,
    /// Distributed mode: every voter's cluster address, ID=HOST:PORT,... (this
    /// node's included).
    #[arg(long, value_name = "LIST")]
    pub cluster_peers: Option<String>,
    /// Distributed mode: the token every broker-to-broker request carries.
    #[arg(long, value_name = "TOKEN")]
    pub internal_auth_token: Option<String>,
    /// Distributed mode: heartbeat interval to the Raft leader. [default: 300]
    #[arg(long, value_name = "MS")]
    pub broker_heartbeat_ms: Option<u64>,
    /// Distributed mode: a broker silent this long is inactive and its partitions
    /// fail over. [default: 2000]
    #[arg(long, value_name = "MS")]
    pub broker_session_timeout_ms: Option<u64>,
    /// Distributed mode: this broker holds no partition replicas; it takes part in
    /// Raft and serves metadata, coordination and redirects. [default: off]
    #[arg(long)]
    pub no_replicas: bool,
    /// Distributed mode: join a running cluster through these members' cluster
    /// addresses (HOST:PORT, repeatable or comma-separated) as a broker added at
    /// run time (its node id not in --cluster-peers; needs --cluster-listen).
    #[arg(long = "cluster-join", value_name = "ADDR")]
    pub cluster_join: Vec<String>,
    /// Distributed mode: a broker joining with --cluster-join stays a Raft learner
    /// (hosts replicas, does not vote). [default: promoted to voter]
    #[arg(long)]
    pub cluster_learner: bool,
    /// Distributed mode: a clean stop also removes this broker from the Raft
    /// membership (LEAVE_CLUSTER decommission). [default: off]
    #[arg(long)]
    pub decommission: bool,
    /// Distributed mode: the number of transaction coordinator shards, 1..=10000;
    /// fixed when the cluster is first created (a broker with another count is
    /// refused). [default: 50]
    #[arg(long, value_name = "N")]
    pub transaction_coordinator_shards: Option<u32>,
    /// Distributed mode: the cluster listener requires mutual TLS and peers are
    /// dialed over it. Needs --internal-tls-cert-path, --internal-tls-key-path and
    /// --internal-tls-ca-path. [default: off]
    #[arg(long)]
    pub internal_use_tls: bool,
    /// Distributed mode: this broker's certificate chain (PEM) on the cluster
    /// listener, also presented as client certificate to peers.
    #[arg(long, value_name = "FILE")]
    pub internal_tls_cert_path: Option<PathBuf>,
    /// Distributed mode: the private key (PEM) of --internal-tls-cert-path.
    #[arg(long, value_name = "FILE")]
    pub internal_tls_key_path: Option<PathBuf>,
    /// Distributed mode: the CA certificates (PEM) that sign every member's
    /// internal certificate; peers are trusted only through them.
    #[arg(long, value_name = "FILE")]
    pub internal_tls_ca_path: Option<PathBuf>,
    /// Testing only: make storage I/O fail on purpose,
    /// OP:KIND[:after=N][:times=N|*][:path=SUBSTRING], e.g. fsync:fail:after=3
    /// or write:enospc. OP is write or fsync; KIND fail, enospc, edquot or
    /// short (write half, then abort). Repeatable; none by default.
    #[arg(long = "storage-fault", value_name = "SPEC")]
    pub storage_faults: Vec<String>,
}

/// The TOML file: the same keys as the flags, all optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<String>,
    tls_listen: Option<String>,
    tls_cert_file: Option<PathBuf>,
    tls_key_file: Option<PathBuf>,
    tls_client_ca_file: Option<PathBuf>,
    enable_sasl: Option<bool>,
    users: Option<Vec<UserEntry>>,
    health_listen: Option<String>,
    advertised_addr: Option<String>,
    broker_id: Option<String>,
    data_dir: Option<PathBuf>,
    max_connections: Option<usize>,
    request_timeout_ms: Option<u64>,
    idle_timeout_ms: Option<u64>,
    default_partitions: Option<u32>,
    default_replication_factor: Option<u32>,
    default_cleanup_policy: Option<String>,
    min_insync_replicas: Option<u32>,
    segment_bytes: Option<u64>,
    retention_hours: Option<u64>,
    retention_bytes: Option<u64>,
    retention_check_interval_ms: Option<u64>,
    flush_interval_ms: Option<u64>,
    stream_keepalive_ms: Option<u64>,
    stream_timeout_ms: Option<u64>,
    compaction_interval_ms: Option<u64>,
    compaction_tombstone_retention_ms: Option<u64>,
    producer_state_ttl_ms: Option<u64>,
    group_session_timeout_ms: Option<u64>,
    transaction_timeout_ms: Option<u64>,
    transactional_id_expiration_ms: Option<u64>,
    crash_point: Option<String>,
    log_level: Option<String>,
    faults: Option<Vec<String>>,
    storage_faults: Option<Vec<String>>,
    node_id: Option<u64>,
    cluster_listen: Option<String>,
    cluster_peers: Option<String>,
    internal_auth_token: Option<String>,
    broker_heartbeat_ms: Option<u64>,
    broker_session_timeout_ms: Option<u64>,
    no_replicas: Option<bool>,
    cluster_join: Option<Vec<String>>,
    cluster_learner: Option<bool>,
    decommission: Option<bool>,
    transaction_coordinator_shards: Option<u32>,
    internal_use_tls: Option<bool>,
    internal_tls_cert_path: Option<PathBuf>,
    internal_tls_key_path: Option<PathBuf>,
    internal_tls_ca_path: Option<PathBuf>,
}

/// A configuration problem found at startup.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config file is not valid TOML for this broker.
    #[error("invalid config file {path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A value is out of range.
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// The TLS listener's settings (docs/security.md "TLS").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// TLS listener address.
    pub listen: String,
    /// Server certificate chain (PEM).
    pub cert_file: PathBuf,
    /// Server private key (PEM).
    pub key_file: PathBuf,
    /// CA of client certificates (PEM); `Some` turns on mutual TLS.
    pub client_ca_file: Option<PathBuf>,
}

/// The value of `listen` that turns the plain listener off.
pub const LISTEN_OFF: &str = "off";

/// The resolved configuration the broker runs with. Its `Debug` output
/// never shows a token (see [`Users`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Client listener address, or [`LISTEN_OFF`].
    pub listen: String,
    /// The TLS listener, when configured.
    pub tls: Option<TlsConfig>,
    /// Whether AUTH is required.
    pub enable_sasl: bool,
    /// Configured users (only with `enable_sasl`).
    pub users: Users,
    /// Health listener address.
    pub health_listen: String,
    /// Advertised client address; `None` means the bound listener address.
    pub advertised_addr: Option<String>,
    /// Broker id.
    pub broker_id: String,
    /// Data directory.
    pub data_dir: PathBuf,
    /// Connection limit.
    pub max_connections: usize,
    /// Request processing timeout.
    pub request_timeout: Duration,
    /// Client idle timeout.
    pub idle_timeout: Duration,
    /// Partitions of a new topic.
    pub default_partitions: u32,
    /// Replication factor of a new topic.
    pub default_replication_factor: u32,
    /// Cleanup policy of a new topic.
    pub default_cleanup_policy: CleanupPolicy,
    /// Broker minimum in-sync replicas.
    pub min_insync_replicas: u32,
    /// Segment size of partition logs.
    pub segment_bytes: u64,
    /// Broker retention hours (0 = forever).
    pub retention_hours: u64,
    /// Broker retention bytes per partition (0 = unlimited).
    pub retention_bytes: u64,
    /// Retention pass interval.
    pub retention_check_interval: Duration,
    /// Background flush interval.
    pub flush_interval: Duration,
    /// STREAM keepalive interval.
    pub stream_keepalive: Duration,
    /// A stream without a delivered record for this long is closed
    /// (`reason=timeout`); zero = never.
    pub stream_timeout: Duration,
    /// Compaction pass interval.
    pub compaction_interval: Duration,
    /// Age after which compaction removes a tombstone.
    pub compaction_tombstone_retention: Duration,
    /// Idle time after which an idempotent producer leaves memory.
    pub producer_state_ttl: Duration,
    /// Consumer group session timeout.
    pub group_session_timeout: Duration,
    /// Deadline of an open transaction.
    pub transaction_timeout: Duration,
    /// Age after which a completed transaction is reduced to a tombstone.
    pub transactional_id_expiration: Duration,
    /// Transaction commit crash point (testing hook; see
    /// [`crate::txn::CRASH_POINTS`]).
    pub crash_point: Option<String>,
    /// Log filter.
    pub log_level: String,
    /// Injected faults (testing aid; see [`crate::faults`]).
    pub faults: Vec<FaultRule>,
    /// Injected storage faults (testing only; see [`crate::storage::io`]).
    pub storage_faults: Vec<StorageFault>,
    /// Distributed mode (`None`: standalone).
    pub cluster: Option<ClusterConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:9000".into(),
            tls: None,
            enable_sasl: false,
            users: Users::default(),
            health_listen: "127.0.0.1:9080".into(),
            advertised_addr: None,
            broker_id: "broker-1".into(),
            data_dir: PathBuf::from("./cursus-data"),
            max_connections: 1000,
            request_timeout: Duration::from_millis(30_000),
            idle_timeout: Duration::from_millis(5_000),
            default_partitions: 4,
            default_replication_factor: 3,
            default_cleanup_policy: CleanupPolicy::Delete,
            min_insync_replicas: 1,
            segment_bytes: crate::storage::DEFAULT_SEGMENT_BYTES,
            retention_hours: 168,
            retention_bytes: 0,
            retention_check_interval: Duration::from_millis(60_000),
            flush_interval: Duration::from_millis(200),
            stream_keepalive: Duration::from_millis(1_000),
            stream_timeout: Duration::from_millis(300_000),
            compaction_interval: Duration::from_millis(60_000),
            compaction_tombstone_retention: Duration::from_millis(86_400_000),
            producer_state_ttl: Duration::from_millis(1_800_000),
            group_session_timeout: Duration::from_millis(30_000),
            transaction_timeout: Duration::from_millis(60_000),
            transactional_id_expiration: Duration::from_millis(604_800_000),
            crash_point: None,
            log_level: "info".into(),
            faults: Vec::new(),
            storage_faults: Vec::new(),
            cluster: None,
        }
    }
}

impl Config {
    /// Resolves flags, the optional file and defaults, then validates.
    pub fn from_cli(cli: Cli) -> Result<Config, ConfigError> {
        let file = match &cli.config {
            Some(path) => load_file(path)?,
            None => FileConfig::default(),
        };
        let d = Config::default();
        // `pick!(field)` takes the flag, else the file value, else the default.
        macro_rules! pick {
            ($f:ident) => {
                cli.$f.clone().or(file.$f.clone())
            };
        }
        let ms =
            |v: Option<u64>, default: Duration| v.map(Duration::from_millis).unwrap_or(default);
        let cleanup = match pick!(default_cleanup_policy) {
            Some(text) => text.parse::<CleanupPolicy>().map_err(|_| {
                ConfigError::Invalid(format!(
                    "default_cleanup_policy {text:?} is not delete, compact or delete,compact"
                ))
            })?,
            None => d.default_cleanup_policy,
        };
        // Flags replace the file's list rather than adding to it.
        let fault_specs = match (cli.faults.is_empty(), &file.faults) {
            (true, Some(from_file)) => from_file.clone(),
            _ => cli.faults.clone(),
        };
        let faults = fault_specs
            .iter()
            .map(|spec| spec.parse::<FaultRule>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(ConfigError::Invalid)?;
        let storage_fault_specs = match (cli.storage_faults.is_empty(), &file.storage_faults) {
            (true, Some(from_file)) => from_file.clone(),
            _ => cli.storage_faults.clone(),
        };
        let storage_faults = storage_fault_specs
            .iter()
            .map(|spec| spec.parse::<StorageFault>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(ConfigError::Invalid)?;
        let tls = tls_config(
            pick!(tls_listen),
            pick!(tls_cert_file),
            pick!(tls_key_file),
            pick!(tls_client_ca_file),
        )?;
        let enable_sasl = cli.enable_sasl || file.enable_sasl.unwrap_or(false);
        let users = Users::from_entries(file.users.as_deref().unwrap_or_default())
            .map_err(ConfigError::Invalid)?;
        let cluster_join = match (cli.cluster_join.is_empty(), &file.cluster_join) {
            (true, Some(from_file)) => from_file.clone(),
            _ => cli.cluster_join.clone(),
        };
        let cluster = cluster_config(ClusterSettings {
            node_id: pick!(node_id),
            listen: pick!(cluster_listen),
            peers: pick!(cluster_peers),
            token: pick!(internal_auth_token),
            heartbeat_ms: pick!(broker_heartbeat_ms),
            session_ms: pick!(broker_session_timeout_ms),
            no_replicas: cli.no_replicas || file.no_replicas.unwrap_or(false),
            join: parse_join(&cluster_join).map_err(ConfigError::Invalid)?,
            learner: cli.cluster_learner || file.cluster_learner.unwrap_or(false),
            decommission: cli.decommission || file.decommission.unwrap_or(false),
            txn_shards: pick!(transaction_coordinator_shards),
            use_tls: cli.internal_use_tls || file.internal_use_tls.unwrap_or(false),
            tls_cert: pick!(internal_tls_cert_path),
            tls_key: pick!(internal_tls_key_path),
            tls_ca: pick!(internal_tls_ca_path),
        })?;
        let broker_id = pick!(broker_id).unwrap_or_else(|| match &cluster {
            Some(c) => format!("broker-{}", c.node_id),
            None => d.broker_id.clone(),
        });
        let config = Config {
            listen: pick!(listen).unwrap_or(d.listen),
            tls,
            enable_sasl,
            users,
            health_listen: pick!(health_listen).unwrap_or(d.health_listen),
            advertised_addr: pick!(advertised_addr),
            broker_id,
            data_dir: pick!(data_dir).unwrap_or(d.data_dir),
            max_connections: pick!(max_connections).unwrap_or(d.max_connections),
            request_timeout: ms(pick!(request_timeout_ms), d.request_timeout),
            idle_timeout: ms(pick!(idle_timeout_ms), d.idle_timeout),
            default_partitions: pick!(default_partitions).unwrap_or(d.default_partitions),
            default_replication_factor: pick!(default_replication_factor)
                .unwrap_or(d.default_replication_factor),
            default_cleanup_policy: cleanup,
            min_insync_replicas: pick!(min_insync_replicas).unwrap_or(d.min_insync_replicas),
            segment_bytes: pick!(segment_bytes).unwrap_or(d.segment_bytes),
            retention_hours: pick!(retention_hours).unwrap_or(d.retention_hours),
            retention_bytes: pick!(retention_bytes).unwrap_or(d.retention_bytes),
            retention_check_interval: ms(
                pick!(retention_check_interval_ms),
                d.retention_check_interval,
            ),
            flush_interval: ms(pick!(flush_interval_ms), d.flush_interval),
            stream_keepalive: ms(pick!(stream_keepalive_ms), d.stream_keepalive),
            stream_timeout: ms(pick!(stream_timeout_ms), d.stream_timeout),
            compaction_interval: ms(pick!(compaction_interval_ms), d.compaction_interval),
            compaction_tombstone_retention: ms(
                pick!(compaction_tombstone_retention_ms),
                d.compaction_tombstone_retention,
            ),
            producer_state_ttl: ms(pick!(producer_state_ttl_ms), d.producer_state_ttl),
            group_session_timeout: ms(pick!(group_session_timeout_ms), d.group_session_timeout),
            transaction_timeout: ms(pick!(transaction_timeout_ms), d.transaction_timeout),
            transactional_id_expiration: ms(
                pick!(transactional_id_expiration_ms),
                d.transactional_id_expiration,
            ),
            crash_point: pick!(crash_point).filter(|c| !c.is_empty()),
            log_level: pick!(log_level).unwrap_or(d.log_level),
            faults,
            storage_faults,
            cluster,
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks ranges that would make the broker misbehave.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: &str| Err(ConfigError::Invalid(m.to_owned()));
        let tls_listen = self.tls.as_ref().map(|t| &t.listen);
        let addresses = [
            ("listen", Some(&self.listen).filter(|l| *l != LISTEN_OFF)),
            ("tls_listen", tls_listen),
            ("health_listen", Some(&self.health_listen)),
        ];
        for (name, addr) in addresses {
            let Some(addr) = addr else { continue };
            if addr.parse::<SocketAddr>().is_err() && !addr.contains(':') {
                return Err(ConfigError::Invalid(format!(
                    "{name} {addr:?} is not HOST:PORT"
                )));
            }
        }
        if self.listen == LISTEN_OFF && self.tls.is_none() {
            return invalid("listen = \"off\" needs tls_listen (no listener would be left)");
        }
        if self.enable_sasl && self.users.is_empty() {
            return invalid("enable_sasl is on but no [[users]] are configured");
        }
        if !self.enable_sasl && !self.users.is_empty() {
            return invalid(
                "[[users]] are configured but enable_sasl is off; set enable_sasl = true",
            );
        }
        if self.max_connections == 0 {
            return invalid("max_connections must be at least 1");
        }
        if self.request_timeout.is_zero() || self.idle_timeout.is_zero() {
            return invalid("request_timeout_ms and idle_timeout_ms must be positive");
        }
        if self.default_partitions == 0 || self.default_partitions > crate::topics::MAX_PARTITIONS {
            return invalid("default_partitions must be between 1 and 10000");
        }
        if self.default_replication_factor == 0 {
            return invalid("default_replication_factor must be at least 1");
        }
        if self.min_insync_replicas == 0 {
            return invalid("min_insync_replicas must be at least 1");
        }
        if self.segment_bytes == 0 || self.segment_bytes > crate::storage::MAX_SEGMENT_BYTES {
            return invalid("segment_bytes must be between 1 and 1073741824");
        }
        if self.retention_check_interval.is_zero()
            || self.flush_interval.is_zero()
            || self.stream_keepalive.is_zero()
            || self.compaction_interval.is_zero()
            || self.producer_state_ttl.is_zero()
            || self.group_session_timeout.is_zero()
            || self.transaction_timeout.is_zero()
            || self.transactional_id_expiration.is_zero()
        {
            return invalid("interval settings must be positive");
        }
        if let Some(point) = &self.crash_point {
            if !crate::txn::CRASH_POINTS.contains(&point.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "crash_point {point:?} is not one of {}",
                    crate::txn::CRASH_POINTS.join(", ")
                )));
            }
        }
        if self.broker_id.is_empty() || self.broker_id.contains(char::is_whitespace) {
            return invalid("broker_id must be non-empty without whitespace");
        }
        Ok(())
    }

    /// The handshake deadline: the smaller of the idle and request timeouts.
    pub fn handshake_timeout(&self) -> Duration {
        self.idle_timeout.min(self.request_timeout)
    }
}

/// The distributed-mode settings as given (flags over file).
struct ClusterSettings {
    node_id: Option<u64>,
    listen: Option<String>,
    peers: Option<String>,
    token: Option<String>,
    heartbeat_ms: Option<u64>,
    session_ms: Option<u64>,
    no_replicas: bool,
    join: Vec<String>,
    learner: bool,
    decommission: bool,
    txn_shards: Option<u32>,
    use_tls: bool,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    tls_ca: Option<PathBuf>,
}

/// The distributed-mode settings: all of them need `node_id` and
/// `cluster_peers` (or, for a broker added at run time, `cluster_join`).
fn cluster_config(settings: ClusterSettings) -> Result<Option<ClusterConfig>, ConfigError> {
    let ClusterSettings {
        node_id,
        listen,
        peers,
        token,
        heartbeat_ms,
        session_ms,
        no_replicas,
        join,
        learner,
        decommission,
        txn_shards,
        use_tls,
        tls_cert,
        tls_key,
        tls_ca,
    } = settings;
    let internal_tls = internal_tls_files(use_tls, tls_cert, tls_key, tls_ca)?;
    let (node_id, peers) = match (node_id, peers) {
        (None, None) => {
            if listen.is_some()
                || token.is_some()
                || heartbeat_ms.is_some()
                || session_ms.is_some()
                || no_replicas
                || !join.is_empty()
                || learner
                || decommission
                || txn_shards.is_some()
                || internal_tls.is_some()
            {
                return Err(ConfigError::Invalid(
                    "cluster settings need node_id and cluster_peers".into(),
                ));
            }
            return Ok(None);
        }
        (Some(n), Some(p)) => (n, parse_peers(&p).map_err(ConfigError::Invalid)?),
        (Some(n), None) if !join.is_empty() => (n, Default::default()),
        _ => {
            return Err(ConfigError::Invalid(
                "node_id and cluster_peers (or cluster_join) go together".into(),
            ))
        }
    };
    let cluster = ClusterConfig {
        node_id,
        cluster_listen: listen
            .or_else(|| peers.get(&node_id).cloned())
            .unwrap_or_default(),
        peers,
        internal_auth_token: token,
        internal_tls,
        heartbeat_interval: Duration::from_millis(heartbeat_ms.unwrap_or(DEFAULT_HEARTBEAT_MS)),
        session_timeout: Duration::from_millis(session_ms.unwrap_or(DEFAULT_SESSION_TIMEOUT_MS)),
        hosts_replicas: !no_replicas,
        join,
        learner,
        decommission,
        txn_shards: txn_shards.unwrap_or(crate::cluster::shards::DEFAULT_SHARDS),
    };
    cluster.validate().map_err(ConfigError::Invalid)?;
    Ok(Some(cluster))
}

/// The cluster listener's mutual TLS: `internal_use_tls` needs the three
/// files, and the files need `internal_use_tls`.
fn internal_tls_files(
    use_tls: bool,
    cert_path: Option<PathBuf>,
    key_path: Option<PathBuf>,
    ca_path: Option<PathBuf>,
) -> Result<Option<InternalTlsFiles>, ConfigError> {
    if !use_tls {
        if cert_path.is_some() || key_path.is_some() || ca_path.is_some() {
            return Err(ConfigError::Invalid(
                "internal_tls_cert_path, internal_tls_key_path and internal_tls_ca_path \
                 need internal_use_tls = true"
                    .into(),
            ));
        }
        return Ok(None);
    }
    let missing = |key: &str| ConfigError::Invalid(format!("internal_use_tls needs {key}"));
    Ok(Some(InternalTlsFiles {
        cert_path: cert_path.ok_or_else(|| missing("internal_tls_cert_path"))?,
        key_path: key_path.ok_or_else(|| missing("internal_tls_key_path"))?,
        ca_path: ca_path.ok_or_else(|| missing("internal_tls_ca_path"))?,
    }))
}

/// The TLS settings: all of them need `tls_listen`, which needs a
/// certificate and a key.
fn tls_config(
    listen: Option<String>,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    client_ca_file: Option<PathBuf>,
) -> Result<Option<TlsConfig>, ConfigError> {
    let Some(listen) = listen.filter(|l| !l.is_empty()) else {
        if cert_file.is_some() || key_file.is_some() || client_ca_file.is_some() {
            return Err(ConfigError::Invalid(
                "tls_cert_file, tls_key_file and tls_client_ca_file need tls_listen".into(),
            ));
        }
        return Ok(None);
    };
    let missing = |key: &str| ConfigError::Invalid(format!("tls_listen needs {key}"));
    Ok(Some(TlsConfig {
        listen,
        cert_file: cert_file.ok_or_else(|| missing("tls_cert_file"))?,
        key_file: key_file.ok_or_else(|| missing("tls_key_file"))?,
        client_ca_file,
    }))
}

fn load_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("cursus-broker").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn defaults_match_the_specification() {
        let c = Config::from_cli(parse(&[])).unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.listen, "127.0.0.1:9000");
        assert_eq!(c.health_listen, "127.0.0.1:9080");
        assert_eq!(c.max_connections, 1000);
        assert_eq!(c.handshake_timeout(), Duration::from_millis(5000));
    }

    #[test]
    fn flags_override_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(&path, "max_connections = 7\ndefault_partitions = 2\n").unwrap();
        let c = Config::from_cli(parse(&[
            "--config",
            path.to_str().unwrap(),
            "--default-partitions",
            "3",
        ]))
        .unwrap();
        assert_eq!(c.max_connections, 7);
        assert_eq!(c.default_partitions, 3);
    }

    #[test]
    fn group_session_timeout_defaults_to_30s_and_reads_the_file() {
        assert_eq!(
            Config::default().group_session_timeout,
            Duration::from_millis(30_000)
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(&path, "group_session_timeout_ms = 1500\n").unwrap();
        let c = Config::from_cli(parse(&["--config", path.to_str().unwrap()])).unwrap();
        assert_eq!(c.group_session_timeout, Duration::from_millis(1500));
        assert!(Config::from_cli(parse(&["--group-session-timeout-ms", "0"])).is_err());
    }

    #[test]
    fn transaction_settings_from_flags_and_file() {
        let d = Config::default();
        assert_eq!(d.transaction_timeout, Duration::from_millis(60_000));
        assert_eq!(
            d.transactional_id_expiration,
            Duration::from_millis(604_800_000)
        );
        assert_eq!(d.crash_point, None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(
            &path,
            "transaction_timeout_ms = 500\ntransactional_id_expiration_ms = 900\n\
             crash_point = \"txn_after_markers\"\n",
        )
        .unwrap();
        let c = Config::from_cli(parse(&["--config", path.to_str().unwrap()])).unwrap();
        assert_eq!(c.transaction_timeout, Duration::from_millis(500));
        assert_eq!(c.transactional_id_expiration, Duration::from_millis(900));
        assert_eq!(c.crash_point.as_deref(), Some("txn_after_markers"));
        let c = Config::from_cli(parse(&[
            "--transaction-timeout-ms",
            "250",
            "--crash-point",
            "txn_before_prepare",
        ]))
        .unwrap();
        assert_eq!(c.transaction_timeout, Duration::from_millis(250));
        assert_eq!(c.crash_point.as_deref(), Some("txn_before_prepare"));
        assert!(Config::from_cli(parse(&["--crash-point", "txn_somewhere"])).is_err());
        assert!(Config::from_cli(parse(&["--transaction-timeout-ms", "0"])).is_err());
    }

    #[test]
    fn security_settings_are_checked_together() {
        let invalid = |args: &[&str]| match Config::from_cli(parse(args)) {
            Err(ConfigError::Invalid(m)) => m,
            other => panic!("{args:?}: {other:?}"),
        };
        assert!(invalid(&["--listen", "off"]).contains("tls_listen"));
        assert!(invalid(&["--tls-listen", "127.0.0.1:0"]).contains("tls_cert_file"));
        assert!(invalid(&["--tls-key-file", "k.pem"]).contains("need tls_listen"));
        assert!(invalid(&["--enable-sasl"]).contains("no [[users]]"));
        let c = Config::from_cli(parse(&[
            "--listen",
            "off",
            "--tls-listen",
            "127.0.0.1:0",
            "--tls-cert-file",
            "c.pem",
            "--tls-key-file",
            "k.pem",
        ]))
        .unwrap();
        assert_eq!(c.tls.unwrap().cert_file, PathBuf::from("c.pem"));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        let users = "[[users]]\nprincipal = \"ops\"\ntoken = \"s3cret\"\npermissions = [\"*\"]\n";
        std::fs::write(&path, users).unwrap();
        let file = path.to_str().unwrap();
        assert!(invalid(&["--config", file]).contains("enable_sasl is off"));
        let c = Config::from_cli(parse(&["--config", file, "--enable-sasl"])).unwrap();
        assert!(c.enable_sasl && !c.users.is_empty());
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    #[test]
    fn compaction_stream_and_producer_settings() {
        let d = Config::default();
        assert_eq!(d.stream_timeout, Duration::from_millis(300_000));
        assert_eq!(d.compaction_interval, Duration::from_millis(60_000));
        assert_eq!(
            d.compaction_tombstone_retention,
            Duration::from_millis(86_400_000)
        );
        assert_eq!(d.producer_state_ttl, Duration::from_millis(1_800_000));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(
            &path,
            "stream_timeout_ms = 0\ncompaction_interval_ms = 50\n\
             compaction_tombstone_retention_ms = 0\nproducer_state_ttl_ms = 70\n",
        )
        .unwrap();
        let c = Config::from_cli(parse(&["--config", path.to_str().unwrap()])).unwrap();
        assert_eq!(c.stream_timeout, Duration::ZERO);
        assert_eq!(c.compaction_interval, Duration::from_millis(50));
        assert_eq!(c.compaction_tombstone_retention, Duration::ZERO);
        assert_eq!(c.producer_state_ttl, Duration::from_millis(70));
        let c = Config::from_cli(parse(&["--stream-timeout-ms", "250"])).unwrap();
        assert_eq!(c.stream_timeout, Duration::from_millis(250));
        assert!(Config::from_cli(parse(&["--compaction-interval-ms", "0"])).is_err());
        assert!(Config::from_cli(parse(&["--producer-state-ttl-ms", "0"])).is_err());
    }

    #[test]
    fn unknown_file_keys_and_bad_values_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(&path, "max_conections = 7\n").unwrap();
        let cli = parse(&["--config", path.to_str().unwrap()]);
        assert!(matches!(
            Config::from_cli(cli),
            Err(ConfigError::Parse { .. })
        ));
        assert!(Config::from_cli(parse(&["--max-connections", "0"])).is_err());
        assert!(Config::from_cli(parse(&["--default-cleanup-policy", "compact,delete"])).is_err());
    }

    #[test]
    fn transaction_coordinator_shards_from_flag_and_file() {
        let cluster = [
            "--node-id",
            "1",
            "--cluster-peers",
            "1=127.0.0.1:7001",
            "--internal-auth-token",
            "t",
        ];
        let shards = |extra: &[&str]| {
            let args: Vec<&str> = cluster.iter().chain(extra).copied().collect();
            Config::from_cli(parse(&args)).map(|c| c.cluster.unwrap().txn_shards)
        };
        assert_eq!(shards(&[]).unwrap(), 50);
        assert_eq!(
            shards(&["--transaction-coordinator-shards", "7"]).unwrap(),
            7
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(&path, "transaction_coordinator_shards = 12\n").unwrap();
        assert_eq!(shards(&["--config", path.to_str().unwrap()]).unwrap(), 12);
        for bad in ["0", "10001"] {
            assert!(matches!(
                shards(&["--transaction-coordinator-shards", bad]),
                Err(ConfigError::Invalid(ref m)) if m.contains("transaction_coordinator_shards")
            ));
        }
        // A cluster setting without distributed mode.
        assert!(matches!(
            Config::from_cli(parse(&["--transaction-coordinator-shards", "7"])),
            Err(ConfigError::Invalid(_))
        ));
    }

    #[test]
    fn internal_tls_needs_all_three_files_and_the_switch() {
        let cluster = [
            "--node-id",
            "1",
            "--cluster-peers",
            "1=127.0.0.1:7001",
            "--internal-auth-token",
            "t",
        ];
        let files = [
            "--internal-tls-cert-path",
            "c.pem",
            "--internal-tls-key-path",
            "k.pem",
            "--internal-tls-ca-path",
            "ca.pem",
        ];
        let tls = |extra: &[&str]| {
            let args: Vec<&str> = cluster.iter().chain(extra).copied().collect();
            Config::from_cli(parse(&args)).map(|c| c.cluster.unwrap().internal_tls)
        };
        assert_eq!(tls(&[]).unwrap(), None, "off by default");
        let on: Vec<&str> = std::iter::once("--internal-use-tls").chain(files).collect();
        assert_eq!(
            tls(&on).unwrap(),
            Some(InternalTlsFiles {
                cert_path: "c.pem".into(),
                key_path: "k.pem".into(),
                ca_path: "ca.pem".into(),
            })
        );
        // Each file is required once the switch is on.
        for missing in [
            "internal_tls_cert_path",
            "internal_tls_key_path",
            "internal_tls_ca_path",
        ] {
            let flag = format!("--{}", missing.replace('_', "-"));
            let mut args = vec!["--internal-use-tls"];
            for pair in files.chunks(2) {
                if pair[0] != flag {
                    args.extend_from_slice(pair);
                }
            }
            assert!(matches!(
                tls(&args),
                Err(ConfigError::Invalid(ref m)) if m.contains(missing)
            ));
        }
        // Files without the switch would silently leave the listener plain.
        assert!(matches!(
            tls(&files),
            Err(ConfigError::Invalid(ref m)) if m.contains("internal_use_tls")
        ));
        // The TOML keys; and the settings belong to distributed mode.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(
            &path,
            "internal_use_tls = true\ninternal_tls_cert_path = \"c.pem\"\n\
             internal_tls_key_path = \"k.pem\"\ninternal_tls_ca_path = \"ca.pem\"\n",
        )
        .unwrap();
        let file = path.to_str().unwrap();
        assert!(tls(&["--config", file]).unwrap().is_some());
        assert!(matches!(
            Config::from_cli(parse(&["--config", file])),
            Err(ConfigError::Invalid(ref m)) if m.contains("node_id")
        ));
    }
}
