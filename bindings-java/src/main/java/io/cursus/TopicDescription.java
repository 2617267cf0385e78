package io.cursus;

import java.util.List;

/**
 * DESCRIBE: a topic's definition and per-partition state.
 *
 * @param topic topic name
 * @param definitionJson the definition as the broker's JSON object
 * @param partitions per-partition state
 */
public record TopicDescription(String topic, String definitionJson, List<PartitionDescription> partitions) {
    /**
     * One partition in DESCRIBE.
     *
     * @param id partition id
     * @param leader leader address
     * @param replicas replica set
     * @param isr in-sync replicas
     * @param logEndOffset log end offset
     * @param highWatermark high-water mark
     */
    public record PartitionDescription(
            int id, String leader, List<String> replicas, List<String> isr, long logEndOffset, long highWatermark) {}
}
