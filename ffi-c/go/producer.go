package cursus

// #include <stdlib.h>
// #include "cursus.h"
// #ifndef CURSUS_GO_RESULT
// #define CURSUS_GO_RESULT
// // A call's status and error, returned by value: an out-parameter would be
// // a Go variable escaping to the heap (an allocation per send).
// typedef struct { cursus_status_t status; cursus_error_t *error; } cursus_go_result_t;
// #endif
// cursus_go_result_t cursus_go_send(cursus_producer_t *p, const char *topic, int32_t partition,
//                                   const uint8_t *key, size_t key_len, const uint8_t *payload,
//                                   size_t payload_len, int64_t timestamp, uintptr_t handle);
// cursus_go_result_t cursus_go_send_traced(cursus_producer_t *p, const char *topic, int32_t partition,
//                                          const uint8_t *key, size_t key_len, const uint8_t *payload,
//                                          size_t payload_len, int64_t timestamp, const char *metadata,
//                                          const char *traceparent, const char *tracestate, uintptr_t handle);
import "C"

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// RecordMetadata tells where a record was written.
type RecordMetadata struct {
	// Topic is the record's topic.
	Topic string
	// Partition is the partition the record was written to.
	Partition int32
	// Offset is the record's offset, or -1 when the broker reported none
	// (acks=0).
	Offset int64
	// Timestamp is the record's timestamp (millisecond precision).
	Timestamp time.Time
}

// Record is a record to send.
type Record struct {
	// Topic is the topic to send to.
	Topic string
	// Partition is the partition to write to; AnyPartition (any negative
	// value) lets the partitioner choose: the key's hash, or round-robin
	// without a key. The zero value is partition 0.
	Partition int32
	// Key is the record's key: nil for no key; any bytes.
	Key []byte
	// Value is the record's value: any bytes (NUL bytes included).
	Value []byte
	// Timestamp is the record's timestamp (millisecond precision); the
	// zero Time stamps the send time.
	Timestamp time.Time
	// Metadata is the record's metadata (UTF-8, usually a JSON object);
	// "" for none. Consumers read it as Message.Metadata.
	Metadata string
	// TraceContext is the W3C trace context of the span sending the
	// record (a tracing layer's publish span), nil for none. The engine
	// adds it to the metadata; consumers read it with
	// Message.TraceContext. A malformed one fails the send with an error
	// whose Code is "invalid_trace_context" (matching ErrInvalidArgument);
	// in SendBatch it fails the whole batch, the error's Fields["record"]
	// naming the record.
	TraceContext *TraceContext
}

// AnyPartition lets the partitioner choose (Record.Partition).
const AnyPartition int32 = C.CURSUS_ANY_PARTITION

// Producer sends records. It is safe for concurrent use by many
// goroutines, and from its own delivery callbacks.
type Producer struct {
	h         *C.cursus_producer_t
	listeners listenerSet            // statistics and error listeners, until closed
	topic     atomic.Pointer[cTopic] // the topic sent to last, as C takes it
}

// cTopic is a topic name as the library takes it: NUL-terminated, in Go
// memory (the library copies it during the call; cgo pins it meanwhile).
// Kept for the next send to the same topic, it spares a C.CString and a
// C.free (two cgo calls) per record; the garbage collector frees it.
type cTopic struct {
	name string // as the caller gave it
	seen string // as the library sees it: up to a NUL byte, as C.CString gave it
	c    []byte // name and a NUL
}

// topicArg returns topic as the library takes it, reusing the last one
// this producer was given when it is the same (concurrent senders to
// several topics only build it more often).
func (p *Producer) topicArg(topic string) *cTopic {
	if t := p.topic.Load(); t != nil && t.name == topic {
		return t
	}
	t := &cTopic{name: topic, seen: topic, c: append([]byte(topic), 0)}
	if i := strings.IndexByte(topic, 0); i >= 0 {
		t.seen = topic[:i]
	}
	p.topic.Store(t)
	return t
}

// ptr is the NUL-terminated name for a call (valid while t is reachable).
func (t *cTopic) ptr() *C.char { return (*C.char)(unsafe.Pointer(unsafe.SliceData(t.c))) }

