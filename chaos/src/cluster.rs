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
//!
//! `--nemesis` (`crate::nemesis`) starts the members linked: each dials
//! the others through a fault-injecting proxy ([`cursus_testkit::Links`])
//! and reuses the kill step and the heal wait from here.

use crate::broker::{pick_n_ports, BrokerProcess};
use crate::rng::Rng;
use crate::workload::client_config;
use cursus::admin::Admin;
use cursus::ClusterStatus;
use cursus_testkit::signal::{self, Signal};
use cursus_testkit::Links;
use std::collections::BTreeMap;
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
    /// The proxies every member dials the others through (`--nemesis`).
    pub links: Option<Links>,
}

impl ChaosCluster {
    /// Starts `data` data brokers and `gateways` gateways with their data
    /// in `run_dir/node-N` and logs in `run_dir/broker-N.log`, passing
    /// `extra_args` to each, and waits until every one is ready. `linked`:
    /// every member dials the others through [`Links`] proxies.
    pub async fn start(
        bin: &Path,
        run_dir: &Path,
        (data, gateways): (usize, usize),
        extra_args: &[&str],
        port_hint: u64,
        linked: bool,
    ) -> Result<ChaosCluster, String> {
        let n = data + gateways;
        let ports = pick_n_ports(port_hint, 3 * n)?;
        let cluster_addrs: Vec<String> = (0..n)
            .map(|i| format!("127.0.0.1:{}", ports[3 * i + 2]))
            .collect();
        let peers = cluster_addrs
            .iter()
            .enumerate()
            .map(|(i, addr)| format!("{}={addr}", i + 1))
            .collect::<Vec<_>>()
            .join(",");
        let links = match linked {
            true => Some(Links::start(&cluster_addrs).map_err(|e| format!("link proxies: {e}"))?),
            false => None,
        };
        let mut members = Vec::new();
        for i in 0..n {
            let node_id = (i + 1).to_string();
            let dial = links.as_ref().map(|l| l.dial_overrides(i));
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
            if let Some(dial) = &dial {
                args.extend_from_slice(&["--cluster-dial-overrides", dial]);
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
        Ok(ChaosCluster {
            members,
            gateways,
            links,
        })
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
    pub fn index_of(&self, addr: &str) -> Option<usize> {
        self.members.iter().position(|m| m.addr == addr)
    }

    /// The member registered as `broker_id` in `status`.
    pub fn index_of_broker(&self, status: &ClusterStatus, broker_id: &str) -> Option<usize> {
        let b = status.brokers.iter().find(|b| b.id == broker_id)?;
        self.index_of(b.client_addr.as_deref()?)
    }

    /// "node N (data broker)" or "node N (gateway)".
    pub fn describe(&self, i: usize) -> String {
        let role = if i >= self.members.len() - self.gateways {
            "gateway"
        } else {
            "data broker"
        };
        format!("node {} ({role})", i + 1)
    }

    /// Sends `signal` to member `i` (a pause: [`Signal::Stop`], then
    /// [`Signal::Cont`]).
    pub fn signal(&self, i: usize, sig: Signal) -> Result<(), String> {
        let pid = self.members[i]
            .pid()
            .ok_or_else(|| format!("{} is not running", self.describe(i)))?;
        signal::send(pid, sig)
    }

    /// An error naming the first member that exited on its own.
    pub fn check_running(&mut self) -> Result<(), String> {
        for (i, m) in self.members.iter_mut().enumerate() {
            if let Some(status) = m.exited() {
                return Err(format!(
                    "cluster member {} exited on its own ({status}); see {}",
                    i + 1,
                    m.log_path().display()
                ));
            }
        }
        Ok(())
    }

    /// Kills every member (end of the run).
    pub async fn kill_all(&mut self) {
        for m in &mut self.members {
            m.kill().await;
        }
    }
}

/// What the faults did to the cluster (the killer's and the nemesis').
#[derive(Debug, Default, Clone)]
pub struct FaultStats {
    /// SIGKILLs sent.
    pub kills: u64,
    /// Of them, kills of the Raft leader.
    pub raft_leader_kills: u64,
    /// Of them, kills during recovery (before `/ready`).
    pub during_recovery: u64,
    /// Network partitions (`--nemesis`).
    pub partitions: u64,
    /// Process pauses, SIGSTOP then SIGCONT (`--nemesis`).
    pub pauses: u64,
    /// Faults by kind (`--nemesis`): `isolate/drop`, `pause/raft_leader`...
    pub kinds: BTreeMap<String, u64>,
    /// Longest wait for the cluster to heal after a restart, a heal or a
    /// wake-up.
    pub longest_heal: Duration,
    /// Partition leader changes (leader epoch bumps) the faults caused.
    pub leader_changes: u64,
}

impl FaultStats {
    /// Counts one fault of `kind`.
    pub fn count(&mut self, kind: String) {
        *self.kinds.entry(kind).or_default() += 1;
    }

    /// The faults by kind as one summary-line token:
    /// `isolate/drop:2,pause/raft_leader:1` (`none` without faults).
    pub fn kinds_compact(&self) -> String {
        match self.kinds.is_empty() {
            true => "none".to_owned(),
            false => self
                .kinds
                .iter()
                .map(|(k, n)| format!("{k}:{n}"))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// `kind=count ...` of [`kinds`](Self::kinds).
    pub fn kinds_line(&self) -> String {
        self.kinds
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The sum of every partition's leader epoch.
pub fn epochs(s: &ClusterStatus) -> u64 {
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
pub async fn wait_healed(admin: &Admin, after: &str) -> Result<(Duration, ClusterStatus), String> {
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

/// Waits for the cluster to heal after `what`, recording the time it took
/// and the partition leader changes since `before` (the epochs sum).
pub async fn record_heal(
    admin: &Admin,
    stats: &mut FaultStats,
    before: Option<u64>,
    what: &str,
) -> Result<(), String> {
    let (healed_in, after) = wait_healed(admin, what).await?;
    stats.longest_heal = stats.longest_heal.max(healed_in);
    let changes = before.map_or(0, |b| epochs(&after).saturating_sub(b));
    stats.leader_changes += changes;
    progress!(
        "healed {} ms after {what}; {changes} partition leader changes",
        healed_in.as_millis()
    );
    Ok(())
}

/// The member index of the Raft leader, if CLUSTER_STATUS names one.
pub async fn raft_leader(admin: &Admin, cluster: &ChaosCluster) -> Option<usize> {
    let s = admin.cluster_status().await.ok()?;
    cluster.index_of_broker(&s, s.raft_leader.as_ref()?)
}

/// SIGKILLs member `victim`, keeps it down for `down`, restarts it (one
/// time in six killing it again during its recovery) and, unless
/// `ready_later`, waits for `/ready`. Counts the kills in `stats`.
pub async fn kill_member(
    c: &mut ChaosCluster,
    victim: usize,
    down: Duration,
    rng: &mut Rng,
    stats: &mut FaultStats,
) -> Result<(), String> {
    c.members[victim].kill().await;
    stats.kills += 1;
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
    Ok(())
}

/// A member to fault: one time in three the Raft leader (when one is
/// known), else any member. Returns its index, whether it leads Raft, and
/// its description for the log.
pub async fn pick_victim(admin: &Admin, c: &ChaosCluster, rng: &mut Rng) -> (usize, bool, String) {
    let raft = raft_leader(admin, c).await;
    let victim = match raft {
        Some(r) if rng.one_in(3) => r,
        _ => rng.range(0, c.members.len() as u64 - 1) as usize,
    };
    let leader = raft == Some(victim);
    let what = format!(
        "{}{}",
        c.describe(victim),
        if leader { ", Raft leader" } else { "" }
    );
    (victim, leader, what)
}

/// One kill of the killer (and of the nemesis): a random member, one time
/// in three the Raft leader, kept down `down_min_ms..=down_max_ms` (a Raft
/// leader at least [`RAFT_LEADER_DOWN_MS`]), restarted and ready again.
/// Returns what was killed.
pub async fn kill_one(
    c: &mut ChaosCluster,
    admin: &Admin,
    rng: &mut Rng,
    (down_min_ms, down_max_ms): (u64, u64),
    stats: &mut FaultStats,
) -> Result<String, String> {
    let (victim, leader, what) = pick_victim(admin, c, rng).await;
    // The Raft leader stays down long enough for a new one to be
    // elected (openraft's election timeout is 1-2 s, after the
    // followers' leader lease); a shorter absence goes unnoticed.
    let down = Duration::from_millis(match leader {
        true => down_max_ms.max(RAFT_LEADER_DOWN_MS),
        false => rng.range(down_min_ms, down_max_ms),
    });
    progress!("kill {what}, down {} ms", down.as_millis());
    if leader {
        stats.raft_leader_kills += 1;
    }
    kill_member(c, victim, down, rng, stats).await?;
    c.members[victim]
        .wait_ready(Duration::from_secs(120))
        .await?;
    Ok(format!("restarting {what}"))
}

/// Kills and restarts one member at a time every `min_ms..=max_ms` (once
/// the cluster healed from the previous kill) until `stop`; each victim
/// stays down `down_min_ms..=down_max_ms`. Returns with every member
/// running and the cluster healed.
pub async fn run_killer(
    cluster: &tokio::sync::Mutex<ChaosCluster>,
    mut rng: Rng,
    (min_ms, max_ms): (u64, u64),
    down: (u64, u64),
    stop: CancellationToken,
) -> Result<FaultStats, String> {
    let bootstrap = cluster.lock().await.bootstrap();
    let admin = Admin::connect(client_config(&bootstrap))
        .await
        .map_err(|e| format!("killer admin: {e}"))?;
    let mut stats = FaultStats::default();
    loop {
        let wait = Duration::from_millis(rng.range(min_ms, max_ms));
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(wait) => {}
        }
        let mut c = cluster.lock().await;
        c.check_running()?;
        let before = admin.cluster_status().await.ok().map(|s| epochs(&s));
        let what = kill_one(&mut c, &admin, &mut rng, down, &mut stats).await?;
        drop(c);
        record_heal(&admin, &mut stats, before, &what).await?;
    }
    settle(cluster, &admin).await?;
    admin.close().await;
    Ok(stats)
}

/// End of the faults: every member ready and the cluster healed.
pub async fn settle(
    cluster: &tokio::sync::Mutex<ChaosCluster>,
    admin: &Admin,
) -> Result<(), String> {
    let mut c = cluster.lock().await;
    for m in &mut c.members {
        m.wait_ready(Duration::from_secs(120)).await?;
    }
    drop(c);
    wait_healed(admin, "the last fault").await?;
    Ok(())
}
