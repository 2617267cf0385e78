package cursus

// #include <stdlib.h>
// #include "cursus.h"
// cursus_status_t cursus_go_send(cursus_producer_t *p, const char *topic, int32_t partition,
//                                const uint8_t *key, size_t key_len, const uint8_t *payload,
//                                size_t payload_len, int64_t timestamp, uintptr_t handle,
//                                cursus_error_t **err);
import "C"

import (
	"context"
	"errors"
	"runtime"
	"runtime/cgo"
	"time"
	"unsafe"
)

// RecordMetadata tells where a record was written.
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64 // -1 when the broker reported none (acks=0)
	Timestamp time.Time
}

// Record is a record to send. Partition < 0 (AnyPartition) lets the
// partitioner choose; a nil Key means no key; a zero Timestamp stamps the
// send time.
type Record struct {
	Topic     string
	Partition int32
	Key       []byte
	Value     []byte
	Timestamp time.Time
}

// AnyPartition lets the partitioner choose.
const AnyPartition int32 = -1

// Producer sends records. Safe for concurrent use.
type Producer struct {
	h *C.cursus_producer_t
}

// NewProducer connects a producer.
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
	runtime.SetFinalizer(p, func(p *Producer) { C.cursus_producer_destroy(p.h) })
	return p, nil
}

type delivery struct {
	fn func(RecordMetadata, error)
}

//export cursusGoDelivery
func cursusGoDelivery(handle C.uintptr_t, report *C.cursus_delivery_report_t) {
	h := cgo.Handle(handle)
	d := h.Value().(*delivery)
	h.Delete()
	if Status(report.status) != StatusOK {
		d.fn(RecordMetadata{}, errorFrom(Status(report.status), report.error))
		return
	}
	m := report.metadata
	d.fn(RecordMetadata{
		Topic:     goString(report.topic),
		Partition: int32(m.partition),
		Offset:    int64(m.offset),
		Timestamp: time.UnixMilli(int64(m.timestamp)),
	}, nil)
}

// SendAsync queues a record and returns once it is queued (waiting at
// most max_block_ms for buffer space); fn is then called once with the
// outcome on the producer's callback thread, never a network thread. fn
// may call the producer again (Send and Flush included). If queueing
// fails, the error is returned and fn is never called.
func (p *Producer) SendAsync(ctx context.Context, r Record, fn func(RecordMetadata, error)) error {
	defer runtime.KeepAlive(p)
	if err := ctx.Err(); err != nil {
		return err
	}
	if fn == nil {
		fn = func(RecordMetadata, error) {}
	}
	t := cstr(r.Topic)
	defer C.free(unsafe.Pointer(t))
	keyPtr, valPtr, ts := r.cArgs(t)
	h := cgo.NewHandle(&delivery{fn: fn})
	var e *C.cursus_error_t
	s := C.cursus_go_send(p.h, t, C.int32_t(r.Partition), keyPtr, C.size_t(len(r.Key)), valPtr,
		C.size_t(len(r.Value)), C.int64_t(ts), C.uintptr_t(h), &e)
	if err := check(s, e); err != nil {
		h.Delete()
		return err
	}
	return nil
}

// Send sends a record and waits for its acknowledgement or for ctx. On
// cancellation it returns ctx.Err(); the record may still be delivered.
// It waits in the library, not for a callback, so it may be called from a
// SendAsync callback of the same producer.
func (p *Producer) Send(ctx context.Context, r Record) (RecordMetadata, error) {
	t := cstr(r.Topic)
	key, value, ts := r.cArgs(t)
	return interruptible(ctx, func() (RecordMetadata, error) {
		defer runtime.KeepAlive(p)
		defer C.free(unsafe.Pointer(t))
		var m C.cursus_record_metadata_t
		var e *C.cursus_error_t
		s := C.cursus_producer_send(p.h, t, C.int32_t(r.Partition), key, C.size_t(len(r.Key)), value,
			C.size_t(len(r.Value)), C.int64_t(ts), &m, &e)
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

// pollSlice is how long one flush call may block before ctx is checked.
const pollSlice = 100 * time.Millisecond

// Flush sends everything queued and waits until every record sent before
// it is acknowledged and its callback returned: until ctx's deadline, or
// DefaultTimeout without one (NoTimeout(ctx): no limit). Cancelling ctx
// returns ctx.Err() at once.
func (p *Producer) Flush(ctx context.Context) error {
	defer runtime.KeepAlive(p)
	limit := timeoutMillis(ctx)
	deadline := time.Now().Add(time.Duration(limit) * time.Millisecond)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		step := pollSlice.Milliseconds()
		if limit >= 0 {
			step = min(step, max(time.Until(deadline).Milliseconds(), 0))
		}
		var e *C.cursus_error_t
		err := check(C.cursus_producer_flush(p.h, C.int64_t(step), &e), e)
		if err == nil || !errors.Is(err, ErrTimeout) || (limit >= 0 && !time.Now().Before(deadline)) {
			return err
		}
	}
}

// Close flushes (until ctx's deadline, or DefaultTimeout without one;
// NoTimeout(ctx): no limit), fails what is left and closes the producer.
// Idempotent. Cancelling ctx returns ctx.Err() while the close goes on.
func (p *Producer) Close(ctx context.Context) error {
	limit := timeoutMillis(ctx)
	_, err := interruptible(ctx, func() (struct{}, error) {
		defer runtime.KeepAlive(p)
		var e *C.cursus_error_t
		return struct{}{}, check(C.cursus_producer_close(p.h, C.int64_t(limit), &e), e)
	})
	return err
}
