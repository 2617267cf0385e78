package io.cursus;

import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Reading the hand-shaped result handles into Java values: every result handle is read through
 * its accessors, then destroyed, even when reading fails. The declared results are read by the
 * generated {@link ResultReaders}.
 */
final class Results {
    private Results() {}

    /** Reads {@code handle} with {@code read}, then destroys it. */
    static <T> T take(long handle, LongFunction<T> read, LongConsumer destroy) {
        try {
            return read.apply(handle);
        } finally {
            destroy.accept(handle);
        }
    }

    /** Reads a topic-partition list handle (destroying it). */
    static List<TopicPartition> topicPartitions(long list) {
        return take(list, h -> ResultReaders.list(NativeBridge.topicPartitionListCount(h), i -> new TopicPartition(
                NativeBridge.topicPartitionListTopic(h, i),
                (int) NativeBridge.topicPartitionListPartition(h, i))),
                NativeBridge::topicPartitionListDestroy);
    }
}
