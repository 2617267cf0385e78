package io.cursus.otel;

import io.cursus.CursusConsumer;
import io.cursus.CursusException;
import io.cursus.CursusProducer;
import io.cursus.Statistics;
import io.cursus.Telemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.BatchCallback;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import io.opentelemetry.api.metrics.ObservableMeasurement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A client's statistics as OpenTelemetry observable instruments of the meter {@code cursus}
 * (docs/observability.md, "Metrics"): the instruments of the engine's metric table,
 * {@link Telemetry#metrics()}, with its names, units, kinds and points, so this layer declares
 * none of its own. A producer reports the producer instruments and the request ones, a
 * consumer the consumer ones (with the lag per partition). Every point carries the client's
 * {@code messaging.client.id}: give each observed client its own {@code client_id}. The
 * client's {@code statistics()} is read once per collection (a consumer's asks the broker for
 * end offsets).
 *
 * <pre>{@code
 * AutoCloseable observation = CursusMetrics.observe(openTelemetry, producer);
 * ...
 * observation.close();   // before closing the producer
 * }</pre>
 */
public final class CursusMetrics {
    private CursusMetrics() {}

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
        List<Telemetry.Metric> reported = Telemetry.metrics().stream().filter(m -> m.reportedBy(kind)).toList();
        List<ObservableLongMeasurement> measurements = new ArrayList<>(reported.size());
        for (Telemetry.Metric m : reported) {
            measurements.add(instrument(meter, m));
        }
        Runnable collect = () -> {
            Statistics s;
            try {
                s = statistics.get();
            } catch (CursusException e) {
                return; // a closed client reports nothing
            }
            for (int i = 0; i < reported.size(); i++) {
                for (Telemetry.MetricPoint p : reported.get(i).points(s)) {
                    measurements.get(i).record(p.value(), attributes(p));
                }
            }
        };
        BatchCallback callback = meter.batchCallback(collect, measurements.get(0),
                measurements.subList(1, measurements.size()).toArray(new ObservableMeasurement[0]));
        return callback::close;
    }

    /** The observable instrument of {@code metric}: a monotonic counter or a gauge. */
    private static ObservableLongMeasurement instrument(Meter meter, Telemetry.Metric metric) {
        switch (metric.kind()) {
            case "counter":
                return meter.counterBuilder(metric.name()).setUnit(metric.unit()).buildObserver();
            case "gauge":
                return meter.gaugeBuilder(metric.name()).ofLongs().setUnit(metric.unit()).buildObserver();
            default:
                throw new IllegalStateException("metric " + metric.name() + ": unknown kind " + metric.kind());
        }
    }

    private static Attributes attributes(Telemetry.MetricPoint point) {
        AttributesBuilder b = Attributes.builder();
        for (Map.Entry<String, String> a : point.attributes().entrySet()) {
            b.put(a.getKey(), a.getValue());
        }
        return b.build();
    }
}
