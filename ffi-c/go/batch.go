package cursus

// #include <stdlib.h>
// #include "cursus.h"
// int cursus_go_in_callback(void);
// cursus_status_t cursus_go_send_batch(cursus_producer_t *p, const char *topic, const uint8_t *packed,
//                                      size_t packed_len, int traced, uintptr_t handle, cursus_error_t **err);
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// BatchError is what SendBatch returns when some records of a batch failed:
// Errors holds one entry per record, in order, nil for a record that was
// delivered. errors.Is and errors.As look through it (Unwrap).
type BatchError struct {
	// Errors is every record's error (nil: delivered), in record order.
	Errors []error
	// Failed is how many records failed.
	Failed int
}

// Error says how many records failed and the first failure.
func (e *BatchError) Error() string {
	for i, err := range e.Errors {
		if err != nil {
			return fmt.Sprintf("%d of %d records failed; record %d: %v", e.Failed, len(e.Errors), i, err)
		}
	}
	return "no record failed"
}

// Unwrap returns the records' errors (nil entries left out).
func (e *BatchError) Unwrap() []error {
	out := make([]error, 0, e.Failed)
	for _, err := range e.Errors {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

type batchDelivery struct {
	fn    func([]RecordMetadata, []error)
	topic string // the batch's topic as the library saw it: what its reports say
}

// batchDeliveries holds SendBatchAsync's callbacks until their reports arrive.
var batchDeliveries slots[batchDelivery]

// reportSize is the size of one packed delivery report
// (bridge/src/records_in.rs): i32 status, i32 partition, i64 offset,
// i64 timestamp.
const reportSize = 24

//export cursusGoDeliveryBatch
func cursusGoDeliveryBatch(handle C.uintptr_t, status C.enum_cursus_status_t, batch *C.cursus_delivery_batch_t,
	e *C.cursus_error_t) {
	d := batchDeliveries.take(uintptr(handle))
	if Status(status) != StatusOK {
		err := errorFrom(Status(status), e)
		d.fn(nil, []error{err})
		return
	}
	topic := d.topic // cursus_delivery_batch_topic, without reading it into a new string
	var n C.size_t
	p := C.cursus_delivery_batch_packed(batch, &n)
	// The reports are read where they are: the buffer is lent for this
	// call, and nothing read from it outlives the call (no copy).
	var packed []byte
	if p != nil && n > 0 {
		packed = unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
	}
	count := 0
	if len(packed) >= 4 {
		count = int(binary.LittleEndian.Uint32(packed))
	}
	mds := make([]RecordMetadata, count)
	var errs []error
	for i := 0; i < count && 4+(i+1)*reportSize <= len(packed); i++ {
		r := packed[4+i*reportSize:]
		if s := int32(binary.LittleEndian.Uint32(r)); s != 0 {
			if errs == nil {
				errs = make([]error, count)
			}
			var ce *C.cursus_error_t
			st := C.cursus_delivery_batch_check(batch, C.size_t(i), &ce)
			errs[i] = check(st, ce)
			mds[i] = RecordMetadata{Topic: topic, Partition: -1, Offset: -1}
			continue
		}
		mds[i] = RecordMetadata{
			Topic:     topic,
			Partition: int32(binary.LittleEndian.Uint32(r[4:])),
			Offset:    int64(binary.LittleEndian.Uint64(r[8:])),
			Timestamp: time.UnixMilli(int64(binary.LittleEndian.Uint64(r[16:]))),
		}
	}
	d.fn(mds, errs)
}

// packBuffers keeps packed batches' buffers for the next batch: the
// library copies a batch before cursus_producer_send_batch returns, so a
// buffer is free again at once (no allocation per batch once warm).
var packBuffers sync.Pool // of *[]byte

// maxPooledPack is the largest buffer kept (a rare huge batch's buffer is
// left to the garbage collector).
const maxPooledPack = 4 << 20

// packBatch packs records of a batch of topic as
// cursus_producer_send_batch takes them (bridge/src/records_in.rs), or,
// when traced, in the traced layout of cursus_producer_send_batch_traced
// (each record followed by its metadata, traceparent and tracestate), into
// a buffer of packBuffers (give it back with releasePacked): a record of
// another topic carries its own, and the library applies the batch rule
// (one topic per batch) to it.
func packBatch(topic string, records []Record, traced bool) []byte {
	size := 4
	for i := range records {
		r := &records[i]
		size += 24 + len(r.Key) + len(r.Value)
		if r.Topic != topic {
			size += len(r.Topic)
		}
		if traced {
			size += 12 + len(r.Metadata)
			if r.TraceContext != nil {
				size += len(r.TraceContext.Traceparent) + len(r.TraceContext.Tracestate)
			}
		}
	}
	var out []byte
	if b, _ := packBuffers.Get().(*[]byte); b != nil && cap(*b) >= size {
		out = (*b)[:0]
	} else {
		out = make([]byte, 0, size)
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(records)))
	for i := range records {
		r := &records[i]
		if r.Topic == topic {
			out = binary.LittleEndian.AppendUint32(out, 0xffffffff) // -1: the batch's topic
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(r.Topic)))
			out = append(out, r.Topic...)
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(r.Partition))
		ts := int64(C.CURSUS_NO_TIMESTAMP)
		if !r.Timestamp.IsZero() {
			ts = r.Timestamp.UnixMilli()
		}
		out = binary.LittleEndian.AppendUint64(out, uint64(ts))
		if r.Key == nil {
			out = binary.LittleEndian.AppendUint32(out, 0xffffffff) // -1: no key
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(r.Key)))
			out = append(out, r.Key...)
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(len(r.Value)))
		out = append(out, r.Value...)
		if traced {
			var parent, state string
			if r.TraceContext != nil {
				parent, state = r.TraceContext.Traceparent, r.TraceContext.Tracestate
			}
			out = appendText(out, r.Metadata, r.Metadata != "")
			out = appendText(out, parent, r.TraceContext != nil)
			out = appendText(out, state, state != "")
		}
	}
	return out
}

