package io.cursus;

import java.util.List;

/**
 * A topic's definition, as CREATE, ALTER_TOPIC_CONFIG and METADATA report it.
 *
 * @param name name
 * @param partitions partition count
 * @param cleanupPolicy cleanup policy
 * @param partitioner partitioner policy
 * @param authPolicy authorization policy
 * @param readAcl principals allowed to read
 * @param writeAcl principals allowed to write
 * @param retentionHours retention in hours (0 = broker default)
 * @param retentionBytes retention in bytes (0 = broker default)
 * @param revision definition revision
 * @param replicationFactor replica count
 * @param idempotent producer deduplication
 * @param eventSourcing event-sourcing commands
 * @param aggregateReplay aggregate replay topic (appends carry event ids; proofs and range reads)
 * @param lifecycleEpoch lifecycle epoch (bumped by truncate)
 * @param minInSyncReplicas the topic's override, or null for the broker default
 * @param effectiveMinInSyncReplicas the min-ISR in force, or null if not reported
 */
public record TopicInfo(
        String name,
        int partitions,
        String cleanupPolicy,
        String partitioner,
        String authPolicy,
        List<String> readAcl,
        List<String> writeAcl,
        long retentionHours,
        long retentionBytes,
        long revision,
        int replicationFactor,
        boolean idempotent,
        boolean eventSourcing,
        boolean aggregateReplay,
        long lifecycleEpoch,
        Integer minInSyncReplicas,
        Integer effectiveMinInSyncReplicas) {}
