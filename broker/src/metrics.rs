//! Prometheus metrics, served as text on the health port at `GET /metrics`
//! (see `docs/broker-metrics.md` for the list).
//!
//! [`Metrics`] owns the registry (no global one) and the handles the hot
//! paths update: counters, gauges and histograms are atomics, labelled ones
//! are looked up in a [`Family`] (a read lock on a small map), so recording
//! never takes a broker-wide lock. Partition log end offsets and group lag
//! are not recorded at all: a collector reads them from the broker's state
//! when `/metrics` is scraped ([`Metrics::attach`]).

use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use cursus_wire::Command;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::broker::{Broker, Listener};

/// The `Content-Type` of [`Metrics::render`]'s output (Prometheus text
/// format 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Histogram buckets for latencies, in seconds: 50 µs to 10 s.
const LATENCY_BUCKETS: [f64; 17] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
];

/// A counter of bytes, shared with the connections' byte streams.
pub type ByteCounter = Counter<u64, AtomicU64>;

/// Labels of the connection metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ListenerLabels {
    /// `plain` or `tls`.
    listener: &'static str,
}

/// Labels of the request counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CommandLabels {
    /// The command name, e.g. `PUBLISH`.
    command: &'static str,
}

/// Labels of the error counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    /// The command name.
    command: &'static str,
    /// The typed error's code, e.g. `topic_not_found`.
    code: String,
}

/// The broker's metrics: the registry and the handles that update it.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    connections_open: Family<ListenerLabels, Gauge>,
    connections_accepted: Family<ListenerLabels, Counter>,
    requests: Family<CommandLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    received: ByteCounter,
    sent: ByteCounter,
    publish_latency: Histogram,
    consume_latency: Histogram,
    fsync_latency: Histogram,
    state: Arc<StateCollector>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric registered, all at zero, no broker state attached yet.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("cursus");
        let connections_open = Family::<ListenerLabels, Gauge>::default();
        registry.register(
            "connections_open",
            "Client connections currently open, by listener",
            connections_open.clone(),
        );
        let connections_accepted = Family::<ListenerLabels, Counter>::default();
        registry.register(
            "connections_accepted",
            "Client connections accepted within max_connections, by listener",
            connections_accepted.clone(),
        );
        let requests = Family::<CommandLabels, Counter>::default();
        registry.register(
            "requests",
            "Requests received, by command",
            requests.clone(),
        );
        let errors = Family::<ErrorLabels, Counter>::default();
        registry.register(
            "request_errors",
            "Requests answered with a typed error, by command and error code",
            errors.clone(),
        );
        let received = ByteCounter::default();
        registry.register_with_unit(
            "received",
            "Bytes read from client connections (frames, after TLS)",
            Unit::Bytes,
            received.clone(),
        );
        let sent = ByteCounter::default();
        registry.register_with_unit(
            "sent",
            "Bytes written to client connections (frames, before TLS)",
            Unit::Bytes,
            sent.clone(),
        );
        let latency = || Histogram::new(LATENCY_BUCKETS);
        let publish_latency = latency();
        registry.register_with_unit(
            "publish_latency",
            "PUBLISH (text or batch) from taking the request up to writing its reply",
            Unit::Seconds,
            publish_latency.clone(),
        );
        let consume_latency = latency();
        registry.register_with_unit(
            "consume_latency",
            "CONSUME from taking the request up to writing its reply (includes the long poll)",
            Unit::Seconds,
            consume_latency.clone(),
        );
        let fsync_latency = latency();
        registry.register_with_unit(
            "fsync_latency",
            "Duration of each fsync or fdatasync in storage (group-commit syncs included)",
            Unit::Seconds,
            fsync_latency.clone(),
        );
        let state = Arc::new(StateCollector::default());
        registry.register_collector(Box::new(Arc::clone(&state)));
        Metrics {
            registry,
            connections_open,
            connections_accepted,
            requests,
            errors,
            received,
            sent,
            publish_latency,
            consume_latency,
            fsync_latency,
            state,
        }
    }

    /// Lets scrapes read partition and group state from `broker` (held
    /// weakly: the broker owns its metrics). Only the first call counts.
    pub fn attach(&self, broker: &Arc<Broker>) {
        let _ = self.state.0.set(Arc::downgrade(broker));
    }

    /// Counts an accepted connection of `listener` and holds it open until
    /// the returned guard drops.
    pub fn connection_opened(&self, listener: Listener) -> OpenConnection {
        let labels = ListenerLabels {
            listener: listener_label(listener),
        };
        self.connections_accepted.get_or_create(&labels).inc();
        let open = self.connections_open.get_or_create(&labels).clone();
        open.inc();
        OpenConnection(open)
    }

    /// Counts one request of `command`.
    pub fn request(&self, command: Command) {
        self.requests
            .get_or_create(&CommandLabels {
                command: command.name(),
            })
            .inc();
    }

    /// Counts one typed error with `code` answering `command`.
    pub fn error(&self, command: Command, code: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                command: command.name(),
                code: code.to_owned(),
            })
            .inc();
    }

    /// Records the latency of a reply to `command` taken up at `started`
    /// (PUBLISH and CONSUME only; other commands are not timed).
    pub fn replied(&self, command: Command, started: Instant) {
        let histogram = match command {
            Command::Publish => &self.publish_latency,
            Command::Consume => &self.consume_latency,
            _ => return,
        };
        histogram.observe(started.elapsed().as_secs_f64());
    }

    /// Records one fsync that took `took`.
    pub fn fsync(&self, took: Duration) {
        self.fsync_latency.observe(took.as_secs_f64());
    }

    /// The counter of bytes read from client connections.
    pub fn received_bytes(&self) -> ByteCounter {
        self.received.clone()
    }

    /// The counter of bytes written to client connections.
    pub fn sent_bytes(&self) -> ByteCounter {
        self.sent.clone()
    }

    /// Every metric in the Prometheus text format ([`CONTENT_TYPE`]).
    pub fn render(&self) -> Result<String, fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// The `listener` label value.
