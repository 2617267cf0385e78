// C++ tests of the event store (cursus::EventStore, EventCursor, Aggregate<State>)
// against a real broker ($CURSUS_TEST_BROKER). main() is in test_cursus.cpp.
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <iterator>
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

/// A new event-sourcing topic.
std::string es_topic(const std::string &prefix, uint32_t partitions = 3) {
  auto topic = unique(prefix);
  cursus::Admin admin(admin_config());
  auto info = admin.create_topic(topic, {{"partitions", std::to_string(partitions)}, {"event_sourcing", "true"}});
  EXPECT_TRUE(info.event_sourcing);
  return topic;
}

using Versions = std::vector<uint64_t>;
using Strings = std::vector<std::string>;

Versions versions(const std::vector<cursus::StoredEvent> &events) {
  Versions out;
  for (const auto &e : events) out.push_back(e.version);
  return out;
}

static_assert(std::is_same_v<std::iterator_traits<cursus::EventCursor::iterator>::iterator_category,
                             std::input_iterator_tag>,
              "pages are an input range");
static_assert(std::is_base_of_v<cursus::ConflictError, cursus::VersionConflictError>, "a conflict");
static_assert(!std::is_copy_constructible_v<cursus::EventStore>, "owns its handle");
static_assert(std::is_move_constructible_v<cursus::Aggregate<long>>, "movable");

TEST(EventStore, AppendAndReadBackEveryField) {
  auto topic = es_topic("cpp-es-read");
  cursus::EventStore store(admin_config());
  EXPECT_EQ(store.stream_version(topic, "order-1"), 0u);
  auto first = store.append(topic, "order-1", 0, {"Created", "{\"id\":1}", "{\"by\":\"alice\"}", 2});
  EXPECT_EQ(first.version, 1u);
  EXPECT_LT(first.partition, 3u);
  auto second = store.append(topic, "order-1", 1, {"Paid", "paid 10 \xe2\x82\xac"});
  EXPECT_EQ(second.version, 2u);
  EXPECT_EQ(second.partition, first.partition);
  EXPECT_GT(second.offset, first.offset);
  EXPECT_EQ(store.stream_version(topic, "order-1"), 2u);

  auto all = store.read_stream(topic, "order-1").read_all();
  EXPECT_EQ(all.pages, 1u);
  EXPECT_FALSE(all.snapshot);
  ASSERT_EQ(all.events.size(), 2u);
  const auto &e = all.events[0];
  EXPECT_EQ(e.topic, topic);
  EXPECT_EQ(e.partition, first.partition);
  EXPECT_EQ(e.offset, first.offset);
  EXPECT_GT(e.timestamp, 0);
  EXPECT_EQ(e.key, "order-1");
  EXPECT_EQ(e.version, 1u);
  EXPECT_EQ(e.event_type, "Created");
  EXPECT_EQ(e.schema_version, 2u);
  EXPECT_EQ(e.metadata, "{\"by\":\"alice\"}");
  EXPECT_EQ(e.payload, "{\"id\":1}");
  EXPECT_EQ(all.events[1].event_type, "Paid");
  EXPECT_EQ(all.events[1].schema_version, 1u);
  EXPECT_EQ(all.events[1].metadata, "");
  EXPECT_EQ(all.events[1].payload, "paid 10 \xe2\x82\xac");
  // From version 2; and an aggregate without events.
  EXPECT_EQ(versions(store.read_stream(topic, "order-1", 2).read_all().events), (Versions{2}));
  auto none = store.read_stream(topic, "order-2").read_all();
  EXPECT_TRUE(none.events.empty());
}

TEST(EventStore, VersionConflictIsTypedWithItsFields) {
  auto topic = es_topic("cpp-es-conflict", 1);
  cursus::EventStore a(admin_config()), b(admin_config());
  a.append(topic, "acct", 0, {"Opened", "open"});
  a.append(topic, "acct", 1, {"Deposited", "first writer"});
  try {
    b.append(topic, "acct", 1, {"Deposited", "second writer"});
    FAIL() << "no conflict";
  } catch (const cursus::VersionConflictError &e) {
    EXPECT_EQ(e.code(), "version_conflict");
    EXPECT_EQ(e.error_class(), "conflict");
    EXPECT_FALSE(e.retryable());
    EXPECT_EQ(e.current(), 2u);
    EXPECT_EQ(e.fields().at("current"), "2");
    EXPECT_EQ(e.fields().count("expected"), 1u);
  }
  // Still a ConflictError for code that catches the class.
  EXPECT_THROW(b.append(topic, "acct", 1, {"Deposited", "again"}), cursus::ConflictError);
  EXPECT_EQ(b.append(topic, "acct", b.stream_version(topic, "acct"), {"Deposited", "second writer"}).version, 3u);
  Strings payloads;
  for (const auto &page : a.read_stream(topic, "acct"))
    for (const auto &e : page.events) payloads.push_back(e.payload);
  EXPECT_EQ(payloads, (Strings{"open", "first writer", "second writer"}));
}

