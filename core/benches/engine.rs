//! Producer and consumer throughput through the engine against the
//! reference broker (a release build started on a free loopback port):
//! 100-byte records, acks=1, default batching, first over plain TCP, then
//! over TLS 1.3 with mutual TLS on the same broker; then the cost of one
//! send on the hot path alone (queue only: a linger of ten minutes and a
//! batch larger than what is sent, so nothing leaves during the timed
//! loop), for `send`, `send_with_callback` and `send_in_order`.
//! Writes target/bench/engine.json.
//!
//! ```sh
//! cargo bench -p cursus --bench engine            # 200,000 records each way
//! CURSUS_BENCH_RECORDS=1000000 cargo bench -p cursus --bench engine
//! # batching of the produce run (defaults: the producer's own defaults)
//! CURSUS_BENCH_BATCH_SIZE=65536 CURSUS_BENCH_LINGER_MS=1 cargo bench -p cursus --bench engine
//! # only the queue-only send cost, or only the plain produce run (for profiling)
//! CURSUS_BENCH_ONLY=send cargo bench -p cursus --bench engine
//! CURSUS_BENCH_ONLY=produce cargo bench -p cursus --bench engine
//! ```

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use cursus_testkit::pki::TestPki;
use cursus_testkit::{cpu_time_of, TestBroker};
use std::time::{Duration, Instant};

#[path = "support/workload.rs"]
mod workload;

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;

/// Client options of one transport: `(name, value)` pairs on top of the
/// bootstrap address.
type Transport = Vec<(&'static str, String)>;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    // `cargo bench` passes `--bench`; nothing to parse.
    let records: usize = std::env::var("CURSUS_BENCH_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let only = std::env::var("CURSUS_BENCH_ONLY").unwrap_or_default();
    let (only_send, only_produce) = (only == "send", only == "produce");
    let dir = tempfile::tempdir().expect("temp dir");
    let pki = TestPki::generate(dir.path()).expect("test PKI");
    let broker = TestBroker::start_with_config(&format!(
        "tls_listen = \"127.0.0.1:0\"\ntls_cert_file = \"{}\"\ntls_key_file = \"{}\"\n\
         tls_client_ca_file = \"{}\"\n",
        pki.server_cert.display(),
        pki.server_key.display(),
        pki.ca.display()
    ));
    let plain = (broker.addr.clone(), Transport::new());
    let tls = (
        broker.tls_addr.clone().expect("TLS listener"),
        vec![
            ("tls_ca_file", pki.ca.display().to_string()),
            ("tls_cert_file", pki.client_cert.display().to_string()),
            ("tls_key_file", pki.client_key.display().to_string()),
        ],
    );
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).await?;
    let send_records = records.min(1_000_000);
    let send_cost = if only_produce {
        Vec::new()
    } else {
        send_cost(&admin, &broker.addr, send_records).await?
    };
    for (what, ns) in &send_cost {
        println!("engine {what}, queue only: {send_records} x {PAYLOAD} B = {ns:.0} ns per record");
    }
    let mut rates = Vec::new();
    let mut cpu_costs = Vec::new();
    let transports = if only_send {
        vec![]
    } else if only_produce {
        vec![("plain", plain)]
    } else {
        vec![("plain", plain), ("tls", tls)]
    };
    for (name, (addr, options)) in transports {
        let topic = format!("bench-{name}");
        admin
            .create_topic(&NewTopic::new(&topic).partitions(PARTITIONS))
            .await?;
        let cpu = CpuClock::start(&broker);
        let produce = produce(&addr, &options, &topic, records).await?;
        let produce_cpu = cpu.per_record(records);
        let cpu = CpuClock::start(&broker);
        let consume = if only_produce {
            0.0
        } else {
            consume(&addr, &options, &topic, records).await?
        };
        let consume_cpu = cpu.per_record(records);
        for (what, rate, (client, broker)) in [
            ("produce", produce, produce_cpu),
            ("consume", consume, consume_cpu),
        ] {
            println!(
                "engine {what} ({name}): {records} x {PAYLOAD} B = {rate:.0} records/s ({:.1} MB/s), \
                 CPU per record: client {client:.2} µs, broker {broker:.2} µs",
                rate * PAYLOAD as f64 / 1e6
            );
        }
        rates.push((name, produce, consume));
        cpu_costs.push((name, produce_cpu, consume_cpu));
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&out).ok();
    let fields: Vec<String> = rates
        .iter()
        .map(|(name, p, c)| {
            let prefix = if *name == "plain" { String::new() } else { format!("{name}_") };
            format!("\"{prefix}produce_records_per_s\": {p:.0}, \"{prefix}consume_records_per_s\": {c:.0}")
        })
        .collect();
    let mut fields = fields;
    for (what, ns) in &send_cost {
        fields.push(format!("\"{what}_queue_ns_per_record\": {ns:.0}"));
    }
    for (name, (pc, pb), (cc, cb)) in &cpu_costs {
        let prefix = if *name == "plain" {
            String::new()
        } else {
            format!("{name}_")
        };
        fields.push(format!(
            "\"{prefix}produce_client_cpu_us_per_record\": {pc:.3}, \"{prefix}produce_broker_cpu_us_per_record\": {pb:.3}, \
             \"{prefix}consume_client_cpu_us_per_record\": {cc:.3}, \"{prefix}consume_broker_cpu_us_per_record\": {cb:.3}"
        ));
    }
    let (batch_size, linger) = batching();
    let json = format!(
        "{{\"command\": \"cargo bench -p cursus --bench engine\", \"records\": {records}, \"payload_bytes\": {PAYLOAD}, \"partitions\": {PARTITIONS}, \"batch_size\": {}, \"linger_ms\": {}, {}}}\n",
        batch_size.map_or("null".into(), |b| b.to_string()),
        linger.map_or("null".into(), |l| l.to_string()),
        fields.join(", ")
    );
    // A partial run (CURSUS_BENCH_ONLY) leaves the figures of record alone.
    if only.is_empty() {
        std::fs::write(out.join("engine.json"), json).ok();
    }
    Ok(())
}

