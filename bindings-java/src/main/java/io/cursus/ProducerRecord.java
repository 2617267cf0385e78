package io.cursus;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A record to send. Build one with {@link #of(String, byte[])} /
 * {@link #of(String, String)} and refine it with {@link #withKey}, {@link #withPartition} and
 * {@link #withTimestamp}; {@link #withMetadata} and {@link #withTraceContext} give it metadata
 * and the W3C trace context of the span sending it (docs/observability.md, "Trace context in
 * records").
 *
 * @param topic topic
 * @param partition explicit partition, or null to let the partitioner choose (by key hash)
 * @param key key (records with the same key go to the same partition), or null
 * @param value value bytes (binary-safe, may be empty)
 * @param timestamp milliseconds since the epoch, or null to stamp the send time
 * @param metadata the record's own metadata (UTF-8, usually a JSON object), or null for none
 * @param traceContext the trace context the record carries (the engine adds it to the
 *     metadata), or null for none
 */
public record ProducerRecord(String topic, Integer partition, byte[] key, byte[] value, Long timestamp,
        String metadata, TraceContext traceContext) {
    /**
     * Checks the arguments.
     *
     * @param topic topic
     * @param partition explicit partition, or null to let the partitioner choose (by key hash)
     * @param key key (records with the same key go to the same partition), or null
     * @param value value bytes (binary-safe, may be empty)
     * @param timestamp milliseconds since the epoch, or null to stamp the send time
     * @param metadata the record's own metadata, or null for none
     * @param traceContext the trace context the record carries, or null for none
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
     * A record without metadata or trace context.
     *
     * @param topic topic
     * @param partition explicit partition, or null to let the partitioner choose (by key hash)
     * @param key key, or null
     * @param value value bytes
     * @param timestamp milliseconds since the epoch, or null to stamp the send time
     */
    public ProducerRecord(String topic, Integer partition, byte[] key, byte[] value, Long timestamp) {
        this(topic, partition, key, value, timestamp, null, null);
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
        return new ProducerRecord(topic, partition, newKey, value, timestamp, metadata, traceContext);
    }

    /**
     * This record sent to an explicit partition.
     *
     * @param newPartition the partition
     * @return a copy with the partition
     */
    public ProducerRecord withPartition(int newPartition) {
        return new ProducerRecord(topic, newPartition, key, value, timestamp, metadata, traceContext);
    }

    /**
     * This record with an explicit timestamp.
     *
     * @param newTimestamp milliseconds since the epoch
     * @return a copy with the timestamp
     */
    public ProducerRecord withTimestamp(long newTimestamp) {
        return new ProducerRecord(topic, partition, key, value, newTimestamp, metadata, traceContext);
    }

    /**
     * This record with metadata of its own.
     *
     * @param newMetadata the metadata (UTF-8 text, usually a JSON object), or null for none
     * @return a copy with the metadata
     */
    public ProducerRecord withMetadata(String newMetadata) {
        return new ProducerRecord(topic, partition, key, value, timestamp, newMetadata, traceContext);
    }

    /**
     * This record carrying a W3C trace context. The engine adds it to the metadata: as the
     * members {@code traceparent} and {@code tracestate} of a JSON object (the application's
     * object is kept; one that already has a {@code traceparent} wins; metadata that is not a
     * JSON object is sent unchanged, without the context).
     *
     * @param newTraceContext the context, or null for none
     * @return a copy with the context
     */
    public ProducerRecord withTraceContext(TraceContext newTraceContext) {
        return new ProducerRecord(topic, partition, key, value, timestamp, metadata, newTraceContext);
    }
}
