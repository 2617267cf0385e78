//! The tracing layer's overhead (cargo feature `otel`, issue #34): produce
//! and consume records/s through the engine against the reference broker
//! (a release build on a free loopback port), 100-byte records, acks=1,
//! four partitions, in three modes:
//!
//! * `off`: the plain producer and consumer (the engine's reference loops
//!   of `support/workload.rs`, as `benches/engine.rs` times them);
//! * `sampled_out`: `TracedProducer` / `TracedConsumer` on an SDK tracer
//!   provider whose sampler is `AlwaysOff` (spans started, not recorded);
//! * `sampled_in`: the same with `AlwaysOn` and a span processor that
//!   drops every ended span (the cost of recording, without an export).
//!
//! A traced consume runs each record in its process span. Writes
//! target/bench/otel.json.
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

/// Records/s produced until every one is acknowledged; traced with
/// `tracing`, plain without.
async fn produce(
    addr: &str,
    topic: &str,
    records: usize,
    tracing: Option<Tracing>,
) -> cursus::Result<f64> {
    let mut config = ProducerConfig::new(addr);
    config.set("acks", "1")?;
    config.set("batch_size", "262144")?;
    let producer = Producer::connect(config).await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    let rate = match tracing {
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
    let broker = TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    let mut fields = Vec::new();
    for (mode, sampled) in [
        ("off", None),
        ("sampled_out", Some(false)),
        ("sampled_in", Some(true)),
    ] {
        let topic = format!("otel-{mode}");
        admin
            .create_topic(&NewTopic::new(&topic).partitions(PARTITIONS))
            .await?;
        let traced = sampled.map(tracing);
        let t = || traced.as_ref().map(|(_, t)| t.clone());
        let p = produce(&broker.addr, &topic, records, t()).await?;
        let c = consume(
            &broker.addr,
            &topic,
            &format!("{topic}-group"),
            records,
            t(),
        )
        .await?;
        if let Some((provider, _)) = traced {
            provider.shutdown().ok();
        }
        println!(
            "tracing {mode}: produce {records} x {PAYLOAD} B = {p:.0} records/s, consume = {c:.0} records/s"
        );
        fields.push(format!(
            "\"{mode}_produce_records_per_s\": {p:.0}, \"{mode}_consume_records_per_s\": {c:.0}"
        ));
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    let json = format!(
        "{{\"records\": {records}, \"payload_bytes\": {PAYLOAD}, \"partitions\": {PARTITIONS}, {}}}\n",
        fields.join(", ")
    );
    std::fs::write(out.join("otel.json"), json).ok();
    Ok(())
}
