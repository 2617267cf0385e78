//! `--nemesis`: the cluster run with a node that is *alive and wrong*
//! (chaos/README.md, "The nemesis run"). The members dial each other
//! through fault-injecting proxies ([`cursus_testkit::Links`]; clients
//! reach every member directly), and one fault at a time, at seeded random
//! moments, is one of:
//!
//! - a **network partition**, healed after `--fault-min-ms..--fault-max-ms`:
//!   one member isolated both ways; the Raft leader cut off from the
//!   partition leaders; a partition leader cut off from its followers (it
//!   still reaches the clients and the other members); one-way loss (a
//!   member that cannot send, or cannot hear, or one direction between
//!   two members). Both ways of losing traffic are drawn: *blackhole*
//!   (connections stay open, nothing is delivered until the heal, then the
//!   held bytes arrive late) and *drop* (connections reset and refused);
//!   one-way loss is always a blackhole;
//! - a **pause**: SIGSTOP of a partition leader, the Raft leader, the
//!   transaction coordinator of the processor's transactional id or the
//!   coordinator of a group, for longer than the broker session timeout,
//!   then SIGCONT;
//! - a **kill**, as in `--cluster` ([`cluster::kill_one`]);
//! - a **kill during a partition**: a member isolated, then it or another
//!   member killed and restarted while the partition lasts;
//! - a **clean restart**: SIGTERM of a member (one time in three the Raft
//!   leader), which hands its leaderships over and leaves before it
//!   exits, then a start on the same data directory.
//!
//! After each fault the nemesis waits for the cluster to heal
//! ([`cluster::record_heal`]) before it draws the next.

use crate::cluster::{self, ChaosCluster, FaultStats};
use crate::rng::Rng;
use crate::workload::{client_config, IDEM_TOPIC, READER_GROUP, TXN_GROUP};
use cursus::admin::Admin;
use cursus::client::Cluster;
use cursus::ClusterStatus;
use cursus_testkit::signal::Signal;
use cursus_testkit::Fault;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The nemesis' timings.
#[derive(Debug, Clone, Copy)]
pub struct Timings {
    /// Time between two faults, in ms (`--kill-min-ms`, `--kill-max-ms`).
    pub every: (u64, u64),
    /// How long a partition or a pause lasts, in ms.
    pub fault: (u64, u64),
    /// How long a killed member stays down, in ms.
    pub down: (u64, u64),
    /// The brokers' session timeout: a pause lasts longer.
    pub session_ms: u64,
}

/// A network fault, as drawn.
#[derive(Debug, Clone, Copy)]
enum Split {
    /// One member cut off from all others, both ways.
    Isolate,
    /// The Raft leader cut off from every member leading partitions.
    RaftLeaderFromPartitionLeaders,
    /// A partition leader cut off from its followers.
    LeaderFromFollowers,
    /// One direction lost.
    OneWay,
}

impl Split {
    fn name(self) -> &'static str {
        match self {
            Split::Isolate => "isolate",
            Split::RaftLeaderFromPartitionLeaders => "raft_leader_from_partition_leaders",
            Split::LeaderFromFollowers => "leader_from_followers",
            Split::OneWay => "one_way",
        }
    }
}

/// A process to pause, as drawn.
#[derive(Debug, Clone, Copy)]
enum PauseTarget {
    PartitionLeader,
    RaftLeader,
    TxnCoordinator,
    GroupCoordinator,
}

impl PauseTarget {
    fn name(self) -> &'static str {
        match self {
            PauseTarget::PartitionLeader => "partition_leader",
            PauseTarget::RaftLeader => "raft_leader",
            PauseTarget::TxnCoordinator => "txn_coordinator",
            PauseTarget::GroupCoordinator => "group_coordinator",
        }
    }
}

/// What the admin client and the routing client of the nemesis see.
struct Eyes {
    admin: Admin,
    routing: Arc<Cluster>,
}

impl Eyes {
    async fn status(&self) -> Result<ClusterStatus, String> {
        self.admin
            .cluster_status()
            .await
            .map_err(|e| format!("CLUSTER_STATUS: {e}"))
    }
}

