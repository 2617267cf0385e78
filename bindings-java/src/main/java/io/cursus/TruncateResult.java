package io.cursus;

/**
 * What truncating a topic did.
 *
 * @param revision new definition revision
 * @param lifecycleEpoch new lifecycle epoch
 * @param cleanupPending storage cleanup still has to be retried by the broker
 */
public record TruncateResult(long revision, long lifecycleEpoch, boolean cleanupPending) {}
