package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Statistics, the statistics and error listeners, and engine logs through System.Logger. */
class ObservabilityTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static CursusConsumer consumer(String addr, String group) {
        return new CursusConsumer(ConsumerConfig.builder().bootstrapServers(addr).groupId(group)
                .autoOffsetReset("earliest").fetchMaxWaitMs(50).heartbeatIntervalMs(200).build());
    }

    /** A JUL handler collecting what reaches the {@code io.cursus} logger. */
    private static final class Collect extends Handler {
        final LinkedBlockingQueue<LogRecord> records = new LinkedBlockingQueue<>();

        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}

        /** Waits for a record whose message contains {@code text}. */
        LogRecord await(String text) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                LogRecord r = records.poll(100, TimeUnit.MILLISECONDS);
                if (r != null && r.getMessage() != null && r.getMessage().contains(text)) {
                    return r;
                }
            }
            throw new AssertionError("no log record containing " + text);
        }
    }

    @Test
    void producerStatisticsOnDemandAndPeriodically() throws Exception {
        BROKER.createTopic("stats-p", 1);
        try (CursusProducer p = new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                .clientId("stats-producer").build())) {
            for (int i = 0; i < 5; i++) {
                p.send(ProducerRecord.of("stats-p", "v" + i));
            }
            p.flush();
            assertThrows(CursusException.class, () -> p.sendAndWait(ProducerRecord.of("no-such-topic", "x")));
            Statistics s = p.statistics();
            assertEquals("producer", s.kind());
            assertEquals("stats-producer", s.clientId());
            assertEquals(5, s.recordsSent());
            assertTrue(s.bytesSent() >= 10, s.toString());
            assertTrue(s.batchesSent() >= 1 && s.requests() >= 1, s.toString());
            assertTrue(s.produceLatency().count() >= 1 && s.produceLatency().maxUs() > 0, s.toString());
            assertTrue(s.errorCount(ErrorClass.NOT_FOUND) >= 1, s.errors().toString());
            assertFalse(s.errors().containsKey(ErrorClass.FENCING), "classes that never failed are absent");
            assertEquals(List.of(), s.partitions());
            assertTrue(s.json().contains("\"kind\":\"producer\""), s.json());
            assertThrows(UnsupportedOperationException.class, () -> s.errors().clear());

            // Periodic: a listener that throws is logged and called again.
            LinkedBlockingQueue<Statistics> got = new LinkedBlockingQueue<>();
            AtomicInteger calls = new AtomicInteger();
            p.setStatisticsListener(Duration.ofMillis(20), st -> {
                got.add(st);
                if (calls.incrementAndGet() == 1) {
                    throw new IllegalStateException("first call throws");
                }
            });
            System.gc(); // the producer alone keeps the listener reachable
            Statistics first = got.poll(30, TimeUnit.SECONDS);
            assertNotNull(first);
            assertEquals(5, first.recordsSent());
            assertNotNull(got.poll(30, TimeUnit.SECONDS), "called again after throwing");
            p.setStatisticsListener(Duration.ofMillis(20), null);
            // The library's rule: a listener never called (the option left at 0) is refused.
            ValidationException never = assertThrows(ValidationException.class,
                    () -> p.setStatisticsListener(null, st -> { }));
            assertEquals("statistics_interval_ms", never.field("option"));
        }
    }

    @Test
    void consumerStatisticsCarryTheLagOfEveryAssignedPartition() throws Exception {
        BROKER.createTopic("stats-c", 2);
        try (CursusProducer p = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            for (int i = 0; i < 6; i++) {
                p.send(ProducerRecord.of("stats-c", "v" + i).withPartition(i % 2));
            }
            p.flush();
        }
        try (CursusConsumer c = consumer(BROKER.addr(), "stats-g")) {
            c.subscribe(List.of("stats-c"));
            assertEquals(6, Polling.pollAtLeast(c, 6).size());
            Statistics s = c.statistics();
            assertEquals("consumer", s.kind());
            assertEquals(6, s.recordsReceived());
            assertEquals(2, s.partitions().size(), s.partitions().toString());
            for (Statistics.PartitionLag row : s.partitions()) {
                assertEquals("stats-c", row.topic());
                assertEquals(3, row.endOffset());
                assertEquals(3, row.position().getAsLong());
                assertEquals(0, row.lag().getAsLong());
            }
            assertEquals(0, s.totalLag());

            LinkedBlockingQueue<Statistics> got = new LinkedBlockingQueue<>();
            c.setStatisticsListener(Duration.ofMillis(20), got::add);
            Statistics periodic = got.poll(30, TimeUnit.SECONDS);
            assertNotNull(periodic);
            assertEquals("consumer", periodic.kind());
            c.setStatisticsListener(null, null);
        }
    }

    @Test
    void errorListenersGetBackgroundErrors() throws Exception {
        LinkedBlockingQueue<CursusException> producerErrors = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<CursusException> consumerErrors = new LinkedBlockingQueue<>();
        TestBroker own = TestBroker.start();
        CursusProducer p = null;
        CursusConsumer c = null;
        try (CursusAdmin admin = new CursusAdmin(ClientConfig.of(own.addr))) {
            admin.createTopic(NewTopic.named("errs").partitions(1));
            p = new CursusProducer(ProducerConfig.of(own.addr));
            c = consumer(own.addr, "errs-g");
            p.setErrorListener(producerErrors::add);
            c.setErrorListener(consumerErrors::add);
            p.sendAndWait(ProducerRecord.of("errs", "x"));
            c.subscribe(List.of("errs"));
            assertEquals(1, Polling.pollAtLeast(c, 1).size());
            assertTrue(producerErrors.isEmpty(), "a delivered record is no error");
        } finally {
            own.close();
        }
        try {
            CursusException pe = producerErrors.poll(60, TimeUnit.SECONDS);
            assertNotNull(pe, "the producer's lost connection");
            assertEquals("connection_lost", pe.code(), pe.getMessage());
            CursusException ce = consumerErrors.poll(60, TimeUnit.SECONDS);
            assertNotNull(ce, "the consumer's lost connection");
        } finally {
            p.close(Duration.ZERO);
            c.close();
        }
    }

    @Test
    void engineLogsReachSystemLoggerIoCursus() throws Exception {
        Logger jul = Logger.getLogger("io.cursus");
        Level before = jul.getLevel();
        Collect collect = new Collect();
        jul.addHandler(collect);
        try {
            jul.setLevel(Level.INFO);
            assertEquals(System.Logger.Level.INFO, CursusLogging.syncLevel());
            BROKER.createTopic("logs", 1);
            try (CursusConsumer c = consumer(BROKER.addr(), "logs-g")) {
                c.subscribe(List.of("logs"));
                for (int i = 0; i < 400 && c.assignment().isEmpty(); i++) {
                    c.poll(Duration.ofMillis(100));
                }
                LogRecord joined = collect.await("joined group");
                assertEquals(Level.INFO, joined.getLevel());
                assertEquals("io.cursus", joined.getLoggerName());
                assertTrue(joined.getMessage().startsWith("cursus::"), joined.getMessage());
            }
            jul.setLevel(Level.WARNING);
            assertEquals(System.Logger.Level.WARNING, CursusLogging.syncLevel());
            jul.setLevel(Level.OFF);
            assertEquals(System.Logger.Level.OFF, CursusLogging.syncLevel());
        } finally {
            jul.removeHandler(collect);
            jul.setLevel(before);
            CursusLogging.syncLevel();
        }
    }

    @Test
    void levelNamesMapBothWays() {
        for (System.Logger.Level l : List.of(System.Logger.Level.ERROR, System.Logger.Level.WARNING,
                System.Logger.Level.INFO, System.Logger.Level.DEBUG, System.Logger.Level.TRACE)) {
            assertEquals(l, EngineLog.javaLevel(EngineLog.engineLevel(l)));
        }
        assertEquals("trace", EngineLog.engineLevel(System.Logger.Level.ALL));
        assertEquals("off", EngineLog.engineLevel(System.Logger.Level.OFF));
    }
}
