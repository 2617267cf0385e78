package io.cursus;

/**
 * What deleting a topic did.
 *
 * @param deleted false when {@code ifExists} found no topic
 * @param cleanupPending storage cleanup still has to be retried by the broker
 */
public record DeleteResult(boolean deleted, boolean cleanupPending) {}
