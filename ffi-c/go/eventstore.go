package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// EventStore appends and reads event-sourced aggregates on topics created
// with event_sourcing=true (docs/event-sourcing.md in the SDK). Each
// aggregate key has a stream of events numbered 1, 2, 3, ... with
// optimistic concurrency, plus a latest snapshot. Payloads, metadata and
// snapshot states are UTF-8 text; keys are text without whitespace (an
// empty key or one with whitespace fails with ErrInvalidArgument before
// anything is sent). It is safe for concurrent use.
type EventStore struct {
	h *C.cursus_event_store_t
}

// NewEventStore connects an event store client (the options of NewAdmin:
// bootstrap_servers, connect_timeout_ms, TLS and AUTH options...). ctx
// bounds connecting as for NewProducer.
func NewEventStore(ctx context.Context, opts ...Option) (*EventStore, error) {
	ptr, err := open(ctx, "admin", opts, func(cfg *C.cursus_config_t, e **C.cursus_error_t) (unsafe.Pointer, C.enum_cursus_status_t) {
		var h *C.cursus_event_store_t
		s := C.cursus_event_store_new(cfg, &h, e)
		return unsafe.Pointer(h), s
	}, func(h unsafe.Pointer) {
		C.cursus_event_store_destroy((*C.cursus_event_store_t)(h))
	})
	if err != nil {
		return nil, err
	}
	s := &EventStore{h: (*C.cursus_event_store_t)(ptr)}
	runtime.SetFinalizer(s, func(s *EventStore) { C.cursus_event_store_destroy(s.h) })
	return s, nil
}

// Close closes the client (idempotent); later calls fail with ErrClosed.
func (s *EventStore) Close() error {
	defer runtime.KeepAlive(s)
	var e *C.cursus_error_t
	return check(C.cursus_event_store_close(s.h, &e), e)
}

// Event is an event to append.
type Event struct {
	// Type is the event type name (e.g. "OrderCreated"); may be empty.
	Type string
	// Payload is the event's text (e.g. JSON).
	Payload string
	// Metadata is optional text (e.g. JSON with a trace id).
	Metadata string
	// SchemaVersion is the payload's schema version (0: the broker's
	// default, 1).
	SchemaVersion uint32
	// ID is the event's id: non-empty text without whitespace, unique per
	// aggregate replay topic (empty: one is generated at append). On a
	// replay topic an append repeated with the same ID, version and
	// payload returns the original Appended instead of a second event; the
	// same version or ID with anything else fails with code
	// "aggregate_identity_conflict" (class conflict).
	ID string
}

// Appended and Snapshot (and their readers) are generated: results_gen.go.

// StoredEvent is an event as stored (or, for Browse, any record), with
// every field.
type StoredEvent struct {
	// Topic and Partition are where it is stored; Offset its offset.
	Topic     string
	Partition uint32
	Offset    uint64
	// Timestamp is when it was stored (the Unix epoch when unknown).
	Timestamp time.Time
	// Key is the aggregate key (empty for a record without a key; any
	// bytes for a browsed record).
	Key string
	// Version is its version in the stream (0 for a browsed record that is
	// no event).
	Version uint64
	// Type, SchemaVersion and Metadata are those it was appended with
	// (SchemaVersion 1 when none was given).
	Type          string
	SchemaVersion uint32
	Metadata      string
	// Payload is the event's text (any bytes for a browsed record).
	Payload string
}

// Completeness says how complete a History page is.
type Completeness string

const (
	// Complete: the versions are contiguous and verified against the log.
	Complete Completeness = "complete"
	// Partial: a gap or mismatch was found; what was returned is verified.
	Partial Completeness = "partial"
	// Unknown: the index holds nothing for the range (e.g. retention
	// removed it).
	Unknown Completeness = "unknown"
)

