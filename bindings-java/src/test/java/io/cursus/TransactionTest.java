package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Transactions (docs/transactions.md) through the Java API, against a real broker. */
class TransactionTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static final String CALLBACK_THREAD = "cursus-producer-\\d+-callbacks";

    private static CursusProducer txnProducer(String transactionalId) {
        return new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                .transactionalId(transactionalId).lingerMs(1).build());
    }

    private static CursusConsumer consumer(String group, String isolation) {
        return new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr()).groupId(group)
                .isolationLevel(isolation).fetchMaxWaitMs(50).heartbeatIntervalMs(200).build());
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    /** The error a step fails with, thrown when it starts or completing its future. */
    private static CursusException failure(Supplier<? extends CompletableFuture<?>> step) throws Exception {
        CompletableFuture<?> f;
        try {
            f = step.get();
        } catch (CursusException e) {
            return e;
        }
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
        return assertInstanceOf(CursusException.class, e.getCause());
    }

    private static List<String> values(List<ConsumerRecord> records) {
        List<String> out = new ArrayList<>();
        records.forEach(r -> out.add(r.valueAsString()));
        return out;
    }

    /** Sends {@code values} inside the open transaction and waits for their acknowledgements. */
    private static void sendAll(CursusProducer p, String topic, String... values) throws Exception {
        List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
        for (String v : values) {
            sent.add(p.send(ProducerRecord.of(topic, v)));
        }
        for (CompletableFuture<RecordMetadata> f : sent) {
            await(f);
        }
    }

    @Test
    void commitIsVisibleToReadCommitted() throws Exception {
        BROKER.createTopic("txn-commit", 1);
        try (CursusProducer p = txnProducer("txn-commit-id")) {
            await(p.initTransactions());
            await(p.beginTransaction());
            sendAll(p, "txn-commit", "c0", "c1", "c2");
            await(p.commitTransaction());
        }
        try (CursusConsumer c = consumer("txn-commit-g", "read_committed")) {
            c.subscribe(List.of("txn-commit"));
            assertEquals(List.of("c0", "c1", "c2"), values(Polling.pollAtLeast(c, 3)));
        }
    }

    /**
     * An aborted transaction's records are never returned under read_committed: the committed
     * ones after them in the same partition are, so the reader has passed them.
     * read_uncommitted returns both; neither returns control markers.
     */
    @Test
    void abortIsNeverVisible() throws Exception {
        BROKER.createTopic("txn-abort", 1);
        try (CursusProducer p = txnProducer("txn-abort-id")) {
            await(p.initTransactions());
            await(p.beginTransaction());
            sendAll(p, "txn-abort", "a0", "a1", "a2");
            await(p.abortTransaction());
            await(p.beginTransaction());
            sendAll(p, "txn-abort", "b0", "b1");
            await(p.commitTransaction());
        }
        try (CursusConsumer c = consumer("txn-abort-rc", "read_committed")) {
            c.subscribe(List.of("txn-abort"));
            assertEquals(List.of("b0", "b1"), values(Polling.pollAtLeast(c, 2)));
        }
        try (CursusConsumer c = consumer("txn-abort-ru", "read_uncommitted")) {
            c.subscribe(List.of("txn-abort"));
            assertEquals(List.of("a0", "a1", "a2", "b0", "b1"), values(Polling.pollAtLeast(c, 5)));
        }
    }

    /**
     * Records of an open transaction: read_uncommitted returns them; the last stable offset
     * (LIST_OFFSETS latest) stays before them, and read_committed returns them once committed.
     */
    @Test
    void readUncommittedSeesOpenRecords() throws Exception {
        BROKER.createTopic("txn-open", 1);
        try (CursusProducer p = txnProducer("txn-open-id");
                CursusConsumer committed = consumer("txn-open-rc", "read_committed");
                CursusConsumer uncommitted = consumer("txn-open-ru", "read_uncommitted");
                CursusAdmin admin = BROKER.admin()) {
            await(p.initTransactions());
            await(p.beginTransaction());
            sendAll(p, "txn-open", "o0", "o1", "o2");

            uncommitted.subscribe(List.of("txn-open"));
            assertEquals(List.of("o0", "o1", "o2"), values(Polling.pollAtLeast(uncommitted, 3)));
            PartitionOffsets open = admin.listOffsets("txn-open", 0).get(0);
            assertEquals(0, open.latest(), open.toString());
            assertEquals(3, open.highWatermark(), open.toString());
            committed.subscribe(List.of("txn-open"));
            assertEquals(List.of(), committed.poll(Duration.ofMillis(300)));

            await(p.commitTransaction());
            assertEquals(List.of("o0", "o1", "o2"), values(Polling.pollAtLeast(committed, 3)));
            PartitionOffsets done = admin.listOffsets("txn-open", 0).get(0);
            assertTrue(done.latest() > 3, done.toString()); // past the records and the commit marker
        }
    }

    /**
     * Consume-process-produce: the input offsets staged in a transaction become the group's
     * committed offsets with the commit, never with an abort; explicit offsets too.
     */
    @Test
    void consumedOffsetsAreCommittedWithTheTransaction() throws Exception {
        BROKER.createTopic("cpp-in", 1);
        BROKER.createTopic("cpp-out", 1);
        TopicPartition in = new TopicPartition("cpp-in", 0);
        try (CursusProducer plain = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            for (int i = 0; i < 8; i++) {
                plain.send(ProducerRecord.of("cpp-in", "in" + i));
            }
            plain.flush();
        }
        try (CursusProducer p = txnProducer("cpp-id"); CursusConsumer c = consumer("cpp-g", "read_committed")) {
            await(p.initTransactions());
            c.subscribe(List.of("cpp-in"));
            List<ConsumerRecord> batch = Polling.pollAtLeast(c, 8);
            assertEquals(8, batch.size());

            // Committed: the outputs and the input offsets together.
            await(p.beginTransaction());
            for (ConsumerRecord r : batch.subList(0, 5)) {
                p.send(ProducerRecord.of("cpp-out", "out-" + r.valueAsString()));
            }
            await(p.sendOffsetsToTransaction(Map.of(in, 5L), c));
            assertEquals(OptionalLong.empty(), c.committed(in));
            await(p.commitTransaction());
            assertEquals(OptionalLong.of(5), c.committed(in));

            // Aborted: the staged offsets never become the group's.
            await(p.beginTransaction());
            p.send(ProducerRecord.of("cpp-out", "out-aborted"));
            await(p.sendOffsetsToTransaction(c));
            await(p.abortTransaction());
            assertEquals(OptionalLong.of(5), c.committed(in));

            // Everything delivered (8 records) with the consumer's own offsets.
            await(p.beginTransaction());
            for (ConsumerRecord r : batch.subList(5, 8)) {
                p.send(ProducerRecord.of("cpp-out", "out-" + r.valueAsString()));
            }
            await(p.sendOffsetsToTransaction(c));
            assertEquals(OptionalLong.of(5), c.committed(in));
            await(p.commitTransaction());
            assertEquals(OptionalLong.of(8), c.committed(in));
        }
        try (CursusConsumer out = consumer("cpp-out-g", "read_committed")) {
            out.subscribe(List.of("cpp-out"));
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                expected.add("out-in" + i);
            }
            assertEquals(expected, values(Polling.pollAtLeast(out, 8)));
        }
        // A new member of the group resumes after the transactionally committed offsets.
        try (CursusProducer plain = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            plain.sendAndWait(ProducerRecord.of("cpp-in", "in8"));
        }
        try (CursusConsumer again = consumer("cpp-g", "read_committed")) {
            again.subscribe(List.of("cpp-in"));
            List<ConsumerRecord> next = Polling.pollAtLeast(again, 1);
            assertEquals(List.of("in8"), values(next));
            assertEquals(8, next.get(0).offset());
        }
    }

    /**
     * A second producer with the same transactional id fences the first: its open transaction
     * is aborted, and every later call of the first fails with producer_fenced.
     */
    @Test
    void secondProducerFencesTheFirst() throws Exception {
        BROKER.createTopic("txn-zombie", 1);
        try (CursusProducer zombie = txnProducer("zombie-id"); CursusProducer successor = txnProducer("zombie-id")) {
            await(zombie.initTransactions());
            await(zombie.beginTransaction());
            sendAll(zombie, "txn-zombie", "zombie");

            await(successor.initTransactions());

            CursusException commit = failure(zombie::commitTransaction);
            assertInstanceOf(FencingException.class, commit, commit.toString());
            assertEquals("producer_fenced", commit.code());
            assertEquals(ErrorClass.FENCING, commit.errorClass());
            // Fatal: the fenced producer can do nothing more.
            for (Supplier<CompletableFuture<?>> step : List.<Supplier<CompletableFuture<?>>>of(
                    zombie::beginTransaction, zombie::abortTransaction,
                    () -> zombie.send(ProducerRecord.of("txn-zombie", "late")))) {
                CursusException e = failure(step);
                assertInstanceOf(FencingException.class, e, e.toString());
                assertEquals("producer_fenced", e.code());
            }

            await(successor.beginTransaction());
            sendAll(successor, "txn-zombie", "successor");
            await(successor.commitTransaction());
        }
        try (CursusConsumer c = consumer("txn-zombie-g", "read_committed")) {
            c.subscribe(List.of("txn-zombie"));
            assertEquals(List.of("successor"), values(Polling.pollAtLeast(c, 1)));
        }
    }

    @Test
    void beginWithoutInitFails() throws Exception {
        try (CursusProducer p = txnProducer("no-init-id")) {
            CursusException e = failure(p::beginTransaction);
            assertInstanceOf(ValidationException.class, e, e.toString());
            assertEquals("invalid_transaction_state", e.code());
        }
    }

    /** Misuse is reported with invalid_transaction_state, by the engine, before any request. */
    @Test
    void stepsOutOfOrderFail() throws Exception {
        BROKER.createTopic("txn-misuse", 1);
        try (CursusProducer plain = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            CursusException e = failure(plain::initTransactions);
            assertEquals("invalid_transaction_state", e.code(), e.toString());
        }
        try (CursusProducer p = txnProducer("misuse-id")) {
            CursusException outside = failure(() -> p.send(ProducerRecord.of("txn-misuse", "x")));
            assertEquals("invalid_transaction_state", outside.code(), outside.toString());
            await(p.initTransactions());
            for (Supplier<CompletableFuture<?>> step : List.<Supplier<CompletableFuture<?>>>of(
                    p::commitTransaction, () -> p.send(ProducerRecord.of("txn-misuse", "x")))) {
                CursusException e = failure(step);
                assertEquals("invalid_transaction_state", e.code(), e.toString());
            }
        }
    }

    /** Explicit offsets need an offset per entry, and a consumer that joined its group. */
    @Test
    void sendOffsetsChecksItsArguments() throws Exception {
        BROKER.createTopic("txn-args", 1);
        TopicPartition tp = new TopicPartition("txn-args", 0);
        try (CursusProducer p = txnProducer("args-id"); CursusConsumer c = consumer("txn-args-g", "read_committed")) {
            await(p.initTransactions());
            await(p.beginTransaction());
            CursusException notJoined = failure(() -> p.sendOffsetsToTransaction(Map.of(tp, 1L), c));
            assertInstanceOf(ValidationException.class, notJoined, notJoined.toString());
            c.subscribe(List.of("txn-args"));
            c.poll(Duration.ofMillis(100));
            CursusException negative = failure(() -> p.sendOffsetsToTransaction(Map.of(tp, -3L), c));
            assertInstanceOf(ValidationException.class, negative, negative.toString());
            java.util.HashMap<TopicPartition, Long> withNull = new java.util.HashMap<>();
            withNull.put(tp, null);
            assertThrows(NullPointerException.class, () -> p.sendOffsetsToTransaction(withNull, c));
            await(p.abortTransaction());
        }
    }

    /** Closed objects fail before reaching the library; a close during a step ends its future. */
    @Test
    void closedProducerOrConsumer() throws Exception {
        BROKER.createTopic("txn-closed", 1);
        CursusProducer p = txnProducer("closed-id");
        CursusConsumer c = consumer("txn-closed-g", "read_committed");
        await(p.initTransactions());
        await(p.beginTransaction());
        c.close();
        CursusException e = failure(() -> p.sendOffsetsToTransaction(c));
        assertInstanceOf(CursusClosedException.class, e, e.toString());
        e = failure(() -> p.sendOffsetsToTransaction(Map.of(new TopicPartition("txn-closed", 0), 0L), c));
        assertInstanceOf(CursusClosedException.class, e, e.toString());

        p.send(ProducerRecord.of("txn-closed", "pending"));
        CompletableFuture<Void> commit = p.commitTransaction();
        p.close();
        // Committed or failed, but completed: never left pending by the close.
        try {
            commit.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException done) {
            assertInstanceOf(CursusException.class, done.getCause());
        } catch (TimeoutException hung) {
            fail("the commit's future never completed after close");
        }
        for (Supplier<CompletableFuture<?>> step : List.<Supplier<CompletableFuture<?>>>of(
                p::initTransactions, p::beginTransaction, p::commitTransaction, p::abortTransaction)) {
            assertThrows(CursusClosedException.class, step::get);
        }
    }

    /**
     * Futures of transaction steps, succeeded or failed, complete on the producer's callback
     * thread. The thread is held busy while each step is started, so the continuation is
     * attached before the future can complete (never run inline by the caller).
     */
    @Test
    void futuresCompleteOnTheCallbackThread() throws Exception {
        try (CursusProducer p = txnProducer("thread-id")) {
            List<Supplier<CompletableFuture<?>>> steps = List.of(p::beginTransaction, p::initTransactions,
                    p::commitTransaction);
            for (Supplier<CompletableFuture<?>> step : steps) {
                CountDownLatch release = new CountDownLatch(1);
                holdCallbackThread(p, release);
                AtomicReference<String> thread = new AtomicReference<>();
                CompletableFuture<?> observed = step.get().handle((v, err) -> {
                    thread.set(Thread.currentThread().getName());
                    return null;
                });
                release.countDown();
                await(observed);
                assertTrue(thread.get().matches(CALLBACK_THREAD), thread.get());
            }
        }
    }

    /**
     * Makes {@code p}'s callback thread wait for {@code release}: a continuation of a step
     * that fails at once (abort without a transaction) blocks it; returns once it does.
     */
    private static void holdCallbackThread(CursusProducer p, CountDownLatch release) throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        Thread caller = Thread.currentThread();
        while (held.getCount() > 0) {
            CompletableFuture<?> f = p.abortTransaction().handle((v, err) -> {
                if (Thread.currentThread() != caller) {
                    held.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return null;
            });
            // Ran inline (already completed when attached): try again.
            if (!f.isDone()) {
                held.await(60, TimeUnit.SECONDS);
                assertFalse(held.getCount() > 0, "the callback thread never ran the continuation");
            }
        }
    }

    @Test
    void typedConfigSetters() {
        ProducerConfig pc = ProducerConfig.builder().transactionalId("orders-tx").build();
        assertEquals("orders-tx", pc.values().get("transactional_id"));
        ValidationException acks = assertThrows(ValidationException.class,
                () -> ProducerConfig.builder().transactionalId("x").acks("1").build());
        assertTrue(acks.getMessage().contains("transactional_id"), acks.getMessage());
        assertThrows(ValidationException.class, () -> ProducerConfig.builder().transactionalId("has space").build());

        assertEquals("read_committed", ConsumerConfig.builder().groupId("g").build().get("isolation_level"));
        ConsumerConfig cc = ConsumerConfig.builder().groupId("g").isolationLevel("read_uncommitted").build();
        assertEquals("read_uncommitted", cc.get("isolation_level"));
        ValidationException level = assertThrows(ValidationException.class,
                () -> ConsumerConfig.builder().groupId("g").isolationLevel("dirty").build());
        assertTrue(level.getMessage().contains("isolation_level"), level.getMessage());
    }
}
