package cursus

// #include <stdlib.h>
// #include "cursus.h"
// cursus_status_t cursus_go_set_rebalance(cursus_consumer_t *c, uintptr_t id, bool has_lost, cursus_error_t **err);
import "C"

import (
	"context"
	"runtime"
	"slices"
	"unsafe"
)

// Seek makes the next Poll return records of an assigned partition from
// offset on (records already fetched for it are dropped). The partition
// must be assigned: Poll joins the group first, and the rebalance
// listener's OnAssigned is the place to seek before any record is
// returned. Commits never move backwards: after a seek backwards they stay
// at the furthest offset returned. It may be called from the rebalance
// listener.
func (c *Consumer) Seek(ctx context.Context, tp TopicPartition, offset int64) error {
	if offset < 0 {
		return &Error{Status: StatusInvalidArgument, Code: "invalid_argument", Class: "validation",
			Kind: "invalid_argument", Message: "Seek: negative offset", Fields: map[string]string{}}
	}
	return c.call(ctx, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		t := cstr(tp.Topic)
		defer C.free(unsafe.Pointer(t))
		return C.cursus_consumer_seek(c.h, t, C.uint32_t(tp.Partition), C.uint64_t(offset), e)
	})
}

// Position returns the offset of the next record Poll returns for an
// assigned partition. It may be called from the rebalance listener.
func (c *Consumer) Position(ctx context.Context, tp TopicPartition) (int64, error) {
	return consumerCall(ctx, c, func(e **C.cursus_error_t) (int64, C.enum_cursus_status_t) {
		t := cstr(tp.Topic)
		defer C.free(unsafe.Pointer(t))
		var off C.uint64_t
		s := C.cursus_consumer_position(c.h, t, C.uint32_t(tp.Partition), &off, e)
		return int64(off), s
	})
}

// Pause stops returning records of these assigned partitions until Resume;
// the consumer stays in its group and their positions are kept.
func (c *Consumer) Pause(ctx context.Context, partitions ...TopicPartition) error {
	return c.partitionsCall(ctx, partitions, func(l *C.cursus_topic_partition_list_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_consumer_pause(c.h, l, e)
	})
}

// Resume returns records of these partitions again, from their positions.
func (c *Consumer) Resume(ctx context.Context, partitions ...TopicPartition) error {
	return c.partitionsCall(ctx, partitions, func(l *C.cursus_topic_partition_list_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_consumer_resume(c.h, l, e)
	})
}

// partitionsCall runs f with partitions as a C list (offsets unused).
func (c *Consumer) partitionsCall(ctx context.Context, partitions []TopicPartition,
	f func(*C.cursus_topic_partition_list_t, **C.cursus_error_t) C.enum_cursus_status_t) error {
	partitions = slices.Clone(partitions) // the caller may change its slice once this returns
	return c.call(ctx, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		list, s := partitionList(partitions, e)
		if Status(s) != StatusOK {
			return s
		}
		defer C.cursus_topic_partition_list_destroy(list)
		return f(list, e)
	})
}

// partitionList copies partitions into a C list (offsets -1; the caller
// destroys it).
func partitionList(partitions []TopicPartition, e **C.cursus_error_t) (*C.cursus_topic_partition_list_t, C.enum_cursus_status_t) {
	offsets := make([]partitionOffset, len(partitions))
	for i, tp := range partitions {
		offsets[i] = partitionOffset{tp, -1}
	}
	return offsetList(offsets, e)
}

// readPartitions copies a C list's partitions.
func readPartitions(list *C.cursus_topic_partition_list_t) []TopicPartition {
	out := []TopicPartition{}
	for i, n := C.size_t(0), C.cursus_topic_partition_list_count(list); i < n; i++ {
		out = append(out, TopicPartition{
			Topic:     goString(C.cursus_topic_partition_list_topic(list, i)),
			Partition: uint32(C.cursus_topic_partition_list_partition(list, i)),
		})
	}
	return out
}

// Paused returns the paused partitions, sorted by topic and partition.
func (c *Consumer) Paused(ctx context.Context) ([]TopicPartition, error) {
	return consumerCall(ctx, c, func(e **C.cursus_error_t) ([]TopicPartition, C.enum_cursus_status_t) {
		var list *C.cursus_topic_partition_list_t
		s := C.cursus_consumer_paused(c.h, &list, e)
		if Status(s) != StatusOK {
			return nil, s
		}
		defer C.cursus_topic_partition_list_destroy(list)
		return readPartitions(list), s
	})
}

