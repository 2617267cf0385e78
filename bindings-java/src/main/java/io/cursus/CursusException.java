package io.cursus;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Root of every error the Cursus SDK throws. Each error carries the engine's
 * machine-readable {@linkplain #code() code}, its {@linkplain #errorClass() class}
 * (one subclass of this exception per class), whether it is
 * {@linkplain #isRetryable() retryable}, a message and structured
 * {@linkplain #fields() fields}. Unchecked, so it fits lambdas and futures.
 *
 * <p>{@link #getMessage()} is the engine's readable text, the same in every language:
 * {@code code (class[, retryable]): message; field=value, ...}, e.g.
 * {@code topic_not_found (not_found): topic 'orders' does not exist; topic=orders}.
 */
public abstract class CursusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Where the error comes from ({@link #kind()}). */
    private final String kind;
    /** Machine-readable code ({@link #code()}). */
    private final String code;
    /** The error class ({@link #errorClass()}). */
    private final ErrorClass errorClass;
    /** Whether the operation may be retried ({@link #isRetryable()}). */
    private final boolean retryable;
    /** The human-readable detail ({@link #detail()}). */
    private final String detail;
    /** Structured details ({@link #fields()}). */
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
     * @param fields structured details (copied, order kept)
     */
    protected CursusException(
            String kind,
            String code,
            ErrorClass errorClass,
            boolean retryable,
            String message,
            Map<String, String> fields) {
        this(kind, code, errorClass, retryable, message, fields, render(code, errorClass, retryable, message, fields));
    }

    /** Builds an error whose readable text was rendered by the engine. */
    CursusException(String kind, String code, ErrorClass errorClass, boolean retryable, String message,
            Map<String, String> fields, String text) {
        super(text);
        this.kind = kind;
        this.code = code;
        this.errorClass = errorClass;
        this.retryable = retryable;
        this.detail = message == null ? "" : message;
        this.fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields == null ? Map.of() : fields));
    }

    /**
     * The engine's rendering of an error, for errors raised in Java (a closed object, an
     * interrupted wait); {@code ErrorTest} checks it against the engine's own.
     */
    static String render(String code, ErrorClass c, boolean retryable, String message, Map<String, String> fields) {
        StringBuilder b = new StringBuilder(code).append(" (").append(c.wireName());
        if (retryable) {
            b.append(", retryable");
        }
        b.append(')');
        String sep = ": ";
        if (message != null && !message.isEmpty()) {
            b.append(sep).append(message);
            sep = "; ";
        }
        if (fields != null) {
            for (Map.Entry<String, String> f : fields.entrySet()) {
                b.append(sep).append(f.getKey()).append('=').append(f.getValue());
                sep = ", ";
            }
        }
        return b.toString();
    }

    /**
     * Where the error comes from: {@code broker} for broker errors, else the local kind.
     *
     * @return {@code broker}, or the local kind
     */
    public String kind() {
        return kind;
    }

    /**
     * Machine-readable code (the broker's code, or the local kind's, e.g. {@code timeout}).
     *
     * @return the code
     */
    public String code() {
        return code;
    }

    /**
     * The error class.
     *
     * @return the class
     */
    public ErrorClass errorClass() {
        return errorClass;
    }

    /**
     * Whether the same operation may be attempted again (with backoff).
     *
     * @return whether the operation may be retried
     */
    public boolean isRetryable() {
        return retryable;
    }

    /**
     * The human-readable detail alone (without code and fields).
     *
     * @return the detail (may be empty)
     */
    public String detail() {
        return detail;
    }

    /**
     * Structured details (e.g. {@code leader}, {@code earliest}); immutable, in the engine's order.
     *
     * @return the fields by name
     */
    public Map<String, String> fields() {
        return fields;
    }

    /**
     * One field's value, or null.
     *
     * @param name the field's name
     * @return the field's value, or null when absent
     */
    public String field(String name) {
        return fields.get(name);
    }

    /**
     * Builds the exception of the right subclass for an engine error: by class, with
     * {@link CursusTimeoutException} for timeouts and {@link CursusClosedException} for
     * closed objects.
     *
     * @param kind where it comes from (see {@link #kind()})
     * @param code machine-readable code
     * @param errorClass the class
     * @param retryable whether the operation may be attempted again
     * @param message human-readable detail (may be empty)
     * @param fields structured details
     * @return the exception (not thrown)
     */
    public static CursusException of(
            String kind,
            String code,
            ErrorClass errorClass,
            boolean retryable,
            String message,
            Map<String, String> fields) {
        return create(kind, code, errorClass, retryable, message, fields,
                render(code, errorClass, retryable, message, fields));
    }

    static CursusException create(String kind, String code, ErrorClass errorClass, boolean retryable,
            String message, Map<String, String> fields, String text) {
        if ("timeout".equals(kind)) {
            return new CursusTimeoutException(kind, code, errorClass, retryable, message, fields, text);
        }
        if ("closed".equals(kind)) {
            return new CursusClosedException(kind, code, errorClass, retryable, message, fields, text);
        }
        switch (errorClass) {
            case VALIDATION:
                return new ValidationException(kind, code, errorClass, retryable, message, fields, text);
            case AUTHORIZATION:
                return new AuthorizationException(kind, code, errorClass, retryable, message, fields, text);
            case ROUTING:
                return new RoutingException(kind, code, errorClass, retryable, message, fields, text);
            case AVAILABILITY:
                return new AvailabilityException(kind, code, errorClass, retryable, message, fields, text);
            case CONFLICT:
                return new ConflictException(kind, code, errorClass, retryable, message, fields, text);
            case FENCING:
                return new FencingException(kind, code, errorClass, retryable, message, fields, text);
            case NOT_FOUND:
                return new NotFoundException(kind, code, errorClass, retryable, message, fields, text);
            default:
                return new InternalException(kind, code, errorClass, retryable, message, fields, text);
        }
    }
}
