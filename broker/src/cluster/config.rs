//! Distributed-mode settings (`--node-id`, `--cluster-listen`,
//! `--cluster-peers`, `--cluster-join`, ...), each declared once below with
//! its flag, file key, default, check and help text (the mechanism and how
//! to add a setting: [`crate::settings`]), and checked against each other
//! at startup.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::fsm::NodeId;
use super::internal_tls::InternalTlsFiles;
use super::shards::{DEFAULT_SHARDS, MAX_SHARDS};
use crate::settings::{millis, settings};

settings! {
    /// The distributed-mode settings as given: command-line flags (the
    /// binary's `Cli` flattens them) and the same keys in the TOML file.
    #[derive(PartialEq, Eq)]
    pub struct ClusterSettings;
    /// How a broker takes part in a cluster.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ClusterConfig;

    /// Distributed mode: this broker's Raft node id (≥ 1). Needs --cluster-peers;
    /// see docs/cluster.md. [default: standalone]
    #[arg(long, value_name = "N")]
    node_id: Option<u64> =>
    /// This broker's Raft node id (≥ 1; [`ClusterConfig::resolve`] makes a
    /// cluster only when it is given).
    node_id: NodeId = node_id.unwrap_or_default(),
    /// Distributed mode: the broker-to-broker listener (Raft, replication,
    /// heartbeats). [default: this node's address in --cluster-peers]
    #[arg(long, value_name = "ADDR")]
    cluster_listen: Option<String>,
    /// Distributed mode: every voter's cluster address, ID=HOST:PORT,... (this
    /// node's included).
    #[arg(long, value_name = "LIST")]
    cluster_peers: Option<String> =>
    /// The static voters' cluster addresses by node id (this broker's
    /// included unless it joins at run time through [`join`](Self::join)).
    peers: BTreeMap<NodeId, String> =
        cluster_peers.as_deref().map(parse_peers).transpose()?.unwrap_or_default(),
    =>
    /// The broker-to-broker listener (Raft, replication, heartbeats).
    cluster_listen: String =
        cluster_listen.or_else(|| peers.get(&node_id).cloned()).unwrap_or_default(),
    /// Distributed mode: dial another address instead of a peer's cluster address,
    /// ADDR=VIA,... (a proxy in front of each peer, through which tests inject
    /// network faults; every broker-to-broker connection this broker opens
    /// follows it). [default: none]
    #[arg(long, value_name = "LIST")]
    cluster_dial_overrides: Option<String> =>
    /// The address this broker dials instead of a peer's cluster address
    /// (registered, static or in the Raft membership), by that address.
    dial_overrides: BTreeMap<String, String> = cluster_dial_overrides
        .as_deref()
        .map(parse_dial_overrides)
        .transpose()?
        .unwrap_or_default(),
    /// Distributed mode: the token every broker-to-broker request carries.
    #[arg(long, value_name = "TOKEN")]
    internal_auth_token: Option<String> =>
    /// The shared token every broker-to-broker request carries.
    internal_auth_token: Option<String> = internal_auth_token,
    /// Distributed mode: heartbeat interval to the Raft leader. [default: 300]
    #[arg(long, value_name = "MS")]
    broker_heartbeat_ms: Option<u64> =>
    /// How often a broker tells the Raft leader it is alive.
    heartbeat_interval: Duration = millis(broker_heartbeat_ms, 300),
    /// Distributed mode: a broker silent this long is inactive and its partitions
    /// fail over. [default: 2000]
    #[arg(long, value_name = "MS")]
    broker_session_timeout_ms: Option<u64> =>
    /// Missing heartbeats for this long makes a broker inactive (its
    /// partitions fail over to in-sync replicas).
    session_timeout: Duration = millis(broker_session_timeout_ms, 2_000),
    /// Distributed mode: this broker holds no partition replicas; it takes part in
    /// Raft and serves metadata, coordination and redirects. [default: off]
    #[arg(long)]
    no_replicas: bool =>
    /// This broker holds partition replicas (`false`: it only serves
    /// metadata, coordination and redirects).
    hosts_replicas: bool = !no_replicas,
    /// Distributed mode: join a running cluster through these members' cluster
    /// addresses (HOST:PORT, repeatable or comma-separated) as a broker added at
    /// run time (its node id not in --cluster-peers; needs --cluster-listen).
    #[arg(long = "cluster-join", value_name = "ADDR")]
    cluster_join: Vec<String> =>
    /// Seed members' cluster addresses: a broker whose node id is not in
    /// `peers` joins the running cluster through one of them
    /// (JOIN_CLUSTER, `cluster::membership`).
    join: Vec<String> = parse_join(&cluster_join)?,
    /// Distributed mode: a broker joining with --cluster-join stays a Raft learner
    /// (hosts replicas, does not vote). [default: promoted to voter]
    #[arg(long)]
    cluster_learner: bool =>
    /// A broker added at run time stays a Raft learner (hosts replicas,
    /// does not vote) instead of being promoted to voter.
    learner: bool = cluster_learner,
    /// Distributed mode: a clean stop also removes this broker from the Raft
    /// membership (LEAVE_CLUSTER decommission). [default: off]
    #[arg(long)]
    decommission: bool =>
    /// A clean stop also removes this broker from the Raft membership
    /// (LEAVE_CLUSTER with `decommission`), not only marks it inactive.
    decommission: bool = decommission,
    /// Distributed mode: the number of transaction coordinator shards, 1..=10000;
    /// fixed when the cluster is first created (a broker with another count is
    /// refused). [default: 50]
    #[arg(long, value_name = "N")]
    transaction_coordinator_shards: Option<u32> =>
    /// `transaction_coordinator_shards`: the shard count this broker
    /// expects (the cluster's first registration fixes it; a broker with
    /// another count is refused).
    txn_shards: u32 = transaction_coordinator_shards.unwrap_or(DEFAULT_SHARDS),
    /// Distributed mode: the cluster listener requires mutual TLS and peers are
    /// dialed over it. Needs --internal-tls-cert-path, --internal-tls-key-path and
    /// --internal-tls-ca-path. [default: off]
    #[arg(long)]
    internal_use_tls: bool,
    /// Distributed mode: this broker's certificate chain (PEM) on the cluster
    /// listener, also presented as client certificate to peers.
    #[arg(long, value_name = "FILE")]
    internal_tls_cert_path: Option<PathBuf>,
    /// Distributed mode: the private key (PEM) of --internal-tls-cert-path.
    #[arg(long, value_name = "FILE")]
    internal_tls_key_path: Option<PathBuf>,
    /// Distributed mode: the CA certificates (PEM) that sign every member's
    /// internal certificate; peers are trusted only through them.
    #[arg(long, value_name = "FILE")]
    internal_tls_ca_path: Option<PathBuf>,
    =>
    /// `internal_use_tls`: the cluster listener and the peer pool run over
    /// mutual TLS with these files (`None`: plain TCP).
    internal_tls: Option<InternalTlsFiles> = internal_tls_files(
        internal_use_tls,
        internal_tls_cert_path,
        internal_tls_key_path,
        internal_tls_ca_path,
    )?,
}

