package io.cursus;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * A record delivered by {@link CursusConsumer#poll}. Key, value and metadata are
 * binary-safe; fields a record does not carry are {@code null} (the event fields are set only
 * for an event of an event-sourcing topic).
 *
 * @param topic topic
 * @param partition partition
 * @param offset offset
 * @param timestamp milliseconds since the epoch: the producer's timestamp (the one its
 *     {@link RecordMetadata#timestamp()} reported), 0 when unknown
 * @param key key bytes, or {@code null} when the record has no key (the protocol carries only
 *     non-empty keys, so a producer's empty key arrives as no key); do not modify
 * @param value value bytes; do not modify
 * @param metadata the record's metadata (UTF-8, usually JSON on event-sourcing topics), or
 *     {@code null} when it has none
 * @param eventType the event type when the record is an event, else {@code null}
 * @param schemaVersion the event's payload schema version (0 when the record is not an event)
 * @param aggregateVersion the aggregate version the event created (-1 when the record is not
 *     an event)
 * @param eventId the event's id, or {@code null} when the record is not an event or the event
 *     has no id
 */
public record ConsumerRecord(
        String topic,
        int partition,
        long offset,
        long timestamp,
        byte[] key,
        byte[] value,
        String metadata,
        String eventType,
        int schemaVersion,
        long aggregateVersion,
        String eventId) {
    /**
     * A record that is not an event and has no metadata.
     *
     * @param topic topic
     * @param partition partition
     * @param offset offset
     * @param timestamp milliseconds since the epoch (0 when unknown)
     * @param key key bytes, or null for none
     * @param value value bytes
     */
    public ConsumerRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value) {
        this(topic, partition, offset, timestamp, key, value, null, null, 0, -1, null);
    }

    /**
     * The value decoded as UTF-8.
     *
     * @return the value as text
     */
    public String valueAsString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    /**
     * The key decoded as UTF-8, or {@code null} when the record has no key.
     *
     * @return the key as text, or null
     */
    public String keyAsString() {
        return key == null ? null : new String(key, StandardCharsets.UTF_8);
    }

    /**
     * Whether the record has a key.
     *
     * @return whether the key is set
     */
    public boolean hasKey() {
        return key != null;
    }

    /**
     * Whether the record is an event of an event-sourcing topic (then {@link #eventType()} is set).
     *
     * @return whether the record is an event
     */
    public boolean isEvent() {
        return eventType != null;
    }

    /**
     * The partition of this record.
     *
     * @return the topic and partition
     */
    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }

    /**
     * The W3C trace context the record carries in its {@link #metadata()}: the context of the
     * span that sent it (docs/observability.md, "Trace context in records"). Read by the
     * engine on each call; empty when the record carries none or a malformed one.
     *
     * @return the trace context, if any
     */
    public Optional<TraceContext> traceContext() {
        return TraceContext.extract(metadata);
    }
}
