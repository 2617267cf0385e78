package io.cursus;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Root of every error the Cursus SDK throws. Each error carries the engine's
 * machine-readable {@linkplain #code() code}, its {@linkplain #errorClass() class}
 * (one subclass of this exception per class), whether it is
 * {@linkplain #isRetryable() retryable}, a message and structured
 * {@linkplain #fields() fields}. Unchecked, so it fits lambdas and futures.
 */
public abstract class CursusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String kind;
    private final String code;
    private final ErrorClass errorClass;
    private final boolean retryable;
    private final String detail;
    private final Map<String, String> fields;

    /**
     * Builds an error.
     *
     * @param kind where it comes from: {@code broker}, {@code io}, {@code timeout},
     *     {@code protocol}, {@code closed}, {@code invalid_argument} or {@code internal}
     * @param code machine-readable code, e.g. {@code topic_not_found}
     * @param errorClass the class
     * @param retryable whether the same operation may be attempted again
     * @param message human-readable detail (may be empty)
     * @param fields structured details (copied)
     */
    protected CursusException(
            String kind,
            String code,
            ErrorClass errorClass,
            boolean retryable,
            String message,
            Map<String, String> fields) {
        super(render(code, errorClass, retryable, message, fields));
        this.kind = kind;
        this.code = code;
        this.errorClass = errorClass;
        this.retryable = retryable;
        this.detail = message == null ? "" : message;
        this.fields = Collections.unmodifiableMap(new TreeMap<>(fields == null ? Map.of() : fields));
    }

    private static String render(
            String code, ErrorClass c, boolean retryable, String message, Map<String, String> fields) {
        StringBuilder b = new StringBuilder(code).append(" (class=").append(c.wireName());
        b.append(", retryable=").append(retryable).append(')');
        if (message != null && !message.isEmpty()) {
            b.append(": ").append(message);
        }
        if (fields != null) {
            new TreeMap<>(fields).forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
        }
        return b.toString();
    }

    /** Where the error comes from: {@code broker} for broker errors, else the local kind. */
    public String kind() {
        return kind;
    }

    /** Machine-readable code (the broker's code, or the local kind's, e.g. {@code timeout}). */
    public String code() {
        return code;
    }

    /** The error class. */
    public ErrorClass errorClass() {
        return errorClass;
    }

    /** Whether the same operation may be attempted again (with backoff). */
    public boolean isRetryable() {
        return retryable;
    }

    /** The human-readable detail alone (without code and fields). */
    public String detail() {
        return detail;
    }

    /** Structured details (e.g. {@code leader}, {@code earliest}); immutable, sorted by name. */
    public Map<String, String> fields() {
        return fields;
    }

    /** One field's value, or null. */
    public String field(String name) {
        return fields.get(name);
    }

    /**
     * Builds the exception of the right subclass for an engine error: by class, with
     * {@link CursusTimeoutException} for timeouts and {@link CursusClosedException} for
     * closed objects.
     */
    public static CursusException of(
            String kind,
            String code,
            ErrorClass errorClass,
            boolean retryable,
            String message,
            Map<String, String> fields) {
        if ("timeout".equals(kind)) {
            return new CursusTimeoutException(kind, code, errorClass, retryable, message, fields);
        }
        if ("closed".equals(kind)) {
            return new CursusClosedException(kind, code, errorClass, retryable, message, fields);
        }
        switch (errorClass) {
            case VALIDATION:
                return new ValidationException(kind, code, errorClass, retryable, message, fields);
            case AUTHORIZATION:
                return new AuthorizationException(kind, code, errorClass, retryable, message, fields);
            case ROUTING:
                return new RoutingException(kind, code, errorClass, retryable, message, fields);
            case AVAILABILITY:
                return new AvailabilityException(kind, code, errorClass, retryable, message, fields);
            case CONFLICT:
                return new ConflictException(kind, code, errorClass, retryable, message, fields);
            case FENCING:
                return new FencingException(kind, code, errorClass, retryable, message, fields);
            case NOT_FOUND:
                return new NotFoundException(kind, code, errorClass, retryable, message, fields);
            default:
                return new InternalException(kind, code, errorClass, retryable, message, fields);
        }
    }
}
