package io.cursus;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads the packed record view the library returns for one poll (layout in
 * {@code bridge/src/records.rs}): one JNI call per poll instead of one per record field.
 *
 * <pre>
 * u32 count, then per record:
 *   u32 topic_len, topic; u32 partition; u64 offset; i64 timestamp;
 *   i32 key_len, key (-1: no key); u32 value_len, value;
 *   i32 metadata_len, metadata (-1: none);
 *   i32 event_type_len (-1: not an event), else event_type, u32 schema_version,
 *     u64 aggregate_version, i32 event_id_len, event_id (-1: none)
 * </pre>
 * All integers little-endian.
 */
final class RecordView {
    private static final byte[] EMPTY = new byte[0];

    private RecordView() {}

    static List<ConsumerRecord> decode(byte[] packed) {
        ByteBuffer b = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
        int n = b.getInt();
        List<ConsumerRecord> out = new ArrayList<>(n);
        byte[] lastTopicBytes = null;
        String lastTopic = null;
        for (int i = 0; i < n; i++) {
            byte[] topicBytes = bytes(b);
            // Records of a poll mostly share a topic: decode its name once.
            if (lastTopicBytes == null || !Arrays.equals(topicBytes, lastTopicBytes)) {
                lastTopicBytes = topicBytes;
                lastTopic = new String(topicBytes, StandardCharsets.UTF_8);
            }
            int partition = b.getInt();
            long offset = b.getLong();
            long timestamp = b.getLong();
            byte[] key = optBytes(b);
            byte[] value = bytes(b);
            String metadata = text(optBytes(b));
            String eventType = text(optBytes(b));
            int schemaVersion = 0;
            long aggregateVersion = -1;
            String eventId = null;
            if (eventType != null) {
                schemaVersion = b.getInt();
                aggregateVersion = b.getLong();
                eventId = text(optBytes(b));
            }
            out.add(new ConsumerRecord(lastTopic, partition, offset, timestamp, key, value, metadata, eventType,
                    schemaVersion, aggregateVersion, eventId));
        }
        return List.copyOf(out);
    }

    /** A field that is always present. */
    private static byte[] bytes(ByteBuffer b) {
        byte[] out = optBytes(b);
        if (out == null) {
            throw new IllegalStateException("record view: a required field is marked absent");
        }
        return out;
    }

    /** A field whose length -1 says it is absent (null). */
    private static byte[] optBytes(ByteBuffer b) {
        int len = b.getInt();
        if (len < 0) {
            return null;
        }
        if (len == 0) {
            return EMPTY;
        }
        byte[] out = new byte[len];
        b.get(out);
        return out;
    }

    private static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }
}