fn is_host_port(addr: &str) -> bool {
    matches!(addr.rsplit_once(':'), Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok())
}

/// Parses `--cluster-join` values: `HOST:PORT` items, comma-separated or
/// repeated.
pub fn parse_join<S: AsRef<str>>(items: &[S]) -> Result<Vec<String>, String> {
    let mut seeds = Vec::new();
    for addr in items
        .iter()
        .flat_map(|s| s.as_ref().split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        if !is_host_port(addr) {
            return Err(format!("cluster_join address {addr:?} is not HOST:PORT"));
        }
        if !seeds.iter().any(|s| s == addr) {
            seeds.push(addr.to_string());
        }
    }
    Ok(seeds)
}

/// Parses `--cluster-dial-overrides`: `ADDR=VIA` items, comma-separated,
/// both `HOST:PORT`.
pub fn parse_dial_overrides(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut routes = BTreeMap::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (addr, via) = item
            .split_once('=')
            .map(|(a, v)| (a.trim(), v.trim()))
            .filter(|(a, v)| is_host_port(a) && is_host_port(v))
            .ok_or_else(|| format!("cluster_dial_overrides entry {item:?} is not ADDR=VIA"))?;
        if routes.insert(addr.to_string(), via.to_string()).is_some() {
            return Err(format!("cluster_dial_overrides names {addr} twice"));
        }
    }
    Ok(routes)
}