/// Runs faults one at a time every `timings.every` until `stop`; returns
/// with every link healed, every member running and ready, and the cluster
/// healed.
pub async fn run(
    cluster: &tokio::sync::Mutex<ChaosCluster>,
    mut rng: Rng,
    timings: Timings,
    stop: CancellationToken,
) -> Result<FaultStats, String> {
    let bootstrap = cluster.lock().await.bootstrap();
    let eyes = Eyes {
        admin: Admin::connect(client_config(&bootstrap))
            .await
            .map_err(|e| format!("nemesis admin: {e}"))?,
        routing: Cluster::new(client_config(&bootstrap))
            .map_err(|e| format!("nemesis client: {e}"))?,
    };
    let mut stats = FaultStats::default();
    loop {
        let wait = Duration::from_millis(rng.range(timings.every.0, timings.every.1));
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(wait) => {}
        }
        let mut c = cluster.lock().await;
        c.check_running()?;
        let before = eyes.status().await.ok().map(|s| cluster::epochs(&s));
        let what = match rng.range(0, 21) {
            0..=2 => partition(&c, &eyes, &mut rng, timings, Split::Isolate, &mut stats).await?,
            3..=4 => {
                let split = Split::RaftLeaderFromPartitionLeaders;
                partition(&c, &eyes, &mut rng, timings, split, &mut stats).await?
            }
            5..=7 => {
                let split = Split::LeaderFromFollowers;
                partition(&c, &eyes, &mut rng, timings, split, &mut stats).await?
            }
            8..=10 => partition(&c, &eyes, &mut rng, timings, Split::OneWay, &mut stats).await?,
            11..=15 => {
                let target = match rng.range(0, 3) {
                    0 => PauseTarget::PartitionLeader,
                    1 => PauseTarget::RaftLeader,
                    2 => PauseTarget::TxnCoordinator,
                    _ => PauseTarget::GroupCoordinator,
                };
                pause(&c, &eyes, &mut rng, timings, target, &mut stats).await?
            }
            16..=17 => {
                stats.count("kill".into());
                cluster::kill_one(&mut c, &eyes.admin, &mut rng, timings.down, &mut stats).await?
            }
            18..=19 => kill_during_partition(&mut c, &mut rng, timings, &mut stats).await?,
            _ => clean_restart(&mut c, &eyes, &mut rng, timings, &mut stats).await?,
        };
        drop(c);
        cluster::record_heal(&eyes.admin, &mut stats, before, &what).await?;
    }
    cluster::settle(cluster, &eyes.admin).await?;
    eyes.admin.close().await;
    eyes.routing.close().await;
    Ok(stats)
}

/// Longest a member may take to stop after SIGTERM (its hand-over and
/// its leave are bounded by a few session timeouts).
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Stops a member cleanly (SIGTERM; one time in three the Raft leader),
/// keeps it down for a drawn time and starts it again.
async fn clean_restart(
    c: &mut ChaosCluster,
    eyes: &Eyes,
    rng: &mut Rng,
    timings: Timings,
    stats: &mut FaultStats,
) -> Result<String, String> {
    let (victim, leader, what) = cluster::pick_victim(&eyes.admin, c, rng).await;
    let down = Duration::from_millis(rng.range(timings.down.0, timings.down.1));
    progress!(
        "clean stop (SIGTERM) of {what}, down {} ms",
        down.as_millis()
    );
    stats.count(match leader {
        true => "clean_restart/raft_leader".into(),
        false => "clean_restart".into(),
    });
    let started = tokio::time::Instant::now();
    c.members[victim].stop(STOP_TIMEOUT).await?;
    progress!("{what} stopped in {} ms", started.elapsed().as_millis());
    tokio::time::sleep(down).await;
    c.members[victim].restart().await?;
    c.members[victim]
        .wait_ready(Duration::from_secs(120))
        .await?;
    Ok(format!("restarting {what} after its clean stop"))
}

/// Blackhole or drop, drawn.
fn draw_fault(rng: &mut Rng) -> Fault {
    if rng.one_in(2) {
        Fault::Blackhole
    } else {
        Fault::Drop
    }
}

