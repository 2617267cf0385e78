package io.cursus.examples;

import io.cursus.Aggregate;
import io.cursus.Appended;
import io.cursus.ClientConfig;
import io.cursus.ConflictException;
import io.cursus.CursusAdmin;
import io.cursus.CursusEventStore;
import io.cursus.Event;
import io.cursus.EventPage;
import io.cursus.NewTopic;
import io.cursus.PageLimits;
import io.cursus.StoredEvent;
import io.cursus.StreamRead;

/**
 * An event-sourced account: appends with expected versions, reads the stream back, pages
 * through its history, and deposits through the aggregate cycle with the conflict-retry loop.
 * Run: {@code java -cp cursus.jar:test-classes io.cursus.examples.EventSourcingExample 127.0.0.1:9000}
 */
public final class EventSourcingExample {
    private EventSourcingExample() {}

    /** Entry point: {@code [bootstrap_servers] [topic]}. */
    public static void main(String[] args) {
        System.out.println("balance " + run(args));
    }

    /** The balance: a sum of deposits. */
    private static long apply(long balance, StoredEvent e) {
        return e.eventType().equals("Deposited") ? balance + Long.parseLong(e.payload()) : balance;
    }

    /** Runs the example; returns the final balance. */
    public static long run(String[] args) {
        String servers = args.length > 0 ? args[0] : "127.0.0.1:9000";
        String topic = args.length > 1 ? args[1] : "accounts";
        try (CursusAdmin admin = new CursusAdmin(ClientConfig.of(servers))) {
            admin.createTopic(NewTopic.named(topic).partitions(3).eventSourcing(true));
        }
        try (CursusEventStore store = new CursusEventStore(ClientConfig.of(servers))) {
            // Optimistic concurrency: expectedVersion is the version last seen (0: a new aggregate).
            Appended a = store.append(topic, "acct-7", 0, Event.of("Opened", "{\"owner\":\"ann\"}"));
            store.append(topic, "acct-7", a.version(),
                    Event.of("Deposited", "10").withMetadata("{\"by\":\"teller-3\"}"));

            StreamRead read = store.readStream(topic, "acct-7");
            read.events().forEach(e -> System.out.println(e.version() + " " + e.eventType() + " " + e.payload()));

            for (EventPage page : store.history(topic, "acct-7", 1, 0, PageLimits.ofRecords(500))) {
                System.out.println(page.events().size() + " events, " + page.completeness()
                        + " up to version " + page.headVersion());
            }

            // The aggregate cycle, retried when another writer appended first.
            for (int attempt = 1; ; attempt++) {
                Aggregate<Long> balance = store.loadAggregate(topic, "acct-7", 0L, EventSourcingExample::apply,
                        Long::valueOf, String::valueOf, 100);
                try {
                    balance.append(Event.of("Deposited", "5"));
                    return balance.state();
                } catch (ConflictException e) {
                    if (!"version_conflict".equals(e.code()) || attempt == 5) {
                        throw e;
                    }
                }
            }
        }
    }
}
