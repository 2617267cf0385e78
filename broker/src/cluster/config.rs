//! Distributed-mode settings (`--node-id`, `--cluster-listen`,
//! `--cluster-peers`, `--cluster-join`, ...): parsed and checked at startup.

use std::collections::BTreeMap;
use std::time::Duration;

use super::fsm::NodeId;
use super::internal_tls::InternalTlsFiles;

/// How a broker takes part in a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// This broker's Raft node id (≥ 1).
    pub node_id: NodeId,
    /// The broker-to-broker listener (Raft, replication, heartbeats).
    pub cluster_listen: String,
    /// The static voters' cluster addresses by node id (this broker's
    /// included unless it joins at run time through [`join`](Self::join)).
    pub peers: BTreeMap<NodeId, String>,
    /// Seed members' cluster addresses: a broker whose node id is not in
    /// `peers` joins the running cluster through one of them
    /// (JOIN_CLUSTER, `cluster::membership`).
    pub join: Vec<String>,
    /// A broker added at run time stays a Raft learner (hosts replicas,
    /// does not vote) instead of being promoted to voter.
    pub learner: bool,
    /// A clean stop also removes this broker from the Raft membership
    /// (LEAVE_CLUSTER with `decommission`), not only marks it inactive.
    pub decommission: bool,
    /// The shared token every broker-to-broker request carries.
    pub internal_auth_token: Option<String>,
    /// `internal_use_tls`: the cluster listener and the peer pool run over
    /// mutual TLS with these files (`None`: plain TCP).
    pub internal_tls: Option<InternalTlsFiles>,
    /// How often a broker tells the Raft leader it is alive.
    pub heartbeat_interval: Duration,
    /// Missing heartbeats for this long makes a broker inactive (its
    /// partitions fail over to in-sync replicas).
    pub session_timeout: Duration,
    /// This broker holds partition replicas (`false`: it only serves
    /// metadata, coordination and redirects).
    pub hosts_replicas: bool,
    /// `transaction_coordinator_shards`: the shard count this broker
    /// expects (the cluster's first registration fixes it; a broker with
    /// another count is refused).
    pub txn_shards: u32,
}

/// Defaults of the timing settings.
pub const DEFAULT_HEARTBEAT_MS: u64 = 300;
/// See [`ClusterConfig::session_timeout`].
pub const DEFAULT_SESSION_TIMEOUT_MS: u64 = 2_000;

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
        if !(1..=super::shards::MAX_SHARDS).contains(&self.txn_shards) {
            return Err(format!(
                "transaction_coordinator_shards must be 1..={}, not {}",
                super::shards::MAX_SHARDS,
                self.txn_shards
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