// EventPage is one page of a paged read.
type EventPage struct {
	// Partition is the partition read.
	Partition uint32
	// HasMore tells whether more pages follow.
	HasMore bool
	// Snapshot is, on the first page of a stream read, the snapshot the
	// events follow (nil otherwise).
	Snapshot *Snapshot
	// Events are the events (or browsed records), in order.
	Events []StoredEvent
	// Completeness is set on History pages (empty otherwise).
	Completeness Completeness
	// HeadVersion is, on History pages, the aggregate's current version.
	HeadVersion uint64
	// ReadableEndOffset is, on Browse pages, the end of what is readable
	// in the partition (-1 on other pages).
	ReadableEndOffset int64
}

// PageLimits bound one page; 0 takes the broker's default (stream reads:
// 256 events and 8 MiB; History and Browse: 100 records and 1 MiB).
type PageLimits struct {
	MaxRecords uint32
	MaxBytes   uint32
}

// StreamRead is what reading every page gave.
type StreamRead struct {
	// Snapshot is the first page's snapshot (stream reads), or nil.
	Snapshot *Snapshot
	// Events are every event, in order.
	Events []StoredEvent
	// Pages is how many pages were read.
	Pages int
}

// VersionConflictError is the error of an append whose expected version
// was not the aggregate's (code "version_conflict", class conflict):
// another writer appended first. Load the aggregate again and decide
// again. errors.As gets it; it wraps the *Error (errors.Is(err,
// ErrConflict) holds).
type VersionConflictError struct {
	// Current is the aggregate's current version (field "current").
	Current uint64
	// Expected is the version the append expected (field "expected").
	Expected uint64
	// Err is the error as the library reported it.
	Err *Error
}

// Error returns the readable text of Err.
func (e *VersionConflictError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *VersionConflictError) Unwrap() error { return e.Err }

// esError types a version conflict.
func esError(err error) error {
	var ce *Error
	if errors.As(err, &ce) && ce.Code == "version_conflict" {
		current, _ := strconv.ParseUint(ce.Fields["current"], 10, 64)
		expected, _ := strconv.ParseUint(ce.Fields["expected"], 10, 64)
		return &VersionConflictError{Current: current, Expected: expected, Err: ce}
	}
	return err
}

// textError is the error for a string the C ABI cannot carry.
func textError(name string) error {
	msg := name + " must not contain a NUL byte"
	return &Error{Status: StatusInvalidArgument, Code: "invalid_argument", Class: "validation",
		Kind: "invalid_argument", Message: msg, Fields: map[string]string{},
		text: "invalid_argument (validation): " + msg}
}

// cTexts copies strings for a call (a NUL inside one fails with
// ErrInvalidArgument, since a C string would end there); free releases
// them.
func cTexts(named ...string) (out []*C.char, free func(), err error) {
	free = func() {
		for _, p := range out {
			C.free(unsafe.Pointer(p))
		}
	}
	for i := 0; i+1 < len(named); i += 2 {
		if strings.IndexByte(named[i+1], 0) >= 0 {
			free()
			return nil, func() {}, textError(named[i])
		}
		out = append(out, cstr(named[i+1]))
	}
	return out, free, nil
}

// detached runs a call the library cannot interrupt and that must run to
// its end (it frees its arguments): unlike interruptible, it never returns
// before starting the call. With a context that can be done, the call runs
// on a goroutine of its own so that ctx ends the wait; the call then
// finishes in the background and `abandoned` (if not nil) gets its outcome.
func detached[T any](ctx context.Context, call func() (T, error), abandoned func(T, error)) (T, error) {
	if ctx.Done() == nil {
		return call()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		if abandoned != nil {
			go func() {
				r := <-done
				abandoned(r.v, r.err)
			}()
		}
		var zero T
		return zero, ctx.Err()
	}
}

// storeCall runs one event-store request bounded by ctx; free releases its
// arguments once the request is over (also when ctx ended the wait before).
func storeCall[T any](ctx context.Context, s *EventStore, free func(),
	f func(e **C.cursus_error_t) (T, C.enum_cursus_status_t)) (T, error) {
	return detached(ctx, func() (T, error) {
		defer free()
		defer runtime.KeepAlive(s)
		var e *C.cursus_error_t
		v, st := f(&e)
		return v, esError(check(st, e))
	}, nil)
}