/// Parses `1=127.0.0.1:7001,2=127.0.0.1:7002`.
pub fn parse_peers(text: &str) -> Result<BTreeMap<NodeId, String>, String> {
    let mut peers = BTreeMap::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (id, addr) = item
            .split_once('=')
            .ok_or_else(|| format!("cluster_peers entry {item:?} is not ID=HOST:PORT"))?;
        let id: NodeId = id
            .trim()
            .parse()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("cluster_peers id {id:?} is not a number ≥ 1"))?;
        let addr = addr.trim();
        if !is_host_port(addr) {
            return Err(format!("cluster_peers address {addr:?} is not HOST:PORT"));
        }
        if peers.insert(id, addr.to_string()).is_some() {
            return Err(format!("cluster_peers names node {id} twice"));
        }
    }
    Ok(peers)
}

impl ClusterConfig {
    /// Distributed mode from the given settings (`None`: standalone). All
    /// of them need `node_id` and `cluster_peers` (or, for a broker added at
    /// run time, `cluster_join`).
    pub fn resolve(given: ClusterSettings) -> Result<Option<ClusterConfig>, String> {
        // `cluster_join` counts once parsed (empty items are dropped).
        let others_given = ClusterSettings {
            node_id: None,
            cluster_peers: None,
            cluster_join: Vec::new(),
            ..given.clone()
        } != ClusterSettings::default();
        let (node_id, peers) = (given.node_id.is_some(), given.cluster_peers.is_some());
        let config = ClusterConfig::resolve_fields(given)?;
        match (node_id, peers, !config.join.is_empty()) {
            (false, false, joins) if others_given || joins => {
                Err("cluster settings need node_id and cluster_peers".into())
            }
            (false, false, _) => Ok(None),
            (true, true, _) | (true, false, true) => {
                config.validate()?;
                Ok(Some(config))
            }
            _ => Err("node_id and cluster_peers (or cluster_join) go together".into()),
        }
    }

    /// This broker's cluster address as the others dial it: its entry in
    /// `peers`, else (a broker joining at run time) `cluster_listen`.
    pub fn cluster_addr(&self) -> String {
        self.peers
            .get(&self.node_id)
            .cloned()
            .unwrap_or_else(|| self.cluster_listen.clone())
    }

    /// True for a broker that is not one of the static voters and joins
    /// the running cluster at run time.
    pub fn joins_at_run_time(&self) -> bool {
        !self.peers.contains_key(&self.node_id)
    }

