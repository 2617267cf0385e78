//! `--cluster`: the chaos run against a distributed cluster (issue #21).
//!
//! Three data brokers and one gateway (`--no-replicas`: it holds no
//! partition replicas but votes in Raft, serves metadata and redirects),
//! started the way `cursus_testkit::TestCluster` starts them (node ids
//! 1..=4, `--cluster-peers` with every member's fixed cluster address, one
//! internal token) but on ports below the ephemeral range and with logs
//! kept, like the single broker of [`crate::broker`].
//!
//! The killer SIGKILLs a random member (one time in three the Raft leader,
//! found with CLUSTER_STATUS through the admin API), leaves it down for a
//! while (a data broker down longer than the session timeout fails over;
//! a Raft leader stays down at least 5 s so that a new one is elected),
//! restarts it on the same ports and
//! data directory, waits for `/ready`, and then waits for the cluster to
//! heal (every partition led, no partition under-replicated, every broker
//! active) before it picks the next victim: never more than one broker
//! down at a time, and never a kill while an ISR is short (rf=3, default
//! minimum ISR).

use crate::broker::{pick_n_ports, BrokerProcess};
use crate::rng::Rng;
use crate::workload::client_config;
use cursus::admin::Admin;
use cursus::ClusterStatus;
use std::path::Path;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Internal token of the chaos cluster's members.
const TOKEN: &str = "chaos-cluster-token";

/// The least time a killed Raft leader stays down, in milliseconds.
const RAFT_LEADER_DOWN_MS: u64 = 5000;

/// How long the cluster may take to heal after a restart.
const HEAL_TIMEOUT: Duration = Duration::from_secs(90);

/// The members: `data` brokers holding replicas, then the gateways.
pub struct ChaosCluster {
    /// Index `i` is node `i + 1`.
    pub members: Vec<BrokerProcess>,
    /// Members started with `--no-replicas` (the last ones).
    pub gateways: usize,
}

impl ChaosCluster {
    /// Starts `data` data brokers and `gateways` gateways with their data
    /// in `run_dir/node-N` and logs in `run_dir/broker-N.log`, passing
    /// `extra_args` to each, and waits until every one is ready.
    pub async fn start(
        bin: &Path,
        run_dir: &Path,
        data: usize,
        gateways: usize,
        extra_args: &[&str],
        port_hint: u64,
    ) -> Result<ChaosCluster, String> {
        let n = data + gateways;
        let ports = pick_n_ports(port_hint, 3 * n)?;
        let peers = (0..n)
            .map(|i| format!("{}=127.0.0.1:{}", i + 1, ports[3 * i + 2]))
            .collect::<Vec<_>>()
            .join(",");
        let mut members = Vec::new();
        for i in 0..n {
            let node_id = (i + 1).to_string();
            let mut args: Vec<&str> = vec![
                "--node-id",
                &node_id,
                "--cluster-peers",
                &peers,
                "--internal-auth-token",
                TOKEN,
            ];
            if i >= data {
                args.push("--no-replicas");
            }
            args.extend_from_slice(extra_args);
            members.push(BrokerProcess::prepare(
                bin,
                &run_dir.join(format!("node-{node_id}")),
                &run_dir.join(format!("broker-{node_id}.log")),
                &args,
                format!("127.0.0.1:{}", ports[3 * i]),
                format!("127.0.0.1:{}", ports[3 * i + 1]),
            ));
        }
        // All first (readiness needs a Raft quorum), then wait.
        for m in &mut members {
            m.restart().await?;
        }
        for m in &mut members {
            m.wait_ready(Duration::from_secs(120)).await?;
        }
        Ok(ChaosCluster { members, gateways })
    }

