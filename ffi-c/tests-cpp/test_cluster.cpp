// C++ tests of cluster administration (Admin::cluster_status, elect_leader,
// list_cluster, reassign_partition) against the standalone broker ($CURSUS_TEST_BROKER), which
// refuses them. main() is in test_cursus.cpp.
#include "cursus.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <type_traits>

namespace {

cursus::Config admin_config() {
  const char *b = std::getenv("CURSUS_TEST_BROKER");
  return cursus::Config(cursus::Kind::Admin, {{"bootstrap_servers", b ? b : ""}});
}

// Runs `call`, which must throw ValidationError distribution_not_enabled.
void expect_not_enabled(const std::function<void()> &call) {
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const cursus::ValidationError &e) {
    EXPECT_EQ(e.code(), "distribution_not_enabled");
    EXPECT_EQ(e.error_class(), "validation");
  }
}

TEST(Cluster, StandaloneBrokerRefusesClusterAdmin) {
  cursus::Admin admin(admin_config());
  expect_not_enabled([&] { admin.cluster_status(); });
  expect_not_enabled([&] { admin.elect_leader("orders", 0, "broker-1"); });
  expect_not_enabled([&] { admin.list_cluster(); });
  expect_not_enabled([&] { admin.reassign_partition("orders", 0, {"broker-1"}); });
  admin.close();
  EXPECT_THROW(admin.cluster_status(), cursus::ClosedError);
}

TEST(Cluster, ResultTypesHaveTheDocumentedShape) {
  static_assert(std::is_same_v<decltype(cursus::ClusterStatus::raft_leader), std::optional<std::string>>);
  static_assert(std::is_same_v<decltype(cursus::ClusterPartition::leader), std::optional<std::string>>);
  static_assert(std::is_same_v<decltype(cursus::ClusterBroker::lifecycle_protocol), std::optional<uint32_t>>);
  static_assert(std::is_same_v<decltype(cursus::LeaderElection::previous_leader), std::optional<std::string>>);
  static_assert(std::is_same_v<decltype(cursus::PartitionReassignment::leader), std::optional<std::string>>);
  static_assert(std::is_same_v<decltype(cursus::PartitionReassignment::target), std::vector<std::string>>);
  static_assert(std::is_same_v<decltype(std::declval<cursus::Admin &>().list_cluster()),
                               std::vector<cursus::ClusterBroker>>);
  cursus::ClusterStatus s{};
  EXPECT_FALSE(s.raft_leader.has_value());
  EXPECT_TRUE(s.brokers.empty() && s.partitions.empty());
}

}  // namespace
