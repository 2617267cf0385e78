// C++ tests of transactions (Producer's transaction methods, cursus::Transaction)
// against a real broker ($CURSUS_TEST_BROKER). main() is in test_cursus.cpp.
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <type_traits>

using namespace std::chrono_literals;

namespace {

std::string broker() {
  const char *b = std::getenv("CURSUS_TEST_BROKER");
  return b ? b : "";
}

std::string unique(const std::string &prefix) {
  static int n = 0;
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

void create_topic(const std::string &topic, uint32_t partitions) {
  cursus::Admin admin(cursus::Config(cursus::Kind::Admin, {{"bootstrap_servers", broker()}}));
  admin.create_topic(topic, partitions);
}

cursus::Producer transactional(const std::string &id) {
  return cursus::Producer(
      cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", broker()}, {"transactional_id", id}}));
}

cursus::Config consumer_config(const std::string &group, const std::string &isolation = "read_committed") {
  return cursus::Config(cursus::Kind::Consumer, {{"bootstrap_servers", broker()},
                                                 {"group_id", group},
                                                 {"fetch_max_wait_ms", "50"},
                                                 {"isolation_level", isolation}});
}

/// The values of the first `n` records a fresh group reads from `topic` with
/// `isolation` (fewer when ~20 s pass). Records a read_committed reader must
/// skip come first in the log, so the first ones it reads are the visible ones.
std::vector<std::string> read_values(const std::string &topic, size_t n,
                                     const std::string &isolation = "read_committed") {
  cursus::Consumer c(consumer_config(unique("cpp-txn-reader"), isolation));
  c.subscribe({topic});
  std::vector<std::string> values;
  for (int polls = 0; values.size() < n && polls < 100; polls++)
    if (auto m = c.poll(200ms)) values.emplace_back(m->payload());
  return values;
}

using Values = std::vector<std::string>;

static_assert(!std::is_copy_constructible_v<cursus::Transaction>, "one scope owns a transaction");
static_assert(std::is_move_constructible_v<cursus::Transaction>, "movable");
static_assert(std::is_nothrow_destructible_v<cursus::Transaction>, "never throws from the destructor");

TEST(Transactions, CommitMakesRecordsVisibleToReadCommitted) {
  auto topic = unique("cpp-txn-commit");
  create_topic(topic, 1);
  auto p = transactional(unique("cpp-txn"));
  p.init_transactions();
  p.begin_transaction();
  EXPECT_EQ(p.send(topic, "t0").offset, 0);
  p.send(topic, "t1");
  // Open: read_uncommitted sees the records already.
  EXPECT_EQ(read_values(topic, 2, "read_uncommitted"), (Values{"t0", "t1"}));
  p.commit_transaction();
  EXPECT_EQ(read_values(topic, 2), (Values{"t0", "t1"}));
  // Explicit abort: never visible.
  p.begin_transaction();
  p.send(topic, "aborted");
  p.abort_transaction();
  {
    cursus::Transaction tx(p);
    p.send(topic, "t2");
    tx.commit();
    EXPECT_FALSE(tx.is_open());
  }
  EXPECT_EQ(read_values(topic, 3), (Values{"t0", "t1", "t2"}));
}

TEST(Transactions, GuardAbortsAtScopeExitUnlessCommitted) {
  auto topic = unique("cpp-txn-scope");
  create_topic(topic, 1);
  auto p = transactional(unique("cpp-txn"));
  p.init_transactions();
  {
    cursus::Transaction tx(p);
    EXPECT_TRUE(tx.is_open());
    p.send(topic, "left-early");
  }  // not committed: aborted
  {
    cursus::Transaction tx(p);
    p.send(topic, "aborted-explicitly");
    tx.abort();
    EXPECT_FALSE(tx.is_open());
  }  // nothing left to end
  {
    cursus::Transaction tx(p);
    cursus::Transaction moved(std::move(tx));
    EXPECT_FALSE(tx.is_open());
    EXPECT_THROW(tx.commit(), cursus::InvalidArgumentError);
    p.send(topic, "kept");
    moved.commit();
  }
  EXPECT_EQ(read_values(topic, 1), (Values{"kept"}));
}

TEST(Transactions, GuardAbortsWhenAnExceptionUnwinds) {
  auto topic = unique("cpp-txn-unwind");
  create_topic(topic, 1);
  auto p = transactional(unique("cpp-txn"));
  p.init_transactions();
  try {
    cursus::Transaction tx(p);
    p.send(topic, "half-done");
    throw std::runtime_error("processing failed");
  } catch (const std::runtime_error &) {
  }
  cursus::Transaction tx(p);  // the producer is ready for the next one
  p.send(topic, "done");
  tx.commit();
  EXPECT_EQ(read_values(topic, 1), (Values{"done"}));
  EXPECT_EQ(read_values(topic, 2, "read_uncommitted"), (Values{"half-done", "done"}));
}

TEST(Transactions, ConsumeProcessProduceCommitsTheOffsetsWithTheRecords) {
  auto in = unique("cpp-txn-in"), out = unique("cpp-txn-out"), group = unique("cpp-txn-group");
  create_topic(in, 1);
  create_topic(out, 1);
  {
    cursus::Producer plain(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", broker()}}));
    for (const char *v : {"a", "b", "c"}) plain.send(in, v, std::nullopt, 0);
  }
  cursus::Consumer consumer(consumer_config(group));
  consumer.subscribe({in});
  std::vector<std::string> taken;
  for (int polls = 0; taken.size() < 2 && polls < 100; polls++)
    if (auto m = consumer.poll(200ms)) taken.emplace_back(m->payload());
  ASSERT_EQ(taken, (Values{"a", "b"}));

  auto p = transactional(unique("cpp-txn"));
  p.init_transactions();
  {
    cursus::Transaction tx(p);
    for (const auto &v : taken) p.send(out, v + "!");
    tx.send_offsets(consumer);
    EXPECT_EQ(consumer.committed(in, 0), std::nullopt);  // staged, not committed
    tx.commit();
  }
  EXPECT_EQ(consumer.committed(in, 0), std::optional<uint64_t>(2));
  EXPECT_EQ(read_values(out, 2), (Values{"a!", "b!"}));

  // Explicit offsets; an aborted transaction leaves the group's offset alone.
  ASSERT_TRUE(consumer.poll(20s).has_value());
  p.begin_transaction();
  p.send_offsets_to_transaction({{cursus::TopicPartition{in, 0}, 3}}, consumer);
  p.abort_transaction();
  EXPECT_EQ(consumer.committed(in, 0), std::optional<uint64_t>(2));
  p.begin_transaction();
  p.send_offsets_to_transaction({{cursus::TopicPartition{in, 0}, 3}}, consumer);
  p.commit_transaction();
  EXPECT_EQ(consumer.committed(in, 0), std::optional<uint64_t>(3));
}

TEST(Transactions, AZombieIsFencedWithFencingError) {
  auto topic = unique("cpp-txn-zombie"), id = unique("cpp-txn");
  create_topic(topic, 1);
  auto old = transactional(id);
  old.init_transactions();
  {
    cursus::Transaction tx(old);
    old.send(topic, "old");
    auto fresh = transactional(id);
    fresh.init_transactions();  // fences `old`, aborts its transaction
    try {
      old.send(topic, "late");
      FAIL() << "expected FencingError";
    } catch (const cursus::FencingError &e) {
      EXPECT_EQ(e.code(), "producer_fenced");
      EXPECT_EQ(e.error_class(), "fencing");
    }
    EXPECT_THROW(tx.commit(), cursus::FencingError);
    EXPECT_TRUE(tx.is_open());
    {
      cursus::Transaction next(fresh);
      fresh.send(topic, "new");
      next.commit();
    }
  }  // the guard's abort fails (fenced) without throwing
  EXPECT_THROW(old.begin_transaction(), cursus::FencingError);
  EXPECT_EQ(read_values(topic, 1), (Values{"new"}));
}

TEST(Transactions, CallsInTheWrongStateThrowInvalidArgument) {
  auto p = transactional(unique("cpp-txn"));
  try {
    p.begin_transaction();
    FAIL() << "expected InvalidArgumentError";
  } catch (const cursus::InvalidArgumentError &e) {
    EXPECT_EQ(e.code(), "invalid_transaction_state");
    EXPECT_EQ(e.error_class(), "validation");
  }
  EXPECT_THROW(cursus::Transaction tx(p), cursus::InvalidArgumentError);
  p.init_transactions();
  EXPECT_THROW(p.commit_transaction(), cursus::InvalidArgumentError);
  cursus::Producer plain(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", broker()}}));
  EXPECT_THROW(plain.init_transactions(), cursus::InvalidArgumentError);
  EXPECT_THROW(cursus::Config(cursus::Kind::Consumer).set("isolation_level", "serializable"),
               cursus::InvalidArgumentError);
}

}  // namespace
