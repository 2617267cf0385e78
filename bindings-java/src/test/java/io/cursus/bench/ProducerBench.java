package io.cursus.bench;

import io.cursus.ConsumerConfig;
import io.cursus.CursusAdmin;
import io.cursus.CursusConsumer;
import io.cursus.CursusProducer;
import io.cursus.ClientConfig;
import io.cursus.NewTopic;
import io.cursus.ProducerConfig;
import io.cursus.ProducerRecord;
import io.cursus.RecordMetadata;
import io.cursus.TestBroker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records per second from Java against a local broker: {@code N} records of {@code SIZE}
 * bytes through one producer (futures), then read back by one group consumer.
 * Arguments: {@code [records] [size]}.
 */
public final class ProducerBench {
    private ProducerBench() {}

    /** Entry point. */
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        byte[] payload = new byte[size];
        try (TestBroker broker = TestBroker.start()) {
            try (CursusAdmin admin = new CursusAdmin(ClientConfig.of(broker.addr))) {
                admin.createTopic(NewTopic.named("bench").partitions(4));
            }
            AtomicLong acked = new AtomicLong();
            long start = System.nanoTime();
            try (CursusProducer producer = new CursusProducer(ProducerConfig.builder()
                    .bootstrapServers(broker.addr).lingerMs(5).batchSize(256 * 1024).build())) {
                CompletableFuture<RecordMetadata> last = null;
                for (int i = 0; i < n; i++) {
                    last = producer.send(ProducerRecord.of("bench", payload));
                    last.thenRun(acked::incrementAndGet);
                }
                producer.flush();
                last.join();
            }
            double produceSecs = (System.nanoTime() - start) / 1e9;
            start = System.nanoTime();
            long read = 0;
            try (CursusConsumer consumer = new CursusConsumer(ConsumerConfig.builder()
                    .bootstrapServers(broker.addr).groupId("bench").maxPollRecords(5000)
                    .fetchMaxRecords(5000).build())) {
                consumer.subscribe(List.of("bench"));
                for (int i = 0; i < 100_000 && read < n; i++) {
                    read += consumer.poll(Duration.ofMillis(200)).size();
                }
            }
            double consumeSecs = (System.nanoTime() - start) / 1e9;
            System.out.printf("java produce: %d records of %d B in %.2f s = %.0f records/s (%d futures completed)%n",
                    n, size, produceSecs, n / produceSecs, acked.get());
            System.out.printf("java consume: %d records in %.2f s = %.0f records/s%n",
                    read, consumeSecs, read / consumeSecs);
        }
    }
}
