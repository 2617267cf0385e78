package io.cursus;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.RejectedExecutionException;

/**
 * The object the native library completes from an engine thread. It only hands the outcome
 * to the {@code cursus-callbacks} pool, which completes the user's future: user code
 * (future continuations) never runs on an engine thread, so it may block or call back into
 * the SDK without stalling or deadlocking the engine.
 */
final class NativeCompletion {
    /**
     * One worker in FIFO mode keeps completions in order; a continuation that waits on
     * another future ({@code get}/{@code join} use {@code ForkJoinPool.managedBlock}) makes
     * the pool add a compensating worker, so waiting inside a continuation cannot deadlock.
     */
    private static final ForkJoinPool CALLBACKS = new ForkJoinPool(1, pool -> {
        ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
        t.setName("cursus-callbacks-" + t.getPoolIndex());
        t.setDaemon(true);
        return t;
    }, null, true);

    /** The executor that completes futures (a single daemon thread). */
    static Executor callbackExecutor() {
        return CALLBACKS;
    }

    private final CompletableFuture<RecordMetadata> sendFuture;
    private final CompletableFuture<Void> voidFuture;

    private NativeCompletion(CompletableFuture<RecordMetadata> send, CompletableFuture<Void> v) {
        this.sendFuture = send;
        this.voidFuture = v;
    }

    static NativeCompletion forSend(CompletableFuture<RecordMetadata> future) {
        return new NativeCompletion(future, null);
    }

    static NativeCompletion forVoid(CompletableFuture<Void> future) {
        return new NativeCompletion(null, future);
    }

    private void dispatch(Runnable r) {
        try {
            CALLBACKS.execute(r);
        } catch (RejectedExecutionException e) {
            r.run();
        }
    }

    /** Called by native code: success (topic is null for commits). */
    void succeed(String topic, int partition, long offset, long timestamp) {
        if (sendFuture != null) {
            RecordMetadata md = new RecordMetadata(topic, partition, offset, timestamp);
            dispatch(() -> sendFuture.complete(md));
        } else {
            dispatch(() -> voidFuture.complete(null));
        }
    }

    /** Called by native code: failure. */
    void fail(CursusException error) {
        CompletableFuture<?> f = sendFuture != null ? sendFuture : voidFuture;
        dispatch(() -> f.completeExceptionally(error));
    }
}
