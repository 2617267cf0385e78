/**
 * OpenTelemetry tracing and metrics for Cursus clients: the optional part of the binding, on
 * {@code io.opentelemetry:opentelemetry-api} (an optional Maven dependency: add it to use this
 * package; {@code io.cursus} itself never loads it).
 *
 * <p>{@link io.cursus.otel.CursusTracing} wraps a client: a {@link io.cursus.otel.TracingProducer}
 * records a publish span per send (a child of {@code Context.current()}, ended at the
 * acknowledgement) and sends its W3C context with the record; a
 * {@link io.cursus.otel.TracingConsumer} records a receive span per poll that returned records,
 * linked to each record's context, and a process span per record, a child of it; commits and
 * aborts of transactions, event-store appends and reads get spans of their own.
 * {@link io.cursus.otel.CursusMetrics} reports a client's statistics as observable instruments.
 * Span names, kinds, attributes and metric names are the engine's
 * ({@link io.cursus.Telemetry}; docs/observability.md), the same in every Cursus language.
 */
package io.cursus.otel;
