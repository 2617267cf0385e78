package io.cursus;

/**
 * What {@link CursusAdmin#electLeader(String, int, String)} did.
 *
 * @param topic the topic
 * @param partition the partition
 * @param previousLeader broker id of the leader before the election, or null when there was none
 * @param leader broker id of the leader now
 * @param leaderEpoch leader epoch now
 * @param changed false when the broker already led (the election is idempotent)
 */
public record LeaderElection(
        String topic, int partition, String previousLeader, String leader, long leaderEpoch, boolean changed) {}
