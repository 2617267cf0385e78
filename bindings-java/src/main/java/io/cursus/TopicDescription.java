package io.cursus;

import java.util.List;

/**
 * DESCRIBE: a topic's definition and per-partition state.
 *
 * @param topic topic name
 * @param definition the definition
 * @param partitions per-partition state
 */
public record TopicDescription(String topic, TopicInfo definition, List<PartitionDescription> partitions) {
    /**
     * One partition in DESCRIBE.
     *
     * @param id partition id
     * @param leader leader address
     * @param replicas replica set
     * @param isr in-sync replicas
     * @param earliest first retained offset
     * @param logEndOffset log end offset
     * @param highWatermark high-water mark
     */
    public record PartitionDescription(
            int id, String leader, List<String> replicas, List<String> isr, long earliest, long logEndOffset,
            long highWatermark) {}
}
