// Conformance driver for the C++ binding (include/cursus.hpp only).
//
//   usage: driver <bootstrap host:port> <plan file>
//
// Runs each plan step through the C++ wrapper and prints one JSON line per
// step on stdout (flushed). The contract is conformance/PROTOCOL.md; the
// harness compares the results. Failures are the wrapper's exceptions
// (cursus::Error and its subclasses); a failed step never stops the plan.
#include "cursus.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// A fault of the plan or of the driver (not of the binding): `driver_error`.
struct DriverError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// JSON

std::string json_str(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", c);
          out += esc;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string json_hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out + "\"";
}

template <typename T, typename F>
std::string json_list(const std::vector<T> &items, F render) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); i++) out += (i ? ", " : "") + render(items[i]);
  return out + "]";
}

std::string error_json(const cursus::Error &e) {
  std::string fields;
  for (const auto &[name, value] : e.fields()) fields += (fields.empty() ? "" : ", ") + json_str(name) + ": " + json_str(value);
  return "{\"code\": " + json_str(e.code()) + ", \"class\": " + json_str(e.error_class()) +
         ", \"retryable\": " + (e.retryable() ? "true" : "false") + ", \"fields\": {" + fields + "}}";
}


// ---------------------------------------------------------------------------
// Plan steps

/// Arguments named config.<option> are configuration (PROTOCOL.md, "Plan file").
const std::string kConfigPrefix = "config.";

struct Step {
  std::string op;
  std::map<std::string, std::string> args;
  std::vector<std::pair<std::string, std::string>> config;  // in plan order

  static Step parse(const std::string &line) {
    std::istringstream words(line);
    Step s;
    words >> s.op;
    std::string word;
    while (words >> word) {
      size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0) throw DriverError("argument without name=value: " + word);
      std::string name = word.substr(0, eq), value = word.substr(eq + 1);
      if (name.rfind(kConfigPrefix, 0) == 0)
        s.config.emplace_back(name.substr(kConfigPrefix.size()), value);
      else
        s.args[name] = value;
    }
    return s;
  }

  bool has(const std::string &name) const { return args.count(name) > 0; }

  const std::string &arg(const std::string &name) const {
    auto it = args.find(name);
    if (it == args.end()) throw DriverError(op + ": missing argument " + name);
    return it->second;
  }

  int64_t num(const std::string &name) const {
    const std::string &v = arg(name);
    try {
      size_t used = 0;
      long long n = std::stoll(v, &used);
      if (used == v.size()) return n;
    } catch (const std::exception &) {
    }
    throw DriverError(op + ": " + name + "=" + v + " is not a number");
  }

  template <typename T>
  T unsigned_num(const std::string &name) const {
    int64_t n = num(name);
    if (n < 0 || static_cast<uint64_t>(n) > std::numeric_limits<T>::max())
      throw DriverError(op + ": " + name + " is out of range");
    return static_cast<T>(n);
  }

  /// The decoded hex argument, or std::nullopt when absent.
  std::optional<std::string> bytes(const std::string &name) const {
    auto it = args.find(name);
    if (it == args.end()) return std::nullopt;
    const std::string &h = it->second;
    auto nibble = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      throw DriverError(op + ": " + name + " is not hex");
    };
    if (h.size() % 2) throw DriverError(op + ": " + name + " is not hex");
    std::string out;
    for (size_t i = 0; i < h.size(); i += 2) out += static_cast<char>(nibble(h[i]) << 4 | nibble(h[i + 1]));
    return out;
  }
};

// ---------------------------------------------------------------------------

class Driver {
 public:
  explicit Driver(std::string bootstrap) : bootstrap_(std::move(bootstrap)) {}

  // Producers and consumers are left as they are at exit: their destructors
  // would close them (flush, leave the group, maybe commit), which the plan
  // did not ask for. The process ends right after.
  ~Driver() {
    for (auto &entry : producers_) static_cast<void>(entry.second.release());
    for (auto &entry : consumers_) static_cast<void>(entry.second.release());
  }

