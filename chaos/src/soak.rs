//! The soak benchmark (`cursus-chaos soak`, run by `make bench`): mixed
//! load against one broker that is never killed, for `--seconds`, while
//! its resident memory (`VmRSS` of `/proc/<pid>/status`) is sampled.
//!
//! Load: two acks=1 producers (200-byte records, round-robin over the
//! partitions of two topics with byte retention, so the log itself stays
//! bounded), and three consumer groups that poll and commit; one member of
//! the first group is replaced every 15 s (join/leave churn).
//!
//! Verdict: the samples are split in thirds; the run fails when the
//! smallest RSS of the last third exceeds the largest of the first third by
//! more than `--margin-pct` percent of it plus `--margin-mib` MiB. A broker
//! whose memory levels off passes (its last-third minimum stays at or
//! below the early peak); one that keeps growing has a last-third floor
//! above every early sample. Results: `target/bench/soak.json`.

use crate::broker::{self, BrokerProcess};
use crate::workload::{client_config, connect_retrying};
use clap::Args;
use cursus::admin::{Admin, NewTopic};
use cursus::consumer::{is_membership_error, Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ConsumerConfig, ProducerConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Options of the soak run.
#[derive(Debug, Args)]
pub struct SoakArgs {
    /// Duration of the load (10 minutes is a reasonable manual run).
    #[arg(long, default_value_t = 120)]
    seconds: u64,
    /// Broker binary (default: `$CURSUS_BROKER_BIN`, else `cursus-broker`
    /// next to this executable); use a release build.
    #[arg(long)]
    broker_bin: Option<PathBuf>,
    /// Milliseconds between RSS samples.
    #[arg(long, default_value_t = 2000)]
    sample_ms: u64,
    /// Records per second of all producers together.
    #[arg(long, default_value_t = 20_000)]
    rate: u64,
    /// Allowed growth, percent of the first third's largest RSS.
    #[arg(long, default_value_t = 10)]
    margin_pct: u64,
    /// Allowed growth on top of the percentage, MiB.
    #[arg(long, default_value_t = 8)]
    margin_mib: u64,
    /// Where the results go.
    #[arg(long, default_value = "target/bench/soak.json")]
    out: PathBuf,
}

/// Topics of the soak: (name, partitions).
const TOPICS: [(&str, u32); 2] = [("soak-a", 4), ("soak-b", 2)];
/// Payload bytes per record.
const PAYLOAD: usize = 200;
/// Retained bytes per partition: retention starts within the first
/// seconds, so the data on disk (and what the broker keeps about it) stays
/// bounded.
const RETENTION_BYTES: u64 = 16 << 20;

/// Runs the soak and prints/writes its figures; non-zero exit when the
/// RSS keeps growing.
pub async fn run(args: SoakArgs) -> ExitCode {
    match soak(&args).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("soak: failed: {e}");
            ExitCode::from(2)
        }
    }
}

