package io.cursus;

import java.util.Objects;
import java.util.function.LongFunction;

/**
 * An event to append to an aggregate's stream with {@link CursusEventStore#append} (or inside a
 * transaction with {@link CursusProducer#appendStream}). Build one with
 * {@link #of(String, String)} and refine it with {@link #withMetadata},
 * {@link #withSchemaVersion} and {@link #withEventId}. Payload and metadata are UTF-8 text (the
 * protocol carries them as text, so serialise binary data first, e.g. as Base64 or JSON).
 *
 * <p><b>Event ids.</b> Every append carries an event id: the one given with
 * {@link #withEventId}, else one the engine generates (128 random bits in hex). On an
 * {@linkplain NewTopic#aggregateReplay(boolean) aggregate replay topic} the id is the event's
 * identity: appending the same event again (same version, id and payload) answers the original
 * version and offset without storing it twice, so give an id of your own when a retry after a
 * crash or a lost reply must not create a second event; reusing an id (or a version) for
 * another event fails with a {@link ConflictException} of code
 * {@code aggregate_identity_conflict}.
 *
 * @param type the event type (e.g. {@code OrderCreated}; may be empty)
 * @param payload the payload text; the broker refuses an empty one ({@code missing_message})
 * @param metadata the metadata text (empty: none)
 * @param schemaVersion the payload's schema version, at least 1; 0 lets the broker use 1
 * @param eventId the event's id: text without whitespace (the library refuses any other with
 *     a {@link ValidationException} of code {@code invalid_argument} at append, as in every language), unique per partition
 *     of a replay topic; empty: the engine generates one at each append
 */
public record Event(String type, String payload, String metadata, int schemaVersion, String eventId) {
    /**
     * Checks the arguments; a null payload, metadata or event id is empty.
     *
     * @param type the event type (e.g. {@code OrderCreated}; may be empty)
     * @param payload the payload text; the broker refuses an empty one ({@code missing_message})
     * @param metadata the metadata text (empty: none)
     * @param schemaVersion the payload's schema version, at least 1; 0 lets the broker use 1
     * @param eventId the event's id: text without whitespace (the library refuses any other with
     *     a {@link ValidationException} of code {@code invalid_argument} at append, as in every language), unique per partition
     *     of a replay topic; empty: the engine generates one at each append
     */
    public Event {
        Objects.requireNonNull(type, "type");
        if (payload == null) {
            payload = "";
        }
        if (metadata == null) {
            metadata = "";
        }
        if (eventId == null) {
            eventId = "";
        }
        if (schemaVersion < 0) {
            throw new IllegalArgumentException("schemaVersion must not be negative: " + schemaVersion);
        }
    }

    /**
     * An event without an event id of its own (the engine generates one at each append).
     *
     * @param type the event type (may be empty)
     * @param payload the payload text
     * @param metadata the metadata text (empty or null: none)
     * @param schemaVersion the payload's schema version (0: the broker's default, 1)
     */
    public Event(String type, String payload, String metadata, int schemaVersion) {
        this(type, payload, metadata, schemaVersion, "");
    }

    /**
     * An event without metadata, with the broker's default schema version (1).
     *
     * @param type the event type
     * @param payload the payload text
     * @return the event
     */
    public static Event of(String type, String payload) {
        return new Event(type, payload, "", 0, "");
    }

    /**
     * This event with metadata (e.g. a JSON object with the causing user or request).
     *
     * @param newMetadata the metadata text
     * @return a copy with the metadata
     */
    public Event withMetadata(String newMetadata) {
        return new Event(type, payload, newMetadata, schemaVersion, eventId);
    }

    /**
     * This event with an explicit schema version.
     *
     * @param newSchemaVersion the payload's schema version (at least 1; 0: the broker's default)
     * @return a copy with the schema version
     */
    public Event withSchemaVersion(int newSchemaVersion) {
        return new Event(type, payload, metadata, newSchemaVersion, eventId);
    }

    /**
     * This event with an id of its own (see the class documentation): the same id on a retried
     * append lets an aggregate replay topic recognise the retry.
     *
     * @param newEventId text without whitespace, checked by the library at append (null or
     *     empty: none, the engine generates one at each append)
     * @return a copy with the event id
     */
    public Event withEventId(String newEventId) {
        return new Event(type, payload, metadata, schemaVersion, newEventId);
    }

    /** Whether this event carries an id of its own. */
    boolean hasEventId() {
        return !eventId.isEmpty();
    }

    /**
     * Builds the engine's event (an event builder handle), runs {@code use} with it and
     * destroys it.
     */
    <T> T withBuilder(LongFunction<T> use) {
        long b = NativeBridge.eventBuilderNew(type, payload);
        try {
            if (!metadata.isEmpty()) {
                NativeBridge.eventBuilderSetMetadata(b, metadata);
            }
            if (schemaVersion != 0) {
                NativeBridge.eventBuilderSetSchemaVersion(b, schemaVersion);
            }
            if (!eventId.isEmpty()) {
                NativeBridge.eventBuilderSetEventId(b, eventId);
            }
            return use.apply(b);
        } finally {
            NativeBridge.eventBuilderDestroy(b);
        }
    }
}
