package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ErrorTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    @Test
    void notFound() {
        try (CursusAdmin admin = BROKER.admin()) {
            NotFoundException e = assertThrows(NotFoundException.class, () -> admin.deleteTopic("missing", false));
            assertEquals("topic_not_found", e.code());
            assertEquals(ErrorClass.NOT_FOUND, e.errorClass());
            assertEquals("broker", e.kind());
            assertFalse(e.isRetryable());
        }
    }

    @Test
    void validationFromBrokerAndEngine() {
        try (CursusAdmin admin = BROKER.admin()) {
            ValidationException e = assertThrows(ValidationException.class,
                    () -> admin.createTopic(NewTopic.named("bad/name")));
            assertEquals("invalid_topic_name", e.code());
            assertEquals(ErrorClass.VALIDATION, e.errorClass());
            // Refused by the engine before sending.
            e = assertThrows(ValidationException.class, () -> admin.createTopic(NewTopic.named("bad name")));
            assertEquals("invalid_argument", e.kind());
        }
        // Configuration is validated by the engine when built.
        ValidationException e = assertThrows(ValidationException.class,
                () -> ProducerConfig.builder().set("linger_ms", "soon").build());
        assertTrue(e.getMessage().contains("linger_ms"), e.getMessage());
        e = assertThrows(ValidationException.class, () -> ProducerConfig.builder().set("no_such_option", "1").build());
        assertTrue(e.getMessage().contains("known options"), e.getMessage());
        assertThrows(ValidationException.class,
                () -> ProducerConfig.builder().enableIdempotence(true).acks("1").build());
    }

    @Test
    void conflict() {
        try (CursusAdmin admin = BROKER.admin()) {
            admin.createTopic(NewTopic.named("conflict").partitions(1));
            ConflictException e = assertThrows(ConflictException.class, () -> admin.truncateTopic("conflict", 99));
            assertEquals(ErrorClass.CONFLICT, e.errorClass());
        }
    }

    @Test
    void authorizationFailsTheFuture() throws Exception {
        try (CursusAdmin admin = BROKER.admin()) {
            admin.createTopic(NewTopic.named("locked").partitions(1).authPolicy("deny_write"));
        }
        try (CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> producer.send(ProducerRecord.of("locked", "x")).get(30, TimeUnit.SECONDS));
            AuthorizationException cause = assertInstanceOf(AuthorizationException.class, e.getCause());
            assertEquals(ErrorClass.AUTHORIZATION, cause.errorClass());
            assertTrue(cause.code().startsWith("NOT_AUTHORIZED"), cause.code());
            // sendAndWait rethrows the same class directly.
            assertThrows(AuthorizationException.class, () -> producer.sendAndWait(ProducerRecord.of("locked", "y")));
        }
    }

    @Test
    void fullBufferIsATimeout() {
        BROKER.createTopic("small", 1);
        try (CursusProducer producer = new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                .bufferMemory(1000).maxBlockMs(50).lingerMs(60_000).batchSize(100_000).build())) {
            producer.send(ProducerRecord.of("small", new byte[800]));
            CursusTimeoutException e = assertThrows(CursusTimeoutException.class,
                    () -> producer.send(ProducerRecord.of("small", new byte[800])));
            assertEquals("max_block_exceeded", e.code());
            assertInstanceOf(AvailabilityException.class, e);
            assertTrue(e.isRetryable());
            producer.flush(Duration.ofSeconds(30));
        }
    }

    @Test
    void unreachableBrokerIsAvailability() throws Exception {
        // Port 1 (tcpmux) is closed on test machines: the connection is refused. A
        // port freed by a ServerSocket could be taken by another test's broker.
        ClientConfig config = ClientConfig.builder().bootstrapServers("127.0.0.1:1").retries(0).build();
        AvailabilityException e = assertThrows(AvailabilityException.class, () -> new CursusAdmin(config).close());
        assertEquals("io", e.kind());
        assertTrue(e.isRetryable());
    }

    @Test
    void noCommittedOffsetWithResetError() {
        BROKER.createTopic("strict", 1);
        try (CursusConsumer c = new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr())
                .groupId("strict-g").autoOffsetReset("error").fetchMaxWaitMs(50).build())) {
            c.subscribe(List.of("strict"));
            CursusException e = assertThrows(CursusException.class, () -> c.poll(Duration.ofMillis(300)));
            assertEquals("no_committed_offset", e.code());
        }
    }

    /** Every class maps to its subclass, with code, retryable flag and fields intact. */
    @Test
    void everyClassMapsToItsSubclass() {
        Map<ErrorClass, Class<? extends CursusException>> byClass = Map.of(
                ErrorClass.VALIDATION, ValidationException.class,
                ErrorClass.AUTHORIZATION, AuthorizationException.class,
                ErrorClass.ROUTING, RoutingException.class,
                ErrorClass.AVAILABILITY, AvailabilityException.class,
                ErrorClass.CONFLICT, ConflictException.class,
                ErrorClass.FENCING, FencingException.class,
                ErrorClass.NOT_FOUND, NotFoundException.class,
                ErrorClass.INTERNAL, InternalException.class);
        assertEquals(ErrorClass.values().length, byClass.size());
        for (Map.Entry<ErrorClass, Class<? extends CursusException>> c : byClass.entrySet()) {
            CursusException e = CursusException.of("broker", "SOME_CODE", c.getKey(), true, "detail",
                    Map.of("leader", "h:1"));
            assertEquals(c.getValue(), e.getClass());
            assertEquals("SOME_CODE", e.code());
            assertEquals("detail", e.detail());
            assertEquals("h:1", e.field("leader"));
            assertTrue(e.isRetryable());
            assertEquals("SOME_CODE (" + c.getKey().wireName() + ", retryable): detail; leader=h:1", e.getMessage());
        }
        assertInstanceOf(CursusTimeoutException.class,
                CursusException.of("timeout", "timeout", ErrorClass.AVAILABILITY, true, "slow", Map.of()));
        assertInstanceOf(CursusClosedException.class,
                CursusException.of("closed", "closed", ErrorClass.VALIDATION, false, "", Map.of()));
    }

    /** The message is the engine's text, and the Java rendering (for Java-side errors) matches it. */
    @Test
    void messageIsTheEngineText() {
        try (CursusAdmin admin = BROKER.admin()) {
            NotFoundException e = assertThrows(NotFoundException.class, () -> admin.describeTopic("nowhere"));
            assertTrue(e.getMessage().startsWith("topic_not_found (not_found)"), e.getMessage());
            assertEquals(CursusException.render(e.code(), e.errorClass(), e.isRetryable(), e.detail(), e.fields()),
                    e.getMessage());
        }
        ValidationException bad = assertThrows(ValidationException.class,
                () -> ProducerConfig.builder().set("linger_ms", "soon").build());
        assertEquals(CursusException.render(bad.code(), bad.errorClass(), bad.isRetryable(), bad.detail(),
                bad.fields()), bad.getMessage());
        assertTrue(bad.getMessage().contains("linger_ms"), bad.getMessage());
    }
}
