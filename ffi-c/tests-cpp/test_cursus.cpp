// C++ tests of include/cursus.hpp against a real broker ($CURSUS_TEST_BROKER).
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>

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

cursus::Config consumer_config(const std::string &group) {
  return cursus::Config(cursus::Kind::Consumer,
                        {{"bootstrap_servers", broker()}, {"group_id", group}, {"fetch_max_wait_ms", "50"}});
}

void create_topic(const std::string &topic, uint32_t partitions) {
  cursus::Admin admin(config(cursus::Kind::Admin));
  admin.create_topic(topic, partitions);
}

/// Polls one message at a time until `n` arrived (or ~20 s passed).
std::vector<int64_t> take(cursus::Consumer &c, size_t n) {
  std::vector<int64_t> offsets;
  for (int polls = 0; offsets.size() < n && polls < 100; polls++)
    if (auto m = c.poll(200ms)) offsets.push_back(m->offset());
  return offsets;
}

/// A flag one thread raises and another waits for (with a hang guard).
class Flag {
 public:
  void raise() {
    std::lock_guard<std::mutex> g(m_);
    up_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock<std::mutex> g(m_);
    return cv_.wait_for(g, kHangGuard, [this] { return up_; });
  }
  bool is_up() {
    std::lock_guard<std::mutex> g(m_);
    return up_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool up_ = false;
};

/// The result of `f`, which runs on its own thread; a hang (past the guard)
/// ends the program, since a blocked thread cannot be stopped.
template <typename T>
T await(std::future<T> &f) {
  if (f.wait_for(kHangGuard) != std::future_status::ready) {
    std::fprintf(stderr, "a blocked call did not return (hang guard)\n");
    std::_Exit(1);
  }
  return f.get();
}

static_assert(!std::is_copy_constructible_v<cursus::Producer>, "move-only");
static_assert(std::is_move_constructible_v<cursus::Producer>, "movable");
static_assert(!std::is_copy_constructible_v<cursus::Consumer>, "move-only");
static_assert(!std::is_copy_constructible_v<cursus::Message>, "move-only");
static_assert(std::is_base_of_v<cursus::Error, cursus::FencingError>, "hierarchy");
static_assert(cursus::default_timeout.count() == CURSUS_DEFAULT_TIMEOUT, "the library's marker, not a number of C++'s own");

TEST(Config, ErrorsNameTheKindAndItsOptions) {
  cursus::Config c(cursus::Kind::Producer);
  try {
    c.set("group_id", "g");
    FAIL() << "expected an exception";
  } catch (const cursus::InvalidArgumentError &e) {
    EXPECT_EQ(e.error_class(), "validation");
    EXPECT_EQ(e.code(), "invalid_argument");
    EXPECT_FALSE(e.retryable());
    std::string what = e.what();
    EXPECT_EQ(what.rfind("invalid_argument (validation): unknown producer option \"group_id\"; known options: ", 0), 0u)
        << what;
    EXPECT_NE(what.find("linger_ms"), std::string::npos);
    EXPECT_EQ(what.find("group_id,"), std::string::npos);
  }
  // An unknown name: the text lists the producer's options, and only those.
  try {
    c.set("no_such_option", "1");
    FAIL() << "expected an exception";
  } catch (const cursus::InvalidArgumentError &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("unknown producer option \"no_such_option\"; known options: "), std::string::npos) << what;
    EXPECT_NE(what.find("linger_ms"), std::string::npos) << what;
    EXPECT_EQ(what.find("group_id"), std::string::npos) << what;
  }
  EXPECT_THROW(cursus::Config(cursus::Kind::Consumer).set("linger_ms", "1"), cursus::InvalidArgumentError);
  EXPECT_NO_THROW(cursus::Config(cursus::Kind::Any).set("linger_ms", "1").set("group_id", "g"));
  EXPECT_THROW(c.set("acks", "seven"), cursus::ValidationError);
  EXPECT_NO_THROW(c.set("acks", "all").set("linger_ms", "1"));
}

TEST(Version, MatchesTheHeader) {
  EXPECT_EQ(cursus::version(), CURSUS_VERSION_STRING);
  EXPECT_EQ(cursus::version(), std::to_string(CURSUS_VERSION_MAJOR) + "." + std::to_string(CURSUS_VERSION_MINOR) +
                                   "." + std::to_string(CURSUS_VERSION_PATCH));
}