TEST(EventStore, SnapshotsAndAStreamReadAfterOne) {
  auto topic = es_topic("cpp-es-snap");
  cursus::EventStore store(admin_config());
  EXPECT_EQ(store.read_snapshot(topic, "cart"), std::nullopt);
  for (uint64_t v = 0; v < 5; v++) store.append(topic, "cart", v, {"Added", "item-" + std::to_string(v + 1)});
  try {
    store.save_snapshot(topic, "cart", 9, "too far");
    FAIL() << "a snapshot beyond the stream was saved";
  } catch (const cursus::ConflictError &e) {
    EXPECT_EQ(e.code(), "snapshot_version_exceeds_stream");
  }
  store.save_snapshot(topic, "cart", 3, "items=3");
  auto snap = store.read_snapshot(topic, "cart");
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->version, 3u);
  EXPECT_EQ(snap->state, "items=3");
  auto read = store.read_stream(topic, "cart", 1).read_all();
  ASSERT_TRUE(read.snapshot);
  EXPECT_EQ(read.snapshot->version, 3u);
  EXPECT_EQ(read.snapshot->state, "items=3");
  EXPECT_EQ(versions(read.events), (Versions{4, 5}));
  EXPECT_EQ(read.events[0].payload, "item-4");
  auto later = store.read_stream(topic, "cart", 5).read_all();
  EXPECT_FALSE(later.snapshot);
  EXPECT_EQ(versions(later.events), (Versions{5}));
}

TEST(EventStore, RangeForOverStreamPages) {
  auto topic = es_topic("cpp-es-pages", 2);
  cursus::EventStore store(admin_config());
  for (uint64_t v = 0; v < 5; v++) store.append(topic, "k", v, {"E", "e" + std::to_string(v + 1)});
  std::vector<size_t> sizes;
  std::vector<bool> more;
  Versions seen;
  for (const cursus::EventPage &page : store.read_stream(topic, "k", 1, {2, 0})) {
    sizes.push_back(page.events.size());
    more.push_back(page.has_more);
    EXPECT_EQ(page.completeness, "");
    EXPECT_FALSE(page.head_version);
    EXPECT_FALSE(page.readable_end_offset);
    for (const auto &e : page.events) seen.push_back(e.version);
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 2, 1}));
  EXPECT_EQ(more, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(seen, (Versions{1, 2, 3, 4, 5}));
  // next() by hand; done() once every page was read.
  auto cursor = store.read_stream(topic, "k", 4, {1, 0});
  EXPECT_FALSE(cursor.done());
  auto p1 = cursor.next();
  auto p2 = cursor.next();
  ASSERT_TRUE(p1 && p2);
  EXPECT_EQ(p1->events.at(0).version, 4u);
  EXPECT_EQ(p2->events.at(0).version, 5u);
  EXPECT_TRUE(cursor.done());
  EXPECT_FALSE(cursor.next());
}

