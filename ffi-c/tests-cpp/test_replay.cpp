// C++ tests of event ids, aggregate replay proofs and range reads, and
// transactional stream appends (docs/aggregate-replay.md) against a real
// broker ($CURSUS_TEST_BROKER). main() is in test_cursus.cpp.
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <type_traits>

namespace {

std::string broker() {
  const char *b = std::getenv("CURSUS_TEST_BROKER");
  return b ? b : "";
}

std::string unique(const std::string &prefix) {
  static int n = 0;
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

cursus::Config admin_config() { return cursus::Config(cursus::Kind::Admin, {{"bootstrap_servers", broker()}}); }

/// A new event-sourcing topic; an aggregate replay one when `replay`.
std::string topic_for(const std::string &prefix, bool replay) {
  auto topic = unique(prefix);
  cursus::Admin admin(admin_config());
  std::map<std::string, std::string> options{{"partitions", "2"}, {"event_sourcing", "true"}};
  if (replay) {
    options["idempotent"] = "true";
    options["aggregate_replay"] = "true";
  }
  auto info = admin.create_topic(topic, options);
  EXPECT_TRUE(info.event_sourcing);
  EXPECT_EQ(info.aggregate_replay, replay);
  return topic;
}

cursus::Producer transactional() {
  cursus::Producer p(cursus::Config(cursus::Kind::Producer,
                                    {{"bootstrap_servers", broker()}, {"transactional_id", unique("cpp-txn-stream")}}));
  p.init_transactions();
  return p;
}

static_assert(std::is_base_of_v<cursus::Error, cursus::ReplayProofError>, "an Error");

TEST(Replay, EventIdAndExactRetry) {
  auto topic = topic_for("cpp-replay-retry", true);
  cursus::EventStore store(admin_config());
  cursus::Event kickoff{"Started", "kickoff", "{\"by\":\"ref\"}", 2};
  kickoff.with_event_id("ev-1");
  auto first = store.append(topic, "m1", 0, kickoff);
  EXPECT_EQ(first.version, 1u);
  // The exact retry is answered with the original offset.
  auto again = store.append(topic, "m1", 0, kickoff);
  EXPECT_EQ(again.version, 1u);
  EXPECT_EQ(again.offset, first.offset);
  EXPECT_EQ(again.partition, first.partition);
  // The overload taking the id does the same.
  auto third = store.append(topic, "m1", 0, {"Started", "kickoff", "{\"by\":\"ref\"}", 2}, "ev-1");
  EXPECT_EQ(third.offset, first.offset);
  EXPECT_EQ(store.stream_version(topic, "m1"), 1u);
  auto all = store.read_stream(topic, "m1").read_all();
  ASSERT_EQ(all.events.size(), 1u);
  EXPECT_EQ(all.events[0].event_type, "Started");
  EXPECT_EQ(all.events[0].metadata, "{\"by\":\"ref\"}");
  EXPECT_EQ(all.events[0].schema_version, 2u);
  EXPECT_EQ(all.events[0].offset, first.offset);
  // An id must be text without whitespace (or NUL), and not empty.
  EXPECT_THROW(store.append(topic, "m1", 1, cursus::Event{"T", "p"}.with_event_id("ev 2")),
               cursus::InvalidArgumentError);
  EXPECT_THROW(store.append(topic, "m1", 1, cursus::Event{"T", "p"}.with_event_id(std::string("ev\0x", 4))),
               cursus::InvalidArgumentError);
  EXPECT_THROW(store.append(topic, "m1", 1, {"T", "p"}, ""), cursus::InvalidArgumentError);
  EXPECT_EQ(store.stream_version(topic, "m1"), 1u);
}

TEST(Replay, ReusedIdentityIsAConflict) {
  auto topic = topic_for("cpp-replay-conflict", true);
  cursus::EventStore store(admin_config());
  store.append(topic, "m2", 0, {"Started", "kickoff"}, "ev-a");
  try {
    store.append(topic, "m2", 0, {"Started", "other payload"}, "ev-a");
    FAIL() << "no conflict";
  } catch (const cursus::ConflictError &e) {
    EXPECT_EQ(e.code(), "aggregate_identity_conflict");
    EXPECT_FALSE(cursus::replay_proof_of(e));
  }
  try {
    store.append(topic, "m2", 0, {"Started", "kickoff"}, "ev-b");
    FAIL() << "no conflict";
  } catch (const cursus::ConflictError &e) {
    EXPECT_EQ(e.code(), "aggregate_identity_conflict");
  }
  EXPECT_EQ(store.stream_version(topic, "m2"), 1u);
}

TEST(Replay, ProofCompleteAndFailed) {
  auto topic = topic_for("cpp-replay-proof", true);
  cursus::EventStore store(admin_config());
  store.append(topic, "m3", 0, {"Scored", "goal-1"}, "m3-1");
  store.append(topic, "m3", 1, {"Scored", "goal 2"}, "m3-2");
  auto last = store.append(topic, "m3", 2, {"Scored", "goal-3"}, "m3-3");

  auto proof = store.replay_proof(topic, "m3");
  EXPECT_TRUE(proof.complete());
  EXPECT_EQ(proof.status, "complete");
  EXPECT_EQ(proof.diagnostic, "");
  EXPECT_EQ(proof.partition, last.partition);
  EXPECT_EQ(proof.event_count, 3u);
  EXPECT_EQ(proof.earliest_sequence, 1u);
  EXPECT_EQ(proof.latest_sequence, 3u);
  EXPECT_EQ(proof.last_offset, last.offset);
  EXPECT_LT(proof.first_offset, proof.last_offset);
  EXPECT_GT(proof.hwm, proof.last_offset);
  EXPECT_EQ(proof.first_event_id, "m3-1");
  EXPECT_EQ(proof.last_event_id, "m3-3");
  EXPECT_TRUE(proof.sequence_complete);
  EXPECT_TRUE(proof.retention_complete);
  EXPECT_TRUE(store.replay_proof(topic, "m3", 3).complete());
  EXPECT_THROW(store.replay_proof(topic, "m3", 0), cursus::InvalidArgumentError);  // the library's rule

  // A wrong expected last sequence: the proof rides on the error.
  try {
    store.replay_proof(topic, "m3", 9);
    FAIL() << "no error";
  } catch (const cursus::ReplayProofError &e) {
    EXPECT_EQ(e.code(), "aggregate_proof_proof_unavailable");
    EXPECT_EQ(e.error_class(), "internal");
    EXPECT_EQ(e.proof().status, "proof_unavailable");
    EXPECT_EQ(e.proof().event_count, 3u);
    EXPECT_EQ(e.proof().last_event_id, "m3-3");
    EXPECT_FALSE(e.proof().complete());
  }
  // An unknown aggregate: not_found, read through replay_proof_of.
  try {
    store.replay_proof(topic, "nobody");
    FAIL() << "no error";
  } catch (const cursus::Error &e) {
    EXPECT_EQ(e.code(), "aggregate_proof_not_found");
    EXPECT_EQ(e.status(), CURSUS_ERR_NOT_FOUND);
    auto p = cursus::replay_proof_of(e);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->status, "not_found");
    EXPECT_EQ(p->event_count, 0u);
  }
}

TEST(Replay, RangeRead) {
  auto topic = topic_for("cpp-replay-range", true);
  cursus::EventStore store(admin_config());
  std::vector<cursus::Appended> appended;
  for (int i = 1; i <= 4; i++)
    appended.push_back(
        store.append(topic, "m4", i - 1, {"Scored", "goal " + std::to_string(i)}, "m4-" + std::to_string(i)));
  auto range = store.event_range(topic, "m4", 2, 3);
  EXPECT_TRUE(range.proof.complete());
  EXPECT_EQ(range.proof.event_count, 4u);
  ASSERT_EQ(range.events.size(), 2u);
  for (size_t i = 0; i < 2; i++) {
    const auto &e = range.events[i];
    EXPECT_EQ(e.sequence, i + 2);
    EXPECT_EQ(e.offset, appended[i + 1].offset);
    EXPECT_EQ(e.event_id, "m4-" + std::to_string(i + 2));
    EXPECT_EQ(e.event_type, "Scored");
    EXPECT_EQ(e.payload, "goal " + std::to_string(i + 2));
  }
  auto bounded = store.event_range(topic, "m4", 1, 4, 2);
  ASSERT_EQ(bounded.events.size(), 2u);
  EXPECT_EQ(bounded.events[1].sequence, 2u);
  try {
    store.event_range(topic, "m4", 3, 9);
    FAIL() << "no error";
  } catch (const cursus::Error &e) {
    EXPECT_EQ(e.code(), "aggregate_range_incomplete");
  }
  // Not a replay topic.
  auto plain = topic_for("cpp-replay-plain", false);
  store.append(plain, "k", 0, {"T", "one"}, "id-1");
  try {
    store.event_range(plain, "k", 1, 1);
    FAIL() << "no error";
  } catch (const cursus::Error &e) {
    EXPECT_EQ(e.code(), "aggregate_replay_not_enabled");
    EXPECT_FALSE(cursus::replay_proof_of(e));
  }
}

TEST(Replay, TransactionalAppendCommitted) {
  auto topic = topic_for("cpp-txn-stream-commit", false);
  cursus::EventStore store(admin_config());
  store.append(topic, "acct", 0, {"Opened", "open"});
  auto producer = transactional();
  cursus::Appended credit{};
  {
    cursus::Transaction tx(producer);
    credit = tx.append_stream(topic, "acct", 1, cursus::Event{"Credited", "credit 3"}.with_event_id("credit-1"));
    EXPECT_EQ(credit.version, 2u);
    // Invisible until the commit; the aggregate is reserved.
    EXPECT_EQ(store.stream_version(topic, "acct"), 1u);
    try {
      store.append(topic, "acct", 1, {"Debited", "race"});
      FAIL() << "not reserved";
    } catch (const cursus::ConflictError &e) {
      EXPECT_EQ(e.code(), "stream_version_reserved");
    }
    tx.commit();
  }
  EXPECT_EQ(store.stream_version(topic, "acct"), 2u);
  auto all = store.read_stream(topic, "acct").read_all();
  ASSERT_EQ(all.events.size(), 2u);
  EXPECT_EQ(all.events[1].payload, "credit 3");
  EXPECT_EQ(all.events[1].event_type, "Credited");
  EXPECT_EQ(all.events[1].offset, credit.offset);
  EXPECT_EQ(store.append(topic, "acct", 2, {"Debited", "after"}).version, 3u);
}

TEST(Replay, TransactionalAppendAborted) {
  auto topic = topic_for("cpp-txn-stream-abort", false);
  cursus::EventStore store(admin_config());
  store.append(topic, "acct", 0, {"Opened", "open"});
  auto producer = transactional();
  // Outside a transaction: refused.
  EXPECT_THROW(producer.append_stream(topic, "acct", 1, {"Credited", "never"}), cursus::InvalidArgumentError);
  {
    cursus::Transaction tx(producer);
    EXPECT_EQ(producer.append_stream(topic, "acct", 1, {"Credited", "never"}).version, 2u);
  }  // the scope aborts it
  EXPECT_EQ(store.stream_version(topic, "acct"), 1u);
  EXPECT_EQ(store.append(topic, "acct", 1, {"Debited", "after"}).version, 2u);
  auto all = store.read_stream(topic, "acct").read_all();
  ASSERT_EQ(all.events.size(), 2u);
  EXPECT_EQ(all.events[1].payload, "after");
  // Not a transactional producer.
  cursus::Producer plain(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", broker()}}));
  try {
    plain.append_stream(topic, "acct", 2, {"Credited", "never"});
    FAIL() << "no error";
  } catch (const cursus::InvalidArgumentError &e) {
    EXPECT_EQ(e.code(), "invalid_transaction_state");
  }
}

}  // namespace
