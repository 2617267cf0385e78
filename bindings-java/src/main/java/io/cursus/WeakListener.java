package io.cursus;

import java.lang.ref.WeakReference;

/**
 * The {@link NativeListener} handed to the library for one client's listener. The library
 * holds it through a JNI global reference until the listener is replaced or the client is
 * destroyed; it refers to its client only weakly, so a client that is never closed can still
 * become unreachable (its cleaner then destroys the handle, which releases the global
 * reference). The client keeps the user's listener strongly.
 *
 * <p>Nothing thrown by the handler reaches the library: it is logged through
 * {@link EngineLog#LOGGER} and the listener thread goes on.
 *
 * @param <T> the client type
 */
final class WeakListener<T> implements NativeListener {
    /** What to do with an event; must not capture the client (use a static method or a method reference on the type). */
    @FunctionalInterface
    interface Handler<T> {
        void handle(T owner, long handle);
    }

    private final WeakReference<T> owner;
    private final Handler<T> handler;
    private final String what;

    /**
     * @param owner the client
     * @param what the listener's name in log messages ("rebalance listener")
     * @param handler reads the event handle (valid during the call only) and runs the user's
     *     listener
     */
    WeakListener(T owner, String what, Handler<T> handler) {
        this.owner = new WeakReference<>(owner);
        this.what = what;
        this.handler = handler;
    }

    @Override
    public void onEvent(long handle) {
        T o = owner.get();
        if (o == null) {
            return;
        }
        try {
            handler.handle(o, handle);
        } catch (Throwable t) {
            EngineLog.listenerFailed(what, t);
        }
    }
}