// appendText appends an optional string of the traced layout: its i32
// length and bytes, or -1 when it is not present.
func appendText(out []byte, s string, present bool) []byte {
	if !present {
		return binary.LittleEndian.AppendUint32(out, 0xffffffff)
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(s)))
	return append(out, s...)
}

// releasePacked gives a packed batch's buffer back to packBuffers once
// the library has copied it.
func releasePacked(b []byte) {
	if cap(b) <= maxPooledPack {
		packBuffers.Put(&b)
	}
}

// SendBatchAsync queues every record of records (all of one topic) with
// ONE call into the library and returns once they are queued; fn is then
// called ONCE, on the producer's callback thread, with every record's
// metadata in order and, when any record failed, errs holding each
// record's error (nil for the delivered ones; errs itself is nil when all
// were delivered). A record that cannot be queued (a partition that does
// not exist, too large) fails alone. Each record's Metadata and
// TraceContext travel as Send carries them. If the batch cannot start
// (records of several topics: the library's batch rule, an error matching
// ErrInvalidArgument; a malformed TraceContext, Code
// "invalid_trace_context"; a closed producer) the error is returned and fn
// is never called. fn may call the producer again. With a nil fn the outcomes are
// dropped (Flush still waits for the records): no callback crosses back
// into Go.
func (p *Producer) SendBatchAsync(ctx context.Context, records []Record, fn func(mds []RecordMetadata, errs []error)) error {
	defer runtime.KeepAlive(p)
	if err := ctx.Err(); err != nil {
		return err
	}
	topic := ""
	if len(records) > 0 {
		topic = records[0].Topic
	}
	// The plain layout unless a record needs the traced one (12 bytes
	// less per record).
	traced, ctraced := false, C.int(0)
	for i := range records {
		if records[i].traced() {
			traced, ctraced = true, 1
		}
	}
	packed := packBatch(topic, records, traced)
	t := p.topicArg(topic)
	var h uintptr // 0: no callback (a slot's handle is never 0)
	if fn != nil {
		h = batchDeliveries.put(batchDelivery{fn: fn, topic: t.seen})
	}
	var e *C.cursus_error_t
	s := C.cursus_go_send_batch(p.h, t.ptr(), (*C.uint8_t)(unsafe.SliceData(packed)), C.size_t(len(packed)),
		ctraced, C.uintptr_t(h), &e)
	releasePacked(packed) // copied by the library
	if err := check(s, e); err != nil {
		if h != 0 {
			batchDeliveries.take(h) // never called back
		}
		return err
	}
	return nil
}

// SendBatch sends records (all of one topic) with one call into the
// library and waits until every one is acknowledged or failed, or for ctx.
// It returns every record's metadata in order; when some records failed,
// the error is a *BatchError with each record's error (the others' metadata
// are still set). On cancellation it returns ctx.Err(); the records may
// still be delivered. From a delivery callback of the same producer use
// SendBatchAsync (the callback thread cannot wait for its own callbacks).
func (p *Producer) SendBatch(ctx context.Context, records []Record) ([]RecordMetadata, error) {
	if C.cursus_go_in_callback() != 0 {
		return nil, invalidArgument("SendBatch waits for a callback: from a delivery callback use SendBatchAsync")
	}
	type outcome struct {
		mds  []RecordMetadata
		errs []error
	}
	done := make(chan outcome, 1) // never blocks the callback thread
	if err := p.SendBatchAsync(ctx, records, func(mds []RecordMetadata, errs []error) {
		done <- outcome{mds, errs}
	}); err != nil {
		return nil, err
	}
	select {
	case o := <-done:
		if o.mds == nil && len(o.errs) == 1 {
			return nil, o.errs[0]
		}
		if o.errs != nil {
			failed := 0
			for _, err := range o.errs {
				if err != nil {
					failed++
				}
			}
			return o.mds, &BatchError{Errors: o.errs, Failed: failed}
		}
		return o.mds, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
