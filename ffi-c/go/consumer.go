package cursus

// #include <stdlib.h>
// #include "cursus.h"
// cursus_status_t cursus_go_commit_async(cursus_consumer_t *c, uintptr_t handle, cursus_error_t **err);
import "C"

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"runtime/cgo"
	"slices"
	"sort"
	"time"
	"unsafe"
)

// Message is a consumed record (its bytes are copied into Go memory).
type Message struct {
	// Topic is the record's topic.
	Topic string
	// Partition is the record's partition.
	Partition int32
	// Offset is the record's offset in its partition.
	Offset int64
	// Key is the record's key: nil when the record has none, non-nil
	// (possibly empty) when it has one. The protocol carries only
	// non-empty keys, so a producer's empty key arrives as nil.
	Key []byte
	// Value is the record's value (never nil).
	Value []byte
	// Timestamp is the record's timestamp: the one the producer gave
	// (Record.Timestamp) or else the time it was sent; the Unix epoch
	// when unknown.
	Timestamp time.Time
	// Metadata is the record's metadata (UTF-8, usually JSON on
	// event-sourcing topics), nil when the record has none.
	Metadata *string
	// Event holds the event fields when the record is an event of an
	// event-sourcing topic, nil otherwise.
	Event *RecordEvent
}

// RecordEvent is what a record of an event-sourcing topic carries as an
// event (Message.Event).
type RecordEvent struct {
	// Type is the event type, e.g. "OrderPlaced".
	Type string
	// SchemaVersion is the event's schema version.
	SchemaVersion uint32
	// AggregateVersion is the version of its aggregate this event created.
	AggregateVersion int64
	// ID is the event id, "" when the event has none.
	ID string
}

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	// Topic is the topic name.
	Topic string
	// Partition is the partition id.
	Partition uint32
}

// Consumer is a group member. It is safe for concurrent use: Close and
// Wakeup from another goroutine interrupt a blocked Poll (no Go lock is
// held while the library waits). One Poll at a time is the intended use.
type Consumer struct {
	h         *C.cursus_consumer_t
	listeners listenerSet // rebalance, statistics and error listeners, until Close
}

// NewConsumer connects a group consumer (WithGroup is required; options
// auto_offset_reset, enable_auto_commit, max_poll_records, ... are
// optional). ctx bounds connecting as for NewProducer.
func NewConsumer(ctx context.Context, opts ...Option) (*Consumer, error) {
	ptr, err := open(ctx, "consumer", opts, func(cfg *C.cursus_config_t, e **C.cursus_error_t) (unsafe.Pointer, C.enum_cursus_status_t) {
		var h *C.cursus_consumer_t
		s := C.cursus_consumer_new(cfg, &h, e)
		return unsafe.Pointer(h), s
	}, func(h unsafe.Pointer) {
		C.cursus_consumer_close((*C.cursus_consumer_t)(h), nil)
		C.cursus_consumer_destroy((*C.cursus_consumer_t)(h))
	})
	if err != nil {
		return nil, err
	}
	h := (*C.cursus_consumer_t)(ptr)
	c := &Consumer{h: h}
	runtime.SetFinalizer(c, func(c *Consumer) {
		C.cursus_consumer_destroy(c.h)
		c.listeners.releaseAll()
	})
	return c, nil
}

// consumerCall runs one consumer call the library cannot interrupt,
// bounded by ctx. As for adminCall, f does all of it on the call's
// goroutine (C arguments, the call, reading and destroying the result), so
// a call ctx abandoned owns, and frees, everything it uses.
func consumerCall[T any](ctx context.Context, c *Consumer, f func(e **C.cursus_error_t) (T, C.enum_cursus_status_t)) (T, error) {
	return interruptible(ctx, func() (T, error) {
		defer runtime.KeepAlive(c)
		var e *C.cursus_error_t
		v, s := f(&e)
		return v, check(s, e)
	})
}

// call is consumerCall for a call with no result.
func (c *Consumer) call(ctx context.Context, f func(e **C.cursus_error_t) C.enum_cursus_status_t) error {
	_, err := consumerCall(ctx, c, func(e **C.cursus_error_t) (struct{}, C.enum_cursus_status_t) {
		return struct{}{}, f(e)
	})
	return err
}

// Subscribe subscribes to topics, replacing the previous subscription.
func (c *Consumer) Subscribe(ctx context.Context, topics ...string) error {
	topics = slices.Clone(topics) // the caller may change its slice once this returns
	return c.call(ctx, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		arr, free := cstrings(topics)
		defer free()
		return C.cursus_consumer_subscribe(c.h, arr, C.size_t(len(topics)), e)
	})
}

