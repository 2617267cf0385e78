//! `cursus-chaos`: the crash-consistency suite (`make chaos`) and the soak
//! benchmark (`cursus-chaos soak`, in `make bench`). See `chaos/README.md`.
//!
//! The chaos run starts a real broker, runs the workloads of
//! [`workload`] against it while [`killer`] SIGKILLs and restarts it at
//! seeded random moments, records every acknowledgement in a [`ledger`],
//! then stops the killer, drains, and lets [`checker`] read everything
//! back. One summary line; exit status 1 on any violation, 2 when the run
//! itself could not be carried out.

mod broker;
mod checker;
mod cluster;
mod killer;
mod ledger;
mod rng;
mod soak;
mod workload;

use broker::BrokerProcess;
use clap::{Args, Parser, Subcommand};
use ledger::Ledger;
use rng::Rng;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Crash-consistency suite and soak benchmark for the Cursus engine and broker.
#[derive(Debug, Parser)]
#[command(name = "cursus-chaos", version)]
struct Cli {
    #[command(subcommand)]
    mode: Option<Mode>,
    #[command(flatten)]
    chaos: ChaosArgs,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Mixed load against a broker that is never killed, watching its
    /// memory (RSS): fails when it keeps growing.
    Soak(soak::SoakArgs),
}

/// Options of the chaos run.
#[derive(Debug, Args)]
struct ChaosArgs {
    /// How long the workloads run while the broker is being killed.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Seed of the kill schedule and workload choices (default: from the
    /// clock; printed so the run can be repeated).
    #[arg(long)]
    seed: Option<u64>,
    /// Broker binary (default: `$CURSUS_BROKER_BIN`, else `cursus-broker`
    /// next to this executable).
    #[arg(long)]
    broker_bin: Option<PathBuf>,
    /// Shortest time between kills, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    kill_min_ms: u64,
    /// Longest time between kills, in milliseconds.
    #[arg(long, default_value_t = 4000)]
    kill_max_ms: u64,
    /// Idempotent producers.
    #[arg(long, default_value_t = 3)]
    producers: u32,
    /// Records per second of each idempotent producer.
    #[arg(long, default_value_t = 300)]
    producer_rate: u64,
    /// Event-store appenders.
    #[arg(long, default_value_t = 2)]
    appenders: u32,
    /// Group consumers.
    #[arg(long, default_value_t = 2)]
    consumers: u32,
    /// Keep the run directory (broker data and log) even when the run passes.
    #[arg(long)]
    keep: bool,
    /// Run against a cluster of three data brokers and a gateway (issue
    /// #21), killing one member at a time, the Raft leader included
    /// (chaos/README.md, "The cluster run").
    #[arg(long)]
    cluster: bool,
    /// `--cluster`: shortest time a killed member stays down, in ms (a
    /// killed Raft leader stays down at least 5 s).
    #[arg(long, default_value_t = 1000)]
    down_min_ms: u64,
    /// `--cluster`: longest time a killed member stays down, in ms.
    #[arg(long, default_value_t = 3000)]
    down_max_ms: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    match cli.mode {
        Some(Mode::Soak(args)) => runtime.block_on(soak::run(args)),
        None => runtime.block_on(chaos(cli.chaos)),
    }
}

/// Waits for a workload task; a panic is reported, not propagated.
async fn join(name: &str, handle: JoinHandle<()>) {
    if let Err(e) = handle.await {
        eprintln!("chaos: workload {name} failed: {e}");
    }
}

