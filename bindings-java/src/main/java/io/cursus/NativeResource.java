package io.cursus;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Owns one native handle (a {@code long} id into the library's handle table, never a
 * pointer) and makes its use safe from any thread:
 * <ul>
 *   <li>a call after {@link #close()} throws {@link CursusClosedException} before reaching
 *       the library;</li>
 *   <li>{@link #close()} closes the engine object (a poll blocked on another thread returns
 *       at once), then destroys the handle. No lock is held across the engine's close, so a
 *       close never waits for a blocked call: the library keeps the object alive until every
 *       call inside it has returned, and a destroyed handle is reported, never
 *       dereferenced;</li>
 *   <li>{@link Reference#reachabilityFence} keeps the Java object reachable for the whole
 *       native call, and a {@link Cleaner} destroys the handle of an object that was never
 *       closed once it is unreachable.</li>
 * </ul>
 */
abstract class NativeResource implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** What the cleaner runs; must not reference the owning object. */
    private static final class Destroyer implements Runnable {
        final AtomicLong handle;
        final LongConsumer destroy;

        Destroyer(long handle, LongConsumer destroy) {
            this.handle = new AtomicLong(handle);
            this.destroy = destroy;
        }

        @Override
        public void run() {
            long h = handle.getAndSet(0);
            if (h != 0) {
                destroy.accept(h);
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
    private final Destroyer destroyer;
    private final Cleaner.Cleanable cleanable;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param what the object's name in errors ("producer")
     * @param handle the live handle
     * @param destroy the generated {@code xxxDestroy} of the handle's kind
     */
    NativeResource(String what, long handle, LongConsumer destroy) {
        this.what = what;
        this.destroyer = new Destroyer(handle, destroy);
        this.cleanable = CLEANER.register(this, destroyer);
    }

    /** Runs {@code call} with the live handle; throws {@link CursusClosedException} if closed. */
    final <T> T call(Call<T> call) {
        if (closed.get() && !callableWhileClosing()) {
            throw NativeLib.closed(what);
        }
        try {
            return call.apply(destroyer.handle.get());
        } catch (CursusException e) {
            // Closed by another thread between the check and the call.
            if (closed.get() && "invalid_handle".equals(e.code())) {
                throw NativeLib.closed(what);
            }
            throw e;
        } finally {
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

    /** A background native call (an {@code ..._async} bridge function) started with the live handle. */
    @FunctionalInterface
    interface AsyncStart {
        void start(long handle, NativeCompletion completion);
    }

    /**
     * Starts a background native call whose result is lent as a handle: {@code reader} reads it
     * during the upcall, and the future completes on {@code executor}. No Java thread waits for
     * the call. Whatever starting throws (a closed object, a null argument) completes the future
     * exceptionally instead.
     */
    final <T> CompletableFuture<T> startAsync(Executor executor, LongFunction<T> reader, AsyncStart start) {
        CompletableFuture<T> future = new CompletableFuture<>();
        return started(future, NativeCompletion.forHandle(future, reader, executor), start);
    }

    /** {@link #startAsync(Executor, LongFunction, AsyncStart)} for a call without a result. */
    final CompletableFuture<Void> startAsync(Executor executor, AsyncStart start) {
        CompletableFuture<Void> future = new CompletableFuture<>();
        return started(future, NativeCompletion.forVoid(future, executor), start);
    }

    /**
     * Runs {@code next} with {@code first}'s value on {@code executor} (also when {@code first}
     * had completed already) and completes the result as the future {@code next} returns does.
     * A failure of {@code first}, or {@code next} throwing, fails the result with that exception
     * itself, not wrapped in a {@link java.util.concurrent.CompletionException}.
     */
    static <T, U> CompletableFuture<U> thenOn(
            Executor executor, CompletableFuture<T> first, Function<T, CompletableFuture<U>> next) {
        CompletableFuture<U> result = new CompletableFuture<>();
        first.whenCompleteAsync((value, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
                return;
            }
            try {
                next.apply(value).whenComplete((u, e) -> {
                    if (e != null) {
                        result.completeExceptionally(e);
                    } else {
                        result.complete(u);
                    }
                });
            } catch (RuntimeException | Error e) {
                result.completeExceptionally(e);
            }
        }, executor);
        return result;
    }

    private <T> CompletableFuture<T> started(
            CompletableFuture<T> future, NativeCompletion completion, AsyncStart start) {
        try {
            call(h -> {
                start.start(h, completion);
                return null;
            });
        } catch (RuntimeException | Error e) {
            future.completeExceptionally(e);
        }
        return future;
    }

    /**
     * Whether {@link #close()} has begun.
     *
     * @return whether the resource is closed or closing
     */
    public final boolean isClosed() {
        return closed.get();
    }

    /**
     * Closes the engine object, then destroys the handle; only the first call does anything
     * (later ones return at once). An error from the engine's close (e.g. a flush that timed
     * out) is thrown after the handle is destroyed.
     *
     * @param engineClose the engine's close for this object
     */
    final void closeWith(VoidCall engineClose) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            engineClose.apply(destroyer.handle.get());
        } finally {
            cleanable.clean();
            afterClose();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Whether the current thread may still use the handle after {@link #close()} has begun
     * (until the handle is destroyed): a listener the engine's close itself runs, such as a
     * consumer's rebalance listener committing in {@code onPartitionsRevoked}.
     */
    boolean callableWhileClosing() {
        return false;
    }

    /** Runs once the handle is destroyed (e.g. to stop a callback pool). */
    void afterClose() {}

    @Override
    public abstract void close();
}
