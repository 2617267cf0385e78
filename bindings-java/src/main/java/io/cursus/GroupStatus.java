package io.cursus;

import java.util.List;

/**
 * GROUP_STATUS: a consumer group's state.
 *
 * @param groupName group name
 * @param topicName topic (single-topic groups)
 * @param state state, e.g. {@code Stable}
 * @param generation generation
 * @param partitionCount partition count
 * @param members the members
 */
public record GroupStatus(
        String groupName,
        String topicName,
        String state,
        long generation,
        long partitionCount,
        List<Member> members) {
    /**
     * The number of members listed.
     *
     * @return {@code members().size()}
     */
    public int memberCount() {
        return members.size();
    }

    /**
     * One group member.
     *
     * @param memberId member id
     * @param lastHeartbeat last heartbeat time, as the broker reports it
     * @param assignments assigned partitions
     */
    public record Member(String memberId, String lastHeartbeat, List<Integer> assignments) {}
}
