package io.cursus;

import java.util.List;
import java.util.Optional;

/**
 * One page of a paged read ({@link CursusEventStore#stream}, {@link CursusEventStore#history},
 * {@link CursusEventStore#browse}).
 *
 * @param topic the topic read
 * @param partition the partition read
 * @param events the events (or browsed records) of the page, in order; immutable
 * @param hasMore whether more pages follow
 * @param snapshot stream reads, first page: the aggregate's latest snapshot at or after the
 *     version the read started from (the events then follow it); otherwise empty
 * @param completeness history reads: how complete the page is; null for other reads
 * @param headVersion history reads: the aggregate's current version; 0 for other reads
 * @param readableEndOffset browse reads: the end of what is readable in the partition
 *     (exclusive); -1 for other reads
 */
public record EventPage(
        String topic,
        int partition,
        List<StoredEvent> events,
        boolean hasMore,
        Optional<Snapshot> snapshot,
        Completeness completeness,
        long headVersion,
        long readableEndOffset) {}
