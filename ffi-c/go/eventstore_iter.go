//go:build go1.23

package cursus

import (
	"context"
	"iter"
)

// Pages iterates over the cursor's remaining pages, reading each as the
// loop asks for it:
//
//	for page, err := range cursor.Pages(ctx) {
//		if err != nil {
//			return err // the cursor stays where it was: Pages may be ranged over again
//		}
//		for _, ev := range page.Events { ... }
//	}
//
// A failed read yields (nil, err) and ends the iteration. (Go 1.23 or later.)
func (c *EventCursor) Pages(ctx context.Context) iter.Seq2[*EventPage, error] {
	return func(yield func(*EventPage, error) bool) {
		for {
			page, err := c.Next(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
			if page == nil || !yield(page, nil) {
				return
			}
		}
	}
}

// Events iterates over the events of the cursor's remaining pages, reading
// a page whenever the previous one is used up. A failed read yields the
// zero StoredEvent with the error and ends the iteration. Leaving the loop
// early drops the rest of the current page: the cursor goes on from the
// next page. (Go 1.23 or later.)
func (c *EventCursor) Events(ctx context.Context) iter.Seq2[StoredEvent, error] {
	return func(yield func(StoredEvent, error) bool) {
		for page, err := range c.Pages(ctx) {
			if err != nil {
				yield(StoredEvent{}, err)
				return
			}
			for _, ev := range page.Events {
				if !yield(ev, nil) {
					return
				}
			}
		}
	}
}
