// Package cursus is the Go client of the Cursus message broker, over the
// libcursus C ABI (cgo). Import it as
//
//	import cursus "example.invalid/cursus-sdk/go"
//
// Build: cgo finds libcursus through pkg-config (`#cgo pkg-config: cursus`):
// point PKG_CONFIG_PATH at the installation's lib/pkgconfig (`make install
// PREFIX=...` in the SDK, or target/cursus/lib/pkgconfig after `make
// ffi-lib`), and make the shared library findable at run time (a system
// path, LD_LIBRARY_PATH, or an rpath in CGO_LDFLAGS). No other CGO_*
// variables are needed. The first New* checks that the loaded libcursus is
// the Version this package was built for.
//
// # Contexts and timeouts
//
// Every blocking call takes a context.Context and returns once it is done,
// with ctx.Err() (or an error matching it), connecting included: NewProducer
// with a 1 s deadline returns after about 1 s even if the broker never
// answers, because the remaining time becomes the connect timeout when it
// is shorter. Poll is woken at once (cursus_consumer_wakeup); Flush and
// Close wait in slices of at most 100 ms and re-check ctx; calls the
// library cannot interrupt (Send, admin requests) return at once and finish
// in the background (a cancelled Send's record may still be delivered).
//
// Flush and Close are bounded by the context's deadline; when ctx has none
// they wait the library's default (DefaultTimeout(): 30 s, the same
// default in every Cursus language, passed to the library as its marker). NoTimeout(ctx) returns a context meaning "no limit": only
// cancelling it (or a deadline it carries) ends the wait. Poll has no
// default: it waits until a message arrives, ctx is done, Wakeup or Close.
//
// # Goroutines and callbacks
//
// Every client may be used from many goroutines; no Go lock is held while
// the library blocks, so Close and Wakeup from another goroutine interrupt
// a blocked Poll at once. Callbacks (SendAsync, CommitAsync) run on the
// client's own callback thread, never on a network thread; they may call
// the client again (Send, Flush and Close of the same producer included),
// and a slow callback delays only its own client's callbacks.
//
// # Transactions
//
// Exactly-once consume-process-produce (docs/transactions.md in the SDK).
//
// A producer created with WithTransactionalID is transactional: call
// InitTransactions once, then for each transaction BeginTransaction, Send or
// SendAsync as usual (the records belong to the open transaction),
// optionally SendOffsetsToTransaction with the consumer the input came from,
// and CommitTransaction or AbortTransaction. Consumers choose what they read
// with WithIsolationLevel: ReadCommitted (the default) never returns records
// of open or aborted transactions.
//
// Errors are *Error: a call in the wrong state (BeginTransaction before
// InitTransactions or twice, a commit with no open transaction, a producer
// without a transactional id, a transactional producer sending outside a
// transaction) has Code "invalid_transaction_state" and matches
// ErrInvalidArgument; once a newer producer with the same transactional id
// has called InitTransactions, every call of the older one (sends included)
// fails with Code "producer_fenced", matching ErrFencing, for good.
//
// Contexts: each call returns ctx.Err() as soon as ctx is done, but the
// operation itself goes on in the library and its outcome is then not
// reported: a cancelled CommitTransaction may still commit. The next
// transaction call waits for it to finish (BeginTransaction then starts a
// new transaction; CommitTransaction or AbortTransaction of the same one
// fails with "invalid_transaction_state" if it completed). The calls may
// be made from callbacks, those of the same producer included.
//
// # Event sourcing
//
// An EventStore (NewEventStore) appends events to aggregates of topics
// created with event_sourcing=true, with optimistic concurrency
// (Append with the expected version; a lost race is a
// *VersionConflictError), keeps snapshots (SaveSnapshot, ReadSnapshot), and
// reads streams whole (ReadStream) or page by page through an *EventCursor
// (Stream, History, Browse; Next, or range over Pages and Events with Go
// 1.23). LoadAggregate[S] is the aggregate cycle: the latest snapshot plus
// the later events folded into an S, Append at the next version, and a
// snapshot saved every AggregateConfig.SnapshotEvery events.
//
// # Consumer control, logging, statistics
//
// A Consumer can Seek, report its Position, Pause and Resume partitions,
// list the Paused ones and read CommittedOffsets of many partitions; a
// RebalanceListener (SetRebalanceListener) is told of assigned, revoked and
// lost partitions on a thread of the consumer's own, and may call the
// consumer there (Poll excepted). Messages carry every field of a record:
// Key (nil when absent), Timestamp (the producer's Record.Timestamp),
// Metadata and Event. SetLogger sends the engine's log records to a
// *slog.Logger, with the engine's level taken from the logger; Statistics,
// SetStatisticsHandler and SetErrorHandler on producers and consumers give
// counters, lag and background errors. Listener panics are logged and
// contained.
//
// # Errors
//
// Errors from the library are *Error: Error() is the readable text every
// Cursus language shows (`code (class[, retryable]): message; field=value`),
// and errors.Is matches the class and kind sentinels (ErrNotFound,
// ErrClosed, ErrTimeout, ...).
//
// Handles are ids, never pointers, and C keeps no Go pointer: callbacks
// carry a runtime/cgo.Handle, and keys and values are copied by the library
// before a call returns.
package cursus