// Append appends ev to aggregate key if the aggregate is at
// expectedVersion (0 for a new aggregate): the event gets expectedVersion +
// 1. Otherwise it fails with a *VersionConflictError. Cancelling ctx
// returns ctx.Err() at once; the append goes on in the background and may
// still succeed.
func (s *EventStore) Append(ctx context.Context, topic, key string, expectedVersion uint64, ev Event) (Appended, error) {
	if err := ctx.Err(); err != nil {
		return Appended{}, err
	}
	if ev.ID != "" {
		return s.appendEvent(ctx, topic, key, expectedVersion, ev)
	}
	args, free, err := cTexts("topic", topic, "key", key, "event type", ev.Type, "payload", ev.Payload,
		"metadata", ev.Metadata)
	if err != nil {
		return Appended{}, err
	}
	var metadata *C.char
	if ev.Metadata != "" {
		metadata = args[4]
	}
	return storeCall(ctx, s, free, func(e **C.cursus_error_t) (Appended, C.enum_cursus_status_t) {
		var a *C.cursus_appended_t
		st := C.cursus_event_store_append(s.h, args[0], args[1], C.uint64_t(expectedVersion), args[2], args[3],
			metadata, C.uint32_t(ev.SchemaVersion), &a, e)
		defer C.cursus_appended_destroy(a)
		return readAppended(a), st
	})
}

// StreamVersion returns the aggregate's current version (0 when it has no
// event).
func (s *EventStore) StreamVersion(ctx context.Context, topic, key string) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	args, free, err := cTexts("topic", topic, "key", key)
	if err != nil {
		return 0, err
	}
	return storeCall(ctx, s, free, func(e **C.cursus_error_t) (uint64, C.enum_cursus_status_t) {
		var v C.uint64_t
		st := C.cursus_event_store_stream_version(s.h, args[0], args[1], &v, e)
		return uint64(v), st
	})
}

// SaveSnapshot saves state as the aggregate's snapshot at version (at most
// its current version, else code "snapshot_version_exceeds_stream"). Only
// the latest snapshot is kept.
func (s *EventStore) SaveSnapshot(ctx context.Context, topic, key string, version uint64, state string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	args, free, err := cTexts("topic", topic, "key", key, "state", state)
	if err != nil {
		return err
	}
	_, err = storeCall(ctx, s, free, func(e **C.cursus_error_t) (struct{}, C.enum_cursus_status_t) {
		return struct{}{}, C.cursus_event_store_save_snapshot(s.h, args[0], args[1], C.uint64_t(version), args[2], e)
	})
	return err
}

// ReadSnapshot returns the aggregate's latest snapshot, or nil when it has
// none.
func (s *EventStore) ReadSnapshot(ctx context.Context, topic, key string) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args, free, err := cTexts("topic", topic, "key", key)
	if err != nil {
		return nil, err
	}
	return storeCall(ctx, s, free, func(e **C.cursus_error_t) (*Snapshot, C.enum_cursus_status_t) {
		var h *C.cursus_snapshot_t
		st := C.cursus_event_store_read_snapshot(s.h, args[0], args[1], &h, e)
		return snapshotFrom(h), st
	})
}

// snapshotFrom reads a snapshot handle (nil for none) and destroys it.
func snapshotFrom(h *C.cursus_snapshot_t) *Snapshot {
	if h == nil {
		return nil
	}
	defer C.cursus_snapshot_destroy(h)
	snapshot := readSnapshot(h)
	return &snapshot
}

// ReadStream reads aggregate key's stream from fromVersion (1: the start)
// to its end, every page: the latest snapshot at or after fromVersion
// (nil if none) and the events after it. Use Stream to go page by page.
func (s *EventStore) ReadStream(ctx context.Context, topic, key string, fromVersion uint64) (StreamRead, error) {
	c, err := s.Stream(topic, key, fromVersion, PageLimits{})
	if err != nil {
		return StreamRead{}, err
	}
	defer c.Close()
	return c.ReadAll(ctx)
}

