//! The spans every language's tracing layer records, declared once
//! (docs/observability.md, "Spans"): names, kinds and attributes after the
//! OpenTelemetry messaging semantic conventions, with
//! `messaging.system = cursus`.
//!
//! Nothing here records anything: a language's layer (Rust's `cursus`
//! with OpenTelemetry, Java's, Go's, Python's `cursus[otel]`) asks for the
//! [`SpanSpec`] of an operation, starts a span of its own OpenTelemetry
//! API with that name, kind and those attributes, and converts each
//! [`AttributeValue`]. So the six languages name and describe their spans
//! the same way, and a change here reaches all of them.

use crate::error::Error;

/// The `messaging.system` value.
pub const SYSTEM: &str = "cursus";

/// The instrumentation scope (tracer and meter name) every layer uses.
pub const SCOPE: &str = "cursus";

/// Attribute keys.
pub mod keys {
    /// `cursus`.
    pub const SYSTEM: &str = "messaging.system";
    /// The operation's name ([`super::Operation::name`]).
    pub const OPERATION_NAME: &str = "messaging.operation.name";
    /// The operation's type ([`super::Operation::operation_type`]).
    pub const OPERATION_TYPE: &str = "messaging.operation.type";
    /// The topic.
    pub const DESTINATION: &str = "messaging.destination.name";
    /// The partition, as a string (the conventions' type).
    pub const PARTITION: &str = "messaging.destination.partition.id";
    /// The record's offset.
    pub const OFFSET: &str = "messaging.cursus.offset";
    /// The record's key, when it is UTF-8 text.
    pub const KEY: &str = "messaging.cursus.message.key";
    /// Records in a batch (a poll's records).
    pub const BATCH_COUNT: &str = "messaging.batch.message_count";
    /// The payload's size in bytes.
    pub const BODY_SIZE: &str = "messaging.message.body.size";
    /// The consumer group.
    pub const GROUP: &str = "messaging.consumer.group.name";
    /// The client id.
    pub const CLIENT_ID: &str = "messaging.client.id";
    /// The transactional id.
    pub const TRANSACTIONAL_ID: &str = "messaging.cursus.transactional_id";
    /// The aggregate (event store).
    pub const AGGREGATE: &str = "messaging.cursus.aggregate.key";
    /// The aggregate version an append expects, or a read starts from.
    pub const AGGREGATE_VERSION: &str = "messaging.cursus.aggregate.version";
    /// The error code of a failed operation.
    pub const ERROR_TYPE: &str = "error.type";
}

/// The metrics a layer reports from a client's [`crate::Statistics`]
/// (docs/observability.md, "Statistics": the fields they come from), every
/// one with the attribute [`keys::CLIENT_ID`].
pub mod metrics {
    /// Counter of records acknowledged (`records_sent`), unit `{message}`.
    pub const SENT_MESSAGES: &str = "messaging.client.sent.messages";
    /// Counter of records received (`records_received`), unit `{message}`.
    pub const CONSUMED_MESSAGES: &str = "messaging.client.consumed.messages";
    /// Counter of payload and key bytes acknowledged (`bytes_sent`), `By`.
    pub const SENT_BYTES: &str = "cursus.client.sent.bytes";
    /// Counter of payload and key bytes received (`bytes_received`), `By`.
    pub const CONSUMED_BYTES: &str = "cursus.client.consumed.bytes";
    /// Counter of batches acknowledged (`batches_sent`), `{batch}`.
    pub const SENT_BATCHES: &str = "cursus.client.sent.batches";
    /// Counter of request attempts (`requests`), `{request}`.
    pub const REQUESTS: &str = "cursus.client.requests";
    /// Counter of attempts that were retries (`retries`), `{request}`.
    pub const RETRIES: &str = "cursus.client.retries";
    /// Counter of failed attempts (`errors`), `{request}`, with
    /// [`super::keys::ERROR_TYPE`] set to the error class.
    pub const ERRORS: &str = "cursus.client.errors";
    /// Gauge of attempts not answered yet (`in_flight_requests`).
    pub const IN_FLIGHT: &str = "cursus.client.requests.in_flight";
    /// Gauges of the produce latency percentiles (`produce_latency`), `us`:
    /// this prefix then `.p50`, `.p99`, `.p999`, `.max`.
    pub const PRODUCE_LATENCY: &str = "cursus.client.produce.latency";
    /// Gauges of the fetch latency percentiles (`fetch_latency`), as
    /// [`PRODUCE_LATENCY`].
    pub const FETCH_LATENCY: &str = "cursus.client.fetch.latency";
    /// Gauge of a consumer's lag per partition (`partitions[].lag`),
    /// `{message}`, with [`super::keys::DESTINATION`] and
    /// [`super::keys::PARTITION`].
    pub const LAG: &str = "cursus.consumer.lag";