  /// Runs one step and returns its result object (JSON); throws on failure.
  std::string run(const Step &s) {
    const std::string &op = s.op;
    if (op == "admin_open") {
      admins_[s.arg("name")] = std::make_unique<cursus::Admin>(config(s, cursus::Kind::Admin));
      return "{}";
    }
    if (op == "admin_close") {
      named(admins_, s.arg("name"), "admin").close();
      return "{}";
    }
    if (op == "create_topic") {
      std::map<std::string, std::string> options{{"partitions", s.arg("partitions")}};
      // read_acl / write_acl: comma-separated principals, as the wrapper takes them.
      for (const char *field : {"replication_factor", "auth_policy", "read_acl", "write_acl", "retention_bytes",
                                "idempotent", "event_sourcing", "aggregate_replay"})
        if (s.has(field)) options[field] = s.arg(field);
      auto created = admin(s).create_topic(s.arg("topic"), options);
      return "{\"partitions\": " + std::to_string(created.partitions) + "}";
    }
    if (op == "delete_topic") {
      bool if_exists = s.has("if_exists") && s.arg("if_exists") == "true";
      bool deleted = admin(s).delete_topic(s.arg("topic"), if_exists).deleted;
      return std::string("{\"deleted\": ") + (deleted ? "true" : "false") + "}";
    }
    if (op == "truncate_topic") {
      auto r = admin(s).truncate_topic(s.arg("topic"), s.unsigned_num<uint64_t>("expected_revision"));
      return "{\"revision\": " + std::to_string(r.revision) + "}";
    }
    if (op == "alter_topic") {
      int64_t min = s.num("min_in_sync_replicas");
      admin(s).alter_topic_config(s.arg("topic"),
                                  min < 0 ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(min)));
      return "{}";
    }
    if (op == "cluster_status") {
      auto c = admin(s).cluster_status();
      auto opt = [](const std::optional<std::string> &v) { return v ? json_str(*v) : std::string("null"); };
      std::string led;
      for (const auto &p : c.partitions)
        if (p.leader)
          led += (led.empty() ? "" : ", ") + json_str(p.topic + "/" + std::to_string(p.partition)) + ": " +
                 json_str(*p.leader);
      auto ids = [](const std::vector<std::string> &v) {
        std::string out;
        for (const auto &id : v) out += (out.empty() ? "" : ", ") + json_str(id);
        return "[" + out + "]";
      };
      std::string producers;
      for (const auto &p : c.partitions)
        producers += (producers.empty() ? "" : ", ") + json_str(p.topic + "/" + std::to_string(p.partition)) + ": " +
                     std::to_string(p.producers);
      return "{\"brokers\": " + std::to_string(c.brokers.size()) + ", \"partitions\": " +
             std::to_string(c.partitions.size()) + ", \"raft_leader\": " + opt(c.raft_leader) +
             ", \"leaderless\": " + std::to_string(c.leaderless) + ", \"under_replicated\": " +
             std::to_string(c.under_replicated) + ", \"led_by\": {" + led + "}, \"voters\": " + ids(c.voters) +
             ", \"learners\": " + ids(c.learners) + ", \"transaction_coordinator_shards\": " +
             (c.transaction_coordinator_shards ? std::to_string(*c.transaction_coordinator_shards)
                                               : std::string("null")) +
             ", \"producers\": {" + producers + "}}";
    }
    if (op == "elect_leader") {
      auto e = admin(s).elect_leader(s.arg("topic"), s.unsigned_num<uint32_t>("partition"), s.arg("broker"));
      return "{\"previous_leader\": " + (e.previous_leader ? json_str(*e.previous_leader) : std::string("null")) +
             ", \"leader\": " + json_str(e.leader) + ", \"leader_epoch\": " + std::to_string(e.leader_epoch) +
             ", \"changed\": " + (e.changed ? "true" : "false") + "}";
    }
    if (op == "reassign_partition") {
      std::vector<std::string> replicas;
      std::stringstream list(s.arg("replicas"));
      for (std::string id; std::getline(list, id, ',');) replicas.push_back(id);
      auto r = admin(s).reassign_partition(s.arg("topic"), s.unsigned_num<uint32_t>("partition"), replicas);
      return std::string("{\"done\": ") + (r.done ? "true" : "false") +
             ", \"replicas\": " + json_list(r.replicas, json_str) + ", \"isr\": " + json_list(r.isr, json_str) +
             ", \"leader\": " + (r.leader ? json_str(*r.leader) : std::string("null")) +
             ", \"target\": " + json_list(r.target, json_str) + "}";
    }
    if (op == "list_cluster") {
      std::vector<std::string> ids;
      for (const auto &b : admin(s).list_cluster()) ids.push_back(b.id);
      return "{\"brokers\": " + json_list(ids, json_str) + "}";
    }
    if (op == "list_topics") {
      return "{\"topics\": " + json_list(admin(s).list_topics(), json_str) + "}";
    }
    if (op == "describe_topic") {
      auto d = admin(s).describe_topic(s.arg("topic"));
      return "{\"partitions\": " + std::to_string(d.partitions.size()) + "}";
    }
    if (op == "list_offsets") {
      auto o = offsets(s);
      return "{\"earliest\": " + std::to_string(o.earliest) + ", \"latest\": " + std::to_string(o.latest) + "}";
    }
    if (op == "await_earliest") {
      auto min = s.unsigned_num<uint64_t>("min");
      auto deadline = Clock::now() + milliseconds(s.num("timeout_ms"));
      for (;;) {
        auto o = offsets(s);
        auto now = Clock::now();
        if (o.earliest >= min || now >= deadline) return "{\"earliest\": " + std::to_string(o.earliest) + "}";
        std::this_thread::sleep_for(std::min<Clock::duration>(milliseconds(50), deadline - now));
      }
    }
    if (op == "producer_open") {
      producers_[s.arg("name")] = std::make_unique<cursus::Producer>(config(s, cursus::Kind::Producer));
      return "{}";
    }
    if (op == "produce") return produce(s);
    if (op == "produce_many") return produce_many(s);
    if (op == "flush") {
      named(producers_, s.arg("producer"), "producer").flush();
      return "{}";
    }
    if (op == "producer_close") {
      named(producers_, s.arg("name"), "producer").close(milliseconds(30000));
      return "{}";
    }
    if (op == "consumer_open") {
      consumers_[s.arg("name")] = std::make_unique<cursus::Consumer>(config(s, cursus::Kind::Consumer));
      return "{}";
    }
    if (op == "subscribe") {
      auto &c = consumer(s);
      if (s.has("pattern")) {
        c.subscribe_pattern(s.arg("pattern"));
      } else {
        std::vector<std::string> topics;
        std::string all = s.arg("topics");
        for (size_t start = 0;;) {
          size_t comma = all.find(',', start);
          topics.push_back(all.substr(start, comma - start));
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
        c.subscribe(topics);
      }
      return "{}";
    }
    if (op == "poll") return poll(s, false);
    if (op == "take") return poll(s, true);
    if (op == "poll_once") return poll_once(s);
    if (op == "wakeup") {
      consumer(s).wakeup();
      return "{}";
    }
    if (op == "commit") {
      consumer(s).commit();
      return "{}";
    }
    if (op == "commit_offsets") {
      consumer(s).commit_offsets({{cursus::TopicPartition{s.arg("topic"), s.unsigned_num<uint32_t>("partition")},
                                   s.unsigned_num<uint64_t>("offset")}});
      return "{}";
    }
    if (op == "committed") {
      auto offset = consumer(s).committed(s.arg("topic"), s.unsigned_num<uint32_t>("partition"));
      return "{\"offset\": " + (offset ? std::to_string(*offset) : std::string("null")) + "}";
    }
    if (op == "assignment") {
      auto parts = consumer(s).assignment();
      return "{\"partitions\": " + json_list(parts, [](const cursus::TopicPartition &tp) {
               return json_str(tp.topic + ":" + std::to_string(tp.partition));
             }) + "}";
    }
    if (op == "consumer_close") {
      named(consumers_, s.arg("name"), "consumer").close();
      return "{}";
    }
    if (op == "seek") {
      consumer(s).seek(cursus::TopicPartition{s.arg("topic"), s.unsigned_num<uint32_t>("partition")},
                       s.unsigned_num<uint64_t>("offset"));
      return "{}";
    }
    if (op == "position") {
      auto offset = consumer(s).position(cursus::TopicPartition{s.arg("topic"), s.unsigned_num<uint32_t>("partition")});
      return "{\"offset\": " + std::to_string(offset) + "}";
    }
    if (op == "pause") {
      consumer(s).pause(partition_list(s.arg("partitions")));
      return "{}";
    }
    if (op == "resume") {
      consumer(s).resume(partition_list(s.arg("partitions")));
      return "{}";
    }
    if (op == "paused") return "{\"partitions\": " + tp_names(consumer(s).paused()) + "}";
    if (op == "committed_list") {
      auto committed = consumer(s).committed(partition_list(s.arg("partitions")));
      return "{\"committed\": " + json_list(committed, [](const auto &c) {
               return c.second ? std::to_string(*c.second) : std::string("null");
             }) + "}";
    }
    if (op == "rebalance_listen") return rebalance_listen(s);
    if (op == "rebalance_events") {
      auto it = rebalance_.find(s.arg("consumer"));
      if (it == rebalance_.end()) throw DriverError("no rebalance listener of consumer " + s.arg("consumer"));
      std::lock_guard<std::mutex> lock(it->second->mu);
      return "{\"events\": " + json_list(it->second->events, [](const std::string &e) { return e; }) + "}";
    }
    if (op == "txn_init") {
      producer(s).init_transactions();
      return "{}";
    }
    if (op == "txn_begin") {
      producer(s).begin_transaction();
      return "{}";
    }
    if (op == "txn_send_offsets") {
      producer(s).send_offsets_to_transaction(consumer(s));
      return "{}";
    }
    if (op == "txn_commit") {
      producer(s).commit_transaction();
      return "{}";
    }
    if (op == "txn_abort") {
      producer(s).abort_transaction();
      return "{}";
    }
    if (op == "txn_append_stream") {
      auto a = producer(s).append_stream(s.arg("topic"), text(s, "key"), s.unsigned_num<uint64_t>("expected_version"),
                                         step_event(s));
      return appended_json(a);
    }
    if (op.rfind("es_", 0) == 0) return event_store_op(s);
    throw DriverError("unknown op " + op);
  }

