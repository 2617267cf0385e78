package io.cursus;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Sends records to Cursus topics, batching them per partition. Thread-safe: share one
 * producer between threads. {@link #send} returns at once with a future completed when the
 * broker acknowledges the record; futures complete on the SDK's {@code cursus-callbacks}
 * pool (never on an engine thread), so continuations may block or call the SDK.
 */
public final class CursusProducer extends NativeResource {
    private static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    /**
     * Connects and starts the sender.
     *
     * @param config producer options
     */
    public CursusProducer(ProducerConfig config) {
        super("producer", connect(config), NativeLib::producerFree);
    }

    private static long connect(ProducerConfig config) {
        Objects.requireNonNull(config, "config");
        NativeLib.ensureLoaded();
        return NativeLib.producerConnect(config.pairs());
    }

    /**
     * Queues a record, blocking at most {@code max_block_ms} for buffer space.
     *
     * @return a future completed with where the record was stored, or exceptionally with a
     *     {@link CursusException}
     * @throws CursusException if the record cannot be queued (closed producer, buffer full
     *     past {@code max_block_ms}, record too large, ...)
     */
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        Objects.requireNonNull(record, "record");
        CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
        NativeCompletion completion = NativeCompletion.forSend(future);
        int partition = record.partition() == null ? -1 : record.partition();
        long ts = record.timestamp() == null ? 0 : record.timestamp();
        boolean hasTs = record.timestamp() != null;
        run(h -> NativeLib.producerSend(h, record.topic(), partition, record.key(), record.value(), ts, hasTs, completion));
        return future;
    }

    /**
     * Sends a record and waits for its acknowledgement.
     *
     * @throws CursusException the delivery's error
     */
    public RecordMetadata sendAndWait(ProducerRecord record) {
        CompletableFuture<RecordMetadata> f = send(record);
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InternalException("internal", "interrupted", ErrorClass.INTERNAL, false,
                    "interrupted while waiting for the acknowledgement", java.util.Map.of());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof CursusException) {
                throw (CursusException) e.getCause();
            }
            throw new InternalException("internal", "internal_error", ErrorClass.INTERNAL, false,
                    String.valueOf(e.getCause()), java.util.Map.of());
        }
    }

    /** Sends everything queued and waits for it, without a time limit. */
    public void flush() {
        run(h -> NativeLib.producerFlush(h, -1));
    }

    /**
     * Sends everything queued and waits for it, at most {@code timeout}.
     *
     * @throws CursusTimeoutException if the deadline passes first
     */
    public void flush(Duration timeout) {
        long ms = timeout.toMillis();
        run(h -> NativeLib.producerFlush(h, ms));
    }

    /** Flushes (at most 30 s) and closes. Idempotent. */
    @Override
    public void close() {
        close(DEFAULT_CLOSE_TIMEOUT);
    }

    /**
     * Flushes within {@code timeout}, then closes; records still unsent fail. Idempotent.
     * Calls in flight on other threads are allowed to return before the native handle is
     * freed.
     */
    public void close(Duration timeout) {
        long ms = Math.max(0, timeout.toMillis());
        closeWith(h -> NativeLib.producerClose(h, ms));
    }
}
