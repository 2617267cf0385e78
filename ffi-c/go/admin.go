package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"runtime"
	"unsafe"
)

// Admin manages topics and groups. Safe for concurrent use.
type Admin struct {
	h *C.cursus_admin_t
}

// NewAdmin connects an admin client.
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

// TopicInfo is a topic's definition (CreateTopic, AlterTopicConfig,
// Metadata, DescribeTopic).
type TopicInfo struct {
	Name                        string
	Partitions                  uint32
	ReplicationFactor           uint32
	Revision                    uint64 // pass it to TruncateTopic
	LifecycleEpoch              uint64 // bumped by TruncateTopic
	Idempotent                  bool
	EventSourcing               bool
	MinInSyncReplicas           int64 // the topic's override; -1: the broker default
	EffectiveMinInSyncReplicas  int64 // in force; -1 when not reported
	CleanupPolicy               string
	Partitioner                 string
	AuthPolicy                  string
	RetentionHours              uint64 // 0: the broker default
	RetentionBytes              uint64 // 0: the broker default
	ReadACL, WriteACL           []string
}

// PartitionDescription is one partition of a DescribeTopic.
type PartitionDescription struct {
	ID            uint32
	Leader        string
	Replicas, ISR []string
	Earliest      uint64
	LEO, HWM      uint64
}

// TopicDescription is a topic's definition and partitions (DESCRIBE).
type TopicDescription struct {
	Topic      string
	Definition TopicInfo
	Partitions []PartitionDescription
}

// TopicMetadata is a topic's definition and partition leaders (METADATA).
type TopicMetadata struct {
	Topic   TopicInfo
	Leaders []string // leader address per partition
	Epochs  []int64  // leader epoch per partition (-1: not reported)
}

// PartitionOffsets are one partition's offsets (LIST_OFFSETS).
type PartitionOffsets struct {
	Partition                  uint32
	Earliest, Latest, LEO, HWM uint64
}

// GroupMember is one member of a group.
type GroupMember struct {
	MemberID      string
	LastHeartbeat string
	Assignments   []uint32
}

// GroupStatus is a consumer group's state and members (GROUP_STATUS).
type GroupStatus struct {
	Group          string
	Topic          string // of a single-topic group
	State          string
	Generation     uint64
	PartitionCount uint64
	Members        []GroupMember
}

// DeleteResult is what DeleteTopic did.
type DeleteResult struct {
	Deleted        bool // false when ifExists found no topic
	CleanupPending bool // the broker still retries storage cleanup
}

// TruncateResult is what TruncateTopic did.
type TruncateResult struct {
	Revision, LifecycleEpoch uint64
	CleanupPending           bool
}

// TopicOptions sets a topic's settings by name for CreateTopicWithOptions:
// partitions, replication_factor, min_in_sync_replicas, retention_hours,
// retention_bytes (unsigned integers); idempotent, event_sourcing
// (true/false); cleanup_policy, partitioner, auth_policy; read_acl,
// write_acl (comma-separated principals). Unset settings keep the default.
type TopicOptions map[string]string