 private:
  template <typename T>
  static T &named(std::map<std::string, std::unique_ptr<T>> &table, const std::string &name, const char *kind) {
    auto it = table.find(name);
    if (it == table.end()) throw DriverError(std::string("no ") + kind + " named " + name);
    return *it->second;
  }

  /// A config for `kind`: bootstrap_servers first, then the plan's configuration in order.
  cursus::Config config(const Step &s, cursus::Kind kind) const {
    cursus::Config c(kind);
    c.set("bootstrap_servers", bootstrap_);
    for (const auto &[key, value] : s.config) c.set(key, value);
    return c;
  }

  /// The admin named by admin=, or the implicit one (opened on first use).
  cursus::Admin &admin(const Step &s) {
    if (s.has("admin")) return named(admins_, s.arg("admin"), "admin");
    if (!implicit_admin_)
      implicit_admin_ =
          std::make_unique<cursus::Admin>(cursus::Config(cursus::Kind::Admin, {{"bootstrap_servers", bootstrap_}}));
    return *implicit_admin_;
  }

  cursus::Producer &producer(const Step &s) { return named(producers_, s.arg("producer"), "producer"); }
  cursus::Consumer &consumer(const Step &s) { return named(consumers_, s.arg("consumer"), "consumer"); }

  cursus::PartitionOffsets offsets(const Step &s) {
    auto partition = s.unsigned_num<uint32_t>("partition");
    for (const auto &o : admin(s).list_offsets(s.arg("topic"), partition))
      if (o.partition == partition) return o;
    throw DriverError("list_offsets: no partition " + std::to_string(partition) + " in the reply");
  }

