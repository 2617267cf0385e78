package io.cursus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The event store (docs/event-sourcing.md) through the Java API, against a real broker. */
class EventStoreTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    private static void createEventTopic(String name, int partitions) {
        try (CursusAdmin admin = BROKER.admin()) {
            TopicInfo info = admin.createTopic(NewTopic.named(name).partitions(partitions).eventSourcing(true));
            assertTrue(info.eventSourcing());
        }
    }

    private static CursusEventStore store() {
        return new CursusEventStore(ClientConfig.of(BROKER.addr()));
    }

    /** Appends {@code payloads} as events of type {@code type}, from version 1. */
    private static List<Appended> appendAll(CursusEventStore store, String topic, String key, String type,
            String... payloads) {
        List<Appended> out = new ArrayList<>();
        for (String p : payloads) {
            out.add(store.append(topic, key, out.size(), Event.of(type, p)));
        }
        return out;
    }

    private static List<Long> versions(Iterable<StoredEvent> events) {
        List<Long> out = new ArrayList<>();
        events.forEach(e -> out.add(e.version()));
        return out;
    }

    private static List<String> payloads(Iterable<StoredEvent> events) {
        List<String> out = new ArrayList<>();
        events.forEach(e -> out.add(e.payload()));
        return out;
    }

    private static List<EventPage> pages(EventPages read) {
        List<EventPage> out = new ArrayList<>();
        read.forEach(out::add);
        return out;
    }

    @Test
    void appendAndReadBackEveryField() {
        createEventTopic("es-orders", 3);
        try (CursusEventStore store = store()) {
            assertEquals(0, store.streamVersion("es-orders", "order-1"));
            Event created = Event.of("Created", "{\"id\":1,\"note\":\"héllo ✓\"}")
                    .withMetadata("{\"by\":\"alice\"}").withSchemaVersion(2);
            Appended a1 = store.append("es-orders", "order-1", 0, created);
            Appended a2 = store.append("es-orders", "order-1", 1, Event.of("Paid", "paid 10"));
            Appended a3 = store.append("es-orders", "order-1", 2, Event.of("Shipped", "shipped"));
            assertEquals(List.of(1L, 2L, 3L), List.of(a1.version(), a2.version(), a3.version()));
            assertEquals(a1.partition(), a2.partition());
            assertEquals(a1.partition(), a3.partition());
            assertTrue(a1.offset() < a2.offset() && a2.offset() < a3.offset(), a1 + " " + a2 + " " + a3);
            assertEquals(3, store.streamVersion("es-orders", "order-1"));

            StreamRead read = store.readStream("es-orders", "order-1");
            assertEquals(Optional.empty(), read.snapshot());
            assertEquals(3, read.lastVersion());
            assertEquals(3, read.events().size());
            StoredEvent e1 = read.events().get(0);
            assertEquals("es-orders", e1.topic());
            assertEquals(a1.partition(), e1.partition());
            assertEquals(a1.offset(), e1.offset());
            assertTrue(e1.timestamp() > 0, "timestamp " + e1.timestamp());
            assertEquals("order-1", e1.key());
            assertArrayEquals("order-1".getBytes(StandardCharsets.UTF_8), e1.keyBytes());
            assertEquals(1, e1.version());
            assertTrue(e1.isEvent());
            assertEquals("Created", e1.eventType());
            assertEquals(2, e1.schemaVersion());
            assertEquals("{\"by\":\"alice\"}", e1.metadata());
            assertEquals(created.payload(), e1.payload());
            StoredEvent e2 = read.events().get(1);
            assertEquals(List.of("Paid", 1, "", a2.offset()),
                    List.of(e2.eventType(), e2.schemaVersion(), e2.metadata(), e2.offset()));
            assertEquals("shipped", read.events().get(2).payload());

            assertEquals(List.of(2L, 3L), versions(store.readStream("es-orders", "order-1", 2).events()));
            StreamRead none = store.readStream("es-orders", "order-2");
            assertEquals(List.of(), none.events());
            assertEquals(0, none.lastVersion());
        }
    }

    @Test
    void versionConflictIsAConflictExceptionWithFields() {
        createEventTopic("es-conflict", 2);
        try (CursusEventStore first = store(); CursusEventStore second = store()) {
            appendAll(first, "es-conflict", "acct", "Deposited", "open", "first writer");
            ConflictException e = assertThrows(ConflictException.class,
                    () -> second.append("es-conflict", "acct", 1, Event.of("Deposited", "second writer")));
            assertEquals("version_conflict", e.code());
            assertEquals(ErrorClass.CONFLICT, e.errorClass());
            assertFalse(e.isRetryable());
            assertEquals("2", e.field("current"));
            assertEquals("2", e.field("expected")); // the version the event would have got
            assertEquals(2, second.streamVersion("es-conflict", "acct"));

            // Re-read, decide again, append at the new version.
            long current = Long.parseLong(e.field("current"));
            assertEquals(3, second.append("es-conflict", "acct", current, Event.of("Deposited", "second writer"))
                    .version());
            assertEquals(List.of("open", "first writer", "second writer"),
                    payloads(first.readStream("es-conflict", "acct").events()));

            // Ahead of the stream is a conflict too.
            ConflictException ahead = assertThrows(ConflictException.class,
                    () -> first.append("es-conflict", "acct", 7, Event.of("X", "x")));
            assertEquals(Map.of("current", "3", "expected", "8"), ahead.fields());
        }
    }

    @Test
    void snapshotsAndAStreamReadAfterOne() {
        createEventTopic("es-snap", 3);
        try (CursusEventStore store = store()) {
            assertEquals(Optional.empty(), store.readSnapshot("es-snap", "cart"));
            appendAll(store, "es-snap", "cart", "Added", "item-1", "item-2", "item-3", "item-4", "item-5");

            ConflictException tooFar = assertThrows(ConflictException.class,
                    () -> store.saveSnapshot("es-snap", "cart", 9, "too far"));
            assertEquals("snapshot_version_exceeds_stream", tooFar.code());

            store.saveSnapshot("es-snap", "cart", 3, "items=3");
            assertEquals(Optional.of(new Snapshot(3, "items=3")), store.readSnapshot("es-snap", "cart"));

            StreamRead fromStart = store.readStream("es-snap", "cart");
            assertEquals(Optional.of(new Snapshot(3, "items=3")), fromStart.snapshot());
            assertEquals(List.of(4L, 5L), versions(fromStart.events()));
            assertEquals(List.of("item-4", "item-5"), payloads(fromStart.events()));
            assertEquals(5, fromStart.lastVersion());

            StreamRead afterSnapshot = store.readStream("es-snap", "cart", 5);
            assertEquals(Optional.empty(), afterSnapshot.snapshot());
            assertEquals(List.of(5L), versions(afterSnapshot.events()));

            // A later snapshot replaces the earlier one; history never carries snapshots.
            store.saveSnapshot("es-snap", "cart", 5, "items=5");
            assertEquals(Optional.of(new Snapshot(5, "items=5")), store.readSnapshot("es-snap", "cart"));
            StreamRead all = store.readStream("es-snap", "cart");
            assertEquals(Optional.of(new Snapshot(5, "items=5")), all.snapshot());
            assertEquals(List.of(), all.events());
            assertEquals(5, all.lastVersion());
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L), versions(store.history("es-snap", "cart", 1).events()));
        }
    }

    @Test
    void streamPages() {
        createEventTopic("es-paged", 2);
        try (CursusEventStore store = store()) {
            appendAll(store, "es-paged", "k", "E", "e1", "e2", "e3", "e4", "e5");
            store.saveSnapshot("es-paged", "k", 1, "s1");
            EventPages read = store.stream("es-paged", "k", 1, PageLimits.ofRecords(2));
            List<EventPage> pages = pages(read);
            assertEquals(2, pages.size(), pages.toString());
            assertEquals(Optional.of(new Snapshot(1, "s1")), pages.get(0).snapshot());
            assertEquals(List.of(2L, 3L), versions(pages.get(0).events()));
            assertTrue(pages.get(0).hasMore());
            assertEquals(Optional.empty(), pages.get(1).snapshot());
            assertEquals(List.of(4L, 5L), versions(pages.get(1).events()));
            assertFalse(pages.get(1).hasMore());
            assertNull(pages.get(0).completeness());
            assertEquals(-1, pages.get(0).readableEndOffset());

            // Every iteration reads from the start again; events() flattens the pages.
            assertEquals(List.of(2L, 3L, 4L, 5L), versions(read.events()));
            assertEquals(List.of(2L, 3L, 4L, 5L), versions(read.events()));
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L),
                    versions(store.history("es-paged", "k", 1, 0, PageLimits.ofRecords(2)).events()));

            Iterator<EventPage> it = store.stream("es-paged", "k", 4, PageLimits.ofRecords(1)).iterator();
            assertTrue(it.hasNext());
            assertTrue(it.hasNext()); // no second request
            assertEquals(List.of(4L), versions(it.next().events()));
            assertEquals(List.of(5L), versions(it.next().events()));
            assertFalse(it.hasNext());
            assertThrows(NoSuchElementException.class, it::next);

            // A missing aggregate: one empty page.
            List<EventPage> missing = pages(store.stream("es-paged", "nobody", 1));
            assertEquals(1, missing.size());
            assertEquals(List.of(), missing.get(0).events());
        }
    }

    @Test
    void historyPagesReportCompleteness() {
        createEventTopic("es-history", 3);
        try (CursusEventStore store = store()) {
            appendAll(store, "es-history", "h", "E", "e1", "e2", "e3", "e4", "e5", "e6");
            store.saveSnapshot("es-history", "h", 4, "s4");
            List<EventPage> pages = pages(store.history("es-history", "h", 1, 0, PageLimits.ofRecords(4)));
            assertEquals(2, pages.size(), pages.toString());
            assertEquals(List.of(1L, 2L, 3L, 4L), versions(pages.get(0).events()));
            assertEquals(List.of(5L, 6L), versions(pages.get(1).events()));
            for (EventPage p : pages) {
                assertEquals(Completeness.COMPLETE, p.completeness());
                assertEquals(6, p.headVersion());
                assertEquals(Optional.empty(), p.snapshot());
            }
            assertTrue(pages.get(0).hasMore());
            assertFalse(pages.get(1).hasMore());

            List<EventPage> range = pages(store.history("es-history", "h", 2, 3, PageLimits.DEFAULT));
            assertEquals(1, range.size());
            assertEquals(List.of(2L, 3L), versions(range.get(0).events()));
            assertEquals(Completeness.COMPLETE, range.get(0).completeness());

            List<EventPage> nobody = pages(store.history("es-history", "nobody", 1));
            assertEquals(1, nobody.size());
            assertEquals(List.of(), nobody.get(0).events());
            assertEquals(Completeness.COMPLETE, nobody.get(0).completeness());
            assertEquals(0, nobody.get(0).headVersion());
        }
    }

    /** Browse pages through any partition: events carry their fields, plain records version 0. */
    @Test
    void browsePages() {
        createEventTopic("es-browse", 1);
        try (CursusEventStore store = store();
                CursusProducer producer = new CursusProducer(ProducerConfig.of(BROKER.addr()))) {
            appendAll(store, "es-browse", "a", "E", "a1", "a2");
            byte[] binary = {0, (byte) 0xff, 10};
            producer.sendAndWait(ProducerRecord.of("es-browse", binary).withKey(new byte[] {1, 2}));
            appendAll(store, "es-browse", "b", "F", "b1");
            for (int i = 0; i < 6; i++) {
                producer.send(ProducerRecord.of("es-browse", "plain-" + i));
            }
            producer.flush();

            List<EventPage> pages = pages(store.browse("es-browse", 0, 0, -1, PageLimits.ofRecords(4)));
            assertEquals(3, pages.size(), pages.toString());
            List<StoredEvent> all = new ArrayList<>();
            pages.forEach(p -> all.addAll(p.events()));
            assertEquals(10, all.size());
            for (int i = 0; i < all.size(); i++) {
                assertEquals(i, all.get(i).offset());
                assertEquals(0, all.get(i).partition());
                assertEquals("es-browse", all.get(i).topic());
            }
            assertEquals(10, pages.get(2).readableEndOffset());
            assertFalse(pages.get(2).hasMore());
            assertNull(pages.get(0).completeness());

            StoredEvent a2 = all.get(1);
            assertEquals(List.of("a", 2L, "E", "a2"), List.of(a2.key(), a2.version(), a2.eventType(), a2.payload()));
            StoredEvent plain = all.get(2);
            assertFalse(plain.isEvent());
            assertArrayEquals(binary, plain.payloadBytes());
            assertArrayEquals(new byte[] {1, 2}, plain.keyBytes());
            assertEquals(List.of("b", 1L), List.of(all.get(3).key(), all.get(3).version()));

            List<Long> bounded = new ArrayList<>();
            store.browse("es-browse", 0, 5, 8, PageLimits.ofRecords(2)).events().forEach(e -> bounded.add(e.offset()));
            assertEquals(List.of(5L, 6L, 7L), bounded);
            assertEquals(List.of(), payloads(store.browse("es-browse", 0, 10).events()));
        }
    }

    /** A counter aggregate: state = number of events; snapshots are the decimal state. */
    private static Aggregate<Integer> counter(CursusEventStore store, String topic, String key, int snapshotEvery) {
        BiFunction<Integer, StoredEvent, Integer> apply = (n, e) -> n + 1;
        return store.loadAggregate(topic, key, 0, apply, Integer::valueOf, String::valueOf, snapshotEvery);
    }

    @Test
    void aggregateCycleWithAutoSnapshots() {
        createEventTopic("es-agg", 3);
        try (CursusEventStore store = store()) {
            Aggregate<Integer> fresh = counter(store, "es-agg", "counter", 3);
            assertEquals(0, fresh.state());
            assertEquals(0, fresh.version());
            assertEquals(Optional.empty(), fresh.loadedSnapshot());
            assertEquals(0, fresh.loadedEvents());
            for (int i = 1; i <= 7; i++) {
                assertEquals(i, fresh.append(Event.of("Counted", "tick-" + i)).version());
                assertEquals(i, fresh.state());
                assertFalse(fresh.snapshotDue()); // saved by append when due
            }
            assertEquals(7, fresh.version());
            assertEquals(Optional.of(new Snapshot(6, "6")), store.readSnapshot("es-agg", "counter"));

            Aggregate<Integer> loaded = counter(store, "es-agg", "counter", 3);
            assertEquals(Optional.of(new Snapshot(6, "6")), loaded.loadedSnapshot());
            assertEquals(1, loaded.loadedEvents());
            assertEquals(7, loaded.state());
            assertEquals(7, loaded.version());
            loaded.append(Event.of("Counted", "more-1"));
            loaded.append(Event.of("Counted", "more-2"));
            assertEquals(9, loaded.state());
            assertEquals(Optional.of(new Snapshot(9, "9")), store.readSnapshot("es-agg", "counter"));

            // The events apply sees on load carry every field.
            List<StoredEvent> seen = new ArrayList<>();
            store.loadAggregate("es-agg", "counter", 0, (n, e) -> {
                seen.add(e);
                return n + 1;
            }, Integer::valueOf, String::valueOf, 0);
            assertEquals(List.of(), seen); // the snapshot is at the head
            store.loadAggregate("es-agg", "other", "", (s, e) -> s + e.payload(), x -> x, x -> x, 0)
                    .append(Event.of("Said", "hi").withMetadata("m").withSchemaVersion(3));
            Aggregate<String> other = store.loadAggregate("es-agg", "other", "", (s, e) -> {
                seen.add(e);
                return s + e.payload();
            }, x -> x, x -> x, 0);
            assertEquals("hi", other.state());
            StoredEvent said = seen.get(0);
            assertEquals(List.of("other", 1L, "Said", 3, "m", "hi"), List.of(said.key(), said.version(),
                    said.eventType(), said.schemaVersion(), said.metadata(), said.payload()));
            assertTrue(said.offset() >= 0 && said.timestamp() > 0, said.toString());
        }
    }

    /**
     * The aggregate's append keeps the caller's event id and returns the stored event with its
     * real offset; a failed automatic snapshot is no error of the append and stays due.
     */
    @Test
    void aggregateAppendReturnsTheStoredEventAndSurvivesAFailedSnapshot() {
        createEventTopic("es-agg-stored", 1);
        try (CursusEventStore store = store()) {
            store.append("es-agg-stored", "other", 0, Event.of("T", "first"));
            boolean[] fail = {true};
            Aggregate<Integer> agg = store.loadAggregate("es-agg-stored", "a", 0, (n, e) -> n + 1,
                    Integer::valueOf, n -> {
                        if (fail[0]) {
                            throw new IllegalStateException("cannot serialise");
                        }
                        return String.valueOf(n);
                    }, 1);
            StoredEvent stored = agg.append(Event.of("Opened", "x").withEventId("caller-1").withSchemaVersion(2));
            assertEquals(List.of(1L, 1L, "a", 2), List.of(stored.version(), stored.offset(), stored.key(),
                    stored.schemaVersion()));
            assertEquals(1, agg.state());
            assertTrue(agg.snapshotDue()); // the serialiser threw: logged, not thrown
            ValidationException bad = assertThrows(ValidationException.class,
                    () -> agg.append(Event.of("Opened", "y").withEventId("two words")));
            assertEquals("invalid_argument", bad.code());
            assertEquals(1, agg.version());
            fail[0] = false;
            agg.append(Event.of("Opened", "z"));
            assertFalse(agg.snapshotDue());
            assertEquals(Optional.of(new Snapshot(2, "2")), store.readSnapshot("es-agg-stored", "a"));
        }
    }

    /** Two writers load the same version: the second append conflicts and changes nothing. */
    @Test
    void aggregateConflictAndRetry() {
        createEventTopic("es-agg-conflict", 2);
        try (CursusEventStore store = store()) {
            Aggregate<Integer> a = counter(store, "es-agg-conflict", "acct", 0);
            Aggregate<Integer> b = counter(store, "es-agg-conflict", "acct", 0);
            a.append(Event.of("Counted", "a"));
            ConflictException e = assertThrows(ConflictException.class, () -> b.append(Event.of("Counted", "b")));
            assertEquals("version_conflict", e.code());
            assertEquals("1", e.field("current"));
            assertEquals(0, b.state());
            assertEquals(0, b.version());

            // The retry pattern: load again, decide again, append.
            Aggregate<Integer> again = counter(store, "es-agg-conflict", "acct", 0);
            assertEquals(1, again.state());
            assertEquals(2, again.append(Event.of("Counted", "b")).version());
            assertEquals(2, again.state());

            // apply runs once the append succeeded (the same order in every language): an apply
            // that throws leaves the event appended, and the aggregate stale.
            Aggregate<Integer> strict = store.loadAggregate("es-agg-conflict", "acct", 0, (n, ev) -> {
                if (ev.payload().equals("bad")) {
                    throw new IllegalStateException("refused");
                }
                return n + 1;
            }, Integer::valueOf, String::valueOf, 0);
            assertThrows(IllegalStateException.class, () -> strict.append(Event.of("Counted", "bad")));
            assertEquals(2, strict.state());
            assertEquals(3, store.streamVersion("es-agg-conflict", "acct"));
        }
    }

    @Test
    void topicWithoutEventSourcing() {
        BROKER.createTopic("es-plain", 1);
        try (CursusEventStore store = store()) {
            ValidationException e = assertThrows(ValidationException.class,
                    () -> store.append("es-plain", "a", 0, Event.of("X", "v")));
            assertEquals("event_sourcing_not_enabled", e.code());
            assertEquals("es-plain", e.field("topic"));
            assertEquals("event_sourcing_not_enabled",
                    assertThrows(ValidationException.class, () -> store.streamVersion("es-plain", "a")).code());
            assertEquals("event_sourcing_not_enabled",
                    assertThrows(ValidationException.class, () -> store.readSnapshot("es-plain", "a")).code());
            assertEquals("event_sourcing_not_enabled",
                    assertThrows(ValidationException.class, () -> store.readStream("es-plain", "a")).code());
            assertEquals("event_sourcing_not_enabled", assertThrows(ValidationException.class,
                    () -> counter(store, "es-plain", "a", 0)).code());
            // Browsing works on any topic.
            assertEquals(List.of(), payloads(store.browse("es-plain", 0, 0).events()));
        }
    }

    @Test
    void badArguments() {
        createEventTopic("es-bad", 1);
        try (CursusEventStore store = store()) {
            assertThrows(ValidationException.class, () -> store.append("es-bad", "two words", 0, Event.of("X", "v")));
            assertThrows(ValidationException.class, () -> store.readStream("es-bad", "k", 0));
            // The broker needs a payload and a snapshot state (as PUBLISH needs a value).
            assertEquals("missing_message", assertThrows(ValidationException.class,
                    () -> store.append("es-bad", "k", 0, Event.of("X", ""))).code());
            assertEquals(0, store.streamVersion("es-bad", "k"));
            assertThrows(IllegalArgumentException.class, () -> store.append("es-bad", "k", -1, Event.of("X", "v")));
            assertThrows(IllegalArgumentException.class, () -> Event.of("X", "v").withSchemaVersion(-1));
            assertThrows(IllegalArgumentException.class, () -> new PageLimits(-1, 0));
            assertThrows(NotFoundException.class, () -> store.streamVersion("es-missing", "k"));
        }
    }

    @Test
    void closedStore() {
        createEventTopic("es-closed", 1);
        CursusEventStore store = store();
        appendAll(store, "es-closed", "k", "E", "e1", "e2");
        Aggregate<Integer> aggregate = counter(store, "es-closed", "k", 0);
        Iterator<EventPage> started = store.stream("es-closed", "k", 1, PageLimits.ofRecords(1)).iterator();
        assertTrue(started.hasNext());
        started.next();
        EventPages notStarted = store.history("es-closed", "k", 1);

        store.close();
        store.close();
        assertTrue(store.isClosed());
        CursusClosedException e = assertThrows(CursusClosedException.class,
                () -> store.append("es-closed", "k", 2, Event.of("E", "e3")));
        assertEquals("closed", e.code());
        assertEquals(ErrorClass.VALIDATION, e.errorClass());
        assertThrows(CursusClosedException.class, () -> store.streamVersion("es-closed", "k"));
        assertThrows(CursusClosedException.class, () -> store.saveSnapshot("es-closed", "k", 1, "s"));
        assertThrows(CursusClosedException.class, () -> store.readSnapshot("es-closed", "k"));
        assertThrows(CursusClosedException.class, () -> store.readStream("es-closed", "k"));
        assertThrows(CursusClosedException.class, started::hasNext);
        assertThrows(CursusClosedException.class, () -> notStarted.iterator().hasNext());
        assertThrows(CursusClosedException.class, () -> aggregate.append(Event.of("E", "e3")));
        assertThrows(CursusClosedException.class, aggregate::saveSnapshot);
        assertThrows(CursusClosedException.class, () -> counter(store, "es-closed", "k", 0));
        assertEquals(2, aggregate.version()); // local bookkeeping stays readable
    }
}
