package io.cursus;

/**
 * Bounds of one page of a paged read; 0 leaves a bound to the broker's default (stream reads:
 * 256 events and 8 MiB; history and browse reads: 100 records and 1 MiB).
 *
 * @param maxRecords the most events (records) per page, or 0 (stream reads: 1 to 4096)
 * @param maxBytes the most bytes per page, or 0 (stream reads: 1024 to 33554432)
 */
public record PageLimits(int maxRecords, int maxBytes) {
    /** The broker's defaults. */
    public static final PageLimits DEFAULT = new PageLimits(0, 0);

    /**
     * Checks the arguments (the broker checks the ranges).
     *
     * @param maxRecords the most events (records) per page, or 0 (stream reads: 1 to 4096)
     * @param maxBytes the most bytes per page, or 0 (stream reads: 1024 to 33554432)
     */
    public PageLimits {
        if (maxRecords < 0 || maxBytes < 0) {
            throw new IllegalArgumentException("page limits must not be negative: " + maxRecords + ", " + maxBytes);
        }
    }

    /**
     * At most {@code maxRecords} events per page, the broker's default byte bound.
     *
     * @param maxRecords the most events per page (0: the broker's default)
     * @return the limits
     */
    public static PageLimits ofRecords(int maxRecords) {
        return new PageLimits(maxRecords, 0);
    }
}