  std::string produce(const Step &s) {
    auto &p = producer(s);
    std::optional<std::string> value = s.bytes("value");
    if (!value) {
      auto fill = s.bytes("value_fill");
      if (!fill || fill->size() != 1) throw DriverError("produce: needs value or value_fill (one byte) and value_len");
      value = std::string(s.unsigned_num<size_t>("value_len"), (*fill)[0]);
    }
    std::optional<std::string> key = s.bytes("key");
    int32_t partition = s.has("partition") ? static_cast<int32_t>(s.num("partition")) : -1;
    std::optional<int64_t> timestamp;
    if (s.has("timestamp")) timestamp = s.num("timestamp");
    std::optional<std::string> metadata = s.bytes("metadata");
    cursus::RecordMetadata md{};
    if (metadata || s.has("traceparent")) {
      // Records with metadata or a trace context go through SendOptions;
      // the others keep exercising the plain send.
      cursus::SendOptions options;
      if (key) options.key = *key;
      options.partition = partition;
      options.timestamp = timestamp;
      options.metadata = metadata;
      if (s.has("traceparent")) {
        options.trace_context = cursus::TraceContext{
            s.arg("traceparent"), s.has("tracestate") ? std::optional<std::string>(s.arg("tracestate")) : std::nullopt};
      }
      md = p.send(s.arg("topic"), *value, options);
    } else {
      md = p.send(s.arg("topic"), *value, key ? std::optional<std::string_view>(*key) : std::nullopt, partition,
                  timestamp);
    }
    return "{\"partition\": " + std::to_string(md.partition) +
           ", \"offset\": " + (md.offset < 0 ? std::string("null") : std::to_string(md.offset)) +
           ", \"timestamp\": " + std::to_string(md.timestamp) + "}";
  }

