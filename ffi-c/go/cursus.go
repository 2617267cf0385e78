// Package cursus is the Go client of the Cursus message broker, over the
// libcursus C ABI (cgo).
//
// Build: cgo must find cursus.h and libcursus (CGO_CFLAGS=-I<repo>/include,
// CGO_LDFLAGS="-L<dir> -lcursus"; `make test-go` sets them).
//
// Blocking calls take a context.Context and honour its cancellation and
// deadline: a cancelled Send returns ctx.Err() while the record may still be
// delivered; a cancelled Poll, Flush or Commit returns ctx.Err().
//
// Goroutine safety: Admin and Producer may be used from many goroutines at
// once. A Consumer may be shared, but its calls are serialised (one poll at a
// time). Close is safe to call more than once; calls after Close return an
// error matching ErrClosed.
//
// No Go pointer is ever kept by C: delivery callbacks carry a
// runtime/cgo.Handle, and payloads are copied by the library before a send
// returns.
package cursus

// #cgo LDFLAGS: -lcursus
// #include <stdlib.h>
// #include "cursus.h"
// cursus_status_t cursus_go_send(cursus_producer_t *p, const char *topic, int32_t partition,
//                                const uint8_t *key, size_t key_len, const uint8_t *payload,
//                                size_t payload_len, uintptr_t handle, cursus_error_t **err);
// cursus_status_t cursus_go_commit_async(cursus_consumer_t *c, uintptr_t handle, cursus_error_t **err);
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Version is the runtime version of libcursus, e.g. "0.1.0".
func Version() string { return C.GoString(C.cursus_version()) }

// Option configures a client. Options are applied in order and validated by
// the engine (an unknown name or bad value makes New* fail with
// ErrInvalidArgument).
type Option func(*options)

type options struct{ kv [][2]string }

// WithBootstrap sets the broker addresses (host:port, comma separated).
func WithBootstrap(addrs ...string) Option {
	return WithOption("bootstrap_servers", strings.Join(addrs, ","))
}

// WithGroup sets the consumer group id (required for a Consumer).
func WithGroup(id string) Option { return WithOption("group_id", id) }

// WithOption sets any engine option by name (acks, linger_ms, retries,
// auto_offset_reset, ...): the same names in every language.
func WithOption(key, value string) Option {
	return func(o *options) { o.kv = append(o.kv, [2]string{key, value}) }
}

func cstr(s string) *C.char { return C.CString(s) }

// newConfig builds a C config; the caller destroys it.
func newConfig(opts []Option) (*C.cursus_config_t, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	cfg := C.cursus_config_new()
	for _, kv := range o.kv {
		k, v := cstr(kv[0]), cstr(kv[1])
		var e *C.cursus_error_t
		s := C.cursus_config_set(cfg, k, v, &e)
		C.free(unsafe.Pointer(k))
		C.free(unsafe.Pointer(v))
		if err := check(s, e); err != nil {
			C.cursus_config_destroy(cfg)
			return nil, err
		}
	}
	return cfg, nil
}

// pollSlice is how long one C call may block before a context is re-checked.
const pollSlice = 100 * time.Millisecond

// slice returns the next blocking slice in ms, bounded by ctx's deadline.
func slice(ctx context.Context) int64 {
	d := pollSlice
	if dl, ok := ctx.Deadline(); ok {
		if r := time.Until(dl); r < d {
			d = r
		}
	}
	if d < 0 {
		d = 0
	}
	return d.Milliseconds()
}

// ---------------------------------------------------------------------------

// open checks ctx, builds the configuration from opts and calls create
// with it (the configuration is freed afterwards): the shared first half
// of NewAdmin, NewProducer and NewConsumer.
func open(ctx context.Context, opts []Option,
	create func(cfg *C.cursus_config_t, e **C.cursus_error_t) C.enum_cursus_status_t) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	defer C.cursus_config_destroy(cfg)
	var e *C.cursus_error_t
	return check(create(cfg, &e), e)
}

// Admin manages topics. Safe for concurrent use.
type Admin struct {
	h *C.cursus_admin_t
}

