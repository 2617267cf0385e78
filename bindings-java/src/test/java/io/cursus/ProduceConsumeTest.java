package io.cursus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ProduceConsumeTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static ConsumerConfig consumerConfig(String group) {
        return ConsumerConfig.builder().bootstrapServers(BROKER.addr()).groupId(group).fetchMaxWaitMs(50).build();
    }

    @Test
    void binaryRecordsRoundTrip() throws Exception {
        BROKER.createTopic("binary", 2);
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i;
        }
        List<byte[]> values = List.of(all, new byte[0], "héllo ✓".getBytes(StandardCharsets.UTF_8), new byte[100_000]);
        try (CursusProducer producer = new CursusProducer(ProducerConfig.builder()
                .bootstrapServers(BROKER.addr()).compression("lz4").build())) {
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < values.size(); i++) {
                futures.add(producer.send(ProducerRecord.of("binary", values.get(i))
                        .withKey(("k" + i).getBytes(StandardCharsets.UTF_8)).withPartition(1).withTimestamp(1000 + i)));
            }
            for (int i = 0; i < futures.size(); i++) {
                RecordMetadata md = futures.get(i).get(30, TimeUnit.SECONDS);
                assertEquals("binary", md.topic());
                assertEquals(1, md.partition());
                assertEquals(i, md.offset());
                assertEquals(1000 + i, md.timestamp());
            }
        }
        try (CursusConsumer consumer = new CursusConsumer(consumerConfig("binary-g"))) {
            consumer.subscribe(List.of("binary"));
            List<ConsumerRecord> got = Polling.pollAtLeast(consumer, values.size());
            assertEquals(values.size(), got.size());
            for (int i = 0; i < values.size(); i++) {
                ConsumerRecord r = got.get(i);
                assertEquals("binary", r.topic());
                assertEquals(1, r.partition());
                assertEquals(i, r.offset());
                assertEquals("k" + i, r.keyAsString());
                assertArrayEquals(values.get(i), r.value());
                assertTrue(r.timestamp() > 0);
            }
        }
    }

    @Test
    void keysPickStablePartitionsAndFlushDelivers() throws Exception {
        BROKER.createTopic("keyed", 4);
        Map<String, Integer> partitionOfKey = new HashMap<>();
        try (CursusProducer producer = new CursusProducer(ProducerConfig.builder()
                .bootstrapServers(BROKER.addr()).lingerMs(60_000).build())) {
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                futures.add(producer.send(ProducerRecord.of("keyed", "key-" + (i % 5), "v" + i)));
            }
            // The linger is long: only flush sends them.
            producer.flush(Duration.ofSeconds(30));
            for (int i = 0; i < 100; i++) {
                RecordMetadata md = futures.get(i).get(30, TimeUnit.SECONDS);
                Integer previous = partitionOfKey.putIfAbsent("key-" + (i % 5), md.partition());
                if (previous != null) {
                    assertEquals(previous, md.partition());
                }
            }
        }
        try (CursusAdmin admin = BROKER.admin()) {
            long total = admin.listOffsets("keyed").stream().mapToLong(PartitionOffsets::logEndOffset).sum();
            assertEquals(100, total);
        }
    }

    @Test
    void acksZeroHasNoOffset() throws Exception {
        BROKER.createTopic("acks0", 1);
        try (CursusProducer producer = new CursusProducer(ProducerConfig.builder()
                .bootstrapServers(BROKER.addr()).acks("0").build())) {
            RecordMetadata md = producer.send(ProducerRecord.of("acks0", "x")).get(30, TimeUnit.SECONDS);
            assertFalse(md.hasOffset());
        }
    }

    /**
     * A poll decodes into the array the previous poll used: records already returned keep
     * their own bytes, polls of growing size and records of several topics in one poll decode
     * as sent.
     */
    @Test
    void recordsOfEarlierPollsStayIntactAcrossPolls() throws Exception {
        BROKER.createTopic("reuse-a", 1);
        BROKER.createTopic("reuse-b", 1);
        int n = 3000;
        try (CursusProducer producer = new CursusProducer(ProducerConfig.builder()
                .bootstrapServers(BROKER.addr()).build())) {
            for (int i = 0; i < n; i++) {
                // Values grow, so later polls need a larger buffer than earlier ones.
                String topic = i % 2 == 0 ? "reuse-a" : "reuse-b";
                ProducerRecord r = ProducerRecord.of(topic, topic + ":" + i + ":" + "x".repeat(i / 10));
                producer.send(i % 7 == 0 ? r : r.withKey(("k" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush(Duration.ofSeconds(30));
        }
        List<ConsumerRecord> all = new ArrayList<>();
        try (CursusConsumer consumer = new CursusConsumer(consumerConfig("reuse-g"))) {
            consumer.subscribe(List.of("reuse-a", "reuse-b"));
            int maxRecords = 1;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (all.size() < n && System.nanoTime() < deadline) {
                all.addAll(consumer.poll(Duration.ofMillis(200), maxRecords));
                maxRecords = Math.min(maxRecords * 2, 1000);
            }
        }
        assertEquals(n, all.size());
        Map<String, Long> nextOffset = new HashMap<>();
        for (ConsumerRecord r : all) {
            String[] parts = r.valueAsString().split(":");
            int i = Integer.parseInt(parts[1]);
            assertEquals(r.topic(), parts[0]);
            assertEquals(i % 2 == 0 ? "reuse-a" : "reuse-b", r.topic());
            assertEquals("x".repeat(i / 10), parts.length > 2 ? parts[2] : "");
            assertEquals(i % 7 == 0 ? null : "k" + i, r.keyAsString());
            long expected = nextOffset.getOrDefault(r.topic(), 0L);
            assertEquals(expected, r.offset());
            nextOffset.put(r.topic(), expected + 1);
        }
    }
}
