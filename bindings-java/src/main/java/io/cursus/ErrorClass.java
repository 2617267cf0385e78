package io.cursus;

/** The eight error classes of the Cursus protocol; every error has exactly one. */
public enum ErrorClass {
    /** The request is malformed or has an invalid value (also: misuse, closed objects). */
    VALIDATION("validation"),
    /** Authentication or authorization failed. */
    AUTHORIZATION("authorization"),
    /** Sent to the wrong broker; the engine follows the advertised address. */
    ROUTING("routing"),
    /** Temporarily unavailable (network failures and timeouts too); back off and retry. */
    AVAILABILITY("availability"),
    /** The request conflicts with current state. */
    CONFLICT("conflict"),
    /** A newer generation, owner or epoch has fenced this one. */
    FENCING("fencing"),
    /** The named resource does not exist. */
    NOT_FOUND("not_found"),
    /** A failure inside the broker or the library. */
    INTERNAL("internal");

    private final String wireName;

    ErrorClass(String wireName) {
        this.wireName = wireName;
    }

    /**
     * The protocol's name of the class, e.g. {@code not_found}.
     *
     * @return the protocol name
     */
    public String wireName() {
        return wireName;
    }

    /**
     * The class with this protocol name; unknown names map to {@link #INTERNAL}.
     *
     * @param name the protocol name
     * @return the class, {@link #INTERNAL} when unknown
     */
    public static ErrorClass fromWireName(String name) {
        for (ErrorClass c : values()) {
            if (c.wireName.equals(name)) {
                return c;
            }
        }
        return INTERNAL;
    }
}
