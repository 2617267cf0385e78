package io.cursus;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Topic and group administration. Thread-safe; every method blocks until the broker
 * answers and throws a {@link CursusException} subclass on failure. Close it when done
 * (try-with-resources); a closed admin throws {@link CursusClosedException}.
 */
public final class CursusAdmin extends NativeResource {
    /**
     * Connects to the cluster.
     *
     * @param config client options
     */
    public CursusAdmin(ClientConfig config) {
        super("admin", connect(config), NativeLib::adminFree);
    }

    private static long connect(ClientConfig config) {
        Objects.requireNonNull(config, "config");
        NativeLib.ensureLoaded();
        return NativeLib.adminConnect(config.pairs());
    }

    /** Creates a topic, or patches the settings given on an existing one. */
    public TopicInfo createTopic(NewTopic topic) {
        Objects.requireNonNull(topic, "topic");
        return call(h -> new Decoder(NativeLib.adminCreateTopic(h, topic.toPairs())).topicInfo());
    }

    /** Replaces the topic's min_in_sync_replicas override (null: back to the broker default). */
    public TopicInfo alterTopicConfig(String topic, Integer minInSyncReplicas) {
        Objects.requireNonNull(topic, "topic");
        int v = minInSyncReplicas == null ? -1 : minInSyncReplicas;
        return call(h -> new Decoder(NativeLib.adminAlterTopicConfig(h, topic, v)).topicInfo());
    }

    /** Deletes a topic; with {@code ifExists} a missing topic is not an error. */
    public DeleteResult deleteTopic(String topic, boolean ifExists) {
        Objects.requireNonNull(topic, "topic");
        int bits = call(h -> NativeLib.adminDeleteTopic(h, topic, ifExists));
        return new DeleteResult((bits & 1) != 0, (bits & 2) != 0);
    }

    /** Empties a topic, if its definition is still at {@code expectedRevision}. */
    public TruncateResult truncateTopic(String topic, long expectedRevision) {
        Objects.requireNonNull(topic, "topic");
        return call(h -> {
            Decoder d = new Decoder(NativeLib.adminTruncateTopic(h, topic, expectedRevision));
            return new TruncateResult(d.i64(), d.i64(), d.bool());
        });
    }

    /** The topic names. */
    public List<String> listTopics() {
        return call(h -> List.of(NativeLib.adminListTopics(h)));
    }

    /** The consumer group names. */
    public List<String> listGroups() {
        return call(h -> List.of(NativeLib.adminListGroups(h)));
    }

    /** The commands the broker supports (HELP). */
    public List<String> help() {
        return call(h -> List.of(NativeLib.adminHelp(h)));
    }

    /** DESCRIBE: definition and per-partition state. */
    public TopicDescription describeTopic(String topic) {
        Objects.requireNonNull(topic, "topic");
        return call(h -> {
            Decoder d = new Decoder(NativeLib.adminDescribeTopic(h, topic));
            String name = d.str();
            String json = d.str();
            int n = d.u32();
            List<TopicDescription.PartitionDescription> parts = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                parts.add(new TopicDescription.PartitionDescription(d.u32(), d.str(), d.strs(), d.strs(), d.i64(), d.i64()));
            }
            return new TopicDescription(name, json, List.copyOf(parts));
        });
    }

    /** METADATA: definition plus partition leaders. */
    public TopicMetadata metadata(String topic) {
        Objects.requireNonNull(topic, "topic");
        return call(h -> {
            Decoder d = new Decoder(NativeLib.adminMetadata(h, topic));
            TopicInfo info = d.topicInfo();
            List<String> leaders = d.strs();
            int n = d.u32();
            Long[] epochs = new Long[n];
            for (int i = 0; i < n; i++) {
                epochs[i] = d.i64();
            }
            return new TopicMetadata(info, leaders, List.of(epochs));
        });
    }

    /** LIST_OFFSETS of every partition. */
    public List<PartitionOffsets> listOffsets(String topic) {
        return listOffsets(topic, null);
    }

    /** LIST_OFFSETS of one partition (null: every partition). */
    public List<PartitionOffsets> listOffsets(String topic, Integer partition) {
        Objects.requireNonNull(topic, "topic");
        int p = partition == null ? -1 : partition;
        return call(h -> {
            Decoder d = new Decoder(NativeLib.adminListOffsets(h, topic, p));
            int n = d.u32();
            PartitionOffsets[] out = new PartitionOffsets[n];
            for (int i = 0; i < n; i++) {
                out[i] = new PartitionOffsets(d.u32(), d.i64(), d.i64(), d.i64(), d.i64());
            }
            return Arrays.asList(out);
        });
    }

    /** GROUP_STATUS of a consumer group. */
    public GroupStatus groupStatus(String group) {
        Objects.requireNonNull(group, "group");
        return call(h -> {
            Decoder d = new Decoder(NativeLib.adminGroupStatus(h, group));
            String name = d.str();
            String topic = d.str();
            String state = d.str();
            long generation = d.i64();
            long members = d.i64();
            long partitions = d.i64();
            int n = d.u32();
            List<GroupStatus.Member> list = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String id = d.str();
                String hb = d.str();
                int m = d.u32();
                Integer[] assigned = new Integer[m];
                for (int j = 0; j < m; j++) {
                    assigned[j] = d.u32();
                }
                list.add(new GroupStatus.Member(id, hb, List.of(assigned)));
            }
            return new GroupStatus(name, topic, state, generation, members, partitions, List.copyOf(list));
        });
    }

    /** Closes the client (idempotent); waits for calls in flight to return. */
    @Override
    public void close() {
        closeWith(NativeLib::adminClose);
    }
}