// NewAdmin connects an admin client.
func NewAdmin(ctx context.Context, opts ...Option) (*Admin, error) {
	var h *C.cursus_admin_t
	err := open(ctx, opts, func(cfg *C.cursus_config_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_admin_new(cfg, &h, e)
	})
	if err != nil {
		return nil, err
	}
	a := &Admin{h: h}
	runtime.SetFinalizer(a, func(a *Admin) { C.cursus_admin_destroy(a.h) })
	return a, nil
}

// CreateTopic creates a topic (partitions 0: broker default).
func (a *Admin) CreateTopic(ctx context.Context, topic string, partitions int) error {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return err
	}
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	var e *C.cursus_error_t
	return check(C.cursus_admin_create_topic(a.h, t, C.uint32_t(partitions), &e), e)
}

// DeleteTopic deletes a topic; with ifExists a missing topic is not an
// error. It reports whether the topic was deleted (false when ifExists found
// no topic).
func (a *Admin) DeleteTopic(ctx context.Context, topic string, ifExists bool) (bool, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	var deleted C.bool
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_delete_topic(a.h, t, C.bool(ifExists), &deleted, &e), e); err != nil {
		return false, err
	}
	return bool(deleted), nil
}

// ListTopics returns the topic names.
func (a *Admin) ListTopics(ctx context.Context) ([]string, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var names *C.char
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_list_topics(a.h, &names, &e), e); err != nil {
		return nil, err
	}
	defer C.cursus_string_free(names)
	s := C.GoString(names)
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

// TopicOptions sets NewTopic fields by name for CreateTopicWithOptions:
// partitions, replication_factor, min_in_sync_replicas, retention_hours,
// retention_bytes (unsigned integers); idempotent, event_sourcing
// ("true"/"false"); cleanup_policy, partitioner, auth_policy; read_acl,
// write_acl (comma-separated principals). Unset fields use broker defaults.
type TopicOptions map[string]string

// CreateTopicWithOptions creates a topic with any NewTopic field set and
// returns the definition the broker replied with (Leaders empty). An unknown
// name or bad value returns an error matching ErrInvalidArgument.
func (a *Admin) CreateTopicWithOptions(ctx context.Context, topic string, opts TopicOptions) (TopicMetadata, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return TopicMetadata{}, err
	}
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	n := len(opts)
	keys := cstrArray(n)
	defer C.free(unsafe.Pointer(keys))
	values := cstrArray(n)
	defer C.free(unsafe.Pointer(values))
	ks, vs := unsafe.Slice(keys, n+1), unsafe.Slice(values, n+1)
	i := 0
	for k, v := range opts {
		ks[i], vs[i] = cstr(k), cstr(v)
		defer C.free(unsafe.Pointer(ks[i]))
		defer C.free(unsafe.Pointer(vs[i]))
		i++
	}
	var m C.cursus_topic_metadata_t
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_create_topic_opts(a.h, t, keys, values, C.size_t(n), &m, &e), e); err != nil {
		return TopicMetadata{}, err
	}
	return topicMetadata(&m), nil
}

// cstrArray allocates a C array of n+1 string pointers (free with C.free).
func cstrArray(n int) **C.char {
	return (**C.char)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
}

// TopicMetadata is a topic definition (from Metadata, CreateTopicWithOptions
// or AlterTopicConfig).
type TopicMetadata struct {
	Partitions        uint32
	ReplicationFactor uint32
	Revision          uint64 // pass it to TruncateTopic
	LifecycleEpoch    uint64
	Idempotent        bool
	EventSourcing     bool
	// MinInSyncReplicas is the override, or -1 for the broker default (or
	// when METADATA does not report it).
	MinInSyncReplicas int64
	Leaders           []string // leader address per partition (Metadata only)
}

func topicMetadata(m *C.cursus_topic_metadata_t) TopicMetadata {
	return TopicMetadata{
		Partitions:        uint32(m.partitions),
		ReplicationFactor: uint32(m.replication_factor),
		Revision:          uint64(m.revision),
		LifecycleEpoch:    uint64(m.lifecycle_epoch),
		Idempotent:        bool(m.idempotent),
		EventSourcing:     bool(m.event_sourcing),
		MinInSyncReplicas: int64(m.min_in_sync_replicas),
	}
}

