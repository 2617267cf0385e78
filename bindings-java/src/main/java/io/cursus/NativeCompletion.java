package io.cursus;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * What the native library completes, on the client's native callback thread (never an I/O
 * thread). It only hands the outcome to the client's {@link Callbacks}, which completes the
 * user's future there.
 */
final class NativeCompletion {
    private final CompletableFuture<RecordMetadata> sendFuture;
    private final CompletableFuture<Void> voidFuture;
    private final Executor executor;

    private NativeCompletion(CompletableFuture<RecordMetadata> send, CompletableFuture<Void> v, Executor executor) {
        this.sendFuture = send;
        this.voidFuture = v;
        this.executor = executor;
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

    /** Called by native code: failure. */
    void fail(CursusException error) {
        CompletableFuture<?> f = sendFuture != null ? sendFuture : voidFuture;
        executor.execute(() -> f.completeExceptionally(error));
    }
}