/// The member indices leading at least one partition in `s`.
fn partition_leaders(c: &ChaosCluster, s: &ClusterStatus) -> Vec<usize> {
    let mut leaders: Vec<usize> = s
        .partitions
        .iter()
        .filter_map(|p| c.index_of_broker(s, p.leader.as_deref()?))
        .collect();
    leaders.sort_unstable();
    leaders.dedup();
    leaders
}

/// A random partition of the idempotent producers' topic with a leader:
/// (leader, followers) as member indices.
fn leader_and_followers(
    c: &ChaosCluster,
    s: &ClusterStatus,
    rng: &mut Rng,
) -> Option<(usize, Vec<usize>)> {
    let led: Vec<_> = s
        .partitions
        .iter()
        .filter(|p| p.topic == IDEM_TOPIC && p.leader.is_some())
        .collect();
    if led.is_empty() {
        return None;
    }
    let p = led[rng.range(0, led.len() as u64 - 1) as usize];
    let leader = p.leader.as_deref()?;
    let followers = p
        .replicas
        .iter()
        .filter(|r| r.as_str() != leader)
        .filter_map(|r| c.index_of_broker(s, r))
        .collect();
    Some((c.index_of_broker(s, leader)?, followers))
}

/// Cuts the links the `split` way for a drawn time, then heals them.
async fn partition(
    c: &ChaosCluster,
    eyes: &Eyes,
    rng: &mut Rng,
    timings: Timings,
    split: Split,
    stats: &mut FaultStats,
) -> Result<String, String> {
    let links = c.links.as_ref().ok_or("the nemesis needs linked members")?;
    let n = c.members.len();
    let status = eyes.status().await.ok();
    let random = |rng: &mut Rng| rng.range(0, n as u64 - 1) as usize;
    let raft = match &status {
        Some(s) => s
            .raft_leader
            .as_deref()
            .and_then(|id| c.index_of_broker(s, id)),
        None => None,
    };
    let fault = match split {
        Split::OneWay => Fault::Blackhole,
        _ => draw_fault(rng),
    };
    let isolate_random = |rng: &mut Rng| {
        let victim = random(rng);
        links.isolate(victim, fault);
        format!("{} isolated", c.describe(victim))
    };
    let what = match split {
        Split::RaftLeaderFromPartitionLeaders => match (&status, raft) {
            (Some(s), Some(r)) => {
                let leaders: Vec<usize> = partition_leaders(c, s)
                    .into_iter()
                    .filter(|l| *l != r)
                    .collect();
                if leaders.is_empty() {
                    links.isolate(r, fault);
                    format!("the Raft leader {} isolated", c.describe(r))
                } else {
                    links.split(&[r], &leaders, fault);
                    format!(
                        "the Raft leader {} cut off from the partition leaders {:?}",
                        c.describe(r),
                        leaders.iter().map(|l| l + 1).collect::<Vec<_>>()
                    )
                }
            }
            _ => isolate_random(rng),
        },
        Split::LeaderFromFollowers => {
            match status
                .as_ref()
                .and_then(|s| leader_and_followers(c, s, rng))
            {
                Some((leader, followers)) => {
                    links.split(&[leader], &followers, fault);
                    format!(
                        "partition leader {} cut off from its followers {:?}",
                        c.describe(leader),
                        followers.iter().map(|f| f + 1).collect::<Vec<_>>()
                    )
                }
                None => isolate_random(rng),
            }
        }
        Split::OneWay => {
            let a = random(rng);
            match rng.range(0, 2) {
                0 => {
                    for b in (0..n).filter(|b| *b != a) {
                        links.cut(a, b, Fault::Blackhole);
                    }
                    format!("{} cannot send to anyone", c.describe(a))
                }
                1 => {
                    for b in (0..n).filter(|b| *b != a) {
                        links.cut(b, a, Fault::Blackhole);
                    }
                    format!("{} hears no one", c.describe(a))
                }
                _ => {
                    let b = (a + 1 + rng.range(0, n as u64 - 2) as usize) % n;
                    links.cut(a, b, Fault::Blackhole);
                    format!("{} cannot send to node {}", c.describe(a), b + 1)
                }
            }
        }
        Split::Isolate => isolate_random(rng),
    };
    let kind = format!("{}/{}", split.name(), fault.name());
    let lasts = Duration::from_millis(rng.range(timings.fault.0, timings.fault.1));
    progress!("partition ({kind}): {what}, for {} ms", lasts.as_millis());
    stats.partitions += 1;
    stats.count(kind);
    tokio::time::sleep(lasts).await;
    links.heal();
    Ok(format!("healing ({what})"))
}

