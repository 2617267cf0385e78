package io.cursus.otel;

import io.cursus.CursusConsumer;
import io.cursus.CursusException;
import io.cursus.CursusProducer;
import io.cursus.ErrorClass;
import io.cursus.Statistics;
import io.cursus.Telemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.BatchCallback;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import io.opentelemetry.api.metrics.ObservableMeasurement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * A client's statistics as OpenTelemetry observable instruments of the meter {@code cursus}
 * (docs/observability.md, "Statistics"; the names are the engine's,
 * {@link Telemetry#metricName}): the counters of records, bytes and batches sent or received,
 * requests, retries and errors (by class), the gauge of requests in flight, the produce or
 * fetch latency percentiles and, for a consumer, the lag per partition. Every point carries
 * the client's {@code messaging.client.id}: give each observed client its own
 * {@code client_id}. The client's {@code statistics()} is read once per collection (a
 * consumer's asks the broker for end offsets).
 *
 * <pre>{@code
 * AutoCloseable observation = CursusMetrics.observe(openTelemetry, producer);
 * ...
 * observation.close();   // before closing the producer
 * }</pre>
 */
public final class CursusMetrics {
    private CursusMetrics() {}

    /** A counter of the snapshot: its statistics field, unit, the client kind it applies to. */
    private record Counter(String statistic, String unit, String kind, ToLongFunction<Statistics> value) {}

    private static final List<Counter> COUNTERS = List.of(
            new Counter("records_sent", "{message}", "producer", Statistics::recordsSent),
            new Counter("records_received", "{message}", "consumer", Statistics::recordsReceived),
            new Counter("bytes_sent", "By", "producer", Statistics::bytesSent),
            new Counter("bytes_received", "By", "consumer", Statistics::bytesReceived),
            new Counter("batches_sent", "{batch}", "producer", Statistics::batchesSent),
            new Counter("requests", "{request}", null, Statistics::requests),
            new Counter("retries", "{request}", null, Statistics::retries));

    /** A latency gauge's suffix and value. */
    private record Percentile(String suffix, ToLongFunction<Statistics.Latency> value) {}

    private static final List<Percentile> PERCENTILES = List.of(
            new Percentile("p50", Statistics.Latency::p50Us),
            new Percentile("p99", Statistics.Latency::p99Us),
            new Percentile("p999", Statistics.Latency::p999Us),
            new Percentile("max", Statistics.Latency::maxUs));

    /**
     * Observes a producer's statistics with {@code openTelemetry}'s meter provider.
     *
     * @param openTelemetry the OpenTelemetry instance
     * @param producer the producer
     * @return closes the observation (close it before the producer)
     */
    public static AutoCloseable observe(OpenTelemetry openTelemetry, CursusProducer producer) {
        Objects.requireNonNull(producer, "producer");
        return observe(openTelemetry, "producer", producer::statistics);
    }

    /**
     * Observes a consumer's statistics (with the lag of each assigned partition) with
     * {@code openTelemetry}'s meter provider.
     *
     * @param openTelemetry the OpenTelemetry instance
     * @param consumer the consumer
     * @return closes the observation (close it before the consumer)
     */
    public static AutoCloseable observe(OpenTelemetry openTelemetry, CursusConsumer consumer) {
        Objects.requireNonNull(consumer, "consumer");
        return observe(openTelemetry, "consumer", consumer::statistics);
    }

    private static AutoCloseable observe(OpenTelemetry openTelemetry, String kind, Supplier<Statistics> statistics) {
        Meter meter = openTelemetry.getMeter(Telemetry.scope());
        AttributeKey<String> clientId = AttributeKey.stringKey(Telemetry.metricAttribute("client_id"));
        AttributeKey<String> errorType = AttributeKey.stringKey(Telemetry.metricAttribute("error_type"));
        AttributeKey<String> topic = AttributeKey.stringKey(Telemetry.metricAttribute("topic"));
        AttributeKey<String> partition = AttributeKey.stringKey(Telemetry.metricAttribute("partition"));

        List<ObservableMeasurement> all = new ArrayList<>();
        List<Counter> counters = COUNTERS.stream().filter(c -> c.kind() == null || c.kind().equals(kind)).toList();
        List<ObservableLongMeasurement> counterMeasurements = new ArrayList<>();
        for (Counter c : counters) {
            counterMeasurements.add(meter.counterBuilder(Telemetry.metricName(c.statistic())).setUnit(c.unit())
                    .buildObserver());
        }
        all.addAll(counterMeasurements);
        ObservableLongMeasurement errors = meter.counterBuilder(Telemetry.metricName("errors"))
                .setUnit("{request}").buildObserver();
        ObservableLongMeasurement inFlight = meter.gaugeBuilder(Telemetry.metricName("in_flight_requests"))
                .ofLongs().setUnit("{request}").buildObserver();
        boolean producer = kind.equals("producer");
        String latencyPrefix = Telemetry.metricName(producer ? "produce_latency" : "fetch_latency");
        List<ObservableLongMeasurement> latencies = new ArrayList<>();
        for (Percentile p : PERCENTILES) {
            latencies.add(meter.gaugeBuilder(latencyPrefix + "." + p.suffix()).ofLongs().setUnit("us").buildObserver());
        }
        all.add(errors);
        all.add(inFlight);
        all.addAll(latencies);
        ObservableLongMeasurement lag = null;
        if (!producer) {
            lag = meter.gaugeBuilder(Telemetry.metricName("lag")).ofLongs().setUnit("{message}").buildObserver();
            all.add(lag);
        }
        ObservableLongMeasurement lagMeasurement = lag;

        Runnable collect = () -> {
            Statistics s;
            try {
                s = statistics.get();
            } catch (CursusException e) {
                return; // a closed client reports nothing
            }
            Attributes client = Attributes.of(clientId, s.clientId());
            for (int i = 0; i < counters.size(); i++) {
                counterMeasurements.get(i).record(counters.get(i).value().applyAsLong(s), client);
            }
            for (Map.Entry<ErrorClass, Long> e : s.errors().entrySet()) {
                errors.record(e.getValue(), client.toBuilder().put(errorType, e.getKey().wireName()).build());
            }
            inFlight.record(s.inFlightRequests(), client);
            Statistics.Latency latency = producer ? s.produceLatency() : s.fetchLatency();
            for (int i = 0; i < PERCENTILES.size(); i++) {
                latencies.get(i).record(PERCENTILES.get(i).value().applyAsLong(latency), client);
            }
            if (lagMeasurement != null) {
                for (Statistics.PartitionLag p : s.partitions()) {
                    if (p.lag().isPresent()) {
                        lagMeasurement.record(p.lag().getAsLong(), client.toBuilder().put(topic, p.topic())
                                .put(partition, String.valueOf(p.partition())).build());
                    }
                }
            }
        };
        BatchCallback callback = meter.batchCallback(collect, all.get(0),
                all.subList(1, all.size()).toArray(new ObservableMeasurement[0]));
        return callback::close;
    }
}
