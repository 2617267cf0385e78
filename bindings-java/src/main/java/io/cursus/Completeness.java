package io.cursus;

/**
 * How complete a page of {@link CursusEventStore#history history} is: whether retention or
 * compaction removed events of the range asked for.
 */
public enum Completeness {
    /** Every event of the range is there. */
    COMPLETE("complete"),
    /** Some events of the range are gone (retention or compaction). */
    PARTIAL("partial"),
    /** The broker cannot tell. */
    UNKNOWN("unknown");

    private final String wireName;

    Completeness(String wireName) {
        this.wireName = wireName;
    }

    /**
     * The protocol's name ({@code complete}, {@code partial}, {@code unknown}).
     *
     * @return the name
     */
    public String wireName() {
        return wireName;
    }

    /** The value for a protocol name; null for an empty name (a page that is no history page). */
    static Completeness fromWireName(String name) {
        if (name == null || name.isEmpty()) {
            return null;
        }
        for (Completeness c : values()) {
            if (c.wireName.equals(name)) {
                return c;
            }
        }
        throw CursusException.of("protocol", "protocol_error", ErrorClass.INTERNAL, false,
                "unknown history completeness " + name, java.util.Map.of());
    }
}