// #cgo pkg-config: cursus
// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Version is the Cursus SDK version whose header (CURSUS_VERSION_STRING)
// this package was built with. New* fail when the loaded libcursus reports
// another version.
const Version = C.CURSUS_VERSION_STRING

// LibraryVersion returns the version of the libcursus loaded at run time
// (cursus_version()).
func LibraryVersion() string { return C.GoString(C.cursus_version()) }

// checkVersion is the error New* return when the library is not Version.
func checkVersion(library string) error {
	if library == Version {
		return nil
	}
	msg := fmt.Sprintf("the loaded libcursus is version %s, but this Go package was built for %s: "+
		"build and run against the same SDK version (check PKG_CONFIG_PATH and the run-time library path)",
		library, Version)
	return &Error{
		Status: StatusInternal, Code: "version_mismatch", Class: "internal", Kind: "internal",
		Message: msg, Fields: map[string]string{"library": library, "package": Version},
		text: "version_mismatch (internal): " + msg,
	}
}

// versionChecked runs checkVersion once, at the first New*.
var versionChecked = sync.OnceValue(func() error { return checkVersion(LibraryVersion()) })

// DefaultTimeout is how long Flush and Close wait when the context has no
// deadline: the library's default (30 s, the same in every Cursus
// language), asked from the library once. Flush and Close pass the
// library its marker (CURSUS_DEFAULT_TIMEOUT); the value is needed only to
// slice a cancellable wait.
func DefaultTimeout() time.Duration { return defaultTimeout() }

var defaultTimeout = sync.OnceValue(func() time.Duration {
	var ms C.int64_t
	var e *C.cursus_error_t
	if err := check(C.cursus_default_timeout_ms(&ms, &e), e); err != nil {
		panic(err) // the library's constant: it cannot fail
	}
	return time.Duration(ms) * time.Millisecond
})

type noTimeoutKey struct{}

// NoTimeout returns a context, derived from ctx, under which Flush and
// Close wait without limit instead of DefaultTimeout: only cancelling it
// (or a deadline ctx already has) ends the wait.
func NoTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, noTimeoutKey{}, true)
}

// timeoutMillis is the C timeout (ms, CURSUS_NO_TIMEOUT or
// CURSUS_DEFAULT_TIMEOUT) of a Flush or Close under ctx: its deadline, else
// no limit under NoTimeout, else the library's default.
func timeoutMillis(ctx context.Context) int64 {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl).Milliseconds(), 0)
	}
	if ctx.Value(noTimeoutKey{}) != nil {
		return int64(C.CURSUS_NO_TIMEOUT)
	}
	return int64(C.CURSUS_DEFAULT_TIMEOUT)
}

// sliceableMillis is a timeoutMillis result Go can count down itself:
// the marker of the default becomes the library's default.
func sliceableMillis(limit int64) int64 {
	if limit == int64(C.CURSUS_DEFAULT_TIMEOUT) {
		return DefaultTimeout().Milliseconds()
	}
	return limit
}

// Option configures a client. Options are checked by the library as they
// are applied: an unknown name or a bad value makes New* fail with an error
// matching ErrInvalidArgument that names the kind of client and lists its
// options.
type Option func(*options)

type options struct{ kv [][2]string }

// WithBootstrap sets the broker addresses (host:port), option
// bootstrap_servers.
func WithBootstrap(addrs ...string) Option {
	return WithOption("bootstrap_servers", strings.Join(addrs, ","))
}

// WithGroup sets the consumer group id (option group_id, required for a
// Consumer).
func WithGroup(id string) Option { return WithOption("group_id", id) }

// WithOption sets any option by name (acks, linger_ms, retries,
// auto_offset_reset, connect_timeout_ms, ...): the same names and text
// values in every Cursus language. Later options override earlier ones.
func WithOption(key, value string) Option {
	return func(o *options) { o.kv = append(o.kv, [2]string{key, value}) }
}

func cstr(s string) *C.char { return C.CString(s) }

func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// connectTimeoutOption is the option the remaining time of a context
// deadline is mapped onto.
const connectTimeoutOption = "connect_timeout_ms"

