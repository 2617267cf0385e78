//! The broker's own settings (standalone mode), each declared once below
//! with its flag, file key, default, check and help text. How a setting is
//! declared, and how to add one: [`crate::settings`]. The distributed-mode
//! settings are declared next to the cluster code; the binary's `Cli`
//! composes the two sections.
//!
//! Precedence: a flag given on the command line wins over the same key in
//! the TOML file, which wins over the built-in default. Every TOML key has
//! the flag's name with `_` instead of `-` (e.g. `--max-connections` is
//! `max_connections`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::auth::users::{UserEntry, Users};
use crate::faults::FaultRule;
pub use crate::settings::ConfigError;
use crate::settings::{check, millis, settings};
use crate::storage::io::StorageFault;
use crate::storage::{CleanupPolicy, DEFAULT_SEGMENT_BYTES, MAX_SEGMENT_BYTES};
use crate::topics::MAX_PARTITIONS;
use crate::txn::CRASH_POINTS;

/// The value of `listen` that turns the plain listener off.
pub const LISTEN_OFF: &str = "off";

/// The check of both client timeouts.
const TIMEOUTS_POSITIVE: &str = "request_timeout_ms and idle_timeout_ms must be positive";
/// The check of the background intervals and the lifetimes.
const INTERVALS_POSITIVE: &str = "interval settings must be positive";

