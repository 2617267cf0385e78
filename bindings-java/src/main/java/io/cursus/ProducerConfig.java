package io.cursus;

import java.util.List;
import java.util.Map;

/** Configuration of a {@link CursusProducer}: producer and client options. */
public final class ProducerConfig extends BaseConfig {
    private ProducerConfig(Map<String, String> values) {
        super(PRODUCER, values);
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
     * A config for one bootstrap address.
     *
     * @param bootstrapServers comma-separated host:port list
     * @return the validated config
     */
    public static ProducerConfig of(String bootstrapServers) {
        return builder().bootstrapServers(bootstrapServers).build();
    }

    /**
     * The documented producer and client options with their defaults, from the engine.
     *
     * @return the options (immutable)
     */
    public static List<ConfigOption> options() {
        return options(PRODUCER);
    }

    /** Builder of {@link ProducerConfig}. */
    public static final class Builder extends BaseConfig.Builder<Builder> {
        private Builder() {}

        /**
         * {@code acks}: 0, 1 or all/-1 (default all).
         *
         * @param acks {@code 0}, {@code 1}, {@code all} or {@code -1}
         * @return this builder
         */
        public Builder acks(String acks) {
            return set("acks", acks);
        }

        /**
         * {@code linger_ms}: how long a batch waits for more records (default 5).
         *
         * @param ms the linger time in milliseconds
         * @return this builder
         */
        public Builder lingerMs(long ms) {
            return set("linger_ms", Long.toString(ms));
        }

        /**
         * {@code batch_size}: payload bytes that make a batch ready (default 16384).
         *
         * @param bytes the batch size in bytes
         * @return this builder
         */
        public Builder batchSize(int bytes) {
            return set("batch_size", Integer.toString(bytes));
        }

        /**
         * {@code buffer_memory}: bytes of unsent records held (default 33554432).
         *
         * @param bytes the buffer size in bytes
         * @return this builder
         */
        public Builder bufferMemory(long bytes) {
            return set("buffer_memory", Long.toString(bytes));
        }

        /**
         * {@code max_block_ms}: how long send waits for buffer space (default 60000).
         *
         * @param ms the longest wait in milliseconds
         * @return this builder
         */
        public Builder maxBlockMs(long ms) {
            return set("max_block_ms", Long.toString(ms));
        }

        /**
         * {@code enable_idempotence}: per-partition sequences (default false; needs acks=all).
         *
         * @param on whether to enable idempotence
         * @return this builder
         */
        public Builder enableIdempotence(boolean on) {
            return set("enable_idempotence", Boolean.toString(on));
        }

        /**
         * {@code delivery_timeout_ms}: bound from send to acknowledgement (default 120000).
         *
         * @param ms the timeout in milliseconds
         * @return this builder
         */
        public Builder deliveryTimeoutMs(long ms) {
            return set("delivery_timeout_ms", Long.toString(ms));
        }

        /**
         * {@code transactional_id}: makes the producer transactional (default: none). Sends
         * then belong to transactions ({@link CursusProducer#initTransactions()} once, then
         * {@link CursusProducer#beginTransaction()} ... {@link CursusProducer#commitTransaction()});
         * a send outside a transaction fails with code {@code invalid_transaction_state}.
         * Producers sharing an id fence each other: the latest to initialise wins. Needs
         * {@code acks=all} (the default); 1 to 249 characters without whitespace.
         *
         * @param id the transactional id, stable across restarts of the same logical producer
         * @return this builder
         */
        public Builder transactionalId(String id) {
            return set("transactional_id", id);
        }

        /**
         * Validates the options through the engine and builds the config.
         *
         * @return the config
         */
        public ProducerConfig build() {
            validate(PRODUCER);
            return new ProducerConfig(values);
        }
    }
}
