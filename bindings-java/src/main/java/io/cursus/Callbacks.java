package io.cursus;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The thread where one client's futures complete, so user continuations never run on an
 * engine thread (nor on the client's native callback thread, which only hands outcomes
 * over). One per client: a continuation that blocks stalls only its own client's futures.
 *
 * <p>Completions are queued in order and run by a drain task on a {@link ForkJoinPool} of
 * one FIFO worker: the native thread hands over a completion with a queue insertion, and
 * wakes the worker only when no drain task is scheduled, so a burst of acknowledgements costs
 * one pool task and one wake-up, not one per record. One thread drains at a time, so
 * completions run in the order they were handed over.
 *
 * <p>A continuation that waits on another future of the same client ({@code get}/{@code join}
 * use {@link ForkJoinPool#managedBlock}) makes the pool add a compensating worker. For that
 * worker to find the completions queued behind the blocked one, a drain task keeps a second
 * drain task scheduled while completions are waiting; it runs them if the first one blocks,
 * and finds the queue empty (and ends at once) otherwise. So {@code producer.send(r).get()}
 * inside a continuation completes instead of deadlocking.
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
    /** The bit of {@link #state} saying the pool is shut down. */
    private static final int STOPPED = 1 << 30;
    /** How long a drain task waits for the next completion before it ends. */
    private static final long SPIN_NANOS = 10_000;

    private final ForkJoinPool pool;
    /** Completions handed over and not taken by a drain task yet, in order. */
    private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
    /** A drain task is in the pool and has not started yet. */
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final Runnable drain = this::drain;
    /**
     * Completions handed over and not finished yet, plus {@link #STOPPED} once the pool is shut
     * down: one atomic word, so a hand-over either counts before the pool stops or sees it
     * stopped (no lock on the per-record path).
     */
    private final AtomicInteger state = new AtomicInteger();
    /** {@link #shutdown()} was called. */
    private volatile boolean closing;

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
        for (int s = state.get(); ; s = state.get()) {
            if ((s & STOPPED) != 0) {
                // After close: complete on the calling (native callback) thread.
                completion.run();
                return;
            }
            if (state.compareAndSet(s, s + 1)) {
                break;
            }
        }
        // Counted: the pool cannot stop before this completion has run.
        queue.offer(completion);
        if (!schedule()) {
            // Not taken (a full pool queue): run what is queued here, in order, rather than lose it.
            scheduled.set(false);
            drainHere();
        }
    }

    /** Makes sure a drain task is scheduled; false if the pool refused it. */
    private boolean schedule() {
        if (!scheduled.compareAndSet(false, true)) {
            return true;
        }
        try {
            pool.execute(drain);
            return true;
        } catch (RejectedExecutionException notTaken) {
            return false;
        }
    }

    /** The drain task: runs queued completions until the queue stays empty. */
    private void drain() {
        scheduled.set(false);
        int ran = 0;
        try {
            Runnable next;
            while ((next = nextOrWait()) != null) {
                if (!queue.isEmpty()) {
                    // Someone to run the rest should this completion block.
                    schedule();
                }
                ran++;
                run(next);
            }
        } finally {
            finished(ran);
        }
    }

    /**
     * The next completion, waiting a few microseconds for one when the queue is empty:
     * acknowledgements arrive in bursts a microsecond or two apart, and a worker that parked
     * between two of them cost a park and an unpark (two system calls and a context switch)
     * per completion.
     */
    private Runnable nextOrWait() {
        Runnable next = queue.poll();
        if (next != null) {
            return next;
        }
        long deadline = System.nanoTime() + SPIN_NANOS;
        do {
            for (int i = 0; i < 64; i++) {
                Thread.onSpinWait();
            }
            next = queue.poll();
        } while (next == null && System.nanoTime() < deadline);
        return next;
    }

    /** Runs what is queued on the calling thread (the pool refused a drain task). */
    private void drainHere() {
        int ran = 0;
        try {
            Runnable next;
            while ((next = queue.poll()) != null) {
                ran++;
                run(next);
            }
        } finally {
            finished(ran);
        }
    }

    private static void run(Runnable completion) {
        try {
            completion.run();
        } catch (RuntimeException | Error e) {
            Thread t = Thread.currentThread();
            t.getUncaughtExceptionHandler().uncaughtException(t, e);
        }
    }

    private void finished(int count) {
        if (count != 0 && state.addAndGet(-count) == 0 && closing) {
            stopIfDone();
        }
    }

    /**
     * Lets the completions handed over so far finish, then ends the worker. Completions handed
     * over later run on the caller's thread.
     */
    void shutdown() {
        closing = true;
        stopIfDone();
    }

    /** Stops the pool if nothing is pending (only the first caller to see that does). */
    private void stopIfDone() {
        if (state.compareAndSet(0, STOPPED)) {
            pool.shutdown();
        }
    }
}
