//! The tracing layer's overhead (cargo feature `otel`, issue #34): produce
//! and consume records/s through the engine against the reference broker
//! (a release build on a free loopback port), 100-byte records, acks=1,
//! four partitions, in three modes:
//!
//! * `off`: the plain producer and consumer (the engine's reference loops
//!   of `support/workload.rs`, as `benches/engine.rs` times them);
//! * `carried`: the plain producer and consumer, each record carrying a
//!   fixed trace context (its ~70 bytes of metadata) and the consumer
//!   reading it back: what propagation costs without any span, to tell
//!   the bytes on the wire from the spans;
//! * `sampled_out`: `TracedProducer` / `TracedConsumer` on an SDK tracer
//!   provider whose sampler is `AlwaysOff` (spans started, not recorded);
//! * `sampled_in`: the same with `AlwaysOn` and a span processor that
//!   drops every ended span (the cost of recording, without an export).
//!
//! A traced consume runs each record in its process span. The modes run
//! in turn for `CURSUS_BENCH_ROUNDS` rounds (default 3), each figure the
//! median of its rounds. Writes target/bench/otel.json.
//!
//! ```sh
//! cargo bench -p cursus --features otel --bench otel     # 200,000 records each
//! CURSUS_BENCH_RECORDS=500000 cargo bench -p cursus --features otel --bench otel
//! ```

#[path = "support/workload.rs"]
mod workload;

use cursus::admin::{Admin, NewTopic};
use cursus::consumer::{Consumer, Subscription};
use cursus::otel::{TracedConsumer, TracedProducer, Tracing};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use cursus_testkit::TestBroker;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, SpanData, SpanProcessor};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;
/// Deliveries held before the oldest is awaited, as `workload::produce_all`.
const IN_FLIGHT: usize = 50_000;

/// What a run measures (module docs).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Off,
    Carried,
    SampledOut,
    SampledIn,
}

impl Mode {
    const ALL: [Mode; 4] = [Mode::Off, Mode::Carried, Mode::SampledOut, Mode::SampledIn];

    fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Carried => "carried",
            Mode::SampledOut => "sampled_out",
            Mode::SampledIn => "sampled_in",
        }
    }

    /// Whether its spans are sampled, for a traced mode.
    fn sampled(self) -> Option<bool> {
        match self {
            Mode::Off | Mode::Carried => None,
            Mode::SampledOut => Some(false),
            Mode::SampledIn => Some(true),
        }
    }
}

/// The context every record of the `carried` mode carries.
fn fixed_context() -> cursus::TraceContext {
    cursus::TraceContext::new(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        None,
    )
    .expect("a valid traceparent")
}

/// Drops every span: sampled-in spans are recorded, never exported.
#[derive(Debug)]
struct Discard;

impl SpanProcessor for Discard {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}
    fn on_end(&self, _span: SpanData) {}
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// The tracing of a traced mode.
fn tracing(sampled: bool) -> (SdkTracerProvider, Tracing) {
    let sampler = if sampled {
        Sampler::AlwaysOn
    } else {
        Sampler::AlwaysOff
    };
    let provider = SdkTracerProvider::builder()
        .with_sampler(sampler)
        .with_span_processor(Discard)
        .build();
    let tracing = Tracing::new(&provider);
    (provider, tracing)
}

fn record(topic: &str, payload: &bytes::Bytes, i: usize) -> ProducerRecord {
    ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS)
}

/// Records/s of a plain consumer that reads every record's trace context.
async fn consume_reading_contexts(consumer: &Consumer, records: usize) -> cursus::Result<f64> {
    let started = Instant::now();
    let mut seen = 0;
    let mut carried = 0;
    while seen < records {
        let polled = consumer.poll(Duration::from_secs(5)).await?;
        carried += polled
            .iter()
            .filter(|r| r.trace_context().is_some())
            .count();
        seen += polled.len();
    }
    assert_eq!(carried, seen, "every record carries its context");
    Ok(records as f64 / started.elapsed().as_secs_f64())
}