// Stream returns a cursor over aggregate key's stream from fromVersion (1:
// the start): its first page carries the latest snapshot at or after
// fromVersion, and the events after it.
func (s *EventStore) Stream(topic, key string, fromVersion uint64, limits PageLimits) (*EventCursor, error) {
	args, free, err := cTexts("topic", topic, "key", key)
	if err != nil {
		return nil, err
	}
	defer free()
	return s.cursor(topic, func(c **C.cursus_event_cursor_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_event_cursor_stream(args[0], args[1], C.uint64_t(fromVersion), C.uint32_t(limits.MaxRecords),
			C.uint32_t(limits.MaxBytes), c, e)
	})
}

// History returns a cursor over aggregate key's original events (never a
// snapshot) from fromVersion to toVersion (0: its current version); each
// page tells its Completeness.
func (s *EventStore) History(topic, key string, fromVersion, toVersion uint64, limits PageLimits) (*EventCursor, error) {
	args, free, err := cTexts("topic", topic, "key", key)
	if err != nil {
		return nil, err
	}
	defer free()
	return s.cursor(topic, func(c **C.cursus_event_cursor_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_event_cursor_history(args[0], args[1], C.uint64_t(fromVersion), C.uint64_t(toVersion),
			C.uint32_t(limits.MaxRecords), C.uint32_t(limits.MaxBytes), c, e)
	})
}

// ToEnd is the toOffset of Browse meaning "up to the readable end".
const ToEnd int64 = -1

// Browse returns a cursor over the committed records of any topic's
// partition from fromOffset up to toOffset (exclusive; ToEnd: the
// readable end).
func (s *EventStore) Browse(topic string, partition uint32, fromOffset uint64, toOffset int64, limits PageLimits) (*EventCursor, error) {
	args, free, err := cTexts("topic", topic)
	if err != nil {
		return nil, err
	}
	defer free()
	return s.cursor(topic, func(c **C.cursus_event_cursor_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_event_cursor_browse(args[0], C.uint32_t(partition), C.uint64_t(fromOffset),
			C.int64_t(toOffset), C.uint32_t(limits.MaxRecords), C.uint32_t(limits.MaxBytes), c, e)
	})
}

func (s *EventStore) cursor(topic string, create func(**C.cursus_event_cursor_t, **C.cursus_error_t) C.enum_cursus_status_t) (*EventCursor, error) {
	var h *C.cursus_event_cursor_t
	var e *C.cursus_error_t
	if err := check(create(&h, &e), e); err != nil {
		return nil, err
	}
	c := &EventCursor{store: s, h: h, topic: topic}
	runtime.SetFinalizer(c, func(c *EventCursor) { C.cursus_event_cursor_destroy(c.h) })
	return c, nil
}

// EventCursor reads a paged read (Stream, History, Browse) one page at a
// time. One goroutine at a time uses a cursor; Close releases it (a
// finalizer does too).
type EventCursor struct {
	store *EventStore
	h     *C.cursus_event_cursor_t
	topic string
	mu    sync.Mutex
	// pending is a read whose wait ctx ended: its outcome is the next page.
	pending chan pageResult
}

type pageResult struct {
	page *EventPage
	err  error
}

// Next reads the next page; it returns nil, nil once every page was read.
// A failed read leaves the cursor where it was (Next may be called
// again). When ctx ends the wait, Next returns ctx.Err() and the read goes
// on: its page is what the next call returns, so no page is lost.
func (c *EventCursor) Next(ctx context.Context) (*EventPage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch := c.pending
	if ch == nil {
		if ctx.Done() == nil { // nothing can end the wait
			r := c.read()
			return r.page, r.err
		}
		ch = make(chan pageResult, 1)
		go func() { ch <- c.read() }()
	}
	select {
	case r := <-ch:
		c.pending = nil
		return r.page, r.err
	case <-ctx.Done():
		c.pending = ch
		return nil, ctx.Err()
	}
}

func (c *EventCursor) read() pageResult {
	defer runtime.KeepAlive(c)
	defer runtime.KeepAlive(c.store)
	var p *C.cursus_event_page_t
	var e *C.cursus_error_t
	if err := check(C.cursus_event_store_next_page(c.store.h, c.h, &p, &e), e); err != nil {
		return pageResult{err: err}
	}
	if p == nil {
		return pageResult{}
	}
	return pageResult{page: pageFrom(p, c.topic)}
}

