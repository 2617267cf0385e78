package io.cursus;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The event store of event-sourcing topics (created with
 * {@link NewTopic#eventSourcing(boolean) eventSourcing(true)}): per aggregate key, a stream of
 * events numbered 1, 2, 3, ... appended with optimistic concurrency, plus snapshots; and paged
 * reads of a stream, of its original history, or of any partition (browse).
 *
 * <pre>{@code
 * try (CursusEventStore store = new CursusEventStore(ClientConfig.of("127.0.0.1:9000"))) {
 *     store.append("orders", "order-1", 0, Event.of("Created", "{\"total\":10}"));
 *     store.append("orders", "order-1", 1, Event.of("Paid", "{}").withMetadata("{\"by\":\"alice\"}"));
 *     for (StoredEvent e : store.readStream("orders", "order-1").events()) {
 *         System.out.println(e.version() + " " + e.eventType() + " " + e.payload());
 *     }
 * }
 * }</pre>
 *
 * <p>Payloads, metadata and snapshot states are UTF-8 text; aggregate keys are text without
 * whitespace. The partition of an aggregate is chosen by key, as for keyed records.
 *
 * <p><b>Aggregate replay topics</b> (created with
 * {@link NewTopic#aggregateReplay(boolean) aggregateReplay(true)}, which needs event sourcing
 * and idempotence) give every event an identity (its {@linkplain Event#withEventId event id}
 * and payload digest): retried appends are stored once, {@link #replayProof} proves that an
 * aggregate's retained events are complete from sequence 1, and {@link #eventRange} reads a
 * range of them under such a proof. Plain sends to such a topic are refused
 * ({@code aggregate_publish_requires_append_stream}).
 *
 * <p>Thread-safe: share one store between threads. Like {@link CursusAdmin}, every method
 * blocks until the broker answers, at most {@code request_timeout_ms} per request (a paged
 * read makes one request per page), and throws a {@link CursusException} subclass on
 * failure: a {@link ConflictException} with code {@code version_conflict} and fields
 * {@code current} and {@code expected} when an append's expected version is not the
 * aggregate's version (see {@link #append}); a {@link ValidationException} with code
 * {@code event_sourcing_not_enabled} on a topic created without event sourcing. Close it when
 * done (try-with-resources); a closed store throws {@link CursusClosedException}.
 *
 * <p><b>Futures.</b> Each call that reads or writes one result also has a variant returning a
 * {@link CompletableFuture} ({@link #appendAsync}, {@link #replayProofAsync}, ...): the
 * library runs the call in the background on its own runtime (no thread waits per call in
 * flight), and the future completes on this store's {@code cursus-event-store-N-callbacks}
 * thread, where continuations run (as a producer's send futures do), never on an engine
 * thread. Whatever the blocking variant throws completes the future exceptionally with that
 * exception instead.
 */
public final class CursusEventStore extends NativeResource {
    /** How many events {@link #loadAggregate} lets pass between snapshots unless told: 500. */
    public static final int DEFAULT_SNAPSHOT_EVERY = 500;

    private final Callbacks callbacks = new Callbacks("event-store");

    /**
     * Connects to the cluster.
     *
     * @param config client options (those of {@link CursusAdmin})
     * @throws CursusException if the options are invalid or no broker answers within
     *     {@code connect_timeout_ms}
     */
    public CursusEventStore(ClientConfig config) {
        super("event store", Objects.requireNonNull(config, "config").withNative(NativeBridge::eventStoreNew),
                NativeBridge::eventStoreDestroy);
    }

    /**
     * Appends an event to aggregate {@code key} if the aggregate's version is
     * {@code expectedVersion}: the event gets version {@code expectedVersion + 1}.
     *
     * <p>The append carries the event's {@linkplain Event#withEventId id} (or one the engine
     * generates). On an {@linkplain NewTopic#aggregateReplay(boolean) aggregate replay topic}
     * an append whose outcome is unknown (a lost reply) is retried by the engine with the same
     * id, and appending the same event again at the same expected version (same id and
     * payload) answers the original version and offset: it is stored once.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key (text without whitespace)
     * @param expectedVersion the version the caller last saw (0 for a new aggregate)
     * @param event the event
     * @return the event's version, offset and partition
     * @throws ConflictException with code {@code version_conflict} when another append got
     *     there first (fields {@code current}, the aggregate's version, and {@code expected},
     *     the version this event would have got: {@code expectedVersion + 1}): read the stream
     *     again, decide again, append at the new version; with code
     *     {@code aggregate_identity_conflict} on a replay topic when the version or the event
     *     id is already used by another event; with code {@code stream_version_reserved} while
     *     a transaction holds the aggregate ({@link CursusProducer#appendStream})
     */
    public Appended append(String topic, String key, long expectedVersion, Event event) {
        checkAppend(topic, key, expectedVersion, event);
        if (event.hasEventId()) {
            return call(h -> appended(event.withBuilder(
                    b -> NativeBridge.eventStoreAppendEvent(h, topic, key, expectedVersion, b))));
        }
        return call(h -> appended(
                NativeBridge.eventStoreAppend(h, topic, key, expectedVersion, event.type(), event.payload(),
                        event.metadata().isEmpty() ? null : event.metadata(), event.schemaVersion())));
    }

    /** Refuses the arguments of an append (also a transaction's) the native call cannot take. */
    static void checkAppend(String topic, String key, long expectedVersion, Event event) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(event, "event");
        if (expectedVersion < 0) {
            throw new IllegalArgumentException("expectedVersion must not be negative: " + expectedVersion);
        }
    }

    /** Reads an appended handle (destroying it). */
    static Appended appended(long handle) {
        return ResultReaders.appended(handle);
    }

    /**
     * Proves aggregate {@code matchId}'s retained events on an aggregate replay topic; see
     * {@link #replayProof(String, String, long)}. Without an expected last sequence, any
     * last sequence is accepted.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id: its key
     * @return the complete proof
     * @throws CursusException with code {@code aggregate_proof_<status>} when the proof is not
     *     complete ({@link ReplayProof#fromException} reads it)
     */
    public ReplayProof replayProof(String topic, String matchId) {
        return proof(topic, matchId, NO_EXPECTATION);
    }

    /** The library's "no expected last sequence". */
    private static final long NO_EXPECTATION = -1;

    /**
     * Proves that aggregate {@code matchId}'s retained events on an
     * {@linkplain NewTopic#aggregateReplay(boolean) aggregate replay topic} are exactly
     * sequences 1 to {@code expectedLastSequence}, with verified payload digests and unique
     * event ids (AGGREGATE_REPLAY_PROOF): a replay of them rebuilds the aggregate exactly.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id: its key
     * @param expectedLastSequence the last sequence the caller expects, at least 1 (0 or a
     *     negative value is the library's {@code invalid_argument}, as in every language)
     * @return the complete proof
     * @throws CursusException with code {@code aggregate_proof_<status>} when the proof is not
     *     complete: {@code aggregate_proof_not_found} (no events), {@code ..._retention_gap},
     *     {@code ..._sequence_gap}, {@code ..._identity_conflict} or
     *     {@code ..._proof_unavailable} (e.g. the last sequence is not
     *     {@code expectedLastSequence}); {@link ReplayProof#fromException} reads the proof
     */
    public ReplayProof replayProof(String topic, String matchId, long expectedLastSequence) {
        // -1 is the library's "none": a caller's -1 stays an error.
        return proof(topic, matchId, expectedLastSequence == NO_EXPECTATION ? Long.MIN_VALUE : expectedLastSequence);
    }

    private ReplayProof proof(String topic, String matchId, long expectedLastSequence) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(matchId, "matchId");
        return call(h -> ReplayProof.read(
                NativeBridge.eventStoreReplayProof(h, topic, matchId, expectedLastSequence), topic, matchId));
    }

    /**
     * Reads events {@code fromSequence} to {@code toSequence} of aggregate {@code matchId},
     * at most 1,000; see {@link #eventRange(String, String, long, long, int)}.
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
     * Reads the events of aggregate {@code matchId} with sequences {@code fromSequence} to
     * {@code toSequence} (inclusive; AGGREGATE_EVENT_RANGE_READ) under a complete replay
     * proof, in sequence order.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @param fromSequence the first sequence wanted, at least 1
     * @param toSequence the last sequence wanted (inclusive)
     * @param maxRecords at most this many events (0: the broker's default, 1,000)
     * @return the proof and the events
     * @throws CursusException with code {@code aggregate_range_<status>} when the proof is
     *     not complete ({@link ReplayProof#fromException} reads it), or
     *     {@code aggregate_range_incomplete} (fields {@code from}, {@code to},
     *     {@code returned}; no proof) when fewer events exist than asked for, e.g. past the
     *     aggregate's last event
     * @throws IllegalArgumentException if a sequence or {@code maxRecords} is negative
     */
    public EventRange eventRange(String topic, String matchId, long fromSequence, long toSequence,
            int maxRecords) {
        checkRange(topic, matchId, fromSequence, toSequence, maxRecords);
        return call(h -> EventRange.read(
                NativeBridge.eventStoreEventRange(h, topic, matchId, fromSequence, toSequence, maxRecords),
                topic, matchId));
    }

    private static void checkRange(String topic, String matchId, long fromSequence, long toSequence,
            int maxRecords) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(matchId, "matchId");
        if (fromSequence < 0 || toSequence < 0 || maxRecords < 0) {
            throw new IllegalArgumentException("sequences and maxRecords must not be negative: " + fromSequence
                    + ".." + toSequence + ", " + maxRecords);
        }
    }

    private static void requireKey(String topic, String key) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(key, "key");
    }

    /**
     * The aggregate's current version.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return the version of its last event, 0 when it has none
     */
    public long streamVersion(String topic, String key) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(key, "key");
        return call(h -> NativeBridge.eventStoreStreamVersion(h, topic, key));
    }

    /**
     * Saves {@code state} as the aggregate's snapshot at {@code version}, replacing any earlier
     * snapshot (only the latest is kept).
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param version the last version the state includes (at most the aggregate's version,
     *     else a {@link ConflictException} with code {@code snapshot_version_exceeds_stream})
     * @param state the serialised state
     */
    public void saveSnapshot(String topic, String key, long version, String state) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(state, "state");
        run(h -> NativeBridge.eventStoreSaveSnapshot(h, topic, key, version, state));
    }

    /**
     * The aggregate's latest snapshot.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return the snapshot, or empty when none was saved
     */
    public Optional<Snapshot> readSnapshot(String topic, String key) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(key, "key");
        return call(h -> snapshot(NativeBridge.eventStoreReadSnapshot(h, topic, key)));
    }

    /**
     * Reads aggregate {@code key}'s whole stream: its latest snapshot and every event after it
     * (all pages). Equivalent to {@code readStream(topic, key, 1)}.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return the snapshot, if any, and the events after it
     */
    public StreamRead readStream(String topic, String key) {
        return readStream(topic, key, 1);
    }

    /**
     * Reads aggregate {@code key}'s stream from {@code fromVersion}, all pages at once: the
     * latest snapshot if its version is at least {@code fromVersion}, and the events after it
     * (else the events from {@code fromVersion}). For long streams, iterate over
     * {@link #stream} instead.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return the snapshot, if any, and the events
     */
    public StreamRead readStream(String topic, String key, long fromVersion) {
        Optional<Snapshot> snapshot = Optional.empty();
        List<StoredEvent> events = new ArrayList<>();
        boolean first = true;
        for (EventPage page : stream(topic, key, fromVersion)) {
            if (first) {
                snapshot = page.snapshot();
                first = false;
            }
            events.addAll(page.events());
        }
        return new StreamRead(snapshot, List.copyOf(events));
    }

    /**
     * The pages of aggregate {@code key}'s stream from {@code fromVersion}, with the broker's
     * page limits; see {@link #stream(String, String, long, PageLimits)}.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return the pages, read while iterating
     */
    public EventPages stream(String topic, String key, long fromVersion) {
        return stream(topic, key, fromVersion, PageLimits.DEFAULT);
    }

    /**
     * The pages of aggregate {@code key}'s stream from {@code fromVersion}, read one request at
     * a time while iterating (each iteration reads from the start again). The first page
     * carries the latest snapshot if its version is at least {@code fromVersion}; the events
     * then start after it.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @param limits bounds of one page
     * @return the pages
     */
    public EventPages stream(String topic, String key, long fromVersion, PageLimits limits) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(limits, "limits");
        return new EventPages(this, topic,
                () -> NativeBridge.eventCursorStream(topic, key, fromVersion, limits.maxRecords(), limits.maxBytes()));
    }

    /**
     * The pages of aggregate {@code key}'s original events from {@code fromVersion} to its
     * current version, never a snapshot; see
     * {@link #history(String, String, long, long, PageLimits)}.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return the pages, read while iterating
     */
    public EventPages history(String topic, String key, long fromVersion) {
        return history(topic, key, fromVersion, 0, PageLimits.DEFAULT);
    }

    /**
     * The pages of aggregate {@code key}'s original events (READ_STREAM_HISTORY: never a
     * snapshot) from {@code fromVersion} to {@code toVersion}, read one request at a time
     * while iterating. Each page reports its {@linkplain EventPage#completeness() completeness}
     * (events removed by retention or compaction make it partial) and the aggregate's
     * {@linkplain EventPage#headVersion() current version}.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @param toVersion the last version wanted, or 0 for the aggregate's current version
     * @param limits bounds of one page
     * @return the pages
     */
    public EventPages history(String topic, String key, long fromVersion, long toVersion, PageLimits limits) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(limits, "limits");
        return new EventPages(this, topic, () -> NativeBridge.eventCursorHistory(topic, key, fromVersion, toVersion,
                limits.maxRecords(), limits.maxBytes()));
    }

    /**
     * The pages of the committed records of a partition of any topic (BROWSE_MESSAGES) from
     * {@code fromOffset} to the readable end; see
     * {@link #browse(String, int, long, long, PageLimits)}.
     *
     * @param topic the topic
     * @param partition the partition
     * @param fromOffset the first offset wanted
     * @return the pages, read while iterating
     */
    public EventPages browse(String topic, int partition, long fromOffset) {
        return browse(topic, partition, fromOffset, -1, PageLimits.DEFAULT);
    }

    /**
     * The pages of the committed records of a partition of any topic (BROWSE_MESSAGES), read
     * one request at a time while iterating. Events carry their aggregate fields; other
     * records have version 0. Browsing consumes nothing and commits nothing.
     *
     * @param topic the topic
     * @param partition the partition
     * @param fromOffset the first offset wanted
     * @param toOffset the end (exclusive), or -1 for the end of what is readable
     * @param limits bounds of one page
     * @return the pages
     */
    public EventPages browse(String topic, int partition, long fromOffset, long toOffset, PageLimits limits) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(limits, "limits");
        if (partition < 0) {
            throw new IllegalArgumentException("partition must not be negative: " + partition);
        }
        return new EventPages(this, topic, () -> NativeBridge.eventCursorBrowse(topic, partition, fromOffset, toOffset,
                limits.maxRecords(), limits.maxBytes()));
    }

    /**
     * Loads aggregate {@code key} with automatic snapshots every
     * {@value #DEFAULT_SNAPSHOT_EVERY} events; see
     * {@link #loadAggregate(String, String, Object, BiFunction, Function, Function, int)}.
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
        return loadAggregate(topic, key, initial, apply, deserialize, serialize, DEFAULT_SNAPSHOT_EVERY);
    }

    /**
     * Loads aggregate {@code key}: reads its latest snapshot and every event after it, and
     * folds them into a state: {@code deserialize} of the snapshot's state (else
     * {@code initial}), then {@code apply} for each event in order. The returned
     * {@link Aggregate} appends at the loaded version and saves a snapshot (through
     * {@code serialize}) every {@code snapshotEvery} events; see {@link Aggregate} for the
     * conflict-retry pattern.
     *
     * @param <S> the state's type (preferably immutable: {@code apply} returns the next state)
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param initial the state of an aggregate without events (or snapshot)
     * @param apply folds one event into the state, without side effects
     * @param deserialize reads a snapshot's state
     * @param serialize writes the state for a snapshot
     * @param snapshotEvery how many events may pass between snapshots (0: never snapshot)
     * @return the loaded aggregate
     */
    public <S> Aggregate<S> loadAggregate(String topic, String key, S initial, BiFunction<S, StoredEvent, S> apply,
            Function<String, S> deserialize, Function<S, String> serialize, int snapshotEvery) {
        checkLoad(topic, key, apply, deserialize, serialize, snapshotEvery);
        Aggregate.Handle handle = new Aggregate.Handle(
                call(h -> NativeBridge.eventStoreLoadAggregate(h, topic, key, snapshotEvery)));
        EventPage loaded;
        try {
            loaded = handle.call(a -> page(topic, NativeBridge.aggregateLoaded(a)));
        } catch (RuntimeException e) {
            handle.close();
            throw e;
        }
        return new Aggregate<>(this, handle, topic, key, loaded, initial, apply, deserialize, serialize);
    }

    /**
     * {@link #append} with a future: completed with the event's version, offset and partition,
     * or exceptionally with what {@link #append} throws (e.g. a {@link ConflictException} with
     * code {@code version_conflict}).
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key (text without whitespace)
     * @param expectedVersion the version the caller last saw (0 for a new aggregate)
     * @param event the event
     * @return the append's future
     */
    public CompletableFuture<Appended> appendAsync(String topic, String key, long expectedVersion, Event event) {
        return startAsync(callbacks, ResultReaders::readAppended, (h, completion) -> {
            checkAppend(topic, key, expectedVersion, event);
            event.withBuilder(b -> {
                NativeBridge.eventStoreAppendEventAsync(h, topic, key, expectedVersion, b, completion);
                return null;
            });
        });
    }

    /**
     * {@link #streamVersion} with a future.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return a future of the version of its last event (0 when it has none)
     */
    public CompletableFuture<Long> streamVersionAsync(String topic, String key) {
        return startAsync(callbacks, NativeBridge::streamVersionValue, (h, completion) -> {
            requireKey(topic, key);
            NativeBridge.eventStoreStreamVersionAsync(h, topic, key, completion);
        });
    }

    /**
     * {@link #saveSnapshot} with a future.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param version the last version the state includes
     * @param state the serialised state
     * @return a future completed once the snapshot is saved
     */
    public CompletableFuture<Void> saveSnapshotAsync(String topic, String key, long version, String state) {
        return startAsync(callbacks, (h, completion) -> {
            requireKey(topic, key);
            Objects.requireNonNull(state, "state");
            NativeBridge.eventStoreSaveSnapshotAsync(h, topic, key, version, state, completion);
        });
    }

    /**
     * {@link #readSnapshot} with a future.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @return a future of the snapshot, or of empty when none was saved
     */
    public CompletableFuture<Optional<Snapshot>> readSnapshotAsync(String topic, String key) {
        return startAsync(callbacks, r -> snapshot(NativeBridge.snapshotReadSnapshot(r)), (h, completion) -> {
            requireKey(topic, key);
            NativeBridge.eventStoreReadSnapshotAsync(h, topic, key, completion);
        });
    }

    /**
     * {@link #readStream(String, String, long)} with a future.
     *
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param fromVersion the first version wanted, at least 1
     * @return a future of the snapshot, if any, and the events
     */
    public CompletableFuture<StreamRead> readStreamAsync(String topic, String key, long fromVersion) {
        return startAsync(callbacks, p -> {
            EventPage page = readPage(topic, p);
            return new StreamRead(page.snapshot(), page.events());
        }, (h, completion) -> {
            requireKey(topic, key);
            NativeBridge.eventStoreReadStreamAsync(h, topic, key, fromVersion, completion);
        });
    }

    /**
     * {@link #replayProof(String, String)} with a future: completed with the complete proof, or
     * exceptionally with a {@link CursusException} whose code is
     * {@code aggregate_proof_<status>} ({@link ReplayProof#fromException} reads its proof).
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @return the proof's future
     */
    public CompletableFuture<ReplayProof> replayProofAsync(String topic, String matchId) {
        return proofAsync(topic, matchId, NO_EXPECTATION);
    }

    /**
     * {@link #replayProof(String, String, long)} with a future (as
     * {@link #replayProofAsync(String, String)}, also proving the last sequence).
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @param expectedLastSequence the last sequence the caller expects, at least 1
     * @return the proof's future
     */
    public CompletableFuture<ReplayProof> replayProofAsync(String topic, String matchId, long expectedLastSequence) {
        return proofAsync(topic, matchId,
                expectedLastSequence == NO_EXPECTATION ? Long.MIN_VALUE : expectedLastSequence);
    }

    private CompletableFuture<ReplayProof> proofAsync(String topic, String matchId, long expectedLastSequence) {
        return startAsync(callbacks, p -> ReplayProof.readLent(p, topic, matchId), (h, completion) -> {
            Objects.requireNonNull(topic, "topic");
            Objects.requireNonNull(matchId, "matchId");
            NativeBridge.eventStoreReplayProofAsync(h, topic, matchId, expectedLastSequence, completion);
        });
    }

    /**
     * {@link #eventRange(String, String, long, long, int)} with a future.
     *
     * @param topic an aggregate replay topic
     * @param matchId the aggregate (match) id
     * @param fromSequence the first sequence wanted, at least 1
     * @param toSequence the last sequence wanted (inclusive)
     * @param maxRecords at most this many events (0: the broker's default, 1,000)
     * @return a future of the proof and the events
     */
    public CompletableFuture<EventRange> eventRangeAsync(String topic, String matchId, long fromSequence,
            long toSequence, int maxRecords) {
        return startAsync(callbacks, r -> EventRange.readLent(r, topic, matchId), (h, completion) -> {
            checkRange(topic, matchId, fromSequence, toSequence, maxRecords);
            NativeBridge.eventStoreEventRangeAsync(h, topic, matchId, fromSequence, toSequence, maxRecords,
                    completion);
        });
    }

    /**
     * {@link #loadAggregate(String, String, Object, BiFunction, Function, Function, int)} with a
     * future. {@code deserialize} and {@code apply} run on this store's callback thread.
     *
     * @param <S> the state's type
     * @param topic an event-sourcing topic
     * @param key the aggregate key
     * @param initial the state of an aggregate without events (or snapshot)
     * @param apply folds one event into the state, without side effects
     * @param deserialize reads a snapshot's state
     * @param serialize writes the state for a snapshot
     * @param snapshotEvery how many events may pass between snapshots (0: never snapshot)
     * @return a future of the loaded aggregate
     */
    public <S> CompletableFuture<Aggregate<S>> loadAggregateAsync(String topic, String key, S initial,
            BiFunction<S, StoredEvent, S> apply, Function<String, S> deserialize, Function<S, String> serialize,
            int snapshotEvery) {
        CompletableFuture<LoadedAggregate> loading = startAsync(callbacks, a -> LoadedAggregate.read(topic, a),
                (h, completion) -> {
                    checkLoad(topic, key, apply, deserialize, serialize, snapshotEvery);
                    NativeBridge.eventStoreLoadAggregateAsync(h, topic, key, snapshotEvery, completion);
                });
        // Folded on the callback thread whether or not loading completed before this line.
        return thenOn(callbacks, loading, l -> CompletableFuture.completedFuture(new Aggregate<>(this, l.handle(),
                topic, key, l.page(), initial, apply, deserialize, serialize)));
    }

    /** A loaded aggregate's own handle and what loading read, before it is folded. */
    private record LoadedAggregate(Aggregate.Handle handle, EventPage page) {
        /** Reads an aggregate lent for a call: keeps a handle of its own. */
        static LoadedAggregate read(String topic, long lent) {
            Aggregate.Handle handle = new Aggregate.Handle(NativeBridge.aggregateShare(lent));
            try {
                return new LoadedAggregate(handle, CursusEventStore.page(topic, NativeBridge.aggregateLoaded(lent)));
            } catch (RuntimeException e) {
                handle.close();
                throw e;
            }
        }
    }

    private static void checkLoad(String topic, String key, Object apply, Object deserialize, Object serialize,
            int snapshotEvery) {
        requireKey(topic, key);
        Objects.requireNonNull(apply, "apply");
        Objects.requireNonNull(deserialize, "deserialize");
        Objects.requireNonNull(serialize, "serialize");
        if (snapshotEvery < 0) {
            throw new IllegalArgumentException("snapshotEvery must not be negative: " + snapshotEvery);
        }
    }

    /** Where this store's futures (also an aggregate's) complete. */
    Callbacks callbacks() {
        return callbacks;
    }

    /** Closes the store; only the first call does anything. */
    @Override
    public void close() {
        closeWith(NativeBridge::eventStoreClose);
    }

    @Override
    void afterClose() {
        callbacks.shutdown();
    }

    /** Reads a snapshot handle (0: none), destroying it. */
    static Optional<Snapshot> snapshot(long handle) {
        if (handle == 0) {
            return Optional.empty();
        }
        return Optional.of(ResultReaders.snapshot(handle));
    }

    /** Reads a page handle, destroying it. */
    static EventPage page(String topic, long handle) {
        return Results.take(handle, p -> readPage(topic, p), NativeBridge::eventPageDestroy);
    }

    /** Reads a page handle lent for a call (not destroyed). */
    static EventPage readPage(String topic, long p) {
        int partition = NativeBridge.eventPagePartition(p);
        List<StoredEvent> events = ResultReaders.list(NativeBridge.eventPageCount(p), i -> new StoredEvent(
                topic,
                partition,
                NativeBridge.eventPageOffset(p, i),
                NativeBridge.eventPageTimestamp(p, i),
                NativeBridge.eventPageKey(p, i),
                NativeBridge.eventPageVersion(p, i),
                NativeBridge.eventPageEventType(p, i),
                NativeBridge.eventPageSchemaVersion(p, i),
                NativeBridge.eventPageMetadata(p, i),
                NativeBridge.eventPagePayload(p, i)));
        return new EventPage(topic, partition, events, NativeBridge.eventPageHasMore(p),
                snapshot(NativeBridge.eventPageSnapshot(p)),
                Completeness.fromWireName(NativeBridge.eventPageCompleteness(p)),
                NativeBridge.eventPageHeadVersion(p),
                NativeBridge.eventPageReadableEndOffset(p));
    }
}
