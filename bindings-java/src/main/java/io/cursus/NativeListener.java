package io.cursus;

/**
 * A repeating callback the native library calls once per event (a statistics snapshot, a
 * background error, a log record), on the client's native callback thread (log records: the
 * process's log thread), never on an I/O thread. The thread is attached to the JVM as a daemon.
 *
 * <p>The handle is valid only during the call: read it with the {@link NativeBridge} accessors of
 * its type and never destroy it. An exception thrown here is printed and dropped; it never
 * reaches the engine.
 */
@FunctionalInterface
interface NativeListener {
    /** Called by native code with the event's handle, lent for the call. */
    void onEvent(long handle);
}
