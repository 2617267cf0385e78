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
 *
 * <p>Every completion handed over runs exactly once, also around {@link #shutdown()}: the
 * pool is shut down only once every completion handed to it has finished, and a completion
 * handed over after that runs on the calling thread. The pool must never be shut down with
 * work in it, nor while one is being handed over: JDK 17's {@link ForkJoinPool} may then
 * terminate without running a task it accepted (no {@link RejectedExecutionException}), and
 * that future would never complete.
 */
final class Callbacks implements Executor {
    private static final AtomicInteger IDS = new AtomicInteger();

    private final ForkJoinPool pool;
    private final Object lock = new Object();
    /** Completions handed to the pool and not finished yet (guarded by {@code lock}). */
    private int pending;
    /** {@link #shutdown()} was called (guarded by {@code lock}). */
    private boolean closing;
    /** The pool is shut down: completions run on the caller (guarded by {@code lock}). */
    private boolean stopped;

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
        synchronized (lock) {
            if (!stopped) {
                pending++;
                try {
                    pool.execute(() -> {
                        try {
                            completion.run();
                        } finally {
                            finished();
                        }
                    });
                    return;
                } catch (RejectedExecutionException notTaken) {
                    // Not taken (a full queue): run it here rather than lose it.
                    pending--;
                }
            }
        }
        // After close: complete on the calling (native callback) thread.
        completion.run();
    }

    private void finished() {
        synchronized (lock) {
            pending--;
            stopIfDone();
        }
    }

    /**
     * Lets the completions handed over so far finish, then ends the worker. Completions handed
     * over later run on the caller's thread.
     */
    void shutdown() {
        synchronized (lock) {
            closing = true;
            stopIfDone();
        }
    }

    private void stopIfDone() {
        if (closing && pending == 0 && !stopped) {
            stopped = true;
            pool.shutdown();
        }
    }
}
