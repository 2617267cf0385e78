package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"slices"
	"unsafe"
)

// The result types (ClusterStatus, ClusterBroker, ClusterPartition,
// LeaderElection, PartitionReassignment) and their readers are generated:
// results_gen.go.

// ClusterStatus returns the cluster's Raft leader, brokers and partitions
// (distributed mode). A standalone broker refuses it with an error of
// code "distribution_not_enabled" matching ErrValidation.
func (a *Admin) ClusterStatus(ctx context.Context) (ClusterStatus, error) {
	return adminCall(ctx, a, func(e **C.cursus_error_t) (ClusterStatus, C.enum_cursus_status_t) {
		var h *C.cursus_cluster_status_t
		s := C.cursus_admin_cluster_status(a.h, &h, e)
		if Status(s) != StatusOK {
			return ClusterStatus{}, s
		}
		defer C.cursus_cluster_status_destroy(h)
		return readClusterStatus(h), s
	})
}

// ElectLeader makes broker brokerID (an active in-sync replica) the
// leader of topic/partition. Electing the current leader again changes
// nothing (Changed is false). Errors: leader_election_rejected
// (ErrConflict), topic_not_found and partition_not_found (ErrNotFound),
// distribution_not_enabled (ErrValidation) on a standalone broker.
func (a *Admin) ElectLeader(ctx context.Context, topic string, partition uint32, brokerID string) (LeaderElection, error) {
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) (LeaderElection, C.enum_cursus_status_t) {
		id := cstr(brokerID)
		defer C.free(unsafe.Pointer(id))
		var h *C.cursus_leader_election_t
		s := C.cursus_admin_elect_leader(a.h, t, C.uint32_t(partition), id, &h, e)
		if Status(s) != StatusOK {
			return LeaderElection{}, s
		}
		defer C.cursus_leader_election_destroy(h)
		return readLeaderElection(h), s
	})
}

// ReassignPartition moves the replicas of topic/partition to the brokers
// replicas (broker ids, preferred leader first, as many as the topic's
// replication factor; REASSIGN_PARTITIONS, a project extension) and
// returns once the move is done: the new replicas caught up into the ISR,
// the others dropped, the leader one of replicas. No acknowledged record
// is lost. After the client's request_timeout_ms it fails with the
// retryable reassignment_timeout (ErrTimeout) while the move goes on;
// calling again with the same replicas resumes waiting. Errors:
// topic_not_found, partition_not_found, broker_not_found (ErrNotFound),
// invalid_replicas, invalid_replication_factor (ErrValidation),
// replica_broker_inactive, reassignment_in_progress (ErrConflict),
// distribution_not_enabled (ErrValidation) on a standalone broker.
func (a *Admin) ReassignPartition(ctx context.Context, topic string, partition uint32, replicas ...string) (PartitionReassignment, error) {
	replicas = slices.Clone(replicas) // the caller may change its slice once this returns
	return namedCall(ctx, a, topic, func(t *C.char, e **C.cursus_error_t) (PartitionReassignment, C.enum_cursus_status_t) {
		arr, free := cstrings(replicas)
		defer free()
		var h *C.cursus_partition_reassignment_t
		s := C.cursus_admin_reassign_partition(a.h, t, C.uint32_t(partition), arr, C.size_t(len(replicas)), &h, e)
		if Status(s) != StatusOK {
			return PartitionReassignment{}, s
		}
		defer C.cursus_partition_reassignment_destroy(h)
		return readPartitionReassignment(h), s
	})
}

// ListCluster returns the brokers registered in the cluster (distributed
// mode). A standalone broker refuses it with distribution_not_enabled.
func (a *Admin) ListCluster(ctx context.Context) ([]ClusterBroker, error) {
	return adminCall(ctx, a, func(e **C.cursus_error_t) ([]ClusterBroker, C.enum_cursus_status_t) {
		var l *C.cursus_cluster_broker_list_t
		s := C.cursus_admin_list_cluster(a.h, &l, e)
		if Status(s) != StatusOK {
			return nil, s
		}
		defer C.cursus_cluster_broker_list_destroy(l)
		return readClusterBrokerList(l), s
	})
}
