package io.cursus;

import java.util.List;
import java.util.Map;

/** Configuration of a {@link CursusConsumer}: consumer and client options. */
public final class ConsumerConfig extends BaseConfig {
    private ConsumerConfig(Map<String, String> values) {
        super(CONSUMER, values);
    }

    /**
     * A builder starting from the engine defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A config for one bootstrap address and group.
     *
     * @param bootstrapServers comma-separated host:port list
     * @param groupId the consumer group
     * @return the validated config
     */
    public static ConsumerConfig of(String bootstrapServers, String groupId) {
        return builder().bootstrapServers(bootstrapServers).groupId(groupId).build();
    }

    /**
     * The documented consumer and client options with their defaults, from the engine.
     *
     * @return the options (immutable)
     */
    public static List<ConfigOption> options() {
        return options(CONSUMER);
    }

    /** Builder of {@link ConsumerConfig}. */
    public static final class Builder extends BaseConfig.Builder<Builder> {
        private Builder() {}

        /**
         * {@code group_id}: the consumer group (required).
         *
         * @param group the consumer group
         * @return this builder
         */
        public Builder groupId(String group) {
            return set("group_id", group);
        }

        /**
         * {@code auto_offset_reset}: earliest, latest or error (default earliest).
         *
         * @param policy {@code earliest}, {@code latest} or {@code error}
         * @return this builder
         */
        public Builder autoOffsetReset(String policy) {
            return set("auto_offset_reset", policy);
        }

        /**
         * {@code isolation_level}: {@code read_committed} (default) or
         * {@code read_uncommitted}. {@code read_committed} returns records of committed
         * transactions only, and stops at the first record of a transaction still open (the
         * last stable offset); {@code read_uncommitted} returns every durable record, of open
         * and aborted transactions too. Transaction control markers are never returned.
         *
         * @param level {@code read_committed} or {@code read_uncommitted}
         * @return this builder
         */
        public Builder isolationLevel(String level) {
            return set("isolation_level", level);
        }

        /**
         * {@code enable_auto_commit} (default false).
         *
         * @param on whether to commit offsets automatically
         * @return this builder
         */
        public Builder enableAutoCommit(boolean on) {
            return set("enable_auto_commit", Boolean.toString(on));
        }

        /**
         * {@code auto_commit_interval_ms} (default 5000).
         *
         * @param ms the interval in milliseconds
         * @return this builder
         */
        public Builder autoCommitIntervalMs(long ms) {
            return set("auto_commit_interval_ms", Long.toString(ms));
        }

        /**
         * {@code heartbeat_interval_ms} (default 3000).
         *
         * @param ms the interval in milliseconds
         * @return this builder
         */
        public Builder heartbeatIntervalMs(long ms) {
            return set("heartbeat_interval_ms", Long.toString(ms));
        }

        /**
         * {@code max_poll_records}: most records one poll returns (default 500).
         *
         * @param n the most records per poll
         * @return this builder
         */
        public Builder maxPollRecords(int n) {
            return set("max_poll_records", Integer.toString(n));
        }

        /**
         * {@code fetch_max_wait_ms}: longest broker-side wait of one fetch (default 500).
         *
         * @param ms the longest wait in milliseconds
         * @return this builder
         */
        public Builder fetchMaxWaitMs(long ms) {
            return set("fetch_max_wait_ms", Long.toString(ms));
        }

        /**
         * {@code fetch_max_records}: most records one fetch asks for (default 1000).
         *
         * @param n the most records per fetch
         * @return this builder
         */
        public Builder fetchMaxRecords(int n) {
            return set("fetch_max_records", Integer.toString(n));
        }

        /**
         * {@code consume_mode}: poll or stream (default poll).
         *
         * @param mode {@code poll} or {@code stream}
         * @return this builder
         */
        public Builder consumeMode(String mode) {
            return set("consume_mode", mode);
        }

        /**
         * Validates the options through the engine and builds the config.
         *
         * @return the config
         */
        public ConsumerConfig build() {
            validate(CONSUMER);
            return new ConsumerConfig(values);
        }
    }
}
