// C++ tests of the trace-context hook (cursus::TraceContext, SendOptions,
// Message::trace_context, Record::trace_context) against a real broker
// ($CURSUS_TEST_BROKER).
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

using namespace std::chrono_literals;

namespace {

const char *const kParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const char *const kParent2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";

cursus::Config trace_config(cursus::Kind kind, const std::string &group = "") {
  const char *b = std::getenv("CURSUS_TEST_BROKER");
  cursus::Config config(kind, {{"bootstrap_servers", b ? b : ""}});
  if (!group.empty()) config.set("group_id", group).set("fetch_max_wait_ms", "50");
  return config;
}

std::string trace_name(const std::string &prefix) {
  static int n = 0;
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

/// The next message (at most ~20 s).
cursus::Message next(cursus::Consumer &c) {
  for (int polls = 0; polls < 100; polls++)
    if (auto m = c.poll(200ms)) return std::move(*m);
  throw std::runtime_error("no message");
}

}  // namespace

TEST(TraceContext, TravelsWithTheRecordNextToItsMetadata) {
  std::string topic = trace_name("cpp-trace"), group = trace_name("cpp-trace-group");
  cursus::Admin(trace_config(cursus::Kind::Admin)).create_topic(topic, 1);
  cursus::Producer producer(trace_config(cursus::Kind::Producer));

  cursus::SendOptions with_state;
  with_state.key = "k";
  with_state.partition = 0;
  with_state.metadata = R"({"tenant":"acme"})";
  with_state.trace_context = cursus::TraceContext{kParent, "congo=t61rcWkgMzE"};
  EXPECT_EQ(producer.send(topic, "a", with_state).offset, 0);
  cursus::SendOptions alone;
  alone.trace_context = cursus::TraceContext{kParent2, std::nullopt};
  EXPECT_EQ(producer.send_async(topic, "b", alone).get().offset, 1);
  cursus::SendOptions metadata_only;
  metadata_only.metadata = "plain text";
  producer.send(topic, "c", metadata_only, [](const cursus::DeliveryReport &) {});
  producer.flush();
  producer.send(topic, "d");

  cursus::Consumer consumer(trace_config(cursus::Kind::Consumer, group));
  consumer.subscribe({topic});
  cursus::Message a = next(consumer);
  EXPECT_EQ(a.trace_context(), (cursus::TraceContext{kParent, "congo=t61rcWkgMzE"}));
  EXPECT_EQ(a.key(), "k");
  ASSERT_TRUE(a.metadata().has_value());
  EXPECT_NE(a.metadata()->find(R"("tenant":"acme")"), std::string_view::npos);
  // The process span of a received message, as the engine declares it.
  cursus::SpanSpec process = cursus::spans::process(a, group);
  EXPECT_EQ(process.name, "process " + topic);
  EXPECT_EQ(process.kind, "consumer");
  cursus::Message b = next(consumer);
  EXPECT_EQ(b.trace_context(), (cursus::TraceContext{kParent2, std::nullopt}));
  cursus::Message c = next(consumer);
  EXPECT_EQ(c.metadata(), std::optional<std::string_view>("plain text"));
  EXPECT_EQ(c.trace_context(), std::nullopt);
  cursus::Message d = next(consumer);
  EXPECT_EQ(d.metadata(), std::nullopt);
  EXPECT_EQ(d.trace_context(), std::nullopt);

  // A batch poll's records read the same context from their metadata.
  consumer.seek(cursus::TopicPartition{topic, 0}, 0);
  std::vector<cursus::Record> records;
  for (int polls = 0; records.size() < 4 && polls < 100; polls++) {
    auto more = consumer.poll_batch(200ms, 10);
    records.insert(records.end(), more.begin(), more.end());
  }
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].trace_context(), (cursus::TraceContext{kParent, "congo=t61rcWkgMzE"}));
  EXPECT_EQ(records[1].trace_context(), (cursus::TraceContext{kParent2, std::nullopt}));
  EXPECT_EQ(records[2].trace_context(), std::nullopt);
  EXPECT_EQ(records[3].trace_context(), std::nullopt);
}

TEST(TraceContext, AMalformedContextIsRefusedBeforeSending) {
  std::string topic = trace_name("cpp-trace-bad");
  cursus::Admin(trace_config(cursus::Kind::Admin)).create_topic(topic, 1);
  cursus::Producer producer(trace_config(cursus::Kind::Producer));
  for (const auto &bad : {cursus::TraceContext{"00-nope", std::nullopt},
                          cursus::TraceContext{kParent, std::string("bad\x01state")}}) {
    cursus::SendOptions options;
    options.trace_context = bad;
    try {
      producer.send(topic, "x", options);
      FAIL() << "expected an exception";
    } catch (const cursus::InvalidArgumentError &e) {
      EXPECT_EQ(e.code(), "invalid_trace_context");
    }
    EXPECT_THROW(producer.send(topic, "x", options, [](const cursus::DeliveryReport &) {}),
                 cursus::InvalidArgumentError);
  }
  // A NUL byte cannot reach C: refused by the wrapper.
  cursus::SendOptions nul;
  nul.metadata = std::string("a\0b", 3);
  EXPECT_THROW(producer.send(topic, "x", nul), cursus::InvalidArgumentError);
}

namespace {
/// The value of attribute `key` (none when absent).
std::optional<std::variant<std::string, int64_t>> attr(const std::vector<cursus::SpanAttribute> &as,
                                                       const std::string &key) {
  for (const auto &a : as)
    if (a.key == key) return a.value;
  return std::nullopt;
}
}  // namespace

TEST(Spans, AreTheEnginesDeclarations) {
  EXPECT_EQ(cursus::spans::scope(), "cursus");
  cursus::SendOptions options;
  options.key = "o-7";
  options.partition = 2;
  cursus::SpanSpec s = cursus::spans::publish("orders", "12345", options, "app");
  EXPECT_EQ(s.name, "publish orders");
  EXPECT_EQ(s.kind, "producer");
  using V = std::variant<std::string, int64_t>;
  EXPECT_EQ(attr(s.attributes, "messaging.system"), V(std::string("cursus")));
  EXPECT_EQ(attr(s.attributes, "messaging.destination.partition.id"), V(std::string("2")));
  EXPECT_EQ(attr(s.attributes, "messaging.cursus.message.key"), V(std::string("o-7")));
  EXPECT_EQ(attr(s.attributes, "messaging.message.body.size"), V(int64_t{5}));
  EXPECT_EQ(attr(s.attributes, "messaging.client.id"), V(std::string("app")));
  EXPECT_EQ(attr(cursus::spans::acknowledged(cursus::RecordMetadata{1, 42, 0}), "messaging.cursus.offset"),
            V(int64_t{42}));
  EXPECT_EQ(cursus::spans::receive({"a", "b"}, 2).name, "receive");
  EXPECT_EQ(cursus::spans::end_transaction("tx", true).name, "commit_transaction");
  EXPECT_EQ(cursus::spans::append("orders", "order-7", 3).kind, "producer");
  EXPECT_EQ(cursus::spans::read("orders", "order-7", 1).name, "read orders");
  try {
    cursus::Config config = trace_config(cursus::Kind::Producer);
    config.set("retries", "0");
    cursus::Producer(config).send(trace_name("cpp-missing"), "x");
    FAIL() << "expected an exception";
  } catch (const cursus::Error &e) {
    EXPECT_EQ(attr(cursus::spans::failed(e), "error.type"), V(e.code()));
  }
}
