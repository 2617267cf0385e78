//! The OpenTelemetry layer (`cursus::otel`, feature `otel`) against a real
//! broker, checked with the SDK's in-memory exporters: span names, kinds,
//! attributes, parents and links (docs/observability.md, "Spans"), and the
//! statistics as metrics. Run with `cargo test -p cursus --features otel
//! --test engine_otel`.
#![cfg(feature = "otel")]

use cursus::admin::{Admin, NewTopic};
use cursus::consumer::Consumer;
use cursus::eventstore::{Event, EventStore};
use cursus::otel::{
    self, StatisticsCell, TracedConsumer, TracedEventStore, TracedProducer, Tracing,
};
use cursus::producer::{Producer, ProducerRecord};
use cursus::telemetry::{keys, metrics};
use cursus::{ClientConfig, ConsumerRecord, ProducerConfig, TraceContext};
use cursus_testkit::{eventually_async, TestBroker};
use opentelemetry::metrics::MeterProvider;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceState, Tracer, TracerProvider,
};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::create_topic as create;

const WAIT: Duration = Duration::from_secs(20);

/// A tracer provider of its own per test (tests run in parallel: no
/// global provider), exporting each span as it ends.
fn provider() -> (SdkTracerProvider, InMemorySpanExporter) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    (provider, exporter)
}

/// The application's own span, the parent of what the layer records.
fn app_span(provider: &SdkTracerProvider) -> Context {
    let span = provider.tracer("app").start("app");
    Context::current_with_span(span)
}

fn spans(exporter: &InMemorySpanExporter, name: &str) -> Vec<SpanData> {
    exporter
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.name == name)
        .collect()
}

