package io.cursus;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The spans and metrics a tracing layer records, as the engine declares them once for every
 * Cursus language ({@code core/src/telemetry.rs}; docs/observability.md, "Spans"): a layer asks
 * for the {@link SpanSpec} of an operation and starts a span of its own tracing API with that
 * name, kind and those attributes, so it declares no span name or attribute key of its own.
 * {@code io.cursus.otel} is the OpenTelemetry layer built on this; this class itself needs no
 * OpenTelemetry. Thread-safe.
 */
public final class Telemetry {
    private Telemetry() {}

    /**
     * A span to start (name, kind, attributes), or attributes alone to add to a started span
     * (then the name is empty).
     *
     * @param name the span's name ({@code "publish orders"}); empty for attributes alone
     * @param kind {@code producer}, {@code consumer} or {@code client}
     * @param attributes the attributes, in the engine's order, immutable
     */
    public record SpanSpec(String name, String kind, List<Attribute> attributes) {
        /**
         * Checks the arguments.
         *
         * @param name the span's name
         * @param kind the span's kind
         * @param attributes the attributes
         */
        public SpanSpec {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(kind, "kind");
            attributes = List.copyOf(attributes);
        }
    }

    /**
     * One attribute: a string or an integer value.
     *
     * @param key the attribute key ({@code messaging.destination.name}, ...)
     * @param value a {@link String} or a {@link Long}
     */
    public record Attribute(String key, Object value) {
        /**
         * Checks the arguments.
         *
         * @param key the key
         * @param value a String or a Long
         */
        public Attribute {
            Objects.requireNonNull(key, "key");
            if (!(value instanceof String || value instanceof Long)) {
                throw new IllegalArgumentException("an attribute value is a String or a Long");
            }
        }
    }

    /** Reads a span spec handle and releases it. */
    private static SpanSpec spec(long handle) {
        try {
            int n = NativeBridge.spanSpecAttributeCount(handle);
            List<Attribute> attributes = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String key = NativeBridge.spanSpecAttributeKey(handle, i);
                String s = NativeBridge.spanSpecAttributeString(handle, i);
                attributes.add(new Attribute(key, s != null ? s : (Object) NativeBridge.spanSpecAttributeInt(handle, i)));
            }
            return new SpanSpec(NativeBridge.spanSpecName(handle), NativeBridge.spanSpecKind(handle),
                    Collections.unmodifiableList(attributes));
        } finally {
            NativeBridge.spanSpecDestroy(handle);
        }
    }

    /**
     * The instrumentation scope: the tracer and meter name ({@code cursus}).
     *
     * @return the scope name
     */
    public static String scope() {
        return NativeBridge.spanScope();
    }

    /**
     * The publish span of a send of {@code record}: started at the send, ended at the
     * acknowledgement.
     *
     * @param record the record sent
     * @param clientId the producer's {@code client_id}, or null for none
     * @return the span to start
     */
    public static SpanSpec publish(ProducerRecord record, String clientId) {
        int partition = record.partition() == null ? -1 : record.partition();
        return spec(NativeBridge.spanPublish(record.topic(), partition, record.key(), record.value().length,
                clientId == null || clientId.isEmpty() ? null : clientId));
    }

    /**
     * What a publish span adds when its record is acknowledged.
     *
     * @param metadata where the record was stored
     * @return attributes alone
     */
    public static SpanSpec acknowledged(RecordMetadata metadata) {
        return spec(NativeBridge.spanAcknowledged(metadata.partition(), metadata.offset()));
    }

    /**
     * The receive span of one poll that returned {@code records}.
     *
     * @param records the records the poll returned (not empty)
     * @param group the consumer group, or null for none
     * @return the span to start (link it to each record's trace context)
     */
    public static SpanSpec receive(List<ConsumerRecord> records, String group) {
        String[] topics = records.stream().map(ConsumerRecord::topic).distinct().toArray(String[]::new);
        return spec(NativeBridge.spanReceive(topics, records.size(), group));
    }

    /**
     * The process span of one received record: a child of the record's trace context.
     *
     * @param record the record
     * @param group the consumer group, or null for none
     * @return the span to start
     */
    public static SpanSpec process(ConsumerRecord record, String group) {
        return spec(NativeBridge.spanProcess(record.topic(), record.partition(), record.offset(), record.key(),
                record.value().length, group));
    }

    /**
     * The span of a transaction's commit or abort.
     *
     * @param transactionalId the producer's {@code transactional_id}
     * @param commit true for a commit, false for an abort
     * @return the span to start
     */
    public static SpanSpec endTransaction(String transactionalId, boolean commit) {
        return spec(NativeBridge.spanEndTransaction(transactionalId == null ? "" : transactionalId, commit));
    }

    /**
     * The span of an event-store append.
     *
     * @param topic the event-sourcing topic
     * @param aggregate the aggregate key
     * @param expectedVersion the version the append expects
     * @return the span to start
     */
    public static SpanSpec append(String topic, String aggregate, long expectedVersion) {
        return spec(NativeBridge.spanAppend(topic, aggregate, expectedVersion));
    }

    /**
     * The span of an event-store read of one aggregate.
     *
     * @param topic the event-sourcing topic
     * @param aggregate the aggregate key
     * @param fromVersion the first version read
     * @return the span to start
     */
    public static SpanSpec read(String topic, String aggregate, long fromVersion) {
        return spec(NativeBridge.spanRead(topic, aggregate, fromVersion));
    }

    /**
     * What the span of a failed operation adds ({@code error.type}): the
     * {@link CursusException#code() code} of a Cursus error, the class name of any other.
     * The layer also sets the span's status to error.
     *
     * @param error the failure
     * @return attributes alone
     */
    public static SpanSpec failed(Throwable error) {
        String code = error instanceof CursusException e && e.code() != null ? e.code()
                : error.getClass().getName();
        return spec(NativeBridge.spanFailed(code));
    }

    /**
     * The metric a statistics field is reported as (docs/observability.md, "Statistics"):
     * {@code records_sent}, {@code bytes_sent}, {@code batches_sent}, {@code records_received},
     * {@code bytes_received}, {@code requests}, {@code retries}, {@code errors},
     * {@code in_flight_requests}, {@code lag}; for {@code produce_latency} and
     * {@code fetch_latency} the prefix of the {@code .p50}, {@code .p99}, {@code .p999} and
     * {@code .max} gauges.
     *
     * @param statistic the statistics field, as the docs name it
     * @return the metric name
     * @throws ValidationException if the field has no metric
     */
    public static String metricName(String statistic) {
        return NativeBridge.telemetryMetricName(statistic);
    }

    /**
     * The attribute key of a metric point's {@code client_id}, {@code error_type},
     * {@code topic} or {@code partition}.
     *
     * @param attribute one of those names
     * @return the attribute key
     * @throws ValidationException if the name is unknown
     */
    public static String metricAttribute(String attribute) {
        return NativeBridge.telemetryMetricAttribute(attribute);
    }
}
