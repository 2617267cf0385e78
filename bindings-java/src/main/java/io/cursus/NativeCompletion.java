package io.cursus;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.LongFunction;

/**
 * What the native library completes, on the client's native callback thread (never an I/O
 * thread). It only hands the outcome to the client's {@link Callbacks}, which completes the
 * user's future there.
 *
 * <p>A send's completion hands itself over (it is the {@link Runnable} the callback thread
 * runs): one object per record carries the future, the topic and the outcome, and the
 * native side passes three numbers instead of building a topic string per acknowledgement.
 */
final class NativeCompletion implements Runnable {
    private final CompletableFuture<RecordMetadata> sendFuture;
    /** The topic of a send (what its metadata names). */
    private final String topic;
    private final CompletableFuture<Void> voidFuture;
    private final Executor executor;

    /** For a result lent as a handle: reads it during the upcall, returns what completes the future. */
    private final LongFunction<Runnable> handleReader;
    private final CompletableFuture<?> handleFuture;

    /** A send's outcome, set on the native callback thread before {@link #run()} is handed over. */
    private int partition;
    private long offset;
    private long timestamp;
    private CursusException error;

    private NativeCompletion(
            CompletableFuture<RecordMetadata> send,
            String topic,
            CompletableFuture<Void> v,
            Executor executor,
            LongFunction<Runnable> handleReader,
            CompletableFuture<?> handleFuture) {
        this.sendFuture = send;
        this.topic = topic;
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
        return new NativeCompletion(null, null, null, executor, read, future);
    }

    /** A send's completion: {@code future} gets the metadata of the record sent to {@code topic}. */
    static NativeCompletion forSend(CompletableFuture<RecordMetadata> future, String topic, Executor executor) {
        return new NativeCompletion(future, topic, null, executor, null, null);
    }

    static NativeCompletion forVoid(CompletableFuture<Void> future, Executor executor) {
        return new NativeCompletion(null, null, future, executor, null, null);
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

    /** Called by native code: a send was acknowledged (its topic is the one it was sent to). */
    void succeedSend(int partition, long offset, long timestamp) {
        this.partition = partition;
        this.offset = offset;
        this.timestamp = timestamp;
        // The executor's queue publishes these fields to the thread that runs this.
        executor.execute(this);
    }

    /** Completes a send's future on the executor's thread. */
    @Override
    public void run() {
        CursusException e = error;
        if (e != null) {
            sendFuture.completeExceptionally(e);
        } else {
            sendFuture.complete(new RecordMetadata(topic, partition, offset, timestamp));
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
        if (sendFuture != null) {
            this.error = error;
            executor.execute(this);
            return;
        }
        CompletableFuture<?> f = voidFuture != null ? voidFuture : handleFuture;
        executor.execute(() -> f.completeExceptionally(error));
    }
}