  /// A comma-separated "topic:p" list.
  static cursus::Partitions partition_list(const std::string &all) {
    cursus::Partitions out;
    for (size_t start = 0;;) {
      size_t comma = all.find(',', start);
      std::string item = all.substr(start, comma - start);
      size_t colon = item.rfind(':');
      if (colon == std::string::npos) throw DriverError("partitions: " + item + " is not topic:p");
      out.push_back(cursus::TopicPartition{item.substr(0, colon),
                                           static_cast<uint32_t>(std::stoul(item.substr(colon + 1)))});
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }

  /// Partitions as a sorted JSON list of "topic:p".
  static std::string tp_names(const cursus::Partitions &partitions) {
    std::vector<std::string> names;
    for (const auto &tp : partitions) names.push_back(tp.topic + ":" + std::to_string(tp.partition));
    std::sort(names.begin(), names.end());
    return json_list(names, [](const std::string &n) { return json_str(n); });
  }

  /// What a consumer's rebalance listener was told (JSON objects), kept
  /// after consumer_close; appended on the consumer's listener thread.
  struct EventLog {
    std::mutex mu;
    std::vector<std::string> events;
  };

  std::string rebalance_listen(const Step &s) {
    auto &c = consumer(s);
    auto &log = rebalance_[s.arg("consumer")];
    if (!log) log = std::make_shared<EventLog>();
    std::optional<uint64_t> seek_to;
    if (s.has("seek_to")) seek_to = s.unsigned_num<uint64_t>("seek_to");
    bool commit = s.has("commit_on_revoke") && s.arg("commit_on_revoke") == "true";
    auto record = [log](const char *kind, const cursus::Partitions &parts, const std::string &extra) {
      std::lock_guard<std::mutex> lock(log->mu);
      log->events.push_back("{\"kind\": " + json_str(kind) + ", \"partitions\": " + tp_names(parts) + extra + "}");
    };
    cursus::RebalanceListener l;
    cursus::Consumer *cp = &c;  // the map owns it (unique_ptr): the address is stable
    l.on_assigned = [cp, seek_to, record](const cursus::Partitions &parts) {
      if (seek_to)
        for (const auto &tp : parts) {
          try {
            cp->seek(tp, *seek_to);
          } catch (const cursus::Error &) {
          }
        }
      record("assigned", parts, "");
    };
    l.on_revoked = [cp, commit, record](const cursus::Partitions &parts) {
      std::string extra;
      if (commit) {
        try {
          cp->commit();
        } catch (const cursus::Error &e) {
          extra = ", \"commit_error\": " + json_str(e.code());
        }
      }
      record("revoked", parts, extra);
    };
    l.on_lost = [record](const cursus::Partitions &parts) { record("lost", parts, ""); };
    c.set_rebalance_listener(std::move(l));
    return "{}";
  }

  std::string produce_many(const Step &s) {
    auto &p = producer(s);
    const std::string &topic = s.arg("topic");
    auto count = s.unsigned_num<size_t>("count");
    std::string value_prefix = s.bytes("value_prefix").value_or("");
    std::optional<std::string> key_prefix = s.bytes("key_prefix");
    std::vector<std::future<cursus::RecordMetadata>> deliveries;
    try {
      for (size_t i = 0; i < count; i++) {
        std::string suffix = std::to_string(i);
        std::optional<std::string> key;
        if (key_prefix) key = *key_prefix + suffix;
        auto promise = std::make_shared<std::promise<cursus::RecordMetadata>>();
        deliveries.push_back(promise->get_future());
        // Throws when the record cannot be queued (its callback never runs).
        p.send(
            topic, value_prefix + suffix,
            [promise](const cursus::DeliveryReport &r) {
              if (r.error)
                promise->set_exception(r.error);
              else
                promise->set_value(r.metadata);
            },
            key ? std::optional<std::string_view>(*key) : std::nullopt);
      }
    } catch (const cursus::Error &) {
      p.flush();  // the records already queued complete before the step ends
      throw;
    }
    p.flush();
    std::vector<int32_t> partitions;
    for (auto &d : deliveries) partitions.push_back(d.get().partition);  // first failure throws
    return "{\"count\": " + std::to_string(count) +
           ", \"partitions\": " + json_list(partitions, [](int32_t n) { return std::to_string(n); }) + "}";
  }

  /// `poll` (exact false) polls until at least max(count, 1) records
  /// arrived; `take` (exact true) until exactly `count` did. Consumer::poll
  /// returns one message, so both receive no more than they stop at.
  std::string poll(const Step &s, bool exact) {
    auto &c = consumer(s);
    auto want = s.unsigned_num<size_t>("count");
    size_t stop_at = exact ? want : std::max<size_t>(want, 1);
    auto deadline = Clock::now() + milliseconds(s.num("timeout_ms"));
    std::vector<std::string> records;
    while (records.size() < stop_at) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      if (auto m = c.poll(std::max(left, milliseconds(0)))) records.push_back(message_json(*m));
      if (Clock::now() >= deadline) break;
    }
    return "{\"records\": " + json_list(records, [](const std::string &r) { return r; }) + "}";
  }