    /// How an instrument reports its field.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum InstrumentKind {
        /// A monotonic observable counter (a cumulative field).
        Counter,
        /// An observable gauge (a current value).
        Gauge,
    }

    impl InstrumentKind {
        /// `counter` or `gauge`.
        pub fn name(self) -> &'static str {
            match self {
                InstrumentKind::Counter => "counter",
                InstrumentKind::Gauge => "gauge",
            }
        }
    }

    /// How one snapshot's field becomes points (beyond the
    /// [`super::keys::CLIENT_ID`] every point has).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Breakdown {
        /// One point: the field is a number.
        None,
        /// One point per error class: the field is a map class -> count,
        /// the class in [`super::keys::ERROR_TYPE`].
        ErrorType,
        /// One point per partition with a known lag: the field is
        /// `partitions` then `.` then the number of each partition, with
        /// [`super::keys::DESTINATION`] and [`super::keys::PARTITION`]
        /// (as a string).
        Partition,
    }

    impl Breakdown {
        /// `none`, `error_type` or `partition`.
        pub fn name(self) -> &'static str {
            match self {
                Breakdown::None => "none",
                Breakdown::ErrorType => "error_type",
                Breakdown::Partition => "partition",
            }
        }
    }

    /// One instrument: what every layer registers, from which field of a
    /// statistics snapshot.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Metric {
        /// The instrument name.
        pub name: &'static str,
        /// The field of [`crate::Statistics`] it reads, as a path of field
        /// names joined by `.` (`records_sent`, `produce_latency.p50_us`,
        /// `partitions.lag`): every language's statistics type has the
        /// same field names.
        pub field: &'static str,
        /// The UCUM unit.
        pub unit: &'static str,
        /// Counter or gauge.
        pub kind: InstrumentKind,
        /// The kind of client that reports it (`producer`, `consumer`),
        /// or `None` for every client.
        pub client: Option<&'static str>,
        /// One point or one per error class or partition.
        pub breakdown: Breakdown,
    }

    const fn metric(
        name: &'static str,
        field: &'static str,
        unit: &'static str,
        kind: InstrumentKind,
        client: Option<&'static str>,
    ) -> Metric {
        Metric {
            name,
            field,
            unit,
            kind,
            client,
            breakdown: Breakdown::None,
        }
    }

    const PRODUCER: Option<&str> = Some("producer");
    const CONSUMER: Option<&str> = Some("consumer");
    use InstrumentKind::{Counter, Gauge};

    /// Every instrument, in the order the layers register them. The
    /// latency gauges are named [`PRODUCE_LATENCY`] or [`FETCH_LATENCY`]
    /// then `.p50`, `.p99`, `.p999`, `.max`.
    pub const ALL: &[Metric] = &[
        metric(
            SENT_MESSAGES,
            "records_sent",
            "{message}",
            Counter,
            PRODUCER,
        ),
        metric(
            CONSUMED_MESSAGES,
            "records_received",
            "{message}",
            Counter,
            CONSUMER,
        ),
        metric(SENT_BYTES, "bytes_sent", "By", Counter, PRODUCER),
        metric(CONSUMED_BYTES, "bytes_received", "By", Counter, CONSUMER),
        metric(SENT_BATCHES, "batches_sent", "{batch}", Counter, PRODUCER),
        metric(REQUESTS, "requests", "{request}", Counter, None),
        metric(RETRIES, "retries", "{request}", Counter, None),
        Metric {
            breakdown: Breakdown::ErrorType,
            ..metric(ERRORS, "errors", "{request}", Counter, None)
        },
        metric(IN_FLIGHT, "in_flight_requests", "{request}", Gauge, None),
        metric(
            "cursus.client.produce.latency.p50",
            "produce_latency.p50_us",
            "us",
            Gauge,
            PRODUCER,
        ),
        metric(
            "cursus.client.produce.latency.p99",
            "produce_latency.p99_us",
            "us",
            Gauge,
            PRODUCER,
        ),
        metric(
            "cursus.client.produce.latency.p999",
            "produce_latency.p999_us",
            "us",
            Gauge,
            PRODUCER,
        ),
        metric(
            "cursus.client.produce.latency.max",
            "produce_latency.max_us",
            "us",
            Gauge,
            PRODUCER,
        ),
        metric(
            "cursus.client.fetch.latency.p50",
            "fetch_latency.p50_us",
            "us",
            Gauge,
            CONSUMER,
        ),
        metric(
            "cursus.client.fetch.latency.p99",
            "fetch_latency.p99_us",
            "us",
            Gauge,
            CONSUMER,
        ),
        metric(
            "cursus.client.fetch.latency.p999",
            "fetch_latency.p999_us",
            "us",
            Gauge,
            CONSUMER,
        ),
        metric(
            "cursus.client.fetch.latency.max",
            "fetch_latency.max_us",
            "us",
            Gauge,
            CONSUMER,
        ),
        Metric {
            breakdown: Breakdown::Partition,
            ..metric(LAG, "partitions.lag", "{message}", Gauge, CONSUMER)
        },
    ];

    /// One point: a value and its attributes.
    pub type Point = (u64, Vec<(&'static str, super::AttributeValue)>);

    impl Metric {
        /// Whether a client of `kind` (a snapshot's `kind`) reports it.
        pub fn reported_by(&self, kind: &str) -> bool {
            self.client.map_or(true, |c| c == kind)
        }

        /// The points of `s` for this instrument (none when the client is
        /// not of its kind), each with the client id.
        pub fn points(&self, s: &crate::Statistics) -> Vec<Point> {
            use super::{keys, AttributeValue as V};
            if !self.reported_by(&s.kind) {
                return Vec::new();
            }
            let id = || (keys::CLIENT_ID, V::from(s.client_id.clone()));
            match self.breakdown {
                Breakdown::None => self
                    .number(s)
                    .map(|n| vec![(n, vec![id()])])
                    .unwrap_or_default(),
                Breakdown::ErrorType => s
                    .errors
                    .iter()
                    .map(|(class, n)| (*n, vec![id(), (keys::ERROR_TYPE, V::from(class.clone()))]))
                    .collect(),
                Breakdown::Partition => s
                    .partitions
                    .iter()
                    .filter_map(|p| {
                        let attrs = vec![
                            id(),
                            (keys::DESTINATION, V::from(p.topic.clone())),
                            (keys::PARTITION, V::from(p.partition.to_string())),
                        ];
                        p.lag.map(|lag| (lag, attrs))
                    })
                    .collect(),
            }
        }

        /// The number of a one-point field.
        fn number(&self, s: &crate::Statistics) -> Option<u64> {
            let latency = |l: &crate::Latency, f: &str| match f {
                "p50_us" => Some(l.p50_us),
                "p99_us" => Some(l.p99_us),
                "p999_us" => Some(l.p999_us),
                "max_us" => Some(l.max_us),
                _ => None,
            };
            match self.field.split_once('.') {
                Some(("produce_latency", f)) => latency(&s.produce_latency, f),
                Some(("fetch_latency", f)) => latency(&s.fetch_latency, f),
                Some(_) => None,
                None => match self.field {
                    "records_sent" => Some(s.records_sent),
                    "records_received" => Some(s.records_received),
                    "bytes_sent" => Some(s.bytes_sent),
                    "bytes_received" => Some(s.bytes_received),
                    "batches_sent" => Some(s.batches_sent),
                    "requests" => Some(s.requests),
                    "retries" => Some(s.retries),
                    "in_flight_requests" => Some(s.in_flight_requests),
                    _ => None,
                },
            }
        }
    }
}

/// The span kinds used (OpenTelemetry's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// A send.
    Producer,
    /// A receive or the processing of a received record.
    Consumer,
    /// A request whose outcome the caller waits for.
    Client,
}

