package io.cursus;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

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
 *
 * <p><b>Transactions.</b> A producer configured with
 * {@link ProducerConfig.Builder#transactionalId(String) transactional_id} sends only inside
 * transactions: the records sent between {@link #beginTransaction()} and
 * {@link #commitTransaction()} become visible to {@code read_committed} consumers together,
 * with the consumer offsets added by {@link #sendOffsetsToTransaction(CursusConsumer)}, or
 * (after {@link #abortTransaction()}) never. A consume-process-produce loop:
 *
 * <pre>{@code
 * producer.initTransactions().join();
 * while (running) {
 *     List<ConsumerRecord> in = consumer.poll(Duration.ofMillis(500));
 *     if (in.isEmpty()) continue;
 *     producer.beginTransaction().join();
 *     for (ConsumerRecord r : in) producer.send(ProducerRecord.of("out", r.key(), process(r)));
 *     producer.sendOffsetsToTransaction(consumer).join();
 *     producer.commitTransaction().join();
 * }
 * }</pre>
 *
 * <p>Each transaction call returns a future completed on this producer's callback thread
 * (never an engine thread). Calls of one producer are carried out in the order they were
 * made; start the next step when the previous one's future has completed. A
 * {@link FencingException} (code {@code producer_fenced}: another producer initialised the
 * same {@code transactional_id}) is final: every later call of this producer fails with it;
 * close it. After any other failure of a send or of the commit, abort the transaction.
 *
 * <p><b>Observability.</b> {@link #statistics()}, a periodic
 * {@link #setStatisticsListener statistics listener} and an {@link #setErrorListener error
 * listener} for background errors (a failed batch, a fenced producer, a lost connection);
 * the engine's log records go to {@link System.Logger} {@code io.cursus} (see
 * {@link CursusLogging}).
 */
public final class CursusProducer extends NativeResource {
    /** {@code CURSUS_NO_TIMESTAMP}: let the library stamp the send time. */
    private static final long NO_TIMESTAMP = Long.MIN_VALUE;

    private final Callbacks callbacks;
    /** The user's listeners, kept reachable until replaced or the producer is closed. */
    private volatile Consumer<CursusException> errorListener;
    private volatile Consumer<Statistics> statisticsListener;

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
        NativeCompletion completion = NativeCompletion.forSend(future, record.topic(), callbacks);
        int partition = record.partition() == null ? -1 : record.partition();
        long ts = record.timestamp() == null ? NO_TIMESTAMP : record.timestamp();
        if (record.metadata() == null && record.traceContext() == null) {
            run(h -> NativeBridge.producerSendCb(h, record.topic(), partition, record.key(), record.value(), ts,
                    completion));
        } else {
            TraceContext tc = record.traceContext();
            String traceparent = tc == null ? null : tc.traceparent();
            String tracestate = tc == null ? null : tc.tracestate();
            run(h -> NativeBridge.producerSendCbTraced(h, record.topic(), partition, record.key(), record.value(),
                    ts, record.metadata(), traceparent, tracestate, completion));
        }
        return future;
    }

    /**
     * Queues every record of {@code records} (all of one topic) with ONE call into the native
     * library, blocking at most {@code max_block_ms} per record for buffer space. The future
     * completes ONCE, on this producer's callback thread, with every record's metadata in the
     * order given; if some records failed it completes exceptionally with a
     * {@link BatchDeliveryException} holding every record's outcome. A record that cannot be
     * queued (a partition that does not exist, too large) fails alone; the others are sent.
     *
     * <p>Each record's {@link ProducerRecord#withMetadata metadata} and
     * {@link ProducerRecord#withTraceContext trace context} travel as {@link #send} carries them.
     *
     * @param records the records, all of one topic
     * @return a future of every record's metadata, in order
     * @throws CursusException if the batch cannot start (records of several topics: the
     *     library's batch rule, a {@link ValidationException} with code {@code invalid_argument};
     *     a closed producer); its future then never exists
     */
    public CompletableFuture<List<RecordMetadata>> sendBatch(List<ProducerRecord> records) {
        Objects.requireNonNull(records, "records");
        String topic = records.isEmpty() ? "" : records.get(0).topic();
        // The plain layout unless a record needs the traced one (12 bytes less per record).
        boolean traced = records.stream().anyMatch(r -> r.metadata() != null || r.traceContext() != null);
        int size = 4;
        List<byte[]> otherTopics = new ArrayList<>(0); // of the records not of `topic`, in order
        // Traced: each record's metadata, traceparent and tracestate (null: none), in order.
        List<byte[]> texts = new ArrayList<>(traced ? 3 * records.size() : 0);
        for (ProducerRecord r : records) {
            size += 24 + (r.key() == null ? 0 : r.key().length) + r.value().length;
            if (!r.topic().equals(topic)) {
                otherTopics.add(r.topic().getBytes(StandardCharsets.UTF_8));
                size += otherTopics.get(otherTopics.size() - 1).length;
            }
            if (traced) {
                TraceContext tc = r.traceContext();
                for (String text : Arrays.asList(r.metadata(), tc == null ? null : tc.traceparent(),
                        tc == null ? null : tc.tracestate())) {
                    byte[] bytes = text == null ? null : text.getBytes(StandardCharsets.UTF_8);
                    texts.add(bytes);
                    size += 4 + (bytes == null ? 0 : bytes.length);
                }
            }
        }
        // The packed layout of bridge/src/records_in.rs (the traced one: each record followed by
        // its metadata and context): a record of another topic carries its own, and the library
        // applies the batch rule (one topic per batch) to it.
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(records.size());
        int other = 0;
        int text = 0;
        for (ProducerRecord r : records) {
            if (r.topic().equals(topic)) {
                b.putInt(-1);
            } else {
                byte[] named = otherTopics.get(other++);
                b.putInt(named.length).put(named);
            }
            b.putInt(r.partition() == null ? -1 : r.partition());
            b.putLong(r.timestamp() == null ? NO_TIMESTAMP : r.timestamp());
            if (r.key() == null) {
                b.putInt(-1);
            } else {
                b.putInt(r.key().length).put(r.key());
            }
            b.putInt(r.value().length).put(r.value());
            for (int i = 0; traced && i < 3; i++) {
                byte[] bytes = texts.get(text++);
                if (bytes == null) {
                    b.putInt(-1);
                } else {
                    b.putInt(bytes.length).put(bytes);
                }
            }
        }
        byte[] packed = b.array();
        CompletableFuture<List<RecordMetadata>> future = new CompletableFuture<>();
        NativeCompletion completion = NativeCompletion.forHandle(future, CursusProducer::readBatch, callbacks);
        if (traced) {
            run(h -> NativeBridge.producerSendBatchTraced(h, topic, packed, completion));
        } else {
            run(h -> NativeBridge.producerSendBatch(h, topic, packed, completion));
        }
        return future;
    }

    /** Reads a delivery batch lent for the upcall: one native call, plus one per failed record. */
    private static List<RecordMetadata> readBatch(long batch) {
        String topic = NativeBridge.deliveryBatchTopic(batch);
        ByteBuffer b = ByteBuffer.wrap(NativeBridge.deliveryBatchPacked(batch)).order(ByteOrder.LITTLE_ENDIAN);
        int n = b.getInt();
        RecordMetadata[] mds = new RecordMetadata[n];
        CursusException[] errors = null;
        int failed = 0;
        for (int i = 0; i < n; i++) {
            int status = b.getInt();
            int partition = b.getInt();
            long offset = b.getLong();
            long timestamp = b.getLong();
            if (status == 0) {
                mds[i] = new RecordMetadata(topic, partition, offset, timestamp);
                continue;
            }
            if (errors == null) {
                errors = new CursusException[n];
            }
            failed++;
            try {
                NativeBridge.deliveryBatchCheck(batch, i);
            } catch (CursusException e) {
                errors[i] = e;
            }
        }
        if (errors != null) {
            throw new BatchDeliveryException(Arrays.asList(mds), Arrays.asList(errors), failed);
        }
        return Collections.unmodifiableList(new ArrayList<>(Arrays.asList(mds)));
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
        run(h -> NativeBridge.producerFlush(h, Timeouts.DEFAULT_MARKER));
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
        closeWith(h -> NativeBridge.producerClose(h, Timeouts.DEFAULT_MARKER));
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

    /** A background transaction step started with the live producer handle. */
    @FunctionalInterface
    private interface TransactionStart {
        void start(long producer, NativeCompletion completion);
    }

    /** Starts one step; its future completes on this producer's callback thread. */
    private CompletableFuture<Void> transactionStep(TransactionStart step) {
        CompletableFuture<Void> future = new CompletableFuture<>();
        NativeCompletion completion = NativeCompletion.forVoid(future, callbacks);
        run(h -> step.start(h, completion));
        return future;
    }

    /**
     * Obtains this producer's transactional session from the broker ({@code INIT_PRODUCER_ID}),
     * fencing any older producer with the same {@code transactional_id} and aborting a
     * transaction it left open. Call once, before the first {@link #beginTransaction()}.
     *
     * @return a future completed when the session is granted, or exceptionally with a
     *     {@link CursusException} (a {@link ValidationException} with code
     *     {@code invalid_transaction_state} when the producer has no {@code transactional_id})
     * @throws CursusClosedException if the producer is closed
     */
    public CompletableFuture<Void> initTransactions() {
        return transactionStep(NativeBridge::producerInitTransactionsAsync);
    }

    /**
     * Begins a transaction: the records sent from now until {@link #commitTransaction()} or
     * {@link #abortTransaction()} belong to it. Every transaction after the first
     * re-initialises the session on the broker first.
     *
     * @return a future completed when the transaction is open, or exceptionally with a
     *     {@link CursusException}: a {@link ValidationException} with code
     *     {@code invalid_transaction_state} before {@link #initTransactions()} or while a
     *     transaction is already open; a {@link FencingException} once fenced
     * @throws CursusClosedException if the producer is closed
     */
    public CompletableFuture<Void> beginTransaction() {
        return transactionStep(NativeBridge::producerBeginTransactionAsync);
    }

    /**
     * Adds what {@code consumer} has delivered so far (per partition, the offset after the
     * last record its polls returned) to the open transaction, fenced by the consumer's group
     * session: the group's committed offsets move there when the transaction commits, and
     * not at all if it aborts. The consumer must have joined its group (polled once after
     * subscribing); a consumer that delivered nothing adds nothing. Use this instead of the
     * consumer's own commits.
     *
     * <p>The offsets and the group session are taken when this method is called, so polls
     * made after it returns are not included.
     *
     * @param consumer the consumer whose records the transaction processed
     * @return a future completed when the offsets are staged, or exceptionally with a
     *     {@link CursusException} ({@code invalid_transaction_state} without an open
     *     transaction; the group's fencing errors when the consumer lost its partitions)
     * @throws CursusClosedException if the producer or the consumer is closed
     * @throws ValidationException if the consumer has not joined its group yet
     */
    public CompletableFuture<Void> sendOffsetsToTransaction(CursusConsumer consumer) {
        Objects.requireNonNull(consumer, "consumer");
        return transactionStep((p, completion) ->
                consumer.run(c -> NativeBridge.producerSendConsumerOffsetsAsync(p, c, completion)));
    }

    /**
     * Adds explicit next offsets (the offset after the last record processed, per partition)
     * to the open transaction, fenced by {@code consumer}'s group session: committed for the
     * consumer's group with the transaction, or not at all.
     *
     * @param offsets next offset per partition (each at least 0)
     * @param consumer the group member that consumed the records; it must have joined its
     *     group (polled once after subscribing)
     * @return a future completed when the offsets are staged, or exceptionally with a
     *     {@link CursusException} (as {@link #sendOffsetsToTransaction(CursusConsumer)})
     * @throws CursusClosedException if the producer or the consumer is closed
     * @throws ValidationException if an offset is negative or the consumer has not joined
     *     its group yet
     */
    public CompletableFuture<Void> sendOffsetsToTransaction(Map<TopicPartition, Long> offsets,
            CursusConsumer consumer) {
        Objects.requireNonNull(offsets, "offsets");
        Objects.requireNonNull(consumer, "consumer");
        return transactionStep((p, completion) -> consumer.run(c -> CursusConsumer.withOffsetList(offsets,
                list -> NativeBridge.producerSendOffsetsToTransactionAsync(p, list, c, completion))));
    }

    /**
     * Commits the open transaction once every record sent in it is acknowledged: its records
     * and staged offsets become visible together. When the broker's reply is lost the commit
     * is repeated (same epoch) until the broker decides, for up to
     * {@code delivery_timeout_ms}; if still undecided then, the future fails with a retryable
     * error and the commit may be called again.
     *
     * @return a future completed when the transaction is committed, or exceptionally with a
     *     {@link CursusException}; after a failed send (or a commit the broker aborted, e.g.
     *     code {@code transaction_aborted}) call {@link #abortTransaction()}
     * @throws CursusClosedException if the producer is closed
     */
    public CompletableFuture<Void> commitTransaction() {
        return transactionStep(NativeBridge::producerCommitTransactionAsync);
    }

    /**
     * Aborts the open transaction once its sends have finished: none of its records or
     * offsets ever become visible to {@code read_committed} consumers.
     *
     * @return a future completed when the transaction is aborted, or exceptionally with a
     *     {@link CursusException}
     * @throws CursusClosedException if the producer is closed
     */
    public CompletableFuture<Void> abortTransaction() {
        return transactionStep(NativeBridge::producerAbortTransactionAsync);
    }

    /**
     * Appends an event to aggregate {@code key} of an event-sourcing topic inside the open
     * transaction (TXN_APPEND_STREAM): it becomes version {@code expectedVersion + 1} when the
     * transaction commits, together with its records and offsets, and never if it aborts.
     * Until then the event is invisible to readers and the aggregate is reserved: other
     * transactions and plain {@link CursusEventStore#append appends} fail with a
     * {@link CursusException} of code {@code stream_version_reserved}. The commit fails (and
     * the transaction aborts) with {@code stream_version_conflict} if the aggregate moved.
     * On an aggregate replay topic the event's id is its identity, as for
     * {@link CursusEventStore#append}.
     *
     * <p>Unlike the other transaction steps this call blocks until the broker has answered (at
     * most {@code request_timeout_ms}, retried with the same sequence after a lost reply);
     * {@link #appendStreamAsync} is its background variant. It may be called from a
     * continuation.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key (text without whitespace)
     * @param expectedVersion the aggregate's current version (0 for a new aggregate)
     * @param event the event
     * @return the version, offset and partition the event gets when the transaction commits
     * @throws CursusException on failure (e.g. {@code version_conflict},
     *     {@code stream_version_reserved}, {@code invalid_transaction_state} without an open
     *     transaction); the transaction must then be aborted
     * @throws CursusClosedException if the producer is closed
     */
    public Appended appendStream(String topic, String key, long expectedVersion, Event event) {
        CursusEventStore.checkAppend(topic, key, expectedVersion, event);
        return call(h -> CursusEventStore.appended(event.withBuilder(
                b -> NativeBridge.producerAppendStream(h, topic, key, expectedVersion, b))));
    }

    /**
     * {@link #appendStream} with a future: the library runs the append in the background
     * (no thread waits for it), and the future completes on this producer's callback thread (in order with the send futures completed there) with
     * what the event gets when the transaction commits, or exceptionally with what
     * {@link #appendStream} throws. Chain the commit on the future, not before it completes.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key (text without whitespace)
     * @param expectedVersion the aggregate's current version (0 for a new aggregate)
     * @param event the event
     * @return the append's future
     */
    public CompletableFuture<Appended> appendStreamAsync(String topic, String key, long expectedVersion,
            Event event) {
        return startAsync(callbacks, ResultReaders::readAppended, (h, completion) -> {
            CursusEventStore.checkAppend(topic, key, expectedVersion, event);
            event.withBuilder(b -> {
                NativeBridge.producerAppendStreamAsync(h, topic, key, expectedVersion, b, completion);
                return null;
            });
        });
    }

    /**
     * This producer's statistics now: counters since it was created (records, bytes and
     * batches acknowledged, requests, retries, errors by class, requests in flight) and the
     * produce latency.
     *
     * @return the snapshot
     */
    public Statistics statistics() {
        return call(h -> Results.take(NativeBridge.producerStatistics(h), Statistics::read,
                NativeBridge::statisticsDestroy));
    }

    /**
     * Sets (or, with a null listener, removes) the periodic statistics listener: it gets a
     * snapshot every {@code interval}, on this producer's {@code cursus-producer-N-callbacks}
     * thread (in order with the send futures). An exception it throws is logged and ignored.
     *
     * @param interval how often; null for the {@code statistics_interval_ms} option;
     *     {@link Duration#ZERO} for never (a listener that would never be called, with a zero
     *     interval or the option at 0, is refused: {@link ValidationException}, field
     *     {@code option})
     * @param listener the listener, or null
     */
    public void setStatisticsListener(Duration interval, Consumer<Statistics> listener) {
        long ms = CursusConsumer.intervalMillis(interval);
        NativeListener relay = listener == null ? null
                : new WeakListener<>(this, "statistics listener", CursusProducer::onStatistics);
        run(h -> {
            statisticsListener = listener;
            NativeBridge.producerSetStatisticsListener(h, ms, relay);
        });
    }

    private void onStatistics(long handle) {
        Statistics s = Statistics.read(handle);
        Consumer<Statistics> l = statisticsListener;
        if (l != null) {
            callbacks.execute(() -> CursusConsumer.deliver("statistics listener", l, s));
        }
    }

    /**
     * Sets (or, with null, removes) the error listener: it gets each background error
     * nobody is waiting for (a batch that failed, a fenced producer, a lost broker
     * connection), on this producer's {@code cursus-producer-N-callbacks} thread. Errors a
     * call throws are not reported again. An exception it throws is logged and ignored.
     *
     * @param listener the listener, or null
     */
    public void setErrorListener(Consumer<CursusException> listener) {
        NativeListener relay = listener == null ? null
                : new WeakListener<>(this, "error listener", CursusProducer::onError);
        run(h -> {
            errorListener = listener;
            NativeBridge.producerSetErrorListener(h, relay);
        });
    }

    private void onError(long handle) {
        CursusException e = NativeLib.fromHandle(handle);
        Consumer<CursusException> l = errorListener;
        if (l != null) {
            callbacks.execute(() -> CursusConsumer.deliver("error listener", l, e));
        }
    }

    @Override
    void afterClose() {
        callbacks.shutdown();
        errorListener = null;
        statisticsListener = null;
    }
}
