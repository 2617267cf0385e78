package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ConcurrencyTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    @Test
    void oneProducerSharedByManyThreads() throws Exception {
        BROKER.createTopic("shared-producer", 3);
        int threads = 8;
        int perThread = 1000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            List<Future<List<CompletableFuture<RecordMetadata>>>> work = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                work.add(pool.submit(() -> {
                    List<CompletableFuture<RecordMetadata>> mine = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        mine.add(producer.send(ProducerRecord.of("shared-producer", "t" + id, "t" + id + "-" + i)));
                    }
                    return mine;
                }));
            }
            Set<Long> positions = new HashSet<>();
            for (Future<List<CompletableFuture<RecordMetadata>>> f : work) {
                for (CompletableFuture<RecordMetadata> md : f.get(60, TimeUnit.SECONDS)) {
                    RecordMetadata m = md.get(60, TimeUnit.SECONDS);
                    positions.add(((long) m.partition() << 40) | m.offset());
                }
            }
            // Every record got its own position.
            assertEquals(threads * perThread, positions.size());
        } finally {
            pool.shutdownNow();
        }
        try (CursusAdmin admin = BROKER.admin()) {
            long total = admin.listOffsets("shared-producer").stream().mapToLong(PartitionOffsets::logEndOffset).sum();
            assertEquals(threads * perThread, total);
        }
    }

    @Test
    void manyProducersInParallel() throws Exception {
        BROKER.createTopic("many-producers", 2);
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> work = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                work.add(pool.submit(() -> {
                    try (CursusProducer p = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
                        for (int i = 0; i < 500; i++) {
                            p.send(ProducerRecord.of("many-producers", "x" + i));
                        }
                        p.flush(Duration.ofSeconds(60));
                    }
                    return 500;
                }));
            }
            int sent = 0;
            for (Future<Integer> f : work) {
                sent += f.get(120, TimeUnit.SECONDS);
            }
            try (CursusAdmin admin = BROKER.admin()) {
                long total = admin.listOffsets("many-producers").stream().mapToLong(PartitionOffsets::logEndOffset).sum();
                assertEquals(sent, total);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
