// C++ tests of consumer control (seek, position, pause/resume, committed for
// a list), the RebalanceListener, every record field, statistics, error
// handlers and the log handler, against a real broker ($CURSUS_TEST_BROKER).
// main() is in test_cursus.cpp.
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

using namespace std::chrono_literals;

namespace {

constexpr auto kHangGuard = 30s;  // only against a hang, never a timing check

std::string broker() {
  const char *b = std::getenv("CURSUS_TEST_BROKER");
  return b ? b : "";
}

std::string unique(const std::string &prefix) {
  static int n = 0;
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

cursus::Config config(cursus::Kind kind) { return cursus::Config(kind, {{"bootstrap_servers", broker()}}); }

cursus::Config consumer_config(const std::string &group, bool auto_commit = true) {
  return cursus::Config(cursus::Kind::Consumer, {{"bootstrap_servers", broker()},
                                                 {"group_id", group},
                                                 {"fetch_max_wait_ms", "50"},
                                                 {"auto_offset_reset", "earliest"},
                                                 {"enable_auto_commit", auto_commit ? "true" : "false"}});
}

void create_topic(const std::string &topic, uint32_t partitions) {
  cursus::Admin admin(config(cursus::Kind::Admin));
  admin.create_topic(topic, partitions);
}

void produce_values(const std::string &topic, int n) {
  cursus::Producer p(config(cursus::Kind::Producer));
  for (int i = 0; i < n; i++) p.send(topic, "v" + std::to_string(i), std::nullopt, 0);
}

/// Polls one message at a time until `n` arrived (or ~20 s passed).
std::vector<int64_t> take(cursus::Consumer &c, size_t n) {
  std::vector<int64_t> offsets;
  for (int polls = 0; offsets.size() < n && polls < 100; polls++)
    if (auto m = c.poll(200ms)) offsets.push_back(m->offset());
  return offsets;
}

/// Things listeners record, and a wait for how many (with a hang guard).
template <typename T>
class Seen {
 public:
  void add(T v) {
    std::lock_guard<std::mutex> g(m_);
    items_.push_back(std::move(v));
    cv_.notify_all();
  }
  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> g(m_);
    return cv_.wait_for(g, kHangGuard, [&] { return items_.size() >= n; });
  }
  std::vector<T> items() {
    std::lock_guard<std::mutex> g(m_);
    return items_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<T> items_;
};

std::string names(const cursus::Partitions &parts) {
  std::string out;
  for (const auto &tp : parts) out += (out.empty() ? "" : ",") + tp.topic + ":" + std::to_string(tp.partition);
  return out;
}

}  // namespace

TEST(Records, EveryFieldAndTheProducersTimestamp) {
  auto topic = unique("cpp-fields");
  create_topic(topic, 1);
  cursus::Producer p(config(cursus::Kind::Producer));
  auto md = p.send(topic, "stamped", std::string_view("k"), 0, int64_t{1234567});
  EXPECT_EQ(md.timestamp, 1234567);
  p.send(topic, "nokey", std::nullopt, 0);
  {
    cursus::Consumer c(consumer_config(unique("cpp-fields-group")));
    c.subscribe({topic});
    auto first = c.poll(kHangGuard);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->timestamp(), 1234567);
    EXPECT_TRUE(first->has_key());
    EXPECT_EQ(first->key(), "k");
    EXPECT_FALSE(first->metadata());
    EXPECT_FALSE(first->event());
    auto second = c.poll(kHangGuard);
    ASSERT_TRUE(second);
    EXPECT_FALSE(second->has_key());
    EXPECT_EQ(second->payload(), "nokey");
  }
  {  // The same through the packed record view.
    cursus::Consumer c(consumer_config(unique("cpp-fields-batch")));
    c.subscribe({topic});
    std::vector<cursus::Record> got;
    for (int polls = 0; got.size() < 2 && polls < 100; polls++)
      for (auto &r : c.poll_batch(200ms, uint32_t(2 - got.size()))) got.push_back(std::move(r));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].timestamp, 1234567);
    EXPECT_EQ(got[0].key, std::optional<std::string>("k"));
    EXPECT_EQ(got[0].value, "stamped");
    EXPECT_FALSE(got[0].metadata);
    EXPECT_FALSE(got[0].event);
    EXPECT_FALSE(got[1].key);
    EXPECT_EQ(got[1].value, "nokey");
  }

  // An event's fields reach a plain consumer, one at a time and in a batch.
  auto es = unique("cpp-fields-es");
  cursus::Admin admin(config(cursus::Kind::Admin));
  admin.create_topic(es, {{"partitions", "1"}, {"event_sourcing", "true"}});
  cursus::EventStore store(config(cursus::Kind::Admin));
  store.append(es, "agg", 0, cursus::Event{"Created", "p", "{\"by\":\"a\"}", 2}.with_event_id("ev-1"));
  cursus::Consumer c(consumer_config(unique("cpp-fields-es-group")));
  c.subscribe({es});
  auto m = c.poll(kHangGuard);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->metadata(), std::optional<std::string_view>("{\"by\":\"a\"}"));
  auto e = m->event();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, "Created");
  EXPECT_EQ(e->schema_version, 2u);
  EXPECT_EQ(e->aggregate_version, 1);
  EXPECT_EQ(e->id, std::optional<std::string>("ev-1"));
  cursus::Consumer b(consumer_config(unique("cpp-fields-es-batch")));
  b.subscribe({es});
  std::vector<cursus::Record> got;
  for (int polls = 0; got.empty() && polls < 100; polls++) got = b.poll_batch(200ms, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].metadata, std::optional<std::string>("{\"by\":\"a\"}"));
  ASSERT_TRUE(got[0].event);
  EXPECT_EQ(got[0].event->type, "Created");
  EXPECT_EQ(got[0].event->schema_version, 2u);
  EXPECT_EQ(got[0].event->aggregate_version, 1);
  EXPECT_EQ(got[0].event->id, std::optional<std::string>("ev-1"));
}

