package io.cursus;

import java.util.List;

/**
 * GROUP_STATUS: a consumer group's state.
 *
 * @param groupName group name
 * @param topicName topic (single-topic groups)
 * @param state state, e.g. {@code Stable}
 * @param generation generation
 * @param memberCount member count
 * @param partitionCount partition count
 * @param members the members
 */
public record GroupStatus(
        String groupName,
        String topicName,
        String state,
        long generation,
        long memberCount,
        long partitionCount,
        List<Member> members) {
    /**
     * One group member.
     *
     * @param memberId member id
     * @param lastHeartbeat last heartbeat time, as the broker reports it
     * @param assignments assigned partitions
     */
    public record Member(String memberId, String lastHeartbeat, List<Integer> assignments) {}
}
