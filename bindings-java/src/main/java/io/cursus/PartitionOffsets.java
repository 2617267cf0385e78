package io.cursus;

/**
 * One partition's offsets from LIST_OFFSETS.
 *
 * @param partition partition id
 * @param earliest first retained offset
 * @param latest next readable committed offset
 * @param logEndOffset log end offset
 * @param highWatermark high-water mark
 */
public record PartitionOffsets(int partition, long earliest, long latest, long logEndOffset, long highWatermark) {}
