package io.cursus;

import java.util.Map;

/** A failure inside the broker or the library (class {@code internal}). */
public class InternalException extends CursusException {
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
    public InternalException(
            String kind,
            String code,
            ErrorClass errorClass,
            boolean retryable,
            String message,
            Map<String, String> fields) {
        super(kind, code, errorClass, retryable, message, fields);
    }

    InternalException(String kind, String code, ErrorClass errorClass, boolean retryable, String message,
            Map<String, String> fields, String text) {
        super(kind, code, errorClass, retryable, message, fields, text);
    }
}