impl SpanKind {
    /// The kind's name in lower case (`producer`, `consumer`, `client`).
    pub fn name(self) -> &'static str {
        match self {
            SpanKind::Producer => "producer",
            SpanKind::Consumer => "consumer",
            SpanKind::Client => "client",
        }
    }
}

/// The operations traced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A send, from the call to the acknowledgement.
    Publish,
    /// One poll that returned records (links to each record's producer).
    Receive,
    /// The application's processing of one received record (child of the
    /// record's producer span).
    Process,
    /// A transaction's commit.
    Commit,
    /// A transaction's abort.
    Abort,
    /// An event-store append.
    Append,
    /// An event-store read of one aggregate.
    Read,
}

impl Operation {
    /// `messaging.operation.name`: also the span name's first word.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Publish => "publish",
            Operation::Receive => "receive",
            Operation::Process => "process",
            Operation::Commit => "commit_transaction",
            Operation::Abort => "abort_transaction",
            Operation::Append => "append",
            Operation::Read => "read",
        }
    }

    /// `messaging.operation.type`: the conventions' operation types
    /// (`publish`, `receive`, `process`, `settle`).
    pub fn operation_type(self) -> &'static str {
        match self {
            Operation::Publish | Operation::Append => "publish",
            Operation::Receive | Operation::Read => "receive",
            Operation::Process => "process",
            Operation::Commit | Operation::Abort => "settle",
        }
    }

    /// The span kind.
    pub fn kind(self) -> SpanKind {
        match self {
            Operation::Publish | Operation::Append => SpanKind::Producer,
            Operation::Receive | Operation::Process => SpanKind::Consumer,
            Operation::Commit | Operation::Abort | Operation::Read => SpanKind::Client,
        }
    }
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttributeValue {
    /// A string (borrowed when it is one of the conventions' constants:
    /// a span is described per record).
    Str(std::borrow::Cow<'static, str>),
    /// An integer.
    Int(i64),
}

impl From<&str> for AttributeValue {
    fn from(s: &str) -> Self {
        AttributeValue::Str(s.to_owned().into())
    }
}

impl From<String> for AttributeValue {
    fn from(s: String) -> Self {
        AttributeValue::Str(s.into())
    }
}

impl AttributeValue {
    /// A constant string value, not copied.
    fn constant(s: &'static str) -> Self {
        AttributeValue::Str(std::borrow::Cow::Borrowed(s))
    }
}

impl From<i64> for AttributeValue {
    fn from(n: i64) -> Self {
        AttributeValue::Int(n)
    }
}

/// A span to start: name, kind, attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanSpec {
    /// `"{operation} {destination}"`, or the operation alone when there
    /// is no single destination.
    pub name: String,
    /// The kind.
    pub kind: SpanKind,
    /// The attributes known when the span starts.
    pub attributes: Vec<(&'static str, AttributeValue)>,
}

impl SpanSpec {
    fn new(operation: Operation, destination: Option<&str>) -> SpanSpec {
        let name = match destination {
            Some(d) => format!("{} {d}", operation.name()),
            None => operation.name().to_owned(),
        };
        // Room for every attribute a span of the declarations has.
        let mut attributes = Vec::with_capacity(10);
        attributes.extend([
            (keys::SYSTEM, AttributeValue::constant(SYSTEM)),
            (
                keys::OPERATION_NAME,
                AttributeValue::constant(operation.name()),
            ),
            (
                keys::OPERATION_TYPE,
                AttributeValue::constant(operation.operation_type()),
            ),
        ]);
        if let Some(d) = destination {
            attributes.push((keys::DESTINATION, d.into()));
        }
        SpanSpec {
            name,
            kind: operation.kind(),
            attributes,
        }
    }

    fn with(mut self, key: &'static str, value: impl Into<AttributeValue>) -> SpanSpec {
        self.attributes.push((key, value.into()));
        self
    }

    fn with_opt<V: Into<AttributeValue>>(self, key: &'static str, value: Option<V>) -> SpanSpec {
        match value {
            Some(v) => self.with(key, v),
            None => self,
        }
    }
}

/// A send of one record to `topic` (`partition` when the caller chose
/// one; the acknowledgement gives the rest: [`acknowledged`]).
pub fn publish(
    topic: &str,
    partition: Option<u32>,
    key: Option<&[u8]>,
    body_size: usize,
    client_id: Option<&str>,
) -> SpanSpec {
    SpanSpec::new(Operation::Publish, Some(topic))
        .with_opt(
            keys::PARTITION,
            partition.map(|p| AttributeValue::from(p.to_string())),
        )
        .with_opt(keys::KEY, text_key(key))
        .with(keys::BODY_SIZE, body_size as i64)
        .with_opt(keys::CLIENT_ID, client_id)
}

/// What a publish span adds once the record is acknowledged.
pub fn acknowledged(partition: u32, offset: Option<u64>) -> Vec<(&'static str, AttributeValue)> {
    let mut out = vec![(keys::PARTITION, AttributeValue::from(partition.to_string()))];
    if let Some(offset) = offset {
        out.push((keys::OFFSET, AttributeValue::Int(offset as i64)));
    }
    out
}

/// One poll that returned `count` records of `topics` (the destination
/// when they all come from one topic).
pub fn receive(topics: &[&str], count: usize, group: Option<&str>) -> SpanSpec {
    let single = match topics {
        [first, rest @ ..] if rest.iter().all(|t| t == first) => Some(*first),
        _ => None,
    };
    SpanSpec::new(Operation::Receive, single)
        .with(keys::BATCH_COUNT, count as i64)
        .with_opt(keys::GROUP, group)
}

/// The processing of one received record.
pub fn process(
    topic: &str,
    partition: u32,
    offset: u64,
    key: Option<&[u8]>,
    body_size: usize,
    group: Option<&str>,
) -> SpanSpec {
    SpanSpec::new(Operation::Process, Some(topic))
        .with(keys::PARTITION, AttributeValue::from(partition.to_string()))
        .with(keys::OFFSET, offset as i64)
        .with_opt(keys::KEY, text_key(key))
        .with(keys::BODY_SIZE, body_size as i64)
        .with_opt(keys::GROUP, group)
}

/// A transaction's commit (`commit = true`) or abort.
pub fn end_transaction(transactional_id: &str, commit: bool) -> SpanSpec {
    let operation = if commit {
        Operation::Commit
    } else {
        Operation::Abort
    };
    SpanSpec::new(operation, None).with(keys::TRANSACTIONAL_ID, transactional_id)
}

/// An event-store append to `aggregate` expecting `version`.
pub fn append(topic: &str, aggregate: &str, version: u64) -> SpanSpec {
    SpanSpec::new(Operation::Append, Some(topic))
        .with(keys::AGGREGATE, aggregate)
        .with(keys::AGGREGATE_VERSION, version as i64)
}

/// An event-store read of `aggregate` from `from_version`.
pub fn read(topic: &str, aggregate: &str, from_version: u64) -> SpanSpec {
    SpanSpec::new(Operation::Read, Some(topic))
        .with(keys::AGGREGATE, aggregate)
        .with(keys::AGGREGATE_VERSION, from_version as i64)
}

/// The `error.type` of a failed operation: the error's code (a broker
/// code such as `NOT_LEADER`, or a local kind such as `timeout`).
pub fn error_type(e: &Error) -> String {
    e.code().to_owned()
}

/// A key as an attribute: only UTF-8 text is recorded.
fn text_key(key: Option<&[u8]>) -> Option<&str> {
    key.and_then(|k| std::str::from_utf8(k).ok())
        .filter(|k| !k.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr<'a>(spec: &'a SpanSpec, key: &str) -> Option<&'a AttributeValue> {
        spec.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    #[test]
    fn a_publish_span_names_its_topic_and_the_system() {
        let s = publish("orders", Some(2), Some(b"o-7"), 5, Some("app"));
        assert_eq!(s.name, "publish orders");
        assert_eq!(s.kind, SpanKind::Producer);
        assert_eq!(attr(&s, keys::SYSTEM), Some(&"cursus".into()));
        assert_eq!(attr(&s, keys::OPERATION_TYPE), Some(&"publish".into()));
        assert_eq!(attr(&s, keys::DESTINATION), Some(&"orders".into()));
        assert_eq!(attr(&s, keys::PARTITION), Some(&"2".into()));
        assert_eq!(attr(&s, keys::KEY), Some(&"o-7".into()));
        assert_eq!(attr(&s, keys::BODY_SIZE), Some(&AttributeValue::Int(5)));
        // A binary key and an unchosen partition are left out.
        let s = publish("orders", None, Some(&[0xff, 0xfe]), 0, None);
        assert_eq!(attr(&s, keys::PARTITION), None);
        assert_eq!(attr(&s, keys::KEY), None);
        assert_eq!(attr(&s, keys::CLIENT_ID), None);
        assert_eq!(
            acknowledged(1, Some(42)),
            vec![
                (keys::PARTITION, "1".into()),
                (keys::OFFSET, AttributeValue::Int(42))
            ]
        );
    }

    #[test]
    fn a_receive_span_has_a_destination_only_for_one_topic() {
        let s = receive(&["a", "a"], 2, Some("g"));
        assert_eq!(s.name, "receive a");
        assert_eq!(s.kind, SpanKind::Consumer);
        assert_eq!(attr(&s, keys::BATCH_COUNT), Some(&AttributeValue::Int(2)));
        assert_eq!(attr(&s, keys::GROUP), Some(&"g".into()));
        let s = receive(&["a", "b"], 2, None);
        assert_eq!(s.name, "receive");
        assert_eq!(attr(&s, keys::DESTINATION), None);
    }

    #[test]
    fn transactions_and_the_event_store() {
        let s = end_transaction("tx-1", true);
        assert_eq!(s.name, "commit_transaction");
        assert_eq!(s.kind, SpanKind::Client);
        assert_eq!(attr(&s, keys::OPERATION_TYPE), Some(&"settle".into()));
        assert_eq!(end_transaction("tx-1", false).name, "abort_transaction");
        let s = append("orders", "order-7", 3);
        assert_eq!(s.name, "append orders");
        assert_eq!(s.kind, SpanKind::Producer);
        assert_eq!(
            attr(&s, keys::AGGREGATE_VERSION),
            Some(&AttributeValue::Int(3))
        );
        let s = read("orders", "order-7", 1);
        assert_eq!((s.name.as_str(), s.kind), ("read orders", SpanKind::Client));
        let s = process("orders", 0, 9, None, 3, Some("g"));
        assert_eq!(s.name, "process orders");
        assert_eq!(attr(&s, keys::OFFSET), Some(&AttributeValue::Int(9)));
    }

    #[test]
    fn every_metric_reads_a_field_of_the_statistics() {
        let mut s = crate::Statistics {
            client_id: "c".into(),
            kind: "consumer".into(),
            records_received: 3,
            ..Default::default()
        };
        s.errors.insert("routing".into(), 2);
        s.partitions.push(crate::PartitionLag {
            topic: "t".into(),
            partition: 1,
            lag: Some(5),
            ..Default::default()
        });
        let mut names = std::collections::HashSet::new();
        for m in metrics::ALL {
            assert!(names.insert(m.name), "{} twice", m.name);
            let points = m.points(&s);
            if !m.reported_by("consumer") {
                assert!(points.is_empty(), "{}", m.name);
            } else if m.breakdown == metrics::Breakdown::None {
                // A field name the reader does not know gives no point.
                assert_eq!(points.len(), 1, "{} reads no field", m.name);
            }
        }
        let by_name = |n: &str| metrics::ALL.iter().find(|m| m.name == n).unwrap();
        let id = (keys::CLIENT_ID, AttributeValue::from("c"));
        assert_eq!(
            by_name(metrics::CONSUMED_MESSAGES).points(&s),
            vec![(3, vec![id.clone()])]
        );
        assert_eq!(
            by_name(metrics::ERRORS).points(&s),
            vec![(2, vec![id.clone(), (keys::ERROR_TYPE, "routing".into())])]
        );
        assert_eq!(
            by_name(metrics::LAG).points(&s),
            vec![(
                5,
                vec![
                    id,
                    (keys::DESTINATION, "t".into()),
                    (keys::PARTITION, "1".into())
                ]
            )]
        );
        assert!(by_name(metrics::SENT_MESSAGES).points(&s).is_empty());
    }

    #[test]
    fn the_error_type_is_the_error_code() {
        assert_eq!(error_type(&Error::timeout("slow")), "timeout");
    }
}
