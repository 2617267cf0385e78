package io.cursus;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * A consumer-group member: subscribes to topics, polls records of the partitions assigned
 * to it, and commits positions. A group member is normally driven by one thread; from any
 * other thread, {@link #wakeup()} makes a blocked {@link #poll} return empty at once and
 * {@link #close()} makes it throw {@link CursusClosedException} at once.
 *
 * <p>Only records a poll returned count as delivered: commits (explicit, automatic, or at
 * close with {@code enable_auto_commit}) cover exactly those.
 */
public final class CursusConsumer extends NativeResource {
    private final Callbacks callbacks;

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
        return RecordView.decode(call(h -> NativeBridge.consumerPollBatch(h, ms, maxRecords)));
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
    }
}
