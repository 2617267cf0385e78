package io.cursus;

import java.util.List;

/**
 * CLUSTER_STATUS: the Raft leader, every broker and every partition (distributed mode).
 *
 * @param raftLeader broker id of the Raft (metadata) leader, or null while none is known
 * @param brokers the registered brokers
 * @param partitions every partition of every topic
 * @param leaderless how many partitions have no active leader
 * @param underReplicated how many partitions have an ISR smaller than their replica set
 */
public record ClusterStatus(
        String raftLeader, List<ClusterBroker> brokers, List<Partition> partitions, long leaderless,
        long underReplicated) {
    /**
     * One partition in CLUSTER_STATUS.
     *
     * @param topic topic name
     * @param partition partition id
     * @param leader broker id of the leader, or null for a leaderless partition
     * @param leaderEpoch leader epoch
     * @param highWatermark committed high-water mark
     * @param replicas broker ids of the replica set
     * @param isr broker ids of the in-sync replicas
     */
    public record Partition(
            String topic, int partition, String leader, long leaderEpoch, long highWatermark, List<String> replicas,
            List<String> isr) {}
}
