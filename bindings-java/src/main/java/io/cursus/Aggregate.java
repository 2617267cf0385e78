package io.cursus;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * An aggregate loaded by {@link CursusEventStore#loadAggregate}: its state (the latest
 * snapshot's, plus every later event folded in) and its version. {@link #append(Event)} folds
 * the event into the state, appends it at the next version and, every {@code snapshotEvery}
 * events, saves the state as the aggregate's snapshot. The engine keeps the bookkeeping
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
 * {@link CursusClosedException} once the store is closed.
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
     * Appends an event at the next version, with the new state. First folds the event into
     * the state through {@code apply}: if {@code apply} throws, nothing is appended. Then
     * appends it, and on success the folded state becomes {@link #state()}. The event
     * {@code apply} sees here is not stored yet: its version is the one it is appended at, its
     * offset -1, its timestamp 0 and its partition that of the loaded events (-1 when none was
     * loaded).
     *
     * <p>When a snapshot is due ({@code snapshotEvery} events since the last one), the new
     * state is then serialised and saved as the snapshot. If that save fails, its exception is
     * thrown but the event stays appended and folded ({@link #version()} tells); the snapshot
     * stays due: it is tried again after the next append, or call {@link #saveSnapshot()}.
     *
     * <p>The engine gives the event a generated event id: an aggregate's append cannot carry
     * one of its own (the library has no such call); to choose the id, append through
     * {@link CursusEventStore#append} at {@link #version()} and load the aggregate again.
     *
     * @param event the event, without an {@linkplain Event#eventId() event id}
     * @return the version the event got
     * @throws ConflictException with code {@code version_conflict} when another writer
     *     appended first: load the aggregate again (see the class documentation)
     * @throws IllegalArgumentException if the event carries an event id
     */
    public long append(Event event) {
        Objects.requireNonNull(event, "event");
        if (event.hasEventId()) {
            throw new IllegalArgumentException("Aggregate.append cannot carry an event id (" + event.eventId()
                    + "): append through CursusEventStore.append instead");
        }
        long next = version() + 1;
        byte[] payload = event.payload().getBytes(StandardCharsets.UTF_8);
        StoredEvent stored = new StoredEvent(topic, partition, -1, 0, keyBytes, next, event.type(),
                event.schemaVersion() == 0 ? 1 : event.schemaVersion(), event.metadata(), payload);
        S folded = apply.apply(state, stored);
        long version = store.call(s -> handle.call(a -> NativeBridge.eventStoreAggregateAppend(s, a, event.type(),
                event.payload(), event.metadata().isEmpty() ? null : event.metadata(), event.schemaVersion())));
        state = folded;
        if (snapshotDue()) {
            saveSnapshot();
        }
        return version;
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
}
