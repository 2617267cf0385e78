package io.cursus;

import java.util.List;
import java.util.Map;

/** Configuration of a {@link CursusAdmin}: the client options. */
public final class ClientConfig extends BaseConfig {
    private ClientConfig(Map<String, String> values) {
        super(ADMIN, values);
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
    public static ClientConfig of(String bootstrapServers) {
        return builder().bootstrapServers(bootstrapServers).build();
    }

    /**
     * The documented client options with their defaults, from the engine.
     *
     * @return the options (immutable)
     */
    public static List<ConfigOption> options() {
        return options(ADMIN);
    }

    /** Builder of {@link ClientConfig}. */
    public static final class Builder extends BaseConfig.Builder<Builder> {
        private Builder() {}

        /**
         * Validates the options through the engine and builds the config.
         *
         * @return the config
         */
        public ClientConfig build() {
            validate(ADMIN);
            return new ClientConfig(values);
        }
    }
}
