package io.cursus;

/**
 * Where {@link CursusEventStore#append} stored an event.
 *
 * @param version the version the event got in its aggregate's stream (the expected version
 *     plus one)
 * @param offset the event's offset in the partition
 * @param partition the partition of the aggregate (chosen by key)
 */
public record Appended(long version, long offset, int partition) {}