/// SIGSTOPs the drawn process for longer than the session timeout, then
/// SIGCONTs it.
async fn pause(
    c: &ChaosCluster,
    eyes: &Eyes,
    rng: &mut Rng,
    timings: Timings,
    target: PauseTarget,
    stats: &mut FaultStats,
) -> Result<String, String> {
    let status = eyes.status().await.ok();
    let by_addr = |addr: Result<String, cursus::Error>| addr.ok().and_then(|a| c.index_of(&a));
    let found = match target {
        PauseTarget::PartitionLeader => status
            .as_ref()
            .and_then(|s| leader_and_followers(c, s, rng))
            .map(|(leader, _)| leader),
        PauseTarget::RaftLeader => status.as_ref().and_then(|s| {
            s.raft_leader
                .as_deref()
                .and_then(|id| c.index_of_broker(s, id))
        }),
        PauseTarget::TxnCoordinator => by_addr(
            eyes.routing
                .txn_coordinator(crate::workload::transactions::TRANSACTIONAL_ID, true)
                .await,
        ),
        PauseTarget::GroupCoordinator => {
            let group = if rng.one_in(2) {
                TXN_GROUP
            } else {
                READER_GROUP
            };
            by_addr(eyes.routing.coordinator(group, true).await)
        }
    };
    // Roles not readable right now: pause any member.
    let victim = found.unwrap_or_else(|| rng.range(0, c.members.len() as u64 - 1) as usize);
    let least = timings.session_ms + 500;
    let lasts =
        Duration::from_millis(rng.range(timings.fault.0.max(least), timings.fault.1.max(least)));
    let kind = format!("pause/{}", target.name());
    let what = format!("{} ({})", c.describe(victim), target.name());
    progress!("pause {what} for {} ms", lasts.as_millis());
    c.signal(victim, Signal::Stop)?;
    stats.pauses += 1;
    stats.count(kind);
    tokio::time::sleep(lasts).await;
    c.signal(victim, Signal::Cont)?;
    Ok(format!("waking {what}"))
}

/// Isolates a member, kills it or another member while the partition
/// lasts, restarts that member, then heals the partition.
async fn kill_during_partition(
    c: &mut ChaosCluster,
    rng: &mut Rng,
    timings: Timings,
    stats: &mut FaultStats,
) -> Result<String, String> {
    let n = c.members.len() as u64;
    let isolated = rng.range(0, n - 1) as usize;
    let victim = if rng.one_in(2) {
        isolated
    } else {
        rng.range(0, n - 1) as usize
    };
    let fault = draw_fault(rng);
    let lasts = rng.range(timings.fault.0, timings.fault.1);
    let after = rng.range(0, lasts / 2);
    let down = Duration::from_millis(rng.range(timings.down.0, timings.down.1));
    let what = format!(
        "{} isolated ({}), {} killed after {after} ms",
        c.describe(isolated),
        fault.name(),
        c.describe(victim)
    );
    progress!("kill during a partition: {what}, partition for {lasts} ms");
    let links = c.links.as_ref().ok_or("the nemesis needs linked members")?;
    links.isolate(isolated, fault);
    stats.partitions += 1;
    stats.count(format!("kill_during_partition/{}", fault.name()));
    let started = tokio::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(after)).await;
    cluster::kill_member(c, victim, down, rng, stats).await?;
    let rest = Duration::from_millis(lasts).saturating_sub(started.elapsed());
    tokio::time::sleep(rest).await;
    c.links.as_ref().expect("linked").heal();
    c.members[victim]
        .wait_ready(Duration::from_secs(120))
        .await?;
    Ok(format!("healing ({what})"))
}
