package io.cursus.otel;

import io.cursus.ConsumerRecord;
import io.cursus.CursusConsumer;
import io.cursus.Telemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A {@link CursusConsumer} whose polls are traced: a receive span per poll that returned
 * records (none for an empty poll), from the call to its return, a child of
 * {@code Context.current()} and linked to each record's trace context; {@link #process}
 * records a process span per record, a child of the record's context. Every other call goes
 * to {@link #consumer()}. Used as the consumer is (one thread at a time).
 */
public final class TracingConsumer {
    private final CursusTracing tracing;
    private final CursusConsumer consumer;
    private final String group;

    TracingConsumer(CursusTracing tracing, CursusConsumer consumer, String group) {
        this.tracing = tracing;
        this.consumer = Objects.requireNonNull(consumer, "consumer");
        this.group = group;
    }

    /**
     * The wrapped consumer, for the calls that are not traced.
     *
     * @return the consumer
     */
    public CursusConsumer consumer() {
        return consumer;
    }

    /**
     * {@link CursusConsumer#poll(Duration)}, with a receive span when records came.
     *
     * @param timeout how long to wait for records
     * @return the records
     */
    public List<ConsumerRecord> poll(Duration timeout) {
        Instant started = Instant.now();
        return received(started, consumer.poll(timeout));
    }

    /**
     * {@link CursusConsumer#poll(Duration, int)}, with a receive span when records came.
     *
     * @param timeout how long to wait for records
     * @param maxRecords the most records to return
     * @return the records
     */
    public List<ConsumerRecord> poll(Duration timeout, int maxRecords) {
        Instant started = Instant.now();
        return received(started, consumer.poll(timeout, maxRecords));
    }

    private List<ConsumerRecord> received(Instant started, List<ConsumerRecord> records) {
        if (!records.isEmpty()) {
            SpanBuilder b = tracing.builder(Telemetry.receive(records, group)).setStartTimestamp(started);
            CursusTracing.link(b, records);
            b.startSpan().end();
        }
        return records;
    }

    /**
     * Starts the process span of {@code record}: a child of the span that sent it (of
     * {@code Context.current()} when it carries no context). End it when the record is
     * handled; {@link #process(ConsumerRecord, Consumer)} does it all.
     *
     * @param record a record a poll returned
     * @return the started span (not made current)
     */
    public Span startProcess(ConsumerRecord record) {
        SpanBuilder b = tracing.builder(Telemetry.process(record, group));
        SpanContext sent = CursusTracing.spanContextOf(record);
        if (sent.isValid()) {
            b.setParent(Context.current().with(Span.wrap(sent)));
        }
        return b.startSpan();
    }

    /**
     * Runs {@code handler} on {@code record} in its process span (current inside the handler);
     * an exception the handler throws marks the span failed and propagates.
     *
     * @param record a record a poll returned
     * @param handler what handles it
     */
    public void process(ConsumerRecord record, Consumer<ConsumerRecord> handler) {
        CursusTracing.around(startProcess(record), () -> {
            handler.accept(record);
            return null;
        });
    }
}
