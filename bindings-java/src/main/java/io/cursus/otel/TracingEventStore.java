package io.cursus.otel;

import io.cursus.Aggregate;
import io.cursus.Appended;
import io.cursus.CursusEventStore;
import io.cursus.Event;
import io.cursus.EventRange;
import io.cursus.PageLimits;
import io.cursus.ReplayProof;
import io.cursus.Snapshot;
import io.cursus.StoredEvent;
import io.cursus.StreamRead;
import io.cursus.Telemetry;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link CursusEventStore} whose appends and aggregate reads are traced with the engine's
 * event-store spans ({@link Telemetry#append}, {@link Telemetry#read}), children of
 * {@code Context.current()}: an append span per {@link #append} or {@link #appendAsync}, a read
 * span per read of an aggregate (its stream, version, snapshot, replay proof, event range, a
 * load), and one per page request of {@link #stream} and {@link #history}. The span of an
 * async call ends when its future completes, before the caller's continuations run. A failed
 * call marks its span failed ({@code error.type}, status error) as every layer does.
 *
 * <p>The read span's {@code messaging.cursus.aggregate.version} is the version the read
 * starts from: 1 for a read of the whole aggregate (a load, a replay proof), the first
 * sequence of an event range, and 0 for the reads of the aggregate's head alone
 * ({@link #streamVersion}, {@link #readSnapshot}). Not traced, as the engine declares no span
 * for them: {@code saveSnapshot} and {@code browse} (a partition, not an aggregate); call them
 * on {@link #eventStore()}, as the appends of a loaded {@link Aggregate}. Thread-safe, as the
 * store is.
 */
public final class TracingEventStore {
    /** The version a read of the aggregate's head alone (its version, its snapshot) records. */
    private static final long HEAD = 0;
    /** The version a read of the whole aggregate starts from. */
    private static final long WHOLE = 1;

    private final CursusTracing tracing;
    private final CursusEventStore store;

    TracingEventStore(CursusTracing tracing, CursusEventStore store) {
        this.tracing = tracing;
        this.store = Objects.requireNonNull(store, "store");
    }

    /**
     * The wrapped event store, for the calls that are not traced.
     *
     * @return the event store
     */
    public CursusEventStore eventStore() {
        return store;
    }

    /**
     * {@link CursusEventStore#append} in an append span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param expectedVersion the aggregate's current version
     * @param event the event
     * @return the appended event's version and offset
     */
    public Appended append(String topic, String key, long expectedVersion, Event event) {
        return CursusTracing.around(tracing.start(Telemetry.append(topic, key, expectedVersion)),
                () -> store.append(topic, key, expectedVersion, event));
    }

    /**
     * {@link CursusEventStore#appendAsync} in an append span, ended when the append completes.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param expectedVersion the aggregate's current version
     * @param event the event
     * @return the append's future
     */
    public CompletableFuture<Appended> appendAsync(String topic, String key, long expectedVersion, Event event) {
        return CursusTracing.aroundAsync(tracing.start(Telemetry.append(topic, key, expectedVersion)),
                () -> store.appendAsync(topic, key, expectedVersion, event));
    }

    /**
     * {@link CursusEventStore#readStream(String, String, long)} (every page) in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return the snapshot, if any, and the events
     */
    public StreamRead readStream(String topic, String key, long fromVersion) {
        return read(topic, key, fromVersion, () -> store.readStream(topic, key, fromVersion));
    }

    /**
     * {@link CursusEventStore#readStream(String, String)} (from version 1) in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return the snapshot, if any, and the events
     */
    public StreamRead readStream(String topic, String key) {
        return readStream(topic, key, WHOLE);
    }

    /**
     * {@link CursusEventStore#readStreamAsync} in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return a future of the snapshot, if any, and the events
     */
    public CompletableFuture<StreamRead> readStreamAsync(String topic, String key, long fromVersion) {
        return readAsync(topic, key, fromVersion, () -> store.readStreamAsync(topic, key, fromVersion));
    }

    /**
     * {@link CursusEventStore#streamVersion} in a read span (version 0: the head alone).
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return the version of its last event, 0 when it has none
     */
    public long streamVersion(String topic, String key) {
        return read(topic, key, HEAD, () -> store.streamVersion(topic, key));
    }

    /**
     * {@link CursusEventStore#streamVersionAsync} in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return a future of the version of its last event
     */
    public CompletableFuture<Long> streamVersionAsync(String topic, String key) {
        return readAsync(topic, key, HEAD, () -> store.streamVersionAsync(topic, key));
    }

    /**
     * {@link CursusEventStore#readSnapshot} in a read span (version 0: the head alone).
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return the snapshot, or empty when none was saved
     */
    public Optional<Snapshot> readSnapshot(String topic, String key) {
        return read(topic, key, HEAD, () -> store.readSnapshot(topic, key));
    }

    /**
     * {@link CursusEventStore#readSnapshotAsync} in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return a future of the snapshot, or of empty when none was saved
     */
    public CompletableFuture<Optional<Snapshot>> readSnapshotAsync(String topic, String key) {
        return readAsync(topic, key, HEAD, () -> store.readSnapshotAsync(topic, key));
    }

    /**
     * {@link CursusEventStore#replayProof(String, String)} in a read span (from version 1).
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @return the complete proof
     */
    public ReplayProof replayProof(String topic, String matchId) {
        return read(topic, matchId, WHOLE, () -> store.replayProof(topic, matchId));
    }

    /**
     * {@link CursusEventStore#replayProof(String, String, long)} in a read span.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @param expectedLastSequence the last sequence the caller expects, at least 1
     * @return the complete proof
     */
    public ReplayProof replayProof(String topic, String matchId, long expectedLastSequence) {
        return read(topic, matchId, WHOLE, () -> store.replayProof(topic, matchId, expectedLastSequence));
    }

    /**
     * {@link CursusEventStore#replayProofAsync(String, String)} in a read span.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @return the proof's future
     */
    public CompletableFuture<ReplayProof> replayProofAsync(String topic, String matchId) {
        return readAsync(topic, matchId, WHOLE, () -> store.replayProofAsync(topic, matchId));
    }

    /**
     * {@link CursusEventStore#replayProofAsync(String, String, long)} in a read span.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @param expectedLastSequence the last sequence the caller expects, at least 1
     * @return the proof's future
     */
    public CompletableFuture<ReplayProof> replayProofAsync(String topic, String matchId, long expectedLastSequence) {
        return readAsync(topic, matchId, WHOLE, () -> store.replayProofAsync(topic, matchId, expectedLastSequence));
    }

    /**
     * {@link CursusEventStore#eventRange(String, String, long, long)} in a read span from
     * {@code fromSequence}.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @param fromSequence the first sequence wanted, at least 1
     * @param toSequence the last sequence wanted (inclusive)
     * @return the proof and the events
     */
    public EventRange eventRange(String topic, String matchId, long fromSequence, long toSequence) {
        return eventRange(topic, matchId, fromSequence, toSequence, 0);
    }

    /**
     * {@link CursusEventStore#eventRange(String, String, long, long, int)} in a read span from
     * {@code fromSequence}.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @param fromSequence the first sequence wanted, at least 1
     * @param toSequence the last sequence wanted (inclusive)
     * @param maxRecords at most this many events (0: the broker's default)
     * @return the proof and the events
     */
    public EventRange eventRange(String topic, String matchId, long fromSequence, long toSequence, int maxRecords) {
        return read(topic, matchId, fromSequence,
                () -> store.eventRange(topic, matchId, fromSequence, toSequence, maxRecords));
    }

    /**
     * {@link CursusEventStore#eventRangeAsync} in a read span from {@code fromSequence}.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @param fromSequence the first sequence wanted, at least 1
     * @param toSequence the last sequence wanted (inclusive)
     * @param maxRecords at most this many events (0: the broker's default)
     * @return a future of the proof and the events
     */
    public CompletableFuture<EventRange> eventRangeAsync(String topic, String matchId, long fromSequence,
            long toSequence, int maxRecords) {
        return readAsync(topic, matchId, fromSequence,
                () -> store.eventRangeAsync(topic, matchId, fromSequence, toSequence, maxRecords));
    }

    /**
     * {@link CursusEventStore#loadAggregate(String, String, Object, BiFunction, Function, Function)}
     * in a read span (from version 1); the aggregate's own appends are not traced.
     *
     * @param <S> the state's type
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param initial the state of an aggregate without events
     * @param apply folds one event into the state
     * @param deserialize reads a snapshot's state
     * @param serialize writes the state for a snapshot
     * @return the loaded aggregate
     */
    public <S> Aggregate<S> loadAggregate(String topic, String key, S initial, BiFunction<S, StoredEvent, S> apply,
            Function<String, S> deserialize, Function<S, String> serialize) {
        return loadAggregate(topic, key, initial, apply, deserialize, serialize,
                CursusEventStore.DEFAULT_SNAPSHOT_EVERY);
    }

    /**
     * {@link CursusEventStore#loadAggregate(String, String, Object, BiFunction, Function, Function, int)}
     * in a read span (from version 1); the aggregate's own appends are not traced.
     *
     * @param <S> the state's type
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param initial the state of an aggregate without events
     * @param apply folds one event into the state
     * @param deserialize reads a snapshot's state
     * @param serialize writes the state for a snapshot
     * @param snapshotEvery how many events may pass between snapshots (0: never snapshot)
     * @return the loaded aggregate
     */
    public <S> Aggregate<S> loadAggregate(String topic, String key, S initial, BiFunction<S, StoredEvent, S> apply,
            Function<String, S> deserialize, Function<S, String> serialize, int snapshotEvery) {
        return read(topic, key, WHOLE,
                () -> store.loadAggregate(topic, key, initial, apply, deserialize, serialize, snapshotEvery));
    }

    /**
     * {@link CursusEventStore#loadAggregateAsync} in a read span (from version 1), ended when
     * the aggregate is loaded and folded.
     *
     * @param <S> the state's type
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param initial the state of an aggregate without events
     * @param apply folds one event into the state
     * @param deserialize reads a snapshot's state
     * @param serialize writes the state for a snapshot
     * @param snapshotEvery how many events may pass between snapshots (0: never snapshot)
     * @return a future of the loaded aggregate
     */
    public <S> CompletableFuture<Aggregate<S>> loadAggregateAsync(String topic, String key, S initial,
            BiFunction<S, StoredEvent, S> apply, Function<String, S> deserialize, Function<S, String> serialize,
            int snapshotEvery) {
        return readAsync(topic, key, WHOLE, () -> store.loadAggregateAsync(topic, key, initial, apply, deserialize,
                serialize, snapshotEvery));
    }

    /**
     * {@link CursusEventStore#stream(String, String, long)}: each page request in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return the pages, read while iterating
     */
    public TracingEventPages stream(String topic, String key, long fromVersion) {
        return stream(topic, key, fromVersion, PageLimits.DEFAULT);
    }

    /**
     * {@link CursusEventStore#stream(String, String, long, PageLimits)}: each page request in a
     * read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @param limits bounds of one page
     * @return the pages, read while iterating
     */
    public TracingEventPages stream(String topic, String key, long fromVersion, PageLimits limits) {
        return new TracingEventPages(tracing, store.stream(topic, key, fromVersion, limits), topic, key, fromVersion);
    }

    /**
     * {@link CursusEventStore#history(String, String, long)}: each page request in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return the pages, read while iterating
     */
    public TracingEventPages history(String topic, String key, long fromVersion) {
        return history(topic, key, fromVersion, 0, PageLimits.DEFAULT);
    }

    /**
     * {@link CursusEventStore#history(String, String, long, long, PageLimits)}: each page
     * request in a read span.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @param toVersion the last version wanted, or 0 for the aggregate's current version
     * @param limits bounds of one page
     * @return the pages, read while iterating
     */
    public TracingEventPages history(String topic, String key, long fromVersion, long toVersion, PageLimits limits) {
        return new TracingEventPages(tracing, store.history(topic, key, fromVersion, toVersion, limits), topic, key,
                fromVersion);
    }

    private <T> T read(String topic, String aggregate, long fromVersion, Supplier<T> call) {
        return CursusTracing.around(tracing.start(Telemetry.read(topic, aggregate, fromVersion)), call);
    }

    private <T> CompletableFuture<T> readAsync(String topic, String aggregate, long fromVersion,
            Supplier<CompletableFuture<T>> call) {
        return CursusTracing.aroundAsync(tracing.start(Telemetry.read(topic, aggregate, fromVersion)), call);
    }
}