    /// Checks the settings against each other.
    pub fn validate(&self) -> Result<(), String> {
        if self.node_id == 0 {
            return Err("node_id must be at least 1".into());
        }
        match self.peers.get(&self.node_id) {
            None if self.join.is_empty() => {
                return Err(format!(
                    "cluster_peers does not name this node ({}) and no cluster_join seed is given",
                    self.node_id
                ))
            }
            None if !is_host_port(&self.cluster_listen) || self.cluster_listen.ends_with(":0") => {
                return Err(
                    "a broker joining with cluster_join needs cluster_listen with a fixed port"
                        .into(),
                )
            }
            None => {}
            Some(addr) if addr.ends_with(":0") => {
                return Err("cluster_peers addresses need a fixed port".into())
            }
            Some(_) => {}
        }
        if self.learner && !self.joins_at_run_time() {
            return Err("cluster_learner is for brokers joining with cluster_join".into());
        }
        if !(1..=MAX_SHARDS).contains(&self.txn_shards) {
            return Err(format!(
                "transaction_coordinator_shards must be 1..={}, not {}",
                MAX_SHARDS, self.txn_shards
            ));
        }
        if self.heartbeat_interval.is_zero() || self.session_timeout <= self.heartbeat_interval {
            return Err("broker_session_timeout_ms must exceed broker_heartbeat_ms (> 0)".into());
        }
        // Broker-to-broker commands without a shared token would be
        // accepted from anyone who can reach the cluster listener.
        match self.internal_auth_token.as_deref() {
            None => {
                return Err(
                    "distributed mode needs internal_auth_token (internal_auth_not_configured)"
                        .into(),
                )
            }
            Some("") => return Err("internal_auth_token must not be empty".into()),
            Some(_) => {}
        }
        Ok(())
    }
}

