package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

/**
 * Event ids, aggregate replay topics (exact retries, identity conflicts, replay proofs, range
 * reads) and transactional stream appends (docs/aggregate-replay.md) through the Java API,
 * against a real broker.
 */
class AggregateReplayTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static void createReplayTopic(String name, int partitions) {
        try (CursusAdmin admin = BROKER.admin()) {
            TopicInfo info = admin.createTopic(NewTopic.named(name).partitions(partitions).eventSourcing(true)
                    .idempotent(true).aggregateReplay(true));
            assertTrue(info.eventSourcing());
            assertTrue(info.idempotent());
            assertTrue(info.aggregateReplay());
        }
    }

    private static void createEventTopic(String name) {
        try (CursusAdmin admin = BROKER.admin()) {
            admin.createTopic(NewTopic.named(name).partitions(1).eventSourcing(true));
        }
    }

    private static CursusEventStore store() {
        return new CursusEventStore(ClientConfig.of(BROKER.addr()));
    }

    private static CursusProducer txnProducer(String transactionalId) {
        return new CursusProducer(ProducerConfig.builder().bootstrapServers(BROKER.addr())
                .transactionalId(transactionalId).lingerMs(1).build());
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    /** The CursusException {@code call} throws, checked to have {@code code}. */
    private static CursusException fails(String code, Executable call) {
        CursusException e = assertThrows(CursusException.class, call);
        assertEquals(code, e.code(), e.getMessage());
        return e;
    }

    private static List<String> payloads(StreamRead read) {
        List<String> out = new ArrayList<>();
        read.events().forEach(e -> out.add(e.payload()));
        return out;
    }

    private static List<Appended> appendNumbered(CursusEventStore s, String topic, String key, int n) {
        List<Appended> out = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            out.add(s.append(topic, key, i - 1, Event.of("Scored", "goal-" + i).withEventId(key + "-" + i)));
        }
        return out;
    }

    @Test
    void eventIdsAreCheckedAndKept() {
        Event e = Event.of("T", "p").withMetadata("m").withSchemaVersion(3).withEventId("id-1");
        assertEquals(new Event("T", "p", "m", 3, "id-1"), e);
        assertEquals("", Event.of("T", "p").eventId());
        assertEquals("", e.withEventId(null).eventId());
        assertEquals(new Event("T", "p", "m", 3), e.withEventId(""));
        assertEquals("id-1", e.withMetadata("n").withSchemaVersion(1).eventId());
        // The library checks the id at append (one rule for every language).
        assertEquals("a b", Event.of("T", "p").withEventId("a b").eventId());
    }

    @Test
    void exactRetryAnswersTheOriginalOffset() throws Exception {
        createReplayTopic("rp-retry", 2);
        try (CursusEventStore s = store()) {
            Event kickoff = Event.of("Started", "kickoff").withEventId("ev-1");
            Appended first = s.append("rp-retry", "m1", 0, kickoff);
            assertEquals(1, first.version());
            assertEquals(first, s.append("rp-retry", "m1", 0, kickoff));
            Appended second = s.append("rp-retry", "m1", 1,
                    Event.of("Scored", "goal").withMetadata("{\"min\":3}").withEventId("ev-2"));
            assertEquals(2, second.version());
            // Still the original after a later event.
            assertEquals(first, s.append("rp-retry", "m1", 0, kickoff));
            // Without an id of its own the engine generates one.
            Appended third = s.append("rp-retry", "m1", 2, Event.of("Ended", "final"));
            assertEquals(3, third.version());
            assertEquals(3, s.streamVersion("rp-retry", "m1"));
            StreamRead read = s.readStream("rp-retry", "m1");
            assertEquals(List.of("kickoff", "goal", "final"), payloads(read));
            assertEquals("{\"min\":3}", read.events().get(1).metadata());
            ReplayProof proof = s.replayProof("rp-retry", "m1", 3);
            assertEquals("ev-1", proof.firstEventId());
            assertFalse(proof.lastEventId().isEmpty());
            assertEquals(third.offset(), proof.lastOffset());
        }
        try (CursusProducer p = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            CursusException e = fails("aggregate_publish_requires_append_stream",
                    () -> p.sendAndWait(ProducerRecord.of("rp-retry", "plain")));
            assertEquals("rp-retry", e.field("topic"));
        }
    }

    @Test
    void reusedIdentitiesConflict() {
        createReplayTopic("rp-conflict", 2);
        try (CursusEventStore s = store()) {
            s.append("rp-conflict", "m2", 0, Event.of("Started", "kickoff").withEventId("ev-a"));
            // The same version with another payload, or with another id.
            fails("aggregate_identity_conflict", () -> s.append("rp-conflict", "m2", 0,
                    Event.of("Started", "other payload").withEventId("ev-a")));
            fails("aggregate_identity_conflict", () -> s.append("rp-conflict", "m2", 0,
                    Event.of("Started", "kickoff").withEventId("ev-b")));
            // A new version with a used id.
            CursusException e = fails("aggregate_identity_conflict", () -> s.append("rp-conflict", "m2", 1,
                    Event.of("Scored", "goal").withEventId("ev-a")));
            assertEquals("ev-a", e.field("event_id"), e.getMessage());
            assertInstanceOf(ConflictException.class, e);
            assertEquals(1, s.streamVersion("rp-conflict", "m2"));
            s.append("rp-conflict", "m2", 1, Event.of("Scored", "goal").withEventId("ev-c"));
            assertEquals(2, s.streamVersion("rp-conflict", "m2"));
        }
    }

    @Test
    void completeProofAndFailedProofsReadable() {
        createReplayTopic("rp-proof", 2);
        try (CursusEventStore s = store()) {
            List<Appended> a = appendNumbered(s, "rp-proof", "m3", 5);
            ReplayProof p = s.replayProof("rp-proof", "m3");
            assertTrue(p.isComplete(), p.toString());
            assertEquals(ReplayProof.COMPLETE, p.status());
            assertEquals("", p.diagnostic());
            assertEquals("rp-proof", p.topic());
            assertEquals("m3", p.matchId());
            assertEquals(a.get(0).partition(), p.partition());
            assertEquals(5, p.eventCount());
            assertEquals(1, p.earliestRetainedSequence());
            assertEquals(5, p.latestRetainedSequence());
            assertEquals(a.get(0).offset(), p.firstOffset());
            assertEquals(a.get(4).offset(), p.lastOffset());
            assertEquals("m3-1", p.firstEventId());
            assertEquals("m3-5", p.lastEventId());
            assertTrue(p.sequenceComplete());
            assertTrue(p.retentionCompleteFromSequenceOne());
            assertTrue(p.proofHwm() > p.lastOffset(), p.toString());
            assertEquals(p, s.replayProof("rp-proof", "m3", 5));

            CursusException unavailable = fails("aggregate_proof_proof_unavailable",
                    () -> s.replayProof("rp-proof", "m3", 9));
            ReplayProof failed = ReplayProof.fromException(unavailable).orElseThrow();
            assertFalse(failed.isComplete());
            assertEquals("proof_unavailable", failed.status());
            assertFalse(failed.diagnostic().isEmpty(), failed.toString());
            assertEquals("rp-proof", failed.topic());
            assertEquals("m3", failed.matchId());
            assertEquals(5, failed.eventCount());
            assertEquals(5, failed.latestRetainedSequence());
            assertEquals("m3-5", failed.lastEventId());

            CursusException none = fails("aggregate_proof_not_found", () -> s.replayProof("rp-proof", "nobody"));
            ReplayProof notFound = ReplayProof.fromException(none).orElseThrow();
            assertEquals("not_found", notFound.status());
            assertEquals(0, notFound.eventCount());
            assertEquals("nobody", notFound.matchId());

            // Other errors carry no proof.
            CursusException conflict = fails("version_conflict",
                    () -> s.append("rp-proof", "m3", 7, Event.of("Late", "late").withEventId("late-1")));
            assertEquals(Optional.empty(), ReplayProof.fromException(conflict));
            assertEquals("invalid_argument",
                    assertThrows(ValidationException.class, () -> s.replayProof("rp-proof", "m3", 0)).code());
            assertEquals("invalid_argument",
                    assertThrows(ValidationException.class, () -> s.replayProof("rp-proof", "m3", -1)).code());
        }
    }

    @Test
    void rangeReadsUnderACompleteProof() {
        createReplayTopic("rp-range", 2);
        try (CursusEventStore s = store()) {
            List<Appended> a = appendNumbered(s, "rp-range", "m4", 5);
            EventRange r = s.eventRange("rp-range", "m4", 2, 4);
            assertTrue(r.proof().isComplete(), r.proof().toString());
            assertEquals(5, r.proof().eventCount());
            assertEquals("m4", r.proof().matchId());
            assertEquals(3, r.events().size());
            for (int i = 0; i < 3; i++) {
                RangeEvent e = r.events().get(i);
                int v = i + 2;
                assertEquals(v, e.sequence());
                assertEquals(a.get(v - 1).offset(), e.offset());
                assertEquals("m4-" + v, e.eventId());
                assertEquals("Scored", e.eventType());
                assertEquals("goal-" + v, e.payload());
            }
            EventRange capped = s.eventRange("rp-range", "m4", 1, 5, 2);
            assertEquals(List.of(1L, 2L), List.of(capped.events().get(0).sequence(), capped.events().get(1).sequence()));
            assertEquals(5, s.eventRange("rp-range", "m4", 1, 5).events().size());

            fails("aggregate_range_incomplete", () -> s.eventRange("rp-range", "m4", 4, 9));
            CursusException none = assertThrows(CursusException.class, () -> s.eventRange("rp-range", "nobody", 1, 1));
            assertTrue(none.code().startsWith("aggregate_"), none.getMessage());
            assertEquals("not_found", ReplayProof.fromException(none).map(ReplayProof::status).orElse(null),
                    none.getMessage());
            assertThrows(IllegalArgumentException.class, () -> s.eventRange("rp-range", "m4", 1, 2, -1));
        }
    }

    @Test
    void proofOfAFailedExceptionIsParsedLikeTheEngine() {
        String json = "{\"topic\":\"t\",\"partition\":1,\"match_id\":\"m \\\"x\\\" \\u00e9\",\"earliest_retained_sequence\":2,"
                + "\"latest_retained_sequence\":4,\"first_offset\":10,\"last_offset\":13,\"event_count\":2,"
                + "\"first_event_id\":\"a\",\"last_event_id\":\"b\",\"sequence_complete\":false,"
                + "\"retention_complete_from_sequence_one\":false,\"proof_hwm\":20,\"status\":\"sequence_gap\","
                + "\"diagnostic\":\"gap after 2\",\"future\":[1,{\"x\":null}]}";
        CursusException e = CursusException.of("broker", "aggregate_proof_sequence_gap", ErrorClass.CONFLICT, false,
                "", Map.of("proof", json));
        assertEquals(Optional.of(new ReplayProof("t", "m \"x\" é", 1, "sequence_gap", "gap after 2", 2, 2, 4, 10, 13,
                "a", "b", false, false, 20)), ReplayProof.fromException(e));
        // Omitted fields are zero or empty.
        CursusException sparse = CursusException.of("broker", "aggregate_proof_not_found", ErrorClass.NOT_FOUND,
                false, "", Map.of("proof", "{\"status\":\"not_found\"}"));
        assertEquals(Optional.of(new ReplayProof("", "", 0, "not_found", "", 0, 0, 0, 0, 0, "", "", false, false, 0)),
                ReplayProof.fromException(sparse));
        CursusException broken = CursusException.of("broker", "aggregate_proof_not_found", ErrorClass.NOT_FOUND,
                false, "", Map.of("proof", "{\"status\":"));
        assertEquals(Optional.empty(), ReplayProof.fromException(broken));
    }

    @Test
    void aggregateAppendCarriesTheEventId() {
        createReplayTopic("rp-aggregate", 1);
        try (CursusEventStore s = store()) {
            Aggregate<Long> agg = s.loadAggregate("rp-aggregate", "k", 0L, (n, e) -> n + 1, Long::valueOf,
                    String::valueOf, 0);
            assertThrows(ValidationException.class, () -> agg.append(Event.of("T", "p").withEventId("a\tb")));
            assertEquals(0, s.streamVersion("rp-aggregate", "k"));
            StoredEvent stored = agg.append(Event.of("T", "p").withEventId("x"));
            assertEquals(1, stored.version());
            ReplayProof proof = s.replayProof("rp-aggregate", "k", 1);
            assertEquals(List.of("x", stored.offset()), List.of(proof.lastEventId(), proof.lastOffset()));
        }
    }

    /**
     * An event appended in a transaction becomes the next version at the commit, with the
     * transaction's record and the consumer's offsets; before it nothing is visible and the
     * aggregate is reserved.
     */
    @Test
    void transactionalAppendCommitsWithRecordsAndOffsets() throws Exception {
        createEventTopic("tas-ledger");
        BROKER.createTopic("tas-in", 1);
        BROKER.createTopic("tas-out", 1);
        TopicPartition in = new TopicPartition("tas-in", 0);
        try (CursusProducer plain = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            for (int i = 0; i < 3; i++) {
                plain.send(ProducerRecord.of("tas-in", "cmd-" + i));
            }
            plain.flush();
        }
        try (CursusEventStore s = store();
                CursusProducer tp = txnProducer("tas-commit");
                CursusConsumer c = new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr())
                        .groupId("tas-g").fetchMaxWaitMs(50).heartbeatIntervalMs(200).build())) {
            c.subscribe(List.of("tas-in"));
            assertEquals(3, Polling.pollAtLeast(c, 3).size());
            s.append("tas-ledger", "acct", 0, Event.of("Opened", "open"));

            await(tp.initTransactions());
            await(tp.beginTransaction());
            Appended a = tp.appendStream("tas-ledger", "acct", 1, Event.of("Credited", "credit 3"));
            assertEquals(2, a.version());
            await(tp.send(ProducerRecord.of("tas-out", "receipt")));
            await(tp.sendOffsetsToTransaction(c));

            assertEquals(1, s.streamVersion("tas-ledger", "acct"));
            assertEquals(List.of("open"), payloads(s.readStream("tas-ledger", "acct")));
            CursusException reserved = fails("stream_version_reserved",
                    () -> s.append("tas-ledger", "acct", 1, Event.of("Debited", "race")));
            assertEquals("tas-commit", reserved.field("transactional_id"), reserved.getMessage());
            assertEquals(OptionalLong.empty(), c.committed(in));

            await(tp.commitTransaction());
            assertEquals(2, s.streamVersion("tas-ledger", "acct"));
            StreamRead read = s.readStream("tas-ledger", "acct");
            assertEquals(List.of("open", "credit 3"), payloads(read));
            assertEquals(a.offset(), read.events().get(1).offset());
            assertEquals("Credited", read.events().get(1).eventType());
            assertEquals(OptionalLong.of(3), c.committed(in));
            // The aggregate is free again.
            assertEquals(3, s.append("tas-ledger", "acct", 2, Event.of("Debited", "after")).version());
        }
        try (CursusConsumer out = new CursusConsumer(ConsumerConfig.builder().bootstrapServers(BROKER.addr())
                .groupId("tas-out-g").fetchMaxWaitMs(50).build())) {
            out.subscribe(List.of("tas-out"));
            List<ConsumerRecord> got = Polling.pollAtLeast(out, 1);
            assertEquals("receipt", got.get(0).valueAsString());
        }
    }

    @Test
    void abortedAppendNeverBecomesAVersion() throws Exception {
        createEventTopic("tas-abort");
        try (CursusEventStore s = store(); CursusProducer tp = txnProducer("tas-abort")) {
            s.append("tas-abort", "acct", 0, Event.of("Opened", "open"));
            await(tp.initTransactions());
            await(tp.beginTransaction());
            assertEquals(2, tp.appendStream("tas-abort", "acct", 1, Event.of("Credited", "never")).version());
            await(tp.abortTransaction());
            assertEquals(1, s.streamVersion("tas-abort", "acct"));
            assertEquals(2, s.append("tas-abort", "acct", 1, Event.of("Debited", "after")).version());
            assertEquals(List.of("open", "after"), payloads(s.readStream("tas-abort", "acct")));
        }
    }

    /**
     * The aggregate reserved by one transaction refuses another transaction's append; the
     * refused transaction aborts, the owner commits.
     */
    @Test
    void anotherTransactionFindsTheStreamReserved() throws Exception {
        createEventTopic("tas-reserved");
        try (CursusEventStore s = store();
                CursusProducer owner = txnProducer("tas-owner");
                CursusProducer other = txnProducer("tas-other")) {
            await(owner.initTransactions());
            await(other.initTransactions());
            await(owner.beginTransaction());
            await(other.beginTransaction());
            owner.appendStream("tas-reserved", "acct", 0, Event.of("Opened", "mine"));
            CursusException e = fails("stream_version_reserved",
                    () -> other.appendStream("tas-reserved", "acct", 0, Event.of("Opened", "theirs")));
            assertEquals("tas-owner", e.field("transactional_id"), e.getMessage());
            assertInstanceOf(ConflictException.class, e);
            assertEquals("acct", e.field("key"), e.getMessage());
            await(other.abortTransaction());
            await(owner.commitTransaction());
            assertEquals(List.of("mine"), payloads(s.readStream("tas-reserved", "acct")));
        }
    }

    /** On a replay topic the transactional event keeps its id: the proof covers it after the commit. */
    @Test
    void transactionalAppendOnAReplayTopic() throws Exception {
        createReplayTopic("tas-replay", 1);
        try (CursusEventStore s = store(); CursusProducer tp = txnProducer("tas-replay")) {
            s.append("tas-replay", "m5", 0, Event.of("Started", "kickoff").withEventId("m5-1"));
            await(tp.initTransactions());
            await(tp.beginTransaction());
            Appended a = tp.appendStream("tas-replay", "m5", 1, Event.of("Scored", "goal").withEventId("m5-2"));
            assertEquals(2, a.version());
            await(tp.commitTransaction());
            ReplayProof p = s.replayProof("tas-replay", "m5", 2);
            assertEquals("m5-2", p.lastEventId());
            assertEquals(a.offset(), p.lastOffset());
            assertEquals(List.of("goal"), List.of(s.eventRange("tas-replay", "m5", 2, 2).events().get(0).payload()));
        }
    }

    @Test
    void appendStreamNeedsAnOpenTransaction() throws Exception {
        createEventTopic("tas-closed");
        try (CursusProducer tp = txnProducer("tas-closed")) {
            await(tp.initTransactions());
            fails("invalid_transaction_state",
                    () -> tp.appendStream("tas-closed", "acct", 0, Event.of("Opened", "x")));
        }
        try (CursusProducer plain = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            fails("invalid_transaction_state", () -> plain.appendStream("tas-closed", "acct", 0, Event.of("Opened", "x")));
        }
        CursusProducer closed = txnProducer("tas-closed-2");
        closed.close();
        assertThrows(CursusClosedException.class,
                () -> closed.appendStream("tas-closed", "acct", 0, Event.of("Opened", "x")));
    }
}
