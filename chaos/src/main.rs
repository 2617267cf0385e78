//! `cursus-chaos`: the crash-consistency suite (`make chaos`) and the soak
//! benchmark (`cursus-chaos soak`, in `make bench`). See `chaos/README.md`.
//!
//! The chaos run starts a real broker, runs the workloads of
//! [`workload`] against it while [`killer`] SIGKILLs and restarts it at
//! seeded random moments, records every acknowledgement in a [`ledger`],
//! then stops the killer, drains, and lets [`checker`] read everything
//! back. One summary line; exit status 1 on any violation, 2 when the run
//! itself could not be carried out.

/// Prints a progress line of the fault schedule: `chaos: <UTC time>
/// <message>`, the time as in the brokers' logs (`HH:MM:SS.mmm`), so
/// that a fault can be found there.
macro_rules! progress {
    ($($arg:tt)*) => {
        println!("chaos: {} {}", $crate::utc_time(), format_args!($($arg)*))
    };
}

mod broker;
mod checker;
mod cluster;
mod killer;
mod ledger;
mod nemesis;
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
    /// Inputs per second the transaction feeder writes. [default: 100; 20
    /// in the cluster runs, where every transactional record waits for a
    /// Raft commit and the processor handles some 30-40 a second on a
    /// two-core machine: faster input would outgrow what it can drain]
    #[arg(long)]
    txn_input_rate: Option<u64>,
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
    /// The cluster run with network partitions and process pauses besides
    /// the kills (implies `--cluster`; chaos/README.md, "The nemesis run").
    #[arg(long)]
    nemesis: bool,
    /// `--nemesis`: shortest partition or pause, in ms (a pause lasts at
    /// least the session timeout and half a second).
    #[arg(long, default_value_t = 1000)]
    fault_min_ms: u64,
    /// `--nemesis`: longest partition or pause, in ms.
    #[arg(long, default_value_t = 6000)]
    fault_max_ms: u64,
}

/// The brokers' session timeout in the cluster runs, in ms.
const CLUSTER_SESSION_MS: u64 = 1000;

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