  /// One call of poll: empty before its deadline only when woken.
  std::string poll_once(const Step &s) {
    auto timeout = milliseconds(s.num("timeout_ms"));
    auto start = Clock::now();
    auto m = consumer(s).poll(timeout);
    bool early_empty = !m && Clock::now() - start < timeout;
    return std::string("{\"records\": [") + (m ? message_json(*m) : "") +
           "], \"early_empty\": " + (early_empty ? "true" : "false") + "}";
  }

  /// A polled message as a record object of the protocol.
  static std::string message_json(const cursus::Message &m) {
    std::string key = m.has_key() ? json_hex(m.key()) : "null";
    auto metadata = m.metadata();
    auto event = m.event();
    auto context = m.trace_context();  // the binding's reading, never parsed here
    std::string traceparent = context ? json_str(context->traceparent) : "null";
    std::string tracestate = context && context->tracestate ? json_str(*context->tracestate) : "null";
    return "{\"topic\": " + json_str(m.topic()) + ", \"partition\": " + std::to_string(m.partition()) +
           ", \"offset\": " + std::to_string(m.offset()) + ", \"key\": " + key + ", \"value\": " + json_hex(m.payload()) +
           ", \"timestamp\": " + std::to_string(m.timestamp()) +
           ", \"metadata\": " + (metadata ? json_hex(*metadata) : "null") + ", \"traceparent\": " + traceparent +
           ", \"tracestate\": " + tracestate + ", \"event_type\": " + (event ? json_str(event->type) : "null") +
           ", \"aggregate_version\": " + (event ? std::to_string(event->aggregate_version) : "null") + "}";
  }

  // -------------------------------------------------------------------------
  // The event store (es_* ops). Keys, payloads, metadata and states are byte
  // strings holding UTF-8 text.

  cursus::EventStore &store(const Step &s) { return named(stores_, s.arg("store"), "store"); }

  /// A required text argument (hex in the plan).
  std::string text(const Step &s, const std::string &name) {
    auto v = s.bytes(name);
    if (!v) throw DriverError(s.op + ": missing argument " + name);
    return *v;
  }

  static std::string snapshot_json(const std::optional<cursus::Snapshot> &snap) {
    if (!snap) return "null";
    return "{\"version\": " + std::to_string(snap->version) + ", \"state\": " + json_hex(snap->state) + "}";
  }

  static std::string event_json(const cursus::StoredEvent &e) {
    return "{\"topic\": " + json_str(e.topic) + ", \"partition\": " + std::to_string(e.partition) +
           ", \"offset\": " + std::to_string(e.offset) + ", \"key\": " + (e.key.empty() ? "null" : json_hex(e.key)) +
           ", \"value\": " + json_hex(e.payload) + ", \"version\": " + std::to_string(e.version) +
           ", \"event_type\": " + json_str(e.event_type) + ", \"schema_version\": " +
           std::to_string(e.schema_version) + ", \"metadata\": " + json_hex(e.metadata) + "}";
  }

  /// The step's event: event_type, value, metadata, schema_version, event_id.
  cursus::Event step_event(const Step &s) {
    cursus::Event event(s.has("event_type") ? s.arg("event_type") : "", text(s, "value"),
                        s.bytes("metadata").value_or(""),
                        s.has("schema_version") ? s.unsigned_num<uint32_t>("schema_version") : 0u);
    if (s.has("event_id")) event.event_id = s.arg("event_id");
    return event;
  }

  static std::string appended_json(const cursus::Appended &a) {
    return "{\"version\": " + std::to_string(a.version) + ", \"offset\": " + std::to_string(a.offset) +
           ", \"partition\": " + std::to_string(a.partition) + "}";
  }