// DefaultMinInSyncReplicas passed to AlterTopicConfig restores the broker default.
const DefaultMinInSyncReplicas = -1

// AlterTopicConfig replaces the topic's min_in_sync_replicas override
// (DefaultMinInSyncReplicas: broker default) and returns the new definition.
func (a *Admin) AlterTopicConfig(ctx context.Context, topic string, minInSyncReplicas int64) (TopicMetadata, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return TopicMetadata{}, err
	}
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	var m C.cursus_topic_metadata_t
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_alter_topic_config(a.h, t, C.int64_t(minInSyncReplicas), &m, &e), e); err != nil {
		return TopicMetadata{}, err
	}
	return topicMetadata(&m), nil
}

// TruncateResult is the outcome of TruncateTopic.
type TruncateResult struct {
	Revision       uint64
	LifecycleEpoch uint64
}

// TruncateTopic drops every record of a topic whose revision is
// expectedRevision (else an error matching ErrConflict).
func (a *Admin) TruncateTopic(ctx context.Context, topic string, expectedRevision uint64) (TruncateResult, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return TruncateResult{}, err
	}
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	var rev, epoch C.uint64_t
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_truncate_topic(a.h, t, C.uint64_t(expectedRevision), &rev, &epoch, &e), e); err != nil {
		return TruncateResult{}, err
	}
	return TruncateResult{Revision: uint64(rev), LifecycleEpoch: uint64(epoch)}, nil
}

// takeString copies and frees a library-owned string.
func takeString(s *C.char) string {
	defer C.cursus_string_free(s)
	return goString(s)
}

// takeLines copies, frees and splits a newline-separated library string.
func takeLines(s *C.char) []string {
	all := takeString(s)
	if all == "" {
		return nil
	}
	return strings.Split(all, "\n")
}

// document runs an admin call that takes one string and returns a JSON
// document (DescribeTopic, GroupStatus).
func (a *Admin) document(ctx context.Context, arg string,
	call func(arg *C.char, out **C.char, e **C.cursus_error_t) C.enum_cursus_status_t) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	c := cstr(arg)
	defer C.free(unsafe.Pointer(c))
	var out *C.char
	var e *C.cursus_error_t
	if err := check(call(c, &out, &e), e); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// DescribeTopic returns the broker's DESCRIBE document (JSON: topic,
// definition, partitions with leader, replicas, isr, leo, hwm).
func (a *Admin) DescribeTopic(ctx context.Context, topic string) (string, error) {
	defer runtime.KeepAlive(a)
	return a.document(ctx, topic, func(arg *C.char, out **C.char, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_admin_describe_topic(a.h, arg, out, e)
	})
}

// GroupStatus returns the broker's GROUP_STATUS document (JSON: group_name,
// state, generation, members...).
func (a *Admin) GroupStatus(ctx context.Context, group string) (string, error) {
	defer runtime.KeepAlive(a)
	return a.document(ctx, group, func(arg *C.char, out **C.char, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_admin_group_status(a.h, arg, out, e)
	})
}

// Metadata returns a topic's definition, revision and partition leaders.
func (a *Admin) Metadata(ctx context.Context, topic string) (TopicMetadata, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return TopicMetadata{}, err
	}
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	var m C.cursus_topic_metadata_t
	var leaders *C.char
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_metadata(a.h, t, &m, &leaders, &e), e); err != nil {
		return TopicMetadata{}, err
	}
	md := topicMetadata(&m)
	md.Leaders = takeLines(leaders)
	return md, nil
}

// PartitionOffsets are the offsets of one partition.
type PartitionOffsets struct {
	Partition uint32
	Earliest  uint64
	Latest    uint64
	LEO       uint64 // log end offset
	HWM       uint64 // high-water mark
}

// AllPartitions passed to ListOffsets lists every partition.
const AllPartitions = -1