// Done tells whether every page was read.
func (c *EventCursor) Done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer runtime.KeepAlive(c)
	return c.pending == nil && bool(C.cursus_event_cursor_done(c.h))
}

// ReadAll reads every remaining page: the first page's snapshot and all
// events.
func (c *EventCursor) ReadAll(ctx context.Context) (StreamRead, error) {
	var out StreamRead
	for {
		page, err := c.Next(ctx)
		if err != nil {
			return out, err
		}
		if page == nil {
			return out, nil
		}
		if out.Pages == 0 {
			out.Snapshot = page.Snapshot
		}
		out.Pages++
		out.Events = append(out.Events, page.Events...)
	}
}

// Close releases the cursor (a read still going on then fails).
func (c *EventCursor) Close() {
	runtime.SetFinalizer(c, nil)
	C.cursus_event_cursor_destroy(c.h)
}

// pageFrom reads a page handle and destroys it.
func pageFrom(p *C.cursus_event_page_t, topic string) *EventPage {
	defer C.cursus_event_page_destroy(p)
	var snap *C.cursus_snapshot_t
	_ = check(C.cursus_event_page_snapshot(p, &snap, nil), nil) // fails only for an invalid page
	page := &EventPage{
		Partition:         uint32(C.cursus_event_page_partition(p)),
		HasMore:           bool(C.cursus_event_page_has_more(p)),
		Snapshot:          snapshotFrom(snap),
		Completeness:      Completeness(goString(C.cursus_event_page_completeness(p))),
		HeadVersion:       uint64(C.cursus_event_page_head_version(p)),
		ReadableEndOffset: int64(C.cursus_event_page_readable_end_offset(p)),
	}
	n := C.cursus_event_page_count(p)
	page.Events = make([]StoredEvent, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var klen, plen C.size_t
		k := C.cursus_event_page_key(p, i, &klen)
		v := C.cursus_event_page_payload(p, i, &plen)
		page.Events = append(page.Events, StoredEvent{
			Topic:         topic,
			Partition:     page.Partition,
			Offset:        uint64(C.cursus_event_page_offset(p, i)),
			Timestamp:     time.UnixMilli(int64(C.cursus_event_page_timestamp(p, i))),
			Key:           C.GoStringN((*C.char)(unsafe.Pointer(k)), C.int(klen)),
			Version:       uint64(C.cursus_event_page_version(p, i)),
			Type:          goString(C.cursus_event_page_event_type(p, i)),
			SchemaVersion: uint32(C.cursus_event_page_schema_version(p, i)),
			Metadata:      goString(C.cursus_event_page_metadata(p, i)),
			Payload:       C.GoStringN((*C.char)(unsafe.Pointer(v)), C.int(plen)),
		})
	}
	return page
}

// DefaultSnapshotEvery is the recommended AggregateConfig.SnapshotEvery.
const DefaultSnapshotEvery = 500

// AggregateConfig says how an Aggregate's state is built and saved.
type AggregateConfig[S any] struct {
	// Initial is the state of an aggregate without a snapshot.
	Initial S
	// Fold applies one event to the state (required).
	Fold func(state S, event StoredEvent) S
	// Unmarshal turns a snapshot's text into a state; required to load an
	// aggregate that has a snapshot.
	Unmarshal func(string) (S, error)
	// Marshal turns the state into snapshot text; required when
	// SnapshotEvery is not 0.
	Marshal func(S) (string, error)
	// SnapshotEvery is how many appends make a snapshot due (0: never;
	// DefaultSnapshotEvery is the recommended value): Append then saves
	// the state through Marshal (a failure is logged, never Append's).
	SnapshotEvery uint64
}

// Aggregate is one aggregate's state and version, loaded from its latest
// snapshot and the events after it, and kept up to date by Append. It is
// safe for concurrent use (its calls run one at a time).
type Aggregate[S any] struct {
	store *EventStore
	h     *C.cursus_aggregate_t
	cfg   AggregateConfig[S]
	topic string
	key   string

	mu             sync.Mutex
	state          S
	loadedSnapshot *Snapshot
	loadedEvents   int
}