fn listener_label(listener: Listener) -> &'static str {
    match listener {
        Listener::Plain => "plain",
        Listener::Tls => "tls",
    }
}

/// An open connection in `cursus_connections_open`; closes it on drop.
#[derive(Debug)]
pub struct OpenConnection(Gauge);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Reads partition log end offsets and group lag from the attached broker
/// at scrape time.
#[derive(Debug, Default)]
struct StateCollector(OnceLock<Weak<Broker>>);

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let Some(broker) = self.0.get().and_then(Weak::upgrade) else {
            // Still recovering (or shutting down): no state to show.
            return Ok(());
        };
        let topics = broker.topics.list();
        {
            let mut metric = encoder.encode_descriptor(
                "partition_log_end_offset",
                "Log end offset of a partition: the offset its next record gets",
                None,
                MetricType::Gauge,
            )?;
            for topic in &topics {
                for p in &topic.partitions {
                    let partition = p.id().to_string();
                    let labels = [
                        ("topic", topic.def.name.as_str()),
                        ("partition", partition.as_str()),
                    ];
                    gauge(p.log().log_end_offset()).encode(metric.encode_family(&labels)?)?;
                }
            }
        }
        let mut metric = encoder.encode_descriptor(
            "group_lag",
            "Records a group has yet to commit on a partition: last stable offset minus committed offset",
            None,
            MetricType::Gauge,
        )?;
        for ((group, topic, partition), committed) in broker.groups.committed_offsets() {
            let Some(p) = broker
                .topics
                .get(&topic)
                .and_then(|t| t.partition(partition).cloned())
            else {
                continue;
            };
            let lag = p.stable_offset().saturating_sub(committed);
            let partition = partition.to_string();
            let labels = [
                ("group", group.as_str()),
                ("topic", topic.as_str()),
                ("partition", partition.as_str()),
            ];
            gauge(lag).encode(metric.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

/// A gauge value from an offset (offsets stay far below `i64::MAX`).
fn gauge(value: u64) -> ConstGauge<i64> {
    ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample `name{labels}` (labels exactly as rendered).
    fn sample(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .map(|v| v.parse().expect("number"))
    }

    #[test]
    fn renders_counters_and_histograms_in_text_format() {
        let metrics = Metrics::new();
        metrics.request(Command::Publish);
        metrics.request(Command::Publish);
        metrics.error(Command::Consume, "topic_not_found");
        metrics.fsync(Duration::from_micros(70));
        metrics.received_bytes().inc_by(42);
        let open = metrics.connection_opened(Listener::Tls);
        let text = metrics.render().unwrap();
        assert!(
            text.contains("# TYPE cursus_requests_total counter\n"),
            "{text}"
        );
        assert_eq!(
            sample(&text, r#"cursus_requests_total{command="PUBLISH"}"#),
            Some(2.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"cursus_request_errors_total{command="CONSUME",code="topic_not_found"}"#
            ),
            Some(1.0)
        );
        assert_eq!(sample(&text, "cursus_received_bytes_total"), Some(42.0));
        assert_eq!(sample(&text, "cursus_sent_bytes_total"), Some(0.0));
        assert_eq!(
            sample(&text, r#"cursus_connections_open{listener="tls"}"#),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"cursus_connections_accepted_total{listener="tls"}"#
            ),
            Some(1.0)
        );
        assert!(text.contains("# TYPE cursus_fsync_latency_seconds histogram\n"));
        assert_eq!(
            sample(&text, "cursus_fsync_latency_seconds_count"),
            Some(1.0)
        );
        // 70 µs lands in the 100 µs bucket, not in the 50 µs one.
        assert_eq!(
            sample(&text, r#"cursus_fsync_latency_seconds_bucket{le="5e-05"}"#),
            Some(0.0)
        );
        assert_eq!(
            sample(&text, r#"cursus_fsync_latency_seconds_bucket{le="0.0001"}"#),
            Some(1.0)
        );
        assert_eq!(
            sample(&text, r#"cursus_publish_latency_seconds_count"#),
            Some(0.0)
        );
        drop(open);
        let text = metrics.render().unwrap();
        assert_eq!(
            sample(&text, r#"cursus_connections_open{listener="tls"}"#),
            Some(0.0)
        );
    }

    #[test]
    fn only_publish_and_consume_are_timed() {
        let metrics = Metrics::new();
        let started = Instant::now();
        metrics.replied(Command::Publish, started);
        metrics.replied(Command::Consume, started);
        metrics.replied(Command::Consume, started);
        metrics.replied(Command::List, started);
        let text = metrics.render().unwrap();
        assert_eq!(
            sample(&text, "cursus_publish_latency_seconds_count"),
            Some(1.0)
        );
        assert_eq!(
            sample(&text, "cursus_consume_latency_seconds_count"),
            Some(2.0)
        );
    }

    #[test]
    fn without_a_broker_the_state_gauges_are_absent() {
        let text = Metrics::new().render().unwrap();
        assert!(!text.contains("cursus_partition_log_end_offset"), "{text}");
        assert!(!text.contains("cursus_group_lag"), "{text}");
    }
}