/// Records/s produced until every one is acknowledged; traced with
/// `tracing`, plain without.
async fn produce(
    addr: &str,
    topic: &str,
    records: usize,
    mode: Mode,
    tracing: Option<Tracing>,
) -> cursus::Result<f64> {
    let mut config = ProducerConfig::new(addr);
    config.set("acks", "1")?;
    config.set("batch_size", "262144")?;
    let producer = Producer::connect(config).await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    let rate = match tracing {
        None if mode == Mode::Carried => {
            let context = fixed_context();
            workload::produce_all(&producer, records, |i| {
                record(topic, &payload, i).trace_context(context.clone())
            })
            .await?
        }
        None => workload::produce_all(&producer, records, |i| record(topic, &payload, i)).await?,
        Some(tracing) => {
            // workload::produce_all's loop, through the traced producer.
            let traced = TracedProducer::new(producer.clone(), tracing);
            let started = Instant::now();
            let mut pending = std::collections::VecDeque::new();
            for i in 0..records {
                pending.push_back(traced.send(record(topic, &payload, i)).await?);
                while pending.len() > IN_FLIGHT {
                    pending.pop_front().expect("non-empty").await?;
                }
            }
            producer.flush(None).await?;
            for delivery in pending {
                delivery.await?;
            }
            records as f64 / started.elapsed().as_secs_f64()
        }
    };
    producer.close(Duration::from_secs(10)).await?;
    Ok(rate)
}

/// Records/s consumed by one new group member reading every record.
async fn consume(
    addr: &str,
    topic: &str,
    group: &str,
    records: usize,
    mode: Mode,
    tracing: Option<Tracing>,
) -> cursus::Result<f64> {
    let mut config = ConsumerConfig::new(addr, group);
    config.set("max_poll_records", "10000")?;
    config.set("fetch_max_records", "8192")?;
    config.set("auto_offset_reset", "earliest")?;
    let consumer = Arc::new(Consumer::connect(config).await?);
    consumer
        .subscribe(Subscription::Topics(vec![topic.into()]))
        .await?;
    let rate = match tracing {
        None if mode == Mode::Carried => consume_reading_contexts(&consumer, records).await?,
        None => workload::consume_all(&consumer, records).await?,
        Some(tracing) => {
            let traced = TracedConsumer::new(consumer.clone(), tracing);
            let started = Instant::now();
            let mut seen = 0;
            while seen < records {
                let polled = traced.poll(Duration::from_secs(5)).await?;
                for r in &polled {
                    traced.in_process(r, async {}).await;
                }
                seen += polled.len();
            }
            records as f64 / started.elapsed().as_secs_f64()
        }
    };
    consumer.close().await?;
    Ok(rate)
}

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let records: usize = std::env::var("CURSUS_BENCH_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let rounds: usize = std::env::var("CURSUS_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3)
        .max(1);
    let broker = TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    // (produce, consume) records/s of each mode, one per round.
    let mut rates: Vec<Vec<(f64, f64)>> = vec![Vec::new(); Mode::ALL.len()];
    for round in 0..rounds {
        for (m, mode) in Mode::ALL.into_iter().enumerate() {
            let topic = format!("otel-{}-{round}", mode.name());
            admin
                .create_topic(&NewTopic::new(&topic).partitions(PARTITIONS))
                .await?;
            let traced = mode.sampled().map(tracing);
            let t = || traced.as_ref().map(|(_, t)| t.clone());
            let p = produce(&broker.addr, &topic, records, mode, t()).await?;
            let group = format!("{topic}-group");
            let c = consume(&broker.addr, &topic, &group, records, mode, t()).await?;
            if let Some((provider, _)) = traced {
                provider.shutdown().ok();
            }
            rates[m].push((p, c));
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut fields = Vec::new();
    for (mode, runs) in Mode::ALL.into_iter().zip(rates) {
        let p = median(runs.iter().map(|r| r.0).collect());
        let c = median(runs.iter().map(|r| r.1).collect());
        let name = mode.name();
        println!(
            "tracing {name}: produce {records} x {PAYLOAD} B = {p:.0} records/s, consume = {c:.0} records/s (median of {rounds})"
        );
        fields.push(format!(
            "\"{name}_produce_records_per_s\": {p:.0}, \"{name}_consume_records_per_s\": {c:.0}"
        ));
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    let json = format!(
        "{{\"records\": {records}, \"rounds\": {rounds}, \"payload_bytes\": {PAYLOAD}, \"partitions\": {PARTITIONS}, {}}}\n",
        fields.join(", ")
    );
    std::fs::write(out.join("otel.json"), json).ok();
    Ok(())
}
