//! OpenTelemetry spans and metrics for the async API (cargo feature
//! `otel`; docs/observability.md, "Rust").
//!
//! The spans are the ones every language records, declared once in
//! [`crate::telemetry`]: this module only turns a
//! [`crate::telemetry::SpanSpec`] into an OpenTelemetry span and
//! starts and ends it around the engine's calls.
//!
//! * [`TracedProducer`]: a publish span per send (per record of a batch
//!   send), a child of the current OpenTelemetry context, whose own
//!   context the record carries ([`crate::trace_context`]), ended at the
//!   acknowledgement; commit and abort spans; transactional appends.
//! * [`TracedConsumer`]: a receive span per poll that returned records,
//!   linked to each record's producer context; [`Tracing::process`] starts
//!   the span of the handling of one record, a child of its producer's.
//! * [`TracedEventStore`]: append and read spans.
//! * [`observe_statistics`]: a client's [`Statistics`] as observable
//!   instruments of the meter `cursus`.
//!
//! ```no_run
//! use cursus::consumer::{Consumer, Subscription};
//! use cursus::otel::{TracedConsumer, TracedProducer, Tracing};
//! use cursus::{ConsumerConfig, ProducerConfig, ProducerRecord};
//! use std::{sync::Arc, time::Duration};
//!
//! # async fn demo() -> cursus::Result<()> {
//! let tracing = Tracing::global();
//! let producer = cursus::producer::Producer::connect(ProducerConfig::new("127.0.0.1:9000")).await?;
//! let producer = TracedProducer::new(producer, tracing.clone());
//! // The publish span ends with the acknowledgement; the record carries
//! // its context.
//! producer.send(ProducerRecord::new("orders", "paid")).await?.await?;
//!
//! let consumer = Consumer::connect(ConsumerConfig::new("127.0.0.1:9000", "billing")).await?;
//! consumer.subscribe(Subscription::Topics(vec!["orders".into()])).await?;
//! let consumer = TracedConsumer::new(Arc::new(consumer), tracing);
//! for record in consumer.poll(Duration::from_secs(1)).await? {
//!     // A process span, a child of the record's publish span.
//!     consumer.in_process(&record, async { /* handle it */ }).await;
//! }
//! # Ok(())
//! # }
//! ```
//!
//! A failed operation ends its span with an error status and `error.type`
//! set to the error's code. Without the feature none of this is compiled,
//! and the engine's own code paths are the same with or without it: the
//! wrappers only call the public API.

use crate::consumer::Consumer;
use crate::error::{Error, Result};
use crate::eventstore::{Appended, Event, EventStore, Snapshot, StoredEvent};
use crate::producer::{Delivery, Producer, ProducerRecord, RecordMetadata};
use crate::telemetry::{self, AttributeValue, SpanSpec};
use crate::{ConsumerRecord, Statistics, TraceContext};
use opentelemetry::global::{BoxedSpan, BoxedTracer};
use opentelemetry::trace::{
    Link, Span, SpanBuilder, SpanContext, SpanId, Status, TraceContextExt, TraceFlags, TraceId,
    TraceState, Tracer, TracerProvider,
};
use opentelemetry::{Context, KeyValue};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, SystemTime};

/// An attribute of [`crate::telemetry`] as an OpenTelemetry attribute.
pub fn key_value(key: &'static str, value: &AttributeValue) -> KeyValue {
    owned_key_value(key, value.clone())
}

/// [`key_value`] taking the value (no copy of a string: spans are built
/// per record).
fn owned_key_value(key: &'static str, value: AttributeValue) -> KeyValue {
    match value {
        AttributeValue::Str(s) => KeyValue::new(key, s),
        AttributeValue::Int(n) => KeyValue::new(key, n),
    }
}

/// A [`crate::telemetry::SpanKind`] as OpenTelemetry's.
pub fn span_kind(kind: telemetry::SpanKind) -> opentelemetry::trace::SpanKind {
    match kind {
        telemetry::SpanKind::Producer => opentelemetry::trace::SpanKind::Producer,
        telemetry::SpanKind::Consumer => opentelemetry::trace::SpanKind::Consumer,
        telemetry::SpanKind::Client => opentelemetry::trace::SpanKind::Client,
    }
}