fn attr(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

fn s(v: &str) -> Option<Value> {
    Some(Value::from(v.to_owned()))
}

fn i(v: i64) -> Option<Value> {
    Some(Value::from(v))
}

fn is_error(span: &SpanData) -> bool {
    matches!(span.status, Status::Error { .. })
}

async fn consumer(broker: &TestBroker, topic: &str) -> Arc<Consumer> {
    Arc::new(common::subscribed(broker, topic).await)
}

/// Polls through the traced consumer until `n` records arrived.
async fn consume(consumer: &TracedConsumer, n: usize) -> Vec<ConsumerRecord> {
    let mut got = Vec::new();
    eventually_async!(WAIT, "every record", async {
        got.extend(consumer.poll(Duration::from_millis(200)).await.unwrap());
        (got.len() >= n)
            .then_some(())
            .ok_or(format!("{} of {n}", got.len()))
    });
    got.sort_by_key(|r| r.offset);
    got
}

fn same_context(span: &SpanContext, carried: &TraceContext) -> bool {
    format!("{:032x}", span.trace_id()) == carried.trace_id()
        && format!("{:016x}", span.span_id()) == carried.span_id()
}

#[tokio::test]
async fn publish_receive_and_process_spans_follow_the_record() {
    let broker = TestBroker::start();
    create(&broker, "otel", 1).await;
    let (provider, exporter) = provider();
    let tracing = Tracing::new(&provider);
    let mut config = ProducerConfig::new(&broker.addr);
    config.set("client_id", "otel-app").unwrap();
    let plain = Producer::connect(config).await.unwrap();
    let producer = TracedProducer::new(plain.clone(), tracing.clone());

    let app = app_span(&provider);
    let keyed = ProducerRecord::new("otel", "first").key("k-1");
    let first = producer.send_with_parent(keyed, &app).await.unwrap();
    let first = first.await.unwrap();
    // The current context is the parent of `send`.
    use opentelemetry::context::FutureExt;
    let with_json = ProducerRecord::new("otel", "second").metadata(r#"{"tenant":"acme"}"#);
    let second = async { producer.send(with_json).await.unwrap().await.unwrap() }
        .with_context(app.clone())
        .await;
    // A record sent without the layer carries no context.
    plain
        .send(ProducerRecord::new("otel", "untraced"))
        .await
        .unwrap()
        .await
        .unwrap();
    app.span().end();

    let app_id = app.span().span_context().span_id();
    let publishes = spans(&exporter, "publish otel");
    assert_eq!(publishes.len(), 2);
    for (span, stored) in publishes.iter().zip([&first, &second]) {
        assert_eq!(span.span_kind, SpanKind::Producer);
        assert_eq!(span.parent_span_id, app_id, "a child of the caller's span");
        assert_eq!(span.instrumentation_scope.name(), "cursus");
        assert_eq!(attr(span, keys::SYSTEM), s("cursus"));
        assert_eq!(attr(span, keys::OPERATION_NAME), s("publish"));
        assert_eq!(attr(span, keys::OPERATION_TYPE), s("publish"));
        assert_eq!(attr(span, keys::DESTINATION), s("otel"));
        assert_eq!(attr(span, keys::CLIENT_ID), s("otel-app"));
        // From the acknowledgement.
        assert_eq!(attr(span, keys::PARTITION), s("0"));
        assert_eq!(attr(span, keys::OFFSET), i(stored.offset.unwrap() as i64));
        assert!(!is_error(span));
    }
    assert_eq!(attr(&publishes[0], keys::KEY), s("k-1"));
    assert_eq!(attr(&publishes[0], keys::BODY_SIZE), i(5));
    assert_eq!(attr(&publishes[1], keys::KEY), None);

    let traced_consumer = TracedConsumer::new(consumer(&broker, "otel").await, tracing.clone());
    let records = consume(&traced_consumer, 3).await;
    // Each record carries its publish span's context.
    for (record, span) in records.iter().zip(&publishes) {
        let carried = record.trace_context().expect("a traced record");
        assert!(same_context(&span.span_context, &carried));
    }
    let json: serde_json::Value =
        serde_json::from_str(records[1].metadata.as_deref().unwrap()).unwrap();
    assert_eq!(json["tenant"], "acme", "the application's metadata is kept");
    assert_eq!(records[2].trace_context(), None);
    assert_eq!(records[2].metadata, None);

    // Receive spans: one per poll that returned records, linked to each
    // traced record's publish span.
    let receives = spans(&exporter, "receive otel");
    assert!(!receives.is_empty());
    let mut linked: Vec<SpanId> = Vec::new();
    let mut counted = 0;
    for span in &receives {
        assert_eq!(span.span_kind, SpanKind::Consumer);
        assert_eq!(attr(span, keys::OPERATION_TYPE), s("receive"));
        assert_eq!(attr(span, keys::GROUP), s("g-otel"));
        let Some(Value::I64(n)) = attr(span, keys::BATCH_COUNT) else {
            panic!("no batch count");
        };
        counted += n;
        linked.extend(span.links.links.iter().map(|l| l.span_context.span_id()));
    }
    assert_eq!(counted, 3, "every record in one receive span");
    let mut published: Vec<SpanId> = publishes.iter().map(|s| s.span_context.span_id()).collect();
    linked.sort_by_key(|id| format!("{id:x}"));
    published.sort_by_key(|id| format!("{id:x}"));
    assert_eq!(linked, published, "links to the traced records only");

    // A process span is a child of the record's publish span.
    let seen = traced_consumer
        .in_process(&records[0], async {
            Context::current().span().span_context().clone()
        })
        .await;
    let untraced = traced_consumer.process(&records[2]);
    untraced.span().end();
    let processes = spans(&exporter, "process otel");
    assert_eq!(processes.len(), 2);
    let process = &processes[0];
    assert_eq!(process.span_kind, SpanKind::Consumer);
    assert_eq!(process.span_context, seen, "the processing ran in it");
    assert_eq!(process.parent_span_id, publishes[0].span_context.span_id());
    assert!(process.parent_span_is_remote);
    assert_eq!(
        process.span_context.trace_id(),
        publishes[0].span_context.trace_id()
    );
    assert_eq!(attr(process, keys::OFFSET), i(records[0].offset as i64));
    assert_eq!(attr(process, keys::PARTITION), s("0"));
    assert_eq!(attr(process, keys::KEY), s("k-1"));
    assert_eq!(attr(process, keys::GROUP), s("g-otel"));
    // Without a context in the record: a root span (no current context).
    assert_eq!(processes[1].parent_span_id, SpanId::INVALID);

    traced_consumer.consumer().close().await.unwrap();
    plain.close(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn a_failed_send_ends_its_span_with_the_error() {
    let broker = TestBroker::start();
    create(&broker, "otel-fail", 1).await;
    let (provider, exporter) = provider();
    let mut config = ProducerConfig::new(&broker.addr);
    config.set("delivery_timeout_ms", "2000").unwrap();
    config.set("max_block_ms", "2000").unwrap();
    let producer = TracedProducer::new(
        Producer::connect(config).await.unwrap(),
        Tracing::new(&provider),
    );
    // Partition 7 of a one-partition topic: refused at the send or at the
    // delivery, the span says so either way.
    let record = ProducerRecord::new("otel-fail", "x").partition(7);
    let error = match producer.send(record).await {
        Ok(delivery) => delivery.await.unwrap_err(),
        Err(e) => e,
    };
    let failed = spans(&exporter, "publish otel-fail");
    assert_eq!(failed.len(), 1);
    assert!(is_error(&failed[0]));
    assert_eq!(attr(&failed[0], keys::ERROR_TYPE), s(error.code()));
    assert_eq!(attr(&failed[0], keys::PARTITION), s("7"));

    // The callback form ends its span at the acknowledgement, before the
    // callback runs.
    let (tx, rx) = tokio::sync::oneshot::channel();
    producer
        .send_with_callback(ProducerRecord::new("otel-fail", "y"), move |r| {
            let _ = tx.send(r);
        })
        .await
        .unwrap();
    let stored = rx.await.unwrap().unwrap();
    // And so does the in-order form, when its future resolves.
    let in_order = producer
        .send_in_order(ProducerRecord::new("otel-fail", "z"))
        .await
        .unwrap();
    let ok: Vec<_> = spans(&exporter, "publish otel-fail")
        .into_iter()
        .filter(|s| !is_error(s))
        .collect();
    assert_eq!(ok.len(), 2);
    assert_eq!(attr(&ok[0], keys::OFFSET), i(stored.offset.unwrap() as i64));
    assert_eq!(
        attr(&ok[1], keys::OFFSET),
        i(in_order.offset.unwrap() as i64)
    );
    producer
        .producer()
        .close(Duration::from_secs(5))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_batch_has_one_publish_span_per_record() {
    let broker = TestBroker::start();
    create(&broker, "otel-batch", 1).await;
    let (provider, exporter) = provider();
    let producer = TracedProducer::new(
        Producer::connect(ProducerConfig::new(&broker.addr))
            .await
            .unwrap(),
        Tracing::new(&provider),
    );
    let app = app_span(&provider);
    let records = vec![
        ProducerRecord::new("otel-batch", "a").metadata(r#"{"app":1}"#),
        // Partition 7 does not exist: this record alone fails.
        ProducerRecord::new("otel-batch", "b").partition(7),
        ProducerRecord::new("otel-batch", "c").key("k"),
    ];
    let (tx, rx) = tokio::sync::oneshot::channel();
    let ended = exporter.clone();
    producer
        .send_batch_with_parent(records, &app, move |outcomes| {
            // The spans ended before the callback runs.
            let n = spans(&ended, "publish otel-batch").len();
            let _ = tx.send((outcomes, n));
        })
        .await
        .unwrap();
    let (outcomes, ended_before) = rx.await.unwrap();
    assert_eq!(ended_before, 3);
    let publishes = spans(&exporter, "publish otel-batch");
    let app_span = app.span().span_context().clone();
    for (span, outcome) in publishes.iter().zip(&outcomes) {
        assert_eq!(span.parent_span_id, app_span.span_id());
        assert_eq!(span.span_context.trace_id(), app_span.trace_id());
        match outcome {
            Ok(stored) => {
                assert!(!is_error(span));
                assert_eq!(attr(span, keys::OFFSET), i(stored.offset.unwrap() as i64));
            }
            Err(e) => {
                assert!(is_error(span));
                assert_eq!(attr(span, keys::ERROR_TYPE), s(e.code()));
            }
        }
    }
    assert!(outcomes[1].is_err() && outcomes[0].is_ok() && outcomes[2].is_ok());

    // Each record carries its own publish span's context, next to the
    // application's metadata.
    let consumer = TracedConsumer::new(
        consumer(&broker, "otel-batch").await,
        Tracing::new(&provider),
    );
    let got = consume(&consumer, 2).await;
    assert!(same_context(
        &publishes[0].span_context,
        &got[0].trace_context().unwrap()
    ));
    assert!(same_context(
        &publishes[2].span_context,
        &got[1].trace_context().unwrap()
    ));
    let metadata = got[0].metadata.as_deref().unwrap();
    assert!(metadata.ends_with(r#""app":1}"#), "{metadata}");

    // A batch refused as a whole (a closed producer) ends every span with
    // the error.
    producer
        .producer()
        .close(Duration::from_secs(5))
        .await
        .unwrap();
    let late = vec![
        ProducerRecord::new("otel-batch", "x"),
        ProducerRecord::new("otel-batch", "y"),
    ];
    let e = producer
        .send_batch(late, |_| {
            unreachable!("a refused batch is never called back")
        })
        .await
        .unwrap_err();
    let failed: Vec<_> = spans(&exporter, "publish otel-batch")
        .into_iter()
        .skip(3)
        .collect();
    assert_eq!(failed.len(), 2);
    for span in &failed {
        assert!(is_error(span));
        assert_eq!(attr(span, keys::ERROR_TYPE), s(e.code()));
    }
}

#[tokio::test]
async fn commit_and_abort_spans() {
    let broker = TestBroker::start();
    create(&broker, "otel-txn", 1).await;
    let (provider, exporter) = provider();
    let mut config = ProducerConfig::new(&broker.addr);
    config.set("transactional_id", "otel-tx").unwrap();
    let producer = TracedProducer::new(
        Producer::connect(config).await.unwrap(),
        Tracing::new(&provider),
    );
    let plain = producer.producer();
    plain.init_transactions().await.unwrap();
    plain.begin_transaction().await.unwrap();
    let committed = producer
        .send(ProducerRecord::new("otel-txn", "kept").partition(0))
        .await
        .unwrap();
    producer.commit_transaction().await.unwrap();
    committed.await.unwrap();
    plain.begin_transaction().await.unwrap();
    let aborted = producer
        .send(ProducerRecord::new("otel-txn", "dropped").partition(0))
        .await
        .unwrap();
    producer.abort_transaction().await.unwrap();
    let _ = aborted.await;

    for (name, operation) in [
        ("commit_transaction", "commit_transaction"),
        ("abort_transaction", "abort_transaction"),
    ] {
        let found = spans(&exporter, name);
        assert_eq!(found.len(), 1, "{name}");
        let span = &found[0];
        assert_eq!(span.span_kind, SpanKind::Client);
        assert_eq!(attr(span, keys::OPERATION_NAME), s(operation));
        assert_eq!(attr(span, keys::OPERATION_TYPE), s("settle"));
        assert_eq!(attr(span, keys::TRANSACTIONAL_ID), s("otel-tx"));
        assert!(!is_error(span));
    }
    assert_eq!(spans(&exporter, "publish otel-txn").len(), 2);

    // Transactional records carry the context too.
    let consumer =
        TracedConsumer::new(consumer(&broker, "otel-txn").await, Tracing::new(&provider));
    let records = consume(&consumer, 1).await;
    let publish = spans(&exporter, "publish otel-txn")
        .into_iter()
        .find(|s| attr(s, keys::OFFSET) == i(records[0].offset as i64))
        .expect("the committed record's span");
    assert!(same_context(
        &publish.span_context,
        &records[0].trace_context().unwrap()
    ));
    consumer.consumer().close().await.unwrap();
    plain.close(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn event_store_append_and_read_spans() {
    let broker = TestBroker::start();
    let admin = Admin::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    let mut topic = NewTopic::new("otel-es").partitions(1);
    topic.event_sourcing = Some(true);
    admin.create_topic(&topic).await.unwrap();
    admin.close().await;
    let (provider, exporter) = provider();
    let store = TracedEventStore::new(
        Arc::new(
            EventStore::connect(ClientConfig::new(&broker.addr))
                .await
                .unwrap(),
        ),
        Tracing::new(&provider),
    );
    let app = app_span(&provider);
    use opentelemetry::context::FutureExt;
    async {
        store
            .append("otel-es", "order-1", 0, &Event::new("Created", "{}"))
            .await
            .unwrap();
        let conflict = store
            .append("otel-es", "order-1", 0, &Event::new("Created", "{}"))
            .await
            .unwrap_err();
        assert_eq!(conflict.code(), "version_conflict");
        let (_, events) = store.read_stream("otel-es", "order-1", 1).await.unwrap();
        assert_eq!(events.len(), 1);
    }
    .with_context(app.clone())
    .await;

    let app_id = app.span().span_context().span_id();
    let appends = spans(&exporter, "append otel-es");
    assert_eq!(appends.len(), 2);
    for span in &appends {
        assert_eq!(span.span_kind, SpanKind::Producer);
        assert_eq!(span.parent_span_id, app_id);
        assert_eq!(attr(span, keys::AGGREGATE), s("order-1"));
        assert_eq!(attr(span, keys::AGGREGATE_VERSION), i(0));
        assert_eq!(attr(span, keys::OPERATION_TYPE), s("publish"));
    }
    assert!(!is_error(&appends[0]));
    assert!(is_error(&appends[1]));
    assert_eq!(attr(&appends[1], keys::ERROR_TYPE), s("version_conflict"));
    let reads = spans(&exporter, "read otel-es");
    assert_eq!(reads.len(), 1);
    assert_eq!(reads[0].span_kind, SpanKind::Client);
    assert_eq!(reads[0].parent_span_id, app_id);
    assert_eq!(attr(&reads[0], keys::AGGREGATE_VERSION), i(1));
    assert_eq!(attr(&reads[0], keys::OPERATION_TYPE), s("receive"));
    store.store().close().await;
}

#[test]
fn span_contexts_and_record_contexts_convert_both_ways() {
    let carried = TraceContext::new(
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        Some("vendor=opaque,other=1"),
    )
    .unwrap();
    let span = otel::span_context_of(&carried);
    assert!(span.is_valid() && span.is_remote() && span.is_sampled());
    assert_eq!(format!("{:x}", span.span_id()), "b7ad6b7169203331");
    assert_eq!(span.trace_state().get("vendor"), Some("opaque"));
    assert_eq!(otel::trace_context_of(&span), Some(carried));
    // Unsampled, no state.
    let unsampled = TraceContext::new(
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
        None,
    )
    .unwrap();
    let span = otel::span_context_of(&unsampled);
    assert!(!span.is_sampled());
    assert_eq!(span.trace_state(), &TraceState::default());
    assert_eq!(otel::trace_context_of(&span), Some(unsampled));
    // Nothing to carry for an empty context.
    assert_eq!(otel::trace_context_of(&SpanContext::empty_context()), None);
}

#[tokio::test]
async fn statistics_are_reported_as_metrics() {
    let broker = TestBroker::start();
    create(&broker, "otel-metrics", 1).await;
    let mut config = ProducerConfig::new(&broker.addr);
    config.set("client_id", "metered").unwrap();
    let producer = Producer::connect(config).await.unwrap();
    let cell = StatisticsCell::new();
    producer
        .set_statistics_listener(Some(Duration::from_millis(50)), Some(cell.listener()))
        .unwrap();
    let exporter = InMemoryMetricExporter::default();
    let meters = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    otel::observe_statistics(&meters.meter(cursus::telemetry::SCOPE), &cell);
    for n in 0..3 {
        producer
            .send(ProducerRecord::new("otel-metrics", format!("m{n}")))
            .await
            .unwrap()
            .await
            .unwrap();
    }
    eventually_async!(WAIT, "a snapshot with the three records", async {
        match cell.get() {
            Some(s) if s.records_sent == 3 => Ok(()),
            other => Err(format!("{:?}", other.map(|s| s.records_sent))),
        }
    });
    // A consumer's cell: received records and the lag per partition.
    let consumer = consumer(&broker, "otel-metrics").await;
    let consumed = StatisticsCell::new();
    consumer
        .set_statistics_listener(Some(Duration::from_millis(50)), Some(consumed.listener()))
        .unwrap();
    otel::observe_statistics(&meters.meter(cursus::telemetry::SCOPE), &consumed);
    let mut got = 0;
    eventually_async!(WAIT, "the three records", async {
        got += consumer
            .poll(Duration::from_millis(200))
            .await
            .unwrap()
            .len();
        (got >= 3).then_some(()).ok_or(got)
    });
    eventually_async!(WAIT, "a consumer snapshot after them", async {
        match consumed.get() {
            Some(s) if s.records_received == 3 && s.partitions.iter().any(|p| p.lag == Some(0)) => {
                Ok(())
            }
            other => Err(format!("{other:?}")),
        }
    });
    meters.force_flush().unwrap();
    let exported = exporter.get_finished_metrics().unwrap();
    let metric = |name: &str| {
        exported
            .iter()
            .flat_map(|rm| rm.scope_metrics())
            .filter(|sm| sm.scope().name() == "cursus")
            .flat_map(|sm| sm.metrics())
            .filter(|m| m.name() == name)
            .last()
            .unwrap_or_else(|| panic!("no metric {name}"))
    };
    // The producer's points only: a consumer reports no sent records.
    let client = KeyValue::new(keys::CLIENT_ID, "metered");
    match metric(metrics::SENT_MESSAGES).data() {
        AggregatedMetrics::U64(MetricData::Sum(sum)) => {
            let points: Vec<_> = sum.data_points().collect();
            assert_eq!(points.len(), 1);
            assert_eq!(points[0].value(), 3);
            assert!(points[0].attributes().any(|kv| kv == &client));
        }
        other => panic!("{other:?}"),
    }
    match metric(metrics::SENT_BATCHES).data() {
        AggregatedMetrics::U64(MetricData::Sum(sum)) => {
            assert!(sum.data_points().next().unwrap().value() >= 1);
        }
        other => panic!("{other:?}"),
    }
    match metric(&format!("{}.max", metrics::PRODUCE_LATENCY)).data() {
        AggregatedMetrics::U64(MetricData::Gauge(gauge)) => {
            assert!(gauge.data_points().next().unwrap().value() > 0);
        }
        other => panic!("{other:?}"),
    }
    match metric(metrics::REQUESTS).data() {
        AggregatedMetrics::U64(MetricData::Sum(sum)) => {
            assert_eq!(sum.data_points().count(), 2, "one point per client");
        }
        other => panic!("{other:?}"),
    }
    match metric(metrics::CONSUMED_MESSAGES).data() {
        AggregatedMetrics::U64(MetricData::Sum(sum)) => {
            assert_eq!(
                sum.data_points().map(|p| p.value()).collect::<Vec<_>>(),
                [3]
            );
        }
        other => panic!("{other:?}"),
    }
    match metric(metrics::LAG).data() {
        AggregatedMetrics::U64(MetricData::Gauge(gauge)) => {
            let point = gauge.data_points().next().unwrap();
            assert_eq!(point.value(), 0);
            let topic = KeyValue::new(keys::DESTINATION, "otel-metrics");
            let partition = KeyValue::new(keys::PARTITION, "0");
            assert!(point.attributes().any(|kv| kv == &topic));
            assert!(point.attributes().any(|kv| kv == &partition));
        }
        other => panic!("{other:?}"),
    }
    consumer.close().await.unwrap();
    producer.close(Duration::from_secs(5)).await.unwrap();
    meters.shutdown().unwrap();
}

#[test]
fn the_blocking_api_is_traced_with_the_tracing_helpers() {
    let broker = TestBroker::start();
    common::topic(&broker, "otel-blocking", 1);
    let (provider, exporter) = provider();
    let tracing = Tracing::new(&provider);
    let producer = cursus::blocking::Producer::connect(ProducerConfig::new(&broker.addr)).unwrap();
    let app = app_span(&provider);
    let mut record = ProducerRecord::new("otel-blocking", "b");
    let span = tracing.start_publish(&mut record, Some("blocking-app"), &app);
    let carried = record.trace_context.clone().expect("the span's context");
    let outcome = producer.send_and_wait(record);
    Tracing::end_publish(span, &outcome);
    let stored = outcome.unwrap();

    let publishes = spans(&exporter, "publish otel-blocking");
    assert_eq!(publishes.len(), 1);
    let span = &publishes[0];
    assert!(same_context(&span.span_context, &carried));
    assert_eq!(span.parent_span_id, app.span().span_context().span_id());
    assert_eq!(attr(span, keys::CLIENT_ID), s("blocking-app"));
    assert_eq!(attr(span, keys::OFFSET), i(stored.offset.unwrap() as i64));
    producer.close(Some(Duration::from_secs(5))).unwrap();
}
