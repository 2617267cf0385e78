package io.cursus;

import java.nio.charset.StandardCharsets;

/**
 * An event as stored in an aggregate's stream (or, from {@link CursusEventStore#browse}, any
 * record of a partition: a record that is no event has version 0, an empty type and empty
 * metadata). Key and payload are kept as bytes, so a browsed record that is not text comes
 * back intact; {@link #key()} and {@link #payload()} decode them as UTF-8.
 *
 * @param topic the topic
 * @param partition the partition
 * @param offset the offset in the partition
 * @param timestamp milliseconds since the epoch (0 when unknown)
 * @param keyBytes the aggregate key (empty for a record without one); do not modify
 * @param version the version in the aggregate's stream (0 for a record that is no event)
 * @param eventType the event type
 * @param schemaVersion the payload's schema version
 * @param metadata the metadata text (empty when none)
 * @param payloadBytes the payload; do not modify
 */
public record StoredEvent(
        String topic,
        int partition,
        long offset,
        long timestamp,
        byte[] keyBytes,
        long version,
        String eventType,
        int schemaVersion,
        String metadata,
        byte[] payloadBytes) {
    /**
     * The aggregate key, decoded as UTF-8 (empty when none).
     *
     * @return the key
     */
    public String key() {
        return new String(keyBytes, StandardCharsets.UTF_8);
    }

    /**
     * The payload, decoded as UTF-8 (event payloads are text).
     *
     * @return the payload text
     */
    public String payload() {
        return new String(payloadBytes, StandardCharsets.UTF_8);
    }

    /**
     * Whether this is an event of an aggregate's stream (version at least 1), not a plain
     * record met by {@link CursusEventStore#browse}.
     *
     * @return true for an event
     */
    public boolean isEvent() {
        return version > 0;
    }
}