/// A span builder with the spec's name, kind and attributes.
pub fn span_builder(spec: SpanSpec) -> SpanBuilder {
    SpanBuilder::from_name(spec.name)
        .with_kind(span_kind(spec.kind))
        .with_attributes(
            spec.attributes
                .into_iter()
                .map(|(k, v)| owned_key_value(k, v)),
        )
}

/// The trace context a record carries for `span_context`; `None` for an
/// invalid (empty) span context, which has nothing to carry.
pub fn trace_context_of(span_context: &SpanContext) -> Option<TraceContext> {
    if !span_context.is_valid() {
        return None;
    }
    let traceparent = format!(
        "00-{:032x}-{:016x}-{:02x}",
        span_context.trace_id(),
        span_context.span_id(),
        span_context.trace_flags().to_u8()
    );
    let tracestate = span_context.trace_state().header();
    // A tracestate too long (or odd) for a record is dropped rather than
    // losing the whole context.
    TraceContext::new(&traceparent, Some(&tracestate))
        .or_else(|_| TraceContext::new(&traceparent, None))
        .ok()
}

/// The remote span context a record's trace context stands for (a
/// `tracestate` OpenTelemetry cannot parse is dropped).
pub fn span_context_of(context: &TraceContext) -> SpanContext {
    let trace_id = TraceId::from_hex(context.trace_id()).unwrap_or(TraceId::INVALID);
    let span_id = SpanId::from_hex(context.span_id()).unwrap_or(SpanId::INVALID);
    let flags = u8::from_str_radix(&context.traceparent()[53..55], 16).unwrap_or(0);
    let state = context
        .tracestate()
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    SpanContext::new(trace_id, span_id, TraceFlags::new(flags), true, state)
}

/// Ends `span` as failed by `e`: error status, `error.type`.
fn fail(span: &mut BoxedSpan, e: &Error) {
    span.set_attribute(KeyValue::new(
        telemetry::keys::ERROR_TYPE,
        telemetry::error_type(e),
    ));
    span.set_status(Status::error(e.to_string()));
    span.end();
}

/// Ends `span` with `result`'s outcome.
fn finish<T>(mut span: BoxedSpan, result: &Result<T>) {
    match result {
        Ok(_) => span.end(),
        Err(e) => fail(&mut span, e),
    }
}

/// The tracer the wrappers record with (scope [`telemetry::SCOPE`]).
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct Tracing {
    tracer: Arc<BoxedTracer>,
}

impl Tracing {
    /// The tracer of the global tracer provider
    /// (`opentelemetry::global::set_tracer_provider`), as it is now: set
    /// the provider first.
    pub fn global() -> Tracing {
        Tracing {
            tracer: Arc::new(opentelemetry::global::tracer(telemetry::SCOPE)),
        }
    }

    /// The tracer of `provider`.
    pub fn new<P>(provider: &P) -> Tracing
    where
        P: TracerProvider,
        P::Tracer: Send + Sync + 'static,
        <P::Tracer as Tracer>::Span: Send + Sync + 'static,
    {
        Tracing {
            tracer: Arc::new(BoxedTracer::new(Box::new(
                provider.tracer(telemetry::SCOPE),
            ))),
        }
    }

    /// Starts the span `spec` describes, a child of `parent`.
    pub fn start(&self, spec: SpanSpec, parent: &Context) -> BoxedSpan {
        self.tracer.build_with_context(span_builder(spec), parent)
    }

    /// Starts the publish span of `record` (a child of `parent`) and
    /// gives the record the span's context, unless the application set
    /// one itself (a context the application chose wins, as in its
    /// metadata). For sends the wrappers do not cover (the `blocking`
    /// API): end the span with [`Tracing::end_publish`].
    pub fn start_publish(
        &self,
        record: &mut ProducerRecord,
        client_id: Option<&str>,
        parent: &Context,
    ) -> BoxedSpan {
        let spec = telemetry::publish(
            &record.topic,
            record.partition,
            record.key.as_deref(),
            record.payload.len(),
            client_id,
        );
        let span = self.start(spec, parent);
        if record.trace_context.is_none() {
            record.trace_context = trace_context_of(span.span_context());
        }
        span
    }