// NewProducer connects a producer (options bootstrap_servers, acks,
// linger_ms, enable_idempotence, ...). ctx bounds connecting: its
// remaining time becomes the connect timeout when it is shorter.
func NewProducer(ctx context.Context, opts ...Option) (*Producer, error) {
	ptr, err := open(ctx, "producer", opts, func(cfg *C.cursus_config_t, e **C.cursus_error_t) (unsafe.Pointer, C.enum_cursus_status_t) {
		var h *C.cursus_producer_t
		s := C.cursus_producer_new(cfg, &h, e)
		return unsafe.Pointer(h), s
	}, func(h unsafe.Pointer) {
		C.cursus_producer_close((*C.cursus_producer_t)(h), 0, nil)
		C.cursus_producer_destroy((*C.cursus_producer_t)(h))
	})
	if err != nil {
		return nil, err
	}
	h := (*C.cursus_producer_t)(ptr)
	p := &Producer{h: h}
	runtime.SetFinalizer(p, func(p *Producer) {
		C.cursus_producer_destroy(p.h)
		p.listeners.releaseAll()
	})
	return p, nil
}

type delivery struct {
	fn    func(RecordMetadata, error)
	topic string // the record's topic as the library saw it: what its report says
}

// deliveries holds SendAsync's callbacks until their reports arrive.
var deliveries slots[delivery]

//export cursusGoDelivery
func cursusGoDelivery(handle C.uintptr_t, report *C.cursus_delivery_report_t) {
	d := deliveries.take(uintptr(handle))
	if Status(report.status) != StatusOK {
		d.fn(RecordMetadata{}, errorFrom(Status(report.status), report.error))
		return
	}
	m := report.metadata
	d.fn(RecordMetadata{
		Topic:     d.topic, // report.topic, without reading it into a new string
		Partition: int32(m.partition),
		Offset:    int64(m.offset),
		Timestamp: time.UnixMilli(int64(m.timestamp)),
	}, nil)
}

// SendAsync queues a record and returns once it is queued (waiting at
// most max_block_ms for buffer space); fn is then called once with the
// outcome on the producer's callback thread, never a network thread. fn
// may call the producer again (Send and Flush included). If queueing
// fails, the error is returned and fn is never called. With a nil fn the
// outcome is dropped (Flush still waits for the record): no callback
// crosses back into Go.
func (p *Producer) SendAsync(ctx context.Context, r Record, fn func(RecordMetadata, error)) error {
	defer runtime.KeepAlive(p)
	if err := ctx.Err(); err != nil {
		return err
	}
	t := p.topicArg(r.Topic)
	keyPtr, valPtr, ts := r.cArgs(t.ptr())
	var h uintptr // 0: no callback (a slot's handle is never 0)
	if fn != nil {
		h = deliveries.put(delivery{fn: fn, topic: t.seen})
	}
	var res C.cursus_go_result_t
	if r.traced() {
		md, tp, tst, free := r.tracedArgs()
		res = C.cursus_go_send_traced(p.h, t.ptr(), C.int32_t(r.Partition), keyPtr, C.size_t(len(r.Key)), valPtr,
			C.size_t(len(r.Value)), C.int64_t(ts), md, tp, tst, C.uintptr_t(h))
		free()
	} else {
		res = C.cursus_go_send(p.h, t.ptr(), C.int32_t(r.Partition), keyPtr, C.size_t(len(r.Key)), valPtr,
			C.size_t(len(r.Value)), C.int64_t(ts), C.uintptr_t(h))
	}
	if err := check(res.status, res.error); err != nil {
		if h != 0 {
			deliveries.take(h) // never called back
		}
		return err
	}
	return nil
}

// Send sends a record and waits for its acknowledgement or for ctx. On
// cancellation it returns ctx.Err(); the record may still be delivered.
// It waits in the library, not for a callback, so it may be called from a
// SendAsync callback of the same producer.
func (p *Producer) Send(ctx context.Context, r Record) (RecordMetadata, error) {
	if ctx.Done() != nil {
		// ctx may abandon the call, which then reads the record after Send
		// returned: give it bytes the caller cannot change meanwhile.
		r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
		if r.TraceContext != nil {
			tc := *r.TraceContext
			r.TraceContext = &tc
		}
	}
	return interruptible(ctx, func() (RecordMetadata, error) {
		defer runtime.KeepAlive(p)
		t := cstr(r.Topic)
		defer C.free(unsafe.Pointer(t))
		key, value, ts := r.cArgs(t)
		var m C.cursus_record_metadata_t
		var e *C.cursus_error_t
		var s C.enum_cursus_status_t
		if r.traced() {
			md, tp, tst, free := r.tracedArgs()
			defer free()
			s = C.cursus_producer_send_traced(p.h, t, C.int32_t(r.Partition), key, C.size_t(len(r.Key)), value,
				C.size_t(len(r.Value)), C.int64_t(ts), md, tp, tst, &m, &e)
		} else {
			s = C.cursus_producer_send(p.h, t, C.int32_t(r.Partition), key, C.size_t(len(r.Key)), value,
				C.size_t(len(r.Value)), C.int64_t(ts), &m, &e)
		}
		if err := check(s, e); err != nil {
			return RecordMetadata{}, err
		}
		return RecordMetadata{Topic: r.Topic, Partition: int32(m.partition), Offset: int64(m.offset),
			Timestamp: time.UnixMilli(int64(m.timestamp))}, nil
	})
}

