package io.cursus;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Sends records to Cursus topics, batching them per partition. Thread-safe: share one
 * producer between threads.
 *
 * <p>{@link #send} returns once the record is queued, with a future completed when the broker
 * acknowledges it, in offset order per partition. Futures complete on this producer's own
 * {@code cursus-producer-N-callbacks} thread, never on an engine thread, so continuations may
 * block or call the producer again ({@code send(...).get()} and {@link #flush()} included);
 * a continuation that blocks delays only this producer's later futures.
 *
 * <p>Blocking calls without a timeout wait at most {@link Timeouts#DEFAULT} (30 s).
 */
public final class CursusProducer extends NativeResource {
    /** {@code CURSUS_NO_TIMESTAMP}: let the library stamp the send time. */
    private static final long NO_TIMESTAMP = Long.MIN_VALUE;

    private final Callbacks callbacks;

    /**
     * Connects and starts the sender.
     *
     * @param config producer options
     * @throws CursusException if the options are invalid or no broker answers within
     *     {@code connect_timeout_ms}
     */
    public CursusProducer(ProducerConfig config) {
        super("producer", Objects.requireNonNull(config, "config").withNative(NativeBridge::producerNew),
                NativeBridge::producerDestroy);
        this.callbacks = new Callbacks("producer");
    }

    /**
     * Queues a record, blocking at most {@code max_block_ms} for buffer space.
     *
     * @param record the record
     * @return a future completed with where the record was stored, or exceptionally with a
     *     {@link CursusException}
     * @throws CursusException if the record cannot be queued (closed producer, buffer full
     *     past {@code max_block_ms}, record too large, ...); its future then never exists
     */
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        Objects.requireNonNull(record, "record");
        CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
        NativeCompletion completion = NativeCompletion.forSend(future, callbacks);
        int partition = record.partition() == null ? -1 : record.partition();
        long ts = record.timestamp() == null ? NO_TIMESTAMP : record.timestamp();
        run(h -> NativeBridge.producerSendCb(h, record.topic(), partition, record.key(), record.value(), ts,
                completion));
        return future;
    }

    /**
     * Sends a record and waits for its acknowledgement (may be called from a continuation).
     *
     * @param record the record
     * @return where the record was stored
     * @throws CursusException the delivery's error
     */
    public RecordMetadata sendAndWait(ProducerRecord record) {
        CompletableFuture<RecordMetadata> f = send(record);
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw CursusException.of("internal", "interrupted", ErrorClass.INTERNAL, false,
                    "interrupted while waiting for the acknowledgement (the record may still be delivered)",
                    Map.of());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof CursusException) {
                throw (CursusException) e.getCause();
            }
            throw CursusException.of("internal", "internal_error", ErrorClass.INTERNAL, false,
                    String.valueOf(e.getCause()), Map.of());
        }
    }

    /**
     * Sends everything queued and waits, at most 30 s, until every record sent before the call
     * is acknowledged or failed.
     *
     * @throws CursusTimeoutException if the deadline passes first
     */
    public void flush() {
        flush(Timeouts.DEFAULT);
    }

    /**
     * Sends everything queued and waits for it, at most {@code timeout}
     * ({@link Timeouts#NO_LIMIT}: as long as it takes).
     *
     * @param timeout the limit
     * @throws CursusTimeoutException if the deadline passes first
     */
    public void flush(Duration timeout) {
        long ms = Timeouts.toMillis(timeout, "timeout");
        run(h -> NativeBridge.producerFlush(h, ms));
    }

    /** Flushes (at most 30 s) and closes; see {@link #close(Duration)}. */
    @Override
    public void close() {
        close(Timeouts.DEFAULT);
    }

    /**
     * Stops taking records, flushes within {@code timeout}, fails what is left, then closes.
     * Only the first call does anything. Safe from a continuation.
     *
     * @param timeout the flush limit ({@link Timeouts#NO_LIMIT}: as long as it takes)
     * @throws CursusTimeoutException if records were still unsent at the deadline (their
     *     futures fail; the producer is closed anyway)
     */
    public void close(Duration timeout) {
        long ms = Timeouts.toMillis(timeout, "timeout");
        closeWith(h -> NativeBridge.producerClose(h, ms));
    }

    @Override
    void afterClose() {
        callbacks.shutdown();
    }
}
