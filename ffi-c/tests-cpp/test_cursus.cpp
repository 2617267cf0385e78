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
  admin.create_topic(topic, 2);
  auto topics = admin.list_topics();
  EXPECT_NE(std::find(topics.begin(), topics.end(), topic), topics.end());
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