async fn produce(
    addr: String,
    topic: &'static str,
    rate: u64,
    count: Arc<AtomicU64>,
    stop: CancellationToken,
) -> cursus::Result<()> {
    let mut config = ProducerConfig::new(&addr);
    config.client = client_config(&addr);
    config.set("acks", "1")?;
    config.set("linger_ms", "5")?;
    let producer = Producer::connect(config).await?;
    let payload = bytes_of(PAYLOAD);
    let started = Instant::now();
    let mut pending = std::collections::VecDeque::new();
    let mut n = 0u64;
    while !stop.is_cancelled() {
        n += 1;
        pending.push_back(
            producer
                .send(ProducerRecord::new(topic, payload.clone()))
                .await?,
        );
        if pending.len() >= 2000 {
            if let Some(d) = pending.pop_front() {
                if d.await.is_ok() {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        if n % 100 == 0 {
            let due = started + Duration::from_micros(n * 1_000_000 / rate.max(1));
            tokio::time::sleep_until(due).await;
        }
    }
    for d in pending {
        if d.await.is_ok() {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
    producer.close(Duration::from_secs(30)).await
}

fn bytes_of(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

/// One group member polling and committing until `stop`, or for `lifetime`
/// (then it leaves and the caller starts another).
async fn consume(
    addr: String,
    group: &'static str,
    topic: &'static str,
    count: Arc<AtomicU64>,
    stop: CancellationToken,
    lifetime: Option<Duration>,
) -> cursus::Result<()> {
    let mut config = ConsumerConfig::new(&addr, group);
    config.client = client_config(&addr);
    config.set("auto_offset_reset", "latest")?;
    let consumer = Consumer::connect(config).await?;
    consumer
        .subscribe(Subscription::Topics(vec![topic.into()]))
        .await?;
    let until = lifetime.map(|l| Instant::now() + l);
    while !stop.is_cancelled() && until.map_or(true, |u| Instant::now() < u) {
        let records = match consumer.poll(Duration::from_millis(500)).await {
            Ok(r) => r,
            // A rebalance (the churning member): the next poll rejoins.
            Err(e) if is_membership_error(&e) => continue,
            Err(e) => return Err(e),
        };
        if !records.is_empty() {
            count.fetch_add(records.len() as u64, Ordering::Relaxed);
            // The commit finishes in the background (the handle may go; a
            // commit refused by a rebalance is harmless here).
            drop(consumer.commit_async().await?);
        }
    }
    consumer.close().await
}

/// `(seconds since start, RSS KiB)`.
type Sample = (f64, u64);

async fn soak(args: &SoakArgs) -> Result<bool, String> {
    let bin = broker::find_binary(args.broker_bin.clone())?;
    let dir = tempfile::Builder::new()
        .prefix("cursus-soak-")
        .tempdir()
        .map_err(|e| format!("run directory: {e}"))?;
    let mut broker = BrokerProcess::start(
        &bin,
        dir.path(),
        &[
            "--log-level",
            "warn",
            "--segment-bytes",
            "4194304",
            "--retention-check-interval-ms",
            "1000",
        ],
        u64::from(std::process::id()),
    )
    .await?;
    let addr = broker.addr.clone();
    println!(
        "soak: broker {} (pid {}) at {addr}, {} s",
        bin.display(),
        broker.pid().unwrap_or(0),
        args.seconds
    );
    let admin = Admin::connect(client_config(&addr))
        .await
        .map_err(|e| e.to_string())?;
    for (name, partitions) in TOPICS {
        let mut t = NewTopic::new(name).partitions(partitions);
        t.retention_bytes = Some(RETENTION_BYTES);
        admin.create_topic(&t).await.map_err(|e| e.to_string())?;
    }
    admin.close().await;

    let stop = CancellationToken::new();
    let produced = Arc::new(AtomicU64::new(0));
    let consumed = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for (topic, _) in TOPICS {
        tasks.push(tokio::spawn(produce(
            addr.clone(),
            topic,
            args.rate / TOPICS.len() as u64,
            Arc::clone(&produced),
            stop.clone(),
        )));
    }
    for (group, topic) in [
        ("soak-g2", "soak-a"),
        ("soak-g3", "soak-b"),
        ("soak-g1", "soak-a"),
    ] {
        tasks.push(tokio::spawn(consume(
            addr.clone(),
            group,
            topic,
            Arc::clone(&consumed),
            stop.clone(),
            None,
        )));
    }
    // The churning member of soak-g1: leaves every 15 s, a new one joins.
    {
        let (addr, consumed, stop) = (addr.clone(), Arc::clone(&consumed), stop.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.is_cancelled() {
                let member = || {
                    consume(
                        addr.clone(),
                        "soak-g1",
                        "soak-a",
                        Arc::clone(&consumed),
                        stop.clone(),
                        Some(Duration::from_secs(15)),
                    )
                };
                let Some(()) = connect_retrying(&stop, member).await else {
                    break;
                };
            }
            Ok(())
        }));
    }

    let started = Instant::now();
    let end = started + Duration::from_secs(args.seconds);
    let mut samples: Vec<Sample> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_millis(args.sample_ms.max(100)));
    loop {
        tick.tick().await;
        let rss = broker
            .rss_kib()
            .ok_or("the broker is gone (no /proc/<pid>/status)")?;
        let t = started.elapsed().as_secs_f64();
        samples.push((t, rss));
        if Instant::now() >= end {
            break;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    stop.cancel();
    for t in tasks {
        match t.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(format!("load task: {e}")),
            Err(e) => return Err(format!("load task: {e}")),
        }
    }
    broker.kill().await;
    let verdict = judge(&samples, args.margin_pct, args.margin_mib);
    let produced = produced.load(Ordering::Relaxed);
    let consumed = consumed.load(Ordering::Relaxed);
    let summary = serde_json::json!({
        "seconds": elapsed,
        "produced": produced,
        "consumed": consumed,
        "produce_per_s": (produced as f64 / elapsed).round(),
        "consume_per_s": (consumed as f64 / elapsed).round(),
        "payload_bytes": PAYLOAD,
        "rss_kib": {
            "start": verdict.start,
            "end": verdict.end,
            "max": verdict.max,
            "first_third_max": verdict.first_max,
            "last_third_min": verdict.last_min,
            "allowed_growth": verdict.allowed,
        },
        "rule": format!(
            "fail when last-third min RSS > first-third max RSS + {}% of it + {} MiB",
            args.margin_pct, args.margin_mib
        ),
        "pass": verdict.pass,
        "samples": samples.iter().map(|(t, r)| serde_json::json!([(t * 10.0).round() / 10.0, r])).collect::<Vec<_>>(),
    });
    if let Some(parent) = args.out.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(
        &args.out,
        serde_json::to_string_pretty(&summary).expect("json") + "\n",
    )
    .map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!(
        "soak: seconds={elapsed:.0} produced={produced} ({:.0}/s) consumed={consumed} ({:.0}/s) \
         rss_start={}KiB rss_end={}KiB rss_max={}KiB first_third_max={}KiB last_third_min={}KiB \
         allowed_growth={}KiB pass={}",
        produced as f64 / elapsed,
        consumed as f64 / elapsed,
        verdict.start,
        verdict.end,
        verdict.max,
        verdict.first_max,
        verdict.last_min,
        verdict.allowed,
        verdict.pass
    );
    println!("soak: wrote {}", args.out.display());
    if !verdict.pass {
        eprintln!(
            "soak: the broker's RSS keeps growing: last third never below {} KiB, \
             first third at most {} KiB (allowed growth {} KiB)",
            verdict.last_min, verdict.first_max, verdict.allowed
        );
    }
    Ok(verdict.pass)
}

/// The RSS figures and the verdict.
#[derive(Debug, PartialEq, Eq)]
struct Verdict {
    start: u64,
    end: u64,
    max: u64,
    first_max: u64,
    last_min: u64,
    allowed: u64,
    pass: bool,
}

/// Applies the growth rule of the module docs to the samples.
fn judge(samples: &[Sample], margin_pct: u64, margin_mib: u64) -> Verdict {
    let rss: Vec<u64> = samples.iter().map(|(_, r)| *r).collect();
    let third = (rss.len() / 3).max(1);
    let first_max = rss[..third.min(rss.len())]
        .iter()
        .copied()
        .max()
        .unwrap_or(0);
    let last_min = rss[rss.len().saturating_sub(third)..]
        .iter()
        .copied()
        .min()
        .unwrap_or(0);
    let allowed = first_max * margin_pct / 100 + margin_mib * 1024;
    Verdict {
        start: rss.first().copied().unwrap_or(0),
        end: rss.last().copied().unwrap_or(0),
        max: rss.iter().copied().max().unwrap_or(0),
        first_max,
        last_min,
        allowed,
        pass: last_min <= first_max + allowed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(rss: &[u64]) -> Vec<Sample> {
        rss.iter()
            .enumerate()
            .map(|(i, r)| (i as f64, *r))
            .collect()
    }

    #[test]
    fn a_plateau_passes() {
        let v = judge(
            &samples(&[
                50_000, 80_000, 90_000, 85_000, 88_000, 90_500, 89_000, 91_000, 90_000,
            ]),
            10,
            8,
        );
        assert!(v.pass, "{v:?}");
        assert_eq!((v.start, v.end, v.max), (50_000, 90_000, 91_000));
    }

    #[test]
    fn steady_growth_fails() {
        let rss: Vec<u64> = (0..30).map(|i| 50_000 + i * 4_000).collect();
        let v = judge(&samples(&rss), 10, 8);
        assert!(!v.pass, "{v:?}");
    }
}
