package io.cursus;

import java.util.Objects;
import java.util.Optional;

/**
 * A W3C Trace Context a record carries: the {@code traceparent} of the span that sent it and
 * an optional {@code tracestate} (docs/observability.md, "Trace context in records"). A send
 * takes one with {@link ProducerRecord#withTraceContext(TraceContext)}; a consumed record
 * gives its own with {@link ConsumerRecord#traceContext()}. The engine checks the values and
 * carries them in the record's metadata, the same way in every Cursus language.
 *
 * <p>This class needs no OpenTelemetry: a tracing layer ({@code io.cursus.otel}, or any other)
 * converts it to and from its own span context. Immutable and thread-safe.
 */
public final class TraceContext {
    private final String traceparent;
    private final String tracestate;
    private final String traceId;
    private final String spanId;
    private final boolean sampled;

    private TraceContext(long handle) {
        this.traceparent = NativeBridge.traceContextTraceparent(handle);
        this.tracestate = NativeBridge.traceContextTracestate(handle);
        this.traceId = NativeBridge.traceContextTraceId(handle);
        this.spanId = NativeBridge.traceContextSpanId(handle);
        this.sampled = NativeBridge.traceContextSampled(handle);
    }

    /** Reads a trace context handle and releases it. */
    private static TraceContext read(long handle) {
        try {
            return new TraceContext(handle);
        } finally {
            NativeBridge.traceContextDestroy(handle);
        }
    }

    /**
     * A context without {@code tracestate}.
     *
     * @param traceparent the W3C {@code traceparent} value
     *     ({@code 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>}, lower case)
     * @return the context
     * @throws ValidationException with code {@code invalid_trace_context} if the value is
     *     malformed (not lower-case hex, an all-zero id, version {@code ff}, ...)
     */
    public static TraceContext of(String traceparent) {
        return of(traceparent, null);
    }

    /**
     * A context from both W3C header values.
     *
     * @param traceparent the W3C {@code traceparent} value
     * @param tracestate the W3C {@code tracestate} value; {@code null} or empty for none
     * @return the context
     * @throws ValidationException with code {@code invalid_trace_context} if a value is
     *     malformed (the {@code tracestate}: not printable ASCII of at most 512 characters)
     */
    public static TraceContext of(String traceparent, String tracestate) {
        Objects.requireNonNull(traceparent, "traceparent");
        return read(NativeBridge.traceContextNew(traceparent, tracestate));
    }

    /**
     * The context record metadata carries, by the engine's rules; empty when it carries none
     * or a malformed one.
     *
     * @param metadata a record's metadata, or {@code null}
     * @return the context, if any
     */
    static Optional<TraceContext> extract(String metadata) {
        if (metadata == null || metadata.isEmpty()) {
            return Optional.empty();
        }
        long handle = NativeBridge.traceContextExtract(metadata);
        return handle == 0 ? Optional.empty() : Optional.of(read(handle));
    }

    /**
     * The W3C {@code traceparent} value.
     *
     * @return the traceparent
     */
    public String traceparent() {
        return traceparent;
    }

    /**
     * The W3C {@code tracestate} value, if any.
     *
     * @return the tracestate, or {@code null} when there is none
     */
    public String tracestate() {
        return tracestate;
    }

    /**
     * The trace id.
     *
     * @return 32 lower-case hex digits
     */
    public String traceId() {
        return traceId;
    }

    /**
     * The id of the span that sent the record.
     *
     * @return 16 lower-case hex digits
     */
    public String spanId() {
        return spanId;
    }

    /**
     * Whether the trace flags' sampled bit is set.
     *
     * @return the sampled flag
     */
    public boolean sampled() {
        return sampled;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TraceContext t && traceparent.equals(t.traceparent)
                && Objects.equals(tracestate, t.tracestate);
    }

    @Override
    public int hashCode() {
        return Objects.hash(traceparent, tracestate);
    }

    @Override
    public String toString() {
        return tracestate == null ? traceparent : traceparent + ";" + tracestate;
    }
}