async fn chaos(args: ChaosArgs) -> ExitCode {
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_007)
    });
    println!(
        "chaos: seed={seed} seconds={} (rerun: cursus-chaos{} --seconds {} --seed {seed} \
         --kill-min-ms {} --kill-max-ms {})",
        args.seconds,
        if args.cluster { " --cluster" } else { "" },
        args.seconds,
        args.kill_min_ms,
        args.kill_max_ms
    );
    let dir = match tempfile::Builder::new().prefix("cursus-chaos-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("chaos: run directory: {e}");
            return ExitCode::from(2);
        }
    };
    let run = if args.cluster {
        chaos_cluster_run(&args, seed, dir.path()).await
    } else {
        chaos_run(&args, seed, dir.path()).await
    };
    match run {
        Ok(true) => {
            if args.keep {
                println!("chaos: kept {}", dir.keep().display());
            }
            ExitCode::SUCCESS
        }
        Ok(false) => {
            let kept = dir.keep();
            eprintln!(
                "chaos: seed={seed}: violations found; broker data and log kept in {} \
                 (log: {}/{})",
                kept.display(),
                kept.display(),
                if args.cluster {
                    "broker-N.log"
                } else {
                    "broker.log"
                }
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            let kept = dir.keep();
            eprintln!(
                "chaos: seed={seed}: the run failed: {e} (broker data and log kept in {})",
                kept.display()
            );
            ExitCode::from(2)
        }
    }
}

/// The workloads of a chaos run (chaos/README.md, "What runs"), spawned
/// against `addr` (one broker, or a cluster's bootstrap list).
struct Workloads {
    /// Producers, feeder, appenders, consumers (and `--cluster` readers).
    tasks: Vec<(String, JoinHandle<()>)>,
    /// The transactional processor (`None`: the loop is switched off).
    processor: Option<JoinHandle<()>>,
    /// The committed-offset monitor (`None`: switched off).
    monitor: Option<JoinHandle<()>>,
    /// Stops issuing new work.
    stop: CancellationToken,
    /// Tells the processor the input is complete.
    inputs_done: CancellationToken,
    /// Stops the processor even if it has not drained.
    give_up: CancellationToken,
    /// Stops the monitor.
    monitor_stop: CancellationToken,
}

impl Workloads {
    /// Spawns every workload (both runs use them all).
    fn spawn(args: &ChaosArgs, addr: &str, rng: &mut Rng, ledger: &Arc<Ledger>) -> Workloads {
        let stop = CancellationToken::new();
        let inputs_done = CancellationToken::new();
        let give_up = CancellationToken::new();
        let monitor_stop = CancellationToken::new();
        let mut tasks: Vec<(String, JoinHandle<()>)> = Vec::new();
        for id in 0..args.producers {
            let h = tokio::spawn(workload::producers::run(
                id,
                addr.to_owned(),
                args.producer_rate,
                Arc::clone(ledger),
                stop.clone(),
            ));
            tasks.push((format!("producer {id}"), h));
        }
        tasks.push((
            "transaction feeder".into(),
            tokio::spawn(workload::transactions::feed(
                addr.to_owned(),
                100,
                Arc::clone(ledger),
                stop.clone(),
            )),
        ));
        for id in 0..args.appenders {
            let h = tokio::spawn(workload::eventstore::run(
                id,
                addr.to_owned(),
                40,
                rng.fork(),
                Arc::clone(ledger),
                stop.clone(),
            ));
            tasks.push((format!("appender {id}"), h));
        }
        for id in 0..args.consumers {
            let h = tokio::spawn(workload::consumers::run(
                id,
                addr.to_owned(),
                Arc::clone(ledger),
                stop.clone(),
            ));
            tasks.push((format!("consumer {id}"), h));
        }
        let processor = Some({
            tokio::spawn(workload::transactions::process(
                addr.to_owned(),
                Arc::clone(ledger),
                inputs_done.clone(),
                give_up.clone(),
            ))
        });
        let monitor = Some({
            tokio::spawn(workload::consumers::monitor(
                addr.to_owned(),
                Arc::clone(ledger),
                monitor_stop.clone(),
            ))
        });
        Workloads {
            tasks,
            processor,
            monitor,
            stop,
            inputs_done,
            give_up,
            monitor_stop,
        }
    }

    /// Drain: no new work; outstanding sends settle; the processor
    /// consumes its input to the end (bounded), then the monitor stops.
    async fn drain(self) {
        self.stop.cancel();
        for (name, h) in self.tasks {
            join(&name, h).await;
        }
        self.inputs_done.cancel();
        if let Some(processor) = self.processor {
            let drain = tokio::time::timeout(Duration::from_secs(120), processor);
            if drain.await.is_err() {
                self.give_up.cancel();
            }
        }
        self.monitor_stop.cancel();
        if let Some(monitor) = self.monitor {
            join("monitor", monitor).await;
        }
    }
}

