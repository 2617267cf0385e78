// The event store: appends read back with every field, version conflicts,
// snapshots, paged reads, the aggregate cycle, concurrent writers, errors.

package cursus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
)

func newEventStore(t testing.TB) *EventStore {
	t.Helper()
	s, err := NewEventStore(ctxT(t), WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// esTopic creates an event-sourcing topic.
func esTopic(t testing.TB, prefix string, partitions int) string {
	t.Helper()
	topic := unique(prefix)
	info, err := newAdmin(t).CreateTopicWithOptions(ctxT(t), topic,
		TopicOptions{"partitions": strconv.Itoa(partitions), "event_sourcing": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if !info.EventSourcing {
		t.Fatalf("%s is not event sourcing: %+v", topic, info)
	}
	return topic
}

func mustAppend(t testing.TB, s *EventStore, topic, key string, expected uint64, ev Event) Appended {
	t.Helper()
	a, err := s.Append(ctxT(t), topic, key, expected, ev)
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != expected+1 {
		t.Fatalf("appended at %d, want %d", a.Version, expected+1)
	}
	return a
}

func eventVersions(events []StoredEvent) []uint64 {
	out := []uint64{}
	for _, e := range events {
		out = append(out, e.Version)
	}
	return out
}

func eventPayloads(events []StoredEvent) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, e.Payload)
	}
	return out
}

func TestEventStoreAppendAndReadBack(t *testing.T) {
	topic := esTopic(t, "go-es-read", 3)
	s := newEventStore(t)
	ctx := ctxT(t)
	if v, err := s.StreamVersion(ctx, topic, "order-1"); err != nil || v != 0 {
		t.Fatalf("version of a new aggregate: %d, %v", v, err)
	}
	first := mustAppend(t, s, topic, "order-1", 0,
		Event{Type: "Created", Payload: `{"id":1}`, Metadata: `{"by":"alice"}`, SchemaVersion: 2})
	second := mustAppend(t, s, topic, "order-1", 1, Event{Type: "Paid", Payload: "paid 10 €"})
	if first.Partition >= 3 || second.Partition != first.Partition || second.Offset <= first.Offset {
		t.Fatalf("appended %+v then %+v", first, second)
	}
	if v, err := s.StreamVersion(ctx, topic, "order-1"); err != nil || v != 2 {
		t.Fatalf("version: %d, %v", v, err)
	}
	read, err := s.ReadStream(ctx, topic, "order-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if read.Snapshot != nil || read.Pages != 1 || len(read.Events) != 2 {
		t.Fatalf("read %+v", read)
	}
	e := read.Events[0]
	if e.Topic != topic || e.Partition != first.Partition || e.Offset != first.Offset || e.Key != "order-1" ||
		e.Version != 1 || e.Type != "Created" || e.SchemaVersion != 2 || e.Metadata != `{"by":"alice"}` ||
		e.Payload != `{"id":1}` || e.Timestamp.UnixMilli() <= 0 {
		t.Fatalf("first event %+v", e)
	}
	e = read.Events[1]
	if e.Version != 2 || e.Type != "Paid" || e.SchemaVersion != 1 || e.Metadata != "" || e.Payload != "paid 10 €" {
		t.Fatalf("second event %+v", e)
	}
	if read, err = s.ReadStream(ctx, topic, "order-1", 2); err != nil || !slices.Equal(eventVersions(read.Events), []uint64{2}) {
		t.Fatalf("from 2: %+v, %v", read, err)
	}
	if read, err = s.ReadStream(ctx, topic, "order-2", 1); err != nil || len(read.Events) != 0 {
		t.Fatalf("another aggregate: %+v, %v", read, err)
	}
}

func TestEventStoreVersionConflict(t *testing.T) {
	topic := esTopic(t, "go-es-conflict", 1)
	a, b := newEventStore(t), newEventStore(t)
	ctx := ctxT(t)
	mustAppend(t, a, topic, "acct", 0, Event{Type: "Opened", Payload: "open"})
	mustAppend(t, a, topic, "acct", 1, Event{Type: "Deposited", Payload: "first writer"})
	_, err := b.Append(ctx, topic, "acct", 1, Event{Type: "Deposited", Payload: "second writer"})
	var conflict *VersionConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("want a *VersionConflictError, got %v", err)
	}
	if conflict.Current != 2 || conflict.Err.Fields["current"] != "2" || conflict.Err.Fields["expected"] == "" {
		t.Fatalf("conflict %+v, fields %v", conflict, conflict.Err.Fields)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "version_conflict" || ce.Class != "conflict" || ce.Retryable ||
		!errors.Is(err, ErrConflict) {
		t.Fatalf("the wrapped error: %+v", ce)
	}
	if err.Error() != ce.Error() {
		t.Fatalf("text %q, want %q", err.Error(), ce.Error())
	}
	// Re-read, append again.
	mustAppend(t, b, topic, "acct", conflict.Current, Event{Type: "Deposited", Payload: "second writer"})
	read, err := a.ReadStream(ctx, topic, "acct", 1)
	if err != nil || !slices.Equal(eventPayloads(read.Events), []string{"open", "first writer", "second writer"}) {
		t.Fatalf("stream %+v, %v", read, err)
	}
}

func TestEventStoreSnapshots(t *testing.T) {
	topic := esTopic(t, "go-es-snap", 3)
	s := newEventStore(t)
	ctx := ctxT(t)
	if snap, err := s.ReadSnapshot(ctx, topic, "cart"); err != nil || snap != nil {
		t.Fatalf("no snapshot yet: %+v, %v", snap, err)
	}
	for v := uint64(0); v < 5; v++ {
		mustAppend(t, s, topic, "cart", v, Event{Type: "Added", Payload: fmt.Sprintf("item-%d", v+1)})
	}
	err := s.SaveSnapshot(ctx, topic, "cart", 9, "too far")
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "snapshot_version_exceeds_stream" || !errors.Is(err, ErrConflict) {
		t.Fatalf("a snapshot beyond the stream: %v", err)
	}
	if err := s.SaveSnapshot(ctx, topic, "cart", 3, "items=3"); err != nil {
		t.Fatal(err)
	}
	if snap, err := s.ReadSnapshot(ctx, topic, "cart"); err != nil || *snap != (Snapshot{3, "items=3"}) {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
	read, err := s.ReadStream(ctx, topic, "cart", 1)
	if err != nil || read.Snapshot == nil || *read.Snapshot != (Snapshot{3, "items=3"}) ||
		!slices.Equal(eventVersions(read.Events), []uint64{4, 5}) ||
		!slices.Equal(eventPayloads(read.Events), []string{"item-4", "item-5"}) {
		t.Fatalf("read from 1: %+v, %v", read, err)
	}
	read, err = s.ReadStream(ctx, topic, "cart", 5)
	if err != nil || read.Snapshot != nil || !slices.Equal(eventVersions(read.Events), []uint64{5}) {
		t.Fatalf("read from 5: %+v, %v", read, err)
	}
}

func TestEventStoreStreamCursorPages(t *testing.T) {
	topic := esTopic(t, "go-es-pages", 2)
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
	var more []bool
	var seen []uint64
	for !c.Done() {
		page, err := c.Next(ctx)
		if err != nil || page == nil {
			t.Fatalf("page: %+v, %v", page, err)
		}
		sizes, more = append(sizes, len(page.Events)), append(more, page.HasMore)
		seen = append(seen, eventVersions(page.Events)...)
		if page.Completeness != "" || page.ReadableEndOffset != -1 {
			t.Fatalf("a stream page with history/browse fields: %+v", page)
		}
		if len(sizes) > 3 {
			t.Fatal("more pages than events")
		}
	}
	if !slices.Equal(sizes, []int{2, 2, 1}) || !slices.Equal(more, []bool{true, true, false}) ||
		!slices.Equal(seen, []uint64{1, 2, 3, 4, 5}) {
		t.Fatalf("pages %v, has_more %v, versions %v", sizes, more, seen)
	}
	if page, err := c.Next(ctx); page != nil || err != nil {
		t.Fatalf("after the last page: %+v, %v", page, err)
	}
}

func TestEventCursorCancelledWaitLosesNoPage(t *testing.T) {
	topic := esTopic(t, "go-es-cancel", 1)
	s := newEventStore(t)
	for v := uint64(0); v < 6; v++ {
		mustAppend(t, s, topic, "k", v, Event{Type: "E", Payload: "e"})
	}
	c, err := s.Stream(topic, "k", 1, PageLimits{MaxRecords: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A context that is already done reads nothing.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if page, err := c.Next(done); page != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a done context: %+v, %v", page, err)
	}
	// Cancelled while waiting (or not: either way no page is lost).
	var seen []uint64
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		result := make(chan *EventPage, 1)
		go func() {
			page, err := c.Next(ctx)
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Error(err)
			}
			result <- page
		}()
		cancel()
		if page := within(t, result, "cancelled Next"); page != nil {
			seen = append(seen, eventVersions(page.Events)...)
		}
	}
	rest, err := c.ReadAll(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, eventVersions(rest.Events)...)
	if !slices.Equal(seen, []uint64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("versions %v", seen)
	}
}

func TestEventStoreHistory(t *testing.T) {
	topic := esTopic(t, "go-es-history", 3)
	s := newEventStore(t)
	ctx := ctxT(t)
	for v := uint64(0); v < 6; v++ {
		mustAppend(t, s, topic, "h", v, Event{Type: "E", Payload: "e"})
	}
	if err := s.SaveSnapshot(ctx, topic, "h", 4, "s4"); err != nil {
		t.Fatal(err)
	}
	c, err := s.History(topic, "h", 1, 0, PageLimits{MaxRecords: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var seen []uint64
	pages := 0
	for {
		page, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if page == nil {
			break
		}
		pages++
		if page.Snapshot != nil || page.Completeness != Complete || page.HeadVersion != 6 {
			t.Fatalf("history page %+v", page)
		}
		seen = append(seen, eventVersions(page.Events)...)
	}
	if pages != 2 || !slices.Equal(seen, []uint64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("%d pages, versions %v", pages, seen)
	}
	c2, err := s.History(topic, "h", 2, 3, PageLimits{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if r, err := c2.ReadAll(ctx); err != nil || !slices.Equal(eventVersions(r.Events), []uint64{2, 3}) {
		t.Fatalf("2..3: %+v, %v", r, err)
	}
	c3, err := s.History(topic, "nobody", 1, 0, PageLimits{})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if page, err := c3.Next(ctx); err != nil || page == nil || len(page.Events) != 0 ||
		page.Completeness != Complete || page.HeadVersion != 0 {
		t.Fatalf("a missing aggregate: %+v, %v", page, err)
	}
}

func TestEventStoreBrowse(t *testing.T) {
	topic := unique("go-es-browse")
	createTopic(t, topic, 1)
	produceValues(t, topic, 25)
	s := newEventStore(t)
	ctx := ctxT(t)
	c, err := s.Browse(topic, 0, 0, ToEnd, PageLimits{MaxRecords: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var values []string
	pages := 0
	for !c.Done() {
		page, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if page.ReadableEndOffset != 25 || page.HasMore != (pages < 3) {
			t.Fatalf("page %d: %+v", pages, page)
		}
		for _, r := range page.Events {
			if r.Offset != uint64(len(values)) || r.Version != 0 {
				t.Fatalf("record %+v", r)
			}
			values = append(values, r.Payload)
		}
	}
	if pages != 3 || len(values) != 25 || values[0] != "v0" || values[24] != "v24" {
		t.Fatalf("%d pages, values %v", pages, values)
	}
	c2, err := s.Browse(topic, 0, 5, 12, PageLimits{MaxRecords: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	r, err := c2.ReadAll(ctx)
	if err != nil || r.Pages != 2 || len(r.Events) != 7 || r.Events[0].Offset != 5 || r.Events[6].Offset != 11 {
		t.Fatalf("[5, 12): %+v, %v", r, err)
	}
}

// counterConfig: the state counts events; snapshots are decimal text.
func counterConfig(every uint64, folded *[]string) AggregateConfig[int] {
	return AggregateConfig[int]{
		Fold: func(n int, e StoredEvent) int {
			if folded != nil {
				*folded = append(*folded, e.Payload)
			}
			return n + 1
		},
		Unmarshal:     strconv.Atoi,
		Marshal:       func(n int) (string, error) { return strconv.Itoa(n), nil },
		SnapshotEvery: every,
	}
}

func TestAggregateSnapshotFailureIsNoErrorOfTheAppend(t *testing.T) {
	topic := esTopic(t, "go-es-agg-snap", 1)
	s := newEventStore(t)
	ctx := ctxT(t)
	cfg := counterConfig(1, nil)
	fail := true
	cfg.Marshal = func(n int) (string, error) {
		if fail {
			return "", errors.New("cannot marshal")
		}
		return strconv.Itoa(n), nil
	}
	agg, err := LoadAggregate(ctx, s, topic, "counter", cfg)
	must(t, err)
	defer agg.Close()
	if stored, err := agg.Append(ctx, Event{Type: "Counted", Payload: "a"}); err != nil || stored.Version != 1 {
		t.Fatalf("append with a failing snapshot: %+v, %v", stored, err)
	}
	if !agg.SnapshotDue() || agg.State() != 1 {
		t.Fatalf("due %v, state %d", agg.SnapshotDue(), agg.State())
	}
	fail = false
	if _, err := agg.Append(ctx, Event{Type: "Counted", Payload: "b"}); err != nil {
		t.Fatal(err)
	}
	if snap, err := s.ReadSnapshot(ctx, topic, "counter"); err != nil || *snap != (Snapshot{2, "2"}) || agg.SnapshotDue() {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
}

func TestAggregateFoldsAppendsAndSnapshots(t *testing.T) {
	topic := esTopic(t, "go-es-agg", 3)
	s := newEventStore(t)
	ctx := ctxT(t)
	var folded []string
	agg, err := LoadAggregate(ctx, s, topic, "counter", counterConfig(3, &folded))
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	if agg.State() != 0 || agg.Version() != 0 || agg.LoadedSnapshot() != nil || agg.LoadedEvents() != 0 {
		t.Fatalf("a new aggregate: state %d, version %d", agg.State(), agg.Version())
	}
	for i := 0; i < 7; i++ {
		stored, err := agg.Append(ctx, Event{Type: "Counted", Payload: fmt.Sprintf("tick-%d", i)})
		if err != nil || stored.Version != uint64(i+1) || stored.Key != "counter" || stored.Topic != topic {
			t.Fatalf("append %d: %+v, %v", i, stored, err)
		}
		if agg.SnapshotDue() {
			t.Fatal("a due snapshot was not saved by Append")
		}
	}
	if agg.State() != 7 || agg.Version() != 7 || len(folded) != 7 || folded[6] != "tick-6" {
		t.Fatalf("state %d, version %d, folded %v", agg.State(), agg.Version(), folded)
	}
	if snap, err := s.ReadSnapshot(ctx, topic, "counter"); err != nil || *snap != (Snapshot{6, "6"}) {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
	folded = nil
	again, err := LoadAggregate(ctx, s, topic, "counter", counterConfig(3, &folded))
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.LoadedSnapshot() == nil || again.LoadedSnapshot().Version != 6 || again.LoadedEvents() != 1 ||
		!slices.Equal(folded, []string{"tick-6"}) || again.State() != 7 || again.Version() != 7 {
		t.Fatalf("reloaded: snapshot %+v, %d events, folded %v, state %d", again.LoadedSnapshot(),
			again.LoadedEvents(), folded, again.State())
	}
	for i := 0; i < 2; i++ {
		if _, err := again.Append(ctx, Event{Type: "Counted", Payload: fmt.Sprintf("more-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if snap, err := s.ReadSnapshot(ctx, topic, "counter"); err != nil || *snap != (Snapshot{9, "9"}) {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
	// SnapshotEvery 0: never due; SaveSnapshot by hand.
	manual, err := LoadAggregate(ctx, s, topic, "counter", counterConfig(0, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	for i := 0; i < 4; i++ {
		if _, err := manual.Append(ctx, Event{Type: "Counted", Payload: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	if snap, _ := s.ReadSnapshot(ctx, topic, "counter"); snap.Version != 9 {
		t.Fatalf("an automatic snapshot with SnapshotEvery 0: %+v", snap)
	}
	if err := manual.SaveSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if snap, err := s.ReadSnapshot(ctx, topic, "counter"); err != nil || *snap != (Snapshot{13, "13"}) {
		t.Fatalf("snapshot %+v, %v", snap, err)
	}
}

func TestAggregateConflictLeavesItUnchanged(t *testing.T) {
	topic := esTopic(t, "go-es-agg-conflict", 1)
	s := newEventStore(t)
	ctx := ctxT(t)
	mine, err := LoadAggregate(ctx, s, topic, "k", counterConfig(0, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	theirs, err := LoadAggregate(ctx, s, topic, "k", counterConfig(0, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	if _, err := theirs.Append(ctx, Event{Type: "Counted", Payload: "theirs"}); err != nil {
		t.Fatal(err)
	}
	_, err = mine.Append(ctx, Event{Type: "Counted", Payload: "mine"})
	var conflict *VersionConflictError
	if !errors.As(err, &conflict) || conflict.Current != 1 {
		t.Fatalf("want a version conflict at 1, got %v", err)
	}
	if mine.State() != 0 || mine.Version() != 0 {
		t.Fatalf("after the conflict: state %d, version %d", mine.State(), mine.Version())
	}
}

// Writers on several goroutines append to one aggregate, each retrying a
// lost race by loading again: every append lands exactly once.
func TestAggregateConcurrentWritersRetry(t *testing.T) {
	topic := esTopic(t, "go-es-writers", 2)
	s := newEventStore(t)
	ctx := ctxT(t)
	const writers, each = 4, 5
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for {
					agg, err := LoadAggregate(ctx, s, topic, "shared", counterConfig(3, nil))
					if err != nil {
						t.Error(err)
						return
					}
					_, err = agg.Append(ctx, Event{Type: "Counted", Payload: fmt.Sprintf("w%d-%d", w, i)})
					agg.Close()
					var conflict *VersionConflictError
					if errors.As(err, &conflict) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	read, err := s.ReadStream(ctx, topic, "shared", 1)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.History(topic, "shared", 1, 0, PageLimits{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	history, err := all.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint64, writers*each)
	for i := range want {
		want[i] = uint64(i + 1)
	}
	payloads := eventPayloads(history.Events)
	slices.Sort(payloads)
	if !slices.Equal(eventVersions(history.Events), want) || len(slices.Compact(payloads)) != writers*each {
		t.Fatalf("history versions %v, payloads %v", eventVersions(history.Events), payloads)
	}
	if read.Snapshot == nil || read.Snapshot.State != strconv.FormatUint(read.Snapshot.Version, 10) {
		t.Fatalf("snapshot %+v", read.Snapshot)
	}
}

func TestEventStoreTopicWithoutEventSourcing(t *testing.T) {
	topic := unique("go-es-plain")
	createTopic(t, topic, 1)
	s := newEventStore(t)
	ctx := ctxT(t)
	_, err := s.Append(ctx, topic, "a", 0, Event{Type: "X", Payload: "v"})
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "event_sourcing_not_enabled" || ce.Fields["topic"] != topic ||
		!errors.Is(err, ErrValidation) {
		t.Fatalf("append to a plain topic: %v", err)
	}
	if _, err := s.StreamVersion(ctx, topic, "a"); !errors.As(err, &ce) || ce.Code != "event_sourcing_not_enabled" {
		t.Fatalf("stream version of a plain topic: %v", err)
	}
	c, err := s.Stream(topic, "a", 1, PageLimits{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Next(ctx); !errors.As(err, &ce) || ce.Code != "event_sourcing_not_enabled" || c.Done() {
		t.Fatalf("a read of a plain topic: %v (done %v)", err, c.Done())
	}
}

func TestEventStoreBadArguments(t *testing.T) {
	topic := esTopic(t, "go-es-args", 1)
	s := newEventStore(t)
	ctx := ctxT(t)
	for _, key := range []string{"a key", "", "tab\there"} {
		if _, err := s.Append(ctx, topic, key, 0, Event{Type: "X", Payload: "v"}); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("key %q: %v", key, err)
		}
	}
	// A C string ends at a NUL: refused rather than cut short.
	if _, err := s.Append(ctx, topic, "k", 0, Event{Type: "X", Payload: "a\x00b"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("payload with a NUL: %v", err)
	}
	if _, err := s.Browse(topic, 0, 0, -5, PageLimits{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("browse to -5: %v", err)
	}
	if _, err := LoadAggregate(ctx, s, topic, "k", AggregateConfig[int]{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an aggregate without Fold: %v", err)
	}
	// Version 0 is no start of a read (the broker says so).
	if _, err := s.ReadStream(ctx, topic, "k", 0); !errors.Is(err, ErrValidation) {
		t.Fatalf("from version 0: %v", err)
	}
	closed := newEventStore(t)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := closed.StreamVersion(ctx, topic, "k"); !errors.Is(err, ErrClosed) {
		t.Fatalf("a closed store: %v", err)
	}
}
