package io.cursus;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Options by the engine's names, validated by the engine when built. Immutable. Options
 * not set keep the engine's defaults ({@link #get} reports them).
 */
public abstract class BaseConfig {
    static final String ADMIN = "admin";
    static final String PRODUCER = "producer";
    static final String CONSUMER = "consumer";
    /** What {@code toString()} shows instead of a secret. */
    static final String REDACTED = "<redacted>";

    private final String kind;
    private final Map<String, String> values;

    BaseConfig(String kind, Map<String, String> values) {
        this.kind = kind;
        this.values = new Redacting(Collections.unmodifiableMap(new LinkedHashMap<>(values)));
    }

    /**
     * The options set explicitly, by name, in the order they were set. The map holds the
     * real values ({@code get("token")} is the token), but its {@code toString()} prints
     * the token as {@code <redacted>}.
     *
     * @return the options set, by name
     */
    public Map<String, String> values() {
        return values;
    }

    /**
     * An option's value: the one set, else the engine's default; null for an unknown name.
     *
     * @param name the option's engine name
     * @return the value, or null when the name is unknown
     */
    public String get(String name) {
        String v = values.get(name);
        if (v != null) {
            return v;
        }
        for (ConfigOption o : options(kind)) {
            if (o.name().equals(name)) {
                return o.defaultValue();
            }
        }
        return null;
    }

    /**
     * Runs {@code body} with a native configuration holding these options (checked against
     * the kind, and as a whole), destroyed afterwards; client constructors pass their
     * {@code xxxNew}.
     */
    long withNative(java.util.function.LongUnaryOperator body) {
        return withNative(kind, values, body);
    }

    static long withNative(String kind, Map<String, String> values, java.util.function.LongUnaryOperator body) {
        NativeLib.ensureLoaded();
        long config = NativeBridge.configNewFor(kind);
        try {
            for (Map.Entry<String, String> e : values.entrySet()) {
                NativeBridge.configSet(config, e.getKey(), e.getValue());
            }
            NativeBridge.configValidate(config);
            return body.applyAsLong(config);
        } finally {
            NativeBridge.configDestroy(config);
        }
    }

    static List<ConfigOption> options(String kind) {
        NativeLib.ensureLoaded();
        String[] flat = NativeBridge.configOptions(kind);
        List<ConfigOption> out = new ArrayList<>(flat.length / 4);
        for (int i = 0; i + 3 < flat.length; i += 4) {
            out.add(new ConfigOption(flat[i], flat[i + 1], flat[i + 2], flat[i + 3]));
        }
        return List.copyOf(out);
    }

    /** The options set, with the token (a secret) as {@code <redacted>}. */
    @Override
    public String toString() {
        return getClass().getSimpleName() + redacted(values);
    }

    /** Whether an option's value is a secret, never shown (the engine's rule: the AUTH token). */
    static boolean isSecret(String name) {
        return "token".equals(name);
    }

    /** A copy of {@code values} for display: secrets replaced by {@code <redacted>}. */
    static Map<String, String> redacted(Map<String, String> values) {
        Map<String, String> shown = new LinkedHashMap<>();
        values.forEach((k, v) -> shown.put(k, isSecret(k) ? REDACTED : v));
        return shown;
    }

    /** A read-only view of the options whose {@code toString()} redacts secrets. */
    private static final class Redacting extends AbstractMap<String, String> {
        private final Map<String, String> inner;

        Redacting(Map<String, String> inner) {
            this.inner = inner;
        }

        @Override
        public Set<Map.Entry<String, String>> entrySet() {
            return inner.entrySet();
        }

        @Override
        public String get(Object key) {
            return inner.get(key);
        }

        @Override
        public boolean containsKey(Object key) {
            return inner.containsKey(key);
        }

        @Override
        public int size() {
            return inner.size();
        }

        @Override
        public String toString() {
            return redacted(inner).toString();
        }
    }

    /**
     * Builder of the options every client shares (connection, TLS, auth, retries).
     *
     * @param <B> the concrete builder
     */
    public abstract static class Builder<B extends Builder<B>> {
        final Map<String, String> values = new LinkedHashMap<>();

        Builder() {}

        @SuppressWarnings("unchecked")
        private B self() {
            return (B) this;
        }

        /**
         * Sets any option by its engine name, as text ({@code "5"}, {@code "true"},
         * {@code "a,b"}); {@code build()} checks it.
         *
         * @param name the option's engine name
         * @param value the value, as text
         * @return this builder
         */
        public B set(String name, String value) {
            java.util.Objects.requireNonNull(name, "name");
            java.util.Objects.requireNonNull(value, "value of " + name);
            values.put(name, value);
            return self();
        }

        /** The options set so far, with the token (a secret) as {@code <redacted>}. */
        @Override
        public String toString() {
            return getClass().getEnclosingClass().getSimpleName() + ".Builder" + redacted(values);
        }

