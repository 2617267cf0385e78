// C++ tests of Producer::send_batch against a real broker ($CURSUS_TEST_BROKER).
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

using namespace std::chrono_literals;

namespace {

std::string batch_broker() {
  const char *b = std::getenv("CURSUS_TEST_BROKER");
  return b ? b : "";
}

std::string batch_topic() {
  static int n = 0;
  return "cpp-batch-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

}  // namespace

TEST(SendBatch, OneCallbackWithEveryRecordInOrder) {
  std::string topic = batch_topic();
  {
    cursus::Admin admin(cursus::Config(cursus::Kind::Admin, {{"bootstrap_servers", batch_broker()}}));
    admin.create_topic(topic, 1);
  }
  cursus::Producer producer(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", batch_broker()}}));
  std::vector<cursus::BatchRecord> records;
  for (int i = 0; i < 6; i++) records.push_back(cursus::BatchRecord{"value", std::string_view("key"), 0, 42});
  records[3].partition = 9;  // does not exist: this record alone fails
  records[4].key.reset();
  std::atomic<int> calls{0};
  std::vector<cursus::DeliveryReport> seen;
  producer.send_batch(topic, records, [&](std::vector<cursus::DeliveryReport> &reports) {
    calls++;
    seen = std::move(reports);
  });
  producer.flush();  // waits for the batch's callback
  EXPECT_EQ(calls.load(), 1);
  ASSERT_EQ(seen.size(), 6u);
  int64_t expected = 0;
  for (size_t i = 0; i < seen.size(); i++) {
    EXPECT_EQ(seen[i].topic, topic);
    if (i == 3) {
      ASSERT_TRUE(seen[i].error);
      EXPECT_THROW(std::rethrow_exception(seen[i].error), cursus::InvalidArgumentError);
      continue;
    }
    EXPECT_FALSE(seen[i].error) << i;
    EXPECT_EQ(seen[i].metadata.partition, 0);
    EXPECT_EQ(seen[i].metadata.offset, expected++);
    EXPECT_EQ(seen[i].metadata.timestamp, 42);
  }

  auto f = producer.send_batch_async(topic, {cursus::BatchRecord{"a"}, cursus::BatchRecord{"b"}});
  ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
  auto reports = f.get();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].metadata.offset, 5);
  EXPECT_EQ(reports[1].metadata.offset, 6);

  // One topic per batch: the library's rule and error, as in every language.
  cursus::BatchRecord other{"b"};
  other.topic = "other";
  try {
    producer.send_batch(topic, {cursus::BatchRecord{"a"}, other}, [](std::vector<cursus::DeliveryReport> &) {});
    FAIL() << "a batch of two topics was taken";
  } catch (const cursus::InvalidArgumentError &e) {
    EXPECT_EQ(e.code(), "invalid_argument");
    EXPECT_EQ(e.error_class(), "validation");
    EXPECT_EQ(e.message(), "a batch has one topic: record 1 is for \"other\", the batch for \"" + topic + "\"");
  }

  producer.close();
  EXPECT_THROW(producer.send_batch(topic, records, [](std::vector<cursus::DeliveryReport> &) { FAIL(); }),
               cursus::ClosedError);
}

TEST(SendBatch, RecordsCarryMetadataAndTraceContext) {
  const char *const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  std::string topic = batch_topic(), group = batch_topic() + "-group";
  cursus::Admin(cursus::Config(cursus::Kind::Admin, {{"bootstrap_servers", batch_broker()}})).create_topic(topic, 1);
  cursus::Producer producer(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", batch_broker()}}));
  cursus::BatchRecord traced{"a"};
  traced.metadata = R"({"tenant":"acme"})";
  traced.trace_context = cursus::TraceContext{parent, "congo=t61rcWkgMzE"};
  cursus::BatchRecord metadata_only{"b"};
  metadata_only.metadata = "plain text";
  auto f = producer.send_batch_async(topic, {traced, metadata_only, cursus::BatchRecord{"c"}});
  ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
  for (const auto &report : f.get()) EXPECT_FALSE(report.error);

  // A malformed context fails the whole batch before anything is sent.
  cursus::BatchRecord bad{"x"};
  bad.trace_context = cursus::TraceContext{"00-nope", std::nullopt};
  try {
    producer.send_batch(topic, {cursus::BatchRecord{"y"}, bad}, [](std::vector<cursus::DeliveryReport> &) {});
    FAIL() << "a malformed context was taken";
  } catch (const cursus::InvalidArgumentError &e) {
    EXPECT_EQ(e.code(), "invalid_trace_context");
    EXPECT_EQ(e.fields().at("record"), "1");
  }

  cursus::Consumer consumer(cursus::Config(cursus::Kind::Consumer, {{"bootstrap_servers", batch_broker()},
                                                                    {"group_id", group},
                                                                    {"auto_offset_reset", "earliest"},
                                                                    {"fetch_max_wait_ms", "50"}}));
  consumer.subscribe({topic});
  std::vector<cursus::Message> got;
  for (int polls = 0; got.size() < 3 && polls < 100; polls++)
    if (auto m = consumer.poll(200ms)) got.push_back(std::move(*m));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].trace_context(), (cursus::TraceContext{parent, "congo=t61rcWkgMzE"}));
  ASSERT_TRUE(got[0].metadata().has_value());
  EXPECT_NE(got[0].metadata()->find(R"("tenant":"acme")"), std::string_view::npos);
  EXPECT_EQ(got[1].metadata(), std::optional<std::string_view>("plain text"));
  EXPECT_EQ(got[1].trace_context(), std::nullopt);
  EXPECT_EQ(got[2].metadata(), std::nullopt);
  EXPECT_EQ(got[2].trace_context(), std::nullopt);
}
