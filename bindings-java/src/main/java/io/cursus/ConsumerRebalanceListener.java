package io.cursus;

import java.util.Collection;

/**
 * Told when a {@link CursusConsumer}'s assignment changes, as Kafka's listener of the same name.
 * Set it with {@link CursusConsumer#subscribe(Collection, ConsumerRebalanceListener)} or
 * {@link CursusConsumer#setRebalanceListener}.
 *
 * <p>It runs on a thread of the consumer's own (the engine's {@code cursus-rebalance}
 * thread), one event at a time, while {@link CursusConsumer#poll} (or {@code close}, or
 * {@code subscribe}) waits for it. Inside it the consumer may be called again
 * ({@link CursusConsumer#commitSync()}, {@link CursusConsumer#seek},
 * {@link CursusConsumer#pause}, {@link CursusConsumer#position}, ...), also during
 * {@code close}; only {@link CursusConsumer#poll} fails there (a {@link ValidationException}).
 * An exception it throws is logged (System.Logger {@code io.cursus}, level ERROR) and
 * ignored: the consumer and the listener thread go on.
 */
public interface ConsumerRebalanceListener {
    /**
     * These partitions were added to the assignment: told after every join of the group
     * (possibly with an empty collection), before any of their records is returned. Seek
     * here to start somewhere else than the committed offset.
     *
     * @param partitions the partitions added (immutable)
     */
    void onPartitionsAssigned(Collection<TopicPartition> partitions);

    /**
     * These partitions are being taken away while the consumer is still a member (by
     * {@code close}, a new {@code subscribe}, or a rebalance): told before the consumer lets
     * go of them. On {@code close} and {@code subscribe} a commit here still succeeds.
     *
     * @param partitions the partitions revoked (immutable)
     */
    void onPartitionsRevoked(Collection<TopicPartition> partitions);

    /**
     * The session expired (or the member was removed): these partitions were lost without a
     * chance to commit, and their new owner starts over from the last commit. Called only when
     * the listener overrides it: otherwise the consumer tells a loss through
     * {@link #onPartitionsRevoked}, as Kafka does (the library's rule, the same in every Cursus
     * language). Override it when a commit there must not be attempted.
     *
     * @param partitions the partitions lost (immutable)
     */
    default void onPartitionsLost(Collection<TopicPartition> partitions) {}
}
