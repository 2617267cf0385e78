package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The CompletableFuture variants of the event store, the aggregate, replay proofs and
 * {@code appendStream}: results and errors arrive through the futures, which complete on the
 * client's callback thread, not on the thread that ran the call.
 */
class EventStoreFuturesTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static void createTopic(String name, boolean replay) {
        try (CursusAdmin admin = BROKER.admin()) {
            admin.createTopic(NewTopic.named(name).partitions(1).eventSourcing(true).idempotent(replay)
                    .aggregateReplay(replay));
        }
    }

    private static CursusEventStore store() {
        return new CursusEventStore(ClientConfig.of(BROKER.addr()));
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    /** The CursusException {@code f} fails with, checked to have {@code code}. */
    private static CursusException failure(String code, CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
        CursusException cause = assertInstanceOf(CursusException.class, e.getCause());
        assertEquals(code, cause.code(), cause.getMessage());
        return cause;
    }

    @Test
    void storeCallsCompleteTheirFutures() throws Exception {
        createTopic("esf-store", false);
        try (CursusEventStore s = store()) {
            Appended first = await(s.appendAsync("esf-store", "a", 0, Event.of("Opened", "one")));
            assertEquals(1, first.version());
            assertEquals(2, await(s.appendAsync("esf-store", "a", 1, Event.of("Paid", "two"))).version());
            CursusException conflict = failure("version_conflict",
                    s.appendAsync("esf-store", "a", 0, Event.of("Late", "late")));
            assertInstanceOf(ConflictException.class, conflict);
            assertEquals("2", conflict.field("current"));

            assertEquals(2L, await(s.streamVersionAsync("esf-store", "a")));
            StreamRead read = await(s.readStreamAsync("esf-store", "a", 1));
            assertEquals(List.of(first.offset(), 2L), List.of(read.events().get(0).offset(), read.lastVersion()));
            assertEquals(Optional.empty(), await(s.readSnapshotAsync("esf-store", "a")));
            assertEquals(null, await(s.saveSnapshotAsync("esf-store", "a", 2, "state-2")));
            assertEquals(Optional.of(new Snapshot(2, "state-2")), await(s.readSnapshotAsync("esf-store", "a")));
            failure("invalid_argument", s.readStreamAsync("esf-store", "two words", 1));
        }
    }

    /** The ids of the live threads. */
    private static List<Long> liveThreadIds() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getId).collect(Collectors.toList());
    }

    /**
     * Appends in flight do not hold a thread each: a burst of them, all started before any is
     * awaited, leaves at most the store's two callback threads (the native one and the one
     * completing the futures) behind, where a thread per call would leave one per append.
     */
    @Test
    void concurrentAppendsDoNotStartAThreadEach() throws Exception {
        createTopic("esf-burst", false);
        int appends = 64;
        try (CursusEventStore s = store()) {
            List<Long> before = liveThreadIds();
            List<CompletableFuture<Appended>> inFlight = new ArrayList<>();
            for (int i = 0; i < appends; i++) {
                inFlight.add(s.appendAsync("esf-burst", "k" + i, 0, Event.of("Opened", "x")));
            }
            for (CompletableFuture<Appended> f : inFlight) {
                assertEquals(1, await(f).version());
            }
            List<String> started = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> !before.contains(t.getId())).map(Thread::getName).collect(Collectors.toList());
            assertTrue(started.size() <= 2, "threads started by " + appends + " appends: " + started);
            assertTrue(started.stream().noneMatch(n -> n.contains("-calls")), started.toString());
        }
    }

    /** An argument the blocking call refuses fails the future instead of throwing. */
    @Test
    void argumentErrorsAndAClosedStoreFailTheFuture() throws Exception {
        CursusEventStore s = store();
        ExecutionException nullTopic = assertThrows(ExecutionException.class,
                () -> await(s.appendAsync(null, "a", 0, Event.of("T", "x"))));
        assertInstanceOf(NullPointerException.class, nullTopic.getCause());
        s.close();
        assertInstanceOf(CursusClosedException.class, failure("closed", s.streamVersionAsync("esf-closed", "a")));
    }

    /**
     * The aggregate's events are folded on the store's callback thread; a continuation
     * registered while they are runs there too.
     */
    @Test
    void continuationsRunOnTheCallbackThread() throws Exception {
        createTopic("esf-threads", false);
        try (CursusEventStore s = store()) {
            s.append("esf-threads", "a", 0, Event.of("Opened", "one"));
            CountDownLatch registered = new CountDownLatch(1);
            AtomicReference<String> callThread = new AtomicReference<>();
            CompletableFuture<Aggregate<Integer>> loading = s.loadAggregateAsync("esf-threads", "a", 0, (n, e) -> {
                callThread.set(Thread.currentThread().getName());
                try {
                    // Still running once the continuation below is registered.
                    assertTrue(registered.await(60, TimeUnit.SECONDS));
                } catch (InterruptedException interrupted) {
                    throw new IllegalStateException(interrupted);
                }
                return n + 1;
            }, Integer::valueOf, String::valueOf, 0);
            CompletableFuture<String> continuation = loading.thenApply(a -> Thread.currentThread().getName());
            registered.countDown();
            assertTrue(await(continuation).matches("cursus-event-store-\\d+-callbacks"), continuation.get());
            assertTrue(callThread.get().matches("cursus-event-store-\\d+-callbacks"), callThread.get());
            assertEquals(1, await(loading).state());
        }
    }

    /** The aggregate's append through a future keeps the caller's event id and the real offset. */
    @Test
    void aggregateFutures() throws Exception {
        createTopic("esf-aggregate", true);
        try (CursusEventStore s = store()) {
            s.append("esf-aggregate", "other", 0, Event.of("T", "first").withEventId("o-1"));
            Aggregate<Integer> agg = await(s.loadAggregateAsync("esf-aggregate", "k", 0, (n, e) -> n + 1,
                    Integer::valueOf, String::valueOf, 0));
            StoredEvent stored = await(agg.appendAsync(Event.of("Opened", "x").withEventId("k-1")));
            assertEquals(List.of(1L, 1L), List.of(stored.version(), stored.offset()));
            assertEquals(1, agg.state());
            failure("invalid_argument", agg.appendAsync(Event.of("Opened", "y").withEventId("two words")));
            assertEquals(1, agg.version());
            assertEquals(null, await(agg.saveSnapshotAsync()));
            assertEquals(Optional.of(new Snapshot(1, "1")), s.readSnapshot("esf-aggregate", "k"));

            Aggregate<Integer> stale = s.loadAggregate("esf-aggregate", "k", 0, (n, e) -> n + 1, Integer::valueOf,
                    String::valueOf, 0);
            agg.append(Event.of("Opened", "z").withEventId("k-2"));
            // On a replay topic a taken sequence is the broker's identity conflict.
            assertInstanceOf(ConflictException.class, failure("aggregate_identity_conflict",
                    stale.appendAsync(Event.of("Opened", "late").withEventId("k-late"))));
            assertEquals(1, stale.state());

            ReplayProof proof = await(s.replayProofAsync("esf-aggregate", "k", 2));
            assertEquals(List.of("k-2", 2L), List.of(proof.lastEventId(), proof.latestRetainedSequence()));
        }
    }

    /** Complete proofs and range reads through futures; a failed proof is read from the cause. */
    @Test
    void proofFutures() throws Exception {
        createTopic("esf-proof", true);
        try (CursusEventStore s = store()) {
            for (int i = 1; i <= 3; i++) {
                s.append("esf-proof", "m", i - 1, Event.of("Scored", "goal-" + i).withEventId("m-" + i));
            }
            ReplayProof proof = await(s.replayProofAsync("esf-proof", "m"));
            assertTrue(proof.isComplete(), proof.toString());
            assertEquals(3, proof.eventCount());
            assertEquals(proof, await(s.replayProofAsync("esf-proof", "m", 3)));

            ReplayProof unavailable = ReplayProof.fromException(
                    failure("aggregate_proof_proof_unavailable", s.replayProofAsync("esf-proof", "m", 9))).orElseThrow();
            assertFalse(unavailable.isComplete());
            assertEquals(3, unavailable.latestRetainedSequence());
            ReplayProof notFound = ReplayProof.fromException(
                    failure("aggregate_proof_not_found", s.replayProofAsync("esf-proof", "nobody"))).orElseThrow();
            assertEquals("not_found", notFound.status());
            failure("invalid_argument", s.replayProofAsync("esf-proof", "m", 0));

            EventRange range = await(s.eventRangeAsync("esf-proof", "m", 2, 3, 0));
            assertEquals(List.of("goal-2", "goal-3"),
                    List.of(range.events().get(0).payload(), range.events().get(1).payload()));
            failure("aggregate_range_incomplete", s.eventRangeAsync("esf-proof", "m", 2, 7, 0));
        }
    }

    /** appendStreamAsync in a transaction; without one the future fails. */
    @Test
    void appendStreamFuture() throws Exception {
        createTopic("esf-txn", false);
        try (CursusEventStore s = store();
                CursusProducer tp = new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                        .transactionalId("esf-txn").lingerMs(1).build())) {
            await(tp.initTransactions());
            failure("invalid_transaction_state", tp.appendStreamAsync("esf-txn", "acct", 0, Event.of("Opened", "x")));
            Appended a = await(tp.beginTransaction()
                    .thenCompose(v -> tp.appendStreamAsync("esf-txn", "acct", 0, Event.of("Opened", "open"))));
            assertEquals(1, a.version());
            assertEquals(0, s.streamVersion("esf-txn", "acct"));
            await(tp.commitTransaction());
            StreamRead read = s.readStream("esf-txn", "acct");
            assertEquals(List.of(a.offset()), List.of(read.events().get(0).offset()));
        }
    }
}
