package io.cursus;

import java.nio.charset.StandardCharsets;

/**
 * A record delivered by {@link CursusConsumer#poll}. Key and value are binary-safe.
 *
 * @param topic topic
 * @param partition partition
 * @param offset offset
 * @param timestamp milliseconds since the epoch (0 when unknown)
 * @param key key bytes (empty when the record has none); do not modify
 * @param value value bytes; do not modify
 */
public record ConsumerRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value) {
    /** The value decoded as UTF-8. */
    public String valueAsString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    /** The key decoded as UTF-8 (empty when none). */
    public String keyAsString() {
        return new String(key, StandardCharsets.UTF_8);
    }

    /** The partition of this record. */
    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }
}
