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

// TopicInfo is a topic's definition, as the broker replied (CreateTopic,
// CreateTopicWithOptions, AlterTopicConfig, Metadata, DescribeTopic).
type TopicInfo struct {
	// Name is the topic name.
	Name string
	// Partitions is the partition count.
	Partitions uint32
	// ReplicationFactor is the number of replicas of each partition.
	ReplicationFactor uint32
	// Revision is the definition revision: pass it to TruncateTopic.
	Revision uint64
	// LifecycleEpoch is bumped by TruncateTopic.
	LifecycleEpoch uint64
	// Idempotent tells whether producers are deduplicated on this topic.
	Idempotent bool
	// EventSourcing tells whether the topic takes event-sourcing commands.
	EventSourcing bool
	// AggregateReplay tells whether the topic is an aggregate replay topic
	// (appends carry event ids and are retried safely).
	AggregateReplay bool
	// MinInSyncReplicas is the topic's override, or
	// DefaultMinInSyncReplicas (-1) when the broker default applies.
	MinInSyncReplicas int64
	// EffectiveMinInSyncReplicas is the value in force, or -1 when the
	// reply does not say.
	EffectiveMinInSyncReplicas int64
	// CleanupPolicy is delete, compact or delete,compact.
	CleanupPolicy string
	// Partitioner is hash_key or round_robin.
	Partitioner string
	// AuthPolicy is open, deny_write, deny_read or acl.
	AuthPolicy string
	// RetentionHours is the retention in hours (0: the broker default).
	RetentionHours uint64
	// RetentionBytes is the retention in bytes (0: the broker default).
	RetentionBytes uint64
	// ReadACL lists the principals allowed to read (auth policy acl).
	ReadACL []string
	// WriteACL lists the principals allowed to write (auth policy acl).
	WriteACL []string
}

// DefaultMinInSyncReplicas, given to AlterTopicConfig, restores the broker
// default; in TopicInfo.MinInSyncReplicas it means "no override".
const DefaultMinInSyncReplicas int64 = -1

// AllPartitions, given to ListOffsets, lists every partition of the topic.
const AllPartitions int64 = -1

// PartitionDescription is one partition of a DescribeTopic.
type PartitionDescription struct {
	// ID is the partition id.
	ID uint32
	// Leader is the leader's address (host:port).
	Leader string
	// Replicas are the partition's replicas (broker ids, as the broker
	// reports them).
	Replicas []string
	// ISR are the in-sync replicas (broker ids).
	ISR []string
	// Earliest is the earliest retained offset.
	Earliest uint64
	// LEO is the log end offset.
	LEO uint64
	// HWM is the high-water mark.
	HWM uint64
}

// TopicDescription is a topic's definition and the state of each of its
// partitions (DESCRIBE).
type TopicDescription struct {
	// Topic is the topic described.
	Topic string
	// Definition is the topic's definition.
	Definition TopicInfo
	// Partitions describes each partition.
	Partitions []PartitionDescription
}

// TopicMetadata is a topic's definition and partition leaders (METADATA).
type TopicMetadata struct {
	// Topic is the topic's definition.
	Topic TopicInfo
	// Leaders is the leader address (host:port) of each partition, indexed
	// by partition id.
	Leaders []string
	// Epochs is the leader epoch of each partition (-1: not reported).
	Epochs []int64
}

// PartitionOffsets are one partition's offsets (LIST_OFFSETS).
type PartitionOffsets struct {
	// Partition is the partition id.
	Partition uint32
	// Earliest is the earliest retained offset.
	Earliest uint64
	// Latest is the next readable committed offset (where "latest"
	// consumers start).
	Latest uint64
	// LEO is the log end offset.
	LEO uint64
	// HWM is the high-water mark.
	HWM uint64
}

// GroupMember is one member of a consumer group.
type GroupMember struct {
	// MemberID is the member's id.
	MemberID string
	// LastHeartbeat is when the member last sent a heartbeat, as the
	// broker reports it.
	LastHeartbeat string
	// Assignments are the partitions assigned to the member.
	Assignments []uint32
}

// GroupStatus is a consumer group's state and members (GROUP_STATUS).
type GroupStatus struct {
	// Group is the group name.
	Group string
	// Topic is the topic of a single-topic group (empty otherwise).
	Topic string
	// State is the group state, e.g. "Stable".
	State string
	// Generation is the group generation.
	Generation uint64
	// PartitionCount is the partition count of the group's topics.
	PartitionCount uint64
	// Members are the group's members.
	Members []GroupMember
}

// DeleteResult is what DeleteTopic did.
type DeleteResult struct {
	// Deleted is false when ifExists found no topic.
	Deleted bool
	// CleanupPending tells whether the broker still has storage cleanup to
	// retry.
	CleanupPending bool
}

// TruncateResult is what TruncateTopic did.
type TruncateResult struct {
	// Revision is the topic's revision after truncation.
	Revision uint64
	// LifecycleEpoch is the topic's lifecycle epoch after truncation.
	LifecycleEpoch uint64
	// CleanupPending tells whether the broker still has storage cleanup to
	// retry.
	CleanupPending bool
}

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
		AggregateReplay:            bool(C.cursus_topic_info_aggregate_replay(h)),
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
		return DeleteResult{bool(C.cursus_delete_outcome_deleted(h)), bool(C.cursus_delete_outcome_cleanup_pending(h))}, s
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
		return TruncateResult{uint64(C.cursus_truncate_outcome_revision(h)),
			uint64(C.cursus_truncate_outcome_lifecycle_epoch(h)), bool(C.cursus_truncate_outcome_cleanup_pending(h))}, s
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
		var def *C.cursus_topic_info_t
		if s := C.cursus_topic_description_definition(d, &def, e); Status(s) != StatusOK {
			return TopicDescription{}, s
		}
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
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) (TopicMetadata, C.enum_cursus_status_t) {
		var m *C.cursus_topic_metadata_t
		s := C.cursus_admin_metadata(a.h, t, &m, e)
		if Status(s) != StatusOK {
			return TopicMetadata{}, s
		}
		defer C.cursus_topic_metadata_destroy(m)
		var info *C.cursus_topic_info_t
		if s := C.cursus_topic_metadata_info(m, &info, e); Status(s) != StatusOK {
			return TopicMetadata{}, s
		}
		out := TopicMetadata{Topic: topicInfo(info)}
		for i, n := C.size_t(0), C.cursus_topic_metadata_leader_count(m); i < n; i++ {
			out.Leaders = append(out.Leaders, goString(C.cursus_topic_metadata_leader(m, i)))
			out.Epochs = append(out.Epochs, int64(C.cursus_topic_metadata_leader_epoch(m, i)))
		}
		return out, s
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
	return namedCall(ctx, a, group, func(g *C.char, e **C.cursus_error_t) (GroupStatus, C.enum_cursus_status_t) {
		var h *C.cursus_group_status_t
		s := C.cursus_admin_group_status(a.h, g, &h, e)
		if Status(s) != StatusOK {
			return GroupStatus{}, s
		}
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
