package cursus

// #include <stdlib.h>
// #include "cursus.h"
// cursus_status_t cursus_go_producer_set_statistics(cursus_producer_t *p, int64_t interval_ms, uintptr_t id, cursus_error_t **err);
// cursus_status_t cursus_go_consumer_set_statistics(cursus_consumer_t *c, int64_t interval_ms, uintptr_t id, cursus_error_t **err);
// cursus_status_t cursus_go_producer_set_errors(cursus_producer_t *p, uintptr_t id, cursus_error_t **err);
// cursus_status_t cursus_go_consumer_set_errors(cursus_consumer_t *c, uintptr_t id, cursus_error_t **err);
// cursus_status_t cursus_go_log_set(const char *level, int on, cursus_error_t **err);
import "C"

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Listeners (rebalance, statistics, errors) reach C as an id of this
// registry in user_data, never as a Go pointer. Unlike a cgo.Handle, an id
// that was released is harmless: a call the library had already started
// for a replaced listener, or one arriving after Close, finds nothing and
// is dropped instead of panicking on the library's thread.
var registry struct {
	sync.RWMutex
	next  uintptr
	items map[uintptr]any
}

// registerListener keeps v until releaseListener(id); ids are never 0.
func registerListener(v any) uintptr {
	registry.Lock()
	defer registry.Unlock()
	if registry.items == nil {
		registry.items = map[uintptr]any{}
	}
	registry.next++
	registry.items[registry.next] = v
	return registry.next
}

// lookupListener returns what id stands for, nil once it was released.
func lookupListener(id uintptr) any {
	registry.RLock()
	defer registry.RUnlock()
	return registry.items[id]
}

// releaseListener forgets id (0 is ignored).
func releaseListener(id uintptr) {
	if id == 0 {
		return
	}
	registry.Lock()
	defer registry.Unlock()
	delete(registry.items, id)
}

// listenerKind names a client's listener slot.
type listenerKind int

const (
	rebalanceSlot listenerKind = iota
	statisticsSlot
	errorSlot
	slotCount
)

// listenerSet holds the registry ids of a client's listeners: what it must
// keep alive until the listener is replaced or the client is closed.
type listenerSet struct {
	mu  sync.Mutex
	ids [slotCount]uintptr
}

// replace installs v (nil: none) in a slot: install gets the new id (0 to
// clear the listener in the library); the old one is released only once
// the library took the new one.
func (s *listenerSet) replace(kind listenerKind, v any, install func(id uintptr) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var id uintptr
	if v != nil {
		id = registerListener(v)
	}
	if err := install(id); err != nil {
		releaseListener(id)
		return err
	}
	releaseListener(s.ids[kind])
	s.ids[kind] = id
	return nil
}

// releaseAll forgets every listener (at Close and when the client is
// collected): later calls from the library find nothing.
func (s *listenerSet) releaseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, id := range s.ids {
		releaseListener(id)
		s.ids[i] = 0
	}
}

// recoverListener contains a panic of a user listener: the library's
// thread goes on, and the panic is logged.
func recoverListener(what string) {
	if r := recover(); r != nil {
		reportPanic(what, r)
	}
}

// reportPanic logs a listener's panic (to the SetLogger logger, else
// slog.Default()); a logger that panics too is ignored.
func reportPanic(what string, r any) {
	defer func() { _ = recover() }()
	l := logger.Load()
	if l == nil {
		l = slog.Default()
	}
	l.Error("cursus: "+what+" panicked", "panic", fmt.Sprint(r))
}

// ---- Logging -------------------------------------------------------------

// LevelTrace is the slog level engine records of level "trace" get (below
// slog.LevelDebug).
const LevelTrace = slog.LevelDebug - 4

// logger is the logger SetLogger installed (nil: logging is off).
var logger atomic.Pointer[slog.Logger]

// logMu orders SetLogger calls.
var logMu sync.Mutex

