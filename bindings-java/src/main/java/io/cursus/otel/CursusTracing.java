package io.cursus.otel;

import io.cursus.ConsumerRecord;
import io.cursus.CursusConsumer;
import io.cursus.CursusEventStore;
import io.cursus.CursusProducer;
import io.cursus.Telemetry;
import io.cursus.TraceContext;
import io.cursus.ValidationException;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Traces Cursus clients with one OpenTelemetry instance: wrap each client with
 * {@link #producer}, {@link #consumer} or {@link #eventStore}. The tracer is named
 * {@link Telemetry#scope()} ({@code cursus}). Thread-safe.
 *
 * <pre>{@code
 * CursusTracing tracing = CursusTracing.create(openTelemetry);
 * TracingProducer producer = tracing.producer(new CursusProducer(config));
 * producer.send(ProducerRecord.of("orders", "paid"));   // publish span, ended at the ack
 *
 * TracingConsumer consumer = tracing.consumer(new CursusConsumer(cconfig), "billing");
 * for (ConsumerRecord r : consumer.poll(Duration.ofSeconds(1))) {  // receive span, linked
 *     consumer.process(r, this::handle);                             // process span, child
 * }
 * }</pre>
 */
public final class CursusTracing {
    /** The record carries the W3C fields, whatever propagator the application uses elsewhere. */
    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

    private static final TextMapGetter<Map<String, String>> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final Tracer tracer;

    private CursusTracing(Tracer tracer) {
        this.tracer = tracer;
    }

    /**
     * Traces with {@code openTelemetry}'s tracer provider.
     *
     * @param openTelemetry the OpenTelemetry instance
     * @return the tracing
     */
    public static CursusTracing create(OpenTelemetry openTelemetry) {
        Objects.requireNonNull(openTelemetry, "openTelemetry");
        return new CursusTracing(openTelemetry.getTracer(Telemetry.scope()));
    }

    /**
     * Traces with {@link GlobalOpenTelemetry}.
     *
     * @return the tracing
     */
    public static CursusTracing global() {
        return create(GlobalOpenTelemetry.get());
    }

    /**
     * Traces a producer's sends (its {@code client_id} on the publish spans).
     *
     * @param producer the producer
     * @return the traced producer
     */
    public TracingProducer producer(CursusProducer producer) {
        return producer(producer, null);
    }

    /**
     * Traces a transactional producer: its sends, commits and aborts.
     *
     * @param producer the producer
     * @param transactionalId its {@code transactional_id}, recorded on commit and abort spans
     *     (null for none)
     * @return the traced producer
     */
    public TracingProducer producer(CursusProducer producer, String transactionalId) {
        return new TracingProducer(this, producer, transactionalId);
    }

    /**
     * Traces a consumer's polls.
     *
     * @param consumer the consumer
     * @param group its {@code group_id}, recorded on receive and process spans (null for none)
     * @return the traced consumer
     */
    public TracingConsumer consumer(CursusConsumer consumer, String group) {
        return new TracingConsumer(this, consumer, group);
    }

    /**
     * Traces an event store's appends and reads.
     *
     * @param store the event store
     * @return the traced event store
     */
    public TracingEventStore eventStore(CursusEventStore store) {
        return new TracingEventStore(this, store);
    }

    /** A builder of the span of {@code spec}, with its kind and attributes. */
    SpanBuilder builder(Telemetry.SpanSpec spec) {
        return tracer.spanBuilder(spec.name()).setSpanKind(kind(spec.kind())).setAllAttributes(attributes(spec));
    }

    /** The attributes of {@code spec} as OpenTelemetry's. */
    private static Attributes attributes(Telemetry.SpanSpec spec) {
        AttributesBuilder b = Attributes.builder();
        for (Telemetry.Attribute a : spec.attributes()) {
            if (a.value() instanceof Long n) {
                b.put(a.key(), n.longValue());
            } else {
                b.put(a.key(), (String) a.value());
            }
        }
        return b.build();
    }

    /** Starts the span of {@code spec}, a child of the current context. */
    Span start(Telemetry.SpanSpec spec) {
        return builder(spec).startSpan();
    }

    private static SpanKind kind(String kind) {
        switch (kind) {
            case "producer":
                return SpanKind.PRODUCER;
            case "consumer":
                return SpanKind.CONSUMER;
            default:
                return SpanKind.CLIENT;
        }
    }

    /** Adds attributes alone (an acknowledgement's, a failure's) to a started span. */
    static void add(Span span, Telemetry.SpanSpec attributes) {
        span.setAllAttributes(attributes(attributes));
    }

    /** Marks a span failed: status error and {@code error.type}. */
    static void fail(Span span, Throwable error) {
        Throwable cause = unwrap(error);
        add(span, Telemetry.failed(cause));
        span.setStatus(StatusCode.ERROR, String.valueOf(cause.getMessage()));
    }

    /** Ends a span with an outcome (null: success). */
    static void end(Span span, Throwable error) {
        if (error != null) {
            fail(span, error);
        }
        span.end();
    }

    /**
     * Runs {@code call} with {@code span} current and ends the span; a failure marks the span
     * failed and propagates.
     */
    @SuppressWarnings("try") // the scope is only made current, never read
    static <T> T around(Span span, Supplier<T> call) {
        try (Scope ignored = span.makeCurrent()) {
            return call.get();
        } catch (RuntimeException | Error e) {
            fail(span, e);
            throw e;
        } finally {
            span.end();
        }
    }

    /**
     * Starts {@code call} with {@code span} current; the span ends with the outcome of the
     * returned future, before the caller's continuations run (or at once when the call throws).
     */
    @SuppressWarnings("try") // the scope is only made current, never read
    static <T> CompletableFuture<T> aroundAsync(Span span, Supplier<CompletableFuture<T>> call) {
        CompletableFuture<T> started;
        try (Scope ignored = span.makeCurrent()) {
            started = call.get();
        } catch (RuntimeException e) {
            end(span, e);
            throw e;
        }
        return settled(started, (value, error) -> end(span, error));
    }

    /**
     * A future completed as {@code source} is, after {@code settle} ran (so a span ends before
     * the caller's continuations run), with the same failure (not wrapped).
     */
    static <T> CompletableFuture<T> settled(CompletableFuture<T> source, BiConsumer<T, Throwable> settle) {
        CompletableFuture<T> out = new CompletableFuture<>();
        source.whenComplete((value, error) -> {
            settle.accept(value, error);
            if (error != null) {
                out.completeExceptionally(unwrap(error));
            } else {
                out.complete(value);
            }
        });
        return out;
    }

    /** The failure a future completed with, without the wrapping of dependent stages. */
    static Throwable unwrap(Throwable error) {
        while ((error instanceof CompletionException || error instanceof ExecutionException)
                && error.getCause() != null) {
            error = error.getCause();
        }
        return error;
    }

    /** The W3C context of {@code span} for a record; empty for an invalid span context. */
    static Optional<TraceContext> traceContextOf(Span span) {
        if (!span.getSpanContext().isValid()) {
            return Optional.empty();
        }
        Map<String, String> carrier = new HashMap<>();
        W3C.inject(Context.root().with(span), carrier, Map::put);
        String traceparent = carrier.get("traceparent");
        if (traceparent == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(TraceContext.of(traceparent, carrier.get("tracestate")));
        } catch (ValidationException e) {
            // A tracestate the engine refuses (over 512 characters): the trace still continues.
            return Optional.of(TraceContext.of(traceparent));
        }
    }

    /** The context a received record carries, as an OpenTelemetry span context (invalid: none). */
    static SpanContext spanContextOf(ConsumerRecord record) {
        Optional<TraceContext> tc = record.traceContext();
        if (tc.isEmpty()) {
            return SpanContext.getInvalid();
        }
        Map<String, String> carrier = new HashMap<>();
        carrier.put("traceparent", tc.get().traceparent());
        if (tc.get().tracestate() != null) {
            carrier.put("tracestate", tc.get().tracestate());
        }
        return Span.fromContext(W3C.extract(Context.root(), carrier, GETTER)).getSpanContext();
    }

    /** Links to each record's context (records without one get none). */
    static void link(SpanBuilder builder, List<ConsumerRecord> records) {
        for (ConsumerRecord r : records) {
            SpanContext sc = spanContextOf(r);
            if (sc.isValid()) {
                builder.addLink(sc);
            }
        }
    }
}
