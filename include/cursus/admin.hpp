// cursus/admin.hpp: Admin: topic, group and cluster administration (part of cursus.hpp; include that).
#ifndef CURSUS_ADMIN_HPP
#define CURSUS_ADMIN_HPP

#include "types.hpp"

namespace cursus {

/// One broker of a cluster (LIST_CLUSTER, ClusterStatus::brokers).
struct ClusterBroker {
  std::string id;                          ///< Broker id (opaque, e.g. "broker-1").
  std::string addr;                        ///< Cluster (peer) address, host:port.
  std::optional<std::string> client_addr;  ///< Address clients connect to, when reported.
  std::string status;                      ///< "active" or "inactive".
  std::optional<std::string> last_seen;    ///< When last heard from (RFC 3339), when reported.
  std::optional<uint32_t> lifecycle_protocol; ///< Lifecycle protocol version, when reported.
};

/// One partition in CLUSTER_STATUS.
struct ClusterPartition {
  std::string topic;                 ///< Topic.
  uint32_t partition;                ///< Partition id.
  std::optional<std::string> leader; ///< Leader's broker id (none: leaderless).
  uint64_t leader_epoch;             ///< Leader epoch.
  uint64_t hwm;                      ///< Committed high-water mark.
  std::vector<std::string> replicas; ///< Broker ids of the replica set.
  std::vector<std::string> isr;      ///< Broker ids of the in-sync replicas.
};

/// CLUSTER_STATUS: the Raft leader, every broker and every partition.
struct ClusterStatus {
  std::optional<std::string> raft_leader;  ///< Raft leader's broker id (none while unknown).
  std::vector<ClusterBroker> brokers;      ///< Registered brokers.
  std::vector<ClusterPartition> partitions; ///< Every partition of every topic.
  uint64_t leaderless;                     ///< Partitions without an active leader.
  uint64_t under_replicated;               ///< Partitions whose ISR is smaller than their replicas.
};

/// What ELECT_LEADER did.
struct LeaderElection {
  std::string topic;                          ///< Topic.
  uint32_t partition;                         ///< Partition.
  std::optional<std::string> previous_leader; ///< Leader before (none: there was none).
  std::string leader;                         ///< Leader now.
  uint64_t leader_epoch;                      ///< Leader epoch now.
  bool changed;                               ///< False when the broker already led.
};

namespace detail {

inline std::optional<std::string> opt_str(const char *s) {
  return s ? std::optional<std::string>(s) : std::nullopt;
}

inline std::vector<ClusterBroker> cluster_brokers(const cursus_cluster_broker_list_t *l) {
  std::vector<ClusterBroker> out;
  for (size_t i = 0, n = cursus_cluster_broker_list_count(l); i < n; i++) {
    int64_t lp = cursus_cluster_broker_list_lifecycle_protocol(l, i);
    out.push_back(ClusterBroker{str(cursus_cluster_broker_list_id(l, i)), str(cursus_cluster_broker_list_addr(l, i)),
                                opt_str(cursus_cluster_broker_list_client_addr(l, i)),
                                str(cursus_cluster_broker_list_status(l, i)),
                                opt_str(cursus_cluster_broker_list_last_seen(l, i)),
                                lp < 0 ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(lp))});
  }
  return out;
}

inline std::vector<std::string> cluster_replicas(const cursus_cluster_status_t *s, size_t p, bool isr) {
  std::vector<std::string> out;
  size_t n = isr ? cursus_cluster_status_partition_isr_count(s, p) : cursus_cluster_status_partition_replica_count(s, p);
  for (size_t j = 0; j < n; j++)
    out.push_back(str(isr ? cursus_cluster_status_partition_isr(s, p, j) : cursus_cluster_status_partition_replica(s, p, j)));
  return out;
}

}  // namespace detail

