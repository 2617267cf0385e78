package io.cursus.otel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cursus.BrokerExtension;
import io.cursus.ClientConfig;
import io.cursus.ConsumerConfig;
import io.cursus.ConsumerRecord;
import io.cursus.CursusAdmin;
import io.cursus.CursusConsumer;
import io.cursus.CursusEventStore;
import io.cursus.CursusProducer;
import io.cursus.Event;
import io.cursus.EventPage;
import io.cursus.NewTopic;
import io.cursus.PageLimits;
import io.cursus.ProducerConfig;
import io.cursus.ProducerRecord;
import io.cursus.RecordMetadata;
import io.cursus.Telemetry;
import io.cursus.TraceContext;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The OpenTelemetry layer against a real broker: spans (names, kinds, attributes, parents,
 * links) into the SDK's in-memory exporter, statistics into its in-memory metric reader.
 */
class TracingTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
    private static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    private static final AttributeKey<String> PARTITION = AttributeKey.stringKey("messaging.destination.partition.id");
    private static final AttributeKey<Long> OFFSET = AttributeKey.longKey("messaging.cursus.offset");
    private static final AttributeKey<String> CLIENT_ID = AttributeKey.stringKey("messaging.client.id");
    private static final AttributeKey<Long> BATCH = AttributeKey.longKey("messaging.batch.message_count");
    private static final AttributeKey<String> GROUP = AttributeKey.stringKey("messaging.consumer.group.name");
    private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

    private InMemorySpanExporter spans;
    private InMemoryMetricReader metrics;
    private OpenTelemetrySdk otel;
    private CursusTracing tracing;

    @BeforeEach
    void setUp() {
        spans = InMemorySpanExporter.create();
        metrics = InMemoryMetricReader.create();
        otel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
                .build();
        tracing = CursusTracing.create(otel);
    }

    @AfterEach
    void tearDown() {
        otel.close();
    }

    private List<SpanData> named(String name) {
        return spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).collect(Collectors.toList());
    }

    private static CursusConsumer consumer(String group) {
        return new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr()).groupId(group)
                .fetchMaxWaitMs(50).build());
    }

    private static List<ConsumerRecord> pollAtLeast(TracingConsumer consumer, int n) {
        List<ConsumerRecord> got = new ArrayList<>();
        for (int i = 0; i < 400 && got.size() < n; i++) {
            got.addAll(consumer.poll(Duration.ofMillis(100)));
        }
        return got;
    }

    @Test
    void publishReceiveAndProcessFormOneTrace() throws Exception {
        BROKER.createTopic("otel-orders", 1);
        Span app = otel.getTracer("app").spanBuilder("app").startSpan();
        RecordMetadata first;
        RecordMetadata second;
        try (CursusProducer plain = new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                .clientId("otel-app").build())) {
            TracingProducer producer = tracing.producer(plain);
            try (Scope ignored = app.makeCurrent()) {
                first = producer.send(ProducerRecord.of("otel-orders", "o-1", "paid")).get(30, TimeUnit.SECONDS);
                second = producer.sendAndWait(ProducerRecord.of("otel-orders", "o-2", "shipped"));
            }
            // A record sent without tracing carries no context.
            plain.sendAndWait(ProducerRecord.of("otel-orders", "untraced"));
        }
        app.end();

        List<SpanData> publishes = named("publish otel-orders");
        assertEquals(2, publishes.size());
        for (SpanData p : publishes) {
            assertEquals(SpanKind.PRODUCER, p.getKind());
            assertEquals(app.getSpanContext().getSpanId(), p.getParentSpanId());
            assertEquals(app.getSpanContext().getTraceId(), p.getTraceId());
            assertEquals("cursus", p.getAttributes().get(SYSTEM));
            assertEquals("otel-orders", p.getAttributes().get(DESTINATION));
            assertEquals("0", p.getAttributes().get(PARTITION));
            assertEquals("otel-app", p.getAttributes().get(CLIENT_ID));
            assertEquals(StatusCode.UNSET, p.getStatus().getStatusCode());
        }
        assertEquals(List.of(first.offset(), second.offset()),
                publishes.stream().map(p -> p.getAttributes().get(OFFSET)).sorted().collect(Collectors.toList()));
        spans.reset();

        try (CursusConsumer plain = consumer("otel-g")) {
            plain.subscribe(List.of("otel-orders"));
            TracingConsumer consumer = tracing.consumer(plain, "otel-g");
            List<ConsumerRecord> got = pollAtLeast(consumer, 3);
            assertEquals(3, got.size());
            for (int i = 0; i < 2; i++) {
                // The publish span's context is the one the record carries.
                TraceContext tc = got.get(i).traceContext().orElseThrow();
                SpanData sent = publishes.stream().filter(p -> p.getSpanId().equals(tc.spanId())).findFirst()
                        .orElseThrow();
                assertEquals(sent.getTraceId(), tc.traceId());
                assertEquals((long) sent.getAttributes().get(OFFSET), got.get(i).offset());
                consumer.process(got.get(i), r -> { });
            }
            assertEquals(Optional.empty(), got.get(2).traceContext());
            consumer.process(got.get(2), r -> { });
            RuntimeException boom = assertThrows(RuntimeException.class,
                    () -> consumer.process(got.get(0), r -> {
                        throw new IllegalStateException("boom");
                    }));
            assertEquals("boom", boom.getMessage());
        }

        List<SpanData> receives = named("receive otel-orders");
        assertFalse(receives.isEmpty());
        List<String> linked = new ArrayList<>();
        long received = 0;
        for (SpanData r : receives) {
            assertEquals(SpanKind.CONSUMER, r.getKind());
            assertEquals("otel-g", r.getAttributes().get(GROUP));
            received += r.getAttributes().get(BATCH);
            for (LinkData l : r.getLinks()) {
                linked.add(l.getSpanContext().getSpanId());
            }
        }
        assertEquals(3, received);
        assertEquals(publishes.stream().map(SpanData::getSpanId).sorted().collect(Collectors.toList()),
                linked.stream().sorted().collect(Collectors.toList()));

        List<SpanData> processes = named("process otel-orders");
        assertEquals(4, processes.size());
        for (int i = 0; i < 2; i++) {
            SpanData p = processes.get(i);
            assertEquals(SpanKind.CONSUMER, p.getKind());
            SpanData publish = publishes.stream().filter(s -> s.getSpanId().equals(p.getParentSpanId()))
                    .findFirst().orElseThrow();
            assertEquals(publish.getTraceId(), p.getTraceId());
            assertEquals(publish.getAttributes().get(OFFSET), p.getAttributes().get(OFFSET));
        }
        // The untraced record's process span starts a trace of its own.
        assertFalse(processes.get(2).getParentSpanContext().isValid());
        SpanData failed = processes.get(3);
        assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode());
        assertEquals(IllegalStateException.class.getName(), failed.getAttributes().get(ERROR_TYPE));
    }

    @Test
    void aFailedSendEndsItsSpanWithTheErrorCode() {
        BROKER.createTopic("otel-small", 1);
        try (CursusProducer plain = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            TracingProducer producer = tracing.producer(plain);
            Throwable e = assertThrows(Throwable.class, () -> {
                try {
                    producer.send(ProducerRecord.of("otel-small", "x").withPartition(7)).join();
                } catch (CompletionException c) {
                    throw c.getCause();
                }
            });
            assertTrue(e instanceof io.cursus.CursusException, e.toString());
            SpanData span = named("publish otel-small").get(0);
            assertEquals(StatusCode.ERROR, span.getStatus().getStatusCode());
            assertEquals(((io.cursus.CursusException) e).code(), span.getAttributes().get(ERROR_TYPE));
        }
    }

    @Test
    void aBatchGetsOnePublishSpanPerRecordEndedWithItsOutcome() throws Exception {
        BROKER.createTopic("otel-batch", 1);
        Span app = otel.getTracer("app").spanBuilder("app").startSpan();
        try (CursusProducer plain = new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                .clientId("otel-batch-app").build())) {
            TracingProducer producer = tracing.producer(plain);
            CompletableFuture<List<RecordMetadata>> sent;
            try (Scope ignored = app.makeCurrent()) {
                sent = producer.sendBatch(List.of(ProducerRecord.of("otel-batch", "a").withMetadata("{\"app\":1}"),
                        ProducerRecord.of("otel-batch", "b").withPartition(7), // does not exist: fails alone
                        ProducerRecord.of("otel-batch", "c")));
            }
            ExecutionException e = assertThrows(ExecutionException.class, () -> sent.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof io.cursus.BatchDeliveryException, e.toString());
            io.cursus.BatchDeliveryException partly = (io.cursus.BatchDeliveryException) e.getCause();

            // The spans ended before the future completed, in record order.
            List<SpanData> publishes = named("publish otel-batch");
            assertEquals(3, publishes.size());
            for (SpanData p : publishes) {
                assertEquals(SpanKind.PRODUCER, p.getKind());
                assertEquals(app.getSpanContext().getSpanId(), p.getParentSpanId());
                assertEquals("otel-batch-app", p.getAttributes().get(CLIENT_ID));
            }
            Map<Long, SpanData> byOffset = new HashMap<>();
            for (SpanData p : publishes) {
                if (p.getStatus().getStatusCode() == StatusCode.ERROR) {
                    assertEquals(partly.errors().get(1).code(), p.getAttributes().get(ERROR_TYPE));
                } else {
                    byOffset.put(p.getAttributes().get(OFFSET), p);
                }
            }
            assertEquals(Set.of(partly.metadata().get(0).offset(), partly.metadata().get(2).offset()), byOffset.keySet());

            try (CursusConsumer consumer = consumer("otel-batch-g")) {
                consumer.subscribe(List.of("otel-batch"));
                List<ConsumerRecord> got = pollAtLeast(tracing.consumer(consumer, "otel-batch-g"), 2);
                assertEquals(2, got.size());
                for (ConsumerRecord r : got) {
                    // Each record carries its own publish span's context.
                    TraceContext tc = r.traceContext().orElseThrow();
                    assertEquals(byOffset.get(r.offset()).getSpanId(), tc.spanId());
                }
                assertTrue(got.get(0).metadata().contains("\"app\":1"), got.get(0).metadata());
            }
        }
        app.end();
    }

    @Test
    void transactionsGetCommitAndAbortSpans() {
        BROKER.createTopic("otel-tx", 1);
        try (CursusProducer plain = new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                .transactionalId("otel-tx-1").lingerMs(1).build())) {
            TracingProducer producer = tracing.producer(plain, "otel-tx-1");
            plain.initTransactions().join();
            plain.beginTransaction().join();
            producer.send(ProducerRecord.of("otel-tx", "a")).join();
            producer.commitTransaction().join();
            plain.beginTransaction().join();
            producer.send(ProducerRecord.of("otel-tx", "b")).join();
            producer.abortTransaction().join();
        }
        for (String name : List.of("commit_transaction", "abort_transaction")) {
            SpanData s = named(name).get(0);
            assertEquals(SpanKind.CLIENT, s.getKind());
            assertEquals("otel-tx-1", s.getAttributes().get(AttributeKey.stringKey("messaging.cursus.transactional_id")));
            assertEquals("settle", s.getAttributes().get(AttributeKey.stringKey("messaging.operation.type")));
            assertEquals(StatusCode.UNSET, s.getStatus().getStatusCode());
        }
    }

    @Test
    void eventStoreAppendsAndReadsAreSpans() {
        try (CursusAdmin admin = BROKER.admin()) {
            admin.createTopic(NewTopic.named("otel-events").partitions(1).eventSourcing(true));
        }
        try (CursusEventStore plain = new CursusEventStore(ClientConfig.of(BROKER.addr()))) {
            TracingEventStore store = tracing.eventStore(plain);
            store.append("otel-events", "order-7", 0, Event.of("created", "{}"));
            assertEquals(1, store.readStream("otel-events", "order-7").events().size());
            assertThrows(io.cursus.CursusException.class,
                    () -> store.append("otel-events", "order-7", 0, Event.of("created", "{}")));
        }
        List<SpanData> appends = named("append otel-events");
        assertEquals(2, appends.size());
        assertEquals(SpanKind.PRODUCER, appends.get(0).getKind());
        assertEquals("order-7", appends.get(0).getAttributes().get(AttributeKey.stringKey("messaging.cursus.aggregate.key")));
        assertEquals(0L, appends.get(0).getAttributes().get(AttributeKey.longKey("messaging.cursus.aggregate.version")));
        assertEquals(StatusCode.ERROR, appends.get(1).getStatus().getStatusCode());
        assertNotNull(appends.get(1).getAttributes().get(ERROR_TYPE));
        SpanData read = named("read otel-events").get(0);
        assertEquals(SpanKind.CLIENT, read.getKind());
        assertEquals(1L, read.getAttributes().get(AttributeKey.longKey("messaging.cursus.aggregate.version")));
    }

    private static final AttributeKey<String> AGGREGATE = AttributeKey.stringKey("messaging.cursus.aggregate.key");
    private static final AttributeKey<Long> VERSION = AttributeKey.longKey("messaging.cursus.aggregate.version");

    /** The aggregate versions of the spans named {@code name}, in the order they ended. */
    private List<Long> versions(String name) {
        return named(name).stream().map(s -> s.getAttributes().get(VERSION)).collect(Collectors.toList());
    }

    /** The failure {@code future} completed with. */
    private static Throwable failure(CompletableFuture<?> future) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> future.get(30, TimeUnit.SECONDS));
        return e.getCause();
    }

    private static <T> T await(CompletableFuture<T> future) throws Exception {
        return future.get(30, TimeUnit.SECONDS);
    }

    @Test
    void everyEventStoreCallIsTraced() throws Exception {
        try (CursusAdmin admin = BROKER.admin()) {
            admin.createTopic(NewTopic.named("otel-es").partitions(1).eventSourcing(true));
            admin.createTopic(NewTopic.named("otel-replay").partitions(1).eventSourcing(true).idempotent(true)
                    .aggregateReplay(true));
        }
        Span app = otel.getTracer("app").spanBuilder("app").startSpan();
        Throwable conflict;
        Throwable missing;
        try (CursusEventStore plain = new CursusEventStore(ClientConfig.of(BROKER.addr()));
                Scope ignored = app.makeCurrent()) {
            TracingEventStore store = tracing.eventStore(plain);
            await(store.appendAsync("otel-es", "acct", 0, Event.of("opened", "{}")));
            store.append("otel-es", "acct", 1, Event.of("credited", "{}"));
            store.append("otel-es", "acct", 2, Event.of("debited", "{}"));
            conflict = failure(store.appendAsync("otel-es", "acct", 0, Event.of("opened", "{}")));

            assertEquals(3, store.streamVersion("otel-es", "acct"));
            assertEquals(3L, await(store.streamVersionAsync("otel-es", "acct")));
            assertEquals(2, await(store.readStreamAsync("otel-es", "acct", 2)).events().size());
            List<Long> streamed = new ArrayList<>();
            store.stream("otel-es", "acct", 1, PageLimits.ofRecords(1)).events().forEach(e -> streamed.add(e.version()));
            assertEquals(List.of(1L, 2L, 3L), streamed);
            int pages = 0;
            for (EventPage page : store.history("otel-es", "acct", 1, 0, PageLimits.ofRecords(2))) {
                pages += page.events().isEmpty() ? 0 : 1;
            }
            assertEquals(2, pages);
            plain.saveSnapshot("otel-es", "acct", 3, "three");
            assertEquals(3, store.readSnapshot("otel-es", "acct").orElseThrow().version());
            assertEquals("three", await(store.readSnapshotAsync("otel-es", "acct")).orElseThrow().state());
            assertEquals("three", store.loadAggregate("otel-es", "acct", "", (st, e) -> st + e.eventType(), d -> d,
                    st -> st).state());
            assertEquals("three", await(store.loadAggregateAsync("otel-es", "acct", "", (st, e) -> st + e.eventType(),
                    d -> d, st -> st, 0)).state());
            missing = failure(store.readStreamAsync("otel-nowhere", "acct", 1));

            for (int i = 1; i <= 2; i++) {
                plain.append("otel-replay", "m", i - 1, Event.of("Scored", "goal").withEventId("m-" + i));
            }
            assertTrue(store.replayProof("otel-replay", "m", 2).isComplete());
            assertTrue(await(store.replayProofAsync("otel-replay", "m")).isComplete());
            assertEquals(1, store.eventRange("otel-replay", "m", 2, 2).events().size());
            assertEquals(2, await(store.eventRangeAsync("otel-replay", "m", 1, 2, 0)).events().size());
        }
        app.end();

        List<SpanData> appends = named("append otel-es");
        assertEquals(List.of(0L, 1L, 2L, 0L), versions("append otel-es"));
        SpanData failed = appends.get(3);
        assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode());
        assertTrue(conflict instanceof io.cursus.ConflictException, conflict.toString());
        assertEquals(((io.cursus.CursusException) conflict).code(), failed.getAttributes().get(ERROR_TYPE));

        // streamVersion (both), readStreamAsync, three stream pages, two history pages,
        // readSnapshot (both), loadAggregate (both): each with the version it reads from.
        assertEquals(List.of(0L, 0L, 2L, 1L, 2L, 3L, 1L, 3L, 0L, 0L, 1L, 1L), versions("read otel-es"));
        List<SpanData> all = new ArrayList<>(appends);
        all.addAll(named("read otel-es"));
        all.addAll(named("read otel-replay"));
        for (SpanData s : all) {
            assertEquals(app.getSpanContext().getSpanId(), s.getParentSpanId(), s.getName());
            assertEquals(s.getName().startsWith("append") ? SpanKind.PRODUCER : SpanKind.CLIENT, s.getKind());
            assertEquals(s.getName().endsWith("otel-replay") ? "m" : "acct", s.getAttributes().get(AGGREGATE));
        }
        assertEquals(all.size() - 1, all.stream().filter(s -> s.getStatus().getStatusCode() == StatusCode.UNSET).count());

        SpanData nowhere = named("read otel-nowhere").get(0);
        assertEquals(StatusCode.ERROR, nowhere.getStatus().getStatusCode());
        assertEquals(((io.cursus.CursusException) missing).code(), nowhere.getAttributes().get(ERROR_TYPE));
        assertEquals(List.of(1L, 1L, 2L, 1L), versions("read otel-replay"));
    }

    /**
     * Every instrument collected is one of the engine's table for {@code kind}, with its unit
     * and kind, and every one-point instrument of the table is collected.
     */
    private static void assertFromTheTable(List<MetricData> collected, String kind) {
        List<Telemetry.Metric> table = Telemetry.metrics().stream().filter(m -> m.reportedBy(kind))
                .collect(Collectors.toList());
        for (MetricData d : collected) {
            Telemetry.Metric m = table.stream().filter(t -> t.name().equals(d.getName())).findFirst()
                    .orElseThrow(() -> new AssertionError(d.getName() + " is not in the engine's table for " + kind));
            assertEquals(m.unit(), d.getUnit(), m.name());
            assertEquals(m.kind().equals("counter") ? MetricDataType.LONG_SUM : MetricDataType.LONG_GAUGE, d.getType(),
                    m.name());
        }
        List<String> names = collected.stream().map(MetricData::getName).collect(Collectors.toList());
        for (Telemetry.Metric m : table) {
            if (m.breakdown().equals("none")) {
                assertTrue(names.contains(m.name()), m.name() + " not collected");
            }
        }
    }

    @Test
    void statisticsAreObservableInstruments() throws Exception {
        BROKER.createTopic("otel-metrics", 1);
        try (CursusProducer producer = new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                .clientId("otel-metrics-p").build())) {
            AutoCloseable observation = CursusMetrics.observe(otel, producer);
            producer.sendAndWait(ProducerRecord.of("otel-metrics", "x"));
            List<MetricData> collected = new ArrayList<>(metrics.collectAllMetrics());
            MetricData sent = collected.stream().filter(m -> m.getName().equals("messaging.client.sent.messages"))
                    .findFirst().orElseThrow(() -> new AssertionError("no sent messages in " + collected));
            assertEquals("cursus", sent.getInstrumentationScopeInfo().getName());
            LongPointData point = sent.getLongSumData().getPoints().iterator().next();
            assertEquals(1, point.getValue());
            assertEquals("otel-metrics-p", point.getAttributes().get(CLIENT_ID));
            assertTrue(collected.stream().anyMatch(m -> m.getName().equals("cursus.client.produce.latency.p99")));
            // A producer reports no consumer instruments.
            assertFalse(collected.stream().anyMatch(m -> m.getName().equals("messaging.client.consumed.messages")));
            assertFromTheTable(collected, "producer");
            observation.close();
        }
    }

    @Test
    void aConsumerReportsWhatItReceivedAndItsLag() throws Exception {
        BROKER.createTopic("otel-lag", 1);
        try (CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            for (int i = 0; i < 3; i++) {
                producer.sendAndWait(ProducerRecord.of("otel-lag", "r" + i));
            }
        }
        try (CursusConsumer plain = new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr())
                .groupId("otel-lag-g").clientId("otel-metrics-c").fetchMaxWaitMs(50).maxPollRecords(1).build())) {
            plain.subscribe(List.of("otel-lag"));
            AutoCloseable observation = CursusMetrics.observe(otel, plain);
            List<ConsumerRecord> got = pollAtLeast(tracing.consumer(plain, null), 1);
            assertEquals(1, got.size());
            List<MetricData> collected = new ArrayList<>(metrics.collectAllMetrics());
            MetricData lag = collected.stream().filter(m -> m.getName().equals("cursus.consumer.lag")).findFirst()
                    .orElseThrow(() -> new AssertionError("no lag in " + collected));
            LongPointData point = lag.getLongGaugeData().getPoints().iterator().next();
            assertEquals("otel-lag", point.getAttributes().get(DESTINATION));
            assertEquals("0", point.getAttributes().get(PARTITION));
            assertEquals("otel-metrics-c", point.getAttributes().get(CLIENT_ID));
            assertEquals(3 - got.get(0).offset() - 1, point.getValue());
            assertTrue(collected.stream().anyMatch(m -> m.getName().equals("messaging.client.consumed.messages")));
            assertFalse(collected.stream().anyMatch(m -> m.getName().equals("messaging.client.sent.messages")));
            assertFromTheTable(collected, "consumer");
            observation.close();
        }
    }

    @Test
    void withoutAnSdkRecordsCarryNoContext() throws Exception {
        BROKER.createTopic("otel-noop", 1);
        CursusTracing noop = CursusTracing.create(io.opentelemetry.api.OpenTelemetry.noop());
        try (CursusProducer plain = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            noop.producer(plain).sendAndWait(ProducerRecord.of("otel-noop", "x"));
        }
        try (CursusConsumer plain = consumer("otel-noop-g")) {
            plain.subscribe(List.of("otel-noop"));
            List<ConsumerRecord> got = pollAtLeast(noop.consumer(plain, null), 1);
            assertEquals(Optional.empty(), got.get(0).traceContext());
        }
        assertEquals(List.of(), spans.getFinishedSpanItems());
    }

    @Test
    void thePlainClassesNeverReferToOpenTelemetry() throws IOException {
        // io.cursus must work without opentelemetry-api on the class path: no class outside
        // io.cursus.otel names one of its types.
        Path classes = Paths.get(CursusProducer.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        List<Path> offenders;
        try (Stream<Path> files = Files.walk(classes.resolve("io/cursus"))) {
            offenders = files.filter(f -> f.toString().endsWith(".class"))
                    .filter(f -> !classes.relativize(f).startsWith(Paths.get("io/cursus/otel")))
                    .filter(f -> {
                        try {
                            return new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1)
                                    .contains("io/opentelemetry");
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    })
                    .collect(Collectors.toList());
        }
        assertEquals(List.of(), offenders);
    }
}
