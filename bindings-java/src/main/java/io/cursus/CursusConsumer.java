package io.cursus;

import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A consumer-group member: subscribes to topics, polls records of the partitions assigned
 * to it, and commits positions. A group member is normally driven by one thread; from any
 * other thread, {@link #wakeup()} makes a blocked {@link #poll} return empty at once and
 * {@link #close()} makes it throw {@link CursusClosedException} at once.
 *
 * <p>Only records a poll returned count as delivered: commits (explicit, automatic, or at
 * close with {@code enable_auto_commit}) cover exactly those.
 *
 * <p><b>Control.</b> {@link #seek}, {@link #position}, {@link #pause}, {@link #resume},
 * {@link #paused()} and {@link #committed(Set)} work on the assignment the consumer was last
 * told of ({@link #assignment()}, the {@link ConsumerRebalanceListener}'s view): a partition
 * outside it is a {@link ValidationException} with code {@code partition_not_assigned}. They
 * may be called from the rebalance listener ({@code seek} in
 * {@link ConsumerRebalanceListener#onPartitionsAssigned} is the way to start somewhere else
 * than the committed offset).
 *
 * <p><b>Observability.</b> {@link #statistics()} (with the lag of every assigned partition),
 * a periodic {@link #setStatisticsListener statistics listener} and an
 * {@link #setErrorListener error listener} for background errors; the engine's log records
 * go to {@link System.Logger} {@code io.cursus} (see {@link CursusLogging}).
 */
public final class CursusConsumer extends NativeResource {
    private final Callbacks callbacks;
    /** The user's listeners, kept reachable until replaced or the consumer is closed. */
    private volatile ConsumerRebalanceListener rebalanceListener;
    private volatile Consumer<CursusException> errorListener;
    private volatile Consumer<Statistics> statisticsListener;
    /** The thread running the rebalance listener now, if any (may use the consumer while it closes). */
    private volatile Thread rebalanceThread;
    /**
     * The array the last poll's records were decoded from, reused by the next poll (native code
     * copies the packed view into it when it fits): no 1.5 MB allocation per poll of 10,000
     * records. Empty while a poll uses it.
     */
    private final AtomicReference<byte[]> pollBuffer = new AtomicReference<>();
    /** A poll buffer larger than this is not kept. */
    private static final int MAX_POLL_BUFFER = 16 << 20;

    /**
     * Connects.
     *
     * @param config consumer options ({@code group_id} is required)
     * @throws CursusException if the options are invalid or no broker answers within
     *     {@code connect_timeout_ms}
     */
    public CursusConsumer(ConsumerConfig config) {
        super("consumer", Objects.requireNonNull(config, "config").withNative(NativeBridge::consumerNew),
                NativeBridge::consumerDestroy);
        this.callbacks = new Callbacks("consumer");
    }

    /**
     * Subscribes to these topics, replacing any earlier subscription; the group is joined on
     * the next poll.
     *
     * @param topics the topics
     */
    public void subscribe(Collection<String> topics) {
        String[] list = Objects.requireNonNull(topics, "topics").toArray(new String[0]);
        run(h -> NativeBridge.consumerSubscribe(h, list));
    }

    /**
     * Subscribes to every topic matching a glob pattern ({@code *}, {@code ?}).
     *
     * @param pattern the pattern
     */
    public void subscribePattern(String pattern) {
        Objects.requireNonNull(pattern, "pattern");
        run(h -> NativeBridge.consumerSubscribePattern(h, pattern));
    }

    /**
     * Sets the rebalance listener, then subscribes to these topics (replacing any earlier
     * subscription and listener); the group is joined on the next poll. When this replaces a
     * subscription, the revocation it causes is told to the new listener.
     *
     * @param topics the topics
     * @param listener told of every change of the assignment, or null for none
     */
    public void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
        String[] list = Objects.requireNonNull(topics, "topics").toArray(new String[0]);
        setRebalanceListener(listener);
        run(h -> NativeBridge.consumerSubscribe(h, list));
    }

    /**
     * Sets the rebalance listener, then subscribes to every topic matching a glob pattern.
     *
     * @param pattern the pattern
     * @param listener told of every change of the assignment, or null for none
     */
    public void subscribePattern(String pattern, ConsumerRebalanceListener listener) {
        Objects.requireNonNull(pattern, "pattern");
        setRebalanceListener(listener);
        run(h -> NativeBridge.consumerSubscribePattern(h, pattern));
    }

    /**
     * Sets (or, with null, removes) the rebalance listener, replacing any earlier one. The
     * consumer keeps it reachable until it is replaced or the consumer is closed. See
     * {@link ConsumerRebalanceListener} for where and when it runs.
     *
     * @param listener the listener, or null
     */
    public void setRebalanceListener(ConsumerRebalanceListener listener) {
        NativeListener relay = listener == null ? null
                : new WeakListener<>(this, "rebalance listener", CursusConsumer::onRebalance);
        run(h -> {
            rebalanceListener = listener;
            NativeBridge.consumerSetRebalanceListener(h, relay, listener != null && handlesLost(listener));
        });
    }

    /**
     * Whether the listener overrides {@link ConsumerRebalanceListener#onPartitionsLost}: the
     * library tells a loss to a listener without it as a revocation.
     */
    static boolean handlesLost(ConsumerRebalanceListener listener) {
        try {
            return listener.getClass().getMethod("onPartitionsLost", Collection.class).getDeclaringClass()
                    != ConsumerRebalanceListener.class;
        } catch (NoSuchMethodException impossible) {
            return false; // an interface method: every implementation has it
        }
    }

    /** On the engine's rebalance thread, with the event lent for the call. */
    private void onRebalance(long event) {
        ConsumerRebalanceListener listener = rebalanceListener;
        if (listener == null) {
            return;
        }
        String kind = NativeBridge.rebalanceEventKind(event);
        int n = NativeBridge.rebalanceEventCount(event);
        List<TopicPartition> partitions = ResultReaders.list(n, i -> new TopicPartition(
                NativeBridge.rebalanceEventTopic(event, i), (int) NativeBridge.rebalanceEventPartition(event, i)));
        rebalanceThread = Thread.currentThread();
        try {
            switch (kind) {
                case "assigned":
                    listener.onPartitionsAssigned(partitions);
                    break;
                case "revoked":
                    listener.onPartitionsRevoked(partitions);
                    break;
                case "lost":
                    listener.onPartitionsLost(partitions);
                    break;
                default:
                    EngineLog.LOGGER.log(System.Logger.Level.WARNING, "unknown rebalance event " + kind);
            }
        } finally {
            rebalanceThread = null;
        }
    }

    @Override
    boolean callableWhileClosing() {
        return Thread.currentThread() == rebalanceThread;
    }

    /**
     * Polls for up to {@code max_poll_records} records, waiting at most {@code timeout} for
     * the first ({@link Timeouts#NO_LIMIT}: as long as it takes, until {@link #wakeup()}).
     *
     * @param timeout the limit
     * @return the records (empty when none arrived in time or on wakeup), in offset order per
     *     partition
     * @throws CursusClosedException if the consumer is closed, also by another thread during
     *     the poll
     */
    public List<ConsumerRecord> poll(Duration timeout) {
        return poll(timeout, Integer.MAX_VALUE);
    }

    /**
     * Like {@link #poll(Duration)}, returning at most {@code maxRecords} records (and never
     * more than {@code max_poll_records}).
     *
     * @param timeout the limit
     * @param maxRecords the most records to return, at least 1
     * @return the records
     */
    public List<ConsumerRecord> poll(Duration timeout, int maxRecords) {
        long ms = Timeouts.toMillis(timeout, "timeout");
        if (maxRecords < 1) {
            throw new IllegalArgumentException("maxRecords must be at least 1: " + maxRecords);
        }
        // The array the last poll decoded, taken for this one (a concurrent poll finds none and
        // gets a new one): the records are copied out of it, so it is reused, never shared.
        byte[] buffer = pollBuffer.getAndSet(null);
        byte[] packed = call(h -> NativeLib.consumerPollInto(h, ms, maxRecords, buffer));
        List<ConsumerRecord> records = RecordView.decode(packed);
        if (packed.length <= MAX_POLL_BUFFER) {
            pollBuffer.set(packed);
        }
        return records;
    }

    /** Makes the poll blocked now (or else the next one) return at once, empty. Any thread. */
    public void wakeup() {
        run(NativeBridge::consumerWakeup);
    }

    /** Commits the positions of the records returned so far, and waits. */
    public void commitSync() {
        run(NativeBridge::consumerCommit);
    }

    /**
     * Commits explicit next offsets (the offset after the last record processed), in map
     * order, and waits. The consumer must have joined its group (polled once after
     * subscribing).
     *
     * @param offsets next offset per partition
     */
    public void commitSync(Map<TopicPartition, Long> offsets) {
        Objects.requireNonNull(offsets, "offsets");
        run(h -> withOffsetList(offsets, list -> NativeBridge.consumerCommitOffsets(h, list)));
    }

    /**
     * Runs {@code body} with a native topic-partition list holding {@code offsets} (in map
     * order), destroyed afterwards.
     */
    static void withOffsetList(Map<TopicPartition, Long> offsets, java.util.function.LongConsumer body) {
        long list = NativeBridge.topicPartitionListNew();
        try {
            for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
                long next = Objects.requireNonNull(e.getValue(), "offset of " + e.getKey());
                NativeBridge.topicPartitionListAdd(list, e.getKey().topic(), e.getKey().partition(), next);
            }
            body.accept(list);
        } finally {
            NativeBridge.topicPartitionListDestroy(list);
        }
    }

    /**
     * Commits the positions of the records returned so far in the background.
     *
     * @return a future completed (on this consumer's {@code cursus-consumer-N-callbacks}
     *     thread) when the commit is done, or exceptionally with a {@link CursusException}
     */
    public CompletableFuture<Void> commitAsync() {
        CompletableFuture<Void> future = new CompletableFuture<>();
        NativeCompletion completion = NativeCompletion.forVoid(future, callbacks);
        run(h -> NativeBridge.consumerCommitAsync(h, completion));
        return future;
    }

    /**
     * The group's committed next offset of a partition.
     *
     * @param partition the partition
     * @return the offset, empty when the group committed nothing there
     */
    public OptionalLong committed(TopicPartition partition) {
        Objects.requireNonNull(partition, "partition");
        long v = call(h -> NativeBridge.consumerCommitted(h, partition.topic(), partition.partition()));
        return v < 0 ? OptionalLong.empty() : OptionalLong.of(v);
    }

    /**
     * The group's committed next offsets of these partitions, in one request.
     *
     * @param partitions the partitions
     * @return an immutable map with an entry for every partition asked for, in the set's
     *     iteration order: the committed offset, or {@code null} when the group committed
     *     nothing there (as Kafka's {@code committed(Set)})
     */
    public Map<TopicPartition, Long> committed(Set<TopicPartition> partitions) {
        Objects.requireNonNull(partitions, "partitions");
        List<TopicPartition> asked = List.copyOf(partitions);
        long[] offsets = call(h -> withPartitionList(asked, list -> Results.take(
                NativeBridge.consumerCommittedList(h, list), r -> {
                    long[] out = new long[NativeBridge.topicPartitionListCount(r)];
                    for (int i = 0; i < out.length; i++) {
                        out[i] = NativeBridge.topicPartitionListOffset(r, i);
                    }
                    return out;
                }, NativeBridge::topicPartitionListDestroy)));
        if (offsets.length != asked.size()) {
            throw CursusException.of("internal", "internal_error", ErrorClass.INTERNAL, false,
                    "committed offsets: asked for " + asked.size() + " partitions, got " + offsets.length,
                    Map.of());
        }
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < offsets.length; i++) {
            out.put(asked.get(i), offsets[i] < 0 ? null : offsets[i]);
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * Makes the next poll return records of an assigned partition from {@code offset} on;
     * records already fetched for it are dropped. Seek in
     * {@link ConsumerRebalanceListener#onPartitionsAssigned} to start there before any record
     * is returned. Commits never move backwards: after a seek backwards they stay at the
     * furthest offset returned.
     *
     * @param partition an assigned partition
     * @param offset the next offset to return (at least 0)
     * @throws ValidationException with code {@code partition_not_assigned} when the
     *     partition is not assigned (poll joins the group first)
     */
    public void seek(TopicPartition partition, long offset) {
        Objects.requireNonNull(partition, "partition");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must not be negative: " + offset);
        }
        run(h -> NativeBridge.consumerSeek(h, partition.topic(), partition.partition(), offset));
    }

    /**
     * The offset of the next record poll returns for an assigned partition.
     *
     * @param partition an assigned partition
     * @return the offset
     * @throws ValidationException with code {@code partition_not_assigned} when the
     *     partition is not assigned
     */
    public long position(TopicPartition partition) {
        Objects.requireNonNull(partition, "partition");
        return call(h -> NativeBridge.consumerPosition(h, partition.topic(), partition.partition()));
    }

    /**
     * Stops returning records of these assigned partitions until {@link #resume}; the
     * consumer stays in its group and their positions are kept.
     *
     * @param partitions assigned partitions
     */
    public void pause(Collection<TopicPartition> partitions) {
        List<TopicPartition> list = List.copyOf(Objects.requireNonNull(partitions, "partitions"));
        run(h -> withPartitionList(list, l -> {
            NativeBridge.consumerPause(h, l);
            return null;
        }));
    }

    /**
     * Returns records of these partitions again, from their positions.
     *
     * @param partitions paused partitions
     */
    public void resume(Collection<TopicPartition> partitions) {
        List<TopicPartition> list = List.copyOf(Objects.requireNonNull(partitions, "partitions"));
        run(h -> withPartitionList(list, l -> {
            NativeBridge.consumerResume(h, l);
            return null;
        }));
    }

    /**
     * The paused partitions.
     *
     * @return an immutable set, iterated in sorted order (topic, then partition)
     */
    public Set<TopicPartition> paused() {
        return Collections.unmodifiableSet(new LinkedHashSet<>(
                call(h -> Results.topicPartitions(NativeBridge.consumerPaused(h)))));
    }

    /**
     * Runs {@code body} with a native topic-partition list of {@code partitions} (no offsets),
     * destroyed afterwards.
     */
    private static <T> T withPartitionList(List<TopicPartition> partitions, java.util.function.LongFunction<T> body) {
        long list = NativeBridge.topicPartitionListNew();
        try {
            for (TopicPartition tp : partitions) {
                Objects.requireNonNull(tp, "partition");
                NativeBridge.topicPartitionListAdd(list, tp.topic(), tp.partition(), -1);
            }
            return body.apply(list);
        } finally {
            NativeBridge.topicPartitionListDestroy(list);
        }
    }

    /**
     * This consumer's statistics now: counters since it was created, the fetch latency, and
     * the lag of every assigned partition (asks the broker for their end offsets, so this is
     * a network call).
     *
     * @return the snapshot
     */
    public Statistics statistics() {
        return call(h -> Results.take(NativeBridge.consumerStatistics(h), Statistics::read,
                NativeBridge::statisticsDestroy));
    }

    /**
     * Sets (or, with a null listener, removes) the periodic statistics listener: it gets a
     * snapshot (lag included, so each one asks the broker for end offsets) every
     * {@code interval}, on this consumer's {@code cursus-consumer-N-callbacks} thread. An
     * exception it throws is logged and ignored.
     *
     * @param interval how often; null for the {@code statistics_interval_ms} option;
     *     {@link Duration#ZERO} for never (a listener that would never be called, with a zero
     *     interval or the option at 0, is refused: {@link ValidationException}, field
     *     {@code option})
     * @param listener the listener, or null
     */
    public void setStatisticsListener(Duration interval, Consumer<Statistics> listener) {
        long ms = intervalMillis(interval);
        NativeListener relay = listener == null ? null
                : new WeakListener<>(this, "statistics listener", CursusConsumer::onStatistics);
        run(h -> {
            statisticsListener = listener;
            NativeBridge.consumerSetStatisticsListener(h, ms, relay);
        });
    }

    private void onStatistics(long handle) {
        Statistics s = Statistics.read(handle);
        Consumer<Statistics> l = statisticsListener;
        if (l != null) {
            callbacks.execute(() -> deliver("statistics listener", l, s));
        }
    }

    /**
     * Sets (or, with null, removes) the error listener: it gets each background error nobody
     * is waiting for (membership lost, a lost broker connection), on this consumer's
     * {@code cursus-consumer-N-callbacks} thread. Errors a call throws are not reported
     * again. An exception it throws is logged and ignored.
     *
     * @param listener the listener, or null
     */
    public void setErrorListener(Consumer<CursusException> listener) {
        NativeListener relay = listener == null ? null
                : new WeakListener<>(this, "error listener", CursusConsumer::onError);
        run(h -> {
            errorListener = listener;
            NativeBridge.consumerSetErrorListener(h, relay);
        });
    }

    private void onError(long handle) {
        CursusException e = NativeLib.fromHandle(handle);
        Consumer<CursusException> l = errorListener;
        if (l != null) {
            callbacks.execute(() -> deliver("error listener", l, e));
        }
    }

    /**
     * A statistics interval as the library takes it: -1 for the {@code statistics_interval_ms}
     * option (null), 0 for never, else milliseconds (at least 1).
     */
    static long intervalMillis(Duration interval) {
        if (interval == null) {
            return -1;
        }
        if (interval.isNegative()) {
            throw new IllegalArgumentException("interval must not be negative: " + interval);
        }
        if (interval.isZero()) {
            return 0;
        }
        try {
            return Math.max(1, interval.toMillis());
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** Runs a user's listener; what it throws is logged, never propagated. */
    static <T> void deliver(String what, Consumer<T> listener, T event) {
        try {
            listener.accept(event);
        } catch (Throwable t) {
            EngineLog.listenerFailed(what, t);
        }
    }

    /**
     * The partitions currently assigned to this member.
     *
     * @return the partitions
     */
    public List<TopicPartition> assignment() {
        return call(h -> Results.topicPartitions(NativeBridge.consumerAssignment(h)));
    }

    /**
     * This member's id in its group (as {@link CursusAdmin#groupStatus} lists it).
     *
     * @return the id, empty before the member has joined (the first poll after
     *     subscribing joins)
     */
    public String memberId() {
        return call(NativeBridge::consumerMemberId);
    }

    /**
     * Commits (with {@code enable_auto_commit}), leaves the group and closes; a poll blocked
     * on another thread throws {@link CursusClosedException} at once. Only the first call
     * does anything.
     */
    @Override
    public void close() {
        closeWith(NativeBridge::consumerClose);
    }

    @Override
    void afterClose() {
        callbacks.shutdown();
        rebalanceListener = null;
        errorListener = null;
        statisticsListener = null;
        pollBuffer.set(null);
    }
}