settings! {
    /// The broker's settings as given: its command-line flags (the binary's
    /// `Cli` flattens them) and the same keys in the TOML file.
    pub struct BrokerSettings;
    /// The resolved configuration the broker runs with. Its `Debug` output
    /// never shows a token (see [`Users`]).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Config;

    /// Client listener address (Wire v2). Port 0 picks a free port; "off" turns the
    /// plain listener off (only with --tls-listen). [default: 127.0.0.1:9000]
    #[arg(long, value_name = "ADDR")]
    listen: Option<String> => listen: String = match listen {
        Some(off) if off == LISTEN_OFF => off,
        listen => address("listen", listen.unwrap_or_else(|| "127.0.0.1:9000".into()))?,
    },
    /// TLS listener address (Wire v2 over TLS 1.2/1.3), next to the plain one. Port 0
    /// picks a free port. Needs --tls-cert-file and --tls-key-file. [default: off]
    #[arg(long, value_name = "ADDR")]
    tls_listen: Option<String>,
    /// Server certificate chain of the TLS listener (PEM). Re-read on SIGHUP.
    #[arg(long, value_name = "FILE")]
    tls_cert_file: Option<PathBuf>,
    /// Private key of the TLS listener (PEM). Re-read on SIGHUP.
    #[arg(long, value_name = "FILE")]
    tls_key_file: Option<PathBuf>,
    /// CA certificates (PEM) that sign client certificates; turns on mutual TLS.
    /// Re-read on SIGHUP. [default: off]
    #[arg(long, value_name = "FILE")]
    tls_client_ca_file: Option<PathBuf>,
    =>
    /// The TLS listener, when configured.
    tls: Option<TlsConfig> =
        tls_config(tls_listen, tls_cert_file, tls_key_file, tls_client_ca_file)?,
    /// Require AUTH: every command except AUTH, HELP and EXIT needs an
    /// authenticated principal. Users are configured as [[users]] in the --config
    /// file (see docs/security.md). [default: off]
    #[arg(long)]
    enable_sasl: bool => enable_sasl: bool = enable_sasl,
    /// The `[[users]]` tables of the TOML file (no flag): each a principal,
    /// its token or token_sha256 and its permissions.
    #[arg(skip)]
    users: Vec<UserEntry> =>
    /// Configured users (only with `enable_sasl`).
    users: Users = Users::from_entries(&users)?,
    /// HTTP health listener (/live, /ready). Port 0 picks a free port. [default: 127.0.0.1:9080]
    #[arg(long, value_name = "ADDR")]
    health_listen: Option<String> => health_listen: String =
        address("health_listen", health_listen.unwrap_or_else(|| "127.0.0.1:9080".into()))?,
    /// Address clients are told to connect to (METADATA leaders, FIND_COORDINATOR, acks).
    /// [default: the bound client address]
    #[arg(long, value_name = "HOST:PORT")]
    advertised_addr: Option<String> => advertised_addr: Option<String> = advertised_addr,
    /// Broker id reported as replica, ISR member and coordinator id. [default: broker-1]
    #[arg(long, value_name = "ID")]
    broker_id: Option<String> => broker_id: String = check(
        broker_id.unwrap_or_else(|| "broker-1".into()),
        |id| !id.is_empty() && !id.contains(char::is_whitespace),
        "broker_id must be non-empty without whitespace",
    )?,
    /// Directory holding the topic manifest and partition logs. [default: ./cursus-data]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf> => data_dir: PathBuf =
        data_dir.unwrap_or_else(|| "./cursus-data".into()),
    /// Maximum concurrent client connections; further connections are closed at once.
    /// [default: 1000]
    #[arg(long, value_name = "N")]
    max_connections: Option<usize> => max_connections: usize = check(
        max_connections.unwrap_or(1000),
        |n| *n >= 1,
        "max_connections must be at least 1",
    )?,
    /// Request processing timeout in milliseconds. [default: 30000]
    #[arg(long, value_name = "MS")]
    request_timeout_ms: Option<u64> => request_timeout: Duration =
        check(millis(request_timeout_ms, 30_000), positive, TIMEOUTS_POSITIVE)?,
    /// Client idle timeout in milliseconds: the handshake must complete within
    /// min(idle, request) timeout; idle connections are not dropped. [default: 5000]
    #[arg(long, value_name = "MS")]
    idle_timeout_ms: Option<u64> => idle_timeout: Duration =
        check(millis(idle_timeout_ms, 5_000), positive, TIMEOUTS_POSITIVE)?,
    /// Partition count of a topic created without partitions=. [default: 4]
    #[arg(long, value_name = "N")]
    default_partitions: Option<u32> => default_partitions: u32 = check(
        default_partitions.unwrap_or(4),
        |n| (1..=MAX_PARTITIONS).contains(n),
        "default_partitions must be between 1 and 10000",
    )?,
    /// Replication factor of a topic created without replication_factor=. [default: 3]
    #[arg(long, value_name = "N")]
    default_replication_factor: Option<u32> => default_replication_factor: u32 = check(
        default_replication_factor.unwrap_or(3),
        |n| *n >= 1,
        "default_replication_factor must be at least 1",
    )?,
    /// Cleanup policy of a new topic: delete, compact or delete,compact. [default: delete]
    #[arg(long, value_name = "POLICY")]
    default_cleanup_policy: Option<String> => default_cleanup_policy: CleanupPolicy =
        match default_cleanup_policy {
            None => CleanupPolicy::Delete,
            Some(text) => text.parse().map_err(|_| {
                format!("default_cleanup_policy {text:?} is not delete, compact or delete,compact")
            })?,
        },
    /// Broker minimum in-sync replicas, used when a topic has no override. [default: 1]
    #[arg(long, value_name = "N")]
    min_insync_replicas: Option<u32> => min_insync_replicas: u32 = check(
        min_insync_replicas.unwrap_or(1),
        |n| *n >= 1,
        "min_insync_replicas must be at least 1",
    )?,
    /// Roll partition log segments at this size in bytes. [default: 67108864]
    #[arg(long, value_name = "BYTES")]
    segment_bytes: Option<u64> => segment_bytes: u64 = check(
        segment_bytes.unwrap_or(DEFAULT_SEGMENT_BYTES),
        |n| (1..=MAX_SEGMENT_BYTES).contains(n),
        "segment_bytes must be between 1 and 1073741824",
    )?,
    /// Broker retention in hours for topics without an override; 0 keeps data forever.
    /// [default: 168]
    #[arg(long, value_name = "HOURS")]
    retention_hours: Option<u64> => retention_hours: u64 = retention_hours.unwrap_or(168),
    /// Broker retention in bytes per partition for topics without an override; 0 means
    /// unlimited. [default: 0]
    #[arg(long, value_name = "BYTES")]
    retention_bytes: Option<u64> => retention_bytes: u64 = retention_bytes.unwrap_or(0),
    /// Interval of the background retention pass in milliseconds. [default: 60000]
    #[arg(long, value_name = "MS")]
    retention_check_interval_ms: Option<u64> => retention_check_interval: Duration =
        check(millis(retention_check_interval_ms, 60_000), positive, INTERVALS_POSITIVE)?,
    /// Interval of the background flush of unacknowledged (acks=0) data. [default: 200]
    #[arg(long, value_name = "MS")]
    flush_interval_ms: Option<u64> => flush_interval: Duration =
        check(millis(flush_interval_ms, 200), positive, INTERVALS_POSITIVE)?,
    /// Keepalive interval of an idle STREAM in milliseconds. [default: 1000]
    #[arg(long, value_name = "MS")]
    stream_keepalive_ms: Option<u64> => stream_keepalive: Duration =
        check(millis(stream_keepalive_ms, 1_000), positive, INTERVALS_POSITIVE)?,
    /// A STREAM that delivered no record for this many milliseconds is closed
    /// with STREAM_CONTROL type=CLOSE reason=timeout; 0 = never. [default: 300000]
    #[arg(long, value_name = "MS")]
    stream_timeout_ms: Option<u64> => stream_timeout: Duration =
        millis(stream_timeout_ms, 300_000),
    /// Interval of the background compaction pass over topics with
    /// cleanup_policy compact or delete,compact, in milliseconds. [default: 60000]
    #[arg(long, value_name = "MS")]
    compaction_interval_ms: Option<u64> => compaction_interval: Duration =
        check(millis(compaction_interval_ms, 60_000), positive, INTERVALS_POSITIVE)?,
    /// Compaction removes a tombstone (a keyed record with an empty value) once
    /// its timestamp is older than this many milliseconds. [default: 86400000]
    #[arg(long, value_name = "MS")]
    compaction_tombstone_retention_ms: Option<u64> => compaction_tombstone_retention: Duration =
        millis(compaction_tombstone_retention_ms, 86_400_000),
    /// An idempotent producer without a publish for this many milliseconds is
    /// dropped from memory (its state stays in the partition's durable
    /// producer_state.checkpoint). [default: 1800000]
    #[arg(long, value_name = "MS")]
    producer_state_ttl_ms: Option<u64> => producer_state_ttl: Duration =
        check(millis(producer_state_ttl_ms, 1_800_000), positive, INTERVALS_POSITIVE)?,
    /// Consumer group session timeout in milliseconds: a member without a
    /// JOIN_GROUP, SYNC_GROUP or HEARTBEAT for this long is removed and its
    /// group rebalances. [default: 30000]
    #[arg(long, value_name = "MS")]
    group_session_timeout_ms: Option<u64> => group_session_timeout: Duration =
        check(millis(group_session_timeout_ms, 30_000), positive, INTERVALS_POSITIVE)?,
    /// Deadline of an open transaction in milliseconds: past it the broker
    /// aborts the transaction (abort markers). [default: 60000]
    #[arg(long, value_name = "MS")]
    transaction_timeout_ms: Option<u64> => transaction_timeout: Duration =
        check(millis(transaction_timeout_ms, 60_000), positive, INTERVALS_POSITIVE)?,
    /// Age in milliseconds after which a completed transaction keeps only its
    /// producer id and epoch. [default: 604800000]
    #[arg(long, value_name = "MS")]
    transactional_id_expiration_ms: Option<u64> => transactional_id_expiration: Duration = check(
        millis(transactional_id_expiration_ms, 604_800_000),
        positive,
        INTERVALS_POSITIVE,
    )?,
    /// Testing hook: abort the process (as kill -9 would) at this step of the
    /// first transaction commit reaching it: txn_before_prepare,
    /// txn_after_prepare, txn_after_markers or txn_after_decision. Off by default.
    #[arg(long, value_name = "NAME")]
    crash_point: Option<String> => crash_point: Option<String> =
        match crash_point.filter(|point| !point.is_empty()) {
            Some(point) if !CRASH_POINTS.contains(&point.as_str()) => Err(format!(
                "crash_point {point:?} is not one of {}",
                CRASH_POINTS.join(", ")
            ))?,
            point => point,
        },
    /// Log filter (tracing syntax, e.g. info or cursus_broker=debug); RUST_LOG overrides it.
    /// [default: info]
    #[arg(long, value_name = "FILTER")]
    log_level: Option<String> => log_level: String = log_level.unwrap_or_else(|| "info".into()),
    /// Inject a fault, for testing clients: COMMAND:ACTION:TIMES[:ERROR|:MS], e.g.
    /// PUBLISH:drop-after:1, LIST:error:*:NOT_LEADER or PUBLISH:delay-after:1:500.
    /// ACTION is error, error-after, drop-after, delay or delay-after (the last two
    /// take milliseconds); TIMES a count or *. Repeatable; none by default.
    #[arg(long = "fault", value_name = "SPEC")]
    faults: Vec<String> => faults: Vec<FaultRule> = parse_each(&faults)?,
    /// Testing only: make storage I/O fail on purpose,
    /// OP:KIND[:after=N][:times=N|*][:path=SUBSTRING], e.g. fsync:fail:after=3
    /// or write:enospc. OP is write or fsync; KIND fail, enospc, edquot or
    /// short (write half, then abort). Repeatable; none by default.
    // Listed last in --help, after the cluster flags: clap numbers flags
    // from 0 in declaration order and gives --help and --version 999.
    #[arg(long = "storage-fault", value_name = "SPEC", display_order = 998)]
    storage_faults: Vec<String> => storage_faults: Vec<StorageFault> =
        parse_each(&storage_faults)?,
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

impl Config {
    /// The configuration from the given settings (see
    /// [`crate::settings::layered`]): each resolved, then checked against
    /// the others.
    pub fn resolve(given: BrokerSettings) -> Result<Config, ConfigError> {
        let config = Config::resolve_fields(given).map_err(ConfigError::Invalid)?;
        config.validate()?;
        Ok(config)
    }

    /// Checks the settings that depend on each other (each setting's own
    /// range is checked where it is declared).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: &str| Err(ConfigError::Invalid(m.to_owned()));
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
        Ok(())
    }

    /// The handshake deadline: the smaller of the idle and request timeouts.
    pub fn handshake_timeout(&self) -> Duration {
        self.idle_timeout.min(self.request_timeout)
    }
}