    /// Ends a publish span with its record's outcome: the partition and
    /// offset, or the error.
    pub fn end_publish(span: BoxedSpan, outcome: &Result<RecordMetadata>) {
        acknowledge(span, outcome);
    }

    /// Ends a span with an operation's outcome: on failure, an error
    /// status and `error.type`.
    pub fn end<T>(span: BoxedSpan, outcome: &Result<T>) {
        finish(span, outcome);
    }

    /// Runs `operation` in the span `spec` describes (a child of the
    /// current context), ending it with the outcome.
    async fn around<T>(
        &self,
        spec: SpanSpec,
        operation: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        let span = self.start(spec, &Context::current());
        let result = operation.await;
        finish(span, &result);
        result
    }

    /// Records the receive span of a poll that started at `started` and
    /// returned `records` (nothing for an empty poll): a child of `parent`,
    /// linked to the trace context of each record that carries one.
    pub fn receive(
        &self,
        records: &[ConsumerRecord],
        group: Option<&str>,
        started: SystemTime,
        parent: &Context,
    ) {
        if records.is_empty() {
            return;
        }
        let topics: Vec<&str> = records.iter().map(|r| r.topic.as_str()).collect();
        let links = records
            .iter()
            .filter_map(ConsumerRecord::trace_context)
            .map(|c| Link::with_context(span_context_of(&c)))
            .collect();
        let builder = span_builder(telemetry::receive(&topics, records.len(), group))
            .with_start_time(started)
            .with_links(links);
        self.tracer.build_with_context(builder, parent).end();
    }

    /// Starts the span of the processing of `record`: a child of the
    /// record's trace context (of the current context when it carries
    /// none). Returns the current context with that span in it: run the
    /// processing in it (`attach`, or `FutureExt::with_context`) and end
    /// the span with `context.span().end()`; [`Tracing::in_process`] does
    /// both.
    pub fn process(&self, record: &ConsumerRecord, group: Option<&str>) -> Context {
        let current = Context::current();
        let parent = match record.trace_context() {
            Some(c) => current.with_remote_span_context(span_context_of(&c)),
            None => current,
        };
        let spec = telemetry::process(
            &record.topic,
            record.partition,
            record.offset,
            record.key.as_deref(),
            record.payload.len(),
            group,
        );
        let span = self.start(spec, &parent);
        parent.with_span(span)
    }

    /// Runs `processing` in the process span of `record` (see
    /// [`Tracing::process`]) and ends the span when it finishes.
    pub async fn in_process<F: Future>(
        &self,
        record: &ConsumerRecord,
        group: Option<&str>,
        processing: F,
    ) -> F::Output {
        use opentelemetry::context::FutureExt;
        let context = self.process(record, group);
        let output = processing.with_context(context.clone()).await;
        context.span().end();
        output
    }
}

/// A [`Producer`] whose sends, commits and aborts are traced. Cheap to
/// clone; [`TracedProducer::producer`] gives the producer for everything
/// else.
#[derive(Clone, Debug)]
pub struct TracedProducer {
    producer: Producer,
    tracing: Tracing,
    client_id: String,
}

impl TracedProducer {
    /// Traces `producer`'s operations with `tracing`.
    pub fn new(producer: Producer, tracing: Tracing) -> TracedProducer {
        let client_id = producer.statistics().client_id;
        TracedProducer {
            producer,
            tracing,
            client_id,
        }
    }

    /// The producer.
    pub fn producer(&self) -> &Producer {
        &self.producer
    }

    fn publish(&self, record: &mut ProducerRecord, parent: &Context) -> BoxedSpan {
        self.tracing
            .start_publish(record, Some(&self.client_id), parent)
    }

