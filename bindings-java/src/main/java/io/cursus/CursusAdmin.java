package io.cursus;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Topic, group and cluster administration. Thread-safe; every method blocks until the broker
 * answers (at most {@code request_timeout_ms}) and throws a {@link CursusException}
 * subclass on failure. Close it when done (try-with-resources); a closed admin throws
 * {@link CursusClosedException}.
 */
public final class CursusAdmin extends NativeResource {
    /**
     * Connects to the cluster.
     *
     * @param config client options
     * @throws CursusException if the options are invalid or no broker answers within
     *     {@code connect_timeout_ms}
     */
    public CursusAdmin(ClientConfig config) {
        super("admin", Objects.requireNonNull(config, "config").withNative(NativeBridge::adminNew),
                NativeBridge::adminDestroy);
    }

    /**
     * Creates a topic, or patches the settings given on an existing one.
     *
     * @param topic the name and settings
     * @return the definition now in force
     */
    public TopicInfo createTopic(NewTopic topic) {
        Objects.requireNonNull(topic, "topic");
        String[] settings = flatten(topic.settings());
        return call(h -> ResultReaders.topicInfo(NativeBridge.adminCreateTopicWith(h, topic.name(), settings)));
    }

    /**
     * Replaces the topic's {@code min_in_sync_replicas} override.
     *
     * @param topic the topic
     * @param minInSyncReplicas the override, or null for the broker default
     * @return the new definition
     */
    public TopicInfo alterTopicConfig(String topic, Integer minInSyncReplicas) {
        Objects.requireNonNull(topic, "topic");
        long v = minInSyncReplicas == null ? -1 : minInSyncReplicas;
        return call(h -> ResultReaders.topicInfo(NativeBridge.adminAlterTopicConfig(h, topic, v)));
    }

    /**
     * Deletes a topic.
     *
     * @param topic the topic
     * @param ifExists whether a missing topic is not an error
     * @return what was done
     */
    public DeleteResult deleteTopic(String topic, boolean ifExists) {
        Objects.requireNonNull(topic, "topic");
        return call(h -> ResultReaders.deleteOutcome(NativeBridge.adminDeleteTopic(h, topic, ifExists)));
    }

    /**
     * Empties a topic, if its definition is still at {@code expectedRevision} (else a
     * {@link ConflictException}); offsets restart at 0.
     *
     * @param topic the topic
     * @param expectedRevision the definition revision the caller saw
     * @return the new revision and lifecycle epoch
     */
    public TruncateResult truncateTopic(String topic, long expectedRevision) {
        Objects.requireNonNull(topic, "topic");
        return call(h -> ResultReaders.truncateOutcome(NativeBridge.adminTruncateTopic(h, topic, expectedRevision)));
    }

    /**
     * The topic names.
     *
     * @return the names
     */
    public List<String> listTopics() {
        return call(h -> List.of(NativeBridge.adminListTopics(h)));
    }

    /**
     * The consumer group names.
     *
     * @return the names
     */
    public List<String> listGroups() {
        return call(h -> List.of(NativeBridge.adminListGroups(h)));
    }

    /**
     * The commands the broker supports (HELP).
     *
     * @return the command names
     */
    public List<String> help() {
        return call(h -> List.of(NativeBridge.adminHelp(h)));
    }

    /**
     * DESCRIBE: definition and per-partition state.
     *
     * @param topic the topic
     * @return the description
     */
    public TopicDescription describeTopic(String topic) {
        Objects.requireNonNull(topic, "topic");
        return call(h -> ResultReaders.topicDescription(NativeBridge.adminDescribeTopic(h, topic)));
    }

    /**
     * METADATA: definition plus partition leaders.
     *
     * @param topic the topic
     * @return the metadata
     */
    public TopicMetadata metadata(String topic) {
        Objects.requireNonNull(topic, "topic");
        return call(h -> ResultReaders.topicMetadata(NativeBridge.adminMetadata(h, topic)));
    }

    /**
     * LIST_OFFSETS of every partition.
     *
     * @param topic the topic
     * @return one entry per partition
     */
    public List<PartitionOffsets> listOffsets(String topic) {
        return listOffsets(topic, null);
    }

