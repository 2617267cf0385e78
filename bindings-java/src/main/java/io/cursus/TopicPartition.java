package io.cursus;

import java.util.Objects;

/**
 * A partition of a topic.
 *
 * @param topic topic name
 * @param partition partition id
 */
public record TopicPartition(String topic, int partition) {
    /**
     * Checks the arguments.
     *
     * @param topic topic name
     * @param partition partition id
     */
    public TopicPartition {
        Objects.requireNonNull(topic, "topic");
        if (partition < 0) {
            throw new IllegalArgumentException("partition must not be negative");
        }
    }
}