/// The time of day in UTC, `HH:MM:SS.mmm` (the brokers log in UTC).
fn utc_time() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() % 86_400_000);
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
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
        match (args.nemesis, args.cluster) {
            (true, _) => " --nemesis",
            (false, true) => " --cluster",
            (false, false) => "",
        },
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
    let run = if args.cluster || args.nemesis {
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
                if args.cluster || args.nemesis {
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
    /// What the workloads did (the drain watches the processor's commits).
    ledger: Arc<Ledger>,
}

/// The processor is given up when it committed no transaction for this
/// long during the drain...
const PROCESSOR_STALL: Duration = Duration::from_secs(120);
/// ... and in any case after this long.
const PROCESSOR_DRAIN_MAX: Duration = Duration::from_secs(900);

/// Transactions the processor committed so far.
fn committed_txns(ledger: &Ledger) -> usize {
    ledger::lock(&ledger.txns)
        .iter()
        .filter(|t| t.outcome == ledger::TxnOutcome::Committed)
        .count()
}

impl Workloads {
    /// Spawns every workload (both runs use them all); the feeder writes
    /// `txn_rate` inputs a second and the processor takes at most
    /// `txn_batch` per transaction.
    fn spawn(
        args: &ChaosArgs,
        addr: &str,
        (txn_rate, txn_batch): (u64, usize),
        rng: &mut Rng,
        ledger: &Arc<Ledger>,
    ) -> Workloads {
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
                txn_rate,
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
                txn_batch,
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
            ledger: Arc::clone(ledger),
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
        if let Some(mut processor) = self.processor {
            // Drained, or given up once it committed nothing for a while
            // (a long cluster run leaves a backlog that takes minutes: every
            // transactional record waits for a Raft commit) or in any case
            // after PROCESSOR_DRAIN_MAX.
            let started = tokio::time::Instant::now();
            let mut committed = committed_txns(&self.ledger);
            loop {
                match tokio::time::timeout(PROCESSOR_STALL, &mut processor).await {
                    Ok(_) => break,
                    Err(_) => {
                        let now = committed_txns(&self.ledger);
                        if now == committed || started.elapsed() > PROCESSOR_DRAIN_MAX {
                            self.give_up.cancel();
                            break;
                        }
                        committed = now;
                    }
                }
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
    let txn = (args.txn_input_rate.unwrap_or(100), 50);
    let workloads = Workloads::spawn(args, &addr, txn, &mut rng, &ledger);

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

/// The `--cluster` and `--nemesis` runs: `Ok(true)` when the checker
/// found nothing.
///
/// The workloads of the single-broker run (idempotent producers, group
/// consumers, the transactional loop, the event-store appenders, the
/// offset monitor) plus one reader per partition of the idempotent topic
/// by explicit assignment and one availability probe per partition
/// (chaos/README.md, "The cluster run"), while the killer or the nemesis
/// runs.
async fn chaos_cluster_run(
    args: &ChaosArgs,
    seed: u64,
    dir: &std::path::Path,
) -> Result<bool, String> {
    let bin = broker::find_binary(args.broker_bin.clone())?;
    let mut rng = Rng::new(seed);
    let started = std::time::Instant::now();
    let session = CLUSTER_SESSION_MS.to_string();
    let cluster = cluster::ChaosCluster::start(
        &bin,
        dir,
        (3, 1),
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
            &session,
            // As in the single-broker run: a consumer replaced after a
            // kill gets its partitions soon.
            "--group-session-timeout-ms",
            "6000",
        ],
        rng.next_u64(),
        args.nemesis,
    )
    .await?;
    let bootstrap = cluster.bootstrap();
    println!(
        "chaos: cluster of 3 data brokers and a gateway at {bootstrap} ({bin}){}, up in {:.1} s, \
         run directory {}",
        if args.nemesis {
            ", linked through fault-injecting proxies"
        } else {
            ""
        },
        started.elapsed().as_secs_f64(),
        dir.display(),
        bin = bin.display()
    );
    workload::create_cluster_topics(&bootstrap)
        .await
        .map_err(|e| format!("create topics: {e}"))?;
    let cluster = Arc::new(tokio::sync::Mutex::new(cluster));
    let ledger = Arc::new(Ledger::default());
    // Every transactional record waits for a Raft commit in a cluster:
    // the feeder writes slower, and a transaction of 100 inputs ends well
    // within the 60 s transaction timeout even on a loaded machine (500
    // did not, and each timeout threw its work away).
    let txn = (args.txn_input_rate.unwrap_or(20), 100);
    let mut workloads = Workloads::spawn(args, &bootstrap, txn, &mut rng, &ledger);
    // In addition to the group consumers: one reader per partition by
    // explicit assignment, so that the checker can tell whether a record
    // that was visible during the run is still there afterwards, and one
    // availability probe per partition.
    for p in 0..workload::IDEM_PARTITIONS {
        let h = tokio::spawn(workload::partitions::run(
            p,
            bootstrap.clone(),
            Arc::clone(&ledger),
            workloads.stop.clone(),
        ));
        workloads.tasks.push((format!("reader {p}"), h));
        let h = tokio::spawn(workload::probes::run(
            p,
            bootstrap.clone(),
            Arc::clone(&ledger),
            workloads.stop.clone(),
        ));
        workloads.tasks.push((format!("probe {p}"), h));
    }
    let faults_stop = CancellationToken::new();
    let faults = {
        let cluster = Arc::clone(&cluster);
        let (rng, stop) = (rng.fork(), faults_stop.clone());
        let every = (args.kill_min_ms, args.kill_max_ms);
        let down = (args.down_min_ms, args.down_max_ms);
        let timings = nemesis::Timings {
            every,
            fault: (args.fault_min_ms, args.fault_max_ms),
            down,
            session_ms: CLUSTER_SESSION_MS,
        };
        let nemesis = args.nemesis;
        tokio::spawn(async move {
            match nemesis {
                true => nemesis::run(&cluster, rng, timings, stop).await,
                false => cluster::run_killer(&cluster, rng, every, down, stop).await,
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    faults_stop.cancel();
    let stats = faults.await.map_err(|e| format!("fault task: {e}"))??;
    let faults_end = tokio::time::Instant::now();
    println!(
        "chaos: faults stopped after {} kills ({} of the Raft leader, {} during recovery), \
         {} partitions, {} pauses, {} partition leader changes, longest heal {} ms; draining",
        stats.kills,
        stats.raft_leader_kills,
        stats.during_recovery,
        stats.partitions,
        stats.pauses,
        stats.leader_changes,
        stats.longest_heal.as_millis()
    );
    if args.nemesis {
        println!("chaos: faults by kind: {}", stats.kinds_line());
    }
    workloads.drain().await;
    let gaps = workload::probes::longest_gaps(&ledger, faults_end);
    let longest_unavailable = gaps.values().max().copied().unwrap_or_default();
    let per_partition = gaps
        .iter()
        .map(|(p, d)| format!("{p}:{}", d.as_millis()))
        .collect::<Vec<_>>()
        .join(",");
    println!(
        "chaos: longest time each partition of {} acknowledged nothing (ms): {per_partition}",
        workload::IDEM_TOPIC
    );

    let aggregates = workload::eventstore::aggregates(args.appenders);
    let report = checker::check_cluster(&bootstrap, &ledger, &aggregates, seed).await?;
    let nemesis_counts = match args.nemesis {
        true => format!(
            " partitions={} pauses={} faults={}",
            stats.partitions,
            stats.pauses,
            stats.kinds_compact()
        ),
        false => String::new(),
    };
    println!(
        "{}",
        summary(
            &format!(
                "mode={} seconds={} kills={} raft_leader_kills={}{nemesis_counts}",
                if args.nemesis { "nemesis" } else { "cluster" },
                args.seconds,
                stats.kills,
                stats.raft_leader_kills
            ),
            &report,
            &ledger,
            seed,
            &format!(
                " during_recovery={} leader_changes={} longest_heal_ms={} \
                 longest_unavailable_ms={} unavailable_ms={per_partition}",
                stats.during_recovery,
                stats.leader_changes,
                stats.longest_heal.as_millis(),
                longest_unavailable.as_millis()
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