TEST(Admin, ErrorsReadTheSameAsInEveryLanguage) {
  cursus::Admin admin(config(cursus::Kind::Admin));
  std::string topic = unique("cpp-admin");
  try {
    admin.describe_topic(topic);
    FAIL() << "expected an exception";
  } catch (const cursus::NotFoundError &e) {
    EXPECT_EQ(std::string(e.what()), "topic_not_found (not_found): topic=" + topic);
    EXPECT_EQ(e.code(), "topic_not_found");
    EXPECT_EQ(e.kind(), "broker");
    EXPECT_EQ(e.fields().at("topic"), topic);
  }
  EXPECT_FALSE(admin.delete_topic(topic, true).deleted);
}

TEST(Admin, TypedResults) {
  cursus::Admin admin(config(cursus::Kind::Admin));
  std::string topic = unique("cpp-typed");
  cursus::TopicInfo info = admin.create_topic(topic, {{"partitions", "3"}, {"read_acl", "alice,bob"}});
  EXPECT_EQ(info.name, topic);
  EXPECT_EQ(info.partitions, 3u);
  EXPECT_EQ(info.read_acl, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_FALSE(info.min_in_sync_replicas.has_value());
  EXPECT_EQ(admin.alter_topic_config(topic, 1).min_in_sync_replicas, std::optional<uint32_t>(1));
  cursus::TopicDescription d = admin.describe_topic(topic);
  EXPECT_EQ(d.topic, topic);
  EXPECT_EQ(d.definition.partitions, 3u);
  ASSERT_EQ(d.partitions.size(), 3u);
  EXPECT_EQ(d.partitions[0].leader, broker());
  EXPECT_EQ(d.partitions[0].replicas.size(), 1u);
  cursus::TopicMetadata m = admin.metadata(topic);
  EXPECT_EQ(m.topic.partitions, 3u);
  EXPECT_EQ(m.leaders, std::vector<std::string>(3, broker()));
  EXPECT_EQ(admin.list_offsets(topic).size(), 3u);
  EXPECT_EQ(admin.list_offsets(topic, 1).at(0).partition, 1u);
  auto topics = admin.list_topics();
  EXPECT_NE(std::find(topics.begin(), topics.end(), topic), topics.end());
  EXPECT_THROW(admin.truncate_topic(topic, m.topic.revision + 100), cursus::ConflictError);
  EXPECT_EQ(admin.truncate_topic(topic, m.topic.revision).revision, m.topic.revision + 1);
  EXPECT_TRUE(admin.delete_topic(topic).deleted);
  admin.close();
  EXPECT_THROW(admin.list_topics(), cursus::ClosedError);
}

TEST(RoundTrip, ProduceConsumeCommitAndGroupStatus) {
  std::string topic = unique("cpp-roundtrip"), group = unique("cpp-group");
  create_topic(topic, 1);
  cursus::Producer producer(config(cursus::Kind::Producer));
  auto md = producer.send(topic, std::string_view("a\0b", 3), std::string_view("k"), 0, 1700000000000);
  EXPECT_EQ(md.offset, 0);
  EXPECT_EQ(md.timestamp, 1700000000000);
  std::vector<std::future<cursus::RecordMetadata>> futures;
  for (int i = 0; i < 9; i++) futures.push_back(producer.send_async(topic, "v" + std::to_string(i)));
  producer.flush();
  for (auto &f : futures) EXPECT_GT(f.get().offset, 0);

  cursus::Consumer consumer(consumer_config(group));
  consumer.subscribe({topic});
  EXPECT_EQ(consumer.member_id(), "");  // joins on the first poll
  auto first = consumer.poll(10s);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->payload(), std::string_view("a\0b", 3));
  EXPECT_EQ(first->key(), "k");
  EXPECT_EQ(take(consumer, 4).size(), 4u);
  consumer.commit_async().get();
  EXPECT_EQ(consumer.committed(topic, 0), std::optional<uint64_t>(5));
  auto rest = consumer.poll_batch(10s, 100);
  while (rest.size() < 5) {
    auto more = consumer.poll_batch(1s, 100);
    ASSERT_FALSE(more.empty());
    rest.insert(rest.end(), more.begin(), more.end());
  }
  EXPECT_EQ(rest[0].offset, 5u);
  EXPECT_EQ(rest[0].value, "v4");
  EXPECT_EQ(rest[0].topic, topic);
  consumer.commit();
  EXPECT_EQ(consumer.committed(topic, 0), std::optional<uint64_t>(10));
  consumer.commit_offsets({{cursus::TopicPartition{topic, 0}, 10}});
  EXPECT_EQ(consumer.assignment(), (std::vector<cursus::TopicPartition>{{topic, 0}}));

  cursus::Admin admin(config(cursus::Kind::Admin));
  cursus::GroupStatus status = admin.group_status(group);
  EXPECT_EQ(status.group, group);
  ASSERT_EQ(status.members.size(), 1u);
  EXPECT_EQ(status.members[0].assignments, std::vector<uint32_t>{0});
  EXPECT_EQ(consumer.member_id(), status.members[0].member_id);
  consumer.close();
  EXPECT_THROW(consumer.member_id(), cursus::ClosedError);
  EXPECT_THROW(consumer.poll(0ms), cursus::ClosedError);
  producer.close();
  EXPECT_THROW(producer.send(topic, "late"), cursus::ClosedError);
}

