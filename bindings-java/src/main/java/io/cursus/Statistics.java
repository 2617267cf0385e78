package io.cursus;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A snapshot of a client's statistics ({@link CursusProducer#statistics()},
 * {@link CursusConsumer#statistics()}, or a periodic statistics listener). Counters count
 * since the client was created. Immutable; the fields are those of
 * {@code docs/observability.md}.
 *
 * @param clientId the client's {@code client_id} option
 * @param kind {@code "producer"} or {@code "consumer"}
 * @param recordsSent records the broker acknowledged (producer)
 * @param bytesSent payload plus key bytes of those records (producer)
 * @param batchesSent batches the broker acknowledged (producer)
 * @param recordsReceived records the consumer's fetchers received
 * @param bytesReceived payload plus key bytes of those records (consumer)
 * @param requests request attempts sent to brokers (every retry is an attempt)
 * @param retries attempts that were retries
 * @param inFlightRequests attempts sent and not answered yet when the snapshot was taken
 * @param errors failed request attempts per error class; classes that never failed are
 *     absent (immutable)
 * @param produceLatency per batch, from sending it to its acknowledgement (producer)
 * @param fetchLatency per CONSUME request that returned records, to its records (consumer)
 * @param partitions one row per assigned partition (consumer; empty for a producer),
 *     immutable
 * @param json the whole snapshot as one JSON object (field names as in
 *     {@code docs/observability.md})
 */
public record Statistics(
        String clientId,
        String kind,
        long recordsSent,
        long bytesSent,
        long batchesSent,
        long recordsReceived,
        long bytesReceived,
        long requests,
        long retries,
        long inFlightRequests,
        Map<ErrorClass, Long> errors,
        Latency produceLatency,
        Latency fetchLatency,
        List<PartitionLag> partitions,
        String json) {
    /**
     * Copies the collections (immutable).
     *
     * @param clientId the client's {@code client_id} option
     * @param kind {@code "producer"} or {@code "consumer"}
     * @param recordsSent records the broker acknowledged (producer)
     * @param bytesSent payload plus key bytes of those records (producer)
     * @param batchesSent batches the broker acknowledged (producer)
     * @param recordsReceived records the consumer's fetchers received
     * @param bytesReceived payload plus key bytes of those records (consumer)
     * @param requests request attempts sent to brokers (every retry is an attempt)
     * @param retries attempts that were retries
     * @param inFlightRequests attempts sent and not answered yet when the snapshot was taken
     * @param errors failed request attempts per error class; classes that never failed are
     *     absent (immutable)
     * @param produceLatency per batch, from sending it to its acknowledgement (producer)
     * @param fetchLatency per CONSUME request that returned records, to its records (consumer)
     * @param partitions one row per assigned partition (consumer; empty for a producer),
     *     immutable
     * @param json the whole snapshot as one JSON object (field names as in
     *     {@code docs/observability.md})
     */
    public Statistics {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(kind, "kind");
        Map<ErrorClass, Long> e = new EnumMap<>(ErrorClass.class);
        e.putAll(Objects.requireNonNull(errors, "errors"));
        errors = Collections.unmodifiableMap(e);
        partitions = List.copyOf(partitions);
        Objects.requireNonNull(produceLatency, "produceLatency");
        Objects.requireNonNull(fetchLatency, "fetchLatency");
    }

    /**
     * Failed request attempts of one class (0 when none failed).
     *
     * @param errorClass the class
     * @return the count
     */
    public long errorCount(ErrorClass errorClass) {
        return errors.getOrDefault(errorClass, 0L);
    }

    /**
     * The sum of the known lags of {@link #partitions()} (0 for a producer).
     *
     * @return the total lag, in records
     */
    public long totalLag() {
        long sum = 0;
        for (PartitionLag p : partitions) {
            sum += p.lag().orElse(0);
        }
        return sum;
    }

    /**
     * A latency distribution, in microseconds (percentiles within about 6 %, the maximum
     * exact).
     *
     * @param count samples
     * @param p50Us median
     * @param p99Us 99th percentile
     * @param p999Us 99.9th percentile
     * @param maxUs the largest sample
     */
    public record Latency(long count, long p50Us, long p99Us, long p999Us, long maxUs) {}

    /**
     * One assigned partition of a consumer.
     *
     * @param topic the topic
     * @param partition the partition
     * @param position the offset after the last record poll returned there; before the
     *     first, the group's committed offset; before any commit, where
     *     {@code auto_offset_reset} starts; empty when unknown
     * @param endOffset the partition's end offset (LIST_OFFSETS latest) when the snapshot was
     *     taken
     * @param lag {@code endOffset - position}, empty when the position is unknown
     */
    public record PartitionLag(String topic, int partition, OptionalLong position, long endOffset,
            OptionalLong lag) {
        /**
         * Checks the arguments.
         *
         * @param topic the topic
         * @param partition the partition
         * @param position the offset after the last record poll returned there; before the
         *     first, the group's committed offset; before any commit, where
         *     {@code auto_offset_reset} starts; empty when unknown
         * @param endOffset the partition's end offset (LIST_OFFSETS latest) when the snapshot was
         *     taken
         * @param lag {@code endOffset - position}, empty when the position is unknown
         */
        public PartitionLag {
            Objects.requireNonNull(topic, "topic");
            Objects.requireNonNull(position, "position");
            Objects.requireNonNull(lag, "lag");
        }

        /**
         * The partition as a {@link TopicPartition}.
         *
         * @return the topic partition
         */
        public TopicPartition topicPartition() {
            return new TopicPartition(topic, partition);
        }
    }

    /** Reads a statistics handle (lent or owned; not destroyed here). */
    static Statistics read(long h) {
        Map<ErrorClass, Long> errors = new EnumMap<>(ErrorClass.class);
        for (ErrorClass c : ErrorClass.values()) {
            long n = NativeBridge.statisticsErrors(h, c.wireName());
            if (n != 0) {
                errors.put(c, n);
            }
        }
        return new Statistics(
                NativeBridge.statisticsClientId(h),
                NativeBridge.statisticsKind(h),
                NativeBridge.statisticsRecordsSent(h),
                NativeBridge.statisticsBytesSent(h),
                NativeBridge.statisticsBatchesSent(h),
                NativeBridge.statisticsRecordsReceived(h),
                NativeBridge.statisticsBytesReceived(h),
                NativeBridge.statisticsRequests(h),
                NativeBridge.statisticsRetries(h),
                NativeBridge.statisticsInFlightRequests(h),
                errors,
                new Latency(NativeBridge.statisticsProduceLatencyCount(h),
                        NativeBridge.statisticsProduceLatencyP50Us(h),
                        NativeBridge.statisticsProduceLatencyP99Us(h),
                        NativeBridge.statisticsProduceLatencyP999Us(h),
                        NativeBridge.statisticsProduceLatencyMaxUs(h)),
                new Latency(NativeBridge.statisticsFetchLatencyCount(h),
                        NativeBridge.statisticsFetchLatencyP50Us(h),
                        NativeBridge.statisticsFetchLatencyP99Us(h),
                        NativeBridge.statisticsFetchLatencyP999Us(h),
                        NativeBridge.statisticsFetchLatencyMaxUs(h)),
                ResultReaders.list(NativeBridge.statisticsPartitionCount(h), i -> new PartitionLag(
                        NativeBridge.statisticsPartitionTopic(h, i),
                        (int) NativeBridge.statisticsPartitionPartition(h, i),
                        optional(NativeBridge.statisticsPartitionPosition(h, i)),
                        NativeBridge.statisticsPartitionEndOffset(h, i),
                        optional(NativeBridge.statisticsPartitionLag(h, i)))),
                NativeBridge.statisticsJson(h));
    }

    private static OptionalLong optional(long v) {
        return v < 0 ? OptionalLong.empty() : OptionalLong.of(v);
    }
}
