package io.cursus;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the few JSON texts the binding reads itself (the proof an
 * {@code aggregate_proof_*} error carries in its {@code proof} field: Java exceptions hold no
 * engine error handle to read it through). Values become {@code Map} (objects, keys in order),
 * {@code List}, {@code String}, {@code BigDecimal}, {@code Boolean} or {@code null}. Malformed
 * text throws {@link IllegalArgumentException}.
 */
final class MiniJson {
    private final String s;
    private int i;

    private MiniJson(String s) {
        this.s = s;
    }

    /** Parses {@code text}, which must be one JSON object. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String text) {
        MiniJson p = new MiniJson(text);
        p.ws();
        Object v = p.value(0);
        p.ws();
        if (p.i != p.s.length()) {
            throw p.bad("trailing text");
        }
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("not a JSON object");
        }
        return (Map<String, Object>) v;
    }

    /** A string member; absent or null: empty. */
    static String text(Map<String, Object> o, String key) {
        Object v = o.get(key);
        return v == null ? "" : (String) v;
    }

    /** A non-negative integer member (u64 read as a Java long); absent or null: 0. */
    static long number(Map<String, Object> o, String key) {
        Object v = o.get(key);
        if (v == null) {
            return 0;
        }
        try {
            return ((BigDecimal) v).toBigIntegerExact().longValue();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(key + " is not an integer: " + v);
        }
    }

    /** A boolean member; absent or null: false. */
    static boolean bool(Map<String, Object> o, String key) {
        Object v = o.get(key);
        return v != null && (Boolean) v;
    }

    private IllegalArgumentException bad(String what) {
        return new IllegalArgumentException("bad JSON at " + i + ": " + what);
    }

    private void ws() {
        while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
    }

    private char peek() {
        if (i >= s.length()) {
            throw bad("unexpected end");
        }
        return s.charAt(i);
    }

    private void expect(char c) {
        if (peek() != c) {
            throw bad("expected '" + c + "'");
        }
        i++;
    }

    private Object value(int depth) {
        if (depth > 64) {
            throw bad("nested too deeply");
        }
        char c = peek();
        switch (c) {
            case '{': {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (peek() == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    ws();
                    m.put(k, value(depth + 1));
                    ws();
                    if (peek() == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return m;
                }
            }
            case '[': {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (peek() == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    ws();
                    l.add(value(depth + 1));
                    ws();
                    if (peek() == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return l;
                }
            }
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                return number();
        }
    }

    private Object literal(String word, Object v) {
        if (!s.startsWith(word, i)) {
            throw bad("expected " + word);
        }
        i += word.length();
        return v;
    }

    private BigDecimal number() {
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        try {
            return new BigDecimal(s.substring(start, i));
        } catch (NumberFormatException e) {
            i = start;
            throw bad("expected a value");
        }
    }

    private String string() {
        expect('"');
        StringBuilder b = new StringBuilder();
        while (true) {
            char c = peek();
            i++;
            if (c == '"') {
                return b.toString();
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = peek();
            i++;
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    b.append(e);
                    break;
                case 'b':
                    b.append('\b');
                    break;
                case 'f':
                    b.append('\f');
                    break;
                case 'n':
                    b.append('\n');
                    break;
                case 'r':
                    b.append('\r');
                    break;
                case 't':
                    b.append('\t');
                    break;
                case 'u':
                    if (i + 4 > s.length()) {
                        throw bad("short \\u escape");
                    }
                    try {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    } catch (NumberFormatException x) {
                        throw bad("bad \\u escape");
                    }
                    i += 4;
                    break;
                default:
                    throw bad("bad escape \\" + e);
            }
        }
    }
}