  static cursus::PageLimits limits(const Step &s, const char *name) {
    return cursus::PageLimits{s.has(name) ? s.unsigned_num<uint32_t>(name) : 0u, 0u};
  }

  std::string event_store_op(const Step &s) {
    const std::string &op = s.op;
    if (op == "es_open") {
      stores_[s.arg("name")] = std::make_unique<cursus::EventStore>(config(s, cursus::Kind::Admin));
      return "{}";
    }
    if (op == "es_close") {
      named(stores_, s.arg("name"), "store").close();
      return "{}";
    }
    if (op == "es_append") {
      cursus::Event event(s.has("event_type") ? s.arg("event_type") : "", text(s, "value"),
                          s.bytes("metadata").value_or(""),
                          s.has("schema_version") ? s.unsigned_num<uint32_t>("schema_version") : 0u);
      auto a = store(s).append(s.arg("topic"), text(s, "key"), s.unsigned_num<uint64_t>("expected_version"), event);
      return "{\"version\": " + std::to_string(a.version) + ", \"offset\": " + std::to_string(a.offset) +
             ", \"partition\": " + std::to_string(a.partition) + "}";
    }
    if (op == "es_append_id") {
      auto a = store(s).append(s.arg("topic"), text(s, "key"), s.unsigned_num<uint64_t>("expected_version"),
                               step_event(s));
      return appended_json(a);
    }
    if (op == "es_replay_proof") {
      std::optional<uint64_t> expected;
      if (s.has("expected_last_sequence")) expected = s.unsigned_num<uint64_t>("expected_last_sequence");
      auto p = store(s).replay_proof(s.arg("topic"), text(s, "key"), expected);
      return "{\"status\": " + json_str(p.status) + ", \"event_count\": " + std::to_string(p.event_count) +
             ", \"earliest_sequence\": " + std::to_string(p.earliest_sequence) +
             ", \"latest_sequence\": " + std::to_string(p.latest_sequence) +
             ", \"first_event_id\": " + json_str(p.first_event_id) + ", \"last_event_id\": " +
             json_str(p.last_event_id) + ", \"sequence_complete\": " + (p.sequence_complete ? "true" : "false") +
             ", \"retention_complete\": " + (p.retention_complete ? "true" : "false") + "}";
    }
    if (op == "es_event_range") {
      auto range = store(s).event_range(s.arg("topic"), text(s, "key"), s.unsigned_num<uint64_t>("from_sequence"),
                                        s.unsigned_num<uint64_t>("to_sequence"),
                                        s.has("max_records") ? s.unsigned_num<uint32_t>("max_records") : 0u);
      return "{\"status\": " + json_str(range.proof.status) + ", \"records\": " +
             json_list(range.events, [](const cursus::RangeEvent &e) {
               return "{\"offset\": " + std::to_string(e.offset) + ", \"version\": " + std::to_string(e.sequence) +
                      ", \"event_id\": " + json_str(e.event_id) + ", \"event_type\": " + json_str(e.event_type) +
                      ", \"value\": " + json_hex(e.payload) + "}";
             }) +
             "}";
    }
    if (op == "es_stream_version")
      return "{\"version\": " + std::to_string(store(s).stream_version(s.arg("topic"), text(s, "key"))) + "}";
    if (op == "es_save_snapshot") {
      store(s).save_snapshot(s.arg("topic"), text(s, "key"), s.unsigned_num<uint64_t>("version"), text(s, "state"));
      return "{}";
    }
    if (op == "es_read_snapshot")
      return "{\"snapshot\": " + snapshot_json(store(s).read_snapshot(s.arg("topic"), text(s, "key"))) + "}";
    if (op == "es_read_stream") {
      auto read = store(s)
                      .read_stream(s.arg("topic"), text(s, "key"), s.unsigned_num<uint64_t>("from_version"),
                                   limits(s, "max_events"))
                      .read_all();
      return "{\"snapshot\": " + snapshot_json(read.snapshot) + ", \"records\": " + json_list(read.events, event_json) +
             ", \"pages\": " + std::to_string(read.pages) + "}";
    }
    if (op == "es_history") {
      std::optional<uint64_t> to;
      if (s.has("to_version")) to = s.unsigned_num<uint64_t>("to_version");
      auto cursor = store(s).history(s.arg("topic"), text(s, "key"), s.unsigned_num<uint64_t>("from_version"), to,
                                     limits(s, "max_records"));
      std::vector<cursus::StoredEvent> events;
      std::optional<cursus::EventPage> last;
      size_t pages = 0;
      for (auto &page : cursor) {
        pages++;
        for (auto &e : page.events) events.push_back(std::move(e));
        last = std::move(page);
      }
      if (!last) throw DriverError("es_history: no page");
      return "{\"records\": " + json_list(events, event_json) + ", \"completeness\": " + json_str(last->completeness) +
             ", \"head_version\": " + std::to_string(last->head_version.value_or(0)) +
             ", \"pages\": " + std::to_string(pages) + "}";
    }
    if (op == "es_browse") {
      std::optional<uint64_t> to;
      if (s.has("to_offset")) to = s.unsigned_num<uint64_t>("to_offset");
      auto read = store(s)
                      .browse(s.arg("topic"), s.unsigned_num<uint32_t>("partition"),
                              s.unsigned_num<uint64_t>("from_offset"), to, limits(s, "max_records"))
                      .read_all();
      return "{\"records\": " + json_list(read.events, event_json) + ", \"pages\": " + std::to_string(read.pages) +
             "}";
    }
    if (op == "es_aggregate") {
      // A counter: the snapshot's number plus one per event; Aggregate saves
      // the state (decimal) whenever a snapshot is due.
      std::string prefix = text(s, "value_prefix");
      auto agg = cursus::Aggregate<uint64_t>::load(
          store(s), s.arg("topic"), text(s, "key"), 0,
          [](uint64_t &n, const cursus::StoredEvent &) { n++; },
          [](const std::string &state) {
            size_t used = 0;
            uint64_t n = std::stoull(state, &used);
            if (used != state.size()) throw DriverError("snapshot state " + state + " is no counter");
            return n;
          },
          [](const uint64_t &n) { return std::to_string(n); }, s.unsigned_num<uint64_t>("snapshot_every"));
      std::string last_offset = "null";
      for (uint64_t i = 0, n = s.unsigned_num<uint64_t>("appends"); i < n; i++) {
        cursus::Event ev("Counted", prefix + std::to_string(i));
        if (s.has("event_id_prefix")) ev.event_id = s.arg("event_id_prefix") + std::to_string(i);
        last_offset = std::to_string(agg.append(ev).offset);
      }
      const auto &loaded = agg.loaded_snapshot();
      return "{\"version\": " + std::to_string(agg.version()) + ", \"state\": " + std::to_string(agg.state()) +
             ", \"loaded_snapshot_version\": " + (loaded ? std::to_string(loaded->version) : std::string("null")) +
             ", \"loaded_events\": " + std::to_string(agg.loaded_events()) + ", \"last_offset\": " + last_offset +
             "}";
    }
    throw DriverError("unknown op " + op);
  }