        /**
         * Sets options from a map of names to values.
         *
         * @param options option values by engine name
         * @return this builder
         */
        public B setAll(Map<String, String> options) {
            options.forEach(this::set);
            return self();
        }

        /**
         * {@code bootstrap_servers}: comma-separated host:port list (default 127.0.0.1:9000).
         *
         * @param servers comma-separated host:port list
         * @return this builder
         */
        public B bootstrapServers(String servers) {
            return set("bootstrap_servers", servers);
        }

        /**
         * {@code client_id}: prefix of member and producer ids (default cursus).
         *
         * @param id the client id
         * @return this builder
         */
        public B clientId(String id) {
            return set("client_id", id);
        }

        /**
         * {@code compression}: none, gzip, snappy or lz4 (default none).
         *
         * @param codec {@code none}, {@code gzip}, {@code snappy} or {@code lz4}
         * @return this builder
         */
        public B compression(String codec) {
            return set("compression", codec);
        }

        /**
         * {@code tls}: connect with TLS 1.2 or later (default false).
         *
         * @param on whether to connect with TLS
         * @return this builder
         */
        public B tls(boolean on) {
            return set("tls", Boolean.toString(on));
        }

        /**
         * {@code tls_ca_file}: PEM CA bundle to trust (implies tls).
         *
         * @param path the PEM file's path
         * @return this builder
         */
        public B tlsCaFile(String path) {
            return set("tls_ca_file", path);
        }

        /**
         * {@code tls_cert_file}: PEM client certificate chain for mutual TLS.
         *
         * @param path the PEM file's path
         * @return this builder
         */
        public B tlsCertFile(String path) {
            return set("tls_cert_file", path);
        }

        /**
         * {@code tls_key_file}: PEM private key of the client certificate.
         *
         * @param path the PEM file's path
         * @return this builder
         */
        public B tlsKeyFile(String path) {
            return set("tls_key_file", path);
        }

        /**
         * {@code tls_server_name}: name to verify in the broker certificate.
         *
         * @param name the expected server name
         * @return this builder
         */
        public B tlsServerName(String name) {
            return set("tls_server_name", name);
        }

        /**
         * {@code principal} and {@code token}: AUTH credentials.
         *
         * @param principal the principal to authenticate as
         * @param token the principal's token (a secret)
         * @return this builder
         */
        public B credentials(String principal, String token) {
            set("principal", principal);
            return set("token", token);
        }

        /**
         * {@code connect_timeout_ms} (default 5000).
         *
         * @param ms the timeout in milliseconds
         * @return this builder
         */
        public B connectTimeoutMs(long ms) {
            return set("connect_timeout_ms", Long.toString(ms));
        }

        /**
         * {@code request_timeout_ms} (default 30000).
         *
         * @param ms the timeout in milliseconds
         * @return this builder
         */
        public B requestTimeoutMs(long ms) {
            return set("request_timeout_ms", Long.toString(ms));
        }

        /**
         * {@code max_in_flight}: pipelined requests per connection (default 5).
         *
         * @param n the most requests in flight per connection
         * @return this builder
         */
        public B maxInFlight(int n) {
            return set("max_in_flight", Integer.toString(n));
        }

        /**
         * {@code retries}: attempts after the first for retryable failures (default 5).
         *
         * @param n the number of retries
         * @return this builder
         */
        public B retries(int n) {
            return set("retries", Integer.toString(n));
        }

        /**
         * {@code retry_backoff_ms} (default 100).
         *
         * @param ms the first backoff in milliseconds
         * @return this builder
         */
        public B retryBackoffMs(long ms) {
            return set("retry_backoff_ms", Long.toString(ms));
        }

        /**
         * {@code retry_backoff_max_ms} (default 5000).
         *
         * @param ms the longest backoff in milliseconds
         * @return this builder
         */
        public B retryBackoffMaxMs(long ms) {
            return set("retry_backoff_max_ms", Long.toString(ms));
        }

        /**
         * {@code socket_buffer_bytes} (default 2097152).
         *
         * @param bytes the socket buffer size in bytes
         * @return this builder
         */
        public B socketBufferBytes(int bytes) {
            return set("socket_buffer_bytes", Integer.toString(bytes));
        }

        /**
         * {@code metadata_max_age_ms} (default 300000).
         *
         * @param ms the metadata's maximum age in milliseconds
         * @return this builder
         */
        public B metadataMaxAgeMs(long ms) {
            return set("metadata_max_age_ms", Long.toString(ms));
        }

        /**
         * Checks the options through the engine as creating the client would (each value,
         * and the rules between options).
         *
         * @throws ValidationException naming the option and what is wrong with it
         */
        void validate(String kind) {
            withNative(kind, values, config -> 0);
        }
    }
}