TEST(EventStore, HistoryPagesAndCompleteness) {
  auto topic = es_topic("cpp-es-history");
  cursus::EventStore store(admin_config());
  for (uint64_t v = 0; v < 6; v++) store.append(topic, "h", v, {"E", "e"});
  store.save_snapshot(topic, "h", 4, "s4");
  size_t pages = 0;
  Versions seen;
  for (const auto &page : store.history(topic, "h", 1, std::nullopt, {4, 0})) {
    pages++;
    EXPECT_FALSE(page.snapshot);
    EXPECT_EQ(page.completeness, "complete");
    EXPECT_EQ(page.head_version, std::optional<uint64_t>(6));
    for (const auto &e : page.events) seen.push_back(e.version);
  }
  EXPECT_EQ(pages, 2u);
  EXPECT_EQ(seen, (Versions{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(versions(store.history(topic, "h", 2, 3).read_all().events), (Versions{2, 3}));
  auto nobody = store.history(topic, "nobody");
  auto page = nobody.next();
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->events.empty());
  EXPECT_EQ(page->completeness, "complete");
  EXPECT_EQ(page->head_version, std::optional<uint64_t>(0));
}

TEST(EventStore, BrowseAnyTopic) {
  auto topic = unique("cpp-es-browse");
  cursus::Admin(admin_config()).create_topic(topic, 1);
  {
    cursus::Producer p(cursus::Config(cursus::Kind::Producer, {{"bootstrap_servers", broker()}}));
    for (int i = 0; i < 25; i++) p.send(topic, "r-" + std::to_string(i));
  }
  cursus::EventStore store(admin_config());
  size_t pages = 0;
  Strings values;
  for (const auto &page : store.browse(topic, 0, 0, std::nullopt, {10, 0})) {
    pages++;
    EXPECT_EQ(page.readable_end_offset, std::optional<uint64_t>(25));
    for (const auto &r : page.events) {
      EXPECT_EQ(r.offset, values.size());
      EXPECT_EQ(r.version, 0u);  // a plain record, no event
      values.push_back(r.payload);
    }
  }
  EXPECT_EQ(pages, 3u);
  ASSERT_EQ(values.size(), 25u);
  EXPECT_EQ(values.front(), "r-0");
  EXPECT_EQ(values.back(), "r-24");
  auto range = store.browse(topic, 0, 5, 12, {4, 0}).read_all();
  EXPECT_EQ(range.pages, 2u);
  ASSERT_EQ(range.events.size(), 7u);
  EXPECT_EQ(range.events.front().offset, 5u);
  EXPECT_EQ(range.events.back().offset, 11u);
}

/// A counter: the number of events, snapshotted as decimal text.
cursus::Aggregate<long> counter(cursus::EventStore &store, const std::string &topic, std::vector<std::string> *seen,
                                uint64_t every = 3) {
  return cursus::Aggregate<long>::load(
      store, topic, "counter", 0L,
      [seen](long &n, const cursus::StoredEvent &e) {
        n++;
        if (seen) seen->push_back(e.payload);
      },
      [](const std::string &s) { return std::stol(s); }, [](const long &n) { return std::to_string(n); }, every);
}

TEST(EventStore, AggregateFoldsAppendsAndSnapshotsEveryN) {
  auto topic = es_topic("cpp-es-agg");
  cursus::EventStore store(admin_config());
  Strings folded;
  auto agg = counter(store, topic, &folded);
  EXPECT_EQ(agg.state(), 0);
  EXPECT_EQ(agg.version(), 0u);
  EXPECT_FALSE(agg.loaded_snapshot());
  EXPECT_EQ(agg.loaded_events(), 0u);
  for (int i = 0; i < 7; i++) EXPECT_EQ(agg.append({"Counted", "tick-" + std::to_string(i)}).version, uint64_t(i + 1));
  EXPECT_EQ(agg.state(), 7);
  EXPECT_EQ(agg.version(), 7u);
  EXPECT_EQ(folded.size(), 7u);  // appended events are folded in too
  EXPECT_EQ(folded.back(), "tick-6");
  // Saved automatically after the 3rd and the 6th event.
  auto snap = store.read_snapshot(topic, "counter");
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->version, 6u);
  EXPECT_EQ(snap->state, "6");
  // Reloading: the snapshot, then only the event after it.
  folded.clear();
  auto again = counter(store, topic, &folded);
  ASSERT_TRUE(again.loaded_snapshot());
  EXPECT_EQ(again.loaded_snapshot()->version, 6u);
  EXPECT_EQ(again.loaded_events(), 1u);
  EXPECT_EQ(folded, (Strings{"tick-6"}));
  EXPECT_EQ(again.state(), 7);
  EXPECT_EQ(again.version(), 7u);
  again.append({"Counted", "more-0"});
  again.append({"Counted", "more-1"});
  EXPECT_EQ(again.state(), 9);
  EXPECT_EQ(store.read_snapshot(topic, "counter")->state, "9");
  // snapshot_every 0: never due; save_snapshot() by hand.
  auto manual = counter(store, topic, nullptr, 0);
  for (int i = 0; i < 4; i++) manual.append({"Counted", "m"});
  EXPECT_FALSE(manual.snapshot_due());
  EXPECT_EQ(store.read_snapshot(topic, "counter")->version, 9u);
  manual.save_snapshot();
  EXPECT_EQ(store.read_snapshot(topic, "counter")->version, 13u);
  EXPECT_EQ(store.read_snapshot(topic, "counter")->state, "13");
}

TEST(EventStore, AggregateConflictLeavesStateAndVersion) {
  auto topic = es_topic("cpp-es-agg-conflict");
  cursus::EventStore store(admin_config());
  auto mine = counter(store, topic, nullptr, 0);
  auto theirs = counter(store, topic, nullptr, 0);
  theirs.append({"Counted", "theirs"});
  try {
    mine.append({"Counted", "mine"});
    FAIL() << "no conflict";
  } catch (const cursus::VersionConflictError &e) {
    EXPECT_EQ(e.current(), 1u);
  }
  EXPECT_EQ(mine.state(), 0);
  EXPECT_EQ(mine.version(), 0u);
  // Load again, decide again.
  auto reloaded = counter(store, topic, nullptr, 0);
  EXPECT_EQ(reloaded.state(), 1);
  EXPECT_EQ(reloaded.append({"Counted", "mine"}).version, 2u);
}

TEST(EventStore, AggregateAppendKeepsTheEventIdAndReturnsTheStoredEvent) {
  auto topic = es_topic("cpp-es-agg-id");
  cursus::EventStore store(admin_config());
  Strings folded;
  auto agg = counter(store, topic, &folded, 0);
  cursus::Event ev{"Counted", "one", "{\"m\":1}", 2};
  ev.event_id = "caller-1";
  cursus::StoredEvent stored = agg.append(ev);
  cursus::StoredEvent read;
  for (const cursus::EventPage &page : store.read_stream(topic, "counter")) {
    read = page.events.at(0);
    break;
  }
  EXPECT_EQ(stored.version, 1u);
  EXPECT_EQ(stored.offset, read.offset);
  EXPECT_EQ(stored.partition, read.partition);
  EXPECT_EQ(stored.key, "counter");
  EXPECT_EQ(stored.metadata, read.metadata);
  EXPECT_EQ(stored.schema_version, 2u);
  EXPECT_EQ(folded, (Strings{"one"}));  // folded once the append succeeded
  // The library's id rule: nothing appended, nothing folded.
  ev.event_id = "two words";
  EXPECT_THROW(agg.append(ev), cursus::InvalidArgumentError);
  EXPECT_EQ(agg.version(), 1u);
  EXPECT_EQ(folded.size(), 1u);
}

TEST(EventStore, AFailedAutomaticSnapshotIsNoErrorOfTheAppend) {
  auto topic = es_topic("cpp-es-agg-snap");
  cursus::EventStore store(admin_config());
  bool fail = true;
  auto agg = cursus::Aggregate<long>::load(
      store, topic, "counter", 0L, [](long &n, const cursus::StoredEvent &) { n++; },
      [](const std::string &s) { return std::stol(s); },
      [&fail](const long &n) {
        if (fail) throw std::runtime_error("cannot serialise");
        return std::to_string(n);
      },
      1);
  EXPECT_EQ(agg.append({"Counted", "a"}).version, 1u);  // the serialiser threw: logged, not thrown
  EXPECT_TRUE(agg.snapshot_due());
  EXPECT_FALSE(store.read_snapshot(topic, "counter"));
  fail = false;
  agg.append({"Counted", "b"});  // tried again
  EXPECT_FALSE(agg.snapshot_due());
  EXPECT_EQ(store.read_snapshot(topic, "counter")->version, 2u);
}

TEST(EventStore, TopicWithoutEventSourcing) {
  auto topic = unique("cpp-es-plain");
  cursus::Admin(admin_config()).create_topic(topic, 1);
  cursus::EventStore store(admin_config());
  try {
    store.append(topic, "a", 0, {"X", "v"});
    FAIL() << "appended to a plain topic";
  } catch (const cursus::ValidationError &e) {
    EXPECT_EQ(e.code(), "event_sourcing_not_enabled");
    EXPECT_EQ(e.fields().at("topic"), topic);
  }
  EXPECT_THROW(store.stream_version(topic, "a"), cursus::ValidationError);
  // A read fails from begin(); the cursor stays where it was.
  auto cursor = store.read_stream(topic, "a");
  EXPECT_THROW(cursor.begin(), cursus::ValidationError);
  EXPECT_FALSE(cursor.done());
}

TEST(EventStore, BadArgumentsAndClosedStore) {
  auto topic = es_topic("cpp-es-args", 1);
  cursus::EventStore store(admin_config());
  EXPECT_THROW(store.append(topic, "a key", 0, {"X", "v"}), cursus::InvalidArgumentError);
  EXPECT_THROW(store.append(topic, "", 0, {"X", "v"}), cursus::InvalidArgumentError);
  EXPECT_THROW(store.stream_version(topic, "tab\there"), cursus::InvalidArgumentError);
  // A C string ends at a NUL: refused rather than cut short.
  EXPECT_THROW(store.append(topic, "k", 0, {"X", std::string("a\0b", 3)}), cursus::InvalidArgumentError);
  EXPECT_EQ(store.stream_version(topic, "k"), 0u);
  EXPECT_THROW(store.read_stream(topic, "k", 0).read_all(), cursus::ValidationError);  // invalid_from_version
  store.close();
  EXPECT_THROW(store.stream_version(topic, "k"), cursus::ClosedError);
  EXPECT_THROW(store.read_stream(topic, "k").read_all(), cursus::ClosedError);
}

}  // namespace
