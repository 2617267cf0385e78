package io.cursus;

import java.nio.charset.StandardCharsets;

/**
 * One event of a range read ({@link CursusEventStore#eventRange}).
 *
 * @param offset the event's offset in the aggregate's partition
 * @param sequence the event's sequence: its version in the aggregate's stream
 * @param eventId the event's id
 * @param eventType the event type (may be empty)
 * @param payload the payload text, as stored
 */
public record RangeEvent(long offset, long sequence, String eventId, String eventType, String payload) {
    /**
     * Checks the arguments; null texts are empty.
     *
     * @param offset the event's offset in the aggregate's partition
     * @param sequence the event's sequence: its version in the aggregate's stream
     * @param eventId the event's id
     * @param eventType the event type (may be empty)
     * @param payload the payload text, as stored
     */
    public RangeEvent {
        eventId = eventId == null ? "" : eventId;
        eventType = eventType == null ? "" : eventType;
        payload = payload == null ? "" : payload;
    }

    /**
     * The payload as UTF-8 bytes.
     *
     * @return a new array
     */
    public byte[] payloadBytes() {
        return payload.getBytes(StandardCharsets.UTF_8);
    }
}