    /// [`Producer::send`] in a publish span, a child of the current
    /// context. The span ends when the returned delivery resolves (with the
    /// partition and offset, or the error); a delivery dropped before that
    /// ends it without them.
    pub async fn send(&self, record: ProducerRecord) -> Result<TracedDelivery> {
        self.send_with_parent(record, &Context::current()).await
    }

    /// [`TracedProducer::send`] with the publish span a child of `parent`.
    pub async fn send_with_parent(
        &self,
        mut record: ProducerRecord,
        parent: &Context,
    ) -> Result<TracedDelivery> {
        let mut span = self.publish(&mut record, parent);
        match self.producer.send(record).await {
            Ok(delivery) => Ok(TracedDelivery {
                delivery,
                span: Some(span),
            }),
            Err(e) => {
                fail(&mut span, &e);
                Err(e)
            }
        }
    }

    /// [`Producer::send_in_order`] in a publish span, a child of the
    /// current context at this call, ended when the returned future
    /// resolves (dropped unpolled: when it is dropped).
    pub fn send_in_order(
        &self,
        mut record: ProducerRecord,
    ) -> impl Future<Output = Result<RecordMetadata>> + Send + 'static {
        let span = self.publish(&mut record, &Context::current());
        let acknowledged = self.producer.send_in_order(record);
        async move {
            let result = acknowledged.await;
            acknowledge(span, &result);
            result
        }
    }

    /// [`Producer::send_with_callback`] in a publish span, a child of the
    /// current context, ended at the acknowledgement (before `callback`
    /// is called).
    pub async fn send_with_callback(
        &self,
        mut record: ProducerRecord,
        callback: impl FnOnce(Result<RecordMetadata>) + Send + 'static,
    ) -> Result<()> {
        let span = self.publish(&mut record, &Context::current());
        // The span is shared with the callback, to be ended by whichever
        // sees the outcome: the callback, or a refused send here.
        let slot = Arc::new(Mutex::new(Some(span)));
        let in_callback = Arc::clone(&slot);
        let sent = self
            .producer
            .send_with_callback(record, move |result| {
                if let Some(span) = take(&in_callback) {
                    acknowledge(span, &result);
                }
                callback(result);
            })
            .await;
        if let Err(e) = &sent {
            if let Some(mut span) = take(&slot) {
                fail(&mut span, e);
            }
        }
        sent
    }

    /// [`Producer::send_batch`] with one publish span per record, each a
    /// child of the current context, its context carried by its record
    /// (unless the record has one of its own), ended with that record's
    /// outcome (partition and offset, or the error) before `callback`
    /// runs; a batch refused as a whole ends every span with the error.
    pub async fn send_batch<F>(&self, records: Vec<ProducerRecord>, callback: F) -> Result<()>
    where
        F: FnOnce(Vec<Result<RecordMetadata>>) + Send + 'static,
    {
        self.send_batch_with_parent(records, &Context::current(), callback)
            .await
    }

    /// [`TracedProducer::send_batch`] with the publish spans children of
    /// `parent`.
    pub async fn send_batch_with_parent<F>(
        &self,
        mut records: Vec<ProducerRecord>,
        parent: &Context,
        callback: F,
    ) -> Result<()>
    where
        F: FnOnce(Vec<Result<RecordMetadata>>) + Send + 'static,
    {
        let spans: Vec<BoxedSpan> = records
            .iter_mut()
            .map(|record| self.publish(record, parent))
            .collect();
        // As in `send_with_callback`: ended by whichever sees the outcome.
        let slot = Arc::new(Mutex::new(Some(spans)));
        let in_callback = Arc::clone(&slot);
        let sent = self
            .producer
            .send_batch(records, move |outcomes| {
                for (span, outcome) in take(&in_callback).into_iter().flatten().zip(&outcomes) {
                    acknowledge(span, outcome);
                }
                callback(outcomes);
            })
            .await;
        if let Err(e) = &sent {
            for mut span in take(&slot).into_iter().flatten() {
                fail(&mut span, e);
            }
        }
        sent
    }

    /// [`Producer::commit_transaction`] in a `commit_transaction` span.
    pub async fn commit_transaction(&self) -> Result<()> {
        self.end_transaction(true).await
    }

    /// [`Producer::abort_transaction`] in an `abort_transaction` span.
    pub async fn abort_transaction(&self) -> Result<()> {
        self.end_transaction(false).await
    }

    async fn end_transaction(&self, commit: bool) -> Result<()> {
        let id = self.producer.transactional_id().unwrap_or_default();
        let spec = telemetry::end_transaction(id, commit);
        if commit {
            self.tracing
                .around(spec, self.producer.commit_transaction())
                .await
        } else {
            self.tracing
                .around(spec, self.producer.abort_transaction())
                .await
        }
    }

    /// [`Producer::append_stream`] (an event-store append inside the
    /// transaction) in an append span.
    pub async fn append_stream(
        &self,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: &Event,
    ) -> Result<Appended> {
        self.tracing
            .around(
                telemetry::append(topic, key, expected_version),
                self.producer
                    .append_stream(topic, key, expected_version, event),
            )
            .await
    }
}