impl Default for Config {
    /// Every setting at its default.
    fn default() -> Self {
        Config::resolve(BrokerSettings::default()).expect("the defaults are valid")
    }
}

fn positive(d: &Duration) -> bool {
    !d.is_zero()
}

/// `addr` unless it is neither a socket address nor `HOST:PORT`-like.
fn address(setting: &str, addr: String) -> Result<String, String> {
    match addr.parse::<SocketAddr>().is_ok() || addr.contains(':') {
        true => Ok(addr),
        false => Err(format!("{setting} {addr:?} is not HOST:PORT")),
    }
}

/// Every spec of a repeatable setting, parsed.
fn parse_each<T: FromStr<Err = String>>(specs: &[String]) -> Result<Vec<T>, String> {
    specs.iter().map(|spec| spec.parse()).collect()
}

/// The TLS settings: all of them need `tls_listen`, which needs a
/// certificate and a key.
fn tls_config(
    listen: Option<String>,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    client_ca_file: Option<PathBuf>,
) -> Result<Option<TlsConfig>, String> {
    let Some(listen) = listen.filter(|l| !l.is_empty()) else {
        if cert_file.is_some() || key_file.is_some() || client_ca_file.is_some() {
            return Err(
                "tls_cert_file, tls_key_file and tls_client_ca_file need tls_listen".into(),
            );
        }
        return Ok(None);
    };
    let missing = |key: &str| format!("tls_listen needs {key}");
    Ok(Some(TlsConfig {
        cert_file: cert_file.ok_or_else(|| missing("tls_cert_file"))?,
        key_file: key_file.ok_or_else(|| missing("tls_key_file"))?,
        client_ca_file,
        listen: address("tls_listen", listen)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::layered;
    use clap::Parser;

    /// The broker's section of the binary's command line.
    #[derive(Parser)]
    struct Cli {
        #[arg(long)]
        config: Option<PathBuf>,
        #[command(flatten)]
        broker: BrokerSettings,
    }

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("cursus-broker").chain(args.iter().copied())).unwrap()
    }

    /// What the binary does with the broker's section.
    fn from_cli(cli: Cli) -> Result<Config, ConfigError> {
        Config::resolve(layered(cli.broker, cli.config.as_deref())?)
    }

    #[test]
    fn defaults_match_the_specification() {
        let c = from_cli(parse(&[])).unwrap();
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
        let c = from_cli(parse(&[
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
        let c = from_cli(parse(&["--config", path.to_str().unwrap()])).unwrap();
        assert_eq!(c.group_session_timeout, Duration::from_millis(1500));
        assert!(from_cli(parse(&["--group-session-timeout-ms", "0"])).is_err());
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
        let c = from_cli(parse(&["--config", path.to_str().unwrap()])).unwrap();
        assert_eq!(c.transaction_timeout, Duration::from_millis(500));
        assert_eq!(c.transactional_id_expiration, Duration::from_millis(900));
        assert_eq!(c.crash_point.as_deref(), Some("txn_after_markers"));
        let c = from_cli(parse(&[
            "--transaction-timeout-ms",
            "250",
            "--crash-point",
            "txn_before_prepare",
        ]))
        .unwrap();
        assert_eq!(c.transaction_timeout, Duration::from_millis(250));
        assert_eq!(c.crash_point.as_deref(), Some("txn_before_prepare"));
        assert!(from_cli(parse(&["--crash-point", "txn_somewhere"])).is_err());
        assert!(from_cli(parse(&["--transaction-timeout-ms", "0"])).is_err());
    }

    #[test]
    fn security_settings_are_checked_together() {
        let invalid = |args: &[&str]| match from_cli(parse(args)) {
            Err(ConfigError::Invalid(m)) => m,
            other => panic!("{args:?}: {other:?}"),
        };
        assert!(invalid(&["--listen", "off"]).contains("tls_listen"));
        assert!(invalid(&["--tls-listen", "127.0.0.1:0"]).contains("tls_cert_file"));
        assert!(invalid(&["--tls-key-file", "k.pem"]).contains("need tls_listen"));
        assert!(invalid(&["--enable-sasl"]).contains("no [[users]]"));
        let c = from_cli(parse(&[
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
        let c = from_cli(parse(&["--config", file, "--enable-sasl"])).unwrap();
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
        let c = from_cli(parse(&["--config", path.to_str().unwrap()])).unwrap();
        assert_eq!(c.stream_timeout, Duration::ZERO);
        assert_eq!(c.compaction_interval, Duration::from_millis(50));
        assert_eq!(c.compaction_tombstone_retention, Duration::ZERO);
        assert_eq!(c.producer_state_ttl, Duration::from_millis(70));
        let c = from_cli(parse(&["--stream-timeout-ms", "250"])).unwrap();
        assert_eq!(c.stream_timeout, Duration::from_millis(250));
        assert!(from_cli(parse(&["--compaction-interval-ms", "0"])).is_err());
        assert!(from_cli(parse(&["--producer-state-ttl-ms", "0"])).is_err());
    }

    #[test]
    fn unknown_file_keys_and_bad_values_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(&path, "max_conections = 7\n").unwrap();
        let cli = parse(&["--config", path.to_str().unwrap()]);
        assert!(matches!(from_cli(cli), Err(ConfigError::Parse { .. })));
        assert!(from_cli(parse(&["--max-connections", "0"])).is_err());
        assert!(from_cli(parse(&["--default-cleanup-policy", "compact,delete"])).is_err());
    }
}