// ListOffsets returns the offsets of one partition, or of all of them
// (AllPartitions).
func (a *Admin) ListOffsets(ctx context.Context, topic string, partition int64) ([]PartitionOffsets, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	var arr *C.cursus_partition_offsets_t
	var n C.size_t
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_list_offsets(a.h, t, C.int64_t(partition), &arr, &n, &e), e); err != nil {
		return nil, err
	}
	defer C.cursus_partition_offsets_free(arr, n)
	out := make([]PartitionOffsets, 0, int(n))
	for _, o := range unsafe.Slice(arr, int(n)) {
		out = append(out, PartitionOffsets{
			Partition: uint32(o.partition),
			Earliest:  uint64(o.earliest),
			Latest:    uint64(o.latest),
			LEO:       uint64(o.leo),
			HWM:       uint64(o.hwm),
		})
	}
	return out, nil
}

// ListGroups returns the consumer group names.
func (a *Admin) ListGroups(ctx context.Context) ([]string, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var names *C.char
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_list_groups(a.h, &names, &e), e); err != nil {
		return nil, err
	}
	return takeLines(names), nil
}

// Help returns the broker's HELP (one command per entry).
func (a *Admin) Help(ctx context.Context) ([]string, error) {
	defer runtime.KeepAlive(a)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var text *C.char
	var e *C.cursus_error_t
	if err := check(C.cursus_admin_help(a.h, &text, &e), e); err != nil {
		return nil, err
	}
	return takeLines(text), nil
}

// Close closes the client (idempotent).
func (a *Admin) Close() error {
	defer runtime.KeepAlive(a)
	var e *C.cursus_error_t
	return check(C.cursus_admin_close(a.h, &e), e)
}

// ---------------------------------------------------------------------------

// RecordMetadata tells where a record was written.
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64 // -1 when the broker reported none (acks=0)
	Timestamp time.Time
}

// Record is a record to send. Partition < 0 (or AnyPartition) lets the
// partitioner choose. A nil Key means no key.
type Record struct {
	Topic     string
	Partition int32
	Key       []byte
	Value     []byte
}

// AnyPartition lets the partitioner choose.
const AnyPartition int32 = -1

// Producer sends records. Safe for concurrent use.
type Producer struct {
	h *C.cursus_producer_t
}

// NewProducer creates a producer.
func NewProducer(ctx context.Context, opts ...Option) (*Producer, error) {
	var h *C.cursus_producer_t
	err := open(ctx, opts, func(cfg *C.cursus_config_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_producer_new(cfg, &h, e)
	})
	if err != nil {
		return nil, err
	}
	p := &Producer{h: h}
	runtime.SetFinalizer(p, func(p *Producer) { C.cursus_producer_destroy(p.h) })
	return p, nil
}

type delivery struct {
	meta RecordMetadata
	err  error
	fn   func(RecordMetadata, error)
}

//export cursusGoDelivery
func cursusGoDelivery(handle C.uintptr_t, report *C.cursus_delivery_report_t) {
	h := cgo.Handle(handle)
	d := h.Value().(*delivery)
	h.Delete()
	if Status(report.status) != StatusOK {
		d.err = errorFrom(Status(report.status), report.error)
	} else {
		m := report.metadata
		d.meta = RecordMetadata{
			Topic:     goString(report.topic),
			Partition: int32(m.partition),
			Offset:    int64(m.offset),
			Timestamp: time.UnixMilli(int64(m.timestamp)),
		}
	}
	d.fn(d.meta, d.err)
}

// SendAsync queues a record and returns once it is queued; fn is then
// called once with the outcome on an engine thread (keep it short). If
// queueing fails, the error is returned and fn is never called.
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
	var keyPtr, valPtr *C.uint8_t
	// The library copies key and value before returning; cgo pins them for the call.
	if len(r.Key) > 0 {
		keyPtr = (*C.uint8_t)(unsafe.Pointer(&r.Key[0]))
	} else if r.Key != nil {
		keyPtr = (*C.uint8_t)(unsafe.Pointer(t)) // empty, non-nil key: any valid pointer
	}
	if len(r.Value) > 0 {
		valPtr = (*C.uint8_t)(unsafe.Pointer(&r.Value[0]))
	}
	h := cgo.NewHandle(&delivery{fn: fn})
	var e *C.cursus_error_t
	s := C.cursus_go_send(p.h, t, C.int32_t(r.Partition), keyPtr, C.size_t(len(r.Key)), valPtr,
		C.size_t(len(r.Value)), C.uintptr_t(h), &e)
	if err := check(s, e); err != nil {
		h.Delete()
		return err
	}
	return nil
}

