package io.cursus;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A record to send. Build one with {@link #of(String, byte[])} /
 * {@link #of(String, String)} and refine it with {@link #withKey}, {@link #withPartition} and
 * {@link #withTimestamp}.
 *
 * @param topic topic
 * @param partition explicit partition, or null to let the partitioner choose (by key hash)
 * @param key key (records with the same key go to the same partition), or null
 * @param value value bytes (binary-safe, may be empty)
 * @param timestamp milliseconds since the epoch, or null to stamp the send time
 */
public record ProducerRecord(String topic, Integer partition, byte[] key, byte[] value, Long timestamp) {
    /**
     * Checks the arguments.
     *
     * @param topic topic
     * @param partition explicit partition, or null to let the partitioner choose (by key hash)
     * @param key key (records with the same key go to the same partition), or null
     * @param value value bytes (binary-safe, may be empty)
     * @param timestamp milliseconds since the epoch, or null to stamp the send time
     */
    public ProducerRecord {
        Objects.requireNonNull(topic, "topic");
        if (partition != null && partition < 0) {
            throw new IllegalArgumentException("partition must not be negative");
        }
        if (value == null) {
            value = new byte[0];
        }
    }

    /**
     * A record carrying {@code value}.
     *
     * @param topic the topic
     * @param value the value bytes
     * @return the record, without key, partition or timestamp
     */
    public static ProducerRecord of(String topic, byte[] value) {
        return new ProducerRecord(topic, null, null, value, null);
    }

    /**
     * A record carrying {@code value} encoded as UTF-8.
     *
     * @param topic the topic
     * @param value the value text
     * @return the record, without key, partition or timestamp
     */
    public static ProducerRecord of(String topic, String value) {
        return of(topic, value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A record with a key, both encoded as UTF-8.
     *
     * @param topic the topic
     * @param key the key text
     * @param value the value text
     * @return the record, without partition or timestamp
     */
    public static ProducerRecord of(String topic, String key, String value) {
        return of(topic, value).withKey(key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * This record with a key.
     *
     * @param newKey the key bytes, or null for none
     * @return a copy with the key
     */
    public ProducerRecord withKey(byte[] newKey) {
        return new ProducerRecord(topic, partition, newKey, value, timestamp);
    }

    /**
     * This record sent to an explicit partition.
     *
     * @param newPartition the partition
     * @return a copy with the partition
     */
    public ProducerRecord withPartition(int newPartition) {
        return new ProducerRecord(topic, newPartition, key, value, timestamp);
    }

    /**
     * This record with an explicit timestamp.
     *
     * @param newTimestamp milliseconds since the epoch
     * @return a copy with the timestamp
     */
    public ProducerRecord withTimestamp(long newTimestamp) {
        return new ProducerRecord(topic, partition, key, value, newTimestamp);
    }
}
