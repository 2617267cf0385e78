// C++ tests of include/cursus.hpp against a real broker ($CURSUS_TEST_BROKER).
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
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

cursus::Config config() { return cursus::Config{{"bootstrap_servers", broker()}}; }

static_assert(!std::is_copy_constructible_v<cursus::Producer>, "move-only");
static_assert(std::is_move_constructible_v<cursus::Producer>, "movable");
static_assert(!std::is_copy_constructible_v<cursus::Consumer>, "move-only");
static_assert(!std::is_copy_constructible_v<cursus::Message>, "move-only");
static_assert(std::is_base_of_v<cursus::Error, cursus::FencingError>, "hierarchy");

TEST(Config, UnknownOptionThrowsInvalidArgument) {
  cursus::Config c;
  try {
    c.set("no_such_option", "1");
    FAIL() << "expected an exception";
  } catch (const cursus::InvalidArgumentError &e) {
    EXPECT_EQ(e.error_class(), "validation");
    EXPECT_EQ(e.code(), "invalid_argument");
    EXPECT_FALSE(e.retryable());
    EXPECT_NE(e.message().find("no_such_option"), std::string::npos);
  }
  EXPECT_THROW(c.set("acks", "seven"), cursus::ValidationError);
  EXPECT_NO_THROW(c.set("acks", "all").set("linger_ms", "1"));
}

TEST(Version, MatchesMacros) {
  EXPECT_EQ(cursus::version(), std::to_string(CURSUS_VERSION_MAJOR) + "." +
                                   std::to_string(CURSUS_VERSION_MINOR) + "." +
                                   std::to_string(CURSUS_VERSION_PATCH));
}

TEST(Admin, ErrorsMapToClassExceptions) {
  cursus::Admin admin(config());
  std::string topic = unique("cpp-admin");
  try {
    admin.delete_topic(topic);
    FAIL() << "expected NotFoundError";
  } catch (const cursus::NotFoundError &e) {
    EXPECT_EQ(e.error_class(), "not_found");
    EXPECT_EQ(e.status(), CURSUS_ERR_NOT_FOUND);
    EXPECT_FALSE(e.code().empty());
  }
  EXPECT_FALSE(admin.delete_topic(topic, true));  // if_exists found none
  EXPECT_EQ(admin.create_topic(topic, 2).partitions, 2u);
  auto topics = admin.list_topics();
  EXPECT_NE(std::find(topics.begin(), topics.end(), topic), topics.end());
  EXPECT_TRUE(admin.delete_topic(topic, true));
  admin.close();
  EXPECT_THROW(admin.list_topics(), cursus::ClosedError);
}

TEST(Consumer, RequiresGroupId) { EXPECT_THROW(cursus::Consumer c(config()), cursus::InvalidArgumentError); }

TEST(RoundTrip, ProduceAndConsumeThroughGroup) {
  std::string topic = unique("cpp-roundtrip"), group = unique("cpp-group");
  cursus::Admin(config()).create_topic(topic, 1);
  cursus::Producer producer(config());
  const std::string binary("x\0y\0\xff", 5);
  auto meta = producer.send(topic, binary, std::string_view("key"));
  EXPECT_EQ(meta.partition, 0);
  EXPECT_EQ(meta.offset, 0);

  std::mutex mu;
  int delivered = 0, failed = 0;
  for (int i = 0; i < 4; i++) {
    producer.send_async(topic, "async-" + std::to_string(i), [&](const cursus::DeliveryReport &r) {
      std::lock_guard<std::mutex> lock(mu);
      (r.error ? failed : delivered)++;
    });
  }
  producer.flush(30s);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(delivered, 4);
    EXPECT_EQ(failed, 0);
  }

  cursus::Producer moved = std::move(producer);  // move-only handle keeps working
  moved.send(topic, "last");

  auto cfg = config();
  cfg.set("group_id", group);
  cursus::Consumer consumer(cfg);
  consumer.subscribe({topic});
  std::vector<std::string> payloads;
  for (int polls = 0; payloads.size() < 6 && polls < 200; polls++) {
    if (auto m = consumer.poll(500ms)) {
      EXPECT_EQ(m->topic(), topic);
      EXPECT_EQ(m->offset(), static_cast<int64_t>(payloads.size()));
      if (m->offset() == 0) {
        EXPECT_EQ(m->key(), "key");
      }
      payloads.emplace_back(m->payload());
    }
  }
  ASSERT_EQ(payloads.size(), 6u);
  EXPECT_EQ(payloads[0], binary);
  EXPECT_EQ(payloads[0].size(), 5u);
  EXPECT_EQ(payloads[5], "last");
  consumer.commit();
  consumer.close();
  EXPECT_THROW(consumer.poll(0ms), cursus::ClosedError);
  moved.close();
  EXPECT_THROW(moved.send(topic, "after close"), cursus::ClosedError);
}