// engineLevels maps the engine's levels to slog's, most verbose first.
var engineLevels = []struct {
	name  string
	level slog.Level
}{
	{"trace", LevelTrace},
	{"debug", slog.LevelDebug},
	{"info", slog.LevelInfo},
	{"warn", slog.LevelWarn},
	{"error", slog.LevelError},
}

// SetLogger sends the engine's log records (of every client in the
// process) to l, with levels mapped to slog's (error, warn, info, debug;
// trace is LevelTrace) and the engine module as the "target" attribute.
// The engine's level is set from what l has enabled (l.Enabled for each
// level, most verbose first), so records l would discard are not even
// made; call SetLogger again after changing l's level. nil turns logging
// off. Records arrive on the library's log thread, in order; when l falls
// 10000 records behind, newer ones are dropped and the next record says
// how many (attribute "dropped").
func SetLogger(l *slog.Logger) error {
	logMu.Lock()
	defer logMu.Unlock()
	level := "off"
	if l != nil {
		for _, lv := range engineLevels {
			if l.Enabled(context.Background(), lv.level) {
				level = lv.name
				break
			}
		}
	}
	if level == "off" {
		l = nil
	}
	logger.Store(l)
	name := cstr(level)
	defer C.free(unsafe.Pointer(name))
	on := C.int(0)
	if l != nil {
		on = 1
	}
	var e *C.cursus_error_t
	return check(C.cursus_go_log_set(name, on, &e), e)
}

//export cursusGoLog
func cursusGoLog(r *C.cursus_log_record_t) {
	l := logger.Load()
	if l == nil {
		return
	}
	defer recoverListener("log handler")
	level := slog.LevelInfo
	name := goString(C.cursus_log_record_level(r))
	for _, lv := range engineLevels {
		if lv.name == name {
			level = lv.level
		}
	}
	attrs := []slog.Attr{slog.String("target", goString(C.cursus_log_record_target(r)))}
	if n := uint64(C.cursus_log_record_dropped(r)); n > 0 {
		attrs = append(attrs, slog.Uint64("dropped", n))
	}
	l.LogAttrs(context.Background(), level, goString(C.cursus_log_record_message(r)), attrs...)
}

// ---- Background errors ---------------------------------------------------

//export cursusGoError
func cursusGoError(id C.uintptr_t, e *C.cursus_error_t) {
	fn, ok := lookupListener(uintptr(id)).(func(error))
	if !ok {
		return
	}
	defer recoverListener("error handler")
	fn(errorFrom(Status(C.cursus_error_status(e)), e)) // borrowed: copied, not destroyed
}

// SetErrorHandler sets the function told of the producer's background
// errors (a batch that failed, a fenced producer, a lost broker
// connection) as *Error, on the producer's callback thread; nil removes
// it. A panic in fn is logged and contained.
func (p *Producer) SetErrorHandler(fn func(error)) error {
	defer runtime.KeepAlive(p)
	var v any
	if fn != nil {
		v = fn
	}
	return p.listeners.replace(errorSlot, v, func(id uintptr) error {
		var e *C.cursus_error_t
		return check(C.cursus_go_producer_set_errors(p.h, C.uintptr_t(id), &e), e)
	})
}

// SetErrorHandler sets the function told of the consumer's background
// errors (membership lost, a lost broker connection) as *Error, on the
// consumer's callback thread; nil removes it. A panic in fn is logged and
// contained.
func (c *Consumer) SetErrorHandler(fn func(error)) error {
	defer runtime.KeepAlive(c)
	var v any
	if fn != nil {
		v = fn
	}
	return c.listeners.replace(errorSlot, v, func(id uintptr) error {
		var e *C.cursus_error_t
		return check(C.cursus_go_consumer_set_errors(c.h, C.uintptr_t(id), &e), e)
	})
}

// ---- Statistics ----------------------------------------------------------