// cArgs gives the record's key and value as C pointers into its Go slices
// (the library copies them during the call; cgo pins them meanwhile) and
// its timestamp in milliseconds. `anyValid` stands in for an empty,
// non-nil key.
func (r *Record) cArgs(anyValid *C.char) (key, value *C.uint8_t, ts int64) {
	if len(r.Key) > 0 {
		key = (*C.uint8_t)(unsafe.Pointer(&r.Key[0]))
	} else if r.Key != nil {
		key = (*C.uint8_t)(unsafe.Pointer(anyValid))
	}
	if len(r.Value) > 0 {
		value = (*C.uint8_t)(unsafe.Pointer(&r.Value[0]))
	}
	ts = int64(C.CURSUS_NO_TIMESTAMP)
	if !r.Timestamp.IsZero() {
		ts = r.Timestamp.UnixMilli()
	}
	return key, value, ts
}

// waitSlice is how long one flush call may block before ctx is checked
// again: the bound on how late a cancellation is noticed.
const waitSlice = 100 * time.Millisecond

// Flush sends everything queued and waits until every record sent before
// it is acknowledged or failed and its callback has returned: until ctx's
// deadline, or DefaultTimeout() when ctx has none (NoTimeout(ctx): no
// limit). Past the limit it fails with an error matching ErrTimeout (and
// context.DeadlineExceeded); cancelling ctx returns ctx.Err() within
// 100 ms. Called from a delivery callback, it waits for the
// acknowledgements only (the callbacks queued behind the running one cannot
// run before it returns).
func (p *Producer) Flush(ctx context.Context) error {
	return p.flush(ctx, timeoutMillis(ctx))
}

// flush waits, on the calling goroutine's thread (so the library sees a
// call from a delivery callback as such), in slices of waitSlice when ctx
// can be cancelled. limit is a timeoutMillis result.
func (p *Producer) flush(ctx context.Context, limit int64) error {
	defer runtime.KeepAlive(p)
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil { // nothing can cancel it: one call
		var e *C.cursus_error_t
		return check(C.cursus_producer_flush(p.h, C.int64_t(limit), &e), e)
	}
	limit = sliceableMillis(limit)
	deadline := time.Now().Add(time.Duration(limit) * time.Millisecond)
	for {
		step := waitSlice.Milliseconds()
		if limit >= 0 {
			step = min(step, max(time.Until(deadline).Milliseconds(), 0))
		}
		var e *C.cursus_error_t
		err := check(C.cursus_producer_flush(p.h, C.int64_t(step), &e), e)
		if err == nil || !errors.Is(err, ErrTimeout) || (limit >= 0 && !time.Now().Before(deadline)) {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Close stops taking records, flushes (until ctx's deadline, or
// DefaultTimeout() when ctx has none; NoTimeout(ctx): no limit), fails what
// is left and closes the producer; later sends fail with ErrClosed. It
// returns an error matching ErrTimeout when records were left. Cancelling
// ctx returns ctx.Err() within 100 ms while the close goes on in the
// background. Closing twice is harmless; it may be called from a delivery
// callback, even of this producer.
func (p *Producer) Close(ctx context.Context) error {
	defer runtime.KeepAlive(p)
	limit := timeoutMillis(ctx)
	if ctx.Done() == nil {
		return p.close(limit)
	}
	// The library's close is one call that ctx could not interrupt: flush
	// first, in slices (see flush), then close what the flush left.
	limit = sliceableMillis(limit)
	start := time.Now()
	flushed := p.flush(ctx, limit)
	left := int64(C.CURSUS_NO_TIMEOUT)
	if limit >= 0 {
		left = max(limit-time.Since(start).Milliseconds(), 0)
	}
	if errors.Is(flushed, context.Canceled) {
		go p.close(left)
		return flushed
	}
	if err := p.close(left); err != nil {
		return err
	}
	if errors.Is(flushed, ErrClosed) { // closed before: closing again is harmless
		return nil
	}
	return flushed
}

func (p *Producer) close(limit int64) error {
	defer runtime.KeepAlive(p)
	var e *C.cursus_error_t
	err := check(C.cursus_producer_close(p.h, C.int64_t(limit), &e), e)
	p.listeners.releaseAll() // closed: its listeners are no longer wanted
	return err
}
