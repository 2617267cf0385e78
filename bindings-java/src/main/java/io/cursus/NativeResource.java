package io.cursus;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongConsumer;

/**
 * Owns one native handle and makes its use safe from any thread:
 * <ul>
 *   <li>every native call runs under the read lock, with the handle checked non-zero, so a
 *       closed object throws {@link CursusClosedException} and never reaches freed memory;</li>
 *   <li>{@link #close()} first closes the engine object (concurrent calls then fail fast),
 *       then frees the handle under the write lock, i.e. once no call is in flight; it is
 *       idempotent and thread-safe;</li>
 *   <li>{@link Reference#reachabilityFence} after each call keeps the Java object reachable
 *       for the whole native call, and a {@link Cleaner} frees the handle of an object that
 *       was never closed once it is unreachable.</li>
 * </ul>
 */
abstract class NativeResource implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** The state the cleaner may touch; must not reference the owning object. */
    private static final class State implements Runnable {
        final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
        final ReentrantLock closeLock = new ReentrantLock();
        final LongConsumer free;
        volatile long handle;

        State(long handle, LongConsumer free) {
            this.handle = handle;
            this.free = free;
        }

        /** Frees the handle once no call is in flight (cleaner or close). */
        @Override
        public void run() {
            lock.writeLock().lock();
            try {
                long h = handle;
                handle = 0;
                if (h != 0) {
                    free.accept(h);
                }
            } finally {
                lock.writeLock().unlock();
            }
        }
    }

    /** A native call taking the live handle. */
    @FunctionalInterface
    interface Call<T> {
        T apply(long handle);
    }

    /** A native call taking the live handle and returning nothing. */
    @FunctionalInterface
    interface VoidCall {
        void apply(long handle);
    }

    private final String what;
    private final State state;
    private final Cleaner.Cleanable cleanable;

    NativeResource(String what, long handle, LongConsumer free) {
        this.what = what;
        this.state = new State(handle, free);
        this.cleanable = CLEANER.register(this, state);
    }

    /** Runs {@code call} with the live handle; throws {@link CursusClosedException} if closed. */
    final <T> T call(Call<T> call) {
        ReentrantReadWriteLock.ReadLock read = state.lock.readLock();
        read.lock();
        try {
            long h = state.handle;
            if (h == 0 || closing) {
                throw NativeLib.closed(what);
            }
            return call.apply(h);
        } finally {
            read.unlock();
            Reference.reachabilityFence(this);
        }
    }

    /** Like {@link #call(Call)} for calls without a result. */
    final void run(VoidCall call) {
        call(h -> {
            call.apply(h);
            return null;
        });
    }

    /** Whether {@link #close()} has completed or begun. */
    public final boolean isClosed() {
        return state.handle == 0 || closing;
    }

    private volatile boolean closing;

    /**
     * Closes the engine object, then frees the handle once every call in flight has
     * returned. Idempotent; an error from the engine's close (e.g. a flush that timed out)
     * is thrown after the handle is freed.
     *
     * @param engineClose the engine's close for this object
     */
    final void closeWith(VoidCall engineClose) {
        state.closeLock.lock();
        try {
            if (state.handle == 0 || closing) {
                return;
            }
            closing = true;
            CursusException failure = null;
            state.lock.readLock().lock();
            try {
                engineClose.apply(state.handle);
            } catch (CursusException e) {
                failure = e;
            } finally {
                state.lock.readLock().unlock();
            }
            cleanable.clean();
            if (failure != null) {
                throw failure;
            }
        } finally {
            state.closeLock.unlock();
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public abstract void close();
}
