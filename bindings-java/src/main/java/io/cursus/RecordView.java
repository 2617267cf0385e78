package io.cursus;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
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
 *
 * <p>The view may sit at the start of a longer array (a buffer reused from poll to poll): it
 * is read by its count, never by the array's length, and nothing read keeps a reference to
 * the array. Integers are read straight from the array (no {@link java.nio.ByteBuffer}): a
 * poll is often decoded before the JIT has compiled this class, and a {@code ByteBuffer}
 * read is a chain of calls in the interpreter. Each record is read by one small method,
 * which the JIT compiles after a few hundred records rather than waiting for the loop.
 */
final class RecordView {
    private static final byte[] EMPTY = new byte[0];

    private final byte[] a;
    private int p;
    /** The last topic read, as bytes and as a string: records of a poll mostly share it. */
    private int topicAt = -1;
    private int topicLen;
    private String topic;

    private RecordView(byte[] a) {
        this.a = a;
    }

    /** Decodes the view at the start of {@code packed}. */
    static List<ConsumerRecord> decode(byte[] packed) {
        RecordView v = new RecordView(packed);
        int n = v.i32();
        if (n == 0) {
            return List.of();
        }
        ConsumerRecord[] out = new ConsumerRecord[n];
        for (int i = 0; i < n; i++) {
            out[i] = v.next();
        }
        return Collections.unmodifiableList(Arrays.asList(out));
    }

    /** The next record. */
    private ConsumerRecord next() {
        String t = topic();
        int partition = i32();
        long offset = i64();
        long timestamp = i64();
        byte[] key = optBytes();
        byte[] value = optBytes();
        if (value == null) {
            throw new IllegalStateException("record view: a required field is marked absent");
        }
        int metadataLen = i32();
        String metadata = metadataLen < 0 ? null : text(metadataLen);
        int eventTypeLen = i32();
        if (eventTypeLen < 0) {
            return new ConsumerRecord(t, partition, offset, timestamp, key, value, metadata, null, 0, -1, null);
        }
        String eventType = text(eventTypeLen);
        int schemaVersion = i32();
        long aggregateVersion = i64();
        int eventIdLen = i32();
        String eventId = eventIdLen < 0 ? null : text(eventIdLen);
        return new ConsumerRecord(t, partition, offset, timestamp, key, value, metadata, eventType, schemaVersion,
                aggregateVersion, eventId);
    }

    /** The topic, decoded only when it differs from the last record's. */
    private String topic() {
        int len = i32();
        if (len < 0) {
            throw new IllegalStateException("record view: a required field is marked absent");
        }
        int at = p;
        p += len;
        if (topic == null || len != topicLen || !Arrays.equals(a, at, at + len, a, topicAt, topicAt + len)) {
            topic = new String(a, at, len, StandardCharsets.UTF_8);
            topicAt = at;
            topicLen = len;
        }
        return topic;
    }

    /** A field whose length -1 says it is absent (null). */
    private byte[] optBytes() {
        int len = i32();
        if (len < 0) {
            return null;
        }
        if (len == 0) {
            return EMPTY;
        }
        byte[] out = new byte[len];
        System.arraycopy(a, p, out, 0, len);
        p += len;
        return out;
    }

    private String text(int len) {
        String s = new String(a, p, len, StandardCharsets.UTF_8);
        p += len;
        return s;
    }

    private int i32() {
        byte[] b = a;
        int i = p;
        p = i + 4;
        return (b[i] & 0xff) | (b[i + 1] & 0xff) << 8 | (b[i + 2] & 0xff) << 16 | b[i + 3] << 24;
    }

    private long i64() {
        long lo = i32() & 0xffffffffL;
        return lo | (long) i32() << 32;
    }
}