/// The run: `Ok(true)` when the checker found nothing.
async fn chaos_run(args: &ChaosArgs, seed: u64, dir: &std::path::Path) -> Result<bool, String> {
    let bin = broker::find_binary(args.broker_bin.clone())?;
    let mut rng = Rng::new(seed);
    let broker = BrokerProcess::start(
        &bin,
        dir,
        &[
            "--log-level",
            "info",
            // Small segments: rolls (and producer-state checkpoints) happen
            // during the run, not only in the first segment.
            "--segment-bytes",
            "262144",
            // A consumer replaced after a kill gets its partitions soon.
            "--group-session-timeout-ms",
            "6000",
        ],
        rng.next_u64(),
    )
    .await?;
    let addr = broker.addr.clone();
    println!(
        "chaos: broker {} at {addr}, run directory {}",
        bin.display(),
        dir.display()
    );
    workload::create_topics(&addr)
        .await
        .map_err(|e| format!("create topics: {e}"))?;
    let broker = Arc::new(tokio::sync::Mutex::new(broker));
    let ledger = Arc::new(Ledger::default());
    let workloads = Workloads::spawn(args, &addr, &mut rng, &ledger);

    // The killer runs for the duration, then leaves the broker up.
    let killer_stop = CancellationToken::new();
    let killer = {
        let broker = Arc::clone(&broker);
        let (rng, stop) = (rng.fork(), killer_stop.clone());
        let (min, max) = (args.kill_min_ms, args.kill_max_ms);
        tokio::spawn(async move { killer::run(&broker, rng, min, max, stop).await })
    };
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    killer_stop.cancel();
    let kills = killer.await.map_err(|e| format!("killer task: {e}"))??;
    println!(
        "chaos: killer stopped after {} kills ({} during recovery); draining",
        kills.kills, kills.during_recovery
    );

    workloads.drain().await;

    let aggregates = workload::eventstore::aggregates(args.appenders);
    let report = checker::check(&addr, &ledger, &aggregates, seed).await?;
    println!(
        "{}",
        summary(
            &format!("seconds={} kills={}", args.seconds, kills.kills),
            &report,
            &ledger,
            seed,
            "",
        )
    );
    broker.lock().await.kill().await;
    report.print_violations();
    Ok(report.violations.is_empty())
}

