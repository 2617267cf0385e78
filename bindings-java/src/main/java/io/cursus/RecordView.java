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
            byte[] key = bytes(b);
            byte[] value = bytes(b);
            out.add(new ConsumerRecord(lastTopic, partition, offset, timestamp, key, value));
        }
        return List.copyOf(out);
    }

    private static byte[] bytes(ByteBuffer b) {
        int len = b.getInt();
        if (len == 0) {
            return EMPTY;
        }
        byte[] out = new byte[len];
        b.get(out);
        return out;
    }
}
