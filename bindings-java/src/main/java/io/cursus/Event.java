package io.cursus;

import java.util.Objects;

/**
 * An event to append to an aggregate's stream with {@link CursusEventStore#append}. Build one
 * with {@link #of(String, String)} and refine it with {@link #withMetadata} and
 * {@link #withSchemaVersion}. Payload and metadata are UTF-8 text (the protocol carries them
 * as text, so serialise binary data first, e.g. as Base64 or JSON).
 *
 * @param type the event type (e.g. {@code OrderCreated}; may be empty)
 * @param payload the payload text; the broker refuses an empty one ({@code missing_message})
 * @param metadata the metadata text (empty: none)
 * @param schemaVersion the payload's schema version, at least 1; 0 lets the broker use 1
 */
public record Event(String type, String payload, String metadata, int schemaVersion) {
    /** Checks the arguments; a null payload or metadata is empty. */
    public Event {
        Objects.requireNonNull(type, "type");
        if (payload == null) {
            payload = "";
        }
        if (metadata == null) {
            metadata = "";
        }
        if (schemaVersion < 0) {
            throw new IllegalArgumentException("schemaVersion must not be negative: " + schemaVersion);
        }
    }

    /**
     * An event without metadata, with the broker's default schema version (1).
     *
     * @param type the event type
     * @param payload the payload text
     * @return the event
     */
    public static Event of(String type, String payload) {
        return new Event(type, payload, "", 0);
    }

    /**
     * This event with metadata (e.g. a JSON object with the causing user or request).
     *
     * @param newMetadata the metadata text
     * @return a copy with the metadata
     */
    public Event withMetadata(String newMetadata) {
        return new Event(type, payload, newMetadata, schemaVersion);
    }

    /**
     * This event with an explicit schema version.
     *
     * @param newSchemaVersion the payload's schema version (at least 1; 0: the broker's default)
     * @return a copy with the schema version
     */
    public Event withSchemaVersion(int newSchemaVersion) {
        return new Event(type, payload, metadata, newSchemaVersion);
    }
}
