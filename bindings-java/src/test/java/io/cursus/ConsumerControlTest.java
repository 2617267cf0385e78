package io.cursus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Consumer control (seek, position, pause/resume, committed offsets of many partitions), the
 * rebalance listener, and every field of a consumed record, against a real broker.
 */
class ConsumerControlTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static CursusConsumer consumer(String group) {
        return new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr()).groupId(group)
                .autoOffsetReset("earliest").fetchMaxWaitMs(50).heartbeatIntervalMs(200).build());
    }

    private static void produce(String topic, int from, int to) {
        try (CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            for (int i = from; i < to; i++) {
                producer.send(ProducerRecord.of(topic, "k" + i, "v" + i).withPartition(0));
            }
            producer.flush(Duration.ofSeconds(30));
        }
    }

    private static List<Long> offsets(List<ConsumerRecord> records) {
        List<Long> out = new ArrayList<>();
        records.forEach(r -> out.add(r.offset()));
        return out;
    }

    /** Polls until the consumer has joined (its assignment is known) and returns what came. */
    private static List<ConsumerRecord> pollUntilAssigned(CursusConsumer c) {
        List<ConsumerRecord> got = new ArrayList<>();
        for (int i = 0; i < 400 && c.assignment().isEmpty(); i++) {
            got.addAll(c.poll(Duration.ofMillis(100)));
        }
        assertFalse(c.assignment().isEmpty(), "never joined");
        return got;
    }

    @Test
    void recordsCarryEveryField() throws Exception {
        BROKER.createTopic("fields", 1);
        RecordMetadata stamped;
        RecordMetadata unstamped;
        try (CursusProducer p = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            stamped = p.sendAndWait(ProducerRecord.of("fields", "k", "stamped").withTimestamp(1_234_567));
            unstamped = p.sendAndWait(ProducerRecord.of("fields", "nokey"));
            p.sendAndWait(ProducerRecord.of("fields", "emptykey").withKey(new byte[0]));
        }
        assertEquals(1_234_567, stamped.timestamp());
        assertTrue(unstamped.timestamp() > 0, unstamped.toString());
        try (CursusConsumer c = consumer("fields-g")) {
            c.subscribe(List.of("fields"));
            List<ConsumerRecord> got = Polling.pollAtLeast(c, 3);
            assertEquals(3, got.size());
            ConsumerRecord a = got.get(0);
            assertEquals(1_234_567, a.timestamp());
            assertArrayEquals("k".getBytes(StandardCharsets.UTF_8), a.key());
            assertEquals("k", a.keyAsString());
            assertTrue(a.hasKey());
            assertNull(a.metadata());
            assertNull(a.eventType());
            assertFalse(a.isEvent());
            assertEquals(0, a.schemaVersion());
            assertEquals(-1, a.aggregateVersion());
            assertNull(a.eventId());
            ConsumerRecord b = got.get(1);
            assertEquals(unstamped.timestamp(), b.timestamp(), "the delivery report's timestamp is what consumers read");
            assertNull(b.key(), "no key is null, not empty");
            assertNull(b.keyAsString());
            assertFalse(b.hasKey());
            assertEquals("nokey", b.valueAsString());
            // The protocol carries only non-empty keys: an empty key arrives as none.
            assertNull(got.get(2).key());
        }

        try (CursusAdmin admin = BROKER.admin()) {
            admin.createTopic(NewTopic.named("fields-es").partitions(1).eventSourcing(true).idempotent(true)
                    .aggregateReplay(true));
        }
        try (CursusEventStore store = new CursusEventStore(ClientConfig.of(BROKER.addr()))) {
            store.append("fields-es", "agg-1", 0,
                    new Event("Opened", "{}", "{\"by\":\"test\"}", 2).withEventId("ev-1"));
        }
        try (CursusConsumer c = consumer("fields-es-g")) {
            c.subscribe(List.of("fields-es"));
            List<ConsumerRecord> got = Polling.pollAtLeast(c, 1);
            assertEquals(1, got.size());
            ConsumerRecord e = got.get(0);
            assertEquals("agg-1", e.keyAsString());
            assertEquals("{}", e.valueAsString());
            assertTrue(e.isEvent());
            assertEquals("Opened", e.eventType());
            assertEquals(2, e.schemaVersion());
            assertEquals(1, e.aggregateVersion());
            assertEquals("{\"by\":\"test\"}", e.metadata());
            assertEquals("ev-1", e.eventId());
            assertTrue(e.timestamp() > 0);
        }
    }

    @Test
    void seekPositionPauseResumeAndCommittedOfMany() {
        BROKER.createTopic("control", 2);
        produce("control", 0, 10);
        TopicPartition p0 = new TopicPartition("control", 0);
        TopicPartition p1 = new TopicPartition("control", 1);
        try (CursusConsumer c = consumer("control-g")) {
            // Before joining nothing is assigned.
            CursusException notAssigned = assertThrows(CursusException.class, () -> c.seek(p0, 0));
            assertEquals("partition_not_assigned", notAssigned.code(), notAssigned.getMessage());
            c.subscribe(List.of("control"));
            List<ConsumerRecord> got = pollUntilAssigned(c);
            got.addAll(Polling.pollAtLeast(c, 10 - got.size()));
            assertEquals(10, got.size());
            assertEquals(10, c.position(p0));
            assertEquals(0, c.position(p1));

            Map<TopicPartition, Long> none = c.committed(new LinkedHashSet<>(List.of(p1, p0)));
            assertEquals(List.of(p1, p0), new ArrayList<>(none.keySet()), "in the order asked");
            assertTrue(none.containsKey(p0) && none.get(p0) == null, none.toString());
            assertNull(none.get(p1));

            c.seek(p0, 3);
            assertEquals(3, c.position(p0));
            List<ConsumerRecord> again = Polling.pollAtLeast(c, 7);
            assertEquals(List.of(3L, 4L, 5L, 6L, 7L, 8L, 9L), offsets(again));
            c.commitSync();
            Map<TopicPartition, Long> committed = c.committed(Set.of(p0, p1));
            assertEquals(10L, committed.get(p0));
            assertTrue(committed.containsKey(p1));
            assertNull(committed.get(p1));
            assertEquals(OptionalLong.of(10), c.committed(p0));

            c.pause(List.of(p0));
            assertEquals(Set.of(p0), c.paused());
            produce("control", 10, 13);
            // Paused: the new records are not returned (a bounded wait for records that must not come).
            for (int i = 0; i < 5; i++) {
                assertEquals(List.of(), c.poll(Duration.ofMillis(100)));
            }
            assertEquals(10, c.position(p0));
            c.resume(List.of(p0));
            assertEquals(Set.of(), c.paused());
            assertEquals(List.of(10L, 11L, 12L), offsets(Polling.pollAtLeast(c, 3)));

            CursusException stranger = assertThrows(CursusException.class,
                    () -> c.position(new TopicPartition("control", 7)));
            assertEquals("partition_not_assigned", stranger.code());
        }
    }

    /** Records what it is told; optionally seeks on assignment and commits on revocation. */
    private static final class Recorder implements ConsumerRebalanceListener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final LinkedBlockingQueue<String> told = new LinkedBlockingQueue<>();
        volatile CursusConsumer consumer;
        volatile long seekTo = -1;
        volatile boolean commitOnRevoke;
        volatile boolean throwOnAssigned;
        volatile Throwable pollInside;
        volatile Throwable commitFailure;

        private void record(String kind, Collection<TopicPartition> partitions) {
            List<String> names = new ArrayList<>();
            partitions.forEach(tp -> names.add(tp.topic() + ":" + tp.partition()));
            Collections.sort(names);
            events.add(kind + names);
            told.add(kind);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            record("assigned", partitions);
            if (seekTo >= 0) {
                for (TopicPartition tp : partitions) {
                    consumer.seek(tp, seekTo);
                }
            }
            if (pollInside == null) {
                try {
                    consumer.poll(Duration.ofMillis(10));
                    pollInside = new AssertionError("poll inside the listener returned");
                } catch (Throwable t) {
                    pollInside = t;
                }
            }
            if (throwOnAssigned) {
                throw new IllegalStateException("a listener that throws");
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            record("revoked", partitions);
            if (commitOnRevoke) {
                try {
                    consumer.commitSync();
                } catch (Throwable t) {
                    commitFailure = t;
                }
            }
        }
    }

    @Test
    void rebalanceListenerSeeksOnAssignedAndCommitsOnRevokedAtClose() throws Exception {
        BROKER.createTopic("rebal", 1);
        produce("rebal", 0, 10);
        TopicPartition tp = new TopicPartition("rebal", 0);
        Recorder r = new Recorder();
        r.seekTo = 4;
        r.commitOnRevoke = true;
        CursusConsumer c = consumer("rebal-g");
        r.consumer = c;
        c.subscribe(List.of("rebal"), r);
        List<ConsumerRecord> got = Polling.pollAtLeast(c, 6);
        assertEquals(List.of(4L, 5L, 6L, 7L, 8L, 9L), offsets(got), "seek in onPartitionsAssigned starts there");
        assertEquals(List.of("assigned[rebal:0]"), r.events);
        CursusException inside = assertThrows(CursusException.class, () -> {
            throw r.pollInside;
        });
        assertTrue("invalid_argument".equals(inside.kind()) || "invalid_argument".equals(inside.code()),
                inside.getMessage());
        // Close: revoked is told, and a commit there still succeeds.
        c.close();
        assertEquals(List.of("assigned[rebal:0]", "revoked[rebal:0]"), r.events);
        assertNull(r.commitFailure, String.valueOf(r.commitFailure));
        try (CursusConsumer check = consumer("rebal-g")) {
            check.subscribe(List.of("rebal"));
            pollUntilAssigned(check);
            assertEquals(Map.of(tp, 10L), check.committed(Set.of(tp)));
        }
    }

    @Test
    void aListenerThatThrowsIsLoggedAndTheConsumerGoesOn() throws Exception {
        BROKER.createTopic("throws", 1);
        produce("throws", 0, 3);
        List<LogRecord> logged = new CopyOnWriteArrayList<>();
        Logger jul = Logger.getLogger("io.cursus");
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                logged.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        jul.addHandler(handler);
        try {
            Recorder r = new Recorder();
            r.throwOnAssigned = true;
            try (CursusConsumer c = consumer("throws-g")) {
                r.consumer = c;
                c.setRebalanceListener(r);
                c.subscribe(List.of("throws"));
                assertEquals(3, Polling.pollAtLeast(c, 3).size(), "the consumer goes on");
                assertEquals("assigned", r.told.poll(30, TimeUnit.SECONDS));
                // The listener thread goes on too: a new subscription revokes and reassigns.
                c.subscribe(List.of("throws"), r);
                assertEquals("revoked", r.told.poll(30, TimeUnit.SECONDS));
                String next = null;
                for (int i = 0; i < 300 && next == null; i++) {
                    c.poll(Duration.ofMillis(100));
                    next = r.told.poll();
                }
                assertEquals("assigned", next);
                assertEquals(List.of("assigned[throws:0]", "revoked[throws:0]", "assigned[throws:0]"), r.events);
            }
            assertTrue(logged.stream().anyMatch(l -> l.getLevel() == java.util.logging.Level.SEVERE
                    && l.getThrown() instanceof IllegalStateException
                    && l.getMessage().contains("rebalance listener")), logged.toString());
        } finally {
            jul.removeHandler(handler);
        }
    }

    @Test
    void aLossIsToldAsARevocationWithoutOnPartitionsLost() throws Exception {
        // Heartbeats far apart and a short session: the broker expires the member before its
        // next heartbeat, which then learns it is gone (a loss).
        try (TestBroker broker = TestBroker.start("group_session_timeout_ms = 300\n", "127.0.0.1:0");
                CursusAdmin admin = new CursusAdmin(ClientConfig.of(broker.addr))) {
            admin.createTopic(NewTopic.named("lost").partitions(1));
            ConsumerConfig config = ConsumerConfig.builder().bootstrapServers(broker.addr).groupId("lost-g")
                    .heartbeatIntervalMs(1500).build();
            LinkedBlockingQueue<String> told = new LinkedBlockingQueue<>();
            ConsumerRebalanceListener withoutLost = new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    told.add("assigned");
                }

                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    told.add("revoked " + partitions);
                }
            };
            assertFalse(CursusConsumer.handlesLost(withoutLost));
            try (CursusConsumer c = new CursusConsumer(config)) {
                c.subscribe(List.of("lost"), withoutLost);
                List<String> seen = new ArrayList<>();
                for (int i = 0; i < 400 && seen.size() < 3; i++) {
                    c.poll(Duration.ofMillis(50));
                    told.drainTo(seen);
                }
                assertEquals(List.of("assigned", "revoked [TopicPartition[topic=lost, partition=0]]", "assigned"),
                        seen);
            }
        }
    }

    @Test
    void removingTheListenerStopsIt() throws Exception {
        BROKER.createTopic("unset", 1);
        Recorder r = new Recorder();
        try (CursusConsumer c = consumer("unset-g")) {
            r.consumer = c;
            c.subscribe(List.of("unset"), r);
            pollUntilAssigned(c);
            assertEquals("assigned", r.told.poll(30, TimeUnit.SECONDS));
            c.setRebalanceListener(null);
        }
        assertEquals(List.of("assigned[unset:0]"), r.events, "no revoked after the listener was removed");
        assertNotNull(r.pollInside);
    }

    @Test
    void anUnclosedConsumerWhoseListenersReferToItIsStillCollected() throws Exception {
        BROKER.createTopic("forgotten", 1);
        ReferenceQueue<CursusConsumer> queue = new ReferenceQueue<>();
        WeakReference<CursusConsumer> ref = openAndForget(queue);
        boolean collected = false;
        for (int i = 0; i < 300 && !collected; i++) {
            System.gc();
            collected = queue.remove(100) == ref;
        }
        assertTrue(collected, "the native listeners keep no strong path to the consumer");
    }

    /** A joined consumer whose listeners capture it, dropped without close. */
    private static WeakReference<CursusConsumer> openAndForget(ReferenceQueue<CursusConsumer> queue) {
        CursusConsumer c = consumer("forgotten-g");
        Recorder r = new Recorder();
        r.consumer = c;
        c.subscribe(List.of("forgotten"), r);
        c.setErrorListener(e -> c.wakeup());
        c.setStatisticsListener(Duration.ofHours(1), s -> c.wakeup());
        pollUntilAssigned(c);
        return new WeakReference<>(c, queue);
    }
}
