package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The W3C trace context a record carries (docs/observability.md), without OpenTelemetry. */
class TraceContextTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static final String PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    private static CursusConsumer consumer(String group) {
        return new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr()).groupId(group)
                .fetchMaxWaitMs(50).build());
    }

    @Test
    void aContextIsCheckedByTheEngineAndSplitIntoItsFields() {
        TraceContext tc = TraceContext.of(PARENT, "vendor=opaque");
        assertEquals(PARENT, tc.traceparent());
        assertEquals("vendor=opaque", tc.tracestate());
        assertEquals("0af7651916cd43dd8448eb211c80319c", tc.traceId());
        assertEquals("b7ad6b7169203331", tc.spanId());
        assertTrue(tc.sampled());
        assertFalse(TraceContext.of(PARENT.substring(0, 53) + "00").sampled());
        assertNull(TraceContext.of(PARENT, "").tracestate());
        assertEquals(tc, TraceContext.of(PARENT, "vendor=opaque"));
        for (String bad : List.of("", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
                "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")) {
            ValidationException e = assertThrows(ValidationException.class, () -> TraceContext.of(bad));
            assertEquals("invalid_trace_context", e.code());
        }
        ValidationException e = assertThrows(ValidationException.class, () -> TraceContext.of(PARENT, "é"));
        assertEquals("invalid_trace_context", e.code());
    }

    /** Four records of {@code topic}: metadata and a context, a context alone, metadata alone, neither. */
    private static List<ProducerRecord> fourRecords(String topic) {
        return List.of(
                ProducerRecord.of(topic, "a").withMetadata("{\"tenant\":\"acme\"}")
                        .withTraceContext(TraceContext.of(PARENT, "vendor=opaque")),
                ProducerRecord.of(topic, "b").withTraceContext(TraceContext.of(PARENT)),
                ProducerRecord.of(topic, "c").withMetadata("plain text"),
                ProducerRecord.of(topic, "d"));
    }

    /** Consumes the {@link #fourRecords} of {@code topic} and checks what each carries. */
    private static void assertFourRecordsCarried(String topic) {
        try (CursusConsumer consumer = consumer(topic + "-g")) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord> got = Polling.pollAtLeast(consumer, 4);
            assertEquals(4, got.size());
            assertEquals(Optional.of(TraceContext.of(PARENT, "vendor=opaque")), got.get(0).traceContext());
            // The application's own metadata kept next to the context.
            assertTrue(got.get(0).metadata().contains("\"tenant\":\"acme\""), got.get(0).metadata());
            assertTrue(got.get(0).metadata().contains(PARENT), got.get(0).metadata());
            assertEquals(Optional.of(TraceContext.of(PARENT)), got.get(1).traceContext());
            assertEquals("plain text", got.get(2).metadata());
            assertEquals(Optional.empty(), got.get(2).traceContext());
            assertNull(got.get(3).metadata());
            assertEquals(Optional.empty(), got.get(3).traceContext());
        }
    }

    @Test
    void aSentContextComesBackWithTheRecordAndItsMetadata() throws Exception {
        BROKER.createTopic("traced", 1);
        List<ProducerRecord> records = fourRecords("traced");
        try (CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            // The future form, then the blocking form.
            producer.send(records.get(0)).get(30, TimeUnit.SECONDS);
            for (ProducerRecord r : records.subList(1, 4)) {
                producer.sendAndWait(r);
            }
        }
        assertFourRecordsCarried("traced");
    }

    @Test
    void aBatchCarriesEachRecordsContextAndMetadata() throws Exception {
        BROKER.createTopic("traced-batch", 1);
        try (CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            List<RecordMetadata> mds = producer.sendBatch(fourRecords("traced-batch")).get(30, TimeUnit.SECONDS);
            assertEquals(3L, mds.get(3).offset());
        }
        assertFourRecordsCarried("traced-batch");
    }

    @Test
    void theSpansAreTheEnginesDeclarations() {
        Telemetry.SpanSpec publish = Telemetry.publish(ProducerRecord.of("orders", "k", "v").withPartition(2), "app");
        assertEquals("publish orders", publish.name());
        assertEquals("producer", publish.kind());
        assertTrue(publish.attributes().contains(new Telemetry.Attribute("messaging.destination.partition.id", "2")));
        assertTrue(publish.attributes().contains(new Telemetry.Attribute("messaging.message.body.size", 1L)));
        assertEquals("cursus", Telemetry.scope());
        assertEquals("messaging.client.id", Telemetry.metricAttribute("client_id"));
        assertThrows(ValidationException.class, () -> Telemetry.metricAttribute("nope"));
    }

    private static Telemetry.Metric metricOf(String field) {
        return Telemetry.metrics().stream().filter(m -> m.field().equals(field)).findFirst().orElseThrow();
    }

    @Test
    void theMetricsAreTheEnginesTable() {
        assertEquals(new Telemetry.Metric("messaging.client.sent.messages", "records_sent", "{message}", "counter",
                "producer", "none"), metricOf("records_sent"));
        assertEquals(new Telemetry.Metric("cursus.consumer.lag", "partitions.lag", "{message}", "gauge", "consumer",
                "partition"), metricOf("partitions.lag"));
        assertEquals(Telemetry.metrics().size(),
                Telemetry.metrics().stream().map(Telemetry.Metric::name).distinct().count());
    }

    @Test
    void everyMetricReadsAFieldOfTheStatistics() {
        Statistics.Latency none = new Statistics.Latency(0, 0, 0, 0, 0);
        Statistics s = new Statistics("c", "consumer", 0, 0, 0, 3, 0, 0, 0, 0, Map.of(ErrorClass.ROUTING, 2L),
                none, new Statistics.Latency(1, 7, 8, 9, 10),
                List.of(new Statistics.PartitionLag("t", 1, OptionalLong.of(4), 9, OptionalLong.of(5)),
                        new Statistics.PartitionLag("t", 2, OptionalLong.empty(), 9, OptionalLong.empty())),
                "{}");
        for (Telemetry.Metric m : Telemetry.metrics()) {
            List<Telemetry.MetricPoint> points = m.points(s);
            if (!m.reportedBy("consumer")) {
                assertEquals(List.of(), points, m.name());
            } else if (m.breakdown().equals("none")) {
                assertEquals(1, points.size(), m.name());
            }
        }
        assertEquals(List.of(new Telemetry.MetricPoint(3, Map.of("messaging.client.id", "c"))),
                metricOf("records_received").points(s));
        assertEquals(List.of(new Telemetry.MetricPoint(10, Map.of("messaging.client.id", "c"))),
                metricOf("fetch_latency.max_us").points(s));
        assertEquals(List.of(new Telemetry.MetricPoint(2, Map.of("messaging.client.id", "c", "error.type", "routing"))),
                metricOf("errors").points(s));
        // A partition whose lag is unknown has no point.
        assertEquals(List.of(new Telemetry.MetricPoint(5, Map.of("messaging.client.id", "c",
                "messaging.destination.name", "t", "messaging.destination.partition.id", "1"))),
                metricOf("partitions.lag").points(s));
    }
}