/// Topic, group and cluster administration.
class Admin {
 public:
  /// Connects with a configuration of kind Admin (or Any).
  explicit Admin(const Config &config) {
    cursus_admin_t *a = nullptr;
    detail::call(cursus_admin_new, config.c_handle(), &a);
    h_ = detail::Handle<cursus_admin_t, cursus_admin_destroy>(a);
  }
  /// Creates a topic (0 partitions: the broker default) or patches one.
  TopicInfo create_topic(const std::string &topic, uint32_t partitions = 0) {
    cursus_topic_info_t *t = nullptr;
    detail::call(cursus_admin_create_topic, h_.get(), topic.c_str(), partitions, &t);
    return detail::topic_info(t);
  }
  /// Creates or patches a topic with settings by name ("partitions", "idempotent", "read_acl", ...).
  TopicInfo create_topic(const std::string &topic, const std::map<std::string, std::string> &options) {
    std::vector<const char *> keys, values;
    for (const auto &kv : options) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    cursus_topic_info_t *t = nullptr;
    detail::call(cursus_admin_create_topic_with, h_.get(), topic.c_str(), keys.data(), values.data(), keys.size(),
                 &t);
    return detail::topic_info(t);
  }
  /// Replaces the min_in_sync_replicas override (none: the broker default).
  TopicInfo alter_topic_config(const std::string &topic, std::optional<uint32_t> min_in_sync_replicas) {
    cursus_topic_info_t *t = nullptr;
    detail::call(cursus_admin_alter_topic_config, h_.get(), topic.c_str(),
                 min_in_sync_replicas ? static_cast<int64_t>(*min_in_sync_replicas) : int64_t{-1}, &t);
    return detail::topic_info(t);
  }
  /// Deletes a topic (if_exists: a missing topic is not an error).
  DeleteResult delete_topic(const std::string &topic, bool if_exists = false) {
    auto o = detail::result<cursus_delete_outcome_t, cursus_delete_outcome_destroy>(cursus_admin_delete_topic, h_.get(),
                                                                                    topic.c_str(), if_exists);
    return DeleteResult{cursus_delete_outcome_deleted(o.get()), cursus_delete_outcome_cleanup_pending(o.get())};
  }
  /// Drops every record if the revision is expected_revision (else ConflictError).
  TruncateResult truncate_topic(const std::string &topic, uint64_t expected_revision) {
    auto o = detail::result<cursus_truncate_outcome_t, cursus_truncate_outcome_destroy>(
        cursus_admin_truncate_topic, h_.get(), topic.c_str(), expected_revision);
    return TruncateResult{cursus_truncate_outcome_revision(o.get()), cursus_truncate_outcome_lifecycle_epoch(o.get()),
                          cursus_truncate_outcome_cleanup_pending(o.get())};
  }
  /// DESCRIBE.
  TopicDescription describe_topic(const std::string &topic) {
    auto d = detail::result<cursus_topic_description_t, cursus_topic_description_destroy>(cursus_admin_describe_topic,
                                                                                          h_.get(), topic.c_str());
    TopicDescription out;
    out.topic = detail::str(cursus_topic_description_topic(d.get()));
    cursus_topic_info_t *def = nullptr;
    detail::call(cursus_topic_description_definition, d.get(), &def);
    out.definition = detail::topic_info(def);
    for (size_t i = 0, n = cursus_topic_description_partition_count(d.get()); i < n; i++)
      out.partitions.push_back(PartitionDescription{
          static_cast<uint32_t>(cursus_topic_description_partition_id(d.get(), i)),
          detail::str(cursus_topic_description_partition_leader(d.get(), i)), detail::replicas(d.get(), i, false),
          detail::replicas(d.get(), i, true), static_cast<uint64_t>(cursus_topic_description_partition_earliest(d.get(), i)),
          static_cast<uint64_t>(cursus_topic_description_partition_leo(d.get(), i)),
          static_cast<uint64_t>(cursus_topic_description_partition_hwm(d.get(), i))});
    return out;
  }
  /// METADATA.
  TopicMetadata metadata(const std::string &topic) {
    auto m = detail::result<cursus_topic_metadata_t, cursus_topic_metadata_destroy>(cursus_admin_metadata, h_.get(),
                                                                                    topic.c_str());
    TopicMetadata out;
    cursus_topic_info_t *info = nullptr;
    detail::call(cursus_topic_metadata_info, m.get(), &info);
    out.topic = detail::topic_info(info);
    for (size_t i = 0, n = cursus_topic_metadata_leader_count(m.get()); i < n; i++) {
      out.leaders.push_back(detail::str(cursus_topic_metadata_leader(m.get(), i)));
      out.epochs.push_back(cursus_topic_metadata_leader_epoch(m.get(), i));
    }
    return out;
  }
  /// LIST_OFFSETS of one partition, or of all.
  std::vector<PartitionOffsets> list_offsets(const std::string &topic,
                                             std::optional<uint32_t> partition = std::nullopt) {
    auto l = detail::result<cursus_partition_offsets_list_t, cursus_partition_offsets_list_destroy>(
        cursus_admin_list_offsets, h_.get(), topic.c_str(), partition ? static_cast<int64_t>(*partition) : int64_t{-1});
    std::vector<PartitionOffsets> out;
    for (size_t i = 0, n = cursus_partition_offsets_list_count(l.get()); i < n; i++)
      out.push_back(PartitionOffsets{static_cast<uint32_t>(cursus_partition_offsets_list_partition(l.get(), i)),
                                     static_cast<uint64_t>(cursus_partition_offsets_list_earliest(l.get(), i)),
                                     static_cast<uint64_t>(cursus_partition_offsets_list_latest(l.get(), i)),
                                     static_cast<uint64_t>(cursus_partition_offsets_list_leo(l.get(), i)),
                                     static_cast<uint64_t>(cursus_partition_offsets_list_hwm(l.get(), i))});
    return out;
  }
  /// GROUP_STATUS.
  GroupStatus group_status(const std::string &group) {
    auto g = detail::result<cursus_group_status_t, cursus_group_status_destroy>(cursus_admin_group_status, h_.get(),
                                                                                group.c_str());
    GroupStatus out{detail::str(cursus_group_status_group(g.get())), detail::str(cursus_group_status_topic(g.get())),
                    detail::str(cursus_group_status_state(g.get())), cursus_group_status_generation(g.get()),
                    cursus_group_status_partition_count(g.get()), {}};
    for (size_t i = 0, n = cursus_group_status_member_count(g.get()); i < n; i++) {
      GroupMember m{detail::str(cursus_group_status_member_id(g.get(), i)),
                    detail::str(cursus_group_status_member_last_heartbeat(g.get(), i)), {}};
      for (size_t j = 0, k = cursus_group_status_member_assignment_count(g.get(), i); j < k; j++)
        m.assignments.push_back(static_cast<uint32_t>(cursus_group_status_member_assignment(g.get(), i, j)));
      out.members.push_back(std::move(m));
    }
    return out;
  }
  /// CLUSTER_STATUS (distributed mode; a standalone broker throws ValidationError
  /// with code "distribution_not_enabled").
  ClusterStatus cluster_status() {
    auto s = detail::result<cursus_cluster_status_t, cursus_cluster_status_destroy>(cursus_admin_cluster_status,
                                                                                    h_.get());
    ClusterStatus out{detail::opt_str(cursus_cluster_status_raft_leader(s.get())), {}, {},
                      cursus_cluster_status_leaderless(s.get()), cursus_cluster_status_under_replicated(s.get())};
    cursus_cluster_broker_list_t *b = nullptr;
    detail::call(cursus_cluster_status_brokers, s.get(), &b);
    detail::Handle<cursus_cluster_broker_list_t, cursus_cluster_broker_list_destroy> brokers(b);
    out.brokers = detail::cluster_brokers(brokers.get());
    for (size_t i = 0, n = cursus_cluster_status_partition_count(s.get()); i < n; i++)
      out.partitions.push_back(ClusterPartition{
          detail::str(cursus_cluster_status_partition_topic(s.get(), i)),
          static_cast<uint32_t>(cursus_cluster_status_partition_id(s.get(), i)),
          detail::opt_str(cursus_cluster_status_partition_leader(s.get(), i)),
          static_cast<uint64_t>(cursus_cluster_status_partition_leader_epoch(s.get(), i)),
          static_cast<uint64_t>(cursus_cluster_status_partition_hwm(s.get(), i)),
          detail::cluster_replicas(s.get(), i, false), detail::cluster_replicas(s.get(), i, true)});
    return out;
  }
  /// ELECT_LEADER: makes broker_id (an active in-sync replica) the leader of topic/partition;
  /// electing the current leader again changes nothing (changed is false).
  LeaderElection elect_leader(const std::string &topic, uint32_t partition, const std::string &broker_id) {
    auto e = detail::result<cursus_leader_election_t, cursus_leader_election_destroy>(
        cursus_admin_elect_leader, h_.get(), topic.c_str(), partition, broker_id.c_str());
    return LeaderElection{detail::str(cursus_leader_election_topic(e.get())),
                          cursus_leader_election_partition(e.get()),
                          detail::opt_str(cursus_leader_election_previous_leader(e.get())),
                          detail::str(cursus_leader_election_leader(e.get())),
                          cursus_leader_election_leader_epoch(e.get()), cursus_leader_election_changed(e.get())};
  }
  /// LIST_CLUSTER: the registered brokers (distributed mode).
  std::vector<ClusterBroker> list_cluster() {
    auto l = detail::result<cursus_cluster_broker_list_t, cursus_cluster_broker_list_destroy>(cursus_admin_list_cluster,
                                                                                              h_.get());
    return detail::cluster_brokers(l.get());
  }
  /// Topic names.
  std::vector<std::string> list_topics() { return names(cursus_admin_list_topics); }
  /// Group names.
  std::vector<std::string> list_groups() { return names(cursus_admin_list_groups); }
  /// The broker's HELP lines.
  std::vector<std::string> help() { return names(cursus_admin_help); }
  /// Closes the client (idempotent); later calls throw ClosedError.
  void close() { detail::call(cursus_admin_close, h_.get()); }

 private:
  template <typename F>
  std::vector<std::string> names(F f) {
    cursus_string_list_t *l = nullptr;
    detail::call(f, h_.get(), &l);
    return detail::strings(l);
  }
  detail::Handle<cursus_admin_t, cursus_admin_destroy> h_;
};

}  // namespace cursus

#endif  // CURSUS_ADMIN_HPP
