package io.cursus;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

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
     * One instrument a layer reports a client's statistics as, as the engine's metric table
     * declares it ({@code core/src/telemetry.rs}, {@code metrics::ALL}; docs/observability.md,
     * "Metrics"): {@link #metrics()} lists them in the order a layer registers them.
     *
     * @param name the instrument name ({@code messaging.client.sent.messages}, ...)
     * @param field the {@link Statistics} field it reads, the engine's field names joined by
     *     dots ({@code records_sent}, {@code produce_latency.p50_us}, {@code partitions.lag})
     * @param unit the UCUM unit ({@code {message}}, {@code By}, {@code us}, ...)
     * @param kind {@code counter} (monotonic) or {@code gauge}
     * @param client the kind of client that reports it ({@code producer}, {@code consumer}), or
     *     null for every client
     * @param breakdown {@code none} (one point), {@code error_type} (one per error class) or
     *     {@code partition} (one per partition with a known lag)
     */
    public record Metric(String name, String field, String unit, String kind, String client, String breakdown) {
        /**
         * Checks the arguments.
         *
         * @param name the instrument name
         * @param field the statistics field
         * @param unit the unit
         * @param kind counter or gauge
         * @param client the kind of client, or null for every client
         * @param breakdown none, error_type or partition
         */
        public Metric {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(field, "field");
            Objects.requireNonNull(unit, "unit");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(breakdown, "breakdown");
        }

        /**
         * Whether a client of {@code clientKind} reports this instrument.
         *
         * @param clientKind a snapshot's {@link Statistics#kind()}
         * @return true when it does
         */
        public boolean reportedBy(String clientKind) {
            return client == null || client.equals(clientKind);
        }

        /**
         * This instrument's points in a snapshot, as the engine computes them
         * ({@code Metric::points}): none when the snapshot's client is not of its kind; each
         * with the client's id, and the error class or the topic and partition its breakdown
         * adds.
         *
         * @param statistics the snapshot
         * @return the points, in the snapshot's order
         * @throws IllegalStateException if {@link Statistics} has no such field (the engine's
         *     table and this binding disagree)
         */
        public List<MetricPoint> points(Statistics statistics) {
            if (!reportedBy(statistics.kind())) {
                return List.of();
            }
            List<MetricPoint> out = new ArrayList<>();
            switch (breakdown) {
                case "none" -> out.add(new MetricPoint(((Number) field(statistics, field)).longValue(),
                        attributes(statistics)));
                case "error_type" -> {
                    for (Map.Entry<?, ?> e : ((Map<?, ?>) field(statistics, field)).entrySet()) {
                        String errorClass = e.getKey() instanceof ErrorClass c ? c.wireName() : e.getKey().toString();
                        out.add(new MetricPoint(((Number) e.getValue()).longValue(),
                                attributes(statistics, MetricKeys.ERROR_TYPE, errorClass)));
                    }
                }
                case "partition" -> {
                    int dot = field.lastIndexOf('.');
                    for (Object row : (List<?>) field(statistics, field.substring(0, dot))) {
                        Statistics.PartitionLag p = (Statistics.PartitionLag) row;
                        OptionalLong value = (OptionalLong) field(p, field.substring(dot + 1));
                        if (value.isPresent()) {
                            out.add(new MetricPoint(value.getAsLong(), attributes(statistics, MetricKeys.TOPIC,
                                    p.topic(), MetricKeys.PARTITION, String.valueOf(p.partition()))));
                        }
                    }
                }
                default -> throw new IllegalStateException("metric " + name + ": unknown breakdown " + breakdown);
            }
            return Collections.unmodifiableList(out);
        }

        /** The client id, then {@code more} as key, value pairs. */
        private static Map<String, String> attributes(Statistics statistics, String... more) {
            Map<String, String> out = new LinkedHashMap<>();
            out.put(MetricKeys.CLIENT_ID, statistics.clientId());
            for (int i = 0; i < more.length; i += 2) {
                out.put(more[i], more[i + 1]);
            }
            return Collections.unmodifiableMap(out);
        }

        /**
         * The field {@code path} (the engine's snake_case names joined by dots) of a record:
         * each name is the record component of the same name in camelCase, as the engine's
         * statistics fields and {@link Statistics}'s components are named alike.
         */
        private static Object field(Object value, String path) {
            for (String name : path.split("\\.")) {
                value = component(value, camelCase(name));
            }
            return value;
        }

        private static Object component(Object record, String name) {
            for (RecordComponent c : record.getClass().getRecordComponents()) {
                if (c.getName().equals(name)) {
                    try {
                        return c.getAccessor().invoke(record);
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalStateException("reading " + name, e);
                    }
                }
            }
            throw new IllegalStateException(record.getClass().getSimpleName() + " has no field " + name);
        }

        private static String camelCase(String snake) {
            StringBuilder b = new StringBuilder(snake.length());
            boolean upper = false;
            for (char c : snake.toCharArray()) {
                if (c == '_') {
                    upper = true;
                } else {
                    b.append(upper ? Character.toUpperCase(c) : c);
                    upper = false;
                }
            }
            return b.toString();
        }
    }

    /**
     * One point of a {@link Metric}: a value and its attributes.
     *
     * @param value the value
     * @param attributes the attribute keys ({@code messaging.client.id}, ...) and values, in the
     *     engine's order, immutable
     */
    public record MetricPoint(long value, Map<String, String> attributes) {
        /**
         * Checks the arguments.
         *
         * @param value the value
         * @param attributes the attributes
         */
        public MetricPoint {
            Objects.requireNonNull(attributes, "attributes");
        }
    }

    /** The metric point attribute keys, as the engine declares them (read once). */
    private static final class MetricKeys {
        static final String CLIENT_ID = metricAttribute("client_id");
        static final String ERROR_TYPE = metricAttribute("error_type");
        static final String TOPIC = metricAttribute("topic");
        static final String PARTITION = metricAttribute("partition");
    }

    /** The engine's metric table, read once through the bridge. */
    private static final class MetricTable {
        static final List<Metric> ALL = read();

        private static List<Metric> read() {
            List<Metric> out = new ArrayList<>();
            long n = NativeBridge.metricCount();
            for (long i = 0; i < n; i++) {
                long h = NativeBridge.metric(i);
                try {
                    out.add(new Metric(NativeBridge.metricName(h), NativeBridge.metricField(h),
                            NativeBridge.metricUnit(h), NativeBridge.metricKind(h), NativeBridge.metricClient(h),
                            NativeBridge.metricBreakdown(h)));
                } finally {
                    NativeBridge.metricDestroy(h);
                }
            }
            return List.copyOf(out);
        }
    }

    /**
     * Every instrument a layer reports a client's statistics as, in the order the engine
     * declares them: a layer registers each {@link Metric} and records its
     * {@link Metric#points points}, so it names no instrument, unit or attribute of its own.
     *
     * @return the engine's metric table, immutable
     */
    public static List<Metric> metrics() {
        return MetricTable.ALL;
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