TEST(Producer, SendToMissingTopicThrowsNotFound) {
  cursus::Producer producer(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", broker()}, {"retries", "0"}}));
  std::string topic = unique("cpp-missing");
  try {
    producer.send(topic, "x");
    FAIL() << "expected an exception";
  } catch (const cursus::NotFoundError &e) {
    EXPECT_EQ(std::string(e.what()), "topic_not_found (not_found): topic=" + topic);
  }
  // Queueing needs the topic's metadata: the error comes before any future.
  EXPECT_THROW(producer.send_async(unique("cpp-missing"), "x"), cursus::NotFoundError);
}

TEST(Callbacks, MaySendAndFlushTheirOwnProducer) {
  std::string topic = unique("cpp-reentry");
  create_topic(topic, 1);
  cursus::Producer producer(config(cursus::Kind::Producer));
  Flag done;
  int64_t inner = -1;
  bool flushed = false;
  producer.send(topic, "outer", [&](const cursus::DeliveryReport &r) {
    if (!r.error) {
      inner = producer.send(topic, "inner").offset;
      producer.flush(10s);
      flushed = true;
    }
    done.raise();
  });
  ASSERT_TRUE(done.wait());
  EXPECT_EQ(inner, 1);
  EXPECT_TRUE(flushed);
}

TEST(Callbacks, ABlockedCallbackDoesNotStallAnotherProducer) {
  std::string topic = unique("cpp-slow-cb");
  create_topic(topic, 1);
  cursus::Producer slow(config(cursus::Kind::Producer)), fast(config(cursus::Kind::Producer));
  Flag entered, other_ran, released;
  slow.send(topic, "a", [&](const cursus::DeliveryReport &) {
    entered.raise();
    released.wait();
  });
  ASSERT_TRUE(entered.wait());
  fast.send(topic, "b", [&](const cursus::DeliveryReport &) { other_ran.raise(); });
  // Runs while the first producer's callback is still blocked.
  EXPECT_TRUE(other_ran.wait());
  EXPECT_FALSE(released.is_up());
  released.raise();
}

// One poll that returned no message: whether it waited its whole timeout
// (a lower bound on a wait, not a timing assertion).
static bool poll_reaches_deadline(cursus::Consumer &c, std::chrono::milliseconds timeout) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(c.poll(timeout).has_value());
  return std::chrono::steady_clock::now() - start >= timeout;
}

