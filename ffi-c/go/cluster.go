package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"unsafe"
)

// The result types (ClusterStatus, ClusterBroker, ClusterPartition,
// LeaderElection) and their readers are generated: results_gen.go.

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