TEST(ConsumerControl, SeekPositionPauseResumeAndCommitted) {
  auto topic = unique("cpp-seek");
  create_topic(topic, 2);
  produce_values(topic, 5);
  cursus::Consumer c(consumer_config(unique("cpp-seek-group"), false));
  cursus::TopicPartition p0{topic, 0}, p1{topic, 1};
  EXPECT_THROW(c.seek(p0, 0), cursus::InvalidArgumentError);  // not assigned yet
  c.subscribe({topic});
  EXPECT_EQ(take(c, 3), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(c.position(p0), 3u);
  c.seek(p0, 1);
  EXPECT_EQ(c.position(p0), 1u);
  EXPECT_EQ(take(c, 2), (std::vector<int64_t>{1, 2}));
  c.pause({p0});
  EXPECT_EQ(names(c.paused()), topic + ":0");
  EXPECT_FALSE(c.poll(300ms));
  c.resume({p0});
  EXPECT_TRUE(c.paused().empty());
  EXPECT_EQ(take(c, 2), (std::vector<int64_t>{3, 4}));
  c.commit();
  auto committed = c.committed(cursus::Partitions{p0, p1});
  ASSERT_EQ(committed.size(), 2u);
  EXPECT_EQ(committed[0].first.partition, 0u);
  EXPECT_EQ(committed[0].second, std::optional<uint64_t>(5));
  EXPECT_EQ(committed[1].first.partition, 1u);
  EXPECT_FALSE(committed[1].second);
}

TEST(ConsumerControl, RebalanceListenerSeeksOnAssignedAndCommitsOnRevokedAtClose) {
  auto topic = unique("cpp-rebalance");
  auto group = unique("cpp-rebalance-group");
  create_topic(topic, 1);
  produce_values(topic, 6);
  Seen<std::string> events;
  std::atomic<bool> poll_threw{false}, commit_ok{false};
  {
    cursus::Consumer c(consumer_config(group, false));
    cursus::RebalanceListener l;
    l.on_assigned = [&](const cursus::Partitions &parts) {
      for (const auto &tp : parts) c.seek(tp, 3);
      try {
        c.poll(0ms);
      } catch (const cursus::Error &) {
        poll_threw = true;
      }
      events.add("assigned " + names(parts));
      throw std::runtime_error("a listener's exception is caught and logged");
    };
    l.on_revoked = [&](const cursus::Partitions &parts) {
      c.commit();
      commit_ok = true;
      events.add("revoked " + names(parts));
    };
    c.set_rebalance_listener(std::move(l));
    c.subscribe({topic});
    EXPECT_EQ(take(c, 3), (std::vector<int64_t>{3, 4, 5}));
    EXPECT_TRUE(poll_threw);
    c.close();
  }
  ASSERT_TRUE(events.wait_for(2));
  EXPECT_EQ(events.items(), (std::vector<std::string>{"assigned " + topic + ":0", "revoked " + topic + ":0"}));
  EXPECT_TRUE(commit_ok);
  cursus::Consumer after(consumer_config(group));
  EXPECT_EQ(after.committed(topic, 0), std::optional<uint64_t>(6));
}

TEST(ConsumerControl, ListenersMayBeReplacedClearedAndMoved) {
  // Replacing and clearing listeners keeps the consumer working; the
  // replaced one stays alive (the library may be calling it) until the end.
  auto topic = unique("cpp-replace");
  create_topic(topic, 1);
  produce_values(topic, 2);
  Seen<std::string> events;
  cursus::Consumer c(consumer_config(unique("cpp-replace-group")));
  cursus::RebalanceListener first;
  first.on_assigned = [&](const cursus::Partitions &) { events.add("first"); };
  c.set_rebalance_listener(first);
  cursus::RebalanceListener second;
  second.on_assigned = [&](const cursus::Partitions &) { events.add("second"); };
  c.set_rebalance_listener(second);
  c.subscribe({topic});
  EXPECT_EQ(take(c, 2).size(), 2u);
  ASSERT_TRUE(events.wait_for(1));
  EXPECT_EQ(events.items()[0], "second");
  c.clear_rebalance_listener();
  cursus::Consumer moved = std::move(c);  // listeners move with the consumer
  moved.close();
}

TEST(Observability, StatisticsSnapshotPeriodicHandlerAndErrorHandler) {
  auto topic = unique("cpp-stats");
  create_topic(topic, 1);
  cursus::Producer p(cursus::Config(cursus::Kind::Producer,
                                    {{"bootstrap_servers", broker()}, {"client_id", "cpp-stats-producer"}}));
  Seen<int> errors;
  p.set_error_handler([&](const cursus::Error &) { errors.add(1); });
  for (int i = 0; i < 3; i++) p.send(topic, "abc", std::nullopt, 0);
  auto s = p.statistics();
  EXPECT_EQ(s.kind, "producer");
  EXPECT_EQ(s.client_id, "cpp-stats-producer");
  EXPECT_EQ(s.records_sent, 3u);
  EXPECT_GE(s.bytes_sent, 9u);
  EXPECT_GE(s.produce_latency.count, 1u);
  EXPECT_TRUE(s.errors.empty());
  EXPECT_NE(s.json.find("records_sent"), std::string::npos);
  Seen<cursus::Statistics> ticks;
  p.set_statistics_handler(20ms, [&](const cursus::Statistics &st) {
    ticks.add(st);
    throw std::runtime_error("a handler's exception is caught and logged");
  });
  ASSERT_TRUE(ticks.wait_for(2));  // it survived its exception
  EXPECT_EQ(ticks.items()[0].records_sent, 3u);
  p.set_statistics_handler(0ms, nullptr);
  // The library's rule: a handler never called (the option left at 0) is refused.
  EXPECT_THROW(p.set_statistics_handler(0ms, [](const cursus::Statistics &) {}), cursus::InvalidArgumentError);
  EXPECT_TRUE(errors.items().empty());

  cursus::Consumer c(consumer_config(unique("cpp-stats-group")));
  c.set_error_handler([&](const cursus::Error &) { errors.add(1); });
  c.subscribe({topic});
  EXPECT_EQ(take(c, 2).size(), 2u);
  auto cs = c.statistics();
  EXPECT_EQ(cs.kind, "consumer");
  EXPECT_GE(cs.records_received, 2u);
  ASSERT_EQ(cs.partitions.size(), 1u);
  EXPECT_EQ(cs.partitions[0].topic, topic);
  EXPECT_EQ(cs.partitions[0].position, 2);
  EXPECT_EQ(cs.partitions[0].end_offset, 3);
  EXPECT_EQ(cs.partitions[0].lag, 1);
  Seen<std::string> cticks;
  c.set_statistics_handler(10ms, [&](const cursus::Statistics &st) { cticks.add(st.kind); });
  ASSERT_TRUE(cticks.wait_for(1));
  EXPECT_EQ(cticks.items()[0], "consumer");
}

TEST(Observability, LogHandlerGetsEngineRecordsAtItsLevel) {
  auto topic = unique("cpp-log");
  create_topic(topic, 1);
  Seen<std::string> joined;
  std::atomic<int> below_info{0};
  cursus::set_log_handler(cursus::LogLevel::info, [&](const cursus::LogRecord &r) {
    if (r.level > cursus::LogLevel::info) below_info++;
    if (r.message.substr(0, 12) == "joined group" && r.target.substr(0, 6) == "cursus")
      joined.add(std::string(r.target));
  });
  {
    cursus::Consumer c(consumer_config(unique("cpp-log-group")));
    c.subscribe({topic});
    c.poll(300ms);  // joins the group
    EXPECT_TRUE(joined.wait_for(1));
  }
  EXPECT_EQ(below_info.load(), 0);
  cursus::set_log_handler(cursus::LogLevel::off, nullptr);
}