/// The `--cluster` run: `Ok(true)` when the checker found nothing.
///
/// The workloads of the single-broker run (idempotent producers, group
/// consumers, the transactional loop, the event-store appenders, the
/// offset monitor) plus one reader per partition of the idempotent topic
/// by explicit assignment (chaos/README.md, "The cluster run").
async fn chaos_cluster_run(
    args: &ChaosArgs,
    seed: u64,
    dir: &std::path::Path,
) -> Result<bool, String> {
    let bin = broker::find_binary(args.broker_bin.clone())?;
    let mut rng = Rng::new(seed);
    let started = std::time::Instant::now();
    let cluster = cluster::ChaosCluster::start(
        &bin,
        dir,
        3,
        1,
        &[
            "--log-level",
            "info",
            "--segment-bytes",
            "262144",
            // A member down longer than a second is failed over, so most
            // kills move partition leaders.
            "--broker-heartbeat-ms",
            "200",
            "--broker-session-timeout-ms",
            "1000",
            // As in the single-broker run: a consumer replaced after a
            // kill gets its partitions soon.
            "--group-session-timeout-ms",
            "6000",
        ],
        rng.next_u64(),
    )
    .await?;
    let bootstrap = cluster.bootstrap();
    println!(
        "chaos: cluster of 3 data brokers and a gateway at {bootstrap} ({bin}), up in {:.1} s, \
         run directory {}",
        started.elapsed().as_secs_f64(),
        dir.display(),
        bin = bin.display()
    );
    workload::create_cluster_topics(&bootstrap)
        .await
        .map_err(|e| format!("create topics: {e}"))?;
    let cluster = Arc::new(tokio::sync::Mutex::new(cluster));
    let ledger = Arc::new(Ledger::default());
    let mut workloads = Workloads::spawn(args, &bootstrap, &mut rng, &ledger);
    // In addition to the group consumers: one reader per partition by
    // explicit assignment, so that the checker can tell whether a record
    // that was visible during the run is still there afterwards.
    for p in 0..workload::IDEM_PARTITIONS {
        let h = tokio::spawn(workload::partitions::run(
            p,
            bootstrap.clone(),
            Arc::clone(&ledger),
            workloads.stop.clone(),
        ));
        workloads.tasks.push((format!("reader {p}"), h));
    }
    let killer_stop = CancellationToken::new();
    let killer = {
        let cluster = Arc::clone(&cluster);
        let (rng, stop) = (rng.fork(), killer_stop.clone());
        let every = (args.kill_min_ms, args.kill_max_ms);
        let down = (args.down_min_ms, args.down_max_ms);
        tokio::spawn(async move { cluster::run_killer(&cluster, rng, every, down, stop).await })
    };
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    killer_stop.cancel();
    let kills = killer.await.map_err(|e| format!("killer task: {e}"))??;
    println!(
        "chaos: killer stopped after {} kills ({} of the Raft leader, {} during recovery, \
         {} partition leader changes, longest heal {} ms); draining",
        kills.kills,
        kills.raft_leader_kills,
        kills.during_recovery,
        kills.leader_changes,
        kills.longest_heal.as_millis()
    );
    workloads.drain().await;

    let aggregates = workload::eventstore::aggregates(args.appenders);
    let report = checker::check_cluster(&bootstrap, &ledger, &aggregates, seed).await?;
    println!(
        "{}",
        summary(
            &format!(
                "mode=cluster seconds={} kills={} raft_leader_kills={}",
                args.seconds, kills.kills, kills.raft_leader_kills
            ),
            &report,
            &ledger,
            seed,
            &format!(
                " during_recovery={} leader_changes={} longest_heal_ms={}",
                kills.during_recovery,
                kills.leader_changes,
                kills.longest_heal.as_millis()
            ),
        )
    );
    cluster.lock().await.kill_all().await;
    report.print_violations();
    Ok(report.violations.is_empty())
}

/// The one summary line of a run: `head` (mode, duration, kills), the
/// checker's counts, the ledger's, `cluster_tail` (the cluster run's
/// failover counts; it also reports `visible_changed`) and the number of
/// violations last.
fn summary(
    head: &str,
    report: &checker::Report,
    ledger: &Ledger,
    seed: u64,
    cluster_tail: &str,
) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let r = report;
    let tail = cluster_tail;
    let visible_changed = if !cluster_tail.is_empty() {
        format!(" visible_changed={}", r.visible_changed)
    } else {
        String::new()
    };
    format!(
        "chaos: {head} acknowledged={} read={} lost={} duplicated={} reordered={} \
         txn_committed={} txn_partial={} es_events={} es_gaps={} offsets_backward={}{visible_changed} \
         seed={seed} not_acknowledged={} txn_aborted={} txn_unknown={} txn_eos_duplicated={} \
         txn_eos_missing={} es_acknowledged={} es_lost={} commits={}{tail} consumed={} \
         violations={}",
        r.acknowledged,
        r.read,
        r.lost,
        r.duplicated,
        r.reordered,
        r.txn_committed,
        r.txn_partial,
        r.es_events,
        r.es_gaps,
        r.offsets_backward,
        ledger.produce_failures.load(Relaxed),
        r.txn_aborted,
        r.txn_unknown,
        r.txn_eos_duplicated,
        r.txn_eos_missing,
        r.es_acknowledged,
        r.es_lost,
        ledger::lock(&ledger.commits).len(),
        ledger.consumed.load(Relaxed),
        r.violations.len(),
    )
}
