package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"runtime"
	"unsafe"
)

// Admin manages topics and groups. It is safe for concurrent use.
type Admin struct {
	h *C.cursus_admin_t
}

// NewAdmin connects an admin client (options bootstrap_servers,
// connect_timeout_ms, TLS and AUTH options...). ctx bounds connecting as
// for NewProducer.
func NewAdmin(ctx context.Context, opts ...Option) (*Admin, error) {
	ptr, err := open(ctx, "admin", opts, func(cfg *C.cursus_config_t, e **C.cursus_error_t) (unsafe.Pointer, C.enum_cursus_status_t) {
		var h *C.cursus_admin_t
		s := C.cursus_admin_new(cfg, &h, e)
		return unsafe.Pointer(h), s
	}, func(h unsafe.Pointer) {
		C.cursus_admin_destroy((*C.cursus_admin_t)(h))
	})
	if err != nil {
		return nil, err
	}
	h := (*C.cursus_admin_t)(ptr)
	a := &Admin{h: h}
	runtime.SetFinalizer(a, func(a *Admin) { C.cursus_admin_destroy(a.h) })
	return a, nil
}

// The result types (TopicInfo, TopicDescription, PartitionDescription,
// TopicMetadata, PartitionOffsets, GroupStatus, GroupMember, DeleteResult,
// TruncateResult) and their readers are generated: results_gen.go.

// DefaultMinInSyncReplicas, given to AlterTopicConfig, restores the broker
// default; in TopicInfo.MinInSyncReplicas it means "no override".
const DefaultMinInSyncReplicas int64 = -1

// AllPartitions, given to ListOffsets, lists every partition of the topic.
const AllPartitions int64 = -1

// TopicOptions sets a topic's settings by name for CreateTopicWithOptions:
// partitions, replication_factor, min_in_sync_replicas, retention_hours,
// retention_bytes (unsigned integers); idempotent, event_sourcing
// (true/false); cleanup_policy, partitioner, auth_policy; read_acl,
// write_acl (comma-separated principals). Unset settings keep the broker
// default; the library checks names and values.
type TopicOptions map[string]string

// topicInfo reads a topic info handle and destroys it.
func topicInfo(h *C.cursus_topic_info_t) TopicInfo {
	defer C.cursus_topic_info_destroy(h)
	return readTopicInfo(h)
}

// adminCall runs one admin request (which the library cannot interrupt),
// bounded by ctx. When ctx ends the wait, the request goes on in the
// background, so f does all of it on the request's goroutine: copies the
// arguments to C, calls the library, reads the result into Go values and
// destroys the result handle. An abandoned request thus owns, and frees,
// everything it uses.
func adminCall[T any](ctx context.Context, a *Admin, f func(e **C.cursus_error_t) (T, C.enum_cursus_status_t)) (T, error) {
	return interruptible(ctx, func() (T, error) {
		defer runtime.KeepAlive(a)
		var e *C.cursus_error_t
		v, s := f(&e)
		return v, check(s, e)
	})
}

// namedCall is adminCall for a request naming a topic or group: f gets
// the name as a C string, freed when the request is over.
func namedCall[T any](ctx context.Context, a *Admin, name string,
	f func(name *C.char, e **C.cursus_error_t) (T, C.enum_cursus_status_t)) (T, error) {
	return adminCall(ctx, a, func(e **C.cursus_error_t) (T, C.enum_cursus_status_t) {
		n := cstr(name)
		defer C.free(unsafe.Pointer(n))
		return f(n, e)
	})
}

// topicInfoCall is namedCall for a request replying with a topic info
// handle, read and destroyed on the request's goroutine.
func topicInfoCall(ctx context.Context, a *Admin, topic string,
	f func(topic *C.char, out **C.cursus_topic_info_t, e **C.cursus_error_t) C.enum_cursus_status_t) (TopicInfo, error) {
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) (TopicInfo, C.enum_cursus_status_t) {
		var h *C.cursus_topic_info_t
		s := f(t, &h, e)
		if Status(s) != StatusOK {
			return TopicInfo{}, s
		}
		return topicInfo(h), s
	})
}

// CreateTopic creates a topic (partitions 0: the broker default) or
// patches an existing one; returns the definition the broker replied with.
func (a *Admin) CreateTopic(ctx context.Context, topic string, partitions int) (TopicInfo, error) {
	return topicInfoCall(ctx, a, topic, func(t *C.char, h **C.cursus_topic_info_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_admin_create_topic(a.h, t, C.uint32_t(partitions), h, e)
	})
}

// CreateTopicWithOptions creates (or patches) a topic with any of its
// settings. An unknown name or bad value fails with ErrInvalidArgument
// before anything is sent.
func (a *Admin) CreateTopicWithOptions(ctx context.Context, topic string, opts TopicOptions) (TopicInfo, error) {
	// Read opts now: the caller may change the map once this returns.
	keys, values := make([]string, 0, len(opts)), make([]string, 0, len(opts))
	for k, v := range opts {
		keys, values = append(keys, k), append(values, v)
	}
	return topicInfoCall(ctx, a, topic, func(t *C.char, h **C.cursus_topic_info_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		ck, freeKeys := cstrings(keys)
		defer freeKeys()
		cv, freeValues := cstrings(values)
		defer freeValues()
		return C.cursus_admin_create_topic_with(a.h, t, ck, cv, C.size_t(len(keys)), h, e)
	})
}

