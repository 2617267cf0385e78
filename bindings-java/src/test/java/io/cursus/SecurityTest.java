package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * TLS, mutual TLS and token authentication against a broker that requires all three
 * ({@link SecureBroker}): the happy path, and each refusal with its documented code,
 * class and fields (docs/security.md). Refusals surface when the client is created (it
 * connects eagerly) and at once: never retried until a timeout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SecurityTest {
    /** A refusal must come well before the connect timeout the clients are given. */
    private static final long CONNECT_TIMEOUT_MS = 30_000;
    private static final Duration PROMPT = Duration.ofSeconds(10);

    private static SecureBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = SecureBroker.start();
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    private static ClientConfig.Builder admin(String principal) {
        return broker.secure(ClientConfig.builder(), principal).connectTimeoutMs(CONNECT_TIMEOUT_MS);
    }

    /** Runs {@code open}, expects an {@link AuthorizationException}, promptly. */
    private static AuthorizationException refused(Supplier<? extends AutoCloseable> open) {
        long start = System.nanoTime();
        AuthorizationException e = assertThrows(AuthorizationException.class, () -> open.get().close());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(PROMPT) < 0, "refused after " + took + ": " + e);
        assertEquals(ErrorClass.AUTHORIZATION, e.errorClass());
        assertFalse(e.isRetryable(), e.toString());
        return e;
    }

    @Test
    void tlsWithClientCertificateAndTokenCreatesProducesAndConsumes() throws Exception {
        try (CursusAdmin admin = new CursusAdmin(admin("admin").build())) {
            assertEquals(2, admin.createTopic(NewTopic.named("secure-orders").partitions(2)).partitions());
            assertTrue(admin.listTopics().contains("secure-orders"));
        }
        try (CursusProducer producer = new CursusProducer(broker.secure(ProducerConfig.builder(), "admin").build())) {
            for (int i = 0; i < 3; i++) {
                RecordMetadata md = producer.send(ProducerRecord.of("secure-orders", "k", "v" + i))
                        .get(30, TimeUnit.SECONDS);
                assertEquals("secure-orders", md.topic());
            }
        }
        try (CursusConsumer consumer = new CursusConsumer(broker.secure(ConsumerConfig.builder(), "admin")
                .groupId("secure-g").fetchMaxWaitMs(50).build())) {
            consumer.subscribe(List.of("secure-orders"));
            List<ConsumerRecord> got = Polling.pollAtLeast(consumer, 3);
            assertEquals(List.of("v0", "v1", "v2"), got.stream().map(ConsumerRecord::valueAsString).toList());
        }
    }

    @Test
    void wrongTokenIsAuthenticationFailed() {
        String wrong = "not-the-token-4711";
        AuthorizationException e = refused(() -> new CursusAdmin(admin("admin").credentials("admin", wrong).build()));
        assertEquals("authentication_failed", e.code());
        assertEquals("broker", e.kind());
        assertEquals("admin", e.field("principal"));
        assertFalse(e.getMessage().contains(wrong), e.getMessage());
        assertFalse(e.toString().contains(wrong), e.toString());
        // An unknown principal gets the same answer, on a producer too.
        AuthorizationException unknown = refused(() -> new CursusProducer(broker.secure(ProducerConfig.builder(), "admin")
                .credentials("nobody", "nobody-token").connectTimeoutMs(CONNECT_TIMEOUT_MS).build()));
        assertEquals("authentication_failed", unknown.code());
        assertEquals("nobody", unknown.field("principal"));
    }

    @Test
    void noClientCertificateIsRefusedByMutualTls() {
        ClientConfig.Builder noCert = ClientConfig.builder().bootstrapServers(broker.tlsAddr())
                .tlsCaFile(broker.pki("ca.pem")).credentials("admin", SecureBroker.TOKENS.get("admin"))
                .connectTimeoutMs(CONNECT_TIMEOUT_MS);
        AuthorizationException e = refused(() -> new CursusAdmin(noCert.build()));
        assertEquals("tls_handshake_failed", e.code());
        assertEquals("client_certificate_refused", e.field("reason"));
        // A consumer too; clients with a certificate go on working.
        AuthorizationException c = refused(() -> new CursusConsumer(ConsumerConfig.builder()
                .bootstrapServers(broker.tlsAddr()).tlsCaFile(broker.pki("ca.pem")).groupId("g")
                .connectTimeoutMs(CONNECT_TIMEOUT_MS).build()));
        assertEquals("tls_handshake_failed", c.code());
        assertEquals("client_certificate_refused", c.field("reason"));
        try (CursusAdmin admin = new CursusAdmin(admin("admin").build())) {
            admin.listTopics();
        }
    }

    @Test
    void brokerCertificateFromAnotherCaIsUnknownCa() {
        AuthorizationException e = refused(() -> new CursusAdmin(admin("admin").tlsCaFile(broker.pki("other-ca.pem")).build()));
        assertEquals("tls_handshake_failed", e.code());
        assertEquals("unknown_ca", e.field("reason"));
    }

    @Test
    void serverNameNotInTheCertificateIsNameMismatch() {
        AuthorizationException e = refused(() -> new CursusAdmin(admin("admin").tlsServerName("not-the-broker.example").build()));
        assertEquals("tls_handshake_failed", e.code());
        assertEquals("name_mismatch", e.field("reason"));
    }

    @Test
    void clientCertificateFromAnUntrustedCaIsRefused() {
        AuthorizationException e = refused(() -> new CursusAdmin(admin("admin")
                .tlsCertFile(broker.pki("other-client.pem")).tlsKeyFile(broker.pki("other-client.key")).build()));
        assertEquals("tls_handshake_failed", e.code());
        assertEquals("client_certificate_refused", e.field("reason"));
    }

    @Test
    void principalWithoutAdminCannotCreateATopic() {
        // reader holds topic.read only: it connects and authenticates, CREATE needs admin.
        try (CursusAdmin reader = new CursusAdmin(admin("reader").build())) {
            AuthorizationException e = assertThrows(AuthorizationException.class,
                    () -> reader.createTopic(NewTopic.named("not-yours").partitions(1)));
            assertEquals("NOT_AUTHORIZED_FOR_OPERATION", e.code());
            assertEquals("CREATE", e.field("command"));
            assertEquals("admin", e.field("permission"));
            assertFalse(e.isRetryable());
        }
        try (CursusAdmin admin = new CursusAdmin(admin("admin").build())) {
            assertFalse(admin.listTopics().contains("not-yours"));
        }
    }

    /**
     * The tokens never reach a log record, an exception or a {@code toString()}: the
     * binding's logging goes through {@link System.Logger}, whose default backend is
     * java.util.logging, captured here at every level while clients connect, fail and work.
     */
    @Test
    void tokensNeverAppearInLogsErrorsOrToString() {
        List<String> seen = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                seen.add(r.getLoggerName() + " " + r.getMessage() + " " + Arrays.toString(r.getParameters())
                        + " " + r.getThrown());
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        capture.setLevel(Level.ALL);
        Logger root = Logger.getLogger("");
        Logger cursus = Logger.getLogger("io.cursus");
        Level before = cursus.getLevel();
        cursus.setLevel(Level.ALL);
        root.addHandler(capture);
        String wrong = "wrong-token-0c4f";
        try {
            ClientConfig good = admin("admin").build();
            seen.add(good.toString());
            seen.add(admin("reader").toString());
            try (CursusAdmin a = new CursusAdmin(good)) {
                a.createTopic(NewTopic.named("logged").partitions(1));
            }
            try (CursusAdmin reader = new CursusAdmin(admin("reader").build())) {
                seen.add(assertThrows(CursusException.class,
                        () -> reader.createTopic(NewTopic.named("logged-2"))).toString());
            }
            seen.add(assertThrows(CursusException.class,
                    () -> new CursusAdmin(admin("admin").credentials("admin", wrong).build())).toString());
            seen.add(assertThrows(CursusException.class, () -> new CursusAdmin(admin("admin")
                    .tlsCaFile(broker.pki("other-ca.pem")).build())).toString());
        } finally {
            root.removeHandler(capture);
            cursus.setLevel(before);
        }
        for (String line : seen) {
            for (String token : List.of(SecureBroker.TOKENS.get("admin"), SecureBroker.TOKENS.get("reader"), wrong)) {
                assertFalse(line.contains(token), line);
            }
        }
    }

    /**
     * docs/security.md: a plaintext client on a TLS port fails at once with
     * {@code not_cursus_wire}: the broker's TLS alert (7 bytes) is recognised by its first
     * four bytes, before a whole frame header could arrive.
     */
    @Test
    void plaintextClientOnTheTlsPortIsToldToSetTls() {
        long start = System.nanoTime();
        CursusException e = assertThrows(CursusException.class, () -> new CursusAdmin(ClientConfig.builder()
                .bootstrapServers(broker.tlsAddr()).connectTimeoutMs(CONNECT_TIMEOUT_MS).build()).close());
        assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(PROMPT) < 0, e.toString());
        assertEquals("not_cursus_wire", e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("tls=true"), e.getMessage());
    }
}
