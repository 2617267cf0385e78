package io.cursus;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * An aggregate loaded by {@link CursusEventStore#loadAggregate}: its state (the latest
 * snapshot's, plus every later event folded in) and its version. {@link #append(Event)} appends
 * the event at the next version, folds the stored event into the state and, every
 * {@code snapshotEvery} events, saves the state as the aggregate's snapshot. The engine keeps the bookkeeping
 * (which version to append at, when a snapshot is due); folding and serialising are the
 * application's functions.
 *
 * <p><b>Conflicts.</b> Appends are optimistic: when another writer appended to the same
 * aggregate since it was loaded, {@link #append} throws a {@link ConflictException} with code
 * {@code version_conflict} (fields {@code current}, the stream's version, and
 * {@code expected}) and nothing changes. This aggregate is then stale for good: load it again,
 * decide again on the fresh state, and append again:
 *
 * <pre>{@code
 * for (int attempt = 1; ; attempt++) {
 *     Aggregate<Account> account = store.loadAggregate("accounts", id, Account.EMPTY,
 *             Account::apply, Account::parse, Account::toJson, 100);
 *     Event event = account.state().withdraw(amount);        // decide on the current state
 *     try {
 *         account.append(event);
 *         break;
 *     } catch (ConflictException e) {
 *         if (!"version_conflict".equals(e.code()) || attempt == 5) {
 *             throw e;
 *         }
 *         // another writer got there first: reload and decide again
 *     }
 * }
 * }</pre>
 *
 * <p>Not thread-safe: use an aggregate from one thread at a time (for one unit of work, then
 * drop it); its native handle is released when it is garbage-collected. Calls throw
 * {@link CursusClosedException} once the store is closed. The future variants
 * ({@link #appendAsync}, {@link #saveSnapshotAsync}) count as a use until their future
 * completes: the library runs them in the background, without a thread per call, and they
 * complete on the store's callback thread (see {@link CursusEventStore}).
 *
 * @param <S> the state's type
 */
public final class Aggregate<S> {
    /** The engine's aggregate; destroyed by the cleaner. */
    static final class Handle extends NativeResource {
        Handle(long handle) {
            super("aggregate", handle, NativeBridge::aggregateDestroy);
        }

        @Override
        public void close() {
            closeWith(h -> {});
        }
    }

    private final CursusEventStore store;
    private final Handle handle;
    private final String topic;
    private final String key;
    private final byte[] keyBytes;
    private final int partition;
    private final BiFunction<S, StoredEvent, S> apply;
    private final Function<S, String> serialize;
    private final Optional<Snapshot> loadedSnapshot;
    private final int loadedEvents;
    private S state;

    Aggregate(CursusEventStore store, Handle handle, String topic, String key, EventPage loaded, S initial,
            BiFunction<S, StoredEvent, S> apply, Function<String, S> deserialize, Function<S, String> serialize) {
        this.store = store;
        this.handle = handle;
        this.topic = topic;
        this.key = key;
        this.keyBytes = key.getBytes(StandardCharsets.UTF_8);
        this.apply = apply;
        this.serialize = serialize;
        this.loadedSnapshot = loaded.snapshot();
        this.loadedEvents = loaded.events().size();
        this.partition = loaded.events().isEmpty() ? -1 : loaded.partition();
        try {
            S s = loadedSnapshot.isPresent() ? deserialize.apply(loadedSnapshot.get().state()) : initial;
            for (StoredEvent e : loaded.events()) {
                s = apply.apply(s, e);
            }
            this.state = s;
        } catch (RuntimeException e) {
            handle.close();
            throw e;
        }
    }

    /**
     * The topic.
     *
     * @return the topic
     */
    public String topic() {
        return topic;
    }

    /**
     * The aggregate key.
     *
     * @return the key
     */
    public String key() {
        return key;
    }

    /**
     * The current state: loaded, then with every event appended through this aggregate.
     *
     * @return the state
     */
    public S state() {
        return state;
    }

    /**
     * The version loaded or last appended (0 for an aggregate without events).
     *
     * @return the version
     */
    public long version() {
        return handle.call(NativeBridge::aggregateVersion);
    }

    /**
     * The snapshot loading started from.
     *
     * @return the snapshot, or empty when the aggregate had none
     */
    public Optional<Snapshot> loadedSnapshot() {
        return loadedSnapshot;
    }

    /**
     * How many events loading folded in after the snapshot (or from the start without one).
     *
     * @return the number of events
     */
    public int loadedEvents() {
        return loadedEvents;
    }

    /**
     * Appends an event at the next version and returns it as stored: its version, offset and
     * partition are the broker's (its timestamp is 0: the append's reply does not carry it).
     * The event's {@linkplain Event#eventId() id} is its own, or a generated one when it has
     * none. Only once the append succeeded is the stored event folded into the state through
     * {@code apply}, so a failed append leaves state and version unchanged (if {@code apply}
     * itself throws then, the event stays appended and the aggregate is stale: load it again).
     *
     * <p>When a snapshot is due ({@code snapshotEvery} events since the last one), the new
     * state is then serialised and saved as the snapshot. A snapshot that fails (the save, or
     * {@code serialize} throwing) never fails the append, which is durable: it is reported
     * through the library log at warn and stays due, so the next append tries again (or call
     * {@link #saveSnapshot()}, which throws).
     *
     * @param event the event
     * @return the event as stored
     * @throws ConflictException with code {@code version_conflict} when another writer
     *     appended first: load the aggregate again (see the class documentation)
     */
    public StoredEvent append(Event event) {
        Objects.requireNonNull(event, "event");
        StoredEvent stored = store.call(s -> handle.call(a -> CursusEventStore.page(topic,
                NativeBridge.eventStoreAggregateAppend(s, a, event.type(), event.payload(),
                        event.metadata().isEmpty() ? null : event.metadata(), event.schemaVersion(),
                        event.hasEventId() ? event.eventId() : null))))
                .events().get(0);
        state = apply.apply(state, stored);
        if (serialize != null && snapshotDue()) {
            autoSnapshot();
        }
        return stored;
    }

    /**
     * {@link #append} with a future: completed with the event as stored once it is folded into
     * the state (and a due snapshot was attempted), or exceptionally with what {@link #append}
     * throws (a {@link ConflictException} with code {@code version_conflict}, ...). {@code apply}
     * and {@code serialize} run on the store's callback thread. Use the aggregate again only once
     * the future has completed.
     *
     * @param event the event
     * @return the append's future
     */
    public CompletableFuture<StoredEvent> appendAsync(Event event) {
        CompletableFuture<StoredEvent> appending = store.startAsync(store.callbacks(),
                p -> CursusEventStore.readPage(topic, p).events().get(0),
                (s, completion) -> {
                    Objects.requireNonNull(event, "event");
                    handle.run(a -> NativeBridge.eventStoreAggregateAppendAsync(s, a, event.type(), event.payload(),
                            event.metadata().isEmpty() ? null : event.metadata(), event.schemaVersion(),
                            event.hasEventId() ? event.eventId() : null, completion));
                });
        // Folded on the callback thread whether or not the append completed before this line.
        return NativeResource.thenOn(store.callbacks(), appending, stored -> {
            state = apply.apply(state, stored);
            if (serialize == null || !snapshotDue()) {
                return CompletableFuture.completedFuture(stored);
            }
            return autoSnapshotAsync().thenApply(saved -> stored);
        });
    }

    /** {@link #autoSnapshot()} in the background: completes once it is saved or its failure logged. */
    private CompletableFuture<Void> autoSnapshotAsync() {
        String serialized;
        try {
            serialized = Objects.requireNonNull(serialize.apply(state), "serialize returned null");
        } catch (RuntimeException e) {
            handle.run(a -> NativeBridge.aggregateSnapshotFailed(a, String.valueOf(e)));
            return CompletableFuture.completedFuture(null);
        }
        return store.startAsync(store.callbacks(), (s, completion) -> handle.run(
                a -> NativeBridge.eventStoreAggregateAutoSnapshotAsync(s, a, serialized, completion)));
    }

    /** The automatic snapshot: every failure goes to the library log (warn), never to append. */
    private void autoSnapshot() {
        String serialized;
        try {
            serialized = Objects.requireNonNull(serialize.apply(state), "serialize returned null");
        } catch (RuntimeException e) {
            handle.run(a -> NativeBridge.aggregateSnapshotFailed(a, String.valueOf(e)));
            return;
        }
        store.run(s -> handle.run(a -> NativeBridge.eventStoreAggregateAutoSnapshot(s, a, serialized)));
    }

    /**
     * Whether {@code snapshotEvery} events were appended since the last snapshot (never with
     * {@code snapshotEvery} 0). {@link #append} saves due snapshots by itself.
     *
     * @return true when a snapshot is due
     */
    public boolean snapshotDue() {
        return handle.call(NativeBridge::aggregateSnapshotDue);
    }

    /** Saves the current state (serialised) as the aggregate's snapshot at {@link #version()}. */
    public void saveSnapshot() {
        String serialized = Objects.requireNonNull(serialize.apply(state), "serialize returned null");
        store.run(s -> handle.run(a -> NativeBridge.eventStoreAggregateSaveSnapshot(s, a, serialized)));
    }

    /**
     * {@link #saveSnapshot()} with a future: completed once the snapshot is saved, or
     * exceptionally with what {@link #saveSnapshot()} throws.
     *
     * @return the save's future
     */
    public CompletableFuture<Void> saveSnapshotAsync() {
        return store.startAsync(store.callbacks(), (s, completion) -> {
            String serialized = Objects.requireNonNull(serialize.apply(state), "serialize returned null");
            handle.run(a -> NativeBridge.eventStoreAggregateSaveSnapshotAsync(s, a, serialized, completion));
        });
    }
}