/// The cluster listener's mutual TLS: `internal_use_tls` needs the three
/// files, and the files need `internal_use_tls`.
fn internal_tls_files(
    use_tls: bool,
    cert_path: Option<PathBuf>,
    key_path: Option<PathBuf>,
    ca_path: Option<PathBuf>,
) -> Result<Option<InternalTlsFiles>, String> {
    if !use_tls {
        if cert_path.is_some() || key_path.is_some() || ca_path.is_some() {
            return Err(
                "internal_tls_cert_path, internal_tls_key_path and internal_tls_ca_path \
                 need internal_use_tls = true"
                    .into(),
            );
        }
        return Ok(None);
    }
    let missing = |key: &str| format!("internal_use_tls needs {key}");
    Ok(Some(InternalTlsFiles {
        cert_path: cert_path.ok_or_else(|| missing("internal_tls_cert_path"))?,
        key_path: key_path.ok_or_else(|| missing("internal_tls_key_path"))?,
        ca_path: ca_path.ok_or_else(|| missing("internal_tls_ca_path"))?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::layered;
    use clap::Parser;

    /// The cluster's section of the binary's command line.
    #[derive(Parser)]
    struct Cli {
        #[arg(long)]
        config: Option<PathBuf>,
        #[command(flatten)]
        cluster: ClusterSettings,
    }

    /// Node 1 of a one-voter cluster, with `extra` flags.
    fn member(extra: &[&str]) -> Result<ClusterConfig, String> {
        let node = ["--node-id", "1", "--cluster-peers", "1=127.0.0.1:7001"];
        let token = ["--internal-auth-token", "t"];
        let args: Vec<&str> = node
            .into_iter()
            .chain(token)
            .chain(extra.iter().copied())
            .collect();
        from_cli(&args).map(|c| c.expect("distributed mode"))
    }

    /// What the binary does with the cluster's section.
    fn from_cli(args: &[&str]) -> Result<Option<ClusterConfig>, String> {
        let args = std::iter::once("cursus-broker").chain(args.iter().copied());
        let cli = Cli::try_parse_from(args).unwrap();
        ClusterConfig::resolve(
            layered(cli.cluster, cli.config.as_deref()).map_err(|e| e.to_string())?,
        )
    }

    #[test]
    fn peers_parse_and_errors() {
        let p = parse_peers("1=127.0.0.1:7001, 2=localhost:7002").unwrap();
        assert_eq!(p[&1], "127.0.0.1:7001");
        assert_eq!(p[&2], "localhost:7002");
        for bad in ["x=1.2.3.4:1", "0=a:1", "1=a", "1=a:b", "1=a:1,1=b:2", "1"] {
            assert!(parse_peers(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dial_overrides_parse_from_flag_and_errors() {
        let routes = member(&[
            "--cluster-dial-overrides",
            "127.0.0.1:7002=127.0.0.1:9002, 127.0.0.1:7003=127.0.0.1:9003",
        ])
        .unwrap()
        .dial_overrides;
        assert_eq!(routes.len(), 2);
        assert_eq!(routes["127.0.0.1:7003"], "127.0.0.1:9003");
        assert!(member(&[]).unwrap().dial_overrides.is_empty());
        for bad in ["a:1", "a:1=b", "a=b:2", "a:1=b:2,a:1=c:3"] {
            assert!(parse_dial_overrides(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn join_seeds_parse_from_lists_and_repeats() {
        let seeds = parse_join(&["a:1, b:2", "c:3", "a:1"]).unwrap();
        assert_eq!(seeds, vec!["a:1", "b:2", "c:3"]);
        assert!(parse_join(&["a"]).is_err());
        assert!(parse_join(&["a:x"]).is_err());
        assert!(parse_join::<&str>(&[]).unwrap().is_empty());
    }

    #[test]
    fn validate_rules() {
        let good = ClusterConfig {
            node_id: 1,
            cluster_listen: "127.0.0.1:7001".into(),
            peers: parse_peers("1=127.0.0.1:7001,2=127.0.0.1:7002").unwrap(),
            dial_overrides: BTreeMap::new(),
            internal_auth_token: Some("t".into()),
            internal_tls: None,
            heartbeat_interval: Duration::from_millis(300),
            session_timeout: Duration::from_millis(2000),
            hosts_replicas: true,
            join: Vec::new(),
            learner: false,
            decommission: false,
            txn_shards: 50,
        };
        assert!(good.validate().is_ok());
        // A node outside the peers joins through seeds on a fixed port.
        let mut c = good.clone();
        c.node_id = 4;
        c.cluster_listen = "127.0.0.1:7004".into();
        assert!(c.validate().is_err(), "no seed");
        c.join = vec!["127.0.0.1:7001".into()];
        assert!(c.validate().is_ok());
        assert_eq!(c.cluster_addr(), "127.0.0.1:7004");
        c.learner = true;
        assert!(c.validate().is_ok());
        c.cluster_listen = "127.0.0.1:0".into();
        assert!(c.validate().is_err(), "ephemeral port");
        let mut c = good.clone();
        c.learner = true;
        assert!(c.validate().is_err(), "a static voter is no learner");
        for (shards, ok) in [(0, false), (1, true), (10_000, true), (10_001, false)] {
            let mut c = good.clone();
            c.txn_shards = shards;
            assert_eq!(c.validate().is_ok(), ok, "{shards}");
        }
        let mut c = good.clone();
        c.node_id = 3;
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.session_timeout = Duration::from_millis(100);
        assert!(c.validate().is_err());
        let mut c = good.clone();
        c.internal_auth_token = Some(String::new());
        assert!(c.validate().is_err());
        let mut c = good;
        c.internal_auth_token = None;
        assert!(c
            .validate()
            .unwrap_err()
            .contains("internal_auth_not_configured"));
    }

    #[test]
    fn transaction_coordinator_shards_from_flag_and_file() {
        let shards = |extra: &[&str]| member(extra).map(|c| c.txn_shards);
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
                Err(ref m) if m.contains("transaction_coordinator_shards")
            ));
        }
        // A cluster setting without distributed mode.
        assert!(matches!(
            from_cli(&["--transaction-coordinator-shards", "7"]),
            Err(ref m) if m.contains("need node_id and cluster_peers")
        ));
    }

    #[test]
    fn internal_tls_needs_all_three_files_and_the_switch() {
        let files = [
            "--internal-tls-cert-path",
            "c.pem",
            "--internal-tls-key-path",
            "k.pem",
            "--internal-tls-ca-path",
            "ca.pem",
        ];
        let tls = |extra: &[&str]| member(extra).map(|c| c.internal_tls);
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
                Err(ref m) if m.contains(missing)
            ));
        }
        // Files without the switch would silently leave the listener plain.
        assert!(matches!(
            tls(&files),
            Err(ref m) if m.contains("internal_use_tls")
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
            from_cli(&["--config", file]),
            Err(ref m) if m.contains("node_id")
        ));
    }
}
