package io.cursus;

import java.util.List;
import java.util.Objects;

/**
 * The result of a range read ({@link CursusEventStore#eventRange}): events of one aggregate,
 * in sequence order, read under a complete {@linkplain ReplayProof replay proof}.
 *
 * @param proof the proof the range was read under (complete)
 * @param events the events, in sequence order (immutable; at most the read's
 *     {@code maxRecords})
 */
public record EventRange(ReplayProof proof, List<RangeEvent> events) {
    /**
     * Checks the arguments and copies the list.
     *
     * @param proof the proof the range was read under (complete)
     * @param events the events, in sequence order (immutable; at most the read's
     *     {@code maxRecords})
     */
    public EventRange {
        Objects.requireNonNull(proof, "proof");
        events = List.copyOf(events);
    }

    /** Reads an event range handle (destroying it). */
    static EventRange read(long handle, String topic, String matchId) {
        return Results.take(handle, r -> readLent(r, topic, matchId), NativeBridge::eventRangeDestroy);
    }

    /** Reads an event range handle lent for a call (not destroyed). */
    static EventRange readLent(long r, String topic, String matchId) {
        return new EventRange(
                ReplayProof.read(NativeBridge.eventRangeProof(r), topic, matchId),
                ResultReaders.list(NativeBridge.eventRangeCount(r), i -> new RangeEvent(
                        NativeBridge.eventRangeOffset(r, i),
                        NativeBridge.eventRangeSequence(r, i),
                        NativeBridge.eventRangeEventId(r, i),
                        NativeBridge.eventRangeEventType(r, i),
                        NativeBridge.eventRangePayload(r, i))));
    }
}
