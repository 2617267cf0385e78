package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ClosedTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    @Test
    void closedObjectsThrowAndCloseIsIdempotent() {
        BROKER.createTopic("closed", 1);
        CursusAdmin admin = BROKER.admin();
        admin.close();
        admin.close();
        assertTrue(admin.isClosed());
        CursusClosedException e = assertThrows(CursusClosedException.class, admin::listTopics);
        assertEquals("closed", e.code());
        assertEquals(ErrorClass.VALIDATION, e.errorClass());

        CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()));
        producer.close();
        producer.close(Duration.ZERO);
        assertThrows(CursusClosedException.class, () -> producer.send(ProducerRecord.of("closed", "x")));
        assertThrows(CursusClosedException.class, producer::flush);

        CursusConsumer consumer = new CursusConsumer(ConsumerConfig.of(BROKER.addr(), "closed-g"));
        consumer.close();
        consumer.close();
        assertThrows(CursusClosedException.class, () -> consumer.poll(Duration.ofMillis(10)));
        assertThrows(CursusClosedException.class, consumer::commitSync);
        assertThrows(CursusClosedException.class, consumer::commitAsync);
        assertThrows(CursusClosedException.class, () -> consumer.subscribe(List.of("closed")));
    }

    /** Closing while other threads send never crashes: each send succeeds or throws closed. */
    @Test
    void closeRacesWithSenders() throws Exception {
        BROKER.createTopic("race", 2);
        for (int round = 0; round < 5; round++) {
            CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()));
            int threads = 4;
            CountDownLatch started = new CountDownLatch(threads);
            AtomicInteger closedErrors = new AtomicInteger();
            List<Thread> workers = new ArrayList<>();
            List<CompletableFuture<RecordMetadata>> futures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                Thread w = new Thread(() -> {
                    started.countDown();
                    for (int i = 0; i < 2000; i++) {
                        try {
                            futures.add(producer.send(ProducerRecord.of("race", "v" + i)));
                        } catch (CursusClosedException e) {
                            closedErrors.incrementAndGet();
                            return;
                        }
                    }
                });
                w.start();
                workers.add(w);
            }
            started.await();
            producer.close(Duration.ofSeconds(30));
            for (Thread w : workers) {
                w.join();
            }
            // Every queued record's future completes (delivered, or failed as closed).
            for (CompletableFuture<RecordMetadata> f : futures) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    assertTrue(e.getCause() instanceof CursusException, String.valueOf(e.getCause()));
                }
            }
        }
    }

    /** Close waits for a poll in flight on another thread instead of freeing under it. */
    @Test
    void closeDuringPoll() throws Exception {
        BROKER.createTopic("poll-close", 1);
        CursusConsumer consumer = new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr())
                .groupId("poll-close-g").fetchMaxWaitMs(50).build());
        consumer.subscribe(List.of("poll-close"));
        CountDownLatch polling = new CountDownLatch(1);
        AtomicInteger outcomes = new AtomicInteger();
        Thread poller = new Thread(() -> {
            polling.countDown();
            for (int i = 0; i < 50; i++) {
                try {
                    consumer.poll(Duration.ofMillis(100));
                } catch (CursusException e) {
                    outcomes.incrementAndGet();
                    return;
                }
            }
        });
        poller.start();
        polling.await();
        consumer.close();
        poller.join();
        assertThrows(CursusClosedException.class, () -> consumer.poll(Duration.ZERO));
    }

    /** Objects that are never closed are freed by the cleaner without crashing. */
    @Test
    void unclosedObjectsAreCleaned() throws Exception {
        java.lang.ref.ReferenceQueue<Object> queue = new java.lang.ref.ReferenceQueue<>();
        List<java.lang.ref.PhantomReference<Object>> refs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CursusAdmin admin = new CursusAdmin(ClientConfig.of(BROKER.addr()));
            admin.listTopics();
            refs.add(new java.lang.ref.PhantomReference<>(admin, queue));
        }
        int collected = 0;
        for (int i = 0; i < 100 && collected < refs.size(); i++) {
            System.gc();
            while (queue.remove(50) != null) {
                collected++;
            }
        }
        assertEquals(refs.size(), collected);
        try (CursusAdmin admin = BROKER.admin()) {
            assertTrue(admin.listTopics().contains("poll-close") || !admin.help().isEmpty());
        }
    }
}
