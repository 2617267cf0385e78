//go:build go1.23

// Range-over-func iteration of event cursors (Go 1.23 or later).

package cursus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestEventCursorPagesAndEventsIterate(t *testing.T) {
	topic := esTopic(t, "go-es-iter", 2)
	s := newEventStore(t)
	ctx := ctxT(t)
	for v := uint64(0); v < 5; v++ {
		mustAppend(t, s, topic, "k", v, Event{Type: "E", Payload: fmt.Sprintf("e%d", v+1)})
	}
	c, err := s.Stream(topic, "k", 1, PageLimits{MaxRecords: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sizes []int
	for page, err := range c.Pages(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Events))
	}
	if !slices.Equal(sizes, []int{2, 2, 1}) || !c.Done() {
		t.Fatalf("pages %v, done %v", sizes, c.Done())
	}

	// Events: one at a time across pages; leaving the loop early keeps the
	// rest of the cursor (from the next page on).
	c2, err := s.Stream(topic, "k", 1, PageLimits{MaxRecords: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	var first []string
	for ev, err := range c2.Events(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, ev.Payload)
		if len(first) == 3 {
			break
		}
	}
	rest, err := c2.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first, []string{"e1", "e2", "e3"}) || !slices.Equal(eventPayloads(rest.Events), []string{"e5"}) {
		t.Fatalf("first %v, rest %v", first, eventPayloads(rest.Events))
	}
}

func TestEventCursorPagesYieldsTheError(t *testing.T) {
	topic := unique("go-es-iter-plain")
	createTopic(t, topic, 1)
	s := newEventStore(t)
	c, err := s.Stream(topic, "k", 1, PageLimits{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	for page, err := range c.Pages(ctxT(t)) {
		n++
		var ce *Error
		if page != nil || !errors.As(err, &ce) || ce.Code != "event_sourcing_not_enabled" {
			t.Fatalf("yielded %+v, %v", page, err)
		}
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range c.Events(done) {
		n++
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a done context: %v", err)
		}
	}
	if n != 2 {
		t.Fatalf("%d yields, want 2", n)
	}
}
