package io.cursus;

import java.util.List;

/**
 * METADATA: a topic's definition plus the leader of every partition.
 *
 * @param topic the definition
 * @param leaders leader address ({@code host:port}) per partition, in partition order
 * @param epochs leader epoch per partition
 */
public record TopicMetadata(TopicInfo topic, List<String> leaders, List<Long> epochs) {}
