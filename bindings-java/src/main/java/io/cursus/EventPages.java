package io.cursus;

import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * A paged read of the event store ({@link CursusEventStore#stream},
 * {@link CursusEventStore#history}, {@link CursusEventStore#browse}): an {@link Iterable} of
 * its pages, each fetched by one request when the iteration reaches it, so a long read never
 * holds more than a page. Every {@link #iterator()} reads from the start again; an iterator
 * is for one thread. {@link #events()} iterates over the events of every page.
 *
 * <pre>{@code
 * for (EventPage page : store.history("orders", "order-1", 1)) {
 *     page.events().forEach(e -> audit(e));
 *     if (!page.hasMore() && page.completeness() != Completeness.COMPLETE) warnGaps();
 * }
 * }</pre>
 *
 * <p>{@link Iterator#hasNext()} makes the request, so it throws the read's
 * {@link CursusException} (a {@link CursusClosedException} once the store is closed); a failed
 * request leaves the iterator where it was, so {@code hasNext()} may be called again. A read
 * of a missing aggregate has one empty page. An iteration abandoned before its end releases
 * its native cursor when garbage-collected.
 */
public final class EventPages implements Iterable<EventPage> {
    private final CursusEventStore store;
    private final String topic;
    private final LongSupplier open;

    EventPages(CursusEventStore store, String topic, LongSupplier open) {
        this.store = store;
        this.topic = topic;
        this.open = open;
    }

    /**
     * Iterates over the pages, reading each when {@link Iterator#hasNext()} reaches it.
     *
     * @return a new iteration from the first page
     */
    @Override
    public Iterator<EventPage> iterator() {
        return new Pages();
    }

    /**
     * The events of every page, in order, read page by page while iterating.
     *
     * @return an iterable whose every iterator reads from the start again
     */
    public Iterable<StoredEvent> events() {
        return eventsOf(this);
    }

    /**
     * The events of every page of {@code pages}, in order, read page by page while iterating
     * (for a wrapper of a paged read, such as a tracing layer's).
     *
     * @param pages the pages
     * @return an iterable whose every iterator iterates over {@code pages} again
     */
    public static Iterable<StoredEvent> eventsOf(Iterable<EventPage> pages) {
        Objects.requireNonNull(pages, "pages");
        return () -> new Iterator<>() {
            private final Iterator<EventPage> iterated = pages.iterator();
            private Iterator<StoredEvent> current = Collections.emptyIterator();

            @Override
            public boolean hasNext() {
                while (!current.hasNext()) {
                    if (!iterated.hasNext()) {
                        return false;
                    }
                    current = iterated.next().events().iterator();
                }
                return true;
            }

            @Override
            public StoredEvent next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return current.next();
            }
        };
    }

    /** A native cursor handle; destroyed when its read is done, or by the cleaner. */
    static final class Cursor extends NativeResource {
        Cursor(long handle) {
            super("event cursor", handle, NativeBridge::eventCursorDestroy);
        }

        @Override
        public void close() {
            closeWith(h -> {});
        }
    }

    /** One iteration: its own cursor, opened at the first {@code hasNext()}. */
    private final class Pages implements Iterator<EventPage> {
        private Cursor cursor;
        private EventPage next;
        private boolean done;

        @Override
        public boolean hasNext() {
            if (next != null) {
                return true;
            }
            if (done) {
                return false;
            }
            if (cursor == null) {
                cursor = new Cursor(store.call(h -> open.getAsLong()));
            }
            long handle = store.call(s -> cursor.call(c -> NativeBridge.eventStoreNextPage(s, c)));
            if (handle != 0) {
                next = CursusEventStore.page(topic, handle);
            }
            if (handle == 0 || cursor.call(NativeBridge::eventCursorDone)) {
                done = true;
                cursor.close();
            }
            return next != null;
        }

        @Override
        public EventPage next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            EventPage page = next;
            next = null;
            return page;
        }
    }
}