// LoadAggregate loads aggregate key: the latest snapshot (through
// cfg.Unmarshal), or cfg.Initial, with every later event folded in.
func LoadAggregate[S any](ctx context.Context, store *EventStore, topic, key string, cfg AggregateConfig[S]) (*Aggregate[S], error) {
	if cfg.Fold == nil {
		return nil, invalidArgument("AggregateConfig.Fold is required")
	}
	if cfg.SnapshotEvery != 0 && cfg.Marshal == nil {
		return nil, invalidArgument("AggregateConfig.Marshal is required when SnapshotEvery is not 0")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args, free, err := cTexts("topic", topic, "key", key)
	if err != nil {
		return nil, err
	}
	type loaded struct {
		h    *C.cursus_aggregate_t
		page *EventPage
	}
	l, err := detached(ctx, func() (loaded, error) {
		defer free()
		defer runtime.KeepAlive(store)
		var h *C.cursus_aggregate_t
		var e *C.cursus_error_t
		if err := check(C.cursus_event_store_load_aggregate(store.h, args[0], args[1], C.uint64_t(cfg.SnapshotEvery),
			&h, &e), e); err != nil {
			return loaded{}, err
		}
		var p *C.cursus_event_page_t
		if err := check(C.cursus_aggregate_loaded(h, &p, &e), e); err != nil {
			C.cursus_aggregate_destroy(h)
			return loaded{}, err
		}
		return loaded{h, pageFrom(p, topic)}, nil
	}, func(l loaded, _ error) { // ctx ended the wait: nobody takes the aggregate
		C.cursus_aggregate_destroy(l.h)
	})
	if err != nil {
		return nil, err
	}
	a := &Aggregate[S]{store: store, h: l.h, cfg: cfg, topic: topic, key: key, state: cfg.Initial,
		loadedSnapshot: l.page.Snapshot, loadedEvents: len(l.page.Events)}
	runtime.SetFinalizer(a, func(a *Aggregate[S]) { C.cursus_aggregate_destroy(a.h) })
	if l.page.Snapshot != nil {
		if cfg.Unmarshal == nil {
			a.Close()
			return nil, invalidArgument("aggregate " + key + " has a snapshot: AggregateConfig.Unmarshal is required")
		}
		if a.state, err = cfg.Unmarshal(l.page.Snapshot.State); err != nil {
			a.Close()
			return nil, err
		}
	}
	for _, ev := range l.page.Events {
		a.state = cfg.Fold(a.state, ev)
	}
	return a, nil
}

func invalidArgument(msg string) error {
	return &Error{Status: StatusInvalidArgument, Code: "invalid_argument", Class: "validation",
		Kind: "invalid_argument", Message: msg, Fields: map[string]string{},
		text: "invalid_argument (validation): " + msg}
}

// State returns the state: loaded, plus every event appended since.
func (a *Aggregate[S]) State() S {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

// Version returns the version loaded or last appended.
func (a *Aggregate[S]) Version() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	defer runtime.KeepAlive(a)
	return uint64(C.cursus_aggregate_version(a.h))
}

// LoadedSnapshot returns the snapshot loading started from, or nil.
func (a *Aggregate[S]) LoadedSnapshot() *Snapshot { return a.loadedSnapshot }

// LoadedEvents returns how many events loading folded in (those after the
// snapshot).
func (a *Aggregate[S]) LoadedEvents() int { return a.loadedEvents }

// Key returns the aggregate key.
func (a *Aggregate[S]) Key() string { return a.key }

// Append appends ev (with ev.ID as its id; empty: a generated one) at the
// aggregate's next version and returns it as stored: its version, offset
// and partition are the broker's (its timestamp is the Unix epoch: the
// append's reply does not carry it). Only then is the stored event folded
// into the state, so a failed append leaves the state unchanged. When
// another writer appended first it fails with a *VersionConflictError and
// the aggregate is unchanged: load it again and decide again. A bad ID
// (whitespace) fails with ErrInvalidArgument before anything is sent.
//
// When a snapshot is due, the state is then saved (cfg.Marshal). A snapshot
// that fails (the save, or Marshal) never fails the append, which is
// durable: it is reported through the library log at warn and stays due,
// so the next append tries again. Cancelling ctx returns ctx.Err() at once;
// the append (and the fold) still complete in the background, keeping
// state and version together.
func (a *Aggregate[S]) Append(ctx context.Context, ev Event) (StoredEvent, error) {
	if err := ctx.Err(); err != nil {
		return StoredEvent{}, err
	}
	args, free, err := cTexts("event type", ev.Type, "payload", ev.Payload, "metadata", ev.Metadata, "event id", ev.ID)
	if err != nil {
		return StoredEvent{}, err
	}
	var metadata, id *C.char
	if ev.Metadata != "" {
		metadata = args[2]
	}
	if ev.ID != "" {
		id = args[3]
	}
	return detached(ctx, func() (StoredEvent, error) {
		defer free()
		defer runtime.KeepAlive(a)
		defer runtime.KeepAlive(a.store)
		a.mu.Lock()
		defer a.mu.Unlock()
		var p *C.cursus_event_page_t
		var e *C.cursus_error_t
		st := C.cursus_event_store_aggregate_append(a.store.h, a.h, args[0], args[1], metadata,
			C.uint32_t(ev.SchemaVersion), id, &p, &e)
		if err := esError(check(st, e)); err != nil {
			return StoredEvent{}, err
		}
		stored := pageFrom(p, a.topic).Events[0]
		a.state = a.cfg.Fold(a.state, stored)
		if a.cfg.Marshal != nil && C.cursus_aggregate_snapshot_due(a.h) {
			a.autoSnapshotLocked()
		}
		return stored, nil
	}, nil)
}

// autoSnapshotLocked saves the state as the automatic snapshot; a failure
// is the library's to report (log at warn), never the append's.
func (a *Aggregate[S]) autoSnapshotLocked() {
	text, err := a.cfg.Marshal(a.state)
	if err == nil && strings.IndexByte(text, 0) >= 0 {
		err = textError("snapshot state")
	}
	if err != nil {
		reason := cstr(err.Error())
		defer C.free(unsafe.Pointer(reason))
		C.cursus_aggregate_snapshot_failed(a.h, reason, nil)
		return
	}
	ct := cstr(text)
	defer C.free(unsafe.Pointer(ct))
	var saved C.bool
	C.cursus_event_store_aggregate_auto_snapshot(a.store.h, a.h, ct, &saved, nil)
}

// SnapshotDue tells whether SnapshotEvery events were appended since the
// last snapshot (Append saves one by itself then).
func (a *Aggregate[S]) SnapshotDue() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	defer runtime.KeepAlive(a)
	return bool(C.cursus_aggregate_snapshot_due(a.h))
}

// SaveSnapshot saves the state (cfg.Marshal) as the snapshot at the
// current version.
func (a *Aggregate[S]) SaveSnapshot(ctx context.Context) error {
	if a.cfg.Marshal == nil {
		return invalidArgument("AggregateConfig.Marshal is required to save a snapshot")
	}
	_, err := interruptible(ctx, func() (struct{}, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		return struct{}{}, a.saveSnapshotLocked()
	})
	return err
}

func (a *Aggregate[S]) saveSnapshotLocked() error {
	defer runtime.KeepAlive(a)
	defer runtime.KeepAlive(a.store)
	text, err := a.cfg.Marshal(a.state)
	if err != nil {
		return err
	}
	if strings.IndexByte(text, 0) >= 0 {
		return textError("snapshot state")
	}
	ct := cstr(text)
	defer C.free(unsafe.Pointer(ct))
	var e *C.cursus_error_t
	return check(C.cursus_event_store_aggregate_save_snapshot(a.store.h, a.h, ct, &e), e)
}

// Close releases the aggregate (a finalizer does too).
func (a *Aggregate[S]) Close() {
	runtime.SetFinalizer(a, nil)
	C.cursus_aggregate_destroy(a.h)
}