TEST(Producer, SendToMissingTopicThrowsNotFound) {
  auto cfg = config();
  cfg.set("retries", "0");
  cursus::Producer producer(cfg);
  try {
    producer.send(unique("cpp-missing"), "x");
    FAIL() << "expected an exception";
  } catch (const cursus::Error &e) {
    EXPECT_EQ(e.error_class(), "not_found") << e.what();
  }
}

TEST(Admin, TopicManagement) {
  cursus::Admin admin(config());
  std::string topic = unique("cpp-mgmt");
  EXPECT_THROW(admin.create_topic(topic, {{"no_such_field", "1"}}), cursus::InvalidArgumentError);
  auto created = admin.create_topic(topic, {{"partitions", "3"}, {"retention_hours", "24"}, {"event_sourcing", "false"}});
  EXPECT_EQ(created.partitions, 3u);
  EXPECT_EQ(created.revision, 1u);
  EXPECT_TRUE(created.leaders.empty());
  auto md = admin.metadata(topic);
  EXPECT_EQ(md.partitions, 3u);
  EXPECT_EQ(md.revision, 1u);
  ASSERT_EQ(md.leaders.size(), 3u);
  EXPECT_EQ(md.leaders[0], broker());
  auto altered = admin.alter_topic_config(topic, 1u);
  ASSERT_TRUE(altered.min_in_sync_replicas.has_value());
  EXPECT_EQ(*altered.min_in_sync_replicas, 1u);
  EXPECT_FALSE(admin.alter_topic_config(topic, std::nullopt).min_in_sync_replicas.has_value());
  auto offsets = admin.list_offsets(topic);
  ASSERT_EQ(offsets.size(), 3u);
  for (const auto &o : offsets) EXPECT_EQ(o.latest, 0u);
  auto one = admin.list_offsets(topic, 1u);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].partition, 1u);
  auto json = admin.describe_topic(topic);
  EXPECT_EQ(json.front(), '{');
  EXPECT_NE(json.find(topic), std::string::npos);
  md = admin.metadata(topic);
  EXPECT_THROW(admin.truncate_topic(topic, md.revision + 100), cursus::ConflictError);
  auto t = admin.truncate_topic(topic, md.revision);
  EXPECT_EQ(t.revision, md.revision + 1);
  auto help = admin.help();
  EXPECT_NE(std::find(help.begin(), help.end(), "PUBLISH"), help.end());
  EXPECT_NO_THROW(admin.list_groups());
  EXPECT_THROW(admin.describe_topic(unique("cpp-missing")), cursus::NotFoundError);
}

TEST(Producer, SendAsyncFuture) {
  std::string topic = unique("cpp-future");
  cursus::Admin(config()).create_topic(topic, 1);
  cursus::Producer producer(config());
  auto f0 = producer.send_async(topic, "a");
  auto f1 = producer.send_async(topic, "b", std::string_view("k"), 0);
  EXPECT_EQ(f0.get().offset, 0);
  EXPECT_EQ(f1.get().offset, 1);
  auto cfg = config();
  cfg.set("retries", "0");
  cursus::Producer failing(cfg);
  auto bad = failing.send_async(unique("cpp-missing"), "x");
  EXPECT_THROW(bad.get(), cursus::NotFoundError);
}

