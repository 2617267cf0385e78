package io.cursus;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A topic to create, or the settings to patch on an existing topic. Unset settings keep the
 * broker default (new topic) or the current value (patch). Names are the protocol's.
 */
public final class NewTopic {
    private final String name;
    private final Map<String, String> settings = new LinkedHashMap<>();

    private NewTopic(String name) {
        this.name = Objects.requireNonNull(name, "name");
    }

    /**
     * A topic with broker defaults.
     *
     * @param name the topic name
     * @return the topic, with no settings
     */
    public static NewTopic named(String name) {
        return new NewTopic(name);
    }

    /**
     * The topic name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The settings given so far, by protocol name.
     *
     * @return the settings by protocol name (read-only)
     */
    public Map<String, String> settings() {
        return Collections.unmodifiableMap(settings);
    }

    private NewTopic put(String key, Object value) {
        settings.put(key, String.valueOf(value));
        return this;
    }

    /**
     * Partition count (can only grow).
     *
     * @param n the partition count
     * @return this topic
     */
    public NewTopic partitions(int n) {
        return put("partitions", n);
    }

    /**
     * Producer deduplication (immutable after creation).
     *
     * @param v whether the topic deduplicates producer retries
     * @return this topic
     */
    public NewTopic idempotent(boolean v) {
        return put("idempotent", v);
    }

    /**
     * Event-sourcing commands (immutable after creation).
     *
     * @param v whether the topic takes event-sourcing commands
     * @return this topic
     */
    public NewTopic eventSourcing(boolean v) {
        return put("event_sourcing", v);
    }

    /**
     * Aggregate replay (immutable after creation; needs {@link #eventSourcing(boolean)
     * eventSourcing(true)} and {@link #idempotent(boolean) idempotent(true)}): every event
     * gets an identity (event id and payload digest), a retried append is stored once, replay
     * proofs and range reads ({@link CursusEventStore#replayProof},
     * {@link CursusEventStore#eventRange}) become available, plain sends are refused and the
     * partition count is frozen.
     *
     * @param v whether the topic supports aggregate replay
     * @return this topic
     */
    public NewTopic aggregateReplay(boolean v) {
        return put("aggregate_replay", v);
    }

    /**
     * Replica count (immutable after creation).
     *
     * @param n the replica count
     * @return this topic
     */
    public NewTopic replicationFactor(int n) {
        return put("replication_factor", n);
    }

    /**
     * Durable min-ISR override.
     *
     * @param n the minimum in-sync replicas
     * @return this topic
     */
    public NewTopic minInSyncReplicas(int n) {
        return put("min_in_sync_replicas", n);
    }

    /**
     * {@code delete}, {@code compact} or {@code delete,compact}.
     *
     * @param v the cleanup policy
     * @return this topic
     */
    public NewTopic cleanupPolicy(String v) {
        return put("cleanup_policy", v);
    }

    /**
     * Retention in hours (0 = broker default).
     *
     * @param v the retention in hours, or 0
     * @return this topic
     */
    public NewTopic retentionHours(long v) {
        return put("retention_hours", v);
    }

    /**
     * Retention in bytes (0 = broker default).
     *
     * @param v the retention in bytes, or 0
     * @return this topic
     */
    public NewTopic retentionBytes(long v) {
        return put("retention_bytes", v);
    }

    /**
     * {@code hash_key} or {@code round_robin}.
     *
     * @param v the partitioner
     * @return this topic
     */
    public NewTopic partitioner(String v) {
        return put("partitioner", v);
    }

    /**
     * {@code open}, {@code deny_write}, {@code deny_read} or {@code acl}.
     *
     * @param v the auth policy
     * @return this topic
     */
    public NewTopic authPolicy(String v) {
        return put("auth_policy", v);
    }

    /**
     * Principals allowed to read under {@code acl}.
     *
     * @param principals the principals
     * @return this topic
     */
    public NewTopic readAcl(List<String> principals) {
        return put("read_acl", String.join(",", principals));
    }

    /**
     * Principals allowed to write under {@code acl}.
     *
     * @param principals the principals
     * @return this topic
     */
    public NewTopic writeAcl(List<String> principals) {
        return put("write_acl", String.join(",", principals));
    }
}