fn take<T>(slot: &Mutex<Option<T>>) -> Option<T> {
    slot.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Ends a publish span with its record's outcome.
fn acknowledge(mut span: BoxedSpan, result: &Result<RecordMetadata>) {
    match result {
        Ok(stored) => {
            span.set_attributes(
                telemetry::acknowledged(stored.partition, stored.offset)
                    .into_iter()
                    .map(|(k, v)| owned_key_value(k, v)),
            );
            span.end();
        }
        Err(e) => fail(&mut span, e),
    }
}

/// A [`Delivery`] that ends its record's publish span when it resolves.
#[derive(Debug)]
pub struct TracedDelivery {
    delivery: Delivery,
    span: Option<BoxedSpan>,
}

impl TracedDelivery {
    /// The publish span's context (the one the record carries).
    pub fn span_context(&self) -> Option<&SpanContext> {
        self.span.as_ref().map(|s| s.span_context())
    }
}

impl Future for TracedDelivery {
    type Output = Result<RecordMetadata>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let result = std::task::ready!(Pin::new(&mut self.delivery).poll(cx));
        if let Some(span) = self.span.take() {
            acknowledge(span, &result);
        }
        Poll::Ready(result)
    }
}

/// A [`Consumer`] whose polls are traced: a receive span for each poll
/// that returned records. Process spans: [`TracedConsumer::process`].
#[derive(Clone, Debug)]
pub struct TracedConsumer {
    consumer: Arc<Consumer>,
    tracing: Tracing,
}

impl TracedConsumer {
    /// Traces `consumer`'s polls with `tracing`.
    pub fn new(consumer: Arc<Consumer>, tracing: Tracing) -> TracedConsumer {
        TracedConsumer { consumer, tracing }
    }

    /// The consumer.
    pub fn consumer(&self) -> &Arc<Consumer> {
        &self.consumer
    }

    /// [`Consumer::poll`], recording a receive span (a child of the
    /// current context) when records came back.
    pub async fn poll(&self, timeout: Duration) -> Result<Vec<ConsumerRecord>> {
        self.poll_max(timeout, self.consumer.max_poll_records())
            .await
    }

    /// [`Consumer::poll_max`], recording a receive span as
    /// [`TracedConsumer::poll`] does.
    pub async fn poll_max(
        &self,
        timeout: Duration,
        max_records: usize,
    ) -> Result<Vec<ConsumerRecord>> {
        let parent = Context::current();
        let started = SystemTime::now();
        let records = self.consumer.poll_max(timeout, max_records).await?;
        self.tracing
            .receive(&records, Some(self.consumer.group_id()), started, &parent);
        Ok(records)
    }

    /// The process span of `record`, a child of its producer's context:
    /// see [`Tracing::process`].
    pub fn process(&self, record: &ConsumerRecord) -> Context {
        self.tracing.process(record, Some(self.consumer.group_id()))
    }

    /// Runs `processing` in the process span of `record`, then ends the
    /// span.
    pub async fn in_process<F: Future>(&self, record: &ConsumerRecord, processing: F) -> F::Output {
        self.tracing
            .in_process(record, Some(self.consumer.group_id()), processing)
            .await
    }
}

