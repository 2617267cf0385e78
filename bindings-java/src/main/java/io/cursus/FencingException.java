package io.cursus;

import java.util.Map;

/** A newer generation, owner or epoch fenced this one (class {@code fencing}). */
public class FencingException extends CursusException {
    private static final long serialVersionUID = 1L;

    /**
     * Builds one; see {@link CursusException#of}.
     *
     * @param kind where the error comes from
     * @param code machine-readable code
     * @param errorClass the class
     * @param retryable whether it may be retried
     * @param message human-readable detail
     * @param fields structured details
     */
    public FencingException(
            String kind,
            String code,
            ErrorClass errorClass,
            boolean retryable,
            String message,
            Map<String, String> fields) {
        super(kind, code, errorClass, retryable, message, fields);
    }

    FencingException(String kind, String code, ErrorClass errorClass, boolean retryable, String message,
            Map<String, String> fields, String text) {
        super(kind, code, errorClass, retryable, message, fields, text);
    }
}
