package io.cursus;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * A consumer-group member: subscribes to topics, polls records of the partitions assigned
 * to it, and commits positions. Thread-safe, but a group member is normally driven by one
 * thread. Close it to leave the group.
 */
public final class CursusConsumer extends NativeResource {
    /**
     * Connects.
     *
     * @param config consumer options ({@code group_id} is required)
     */
    public CursusConsumer(ConsumerConfig config) {
        super("consumer", connect(config), NativeLib::consumerFree);
    }

    private static long connect(ConsumerConfig config) {
        Objects.requireNonNull(config, "config");
        NativeLib.ensureLoaded();
        return NativeLib.consumerConnect(config.pairs());
    }

    /** Subscribes to these topics (replacing any previous subscription). */
    public void subscribe(Collection<String> topics) {
        String[] list = topics.toArray(new String[0]);
        run(h -> NativeLib.consumerSubscribe(h, list));
    }

    /** Subscribes to every topic matching a glob pattern ({@code *}, {@code ?}). */
    public void subscribePattern(String pattern) {
        Objects.requireNonNull(pattern, "pattern");
        run(h -> NativeLib.consumerSubscribePattern(h, pattern));
    }

    /**
     * Polls for records, waiting at most {@code timeout} when none are ready.
     *
     * @return the records (possibly empty), in offset order per partition
     */
    public List<ConsumerRecord> poll(Duration timeout) {
        long ms = Math.max(0, timeout.toMillis());
        byte[] encoded = call(h -> NativeLib.consumerPoll(h, ms));
        Decoder d = new Decoder(encoded);
        int n = d.u32();
        List<ConsumerRecord> out = new ArrayList<>(n);
        String lastTopic = null;
        for (int i = 0; i < n; i++) {
            String topic = d.str();
            if (topic.equals(lastTopic)) {
                topic = lastTopic;
            }
            lastTopic = topic;
            out.add(new ConsumerRecord(topic, d.u32(), d.i64(), d.i64(), d.bytes(), d.bytes()));
        }
        return List.copyOf(out);
    }

    /** Commits the positions of the records delivered so far, and waits. */
    public void commitSync() {
        run(NativeLib::consumerCommitSync);
    }

    /** Commits explicit next offsets (the offset of the next record to read), and waits. */
    public void commitSync(Map<TopicPartition, Long> offsets) {
        int n = offsets.size();
        String[] topics = new String[n];
        int[] partitions = new int[n];
        long[] next = new long[n];
        int i = 0;
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            topics[i] = e.getKey().topic();
            partitions[i] = e.getKey().partition();
            next[i] = e.getValue();
            i++;
        }
        run(h -> NativeLib.consumerCommitOffsets(h, topics, partitions, next));
    }

    /**
     * Commits the positions of the records delivered so far in the background.
     *
     * @return a future completed (on the {@code cursus-callbacks} thread) when the commit is
     *     done, or exceptionally with a {@link CursusException}
     */
    public CompletableFuture<Void> commitAsync() {
        CompletableFuture<Void> future = new CompletableFuture<>();
        NativeCompletion completion = NativeCompletion.forVoid(future);
        run(h -> NativeLib.consumerCommitAsync(h, completion));
        return future;
    }

    /** The committed next offset of a partition, if any. */
    public OptionalLong committed(TopicPartition partition) {
        long v = call(h -> NativeLib.consumerCommitted(h, partition.topic(), partition.partition()));
        return v < 0 ? OptionalLong.empty() : OptionalLong.of(v);
    }

    /** The partitions currently assigned to this member. */
    public List<TopicPartition> assignment() {
        Decoder d = new Decoder(call(NativeLib::consumerAssignment));
        int n = d.u32();
        List<TopicPartition> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new TopicPartition(d.str(), d.u32()));
        }
        return List.copyOf(out);
    }

    /**
     * Commits (with auto-commit), leaves the group and closes. Idempotent; waits for calls
     * in flight (e.g. a poll on another thread) to return before freeing the handle.
     */
    @Override
    public void close() {
        closeWith(NativeLib::consumerClose);
    }
}