// SubscribePattern subscribes to every topic matching a glob pattern (e.g.
// "orders-*"), replacing the previous subscription.
func (c *Consumer) SubscribePattern(ctx context.Context, pattern string) error {
	return c.call(ctx, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		p := cstr(pattern)
		defer C.free(unsafe.Pointer(p))
		return C.cursus_consumer_subscribe_pattern(c.h, p, e)
	})
}

// Poll returns the next message, waiting until one arrives or ctx is done
// (then it returns ctx.Err(): give ctx a deadline to poll with a timeout;
// there is no default). After Wakeup it returns (nil, nil). Only the
// messages returned count as delivered: commits (explicit, automatic, at
// Close) cover exactly those. A Close from another goroutine makes it
// return an error matching ErrClosed at once.
func (c *Consumer) Poll(ctx context.Context) (*Message, error) {
	var m *C.cursus_message_t
	err := c.poll(ctx, func(timeout C.int64_t, e **C.cursus_error_t) (bool, C.enum_cursus_status_t) {
		s := C.cursus_consumer_poll(c.h, timeout, &m, e)
		return m != nil, s
	})
	if err != nil || m == nil {
		return nil, err
	}
	return copyMessage(m), nil
}

// PollBatch is Poll for up to maxRecords messages at once (at most the
// max_poll_records option; less than 1 is an error matching
// ErrInvalidArgument): one call into the library for all of them, decoded
// from its packed record view. It returns at least one message, (nil, nil)
// after Wakeup, or an error as Poll does. Only the messages returned count
// as delivered, so asking for no more than are still wanted takes exactly
// that many.
func (c *Consumer) PollBatch(ctx context.Context, maxRecords int) ([]Message, error) {
	// The library rejects 0 (invalid_argument) and caps at max_poll_records.
	limit := uint32(min(max(maxRecords, 0), math.MaxUint32))
	var out []Message
	err := c.poll(ctx, func(timeout C.int64_t, e **C.cursus_error_t) (bool, C.enum_cursus_status_t) {
		var buf *C.uint8_t
		var n C.size_t
		s := C.cursus_consumer_poll_batch(c.h, timeout, C.uint32_t(limit), &buf, &n, e)
		if buf != nil {
			out = decodeRecords(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n)))
			C.cursus_buffer_free(buf, n)
		}
		return len(out) > 0, s
	})
	if err != nil || len(out) == 0 {
		return nil, err
	}
	return out, nil
}

// poll makes one blocking poll call: the library returns only with
// records, at its deadline (ctx's) or when woken (Wakeup, or ctx
// cancelled: a cancelled ctx wakes it up), never empty otherwise. f
// reports whether it got records.
func (c *Consumer) poll(ctx context.Context, f func(C.int64_t, **C.cursus_error_t) (bool, C.enum_cursus_status_t)) error {
	defer runtime.KeepAlive(c)
	if err := ctx.Err(); err != nil {
		return err
	}
	timeout := int64(C.CURSUS_NO_TIMEOUT)
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		left := time.Until(deadline)
		if left <= 0 {
			return context.DeadlineExceeded // ctx.Err() may not say so yet
		}
		timeout = int64((left + time.Millisecond - 1) / time.Millisecond) // rounded up
	}
	// Only a cancellation wakes the library: it ends the wait at the
	// deadline itself, and a wake-up that came after the poll returned
	// would end the next poll at once.
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			C.cursus_consumer_wakeup(c.h, nil)
		}
	})
	var e *C.cursus_error_t
	got, s := f(C.int64_t(timeout), &e)
	stop()
	if err := check(s, e); err != nil || got {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if hasDeadline && !time.Now().Before(deadline) {
		return context.DeadlineExceeded
	}
	return nil // woken by Wakeup
}

// Wakeup makes a Poll blocked in another goroutine (or else the next Poll)
// return (nil, nil) at once.
func (c *Consumer) Wakeup() error {
	defer runtime.KeepAlive(c)
	var e *C.cursus_error_t
	return check(C.cursus_consumer_wakeup(c.h, &e), e)
}

