package io.cursus;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Reads the big-endian result encoding of the native library (see its {@code Enc}). */
final class Decoder {
    private final ByteBuffer buf;

    Decoder(byte[] bytes) {
        this.buf = ByteBuffer.wrap(bytes);
    }

    int u32() {
        return buf.getInt();
    }

    long i64() {
        return buf.getLong();
    }

    boolean bool() {
        return buf.get() != 0;
    }

    byte[] bytes() {
        int len = buf.getInt();
        byte[] out = new byte[len];
        buf.get(out);
        return out;
    }

    String str() {
        int len = buf.getInt();
        String s = new String(buf.array(), buf.arrayOffset() + buf.position(), len, StandardCharsets.UTF_8);
        buf.position(buf.position() + len);
        return s;
    }

    List<String> strs() {
        int n = u32();
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(str());
        }
        return List.copyOf(out);
    }

    /** An optional non-negative number encoded as -1 when absent. */
    Integer optInt() {
        long v = i64();
        return v < 0 ? null : (int) v;
    }

    TopicInfo topicInfo() {
        return new TopicInfo(str(), u32(), str(), str(), str(), strs(), strs(), i64(), i64(), i64(),
                u32(), bool(), bool(), i64(), optInt(), optInt());
    }
}
