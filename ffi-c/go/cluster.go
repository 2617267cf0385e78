package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"unsafe"
)

// ClusterBroker is one broker of a cluster (ListCluster,
// ClusterStatus.Brokers). Broker ids are opaque strings.
type ClusterBroker struct {
	// ID is the broker id, e.g. "broker-1".
	ID string
	// Addr is the broker's cluster (peer) address, host:port.
	Addr string
	// ClientAddr is the address clients connect to ("" when the broker
	// reports none).
	ClientAddr string
	// Status is "active" or "inactive".
	Status string
	// LastSeen is when the broker was last heard from, RFC 3339 ("" when
	// not reported).
	LastSeen string
	// LifecycleProtocol is the lifecycle protocol version the broker
	// speaks, or -1 when not reported.
	LifecycleProtocol int64
}

// ClusterPartition is one partition in a ClusterStatus.
type ClusterPartition struct {
	// Topic is the topic name.
	Topic string
	// Partition is the partition id.
	Partition uint32
	// Leader is the leader's broker id ("" for a leaderless partition).
	Leader string
	// LeaderEpoch is the leader epoch.
	LeaderEpoch uint64
	// HWM is the committed high-water mark.
	HWM uint64
	// Replicas are the broker ids of the replica set.
	Replicas []string
	// ISR are the broker ids of the in-sync replicas.
	ISR []string
}

// ClusterStatus is the state of a cluster (CLUSTER_STATUS).
type ClusterStatus struct {
	// RaftLeader is the broker id of the Raft (metadata) leader ("" while
	// none is known).
	RaftLeader string
	// Brokers are the registered brokers.
	Brokers []ClusterBroker
	// Partitions are every partition of every topic.
	Partitions []ClusterPartition
	// Leaderless counts partitions without an active leader.
	Leaderless uint64
	// UnderReplicated counts partitions whose ISR is smaller than their
	// replica set.
	UnderReplicated uint64
}

// LeaderElection is what ElectLeader did.
type LeaderElection struct {
	// Topic is the topic of the election.
	Topic string
	// Partition is the partition of the election.
	Partition uint32
	// PreviousLeader is the leader's broker id before the election ("" when
	// the partition had none).
	PreviousLeader string
	// Leader is the leader's broker id now.
	Leader string
	// LeaderEpoch is the leader epoch now.
	LeaderEpoch uint64
	// Changed is false when the requested broker already led (the
	// election is idempotent).
	Changed bool
}

// clusterBrokers reads a cluster broker list handle (without destroying it).
func clusterBrokers(l *C.cursus_cluster_broker_list_t) []ClusterBroker {
	out := []ClusterBroker{}
	for i, n := C.size_t(0), C.cursus_cluster_broker_list_count(l); i < n; i++ {
		out = append(out, ClusterBroker{
			ID:                goString(C.cursus_cluster_broker_list_id(l, i)),
			Addr:              goString(C.cursus_cluster_broker_list_addr(l, i)),
			ClientAddr:        goString(C.cursus_cluster_broker_list_client_addr(l, i)),
			Status:            goString(C.cursus_cluster_broker_list_status(l, i)),
			LastSeen:          goString(C.cursus_cluster_broker_list_last_seen(l, i)),
			LifecycleProtocol: int64(C.cursus_cluster_broker_list_lifecycle_protocol(l, i)),
		})
	}
	return out
}

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
		var b *C.cursus_cluster_broker_list_t
		if s := C.cursus_cluster_status_brokers(h, &b, e); Status(s) != StatusOK {
			return ClusterStatus{}, s
		}
		defer C.cursus_cluster_broker_list_destroy(b)
		out := ClusterStatus{
			RaftLeader:      goString(C.cursus_cluster_status_raft_leader(h)),
			Brokers:         clusterBrokers(b),
			Partitions:      []ClusterPartition{},
			Leaderless:      uint64(C.cursus_cluster_status_leaderless(h)),
			UnderReplicated: uint64(C.cursus_cluster_status_under_replicated(h)),
		}
		for i, n := C.size_t(0), C.cursus_cluster_status_partition_count(h); i < n; i++ {
			p := ClusterPartition{
				Topic:       goString(C.cursus_cluster_status_partition_topic(h, i)),
				Partition:   uint32(C.cursus_cluster_status_partition_id(h, i)),
				Leader:      goString(C.cursus_cluster_status_partition_leader(h, i)),
				LeaderEpoch: uint64(C.cursus_cluster_status_partition_leader_epoch(h, i)),
				HWM:         uint64(C.cursus_cluster_status_partition_hwm(h, i)),
				Replicas:    []string{},
				ISR:         []string{},
			}
			for j, m := C.size_t(0), C.cursus_cluster_status_partition_replica_count(h, i); j < m; j++ {
				p.Replicas = append(p.Replicas, goString(C.cursus_cluster_status_partition_replica(h, i, j)))
			}
			for j, m := C.size_t(0), C.cursus_cluster_status_partition_isr_count(h, i); j < m; j++ {
				p.ISR = append(p.ISR, goString(C.cursus_cluster_status_partition_isr(h, i, j)))
			}
			out.Partitions = append(out.Partitions, p)
		}
		return out, s
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
		return LeaderElection{
			Topic:          goString(C.cursus_leader_election_topic(h)),
			Partition:      uint32(C.cursus_leader_election_partition(h)),
			PreviousLeader: goString(C.cursus_leader_election_previous_leader(h)),
			Leader:         goString(C.cursus_leader_election_leader(h)),
			LeaderEpoch:    uint64(C.cursus_leader_election_leader_epoch(h)),
			Changed:        bool(C.cursus_leader_election_changed(h)),
		}, s
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
		return clusterBrokers(l), s
	})
}
