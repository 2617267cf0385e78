package io.cursus;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Reading the library's result handles into Java values: every result handle is read through
 * its accessors, then destroyed, even when reading fails.
 */
final class Results {
    private Results() {}

    /** Reads {@code handle} with {@code read}, then destroys it. */
    static <T> T take(long handle, LongFunction<T> read, LongConsumer destroy) {
        try {
            return read.apply(handle);
        } finally {
            destroy.accept(handle);
        }
    }

    /** {@code count} elements read by index, as an immutable list. */
    static <T> List<T> list(int count, IntFunction<T> element) {
        List<T> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(element.apply(i));
        }
        return List.copyOf(out);
    }

    /** A {@code -1 = none} number as a nullable Integer. */
    static Integer optional(long value) {
        return value < 0 ? null : (int) value;
    }

    /** Reads a topic info handle (destroying it). */
    static TopicInfo topicInfo(long info) {
        return take(info, h -> new TopicInfo(
                NativeBridge.topicInfoName(h),
                NativeBridge.topicInfoPartitions(h),
                NativeBridge.topicInfoCleanupPolicy(h),
                NativeBridge.topicInfoPartitioner(h),
                NativeBridge.topicInfoAuthPolicy(h),
                list(NativeBridge.topicInfoReadAclCount(h), i -> NativeBridge.topicInfoReadAcl(h, i)),
                list(NativeBridge.topicInfoWriteAclCount(h), i -> NativeBridge.topicInfoWriteAcl(h, i)),
                NativeBridge.topicInfoRetentionHours(h),
                NativeBridge.topicInfoRetentionBytes(h),
                NativeBridge.topicInfoRevision(h),
                NativeBridge.topicInfoReplicationFactor(h),
                NativeBridge.topicInfoIdempotent(h),
                NativeBridge.topicInfoEventSourcing(h),
                NativeBridge.topicInfoAggregateReplay(h),
                NativeBridge.topicInfoLifecycleEpoch(h),
                optional(NativeBridge.topicInfoMinInSyncReplicas(h)),
                optional(NativeBridge.topicInfoEffectiveMinInSyncReplicas(h))),
                NativeBridge::topicInfoDestroy);
    }

    /** Reads a topic description handle (destroying it). */
    static TopicDescription topicDescription(long description) {
        return take(description, h -> new TopicDescription(
                NativeBridge.topicDescriptionTopic(h),
                topicInfo(NativeBridge.topicDescriptionDefinition(h)),
                list(NativeBridge.topicDescriptionPartitionCount(h), i -> new TopicDescription.PartitionDescription(
                        (int) NativeBridge.topicDescriptionPartitionId(h, i),
                        NativeBridge.topicDescriptionPartitionLeader(h, i),
                        list(NativeBridge.topicDescriptionPartitionReplicaCount(h, i),
                                r -> NativeBridge.topicDescriptionPartitionReplica(h, i, r)),
                        list(NativeBridge.topicDescriptionPartitionIsrCount(h, i),
                                r -> NativeBridge.topicDescriptionPartitionIsr(h, i, r)),
                        NativeBridge.topicDescriptionPartitionEarliest(h, i),
                        NativeBridge.topicDescriptionPartitionLeo(h, i),
                        NativeBridge.topicDescriptionPartitionHwm(h, i)))),
                NativeBridge::topicDescriptionDestroy);
    }

    /** Reads a topic metadata handle (destroying it). */
    static TopicMetadata topicMetadata(long metadata) {
        return take(metadata, h -> {
            int n = NativeBridge.topicMetadataLeaderCount(h);
            return new TopicMetadata(
                    topicInfo(NativeBridge.topicMetadataInfo(h)),
                    list(n, p -> NativeBridge.topicMetadataLeader(h, p)),
                    list(n, p -> NativeBridge.topicMetadataLeaderEpoch(h, p)));
        }, NativeBridge::topicMetadataDestroy);
    }

    /** Reads a partition offsets list handle (destroying it). */
    static List<PartitionOffsets> partitionOffsets(long offsets) {
        return take(offsets, h -> list(NativeBridge.partitionOffsetsListCount(h), i -> new PartitionOffsets(
                (int) NativeBridge.partitionOffsetsListPartition(h, i),
                NativeBridge.partitionOffsetsListEarliest(h, i),
                NativeBridge.partitionOffsetsListLatest(h, i),
                NativeBridge.partitionOffsetsListLeo(h, i),
                NativeBridge.partitionOffsetsListHwm(h, i))),
                NativeBridge::partitionOffsetsListDestroy);
    }

    /** Reads a group status handle (destroying it). */
    static GroupStatus groupStatus(long status) {
        return take(status, h -> new GroupStatus(
                NativeBridge.groupStatusGroup(h),
                NativeBridge.groupStatusTopic(h),
                NativeBridge.groupStatusState(h),
                NativeBridge.groupStatusGeneration(h),
                NativeBridge.groupStatusPartitionCount(h),
                list(NativeBridge.groupStatusMemberCount(h), m -> new GroupStatus.Member(
                        NativeBridge.groupStatusMemberId(h, m),
                        NativeBridge.groupStatusMemberLastHeartbeat(h, m),
                        list(NativeBridge.groupStatusMemberAssignmentCount(h, m),
                                a -> (int) NativeBridge.groupStatusMemberAssignment(h, m, a))))),
                NativeBridge::groupStatusDestroy);
    }

    /** Reads a topic-partition list handle (destroying it). */
    static List<TopicPartition> topicPartitions(long list) {
        return take(list, h -> list(NativeBridge.topicPartitionListCount(h), i -> new TopicPartition(
                NativeBridge.topicPartitionListTopic(h, i),
                (int) NativeBridge.topicPartitionListPartition(h, i))),
                NativeBridge::topicPartitionListDestroy);
    }
}
