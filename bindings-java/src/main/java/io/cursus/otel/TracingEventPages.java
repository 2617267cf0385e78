package io.cursus.otel;

import io.cursus.EventPage;
import io.cursus.EventPages;
import io.cursus.StoredEvent;
import io.cursus.Telemetry;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * A traced paged read of an aggregate ({@link TracingEventStore#stream},
 * {@link TracingEventStore#history}): the pages of {@link EventPages}, each page request in a
 * read span, a child of {@code Context.current()} where the iteration asks for the page. A
 * page's span records the version that page starts from: the read's first, then the one after
 * the previous page's last event (or its snapshot). A failed request marks its span failed;
 * asking again starts another. As {@link EventPages}, every iterator reads from the start
 * again, and an iterator is for one thread.
 */
public final class TracingEventPages implements Iterable<EventPage> {
    private final CursusTracing tracing;
    private final EventPages pages;
    private final String topic;
    private final String aggregate;
    private final long fromVersion;

    TracingEventPages(CursusTracing tracing, EventPages pages, String topic, String aggregate, long fromVersion) {
        this.tracing = tracing;
        this.pages = pages;
        this.topic = topic;
        this.aggregate = aggregate;
        this.fromVersion = fromVersion;
    }

    /**
     * The untraced pages.
     *
     * @return the plain paged read
     */
    public EventPages pages() {
        return pages;
    }

    /**
     * Iterates over the pages, each read (in its span) when {@link Iterator#hasNext()} reaches
     * it.
     *
     * @return a new iteration from the first page
     */
    @Override
    public Iterator<EventPage> iterator() {
        return new Pages(pages.iterator());
    }

    /**
     * The events of every page, in order, read page by page (each in its span) while iterating.
     *
     * @return an iterable whose every iterator reads from the start again
     */
    public Iterable<StoredEvent> events() {
        return EventPages.eventsOf(this);
    }

    /** One traced iteration: a span around each {@code hasNext()} that requests a page. */
    private final class Pages implements Iterator<EventPage> {
        private final Iterator<EventPage> inner;
        private long from = fromVersion;
        /** What the last request answered; null while the next page is not requested yet. */
        private Boolean more;

        Pages(Iterator<EventPage> inner) {
            this.inner = inner;
        }

        @Override
        public boolean hasNext() {
            if (more == null) {
                more = CursusTracing.around(tracing.start(Telemetry.read(topic, aggregate, from)), inner::hasNext);
            }
            return more;
        }

        @Override
        public EventPage next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            EventPage page = inner.next();
            // The last page needs no further request (and so no span).
            more = page.hasMore() ? null : Boolean.FALSE;
            List<StoredEvent> events = page.events();
            if (!events.isEmpty()) {
                from = events.get(events.size() - 1).version() + 1;
            } else if (page.snapshot().isPresent()) {
                from = page.snapshot().get().version() + 1;
            }
            return page;
        }
    }
}