// topicInfo reads a topic info handle and destroys it.
func topicInfo(h *C.cursus_topic_info_t) TopicInfo {
	defer C.cursus_topic_info_destroy(h)
	acl := func(count func(*C.cursus_topic_info_t) C.size_t, get func(*C.cursus_topic_info_t, C.size_t) *C.char) []string {
		out := []string{}
		for i, n := C.size_t(0), count(h); i < n; i++ {
			out = append(out, goString(get(h, i)))
		}
		return out
	}
	return TopicInfo{
		Name:                       goString(C.cursus_topic_info_name(h)),
		Partitions:                 uint32(C.cursus_topic_info_partitions(h)),
		ReplicationFactor:          uint32(C.cursus_topic_info_replication_factor(h)),
		Revision:                   uint64(C.cursus_topic_info_revision(h)),
		LifecycleEpoch:             uint64(C.cursus_topic_info_lifecycle_epoch(h)),
		Idempotent:                 bool(C.cursus_topic_info_idempotent(h)),
		EventSourcing:              bool(C.cursus_topic_info_event_sourcing(h)),
		MinInSyncReplicas:          int64(C.cursus_topic_info_min_in_sync_replicas(h)),
		EffectiveMinInSyncReplicas: int64(C.cursus_topic_info_effective_min_in_sync_replicas(h)),
		CleanupPolicy:              goString(C.cursus_topic_info_cleanup_policy(h)),
		Partitioner:                goString(C.cursus_topic_info_partitioner(h)),
		AuthPolicy:                 goString(C.cursus_topic_info_auth_policy(h)),
		RetentionHours:             uint64(C.cursus_topic_info_retention_hours(h)),
		RetentionBytes:             uint64(C.cursus_topic_info_retention_bytes(h)),
		ReadACL: acl(func(h *C.cursus_topic_info_t) C.size_t { return C.cursus_topic_info_read_acl_count(h) },
			func(h *C.cursus_topic_info_t, i C.size_t) *C.char { return C.cursus_topic_info_read_acl(h, i) }),
		WriteACL: acl(func(h *C.cursus_topic_info_t) C.size_t { return C.cursus_topic_info_write_acl_count(h) },
			func(h *C.cursus_topic_info_t, i C.size_t) *C.char { return C.cursus_topic_info_write_acl(h, i) }),
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

// call runs one admin call that cannot be interrupted, bounded by ctx.
func adminCall[T any](ctx context.Context, a *Admin, f func(e **C.cursus_error_t) (T, C.enum_cursus_status_t)) (T, error) {
	return interruptible(ctx, func() (T, error) {
		defer runtime.KeepAlive(a)
		var e *C.cursus_error_t
		v, s := f(&e)
		return v, check(s, e)
	})
}

// CreateTopic creates a topic (partitions 0: the broker default) or
// patches an existing one; returns the definition the broker replied with.
func (a *Admin) CreateTopic(ctx context.Context, topic string, partitions int) (TopicInfo, error) {
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	h, err := adminCall(ctx, a, func(e **C.cursus_error_t) (*C.cursus_topic_info_t, C.enum_cursus_status_t) {
		var h *C.cursus_topic_info_t
		s := C.cursus_admin_create_topic(a.h, t, C.uint32_t(partitions), &h, e)
		return h, s
	})
	return topicInfoOrZero(h, err)
}

func topicInfoOrZero(h *C.cursus_topic_info_t, err error) (TopicInfo, error) {
	if err != nil {
		return TopicInfo{}, err
	}
	return topicInfo(h), nil
}

// CreateTopicWithOptions creates (or patches) a topic with any of its
// settings. An unknown name or bad value fails with ErrInvalidArgument
// before anything is sent.
func (a *Admin) CreateTopicWithOptions(ctx context.Context, topic string, opts TopicOptions) (TopicInfo, error) {
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	keys, values := make([]string, 0, len(opts)), make([]string, 0, len(opts))
	for k, v := range opts {
		keys, values = append(keys, k), append(values, v)
	}
	ck, freeKeys := cstrings(keys)
	defer freeKeys()
	cv, freeValues := cstrings(values)
	defer freeValues()
	h, err := adminCall(ctx, a, func(e **C.cursus_error_t) (*C.cursus_topic_info_t, C.enum_cursus_status_t) {
		var h *C.cursus_topic_info_t
		s := C.cursus_admin_create_topic_with(a.h, t, ck, cv, C.size_t(len(keys)), &h, e)
		return h, s
	})
	return topicInfoOrZero(h, err)
}

// AlterTopicConfig replaces the topic's min_in_sync_replicas override
// (negative: back to the broker default).
func (a *Admin) AlterTopicConfig(ctx context.Context, topic string, minInSyncReplicas int64) (TopicInfo, error) {
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	h, err := adminCall(ctx, a, func(e **C.cursus_error_t) (*C.cursus_topic_info_t, C.enum_cursus_status_t) {
		var h *C.cursus_topic_info_t
		s := C.cursus_admin_alter_topic_config(a.h, t, C.int64_t(minInSyncReplicas), &h, e)
		return h, s
	})
	return topicInfoOrZero(h, err)
}

// DeleteTopic deletes a topic; with ifExists a missing topic is not an error.
func (a *Admin) DeleteTopic(ctx context.Context, topic string, ifExists bool) (DeleteResult, error) {
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	return adminCall(ctx, a, func(e **C.cursus_error_t) (DeleteResult, C.enum_cursus_status_t) {
		var h *C.cursus_delete_outcome_t
		s := C.cursus_admin_delete_topic(a.h, t, C.bool(ifExists), &h, e)
		defer C.cursus_delete_outcome_destroy(h)
		return DeleteResult{bool(C.cursus_delete_outcome_deleted(h)), bool(C.cursus_delete_outcome_cleanup_pending(h))}, s
	})
}

// TruncateTopic drops every record of a topic if its revision is
// expectedRevision (else an error matching ErrConflict).
func (a *Admin) TruncateTopic(ctx context.Context, topic string, expectedRevision uint64) (TruncateResult, error) {
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	return adminCall(ctx, a, func(e **C.cursus_error_t) (TruncateResult, C.enum_cursus_status_t) {
		var h *C.cursus_truncate_outcome_t
		s := C.cursus_admin_truncate_topic(a.h, t, C.uint64_t(expectedRevision), &h, e)
		defer C.cursus_truncate_outcome_destroy(h)
		return TruncateResult{uint64(C.cursus_truncate_outcome_revision(h)),
			uint64(C.cursus_truncate_outcome_lifecycle_epoch(h)), bool(C.cursus_truncate_outcome_cleanup_pending(h))}, s
	})
}

// DescribeTopic returns a topic's definition and partitions.
func (a *Admin) DescribeTopic(ctx context.Context, topic string) (TopicDescription, error) {
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	return adminCall(ctx, a, func(e **C.cursus_error_t) (TopicDescription, C.enum_cursus_status_t) {
		var d *C.cursus_topic_description_t
		s := C.cursus_admin_describe_topic(a.h, t, &d, e)
		if Status(s) != StatusOK {
			return TopicDescription{}, s
		}
		defer C.cursus_topic_description_destroy(d)
		var def *C.cursus_topic_info_t
		C.cursus_topic_description_definition(d, &def, nil)
		out := TopicDescription{Topic: goString(C.cursus_topic_description_topic(d)), Definition: topicInfo(def)}
		for i, n := C.size_t(0), C.cursus_topic_description_partition_count(d); i < n; i++ {
			p := PartitionDescription{
				ID:       uint32(C.cursus_topic_description_partition_id(d, i)),
				Leader:   goString(C.cursus_topic_description_partition_leader(d, i)),
				Earliest: uint64(C.cursus_topic_description_partition_earliest(d, i)),
				LEO:      uint64(C.cursus_topic_description_partition_leo(d, i)),
				HWM:      uint64(C.cursus_topic_description_partition_hwm(d, i)),
			}
			for j, m := C.size_t(0), C.cursus_topic_description_partition_replica_count(d, i); j < m; j++ {
				p.Replicas = append(p.Replicas, goString(C.cursus_topic_description_partition_replica(d, i, j)))
			}
			for j, m := C.size_t(0), C.cursus_topic_description_partition_isr_count(d, i); j < m; j++ {
				p.ISR = append(p.ISR, goString(C.cursus_topic_description_partition_isr(d, i, j)))
			}
			out.Partitions = append(out.Partitions, p)
		}
		return out, s
	})
}

// Metadata returns a topic's definition and partition leaders.
func (a *Admin) Metadata(ctx context.Context, topic string) (TopicMetadata, error) {
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	return adminCall(ctx, a, func(e **C.cursus_error_t) (TopicMetadata, C.enum_cursus_status_t) {
		var m *C.cursus_topic_metadata_t
		s := C.cursus_admin_metadata(a.h, t, &m, e)
		if Status(s) != StatusOK {
			return TopicMetadata{}, s
		}
		defer C.cursus_topic_metadata_destroy(m)
		var info *C.cursus_topic_info_t
		C.cursus_topic_metadata_info(m, &info, nil)
		out := TopicMetadata{Topic: topicInfo(info)}
		for i, n := C.size_t(0), C.cursus_topic_metadata_leader_count(m); i < n; i++ {
			out.Leaders = append(out.Leaders, goString(C.cursus_topic_metadata_leader(m, i)))
			out.Epochs = append(out.Epochs, int64(C.cursus_topic_metadata_leader_epoch(m, i)))
		}
		return out, s
	})
}

// ListOffsets returns the offsets of one partition (partition >= 0) or of
// every partition (negative).
func (a *Admin) ListOffsets(ctx context.Context, topic string, partition int64) ([]PartitionOffsets, error) {
	t := cstr(topic)
	defer C.free(unsafe.Pointer(t))
	return adminCall(ctx, a, func(e **C.cursus_error_t) ([]PartitionOffsets, C.enum_cursus_status_t) {
		var l *C.cursus_partition_offsets_list_t
		s := C.cursus_admin_list_offsets(a.h, t, C.int64_t(partition), &l, e)
		defer C.cursus_partition_offsets_list_destroy(l)
		var out []PartitionOffsets
		for i, n := C.size_t(0), C.cursus_partition_offsets_list_count(l); i < n; i++ {
			out = append(out, PartitionOffsets{
				Partition: uint32(C.cursus_partition_offsets_list_partition(l, i)),
				Earliest:  uint64(C.cursus_partition_offsets_list_earliest(l, i)),
				Latest:    uint64(C.cursus_partition_offsets_list_latest(l, i)),
				LEO:       uint64(C.cursus_partition_offsets_list_leo(l, i)),
				HWM:       uint64(C.cursus_partition_offsets_list_hwm(l, i)),
			})
		}
		return out, s
	})
}

// GroupStatus returns a consumer group's state and members.
func (a *Admin) GroupStatus(ctx context.Context, group string) (GroupStatus, error) {
	g := cstr(group)
	defer C.free(unsafe.Pointer(g))
	return adminCall(ctx, a, func(e **C.cursus_error_t) (GroupStatus, C.enum_cursus_status_t) {
		var h *C.cursus_group_status_t
		s := C.cursus_admin_group_status(a.h, g, &h, e)
		defer C.cursus_group_status_destroy(h)
		out := GroupStatus{
			Group:          goString(C.cursus_group_status_group(h)),
			Topic:          goString(C.cursus_group_status_topic(h)),
			State:          goString(C.cursus_group_status_state(h)),
			Generation:     uint64(C.cursus_group_status_generation(h)),
			PartitionCount: uint64(C.cursus_group_status_partition_count(h)),
		}
		for i, n := C.size_t(0), C.cursus_group_status_member_count(h); i < n; i++ {
			m := GroupMember{
				MemberID:      goString(C.cursus_group_status_member_id(h, i)),
				LastHeartbeat: goString(C.cursus_group_status_member_last_heartbeat(h, i)),
			}
			for j, k := C.size_t(0), C.cursus_group_status_member_assignment_count(h, i); j < k; j++ {
				m.Assignments = append(m.Assignments, uint32(C.cursus_group_status_member_assignment(h, i, j)))
			}
			out.Members = append(out.Members, m)
		}
		return out, s
	})
}

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