TEST(Consumer, PatternCommitAsyncCommittedAssignment) {
  std::string prefix = unique("cpp-pat"), topic = prefix + "-orders", group = unique("cpp-pat-group");
  cursus::Admin admin(config());
  admin.create_topic(topic, 2);
  cursus::Producer producer(config());
  for (int i = 0; i < 3; i++) producer.send(topic, "p" + std::to_string(i), std::nullopt, 0);
  auto cfg = config();
  cfg.set("group_id", group).set("fetch_max_wait_ms", "50");
  cursus::Consumer consumer(cfg);
  consumer.subscribe_pattern(prefix + "-*");
  EXPECT_FALSE(consumer.committed(topic, 0).has_value());
  int seen = 0;
  for (int polls = 0; seen < 3 && polls < 200; polls++) {
    if (auto m = consumer.poll(500ms)) {
      EXPECT_EQ(m->topic(), topic);
      seen++;
    }
  }
  ASSERT_EQ(seen, 3);
  auto assigned = consumer.assignment();
  ASSERT_EQ(assigned.size(), 2u);
  for (const auto &tp : assigned) EXPECT_EQ(tp.topic, topic);

  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  bool failed = false;
  consumer.commit_async([&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu);
    calls++;
    failed = e != nullptr;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return calls > 0; });
    EXPECT_EQ(calls, 1);
    EXPECT_FALSE(failed);
  }
  EXPECT_EQ(consumer.committed(topic, 0), std::optional<int64_t>(3));
  EXPECT_NO_THROW(consumer.commit_async().get());

  auto groups = admin.list_groups();
  EXPECT_NE(std::find(groups.begin(), groups.end(), group), groups.end());
  auto status = admin.group_status(group);
  EXPECT_NE(status.find(group), std::string::npos);
  consumer.close();
  EXPECT_THROW(consumer.commit_async(), cursus::ClosedError);
}

TEST(Consumer, CommitOffsetsExplicit) {
  std::string topic = unique("cpp-commit-offsets"), group = unique("cpp-commit-offsets-group");
  cursus::Admin admin(config());
  admin.create_topic(topic, 2);
  cursus::Producer producer(config());
  for (int i = 0; i < 4; i++) producer.send(topic, "v" + std::to_string(i), std::nullopt, 0);
  auto cfg = config();
  cfg.set("group_id", group).set("auto_offset_reset", "earliest");
  {
    cursus::Consumer consumer(cfg);
    consumer.subscribe({topic});
    // Not joined yet (no poll): nothing to commit against.
    EXPECT_THROW(consumer.commit_offsets({{topic, 0, 1}}), cursus::InvalidArgumentError);
    std::optional<cursus::Message> m;
    for (int polls = 0; !m && polls < 200; polls++) m = consumer.poll(500ms);
    ASSERT_TRUE(m.has_value());
    EXPECT_NO_THROW(consumer.commit_offsets({}));
    consumer.commit_offsets({{topic, 0, 2}, {topic, 1, 0}});
    EXPECT_EQ(consumer.committed(topic, 0), std::optional<int64_t>(2));
    EXPECT_EQ(consumer.committed(topic, 1), std::optional<int64_t>(0));
    consumer.close();
    EXPECT_THROW(consumer.commit_offsets({{topic, 0, 3}}), cursus::ClosedError);
  }
  // The group resumes from the explicitly committed offset.
  cursus::Consumer second(cfg);
  second.subscribe({topic});
  std::optional<cursus::Message> m;
  for (int polls = 0; !m && polls < 200; polls++) m = second.poll(500ms);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->partition(), 0);
  EXPECT_EQ(m->offset(), 2);
  EXPECT_EQ(m->payload(), "v2");
}

}  // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (broker().empty()) {
    std::fprintf(stderr, "CURSUS_TEST_BROKER is not set (run through with-broker.sh)\n");
    return 2;
  }
  int rc = RUN_ALL_TESTS();
  const auto *u = ::testing::UnitTest::GetInstance();
  std::printf("%d passed, %d failed\n", u->successful_test_count(), u->failed_test_count());
  return rc;
}
