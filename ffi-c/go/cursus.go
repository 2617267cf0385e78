// Package cursus is the Go client of the Cursus message broker, over the
// libcursus C ABI (cgo).
//
// Build: cgo finds libcursus through pkg-config (`#cgo pkg-config: cursus`):
// point PKG_CONFIG_PATH at the installation's lib/pkgconfig (`make install
// PREFIX=...` in the SDK, or `make ffi-lib` for target/cursus), and make the
// shared library findable at run time (a system path, LD_LIBRARY_PATH, or
// an rpath in CGO_LDFLAGS). No other CGO_* variables are needed.
//
// Contexts: every blocking call takes a context.Context and returns
// ctx.Err() once it is done, including connecting (New* with a 1 s
// deadline returns after 1 s, not after the 5 s connect timeout). Poll is
// woken at once; calls that cannot be interrupted go on in the background
// (a cancelled Send's record may still be delivered).
//
// Timeouts: Flush and Close wait until the context's deadline, or
// DefaultTimeout (30 s, as in every Cursus language) when it has none;
// NoTimeout(ctx) waits without limit.
//
// Goroutine safety: every client may be used from many goroutines. Close
// and Wakeup from another goroutine interrupt a blocked Poll. Callbacks run
// on the client's own callback thread, never a network thread; they may
// call the client again (Send and Flush of the same producer included).
//
// Handles are ids, never pointers, and no Go pointer is kept by C:
// callbacks carry a runtime/cgo.Handle, and keys and values are copied by
// the library before a call returns.
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

// Version is the version of this package: the SDK version whose header it
// was built with. New* fail when the loaded libcursus has another.
const Version = C.CURSUS_VERSION_STRING

// LibraryVersion is the version of the libcursus loaded at run time.
func LibraryVersion() string { return C.GoString(C.cursus_version()) }

var versionCheck = sync.OnceValue(func() error {
	if got := LibraryVersion(); got != Version {
		return &Error{
			Status: StatusInternal, Code: "version_mismatch", Class: "internal", Kind: "internal",
			Message: fmt.Sprintf("libcursus %s is loaded, but this package was built for %s", got, Version),
			Fields:  map[string]string{"library": got, "package": Version},
		}
	}
	return nil
})

// DefaultTimeout is how long Flush and Close wait when the context has no
// deadline: 30 s, the same default in every Cursus language.
const DefaultTimeout = 30 * time.Second

type noTimeoutKey struct{}

// NoTimeout returns a context that makes Flush and Close wait without
// limit (only cancelling the context stops them).
func NoTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, noTimeoutKey{}, true)
}

// timeoutMillis is the C timeout for a Flush or Close under ctx.
func timeoutMillis(ctx context.Context) int64 {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl).Milliseconds(), 0)
	}
	if ctx.Value(noTimeoutKey{}) != nil {
		return int64(C.CURSUS_NO_TIMEOUT)
	}
	return DefaultTimeout.Milliseconds()
}

// Option configures a client. Options are checked as they are applied (an
// unknown name or bad value makes New* fail with an error naming the kind
// of client and listing its options).
type Option func(*options)

type options struct{ kv [][2]string }

// WithBootstrap sets the broker addresses (host:port).
func WithBootstrap(addrs ...string) Option {
	return WithOption("bootstrap_servers", strings.Join(addrs, ","))
}

// WithGroup sets the consumer group id (required for a Consumer).
func WithGroup(id string) Option { return WithOption("group_id", id) }

// WithOption sets any option by name (acks, linger_ms, retries,
// auto_offset_reset, ...): the same names in every language.
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

// newConfig builds a C config for kind ("admin", "producer", "consumer");
// the caller destroys it. A context deadline shorter than the connect
// timeout becomes the connect timeout.
func newConfig(ctx context.Context, kind string, opts []Option) (*C.cursus_config_t, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if dl, ok := ctx.Deadline(); ok && !o.has("connect_timeout_ms") {
		if ms := time.Until(dl).Milliseconds(); ms < 5000 {
			o.kv = append(o.kv, [2]string{"connect_timeout_ms", strconv.FormatInt(max(ms, 1), 10)})
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

func (o *options) has(name string) bool {
	for _, kv := range o.kv {
		if kv[0] == name {
			return true
		}
	}
	return false
}

// open checks the library version and ctx, builds the configuration and
// calls create with it on a goroutine of its own, so that ctx ends the
// wait; a client created after ctx was done is destroyed. Handles travel as
// unsafe.Pointer (incomplete C types cannot be type arguments).
func open(ctx context.Context, kind string, opts []Option,
	create func(cfg *C.cursus_config_t, e **C.cursus_error_t) (unsafe.Pointer, C.enum_cursus_status_t),
	destroy func(unsafe.Pointer)) (unsafe.Pointer, error) {
	if err := versionCheck(); err != nil {
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

// interruptible runs a call that C cannot interrupt on a goroutine of its
// own, so that ctx ends the wait (the call then finishes in the background).
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
