package io.cursus;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.LongFunction;

/**
 * What the native library completes, on the client's native callback thread (never an I/O
 * thread). It only hands the outcome to the client's {@link Callbacks}, which completes the
 * user's future there.
 */
final class NativeCompletion {
    private final CompletableFuture<RecordMetadata> sendFuture;
    private final CompletableFuture<Void> voidFuture;
    private final Executor executor;

    /** For a result lent as a handle: reads it during the upcall, returns what completes the future. */
    private final LongFunction<Runnable> handleReader;
    private final CompletableFuture<?> handleFuture;

    private NativeCompletion(CompletableFuture<RecordMetadata> send, CompletableFuture<Void> v, Executor executor) {
        this(send, v, executor, null, null);
    }

    private NativeCompletion(
            CompletableFuture<RecordMetadata> send,
            CompletableFuture<Void> v,
            Executor executor,
            LongFunction<Runnable> handleReader,
            CompletableFuture<?> handleFuture) {
        this.sendFuture = send;
        this.voidFuture = v;
        this.executor = executor;
        this.handleReader = handleReader;
        this.handleFuture = handleFuture;
    }

    /**
     * A completion whose result native code lends as a handle (a delivery batch): {@code reader}
     * reads it during the upcall (the handle is valid only then); the value completes {@code
     * future} on {@code executor}.
     */
    static <T> NativeCompletion forHandle(
            CompletableFuture<T> future, LongFunction<T> reader, Executor executor) {
        LongFunction<Runnable> read = handle -> {
            T value = reader.apply(handle);
            return () -> future.complete(value);
        };
        return new NativeCompletion(null, null, executor, read, future);
    }

    static NativeCompletion forSend(CompletableFuture<RecordMetadata> future, Executor executor) {
        return new NativeCompletion(future, null, executor);
    }

    static NativeCompletion forVoid(CompletableFuture<Void> future, Executor executor) {
        return new NativeCompletion(null, future, executor);
    }

    /** Called by native code: success (topic is null for commits). */
    void succeed(String topic, int partition, long offset, long timestamp) {
        if (sendFuture != null) {
            RecordMetadata md = new RecordMetadata(topic, partition, offset, timestamp);
            executor.execute(() -> sendFuture.complete(md));
        } else {
            executor.execute(() -> voidFuture.complete(null));
        }
    }

    /** Called by native code: success with a result lent as a handle for this call only. */
    void succeedHandle(long handle) {
        Runnable complete;
        try {
            complete = handleReader.apply(handle);
        } catch (RuntimeException e) {
            executor.execute(() -> handleFuture.completeExceptionally(e));
            return;
        }
        executor.execute(complete);
    }

    /** Called by native code: failure. */
    void fail(CursusException error) {
        CompletableFuture<?> f = sendFuture != null ? sendFuture : voidFuture != null ? voidFuture : handleFuture;
        executor.execute(() -> f.completeExceptionally(error));
    }
}
