package io.cursus;

import java.util.Objects;
import java.util.Optional;

/**
 * What the broker proved about an aggregate's retained events on an
 * {@linkplain NewTopic#aggregateReplay(boolean) aggregate replay topic}
 * ({@code AGGREGATE_REPLAY_PROOF}): that they are exactly sequences 1 to
 * {@link #latestRetainedSequence()}, each with its payload digest verified and a unique event
 * id, up to the committed offset {@link #proofHwm()}.
 *
 * <p>{@link CursusEventStore#replayProof} returns only complete proofs: a proof that is not
 * complete is thrown as a {@link CursusException} with code {@code aggregate_proof_<status>}
 * (e.g. {@code aggregate_proof_not_found}), and a range read under an incomplete proof as code
 * {@code aggregate_range_<status>}; {@link #fromException(CursusException)} reads the proof the
 * exception carries:
 *
 * <pre>{@code
 * try {
 *     ReplayProof proof = store.replayProof("matches", "m-7", 42);
 *     // replay events 1..42 with confidence
 * } catch (CursusException e) {
 *     ReplayProof failed = ReplayProof.fromException(e).orElseThrow(() -> e);
 *     log.warn("cannot replay {}: {} ({})", failed.matchId(), failed.status(), failed.diagnostic());
 * }
 * }</pre>
 *
 * @param topic the topic
 * @param matchId the aggregate (match) id
 * @param partition the aggregate's partition
 * @param status {@code complete}, {@code not_found}, {@code retention_gap},
 *     {@code sequence_gap}, {@code identity_conflict} or {@code proof_unavailable}
 * @param diagnostic why the proof is not complete (empty when it is)
 * @param eventCount the number of retained events found
 * @param earliestRetainedSequence the lowest retained sequence (0 when none)
 * @param latestRetainedSequence the highest retained sequence (0 when none)
 * @param firstOffset the offset of the first retained event
 * @param lastOffset the offset of the last retained event
 * @param firstEventId the first retained event's id
 * @param lastEventId the last retained event's id
 * @param sequenceComplete whether the sequences increase by exactly one
 * @param retentionCompleteFromSequenceOne whether the retained events start at sequence 1
 * @param proofHwm the committed offset (high-water mark) the proof covers
 */
public record ReplayProof(
        String topic,
        String matchId,
        int partition,
        String status,
        String diagnostic,
        long eventCount,
        long earliestRetainedSequence,
        long latestRetainedSequence,
        long firstOffset,
        long lastOffset,
        String firstEventId,
        String lastEventId,
        boolean sequenceComplete,
        boolean retentionCompleteFromSequenceOne,
        long proofHwm) {
    /** The status of a complete proof. */
    public static final String COMPLETE = "complete";

    /**
     * Checks the arguments; null texts are empty.
     *
     * @param topic the topic
     * @param matchId the aggregate (match) id
     * @param partition the aggregate's partition
     * @param status {@code complete}, {@code not_found}, {@code retention_gap},
     *     {@code sequence_gap}, {@code identity_conflict} or {@code proof_unavailable}
     * @param diagnostic why the proof is not complete (empty when it is)
     * @param eventCount the number of retained events found
     * @param earliestRetainedSequence the lowest retained sequence (0 when none)
     * @param latestRetainedSequence the highest retained sequence (0 when none)
     * @param firstOffset the offset of the first retained event
     * @param lastOffset the offset of the last retained event
     * @param firstEventId the first retained event's id
     * @param lastEventId the last retained event's id
     * @param sequenceComplete whether the sequences increase by exactly one
     * @param retentionCompleteFromSequenceOne whether the retained events start at sequence 1
     * @param proofHwm the committed offset (high-water mark) the proof covers
     */
    public ReplayProof {
        topic = topic == null ? "" : topic;
        matchId = matchId == null ? "" : matchId;
        status = status == null ? "" : status;
        diagnostic = diagnostic == null ? "" : diagnostic;
        firstEventId = firstEventId == null ? "" : firstEventId;
        lastEventId = lastEventId == null ? "" : lastEventId;
    }

    /**
     * Whether every retained event from sequence 1 on was verified (status {@code complete}).
     *
     * @return true for a complete proof
     */
    public boolean isComplete() {
        return COMPLETE.equals(status);
    }

    /**
     * The proof a failed replay proof or range read carries: the exception's {@code proof}
     * field (the broker's proof JSON), typed. Fields the JSON omits are zero or empty.
     *
     * @param e an exception thrown by {@link CursusEventStore#replayProof} or
     *     {@link CursusEventStore#eventRange} (or any other)
     * @return the proof, or empty when the exception carries none (another error)
     */
    public static Optional<ReplayProof> fromException(CursusException e) {
        Objects.requireNonNull(e, "e");
        String json = e.field("proof");
        if (json == null) {
            return Optional.empty();
        }
        // The engine's own parser, through the bridge: 0 when the text is no proof.
        long handle = NativeBridge.replayProofFromJson(json);
        if (handle == 0) {
            return Optional.empty();
        }
        return Optional.of(read(handle, NativeBridge.replayProofTopic(handle),
                NativeBridge.replayProofMatchId(handle)));
    }

    /** Reads a replay proof handle (destroying it), for the topic and id the caller asked about. */
    static ReplayProof read(long handle, String topic, String matchId) {
        return Results.take(handle, p -> readLent(p, topic, matchId), NativeBridge::replayProofDestroy);
    }

    /** Reads a replay proof handle lent for a call (not destroyed). */
    static ReplayProof readLent(long p, String topic, String matchId) {
        return new ReplayProof(
                topic,
                matchId,
                NativeBridge.replayProofPartition(p),
                NativeBridge.replayProofStatus(p),
                NativeBridge.replayProofDiagnostic(p),
                NativeBridge.replayProofEventCount(p),
                NativeBridge.replayProofEarliestSequence(p),
                NativeBridge.replayProofLatestSequence(p),
                NativeBridge.replayProofFirstOffset(p),
                NativeBridge.replayProofLastOffset(p),
                NativeBridge.replayProofFirstEventId(p),
                NativeBridge.replayProofLastEventId(p),
                NativeBridge.replayProofSequenceComplete(p),
                NativeBridge.replayProofRetentionComplete(p),
                NativeBridge.replayProofHwm(p));
    }
}
