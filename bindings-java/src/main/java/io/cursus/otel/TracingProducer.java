package io.cursus.otel;

import io.cursus.BatchDeliveryException;
import io.cursus.CursusProducer;
import io.cursus.ProducerRecord;
import io.cursus.RecordMetadata;
import io.cursus.Telemetry;
import io.opentelemetry.api.trace.Span;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A {@link CursusProducer} whose sends are traced: one publish span per record, a child of
 * {@code Context.current()}, from the send to the acknowledgement (partition and offset
 * added) or the failure (status error, {@code error.type}); the record carries the span's W3C
 * context (a context the record already has wins); {@link #sendBatch} records one per record of
 * the batch. {@link #commitTransaction()} and
 * {@link #abortTransaction()} record commit and abort spans. Every other call goes to
 * {@link #producer()}. Thread-safe, as the producer is.
 */
public final class TracingProducer {
    private final CursusTracing tracing;
    private final CursusProducer producer;
    private final String clientId;
    private final String transactionalId;

    TracingProducer(CursusTracing tracing, CursusProducer producer, String transactionalId) {
        this.tracing = tracing;
        this.producer = Objects.requireNonNull(producer, "producer");
        this.clientId = producer.statistics().clientId();
        this.transactionalId = transactionalId;
    }

    /**
     * The wrapped producer, for the calls that are not traced.
     *
     * @return the producer
     */
    public CursusProducer producer() {
        return producer;
    }

    /** A started publish span and the record carrying its context. */
    private record Publish(Span span, ProducerRecord record) {}

    /** Starts the publish span of {@code record}. */
    private Publish publish(ProducerRecord record) {
        Span span = tracing.start(Telemetry.publish(record, clientId));
        if (record.traceContext() != null) {
            return new Publish(span, record);
        }
        return new Publish(span, CursusTracing.traceContextOf(span).map(record::withTraceContext).orElse(record));
    }

    /**
     * {@link CursusProducer#send} in a publish span, ended when the record is acknowledged or
     * fails (before the returned future completes).
     *
     * @param record the record
     * @return a future completed with where the record was stored
     * @throws io.cursus.CursusException if the record cannot be queued (the span records it)
     */
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        Objects.requireNonNull(record, "record");
        Publish p = publish(record);
        CompletableFuture<RecordMetadata> sent;
        try {
            sent = producer.send(p.record());
        } catch (RuntimeException e) {
            CursusTracing.end(p.span(), e);
            throw e;
        }
        return CursusTracing.settled(sent, (md, error) -> acknowledged(p.span(), md, error));
    }

    /**
     * {@link CursusProducer#sendAndWait} in a publish span.
     *
     * @param record the record
     * @return where the record was stored
     * @throws io.cursus.CursusException the delivery's error (the span records it)
     */
    public RecordMetadata sendAndWait(ProducerRecord record) {
        Objects.requireNonNull(record, "record");
        Publish p = publish(record);
        RecordMetadata md;
        try {
            md = producer.sendAndWait(p.record());
        } catch (RuntimeException e) {
            CursusTracing.end(p.span(), e);
            throw e;
        }
        acknowledged(p.span(), md, null);
        return md;
    }

    /**
     * {@link CursusProducer#sendBatch} with one publish span per record, each a child of
     * {@code Context.current()}, its context carried by its record (a context the record already
     * has wins), ended with that record's outcome (partition and offset, or its error) before
     * the returned future completes.
     *
     * @param records the records, all of one topic
     * @return a future of every record's metadata, in order (exceptionally a
     *     {@link io.cursus.BatchDeliveryException} when some failed)
     * @throws io.cursus.CursusException if the batch cannot start (every span records it)
     */
    public CompletableFuture<List<RecordMetadata>> sendBatch(List<ProducerRecord> records) {
        Objects.requireNonNull(records, "records");
        List<Publish> publishes = records.stream().map(this::publish).toList();
        CompletableFuture<List<RecordMetadata>> sent;
        try {
            sent = producer.sendBatch(publishes.stream().map(Publish::record).toList());
        } catch (RuntimeException e) {
            publishes.forEach(p -> CursusTracing.end(p.span(), e));
            throw e;
        }
        return CursusTracing.settled(sent, (mds, error) -> {
            // A partly failed batch holds each record's outcome; any other failure is every record's.
            BatchDeliveryException partly = CursusTracing.unwrap(error) instanceof BatchDeliveryException b ? b : null;
            for (int i = 0; i < publishes.size(); i++) {
                if (error == null) {
                    acknowledged(publishes.get(i).span(), mds.get(i), null);
                } else if (partly != null) {
                    acknowledged(publishes.get(i).span(), partly.metadata().get(i), partly.errors().get(i));
                } else {
                    acknowledged(publishes.get(i).span(), null, CursusTracing.unwrap(error));
                }
            }
        });
    }

    private static void acknowledged(Span span, RecordMetadata md, Throwable error) {
        if (error == null) {
            CursusTracing.add(span, Telemetry.acknowledged(md));
        }
        CursusTracing.end(span, error);
    }

    /**
     * {@link CursusProducer#commitTransaction()} in a {@code commit_transaction} span, ended
     * when the returned future completes.
     *
     * @return a future completed when the transaction is committed
     */
    public CompletableFuture<Void> commitTransaction() {
        return endTransaction(true, producer::commitTransaction);
    }

    /**
     * {@link CursusProducer#abortTransaction()} in an {@code abort_transaction} span.
     *
     * @return a future completed when the transaction is aborted
     */
    public CompletableFuture<Void> abortTransaction() {
        return endTransaction(false, producer::abortTransaction);
    }

    private CompletableFuture<Void> endTransaction(boolean commit, Supplier<CompletableFuture<Void>> step) {
        return CursusTracing.aroundAsync(tracing.start(Telemetry.endTransaction(transactionalId, commit)), step);
    }
}