// Statistics is a snapshot of a client's counters (docs/observability.md).
type Statistics struct {
	// ClientID is the client's client_id.
	ClientID string
	// Kind is "producer" or "consumer".
	Kind string
	// RecordsSent counts the records the broker acknowledged (producer).
	RecordsSent uint64
	// BytesSent counts payload plus key bytes of those records (producer).
	BytesSent uint64
	// BatchesSent counts the batches the broker acknowledged (producer).
	BatchesSent uint64
	// RecordsReceived counts the records the consumer's fetchers received.
	RecordsReceived uint64
	// BytesReceived counts payload plus key bytes of those (consumer).
	BytesReceived uint64
	// Requests counts request attempts (each retry counts).
	Requests uint64
	// Retries counts the request attempts that were retries.
	Retries uint64
	// InFlightRequests is the requests sent and not answered yet.
	InFlightRequests uint64
	// Errors counts failed request attempts by error class ("not_found",
	// ...); classes that never failed are absent.
	Errors map[string]uint64
	// ProduceLatency is the send-to-acknowledgement latency of batches.
	ProduceLatency Latency
	// FetchLatency is the latency of fetches that returned records.
	FetchLatency Latency
	// Partitions has a row per assigned partition (consumer; lag).
	Partitions []PartitionStatistics
	// JSON is the whole snapshot as one JSON object.
	JSON string
}

// Latency summarizes latency samples.
type Latency struct {
	// Count is the number of samples.
	Count uint64
	// P50 is the median.
	P50 time.Duration
	// P99 is the 99th percentile.
	P99 time.Duration
	// P999 is the 99.9th percentile.
	P999 time.Duration
	// Max is the largest sample.
	Max time.Duration
}

// PartitionStatistics is a consumer's view of one assigned partition.
type PartitionStatistics struct {
	// Topic is the partition's topic.
	Topic string
	// Partition is the partition id.
	Partition uint32
	// Position is the offset after the last record returned (or where
	// auto_offset_reset starts), -1 when unknown.
	Position int64
	// EndOffset is the partition's end offset.
	EndOffset int64
	// Lag is EndOffset minus Position, -1 when the position is unknown.
	Lag int64
}

func micros(us C.uint64_t) time.Duration { return time.Duration(us) * time.Microsecond }

// copyStatistics copies a statistics handle (borrowed) into Go memory.
func copyStatistics(s *C.cursus_statistics_t) *Statistics {
	out := &Statistics{
		ClientID:         goString(C.cursus_statistics_client_id(s)),
		Kind:             goString(C.cursus_statistics_kind(s)),
		RecordsSent:      uint64(C.cursus_statistics_records_sent(s)),
		BytesSent:        uint64(C.cursus_statistics_bytes_sent(s)),
		BatchesSent:      uint64(C.cursus_statistics_batches_sent(s)),
		RecordsReceived:  uint64(C.cursus_statistics_records_received(s)),
		BytesReceived:    uint64(C.cursus_statistics_bytes_received(s)),
		Requests:         uint64(C.cursus_statistics_requests(s)),
		Retries:          uint64(C.cursus_statistics_retries(s)),
		InFlightRequests: uint64(C.cursus_statistics_in_flight_requests(s)),
		Errors:           map[string]uint64{},
		ProduceLatency: Latency{
			Count: uint64(C.cursus_statistics_produce_latency_count(s)),
			P50:   micros(C.cursus_statistics_produce_latency_p50_us(s)),
			P99:   micros(C.cursus_statistics_produce_latency_p99_us(s)),
			P999:  micros(C.cursus_statistics_produce_latency_p999_us(s)),
			Max:   micros(C.cursus_statistics_produce_latency_max_us(s)),
		},
		FetchLatency: Latency{
			Count: uint64(C.cursus_statistics_fetch_latency_count(s)),
			P50:   micros(C.cursus_statistics_fetch_latency_p50_us(s)),
			P99:   micros(C.cursus_statistics_fetch_latency_p99_us(s)),
			P999:  micros(C.cursus_statistics_fetch_latency_p999_us(s)),
			Max:   micros(C.cursus_statistics_fetch_latency_max_us(s)),
		},
		JSON: goString(C.cursus_statistics_json(s)),
	}
	for class := range classSentinels {
		name := cstr(class)
		if n := uint64(C.cursus_statistics_errors(s, name)); n > 0 {
			out.Errors[class] = n
		}
		C.free(unsafe.Pointer(name))
	}
	for i, n := C.size_t(0), C.cursus_statistics_partition_count(s); i < n; i++ {
		out.Partitions = append(out.Partitions, PartitionStatistics{
			Topic:     goString(C.cursus_statistics_partition_topic(s, i)),
			Partition: uint32(C.cursus_statistics_partition_partition(s, i)),
			Position:  int64(C.cursus_statistics_partition_position(s, i)),
			EndOffset: int64(C.cursus_statistics_partition_end_offset(s, i)),
			Lag:       int64(C.cursus_statistics_partition_lag(s, i)),
		})
	}
	return out
}

