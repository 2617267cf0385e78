package io.cursus;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;

/**
 * The time limits of blocking calls. Methods without a timeout argument wait at most
 * {@link #DEFAULT} (30 s); pass {@link #NO_LIMIT} to wait as long as it takes.
 */
public final class Timeouts {
    /**
     * The limit of blocking calls given none: the library's default (30 seconds, the same in
     * every Cursus language), read from it. {@code flush()} and {@code close()} pass the library
     * its marker for this default rather than the number.
     */
    public static final Duration DEFAULT = Duration.ofMillis(NativeBridge.defaultTimeoutMs());

    /** The library's marker meaning "the default" ({@code CURSUS_DEFAULT_TIMEOUT}). */
    static final long DEFAULT_MARKER = -2;

    /** No time limit (any duration too long for a {@code long} of milliseconds means this). */
    public static final Duration NO_LIMIT = ChronoUnit.FOREVER.getDuration();

    private Timeouts() {}

    /**
     * The library's form: milliseconds, or -1 for no limit.
     *
     * @throws IllegalArgumentException for a negative duration
     */
    static long toMillis(Duration timeout, String what) {
        Objects.requireNonNull(timeout, what);
        if (timeout.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative: " + timeout);
        }
        try {
            long ms = timeout.toMillis();
            return ms == Long.MAX_VALUE ? -1 : ms;
        } catch (ArithmeticException tooLong) {
            return -1;
        }
    }
}