// defaultConnectTimeout is connect_timeout_ms's default for kind, as the
// library documents it (cursus_config_options), in milliseconds.
func defaultConnectTimeout(kind string) int64 {
	k := cstr(kind)
	defer C.free(unsafe.Pointer(k))
	var list *C.cursus_string_list_t
	if check(C.cursus_config_options(k, &list, nil), nil) != nil {
		return -1
	}
	quads := stringList(list) // (name, type, default, description)...
	for i := 0; i+3 < len(quads); i += 4 {
		if quads[i] == connectTimeoutOption {
			if ms, err := strconv.ParseInt(quads[i+2], 10, 64); err == nil {
				return ms
			}
		}
	}
	return -1
}

// newConfig builds a C config for kind ("admin", "producer", "consumer");
// the caller destroys it. When ctx's deadline is nearer than the connect
// timeout in force, the remaining time becomes the connect timeout, so that
// connecting ends by the deadline.
func newConfig(ctx context.Context, kind string, opts []Option) (*C.cursus_config_t, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if dl, ok := ctx.Deadline(); ok {
		connect, set := o.last(connectTimeoutOption)
		limit := defaultConnectTimeout(kind)
		if set {
			limit, _ = strconv.ParseInt(connect, 10, 64) // a bad value fails below
		}
		if ms := max(time.Until(dl).Milliseconds(), 1); limit > 0 && ms < limit {
			o.kv = append(o.kv, [2]string{connectTimeoutOption, strconv.FormatInt(ms, 10)})
		}
	}
	k := cstr(kind)
	defer C.free(unsafe.Pointer(k))
	var cfg *C.cursus_config_t
	var e *C.cursus_error_t
	if err := check(C.cursus_config_new_for(k, &cfg, &e), e); err != nil {
		return nil, err
	}
	for _, kv := range o.kv {
		key, value := cstr(kv[0]), cstr(kv[1])
		err := check(C.cursus_config_set(cfg, key, value, &e), e)
		C.free(unsafe.Pointer(key))
		C.free(unsafe.Pointer(value))
		if err != nil {
			C.cursus_config_destroy(cfg)
			return nil, err
		}
	}
	return cfg, nil
}

// last returns the value the option name was last given.
func (o *options) last(name string) (string, bool) {
	for i := len(o.kv) - 1; i >= 0; i-- {
		if o.kv[i][0] == name {
			return o.kv[i][1], true
		}
	}
	return "", false
}

// open checks the library version and ctx, builds the configuration and
// calls create with it on a goroutine of its own, so that ctx ends the
// wait; a client that connects after ctx was done is closed and destroyed.
// Handles travel as unsafe.Pointer (incomplete C types cannot be type
// arguments); they are ids, never dereferenced.
func open(ctx context.Context, kind string, opts []Option,
	create func(cfg *C.cursus_config_t, e **C.cursus_error_t) (unsafe.Pointer, C.enum_cursus_status_t),
	destroy func(unsafe.Pointer)) (unsafe.Pointer, error) {
	if err := versionChecked(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg, err := newConfig(ctx, kind, opts)
	if err != nil {
		return nil, err
	}
	type result struct {
		h   unsafe.Pointer
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer C.cursus_config_destroy(cfg)
		var e *C.cursus_error_t
		h, s := create(cfg, &e)
		done <- result{h, check(s, e)}
	}()
	select {
	case r := <-done:
		return r.h, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.err == nil {
				destroy(r.h)
			}
		}()
		return nil, ctx.Err()
	}
}

// interruptible runs a call the library cannot interrupt. With a context
// that can be done, the call runs on a goroutine of its own so that ctx
// ends the wait (the call then finishes in the background).
func interruptible[T any](ctx context.Context, call func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
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
		return zero, ctx.Err()
	}
}

// cstrings copies Go strings into a C array (free with the returned func).
func cstrings(items []string) (**C.char, func()) {
	n := len(items)
	arr := (**C.char)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
	s := unsafe.Slice(arr, n+1)
	for i, item := range items {
		s[i] = cstr(item)
	}
	return arr, func() {
		for i := 0; i < n; i++ {
			C.free(unsafe.Pointer(s[i]))
		}
		C.free(unsafe.Pointer(arr))
	}
}

// stringList reads a string list handle and destroys it.
func stringList(h *C.cursus_string_list_t) []string {
	defer C.cursus_string_list_destroy(h)
	out := []string{}
	for i, n := C.size_t(0), C.cursus_string_list_count(h); i < n; i++ {
		out = append(out, goString(C.cursus_string_list_get(h, i)))
	}
	return out
}