// CommittedOffsets returns the group's committed next offset of each
// partition, in one request: a partition the group committed nothing for
// is absent from the map (off, ok := m[tp]).
func (c *Consumer) CommittedOffsets(ctx context.Context, partitions []TopicPartition) (map[TopicPartition]int64, error) {
	partitions = slices.Clone(partitions)
	return consumerCall(ctx, c, func(e **C.cursus_error_t) (map[TopicPartition]int64, C.enum_cursus_status_t) {
		list, s := partitionList(partitions, e)
		if Status(s) != StatusOK {
			return nil, s
		}
		defer C.cursus_topic_partition_list_destroy(list)
		var committed *C.cursus_topic_partition_list_t
		s = C.cursus_consumer_committed_list(c.h, list, &committed, e)
		if Status(s) != StatusOK {
			return nil, s
		}
		defer C.cursus_topic_partition_list_destroy(committed)
		out := map[TopicPartition]int64{}
		for i, n := C.size_t(0), C.cursus_topic_partition_list_count(committed); i < n; i++ {
			if off := int64(C.cursus_topic_partition_list_offset(committed, i)); off >= 0 {
				out[TopicPartition{
					Topic:     goString(C.cursus_topic_partition_list_topic(committed, i)),
					Partition: uint32(C.cursus_topic_partition_list_partition(committed, i)),
				}] = off
			}
		}
		return out, s
	})
}

// RebalanceListener is told of changes to a consumer's assignment
// (Consumer.SetRebalanceListener). A nil field ignores its event, except
// OnLost: when it is nil, the library tells lost partitions as revoked
// (OnRevoked), as it does in every Cursus language (and as franz-go and
// Kafka's Java client do by default).
//
// The functions run one at a time on a thread of the consumer's own while
// Poll (or Close, or Subscribe) waits for them, so they may call the
// consumer: Commit, Seek, Pause, Resume, Position, CommittedOffsets. Poll
// from there fails with an error. A panic is logged (SetLogger, else
// slog.Default()) and contained: the consumer goes on.
type RebalanceListener struct {
	// OnAssigned gets the partitions added to the assignment, after every
	// join of the group (possibly none), before any of their records is
	// returned: the place to Seek.
	OnAssigned func(partitions []TopicPartition)
	// OnRevoked gets the partitions taken away while still a member (by
	// Close, a new Subscribe, or a rebalance), before the consumer lets go
	// of them: on Close and Subscribe a Commit here still succeeds.
	OnRevoked func(partitions []TopicPartition)
	// OnLost gets the partitions lost with an expired session (no chance
	// to commit). nil: OnRevoked is called instead.
	OnLost func(partitions []TopicPartition)
}

// SetRebalanceListener sets the consumer's rebalance listener (nil removes
// it; a copy of *l is kept). The listener is kept until it is replaced or
// the consumer is closed.
func (c *Consumer) SetRebalanceListener(l *RebalanceListener) error {
	defer runtime.KeepAlive(c)
	var v any
	if l != nil {
		copied := *l
		v = &copied
	}
	hasLost := l != nil && l.OnLost != nil
	return c.listeners.replace(rebalanceSlot, v, func(id uintptr) error {
		var e *C.cursus_error_t
		return check(C.cursus_go_set_rebalance(c.h, C.uintptr_t(id), C.bool(hasLost), &e), e)
	})
}

//export cursusGoRebalance
func cursusGoRebalance(id C.uintptr_t, ev *C.cursus_rebalance_event_t) {
	l, ok := lookupListener(uintptr(id)).(*RebalanceListener)
	if !ok {
		return
	}
	defer recoverListener("rebalance listener")
	n := C.cursus_rebalance_event_count(ev)
	partitions := make([]TopicPartition, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		partitions = append(partitions, TopicPartition{
			Topic:     goString(C.cursus_rebalance_event_topic(ev, i)),
			Partition: uint32(C.cursus_rebalance_event_partition(ev, i)),
		})
	}
	var fn func([]TopicPartition)
	switch goString(C.cursus_rebalance_event_kind(ev)) {
	case "assigned":
		fn = l.OnAssigned
	case "revoked":
		fn = l.OnRevoked
	case "lost":
		fn = l.OnLost
	}
	if fn != nil {
		fn(partitions)
	}
}