// AlterTopicConfig replaces the topic's min_in_sync_replicas override
// (DefaultMinInSyncReplicas: back to the broker default) and returns the
// new definition.
func (a *Admin) AlterTopicConfig(ctx context.Context, topic string, minInSyncReplicas int64) (TopicInfo, error) {
	return topicInfoCall(ctx, a, topic, func(t *C.char, h **C.cursus_topic_info_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_admin_alter_topic_config(a.h, t, C.int64_t(minInSyncReplicas), h, e)
	})
}

// DeleteTopic deletes a topic; with ifExists a missing topic is not an
// error (the result then says nothing was deleted), without it that is an
// error matching ErrNotFound.
func (a *Admin) DeleteTopic(ctx context.Context, topic string, ifExists bool) (DeleteResult, error) {
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) (DeleteResult, C.enum_cursus_status_t) {
		var h *C.cursus_delete_outcome_t
		s := C.cursus_admin_delete_topic(a.h, t, C.bool(ifExists), &h, e)
		if Status(s) != StatusOK {
			return DeleteResult{}, s
		}
		defer C.cursus_delete_outcome_destroy(h)
		return readDeleteOutcome(h), s
	})
}

// TruncateTopic drops every record of a topic if its revision is
// expectedRevision (else an error matching ErrConflict).
func (a *Admin) TruncateTopic(ctx context.Context, topic string, expectedRevision uint64) (TruncateResult, error) {
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) (TruncateResult, C.enum_cursus_status_t) {
		var h *C.cursus_truncate_outcome_t
		s := C.cursus_admin_truncate_topic(a.h, t, C.uint64_t(expectedRevision), &h, e)
		if Status(s) != StatusOK {
			return TruncateResult{}, s
		}
		defer C.cursus_truncate_outcome_destroy(h)
		return readTruncateOutcome(h), s
	})
}

// DescribeTopic returns a topic's definition and the state of each
// partition.
func (a *Admin) DescribeTopic(ctx context.Context, topic string) (TopicDescription, error) {
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) (TopicDescription, C.enum_cursus_status_t) {
		var d *C.cursus_topic_description_t
		s := C.cursus_admin_describe_topic(a.h, t, &d, e)
		if Status(s) != StatusOK {
			return TopicDescription{}, s
		}
		defer C.cursus_topic_description_destroy(d)
		return readTopicDescription(d), s
	})
}

// Metadata returns a topic's definition and partition leaders.
func (a *Admin) Metadata(ctx context.Context, topic string) (TopicMetadata, error) {
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) (TopicMetadata, C.enum_cursus_status_t) {
		var m *C.cursus_topic_metadata_t
		s := C.cursus_admin_metadata(a.h, t, &m, e)
		if Status(s) != StatusOK {
			return TopicMetadata{}, s
		}
		defer C.cursus_topic_metadata_destroy(m)
		return readTopicMetadata(m), s
	})
}

// ListOffsets returns the offsets of one partition (partition >= 0) or of
// every partition (AllPartitions).
func (a *Admin) ListOffsets(ctx context.Context, topic string, partition int64) ([]PartitionOffsets, error) {
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) ([]PartitionOffsets, C.enum_cursus_status_t) {
		var l *C.cursus_partition_offsets_list_t
		s := C.cursus_admin_list_offsets(a.h, t, C.int64_t(partition), &l, e)
		if Status(s) != StatusOK {
			return nil, s
		}
		defer C.cursus_partition_offsets_list_destroy(l)
		return readPartitionOffsetsList(l), s
	})
}

// GroupStatus returns a consumer group's state and members.
func (a *Admin) GroupStatus(ctx context.Context, group string) (GroupStatus, error) {
	return namedCall(ctx, a, group, func(g *C.char, e **C.cursus_error_t) (GroupStatus, C.enum_cursus_status_t) {
		var h *C.cursus_group_status_t
		s := C.cursus_admin_group_status(a.h, g, &h, e)
		if Status(s) != StatusOK {
			return GroupStatus{}, s
		}
		defer C.cursus_group_status_destroy(h)
		return readGroupStatus(h), s
	})
}

// names runs one admin request that returns a string list.
func (a *Admin) names(ctx context.Context, f func(**C.cursus_string_list_t, **C.cursus_error_t) C.enum_cursus_status_t) ([]string, error) {
	return adminCall(ctx, a, func(e **C.cursus_error_t) ([]string, C.enum_cursus_status_t) {
		var l *C.cursus_string_list_t
		s := f(&l, e)
		if Status(s) != StatusOK {
			return nil, s
		}
		return stringList(l), s
	})
}

// ListTopics returns the topic names.
func (a *Admin) ListTopics(ctx context.Context) ([]string, error) {
	return a.names(ctx, func(l **C.cursus_string_list_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_admin_list_topics(a.h, l, e)
	})
}

// ListGroups returns the consumer group names.
func (a *Admin) ListGroups(ctx context.Context) ([]string, error) {
	return a.names(ctx, func(l **C.cursus_string_list_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_admin_list_groups(a.h, l, e)
	})
}

// Help returns the broker's HELP lines.
func (a *Admin) Help(ctx context.Context) ([]string, error) {
	return a.names(ctx, func(l **C.cursus_string_list_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_admin_help(a.h, l, e)
	})
}

// Close closes the client (idempotent); later calls fail with ErrClosed.
func (a *Admin) Close() error {
	defer runtime.KeepAlive(a)
	var e *C.cursus_error_t
	return check(C.cursus_admin_close(a.h, &e), e)
}