    /**
     * LIST_OFFSETS of one partition.
     *
     * @param topic the topic
     * @param partition the partition, or null for every partition
     * @return one entry per partition asked for
     */
    public List<PartitionOffsets> listOffsets(String topic, Integer partition) {
        Objects.requireNonNull(topic, "topic");
        long p = partition == null ? -1 : partition;
        return call(h -> ResultReaders.partitionOffsetsList(NativeBridge.adminListOffsets(h, topic, p)));
    }

    /**
     * GROUP_STATUS of a consumer group.
     *
     * @param group the group
     * @return its state and members
     */
    public GroupStatus groupStatus(String group) {
        Objects.requireNonNull(group, "group");
        return call(h -> ResultReaders.groupStatus(NativeBridge.adminGroupStatus(h, group)));
    }

    /**
     * CLUSTER_STATUS: the Raft leader, every broker and every partition's leader, epoch and
     * replicas (distributed mode). A standalone broker throws {@link ValidationException} with
     * code {@code distribution_not_enabled}.
     *
     * @return the cluster's state
     */
    public ClusterStatus clusterStatus() {
        return call(h -> ResultReaders.clusterStatus(NativeBridge.adminClusterStatus(h)));
    }

    /**
     * ELECT_LEADER: makes {@code brokerId} (an active in-sync replica) the leader of the
     * partition. Electing the current leader again changes nothing ({@code changed} is false).
     * Throws {@link ConflictException} ({@code leader_election_rejected}) when the broker is not
     * an active ISR member, {@link NotFoundException} for a missing topic or partition.
     *
     * @param topic the topic
     * @param partition the partition
     * @param brokerId the broker id to elect
     * @return the previous and new leader, and the leader epoch
     */
    public LeaderElection electLeader(String topic, int partition, String brokerId) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(brokerId, "brokerId");
        return call(h -> ResultReaders.leaderElection(NativeBridge.adminElectLeader(h, topic, partition, brokerId)));
    }

    /**
     * REASSIGN_PARTITIONS (a project extension): moves the replicas of the partition to the
     * brokers {@code replicas} (broker ids, preferred leader first, as many as the topic's
     * replication factor) and returns once the move is done: the new replicas in sync, the
     * others dropped, the leader one of {@code replicas}; no acknowledged record is lost.
     * After the client's {@code request_timeout_ms} it throws the retryable
     * {@link CursusTimeoutException} with code {@code reassignment_timeout} while the move goes
     * on (call again with the same replicas to keep waiting). Throws {@link NotFoundException}
     * ({@code topic_not_found}, {@code partition_not_found}, {@code broker_not_found}),
     * {@link ValidationException} ({@code invalid_replicas}, {@code invalid_replication_factor},
     * and {@code distribution_not_enabled} on a standalone broker), {@link ConflictException}
     * ({@code replica_broker_inactive}, {@code reassignment_in_progress}).
     *
     * @param topic the topic
     * @param partition the partition
     * @param replicas the broker ids of the new replica set, preferred leader first
     * @return the finished move: replicas, ISR and leader now
     */
    public PartitionReassignment reassignPartition(String topic, int partition, Collection<String> replicas) {
        Objects.requireNonNull(topic, "topic");
        String[] ids = Objects.requireNonNull(replicas, "replicas").toArray(new String[0]);
        return call(h -> ResultReaders.partitionReassignment(NativeBridge.adminReassignPartition(h, topic, partition, ids)));
    }

    /**
     * LIST_CLUSTER: the brokers registered in the cluster (distributed mode).
     *
     * @return the brokers
     */
    public List<ClusterBroker> listCluster() {
        return call(h -> ResultReaders.clusterBrokerList(NativeBridge.adminListCluster(h)));
    }

    /** Closes the client; only the first call does anything. */
    @Override
    public void close() {
        closeWith(NativeBridge::adminClose);
    }

    private static String[] flatten(Map<String, String> map) {
        String[] out = new String[map.size() * 2];
        int i = 0;
        for (Map.Entry<String, String> e : map.entrySet()) {
            out[i++] = e.getKey();
            out[i++] = e.getValue();
        }
        return out;
    }
}