func copyMessage(m *C.cursus_message_t) *Message {
	defer C.cursus_message_destroy(m)
	var klen, vlen C.size_t
	k := C.cursus_message_key(m, &klen)
	v := C.cursus_message_payload(m, &vlen)
	out := &Message{
		Topic:     goString(C.cursus_message_topic(m)),
		Partition: int32(C.cursus_message_partition(m)),
		Offset:    int64(C.cursus_message_offset(m)),
		Value:     C.GoBytes(unsafe.Pointer(v), C.int(vlen)),
		Timestamp: time.UnixMilli(int64(C.cursus_message_timestamp(m))),
	}
	if C.cursus_message_has_key(m) {
		out.Key = C.GoBytes(unsafe.Pointer(k), C.int(klen))
	}
	if md := C.cursus_message_metadata(m); md != nil {
		s := C.GoString(md)
		out.Metadata = &s
	}
	if et := C.cursus_message_event_type(m); et != nil {
		out.Event = &RecordEvent{
			Type:             C.GoString(et),
			SchemaVersion:    uint32(C.cursus_message_schema_version(m)),
			AggregateVersion: int64(C.cursus_message_aggregate_version(m)),
			ID:               goString(C.cursus_message_event_id(m)),
		}
	}
	return out
}

// viewReader reads the packed record view front to back (little-endian).
// The view comes from the library, so a short one is a bug there: reading
// past its end panics (index out of range), as it did before.
type viewReader struct {
	b   []byte
	off int
}

func (r *viewReader) u32() uint32 {
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *viewReader) u64() uint64 {
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

// bytes returns the next n bytes, capacity-limited so that appending to
// them never writes over the next field.
func (r *viewReader) bytes(n int) []byte {
	out := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return out
}

// optional reads an i32 length and that many bytes; nil for -1.
func (r *viewReader) optional() []byte {
	n := int32(r.u32())
	if n < 0 {
		return nil
	}
	return r.bytes(int(n))
}

// decodeRecords reads the packed record view of bridge/src/records.rs
// (little-endian; a length of -1 is an absent field), copying every byte
// into Go memory.
func decodeRecords(c []byte) []Message {
	// One copy of the whole view into Go memory: every key and value is a
	// (capacity-limited) slice of it, not an allocation of its own.
	r := viewReader{b: bytes.Clone(c)}
	topic := "" // records of one poll mostly share their topic: one string
	out := make([]Message, r.u32())
	// Every field is written in place: no Message is built and then copied
	// into the slice (a copy with write barriers for its six pointers).
	for i := range out {
		m := &out[i]
		if t := r.bytes(int(r.u32())); string(t) != topic {
			topic = string(t)
		}
		m.Topic = topic
		m.Partition = int32(r.u32())
		m.Offset = int64(r.u64())
		m.Timestamp = time.UnixMilli(int64(r.u64()))
		if k := r.optional(); k != nil { // fields left nil are not written (a write barrier each during a GC)
			m.Key = k
		}
		m.Value = r.bytes(int(r.u32()))
		if md := r.optional(); md != nil {
			s := string(md)
			m.Metadata = &s
		}
		if et := r.optional(); et != nil {
			ev := &RecordEvent{Type: string(et)}
			ev.SchemaVersion = r.u32()
			ev.AggregateVersion = int64(r.u64())
			ev.ID = string(r.optional())
			m.Event = ev
		}
	}
	return out
}

// Commit commits the positions of the messages returned so far.
func (c *Consumer) Commit(ctx context.Context) error {
	return c.call(ctx, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_consumer_commit(c.h, e)
	})
}

//export cursusGoCompletion
func cursusGoCompletion(handle C.uintptr_t, status C.cursus_status_t, e *C.cursus_error_t) {
	h := cgo.Handle(handle)
	fn := h.Value().(func(error))
	h.Delete()
	var err error
	if Status(status) != StatusOK {
		err = errorFrom(Status(status), e) // borrowed: copied, not destroyed
	}
	fn(err)
}

// CommitAsync commits the positions of the messages returned so far in the
// background and returns once the commit started; fn (may be nil) is then
// called once with the outcome on the consumer's callback thread. If
// starting fails, the error is returned and fn is never called.
func (c *Consumer) CommitAsync(ctx context.Context, fn func(error)) error {
	defer runtime.KeepAlive(c)
	if err := ctx.Err(); err != nil {
		return err
	}
	if fn == nil {
		fn = func(error) {}
	}
	h := cgo.NewHandle(fn)
	var e *C.cursus_error_t
	if err := check(C.cursus_go_commit_async(c.h, C.uintptr_t(h), &e), e); err != nil {
		h.Delete()
		return err
	}
	return nil
}

