package io.cursus.otel;

import io.cursus.Appended;
import io.cursus.CursusEventStore;
import io.cursus.Event;
import io.cursus.StreamRead;
import io.cursus.Telemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A {@link CursusEventStore} whose appends and stream reads are traced: an append span per
 * {@link #append}, a read span per {@link #readStream}, children of
 * {@code Context.current()}. Every other call goes to {@link #eventStore()}. Thread-safe, as
 * the store is.
 */
public final class TracingEventStore {
    private final CursusTracing tracing;
    private final CursusEventStore store;

    TracingEventStore(CursusTracing tracing, CursusEventStore store) {
        this.tracing = tracing;
        this.store = Objects.requireNonNull(store, "store");
    }

    /**
     * The wrapped event store, for the calls that are not traced.
     *
     * @return the event store
     */
    public CursusEventStore eventStore() {
        return store;
    }

    /**
     * {@link CursusEventStore#append} in an append span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param expectedVersion the aggregate's current version
     * @param event the event
     * @return the appended event's version and offset
     */
    public Appended append(String topic, String key, long expectedVersion, Event event) {
        return around(Telemetry.append(topic, key, expectedVersion),
                () -> store.append(topic, key, expectedVersion, event));
    }

    /**
     * {@link CursusEventStore#readStream(String, String, long)} in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return the snapshot, if any, and the events
     */
    public StreamRead readStream(String topic, String key, long fromVersion) {
        return around(Telemetry.read(topic, key, fromVersion), () -> store.readStream(topic, key, fromVersion));
    }

    /**
     * {@link CursusEventStore#readStream(String, String)} (from version 1) in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return the snapshot, if any, and the events
     */
    public StreamRead readStream(String topic, String key) {
        return readStream(topic, key, 1);
    }

    private <T> T around(Telemetry.SpanSpec spec, Supplier<T> call) {
        Span span = tracing.start(spec);
        try (Scope ignored = span.makeCurrent()) {
            return call.get();
        } catch (RuntimeException e) {
            CursusTracing.fail(span, e);
            throw e;
        } finally {
            span.end();
        }
    }
}
