package io.cursus;

import java.util.List;
import java.util.Optional;

/**
 * Everything {@link CursusEventStore#readStream} read: the aggregate's latest snapshot (when
 * one is at or after the version the read started from) and every event after it, from all
 * pages.
 *
 * @param snapshot the snapshot to start from, or empty
 * @param events the events after the snapshot (or from the version asked for), in version
 *     order; immutable
 */
public record StreamRead(Optional<Snapshot> snapshot, List<StoredEvent> events) {
    /**
     * The version the read reached: the last event's, else the snapshot's, else 0 (nothing
     * was read: the aggregate has no event at or after the version the read started from).
     *
     * @return the version
     */
    public long lastVersion() {
        if (!events.isEmpty()) {
            return events.get(events.size() - 1).version();
        }
        return snapshot.map(Snapshot::version).orElse(0L);
    }
}