// Committed returns the group's committed next offset of a partition and
// whether there is one.
func (c *Consumer) Committed(ctx context.Context, topic string, partition uint32) (int64, bool, error) {
	off, err := consumerCall(ctx, c, func(e **C.cursus_error_t) (int64, C.enum_cursus_status_t) {
		t := cstr(topic)
		defer C.free(unsafe.Pointer(t))
		var off C.int64_t
		s := C.cursus_consumer_committed(c.h, t, C.uint32_t(partition), &off, e)
		return int64(off), s
	})
	if err != nil {
		return -1, false, err
	}
	return off, off >= 0, nil
}

// CommitOffsets commits explicit next offsets (the offset after the last
// record processed), one partition after another in topic and partition
// order. The group must have been joined (Poll once after Subscribe).
func (c *Consumer) CommitOffsets(ctx context.Context, offsets map[TopicPartition]int64) error {
	sorted := sortedOffsets(offsets)
	return c.call(ctx, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		list, s := offsetList(sorted, e)
		if Status(s) != StatusOK {
			return s
		}
		defer C.cursus_topic_partition_list_destroy(list)
		return C.cursus_consumer_commit_offsets(c.h, list, e)
	})
}

// partitionOffset is one entry of an offset list.
type partitionOffset struct {
	TopicPartition
	Offset int64
}

// sortedOffsets copies offsets in topic and partition order (read at once:
// the caller may change the map once the call returns).
func sortedOffsets(offsets map[TopicPartition]int64) []partitionOffset {
	out := make([]partitionOffset, 0, len(offsets))
	for tp, off := range offsets {
		out = append(out, partitionOffset{tp, off})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// offsetList copies offsets into a C list (the caller destroys it).
func offsetList(offsets []partitionOffset, e **C.cursus_error_t) (*C.cursus_topic_partition_list_t, C.enum_cursus_status_t) {
	var list *C.cursus_topic_partition_list_t
	if s := C.cursus_topic_partition_list_new(&list, e); Status(s) != StatusOK {
		return nil, s
	}
	for _, o := range offsets {
		t := cstr(o.Topic)
		s := C.cursus_topic_partition_list_add(list, t, C.uint32_t(o.Partition), C.int64_t(o.Offset), e)
		C.free(unsafe.Pointer(t))
		if Status(s) != StatusOK {
			C.cursus_topic_partition_list_destroy(list)
			return nil, s
		}
	}
	return list, C.CURSUS_OK
}

// Assignment returns the partitions currently assigned to this consumer.
func (c *Consumer) Assignment(ctx context.Context) ([]TopicPartition, error) {
	return consumerCall(ctx, c, func(e **C.cursus_error_t) ([]TopicPartition, C.enum_cursus_status_t) {
		var list *C.cursus_topic_partition_list_t
		s := C.cursus_consumer_assignment(c.h, &list, e)
		if Status(s) != StatusOK {
			return nil, s
		}
		defer C.cursus_topic_partition_list_destroy(list)
		out := []TopicPartition{}
		for i, n := C.size_t(0), C.cursus_topic_partition_list_count(list); i < n; i++ {
			out = append(out, TopicPartition{
				Topic:     goString(C.cursus_topic_partition_list_topic(list, i)),
				Partition: uint32(C.cursus_topic_partition_list_partition(list, i)),
			})
		}
		return out, s
	})
}

// MemberID returns this member's id in its group (as Admin.GroupStatus
// lists it), or "" before it has joined (the first Poll after Subscribe
// joins).
func (c *Consumer) MemberID(ctx context.Context) (string, error) {
	return consumerCall(ctx, c, func(e **C.cursus_error_t) (string, C.enum_cursus_status_t) {
		var id *C.char
		s := C.cursus_consumer_member_id(c.h, &id, e)
		if Status(s) != StatusOK {
			return "", s
		}
		defer C.cursus_string_free(id)
		return goString(id), s
	})
}

// Close commits what was returned (with enable_auto_commit), leaves the
// group and closes the consumer; a Poll blocked in another goroutine
// returns an error matching ErrClosed at once. The rebalance listener is
// told of the revoked partitions (a Commit there still succeeds) before
// Close returns; then the consumer's listeners are released. Idempotent.
func (c *Consumer) Close() error {
	defer runtime.KeepAlive(c)
	var e *C.cursus_error_t
	err := check(C.cursus_consumer_close(c.h, &e), e)
	c.listeners.releaseAll()
	return err
}