/// An [`EventStore`] whose appends and reads are traced.
#[derive(Clone, Debug)]
pub struct TracedEventStore {
    store: Arc<EventStore>,
    tracing: Tracing,
}

impl TracedEventStore {
    /// Traces `store`'s appends and reads with `tracing`.
    pub fn new(store: Arc<EventStore>, tracing: Tracing) -> TracedEventStore {
        TracedEventStore { store, tracing }
    }

    /// The event store.
    pub fn store(&self) -> &Arc<EventStore> {
        &self.store
    }

    /// [`EventStore::append`] in an append span, a child of the current
    /// context.
    pub async fn append(
        &self,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: &Event,
    ) -> Result<Appended> {
        self.tracing
            .around(
                telemetry::append(topic, key, expected_version),
                self.store.append(topic, key, expected_version, event),
            )
            .await
    }

    /// [`EventStore::read_stream`] in a read span, a child of the current
    /// context.
    pub async fn read_stream(
        &self,
        topic: &str,
        key: &str,
        from_version: u64,
    ) -> Result<(Option<Snapshot>, Vec<StoredEvent>)> {
        self.tracing
            .around(
                telemetry::read(topic, key, from_version),
                self.store.read_stream(topic, key, from_version),
            )
            .await
    }
}

/// The latest [`Statistics`] snapshot of a client, which the instruments
/// of [`observe_statistics`] report. Fed by the client's periodic
/// statistics listener ([`StatisticsCell::listener`]), so reading it costs
/// the metrics collection no call to the client (a consumer's snapshot
/// asks the broker for end offsets). Cheap to clone; clones share it.
#[derive(Clone, Debug, Default)]
pub struct StatisticsCell(Arc<Mutex<Option<Statistics>>>);

impl StatisticsCell {
    /// An empty cell: the instruments report nothing until a snapshot
    /// arrives.
    pub fn new() -> StatisticsCell {
        StatisticsCell::default()
    }

    /// Keeps `snapshot` as the latest.
    pub fn set(&self, snapshot: Statistics) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(snapshot);
    }

    /// Empties the cell (a closed client): the instruments stop reporting.
    pub fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The latest snapshot, if any.
    pub fn get(&self) -> Option<Statistics> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A statistics listener that keeps each snapshot in this cell, for
    /// `set_statistics_listener` of a producer or consumer.
    pub fn listener(&self) -> crate::events::StatisticsListener {
        let cell = self.clone();
        Arc::new(move |snapshot| cell.set(snapshot))
    }
}

/// Registers on `meter` (use the meter [`telemetry::SCOPE`]) the
/// observable instruments of [`telemetry::metrics`], reading the latest
/// snapshot of `cell` at each collection. Call it once per client (each
/// with its own cell): their points share the instruments and differ by
/// `messaging.client.id`, so give the clients distinct `client_id`s. A
/// producer reports no consumer instruments and the other way round.
pub fn observe_statistics(meter: &opentelemetry::metrics::Meter, cell: &StatisticsCell) {
    use telemetry::metrics::{InstrumentKind, Metric, ALL};
    for metric in ALL {
        let cell = cell.clone();
        let observe = move |report: &mut dyn FnMut(u64, &[KeyValue])| {
            if let Some(s) = cell.get() {
                for (value, attributes) in metric.points(&s) {
                    let attributes: Vec<KeyValue> =
                        attributes.iter().map(|(k, v)| key_value(k, v)).collect();
                    report(value, &attributes);
                }
            }
        };
        let Metric { name, unit, .. } = *metric;
        match metric.kind {
            InstrumentKind::Counter => {
                meter
                    .u64_observable_counter(name)
                    .with_unit(unit)
                    .with_callback(move |o| observe(&mut |v, a| o.observe(v, a)))
                    .build();
            }
            InstrumentKind::Gauge => {
                meter
                    .u64_observable_gauge(name)
                    .with_unit(unit)
                    .with_callback(move |o| observe(&mut |v, a| o.observe(v, a)))
                    .build();
            }
        }
    }
}
