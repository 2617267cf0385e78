package io.cursus;

import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The thread where one client's futures complete, so user continuations never run on an
 * engine thread (nor on the client's native callback thread, which only hands outcomes
 * over). One per client: a continuation that blocks stalls only its own client's futures.
 *
 * <p>A {@link ForkJoinPool} of one FIFO worker keeps completions in order. A continuation
 * that waits on another future of the same client ({@code get}/{@code join} use
 * {@link ForkJoinPool#managedBlock}) makes the pool add a compensating worker, so
 * {@code producer.send(r).get()} inside a continuation completes instead of deadlocking.
 */
final class Callbacks implements Executor {
    private static final AtomicInteger IDS = new AtomicInteger();

    private final ForkJoinPool pool;

    /** @param what the client kind, for the thread names ({@code cursus-producer-1-callbacks}) */
    Callbacks(String what) {
        String name = "cursus-" + what + "-" + IDS.incrementAndGet() + "-callbacks";
        this.pool = new ForkJoinPool(1, p -> {
            ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(p);
            t.setName(name);
            t.setDaemon(true);
            return t;
        }, null, true);
    }

    @Override
    public void execute(Runnable completion) {
        try {
            pool.execute(completion);
        } catch (RejectedExecutionException closed) {
            // After close: complete on the calling (native callback) thread.
            completion.run();
        }
    }

    /** Lets queued completions finish; the worker then ends. */
    void shutdown() {
        pool.shutdown();
    }
}