TEST(Consumer, PollReturnsOnlyWithMessagesAtItsDeadlineOrWhenWoken) {
  std::string topic = unique("cpp-no-empty"), group = unique("cpp-no-empty-group");
  create_topic(topic, 2);
  auto cfg = consumer_config(group);
  cfg.set("heartbeat_interval_ms", "500");
  cursus::Consumer c1(cfg);
  c1.subscribe({topic});
  EXPECT_TRUE(poll_reaches_deadline(c1, 200ms));  // joins; nothing to read
  // A wakeup ends one poll, and only one.
  c1.wakeup();
  EXPECT_FALSE(poll_reaches_deadline(c1, kHangGuard));
  EXPECT_TRUE(poll_reaches_deadline(c1, 300ms));
  // A second member joins: c1's heartbeat notices the rebalance while c1
  // polls; the poll rejoins and waits on to its deadline.
  cursus::Consumer c2(cfg);
  c2.subscribe({topic});
  c2.poll(0ms);
  EXPECT_TRUE(poll_reaches_deadline(c1, 2000ms)) << "a poll across a rebalance returned empty early";
  EXPECT_EQ(c1.assignment().size(), 1u);
}

TEST(Timeouts, DefaultIsTheLibraryMarker) {
  // flush and close pass the marker: the library applies its 30 s.
  cursus::Producer producer(config(cursus::Kind::Producer));
  producer.flush();
  producer.close(cursus::default_timeout);
  // poll has no default: the library refuses the marker.
  cursus::Consumer consumer(consumer_config(unique("cpp-default-timeout")));
  EXPECT_THROW(consumer.poll(cursus::default_timeout), cursus::InvalidArgumentError);
}

TEST(Consumer, CloseAndWakeupInterruptABlockedPoll) {
  std::string topic = unique("cpp-idle");
  create_topic(topic, 1);
  cursus::Consumer consumer(consumer_config(unique("cpp-idle-group")));
  consumer.subscribe({topic});
  // wakeup: the blocked (or else the next) poll returns at once, empty.
  auto woken = std::async(std::launch::async, [&] { return consumer.poll(cursus::no_timeout).has_value(); });
  std::this_thread::sleep_for(200ms);  // lets the poll block; nothing to await, and correct either way
  consumer.wakeup();
  EXPECT_FALSE(await(woken));
  // close from this thread: the blocked poll throws ClosedError at once.
  auto blocked = std::async(std::launch::async, [&] {
    try {
      consumer.poll(cursus::no_timeout);
      return std::string("returned");
    } catch (const cursus::ClosedError &e) {
      return std::string(e.what());
    } catch (const std::exception &e) {
      return std::string("other error: ") + e.what();
    }
  });
  std::this_thread::sleep_for(200ms);  // as above
  consumer.close();
  EXPECT_EQ(await(blocked).rfind("closed (validation)", 0), 0u);
}

TEST(Consumer, CloseCommitsOnlyTheMessagesTaken) {
  std::string topic = unique("cpp-taken"), group = unique("cpp-taken-group");
  create_topic(topic, 1);
  {
    cursus::Producer producer(config(cursus::Kind::Producer));
    for (int i = 0; i < 10; i++) producer.send_async(topic, "v" + std::to_string(i));
    producer.flush();
  }
  auto options = consumer_config(group);
  options.set("enable_auto_commit", "true").set("max_poll_records", "10");
  cursus::Consumer first(options);
  first.subscribe({topic});
  EXPECT_EQ(take(first, 3), (std::vector<int64_t>{0, 1, 2}));
  first.close();
  cursus::Consumer second(options);
  second.subscribe({topic});
  EXPECT_EQ(take(second, 7), (std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9}));
  second.close();
}

TEST(Consumer, DestructorClosesAndCommitsWhatWasTaken) {
  std::string topic = unique("cpp-raii"), group = unique("cpp-raii-group");
  create_topic(topic, 1);
  {
    cursus::Producer producer(config(cursus::Kind::Producer));
    for (int i = 0; i < 4; i++) producer.send_async(topic, "v" + std::to_string(i));
  }  // the destructor closes: flushes, and every future is settled
  auto options = consumer_config(group);
  options.set("enable_auto_commit", "true");
  {
    cursus::Consumer first(options);
    first.subscribe({topic});
    EXPECT_EQ(take(first, 2), (std::vector<int64_t>{0, 1}));
  }  // the destructor closes: commits the two taken, leaves the group
  cursus::Consumer second(options);
  second.subscribe({topic});
  EXPECT_EQ(take(second, 2), (std::vector<int64_t>{2, 3}));
}

}  // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (broker().empty()) {
    std::fprintf(stderr, "CURSUS_TEST_BROKER is not set (run through with-broker.sh)\n");
    return 2;
  }
  return RUN_ALL_TESTS();
}