  std::string bootstrap_;
  std::unique_ptr<cursus::Admin> implicit_admin_;
  std::map<std::string, std::unique_ptr<cursus::Admin>> admins_;
  std::map<std::string, std::unique_ptr<cursus::Producer>> producers_;
  std::map<std::string, std::unique_ptr<cursus::Consumer>> consumers_;
  std::map<std::string, std::unique_ptr<cursus::EventStore>> stores_;
  std::map<std::string, std::shared_ptr<EventLog>> rebalance_;

 public:
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;
};

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <bootstrap host:port> <plan file>\n";
    return 2;
  }
  std::ifstream plan(argv[2]);
  if (!plan) {
    std::cerr << "cannot read plan " << argv[2] << "\n";
    return 2;
  }
  Driver driver(argv[1]);
  std::string line;
  size_t n = 0;
  while (std::getline(plan, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::string out;
    try {
      std::string result = driver.run(Step::parse(line));
      out = "{\"step\": " + std::to_string(n) + ", \"ok\": true, \"result\": " + result + "}";
    } catch (const cursus::Error &e) {
      std::cerr << "binding error: " << e.what() << "\n";
      out = "{\"step\": " + std::to_string(n) + ", \"ok\": false, \"error\": " + error_json(e) + "}";
    } catch (const std::exception &e) {
      std::cerr << "driver error: " << e.what() << "\n";
      out = "{\"step\": " + std::to_string(n) +
            ", \"ok\": false, \"error\": {\"code\": \"driver_error\", \"class\": \"internal\", \"retryable\": false, "
            "\"fields\": {}}}";
    }
    std::cout << out << std::endl;  // one line per step, flushed
    n++;
  }
  return 0;
}