/// CPU time used by this process (the client) and by the broker over one
/// run: costs per record that hold on a busy machine, where records/s does
/// not (10 ms resolution: meaningful over runs of a second or more).
struct CpuClock<'a> {
    broker: &'a TestBroker,
    client: Duration,
    broker_at: Duration,
}

impl<'a> CpuClock<'a> {
    fn start(broker: &'a TestBroker) -> Self {
        CpuClock {
            broker,
            client: cpu_time_of(std::process::id()).unwrap_or_default(),
            broker_at: broker.cpu_time().unwrap_or_default(),
        }
    }

    /// (client, broker) microseconds of CPU per record since `start`.
    fn per_record(&self, records: usize) -> (f64, f64) {
        let client = cpu_time_of(std::process::id()).unwrap_or_default() - self.client;
        let broker = self.broker.cpu_time().unwrap_or_default() - self.broker_at;
        let us = |d: Duration| d.as_secs_f64() * 1e6 / records as f64;
        (us(client), us(broker))
    }
}

/// Records per second produced (acks=1) until every one is acknowledged.
async fn produce(
    addr: &str,
    options: &Transport,
    topic: &str,
    records: usize,
) -> cursus::Result<f64> {
    let mut config = ProducerConfig::new(addr);
    for (k, v) in options {
        config.set(k, v)?;
    }
    config.set("acks", "1")?;
    let (batch_size, linger) = batching();
    config.set("batch_size", &batch_size.unwrap_or(262_144).to_string())?;
    if let Some(linger) = linger {
        config.set("linger_ms", &linger.to_string())?;
    }
    let producer = Producer::connect(config).await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    let rate = workload::produce_all(&producer, records, |i| {
        ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS)
    })
    .await?;
    producer.close(Duration::from_secs(10)).await?;
    Ok(rate)
}

/// Records per second consumed by one group member reading every record.
async fn consume(
    addr: &str,
    options: &Transport,
    topic: &str,
    records: usize,
) -> cursus::Result<f64> {
    let mut config = ConsumerConfig::new(addr, format!("{topic}-group"));
    for (k, v) in options {
        config.set(k, v)?;
    }
    config.set("max_poll_records", "10000")?;
    config.set("fetch_max_records", "8192")?;
    let consumer = Consumer::connect(config).await?;
    consumer
        .subscribe(Subscription::Topics(vec![topic.into()]))
        .await?;
    let rate = workload::consume_all(&consumer, records).await?;
    consumer.close().await?;
    Ok(rate)
}

/// The produce run's `batch_size` and `linger_ms` from
/// `CURSUS_BENCH_BATCH_SIZE` / `CURSUS_BENCH_LINGER_MS` (unset: 256 KiB and
/// the producer's default linger).
fn batching() -> (Option<usize>, Option<u64>) {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    (
        var("CURSUS_BENCH_BATCH_SIZE").map(|b: u64| b as usize),
        var("CURSUS_BENCH_LINGER_MS"),
    )
}

/// Nanoseconds per record spent in `send`, `send_with_callback` and
/// `send_in_order` with nothing sent meanwhile: a linger of ten minutes, a
/// batch size and buffer memory above what the loop queues. Only the call
/// is timed; the records are sent by `close` afterwards.
async fn send_cost(
    admin: &Admin,
    addr: &str,
    records: usize,
) -> cursus::Result<Vec<(&'static str, f64)>> {
    let topic = "bench-send-cost";
    admin
        .create_topic(&NewTopic::new(topic).partitions(PARTITIONS))
        .await?;
    let payload = bytes::Bytes::from(vec![b'x'; PAYLOAD]);
    let mut out = Vec::new();
    for what in ["send", "send_with_callback", "send_in_order"] {
        let mut config = ProducerConfig::new(addr);
        config.set("acks", "1")?;
        config.set("linger_ms", "600000")?;
        // 64 MiB queued at most per partition before a batch is "full".
        config.set("batch_size", &(64usize << 20).to_string())?;
        config.set("buffer_memory", &(u32::MAX as u64).to_string())?;
        let producer = Producer::connect(config).await?;
        // Warm the metadata cache outside the timed loop.
        producer
            .send(ProducerRecord::new(topic, payload.clone()).partition(0))
            .await?;
        let mut deliveries = Vec::with_capacity(records);
        let mut in_order = Vec::with_capacity(records);
        let started = Instant::now();
        for i in 0..records {
            let record =
                ProducerRecord::new(topic, payload.clone()).partition(i as u32 % PARTITIONS);
            match what {
                "send" => deliveries.push(producer.send(record).await?),
                "send_with_callback" => producer.send_with_callback(record, |_| {}).await?,
                _ => in_order.push(producer.send_in_order(record)),
            }
        }
        let ns = started.elapsed().as_nanos() as f64 / records as f64;
        producer.close(Duration::from_secs(120)).await?;
        drop(deliveries);
        drop(in_order);
        out.push((what, ns));
    }
    Ok(out)
}