// takeStatistics copies and destroys an owned statistics handle.
func takeStatistics(s *C.cursus_statistics_t) *Statistics {
	defer C.cursus_statistics_destroy(s)
	return copyStatistics(s)
}

//export cursusGoStatistics
func cursusGoStatistics(id C.uintptr_t, s *C.cursus_statistics_t) {
	fn, ok := lookupListener(uintptr(id)).(func(*Statistics))
	if !ok {
		return
	}
	defer recoverListener("statistics handler")
	fn(copyStatistics(s)) // lent for the call: copied
}

// intervalMillis is the C interval of SetStatisticsHandler: 0 is the
// statistics_interval_ms option (-1 in C).
func intervalMillis(d time.Duration) C.int64_t {
	if d <= 0 {
		return -1
	}
	return C.int64_t(max(d.Milliseconds(), 1))
}

// Statistics returns the producer's statistics now.
func (p *Producer) Statistics(ctx context.Context) (*Statistics, error) {
	return interruptible(ctx, func() (*Statistics, error) {
		defer runtime.KeepAlive(p)
		var s *C.cursus_statistics_t
		var e *C.cursus_error_t
		if err := check(C.cursus_producer_statistics(p.h, &s, &e), e); err != nil {
			return nil, err
		}
		return takeStatistics(s), nil
	})
}

// SetStatisticsHandler makes the producer call fn with its statistics
// every interval (0: the statistics_interval_ms option), on its callback
// thread; a nil fn removes the handler. A panic in fn is logged and
// contained.
func (p *Producer) SetStatisticsHandler(interval time.Duration, fn func(*Statistics)) error {
	defer runtime.KeepAlive(p)
	var v any
	if fn != nil {
		v = fn
	}
	return p.listeners.replace(statisticsSlot, v, func(id uintptr) error {
		var e *C.cursus_error_t
		return check(C.cursus_go_producer_set_statistics(p.h, intervalMillis(interval), C.uintptr_t(id), &e), e)
	})
}

// Statistics returns the consumer's statistics now, with the lag of every
// assigned partition (it asks the broker for their end offsets).
func (c *Consumer) Statistics(ctx context.Context) (*Statistics, error) {
	return consumerCall(ctx, c, func(e **C.cursus_error_t) (*Statistics, C.enum_cursus_status_t) {
		var s *C.cursus_statistics_t
		st := C.cursus_consumer_statistics(c.h, &s, e)
		if Status(st) != StatusOK {
			return nil, st
		}
		return takeStatistics(s), st
	})
}

// SetStatisticsHandler makes the consumer call fn with its statistics
// (lag included) every interval (0: the statistics_interval_ms option), on
// its callback thread; a nil fn removes the handler. A panic in fn is
// logged and contained.
func (c *Consumer) SetStatisticsHandler(interval time.Duration, fn func(*Statistics)) error {
	defer runtime.KeepAlive(c)
	var v any
	if fn != nil {
		v = fn
	}
	return c.listeners.replace(statisticsSlot, v, func(id uintptr) error {
		var e *C.cursus_error_t
		return check(C.cursus_go_consumer_set_statistics(c.h, intervalMillis(interval), C.uintptr_t(id), &e), e)
	})
}