// Send sends a record and waits for its acknowledgement or for ctx. On
// cancellation it returns ctx.Err(); the record may still be delivered.
func (p *Producer) Send(ctx context.Context, r Record) (RecordMetadata, error) {
	type result struct {
		m   RecordMetadata
		err error
	}
	ch := make(chan result, 1)
	if err := p.SendAsync(ctx, r, func(m RecordMetadata, err error) { ch <- result{m, err} }); err != nil {
		return RecordMetadata{}, err
	}
	select {
	case res := <-ch:
		return res.m, res.err
	case <-ctx.Done():
		return RecordMetadata{}, ctx.Err()
	}
}

// Flush sends everything queued and waits until every record sent before
// it (and its callback) completed, or until ctx is done.
func (p *Producer) Flush(ctx context.Context) error {
	defer runtime.KeepAlive(p)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var e *C.cursus_error_t
		err := check(C.cursus_producer_flush(p.h, C.int64_t(slice(ctx)), &e), e)
		if err == nil || !errors.Is(err, ErrTimeout) {
			return err
		}
	}
}

// Close flushes (within ctx's deadline, else 30 s) and closes the producer.
// Idempotent.
func (p *Producer) Close(ctx context.Context) error {
	defer runtime.KeepAlive(p)
	timeout := int64(30000)
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl).Milliseconds(), 0)
	}
	var e *C.cursus_error_t
	return check(C.cursus_producer_close(p.h, C.int64_t(timeout), &e), e)
}

// ---------------------------------------------------------------------------

// Message is a consumed record (its bytes are copied into Go memory).
type Message struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Timestamp time.Time
}

// Consumer is a group consumer. Its calls are serialised.
type Consumer struct {
	mu sync.Mutex
	h  *C.cursus_consumer_t
}

// NewConsumer creates a group consumer (WithGroup is required).
func NewConsumer(ctx context.Context, opts ...Option) (*Consumer, error) {
	var h *C.cursus_consumer_t
	err := open(ctx, opts, func(cfg *C.cursus_config_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_consumer_new(cfg, &h, e)
	})
	if err != nil {
		return nil, err
	}
	c := &Consumer{h: h}
	runtime.SetFinalizer(c, func(c *Consumer) { C.cursus_consumer_destroy(c.h) })
	return c, nil
}

// Subscribe subscribes to topics, replacing the previous subscription.
func (c *Consumer) Subscribe(ctx context.Context, topics ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	arr := (*[1 << 20]*C.char)(C.malloc(C.size_t(len(topics)+1) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(arr))
	for i, t := range topics {
		arr[i] = cstr(t)
		defer C.free(unsafe.Pointer(arr[i]))
	}
	var e *C.cursus_error_t
	return check(C.cursus_consumer_subscribe(c.h, &arr[0], C.size_t(len(topics)), &e), e)
}

// Poll waits for the next message until ctx is done (then it returns
// ctx.Err()). Give ctx a deadline to poll with a timeout.
func (c *Consumer) Poll(ctx context.Context) (*Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var m *C.cursus_message_t
		var e *C.cursus_error_t
		if err := check(C.cursus_consumer_poll(c.h, C.int64_t(slice(ctx)), &m, &e), e); err != nil {
			return nil, err
		}
		if m != nil {
			return copyMessage(m), nil
		}
	}
}

func copyMessage(m *C.cursus_message_t) *Message {
	defer C.cursus_message_destroy(m)
	var klen, vlen C.size_t
	k := C.cursus_message_key(m, &klen)
	v := C.cursus_message_payload(m, &vlen)
	return &Message{
		Topic:     goString(C.cursus_message_topic(m)),
		Partition: int32(C.cursus_message_partition(m)),
		Offset:    int64(C.cursus_message_offset(m)),
		Key:       C.GoBytes(unsafe.Pointer(k), C.int(klen)),
		Value:     C.GoBytes(unsafe.Pointer(v), C.int(vlen)),
		Timestamp: time.UnixMilli(int64(C.cursus_message_timestamp(m))),
	}
}

