package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Where SDKs break: continuations, blocked calls interrupted, what counts as delivered. */
class EdgesTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static CursusProducer producer() {
        return new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr()).lingerMs(1).build());
    }

    private static CursusConsumer consumer(String group, boolean autoCommit) {
        return new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr()).groupId(group)
                .fetchMaxWaitMs(50).enableAutoCommit(autoCommit).autoCommitIntervalMs(60_000).build());
    }

    /** A continuation may send, wait for that send and flush, on this producer's own thread. */
    @Test
    void continuationMaySendWaitAndFlush() throws Exception {
        BROKER.createTopic("edge-reentry", 1);
        try (CursusProducer producer = producer()) {
            AtomicReference<String> thread = new AtomicReference<>();
            CompletableFuture<RecordMetadata> inner = producer.send(ProducerRecord.of("edge-reentry", "first"))
                    .thenApply(md -> {
                        thread.set(Thread.currentThread().getName());
                        RecordMetadata second = producer.sendAndWait(ProducerRecord.of("edge-reentry", "second"));
                        producer.flush();
                        return second;
                    });
            RecordMetadata second = inner.get(30, TimeUnit.SECONDS);
            assertEquals(1, second.offset());
            assertTrue(thread.get().matches("cursus-producer-\\d+-callbacks"), thread.get());
        }
    }

    /** A continuation blocked on one producer does not stall another producer's futures. */
    @Test
    void blockedContinuationStallsOnlyItsProducer() throws Exception {
        BROKER.createTopic("edge-blocked", 1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocked = new CountDownLatch(1);
        try (CursusProducer a = producer(); CursusProducer b = producer()) {
            CompletableFuture<Void> held = a.send(ProducerRecord.of("edge-blocked", "a")).thenAccept(md -> {
                blocked.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(blocked.await(30, TimeUnit.SECONDS));
            RecordMetadata md = b.send(ProducerRecord.of("edge-blocked", "b")).get(30, TimeUnit.SECONDS);
            assertEquals(1, md.offset());
            assertFalse(held.isDone());
            release.countDown();
            held.get(30, TimeUnit.SECONDS);
        }
    }

    /** close() from another thread makes a poll without a time limit throw closed at once. */
    @Test
    void closeInterruptsABlockedPoll() throws Exception {
        BROKER.createTopic("edge-close", 1);
        CursusConsumer consumer = consumer("edge-close-g", false);
        consumer.subscribe(List.of("edge-close"));
        consumer.poll(Duration.ofMillis(200));
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        CountDownLatch polling = new CountDownLatch(1);
        Thread poller = new Thread(() -> {
            polling.countDown();
            try {
                consumer.poll(Timeouts.NO_LIMIT);
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        poller.start();
        polling.await();
        Thread.sleep(100); // let the poll block (if it has not yet, it fails as closed anyway)
        consumer.close();
        poller.join(10_000);
        assertFalse(poller.isAlive(), "poll still blocked after close");
        assertInstanceOf(CursusClosedException.class, outcome.get());
    }

    /** wakeup() from another thread makes a poll without a time limit return empty. */
    @Test
    void wakeupEndsABlockedPoll() throws Exception {
        BROKER.createTopic("edge-wakeup", 1);
        try (CursusConsumer consumer = consumer("edge-wakeup-g", false)) {
            consumer.subscribe(List.of("edge-wakeup"));
            consumer.poll(Duration.ofMillis(200));
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread poller = new Thread(() -> {
                try {
                    outcome.set(consumer.poll(Timeouts.NO_LIMIT));
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            poller.start();
            consumer.wakeup();
            poller.join(10_000);
            assertFalse(poller.isAlive(), "poll still blocked after wakeup");
            assertEquals(List.of(), outcome.get());
        }
    }

    /** Only records a poll returned are committed: taking 3 of 10 then closing commits 3. */
    @Test
    void closeCommitsExactlyWhatWasReturned() throws Exception {
        BROKER.createTopic("edge-accounting", 1);
        try (CursusProducer producer = producer()) {
            for (int i = 0; i < 10; i++) {
                producer.send(ProducerRecord.of("edge-accounting", "v" + i));
            }
            producer.flush();
        }
        List<ConsumerRecord> taken = new ArrayList<>();
        try (CursusConsumer consumer = consumer("edge-accounting-g", true)) {
            consumer.subscribe(List.of("edge-accounting"));
            for (int i = 0; i < 100 && taken.size() < 3; i++) {
                taken.addAll(consumer.poll(Duration.ofMillis(100), 3 - taken.size()));
            }
        }
        assertEquals(3, taken.size());
        assertEquals(2, taken.get(2).offset());
        try (CursusConsumer again = consumer("edge-accounting-g", false)) {
            OptionalLong committed = again.committed(new TopicPartition("edge-accounting", 0));
            assertEquals(OptionalLong.of(3), committed);
        }
    }

    @Test
    void badArgumentsAreTypedErrors() {
        try (CursusConsumer consumer = consumer("edge-args-g", false)) {
            assertThrows(IllegalArgumentException.class, () -> consumer.poll(Duration.ofMillis(-1)));
            assertThrows(IllegalArgumentException.class, () -> consumer.poll(Duration.ZERO, 0));
            assertThrows(NullPointerException.class, () -> consumer.poll(null));
        }
        assertEquals(-1, Timeouts.toMillis(Timeouts.NO_LIMIT, "t"));
        assertEquals(-1, Timeouts.toMillis(Duration.ofMillis(Long.MAX_VALUE), "t"));
        assertEquals(30_000, Timeouts.toMillis(Timeouts.DEFAULT, "t")); // read from the library
        try (CursusProducer producer = producer()) {
            ValidationException e = assertThrows(ValidationException.class,
                    () -> producer.send(ProducerRecord.of("bad topic", "x")));
            assertEquals("invalid_argument", e.kind());
            assertThrows(IllegalArgumentException.class, () -> producer.flush(Duration.ofSeconds(-1)));
            producer.flush(); // passes the library's marker for its default, which it accepts
        }
    }
}
