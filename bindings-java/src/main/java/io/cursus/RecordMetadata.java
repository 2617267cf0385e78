package io.cursus;

/**
 * Where an acknowledged record was stored.
 *
 * @param topic topic
 * @param partition partition
 * @param offset offset, or -1 with {@code acks=0} where nothing confirms the write
 * @param timestamp timestamp sent with the record (milliseconds since the epoch)
 */
public record RecordMetadata(String topic, int partition, long offset, long timestamp) {
    /**
     * Whether the broker reported an offset (false with {@code acks=0}).
     *
     * @return whether {@link #offset()} is an offset
     */
    public boolean hasOffset() {
        return offset >= 0;
    }
}
