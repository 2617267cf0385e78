package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ConfigTest {
    private static Map<String, String> defaults(java.util.List<ConfigOption> options) {
        return options.stream().collect(Collectors.toMap(ConfigOption::name, ConfigOption::defaultValue));
    }

    @Test
    void optionNamesAndDefaultsComeFromTheEngine() {
        Map<String, String> producer = defaults(ProducerConfig.options());
        assertEquals("all", producer.get("acks"));
        assertEquals("5", producer.get("linger_ms"));
        assertEquals("127.0.0.1:9000", producer.get("bootstrap_servers"));
        Map<String, String> consumer = defaults(ConsumerConfig.options());
        assertEquals("earliest", consumer.get("auto_offset_reset"));
        assertEquals("500", consumer.get("max_poll_records"));
        assertTrue(consumer.containsKey("compression"));
        Map<String, String> client = defaults(ClientConfig.options());
        assertTrue(client.containsKey("request_timeout_ms"));
        assertTrue(!client.containsKey("acks"));
        ClientConfig.options().forEach(o -> assertTrue(!o.doc().isEmpty(), o.name()));
        Map<String, String> types = ProducerConfig.options().stream()
                .collect(Collectors.toMap(ConfigOption::name, ConfigOption::type));
        assertEquals("integer", types.get("linger_ms"));
        assertEquals("boolean", types.get("enable_idempotence"));
        assertEquals("string", types.get("acks"));
        assertEquals("list", types.get("bootstrap_servers"));
    }

    @Test
    void buildersSetOptionsByEngineName() {
        ProducerConfig p = ProducerConfig.builder().bootstrapServers("h:1").acks("1").lingerMs(7)
                .compression("gzip").credentials("alice", "secret").build();
        assertEquals(Map.of("bootstrap_servers", "h:1", "acks", "1", "linger_ms", "7", "compression", "gzip",
                "principal", "alice", "token", "secret"), p.values());
        assertEquals("7", p.get("linger_ms"));
        assertEquals("16384", p.get("batch_size"));
        assertNull(p.get("nope"));
        assertTrue(!p.toString().contains("secret"));
        assertTrue(p.toString().contains("token=<redacted>"), p.toString());
        ConsumerConfig c = ConsumerConfig.of("h:2", "g");
        assertEquals("g", c.get("group_id"));
        assertEquals("poll", c.get("consume_mode"));
        assertThrows(ValidationException.class, () -> ConsumerConfig.builder().consumeMode("push").groupId("g").build());
        assertThrows(ValidationException.class, () -> ClientConfig.builder().bootstrapServers("nohost").build());
        ValidationException unknown = assertThrows(ValidationException.class,
                () -> ClientConfig.builder().set("acks", "1").build());
        assertTrue(unknown.getMessage().contains("admin"), unknown.getMessage());
        // Rules between options are checked when the config is built, before connecting.
        assertThrows(ValidationException.class, () -> ConsumerConfig.builder().bootstrapServers("h:1").build());
        assertThrows(NullPointerException.class, () -> ProducerConfig.builder().set("acks", null));
    }

    @Test
    void theTokenIsRedactedInEveryToString() {
        String token = "tok-9f86d081884c";
        ProducerConfig.Builder pb = ProducerConfig.builder().bootstrapServers("h:1").credentials("alice", token);
        ConsumerConfig.Builder cb = ConsumerConfig.builder().bootstrapServers("h:1").groupId("g")
                .set("token", token).set("principal", "alice");
        ClientConfig.Builder ab = ClientConfig.builder().setAll(Map.of("principal", "alice", "token", token));
        for (Object shown : List.of(pb, cb, ab, pb.build(), cb.build(), ab.build(), pb.build().values(),
                cb.build().values(), ab.build().values())) {
            String text = String.valueOf(shown);
            assertFalse(text.contains(token), text);
            assertTrue(text.contains("token=<redacted>"), text);
            assertTrue(text.contains("principal=alice"), text);
        }
        assertEquals("ProducerConfig.Builder{bootstrap_servers=h:1, principal=alice, token=<redacted>}", pb.toString());
        assertEquals("ProducerConfig{bootstrap_servers=h:1, principal=alice, token=<redacted>}", pb.build().toString());
        // The values themselves are there for whoever asks for them by name.
        assertEquals(token, pb.build().get("token"));
        assertEquals(token, pb.build().values().get("token"));
        assertEquals(Map.of("bootstrap_servers", "h:1", "principal", "alice", "token", token), pb.build().values());
        // Errors about the token name it, never its value.
        String bad = "tok with-space-77";
        ValidationException e = assertThrows(ValidationException.class,
                () -> ClientConfig.builder().credentials("alice", bad).build());
        assertFalse(e.getMessage().contains("with-space-77"), e.getMessage());
        assertTrue(e.getMessage().contains("token"), e.getMessage());
        ValidationException alone = assertThrows(ValidationException.class,
                () -> ClientConfig.builder().set("token", token).build());
        assertFalse(alone.getMessage().contains(token), alone.getMessage());
    }

    @Test
    void nativeLibraryComesFromTheJarResources() {
        String from = NativeLib.loadedFrom();
        assertTrue(from.contains("cursus-jni-") || from.equals("java.library.path")
                || System.getProperty("cursus.native.library") != null, from);
        assertEquals(NativeLib.VERSION, NativeLib.nativeVersion());
        assertTrue(NativeLib.VERSION.matches("\\d+\\.\\d+\\.\\d+.*"), NativeLib.VERSION);
    }
}
