// cursus/admin.hpp: Admin: topic, group and cluster administration (part of cursus.hpp; include that).
#ifndef CURSUS_ADMIN_HPP
#define CURSUS_ADMIN_HPP

#include "types.hpp"

namespace cursus {

// ClusterStatus, ClusterPartition, ClusterBroker, LeaderElection and
// PartitionReassignment are
// generated: cursus/results.hpp.

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
    return detail::read_delete_outcome(o.get());
  }
  /// Drops every record if the revision is expected_revision (else ConflictError).
  TruncateResult truncate_topic(const std::string &topic, uint64_t expected_revision) {
    auto o = detail::result<cursus_truncate_outcome_t, cursus_truncate_outcome_destroy>(
        cursus_admin_truncate_topic, h_.get(), topic.c_str(), expected_revision);
    return detail::read_truncate_outcome(o.get());
  }
  /// DESCRIBE.
  TopicDescription describe_topic(const std::string &topic) {
    auto d = detail::result<cursus_topic_description_t, cursus_topic_description_destroy>(cursus_admin_describe_topic,
                                                                                          h_.get(), topic.c_str());
    return detail::read_topic_description(d.get());
  }
  /// METADATA.
  TopicMetadata metadata(const std::string &topic) {
    auto m = detail::result<cursus_topic_metadata_t, cursus_topic_metadata_destroy>(cursus_admin_metadata, h_.get(),
                                                                                    topic.c_str());
    return detail::read_topic_metadata(m.get());
  }
  /// LIST_OFFSETS of one partition, or of all.
  std::vector<PartitionOffsets> list_offsets(const std::string &topic,
                                             std::optional<uint32_t> partition = std::nullopt) {
    auto l = detail::result<cursus_partition_offsets_list_t, cursus_partition_offsets_list_destroy>(
        cursus_admin_list_offsets, h_.get(), topic.c_str(), partition ? static_cast<int64_t>(*partition) : int64_t{-1});
    return detail::read_partition_offsets_list(l.get());
  }
  /// GROUP_STATUS.
  GroupStatus group_status(const std::string &group) {
    auto g = detail::result<cursus_group_status_t, cursus_group_status_destroy>(cursus_admin_group_status, h_.get(),
                                                                                group.c_str());
    return detail::read_group_status(g.get());
  }
  /// CLUSTER_STATUS (distributed mode; a standalone broker throws ValidationError
  /// with code "distribution_not_enabled").
  ClusterStatus cluster_status() {
    auto s = detail::result<cursus_cluster_status_t, cursus_cluster_status_destroy>(cursus_admin_cluster_status,
                                                                                    h_.get());
    return detail::read_cluster_status(s.get());
  }
  /// ELECT_LEADER: makes broker_id (an active in-sync replica) the leader of topic/partition;
  /// electing the current leader again changes nothing (changed is false).
  LeaderElection elect_leader(const std::string &topic, uint32_t partition, const std::string &broker_id) {
    auto e = detail::result<cursus_leader_election_t, cursus_leader_election_destroy>(
        cursus_admin_elect_leader, h_.get(), topic.c_str(), partition, broker_id.c_str());
    return detail::read_leader_election(e.get());
  }
  /// REASSIGN_PARTITIONS (a project extension): moves the replicas of
  /// topic/partition to the brokers `replicas` (broker ids, preferred leader
  /// first, as many as the topic's replication factor) and returns once the
  /// move is done: the new replicas in sync, the others dropped, the leader
  /// one of `replicas`; no acknowledged record is lost. After the client's
  /// request_timeout_ms it throws the retryable TimeoutError with code
  /// "reassignment_timeout" while the move goes on (call again with the same
  /// replicas to keep waiting). Errors: topic_not_found, partition_not_found,
  /// broker_not_found, replica_broker_inactive, invalid_replicas,
  /// invalid_replication_factor, reassignment_in_progress,
  /// distribution_not_enabled (standalone).
  PartitionReassignment reassign_partition(const std::string &topic, uint32_t partition,
                                           const std::vector<std::string> &replicas) {
    std::vector<const char *> ids;
    for (const auto &r : replicas) ids.push_back(r.c_str());
    auto r = detail::result<cursus_partition_reassignment_t, cursus_partition_reassignment_destroy>(
        cursus_admin_reassign_partition, h_.get(), topic.c_str(), partition, ids.data(), ids.size());
    return detail::read_partition_reassignment(r.get());
  }
  /// LIST_CLUSTER: the registered brokers (distributed mode).
  std::vector<ClusterBroker> list_cluster() {
    auto l = detail::result<cursus_cluster_broker_list_t, cursus_cluster_broker_list_destroy>(cursus_admin_list_cluster,
                                                                                              h_.get());
    return detail::read_cluster_broker_list(l.get());
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
