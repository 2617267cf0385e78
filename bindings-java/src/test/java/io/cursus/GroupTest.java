package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class GroupTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static CursusConsumer consumer(String group) {
        return new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr()).groupId(group)
                .fetchMaxWaitMs(50).heartbeatIntervalMs(200).build());
    }

    private static void produce(String topic, int from, int to) {
        try (CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            for (int i = from; i < to; i++) {
                producer.send(ProducerRecord.of(topic, "k" + i, "v" + i));
            }
            producer.flush(Duration.ofSeconds(30));
        }
    }

    /**
     * One poll that returned nothing: whether it waited its whole timeout (a lower bound on a
     * wait, not a timing assertion).
     */
    private static boolean pollReachesDeadline(CursusConsumer c, Duration timeout) {
        long start = System.nanoTime();
        assertEquals(List.of(), c.poll(timeout));
        return System.nanoTime() - start >= timeout.toNanos();
    }

    @Test
    void pollReturnsOnlyWithRecordsAtItsDeadlineOrWhenWoken() {
        BROKER.createTopic("no-empty", 2);
        ConsumerConfig config = ConsumerConfig.builder().bootstrapServers(BROKER.addr()).groupId("no-empty-g")
                .fetchMaxWaitMs(50).heartbeatIntervalMs(500).build();
        try (CursusConsumer c1 = new CursusConsumer(config)) {
            c1.subscribe(List.of("no-empty"));
            assertTrue(pollReachesDeadline(c1, Duration.ofMillis(200))); // joins; nothing to read
            // A wakeup ends one poll, and only one.
            c1.wakeup();
            assertFalse(pollReachesDeadline(c1, Duration.ofSeconds(30)));
            assertTrue(pollReachesDeadline(c1, Duration.ofMillis(300)));
            // A second member joins: c1's heartbeat notices the rebalance while c1 polls; the
            // poll rejoins and waits on to its deadline.
            try (CursusConsumer c2 = new CursusConsumer(config)) {
                c2.subscribe(List.of("no-empty"));
                c2.poll(Duration.ZERO);
                assertTrue(pollReachesDeadline(c1, Duration.ofSeconds(2)),
                        "a poll across a rebalance returned [] early");
                assertEquals(1, c1.assignment().size());
            }
        }
    }

    @Test
    void committedPositionsAreResumed() throws Exception {
        BROKER.createTopic("resume", 2);
        produce("resume", 0, 20);
        try (CursusConsumer c = consumer("resume-g")) {
            c.subscribe(List.of("resume"));
            assertEquals(20, Polling.pollAtLeast(c, 20).size());
            c.commitSync();
            Set<TopicPartition> assigned = new HashSet<>(c.assignment());
            assertEquals(Set.of(new TopicPartition("resume", 0), new TopicPartition("resume", 1)), assigned);
            long committed = 0;
            for (TopicPartition tp : assigned) {
                OptionalLong o = c.committed(tp);
                assertTrue(o.isPresent());
                committed += o.getAsLong();
            }
            assertEquals(20, committed);
        }
        produce("resume", 20, 30);
        try (CursusConsumer c = consumer("resume-g")) {
            c.subscribe(List.of("resume"));
            List<ConsumerRecord> got = Polling.pollAtLeast(c, 10);
            assertEquals(10, got.size());
            Set<String> values = new HashSet<>();
            got.forEach(r -> values.add(r.valueAsString()));
            for (int i = 20; i < 30; i++) {
                assertTrue(values.contains("v" + i), values.toString());
            }
            c.commitAsync().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void explicitOffsetsAndAsyncCommit() throws Exception {
        BROKER.createTopic("explicit", 1);
        produce("explicit", 0, 10);
        TopicPartition tp = new TopicPartition("explicit", 0);
        try (CursusConsumer c = consumer("explicit-g")) {
            c.subscribe(List.of("explicit"));
            assertEquals(10, Polling.pollAtLeast(c, 10).size());
            c.commitSync(Map.of(tp, 4L));
            assertEquals(OptionalLong.of(4), c.committed(tp));
            c.commitAsync().get(30, TimeUnit.SECONDS);
            assertEquals(OptionalLong.of(10), c.committed(tp));
        }
    }

    @Test
    void membersSharePartitions() {
        BROKER.createTopic("shared", 4);
        produce("shared", 0, 40);
        try (CursusConsumer a = consumer("shared-g"); CursusConsumer b = consumer("shared-g")) {
            a.subscribe(List.of("shared"));
            b.subscribe(List.of("shared"));
            Set<Long> seen = new HashSet<>();
            Set<String> values = new HashSet<>();
            for (int i = 0; i < 400 && values.size() < 40; i++) {
                for (CursusConsumer c : List.of(a, b)) {
                    for (ConsumerRecord r : c.poll(Duration.ofMillis(50))) {
                        values.add(r.valueAsString());
                        seen.add(((long) r.partition() << 32) | r.offset());
                    }
                }
            }
            assertEquals(40, values.size());
            // Once both have joined, the four partitions are split between them.
            for (int i = 0; i < 400 && (a.assignment().size() + b.assignment().size() != 4
                    || a.assignment().isEmpty() || b.assignment().isEmpty()); i++) {
                a.poll(Duration.ofMillis(50));
                b.poll(Duration.ofMillis(50));
            }
            assertEquals(4, a.assignment().size() + b.assignment().size());
            assertTrue(!a.assignment().isEmpty() && !b.assignment().isEmpty());
        }
    }

    @Test
    void patternSubscription() {
        BROKER.createTopic("pat-one", 1);
        BROKER.createTopic("pat-two", 1);
        produce("pat-one", 0, 3);
        produce("pat-two", 0, 3);
        try (CursusConsumer c = consumer("pat-g")) {
            c.subscribePattern("pat-*");
            List<ConsumerRecord> got = Polling.pollAtLeast(c, 6);
            assertEquals(6, got.size());
        }
    }
}
