package io.cursus;

import java.util.Collections;
import java.util.List;

/**
 * How a {@link CursusProducer#sendBatch batch send}'s future fails when some of its records
 * failed: every record's outcome, in the order sent. The cause is the first record's error.
 */
public final class BatchDeliveryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient List<RecordMetadata> metadata;
    private final transient List<CursusException> errors;

    BatchDeliveryException(List<RecordMetadata> metadata, List<CursusException> errors, int failed) {
        super(failed + " of " + errors.size() + " records failed", first(errors));
        this.metadata = Collections.unmodifiableList(metadata);
        this.errors = Collections.unmodifiableList(errors);
    }

    private static CursusException first(List<CursusException> errors) {
        for (CursusException e : errors) {
            if (e != null) {
                return e;
            }
        }
        return null;
    }

    /**
     * Where each record was stored, in the order sent; {@code null} for a record that failed.
     *
     * @return one entry per record
     */
    public List<RecordMetadata> metadata() {
        return metadata;
    }

    /**
     * Each record's error, in the order sent; {@code null} for a record that was delivered.
     *
     * @return one entry per record
     */
    public List<CursusException> errors() {
        return errors;
    }
}