// Commit commits the positions of the messages returned by Poll so far.
func (c *Consumer) Commit(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	var e *C.cursus_error_t
	return check(C.cursus_consumer_commit(c.h, &e), e)
}

// SubscribePattern subscribes to every topic matching a glob pattern (e.g.
// "orders-*"), replacing the previous subscription.
func (c *Consumer) SubscribePattern(ctx context.Context, pattern string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	p := cstr(pattern)
	defer C.free(unsafe.Pointer(p))
	var e *C.cursus_error_t
	return check(C.cursus_consumer_subscribe_pattern(c.h, p, &e), e)
}

//export cursusGoCommit
func cursusGoCommit(handle C.uintptr_t, status C.cursus_status_t, e *C.cursus_error_t) {
	h := cgo.Handle(handle)
	fn := h.Value().(func(error))
	h.Delete()
	var err error
	if Status(status) != StatusOK {
		err = errorFrom(Status(status), e) // borrowed: copied, not freed
	}
	fn(err)
}

// CommitAsync commits the positions of the messages returned by Poll so far
// in the background and returns once the commit started; fn (may be nil)
// is then called once with the outcome on a library thread (keep it short).
// If starting fails, the error is returned and fn is never called.
func (c *Consumer) CommitAsync(ctx context.Context, fn func(error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return -1, false, err
	}
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	var off C.int64_t
	var found C.bool
	var e *C.cursus_error_t
	if err := check(C.cursus_consumer_committed(c.h, t, C.uint32_t(partition), &off, &found, &e), e); err != nil {
		return -1, false, err
	}
	return int64(off), bool(found), nil
}

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition uint32
}

// CommitOffsets commits explicit next offsets (the offset after the last
// record processed) synchronously, one partition after another in topic and
// partition order. The group must have been joined (Poll once after
// Subscribe), else the error matches ErrInvalidArgument; so does a negative
// offset.
func (c *Consumer) CommitOffsets(ctx context.Context, offsets map[TopicPartition]int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	tps := make([]TopicPartition, 0, len(offsets))
	for tp, off := range offsets {
		if off < 0 {
			return &Error{
				Status:  StatusInvalidArgument,
				Code:    "invalid_argument",
				Class:   "validation",
				Message: fmt.Sprintf("negative offset %d for %s/%d", off, tp.Topic, tp.Partition),
				Fields:  map[string]string{},
			}
		}
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	n := len(tps)
	topics := cstrArray(n)
	defer C.free(unsafe.Pointer(topics))
	partitions := (*C.uint32_t)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.uint32_t(0)))))
	defer C.free(unsafe.Pointer(partitions))
	positions := (*C.uint64_t)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.uint64_t(0)))))
	defer C.free(unsafe.Pointer(positions))
	ts, ps, offs := unsafe.Slice(topics, n+1), unsafe.Slice(partitions, n+1), unsafe.Slice(positions, n+1)
	for i, tp := range tps {
		ts[i] = cstr(tp.Topic)
		defer C.free(unsafe.Pointer(ts[i]))
		ps[i] = C.uint32_t(tp.Partition)
		offs[i] = C.uint64_t(offsets[tp])
	}
	var e *C.cursus_error_t
	return check(C.cursus_consumer_commit_offsets(c.h, topics, partitions, positions, C.size_t(n), &e), e)
}

// Assignment returns the partitions currently assigned to this consumer.
func (c *Consumer) Assignment(ctx context.Context) ([]TopicPartition, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var arr *C.cursus_topic_partition_t
	var n C.size_t
	var e *C.cursus_error_t
	if err := check(C.cursus_consumer_assignment(c.h, &arr, &n, &e), e); err != nil {
		return nil, err
	}
	defer C.cursus_topic_partitions_free(arr, n)
	out := make([]TopicPartition, 0, int(n))
	for _, tp := range unsafe.Slice(arr, int(n)) {
		out = append(out, TopicPartition{Topic: goString(tp.topic), Partition: uint32(tp.partition)})
	}
	return out, nil
}

// Close leaves the group and closes the consumer (idempotent).
func (c *Consumer) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var e *C.cursus_error_t
	return check(C.cursus_consumer_close(c.h, &e), e)
}