    /// Every member's client address, comma-separated (a bootstrap list).
    pub fn bootstrap(&self) -> String {
        self.members
            .iter()
            .map(|m| m.addr.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The member whose client address is `addr`.
    fn index_of(&self, addr: &str) -> Option<usize> {
        self.members.iter().position(|m| m.addr == addr)
    }

    /// Kills every member (end of the run).
    pub async fn kill_all(&mut self) {
        for m in &mut self.members {
            m.kill().await;
        }
    }
}

/// What the cluster killer did.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClusterKillStats {
    /// SIGKILLs sent.
    pub kills: u64,
    /// Of them, kills of the Raft leader.
    pub raft_leader_kills: u64,
    /// Of them, kills during recovery (before `/ready`).
    pub during_recovery: u64,
    /// Longest wait for the cluster to heal after a restart.
    pub longest_heal: Duration,
    /// Partition leader changes (leader epoch bumps) the kills caused.
    pub leader_changes: u64,
}

/// The sum of every partition's leader epoch.
fn epochs(s: &ClusterStatus) -> u64 {
    s.partitions.iter().map(|p| p.leader_epoch).sum()
}

/// Healthy: a Raft leader, every broker active, every partition led and
/// fully replicated.
fn healed(s: &ClusterStatus) -> bool {
    s.raft_leader.is_some()
        && s.leaderless == 0
        && s.under_replicated == 0
        && s.brokers.iter().all(|b| b.status == "active")
}

/// Polls CLUSTER_STATUS (through any member) until the cluster healed;
/// how long it took and the healed state.
async fn wait_healed(admin: &Admin, after: &str) -> Result<(Duration, ClusterStatus), String> {
    let started = Instant::now();
    let mut last = String::from("no CLUSTER_STATUS answered");
    while started.elapsed() < HEAL_TIMEOUT {
        match admin.cluster_status().await {
            Ok(s) if healed(&s) => return Ok((started.elapsed(), s)),
            Ok(s) => {
                last = format!(
                    "raft_leader={:?} leaderless={} under_replicated={} inactive={:?}",
                    s.raft_leader,
                    s.leaderless,
                    s.under_replicated,
                    s.brokers
                        .iter()
                        .filter(|b| b.status != "active")
                        .map(|b| b.id.as_str())
                        .collect::<Vec<_>>()
                )
            }
            Err(e) => last = format!("CLUSTER_STATUS: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!(
        "the cluster did not heal within {} s after {after} ({last})",
        HEAL_TIMEOUT.as_secs()
    ))
}

/// The member index of the Raft leader, if CLUSTER_STATUS names one.
async fn raft_leader(admin: &Admin, cluster: &ChaosCluster) -> Option<usize> {
    let s = admin.cluster_status().await.ok()?;
    let id = s.raft_leader.as_ref()?;
    let addr = s
        .brokers
        .iter()
        .find(|b| &b.id == id)?
        .client_addr
        .clone()?;
    cluster.index_of(&addr)
}

/// Kills and restarts one member at a time every `min_ms..=max_ms` (once
/// the cluster healed from the previous kill) until `stop`; each victim
/// stays down `down_min_ms..=down_max_ms`. Returns with every member
/// running and the cluster healed.
pub async fn run_killer(
    cluster: &tokio::sync::Mutex<ChaosCluster>,
    mut rng: Rng,
    (min_ms, max_ms): (u64, u64),
    (down_min_ms, down_max_ms): (u64, u64),
    stop: CancellationToken,
) -> Result<ClusterKillStats, String> {
    let bootstrap = cluster.lock().await.bootstrap();
    let admin = Admin::connect(client_config(&bootstrap))
        .await
        .map_err(|e| format!("killer admin: {e}"))?;
    let mut stats = ClusterKillStats::default();
    loop {
        let wait = Duration::from_millis(rng.range(min_ms, max_ms));
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(wait) => {}
        }
        let mut c = cluster.lock().await;
        for (i, m) in c.members.iter_mut().enumerate() {
            if let Some(status) = m.exited() {
                return Err(format!(
                    "cluster member {} exited on its own ({status}); see {}",
                    i + 1,
                    m.log_path().display()
                ));
            }
        }
        let raft = raft_leader(&admin, &c).await;
        let victim = match raft {
            Some(r) if rng.one_in(3) => r,
            _ => rng.range(0, c.members.len() as u64 - 1) as usize,
        };
        let leader = raft.filter(|r| *r == victim);
        let role = if victim >= c.members.len() - c.gateways {
            "gateway"
        } else {
            "data broker"
        };
        let what = format!(
            "node {} ({role}{})",
            victim + 1,
            if leader.is_some() {
                ", Raft leader"
            } else {
                ""
            }
        );
        let before = admin.cluster_status().await.ok().map(|s| epochs(&s));
        // The Raft leader stays down long enough for a new one to be
        // elected (openraft's election timeout is 1-2 s, after the
        // followers' leader lease); a shorter absence goes unnoticed.
        let down = Duration::from_millis(match leader {
            Some(_) => down_max_ms.max(RAFT_LEADER_DOWN_MS),
            None => rng.range(down_min_ms, down_max_ms),
        });
        println!("chaos: kill {what}, down {} ms", down.as_millis());
        c.members[victim].kill().await;
        stats.kills += 1;
        if leader.is_some() {
            stats.raft_leader_kills += 1;
        }
        // Down for a while: long enough for the failover to happen.
        tokio::time::sleep(down).await;
        c.members[victim].restart().await?;
        if rng.one_in(6) {
            tokio::time::sleep(Duration::from_millis(rng.range(0, 150))).await;
            c.members[victim].kill().await;
            stats.kills += 1;
            stats.during_recovery += 1;
            c.members[victim].restart().await?;
        }
        c.members[victim]
            .wait_ready(Duration::from_secs(120))
            .await?;
        drop(c);
        let (healed_in, after) = wait_healed(&admin, &format!("restarting {what}")).await?;
        stats.longest_heal = stats.longest_heal.max(healed_in);
        if let Some(before) = before {
            let changes = epochs(&after).saturating_sub(before);
            stats.leader_changes += changes;
            println!(
                "chaos: healed {} ms after the restart; {changes} partition leader changes",
                healed_in.as_millis()
            );
        }
    }
    let mut c = cluster.lock().await;
    for m in &mut c.members {
        m.wait_ready(Duration::from_secs(120)).await?;
    }
    drop(c);
    wait_healed(&admin, "the last restart").await?;
    admin.close().await;
    Ok(stats)
}
