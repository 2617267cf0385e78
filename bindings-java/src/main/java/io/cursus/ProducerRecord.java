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
    /** Checks the arguments. */
    public ProducerRecord {
        Objects.requireNonNull(topic, "topic");
        if (partition != null && partition < 0) {
            throw new IllegalArgumentException("partition must not be negative");
        }
        if (value == null) {
            value = new byte[0];
        }
    }

    /** A record carrying {@code value}. */
    public static ProducerRecord of(String topic, byte[] value) {
        return new ProducerRecord(topic, null, null, value, null);
    }

    /** A record carrying {@code value} encoded as UTF-8. */
    public static ProducerRecord of(String topic, String value) {
        return of(topic, value.getBytes(StandardCharsets.UTF_8));
    }

    /** A record with a key, both encoded as UTF-8. */
    public static ProducerRecord of(String topic, String key, String value) {
        return of(topic, value).withKey(key.getBytes(StandardCharsets.UTF_8));
    }

    /** This record with a key. */
    public ProducerRecord withKey(byte[] newKey) {
        return new ProducerRecord(topic, partition, newKey, value, timestamp);
    }

    /** This record sent to an explicit partition. */
    public ProducerRecord withPartition(int newPartition) {
        return new ProducerRecord(topic, newPartition, key, value, timestamp);
    }

    /** This record with an explicit timestamp. */
    public ProducerRecord withTimestamp(long newTimestamp) {
        return new ProducerRecord(topic, partition, key, value, newTimestamp);
    }
}
