// cursus.hpp: header-only C++17 RAII wrapper over the libcursus C ABI (cursus.h).
//
// - Admin, Producer, Consumer and Message own their C handle, are move-only
//   and release it in their destructor.
// - Every failure throws a subclass of cursus::Error chosen by the error class
//   (ValidationError, RoutingError, FencingError, ...; TimeoutError,
//   ClosedError and InvalidArgumentError for local failures). cursus::Error
//   carries code(), error_class(), retryable(), fields() and status().
// - Payload and key accessors return std::string_view over the message's own
//   buffer (binary safe): valid while the Message lives.
// - Thread safety is that of the C functions (see cursus.h): Admin and
//   Producer may be shared between threads; a Consumer is meant for one
//   thread at a time.
#ifndef CURSUS_HPP
#define CURSUS_HPP

#include "cursus.h"

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cursus {

/// The library's runtime version, e.g. "0.1.0".
inline std::string version() { return cursus_version(); }

/// Base of every exception thrown by this wrapper.
class Error : public std::runtime_error {
 public:
  Error(cursus_status_t status, std::string code, std::string error_class, bool retryable,
        std::string message, std::map<std::string, std::string> fields)
      : std::runtime_error(code + " (" + error_class + "): " + message),
        status_(status),
        code_(std::move(code)),
        class_(std::move(error_class)),
        retryable_(retryable),
        message_(std::move(message)),
        fields_(std::move(fields)) {}

  /// The C status (CURSUS_ERR_...).
  cursus_status_t status() const noexcept { return status_; }
  /// Machine-readable code, e.g. "topic_not_found".
  const std::string &code() const noexcept { return code_; }
  /// Class name: validation, authorization, routing, availability, conflict,
  /// fencing, not_found or internal.
  const std::string &error_class() const noexcept { return class_; }
  /// Whether retrying (with backoff) may succeed.
  bool retryable() const noexcept { return retryable_; }
  /// Human-readable message.
  const std::string &message() const noexcept { return message_; }
  /// Structured fields (e.g. "leader").
  const std::map<std::string, std::string> &fields() const noexcept { return fields_; }

 private:
  cursus_status_t status_;
  std::string code_, class_;
  bool retryable_;
  std::string message_;
  std::map<std::string, std::string> fields_;
};

#define CURSUS_HPP_ERROR(Name)          \
  class Name : public Error {           \
   public:                              \
    using Error::Error;                 \
  };
/// Class `validation`.
CURSUS_HPP_ERROR(ValidationError)
/// Class `authorization`.
CURSUS_HPP_ERROR(AuthorizationError)
/// Class `routing`.
CURSUS_HPP_ERROR(RoutingError)
/// Class `availability`.
CURSUS_HPP_ERROR(AvailabilityError)
/// Class `conflict`.
CURSUS_HPP_ERROR(ConflictError)
/// Class `fencing`.
CURSUS_HPP_ERROR(FencingError)
/// Class `not_found`.
CURSUS_HPP_ERROR(NotFoundError)
/// Class `internal`.
CURSUS_HPP_ERROR(InternalError)
#undef CURSUS_HPP_ERROR
/// A deadline passed (class availability, retryable).
class TimeoutError : public AvailabilityError {
 public:
  using AvailabilityError::AvailabilityError;
};
/// Use of a closed object (class validation).
class ClosedError : public ValidationError {
 public:
  using ValidationError::ValidationError;
};
/// An invalid argument, option or handle (class validation).
class InvalidArgumentError : public ValidationError {
 public:
  using ValidationError::ValidationError;
};

namespace detail {

inline std::string str(const char *s) { return s ? std::string(s) : std::string(); }

/// Throws the exception matching `status`, consuming `err`.
[[noreturn]] inline void throw_error(cursus_status_t status, cursus_error_t *err) {
  std::unique_ptr<cursus_error_t, void (*)(cursus_error_t *)> guard(err, cursus_error_free);
  std::map<std::string, std::string> fields;
  for (size_t i = 0, n = cursus_error_field_count(err); i < n; i++)
    fields.emplace(str(cursus_error_field_name(err, i)), str(cursus_error_field_value(err, i)));
  std::string code = err ? str(cursus_error_code(err)) : "internal_error";
  std::string cls = err ? str(cursus_error_class_name(err)) : "internal";
  std::string msg = err ? str(cursus_error_message(err)) : "no error details";
  bool retryable = err && cursus_error_retryable(err);
#define CURSUS_HPP_THROW(E) throw E(status, code, cls, retryable, msg, std::move(fields))
  switch (status) {
    case CURSUS_ERR_VALIDATION: CURSUS_HPP_THROW(ValidationError);
    case CURSUS_ERR_AUTHORIZATION: CURSUS_HPP_THROW(AuthorizationError);
    case CURSUS_ERR_ROUTING: CURSUS_HPP_THROW(RoutingError);
    case CURSUS_ERR_AVAILABILITY: CURSUS_HPP_THROW(AvailabilityError);
    case CURSUS_ERR_CONFLICT: CURSUS_HPP_THROW(ConflictError);
    case CURSUS_ERR_FENCING: CURSUS_HPP_THROW(FencingError);
    case CURSUS_ERR_NOT_FOUND: CURSUS_HPP_THROW(NotFoundError);
    case CURSUS_ERR_TIMEOUT: CURSUS_HPP_THROW(TimeoutError);
    case CURSUS_ERR_CLOSED: CURSUS_HPP_THROW(ClosedError);
    case CURSUS_ERR_INVALID_ARGUMENT: CURSUS_HPP_THROW(InvalidArgumentError);
    default: CURSUS_HPP_THROW(InternalError);
  }
#undef CURSUS_HPP_THROW
}

/// Calls a C function whose last argument is `cursus_error_t **`; throws on failure.
template <typename F, typename... A>
inline void call(F f, A... args) {
  cursus_error_t *err = nullptr;
  cursus_status_t s = f(args..., &err);
  if (s != CURSUS_OK) throw_error(s, err);
  cursus_error_free(err);
}

/// A move-only owner of one C handle.
template <typename T, void (*Destroy)(T *)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T *h) : h_(h) {}
  Handle(Handle &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle &operator=(Handle &&o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  ~Handle() { reset(); }
  T *get() const noexcept { return h_; }
  void reset() noexcept {
    if (h_) Destroy(h_);
    h_ = nullptr;
  }

 private:
  T *h_ = nullptr;
};

inline long long millis(std::chrono::milliseconds d) { return static_cast<long long>(d.count()); }

/// Takes ownership of a library string and returns a copy (NULL: empty).
inline std::string take_string(char *s) {
  std::unique_ptr<char, void (*)(char *)> guard(s, cursus_string_free);
  return s ? std::string(s) : std::string();
}

/// Takes ownership of a newline-separated library string and splits it.
inline std::vector<std::string> take_lines(char *s) {
  std::string all = take_string(s);
  std::vector<std::string> out;
  std::string_view rest(all);
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    out.emplace_back(rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return out;
}

/// An exception_ptr holding a copy of a borrowed error (the caller keeps ownership).
inline std::exception_ptr copy_error(cursus_status_t status, const cursus_error_t *e) {
  try {
    std::map<std::string, std::string> fields;
    for (size_t i = 0, n = cursus_error_field_count(e); i < n; i++)
      fields.emplace(str(cursus_error_field_name(e, i)), str(cursus_error_field_value(e, i)));
    throw Error(status, str(cursus_error_code(e)), str(cursus_error_class_name(e)), cursus_error_retryable(e),
                str(cursus_error_message(e)), std::move(fields));
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace detail

/// Options by name (the engine's names: bootstrap_servers, acks, group_id, ...).
/// Each set() is validated immediately and throws InvalidArgumentError.
class Config {
 public:
  Config() : h_(cursus_config_new()) {}
  Config(std::initializer_list<std::pair<std::string, std::string>> options) : Config() {
    for (const auto &kv : options) set(kv.first, kv.second);
  }
  /// Sets one option; returns *this for chaining.
  Config &set(const std::string &key, const std::string &value) {
    detail::call(cursus_config_set, h_.get(), key.c_str(), value.c_str());
    return *this;
  }
  /// The C handle (owned by this object).
  const cursus_config_t *c_handle() const noexcept { return h_.get(); }

 private:
  detail::Handle<cursus_config_t, cursus_config_destroy> h_;
};

/// Where a record was written.
struct RecordMetadata {
  int32_t partition;
  /// -1 when the broker did not report one (acks=0).
  int64_t offset;
  int64_t timestamp;
};

/// A consumed message. Move-only; the views it returns live as long as it does.
class Message {
 public:
  explicit Message(cursus_message_t *m) : h_(m) {}
  std::string_view topic() const { return cursus_message_topic(h_.get()); }
  int32_t partition() const { return cursus_message_partition(h_.get()); }
  int64_t offset() const { return cursus_message_offset(h_.get()); }
  int64_t timestamp() const { return cursus_message_timestamp(h_.get()); }
  /// Key bytes (empty when none), binary safe.
  std::string_view key() const {
    size_t n = 0;
    const uint8_t *p = cursus_message_key(h_.get(), &n);
    return n ? std::string_view(reinterpret_cast<const char *>(p), n) : std::string_view();
  }
  /// Payload bytes, binary safe.
  std::string_view payload() const {
    size_t n = 0;
    const uint8_t *p = cursus_message_payload(h_.get(), &n);
    return n ? std::string_view(reinterpret_cast<const char *>(p), n) : std::string_view();
  }

 private:
  detail::Handle<cursus_message_t, cursus_message_destroy> h_;
};

/// A topic definition (METADATA, or the reply of create_topic or alter_topic_config).
struct TopicMetadata {
  uint32_t partitions;
  uint32_t replication_factor;
  /// Revision (pass it to Admin::truncate_topic).
  uint64_t revision;
  uint64_t lifecycle_epoch;
  bool idempotent;
  bool event_sourcing;
  /// The override; std::nullopt for the broker default (or when METADATA does not report it).
  std::optional<uint32_t> min_in_sync_replicas;
  /// Leader address per partition, in partition order (METADATA only).
  std::vector<std::string> leaders;
};

/// Outcome of Admin::truncate_topic.
struct TruncateResult {
  uint64_t revision;
  uint64_t lifecycle_epoch;
};

/// Offsets of one partition (Admin::list_offsets).
struct PartitionOffsets {
  uint32_t partition;
  uint64_t earliest;
  uint64_t latest;
  uint64_t leo;
  uint64_t hwm;
};

/// One assigned partition (Consumer::assignment).
struct TopicPartition {
  std::string topic;
  uint32_t partition;
};

/// An explicit position to commit (Consumer::commit_offsets): the next
/// offset to read, i.e. the offset after the last record processed.
struct TopicPartitionOffset {
  std::string topic;
  uint32_t partition;
  uint64_t offset;
};

/// Admin client: topics and groups. Thread-safe.
class Admin {
 public:
  explicit Admin(const Config &config) {
    cursus_admin_t *a = nullptr;
    detail::call(cursus_admin_new, config.c_handle(), &a);
    h_ = Handle(a);
  }
  /// Creates a topic (partitions 0: broker default); returns the definition
  /// the broker replied with (leaders empty).
  TopicMetadata create_topic(const std::string &topic, uint32_t partitions = 0) {
    std::map<std::string, std::string> options;
    if (partitions > 0) options.emplace("partitions", std::to_string(partitions));
    return create_topic(topic, options);
  }
  /// Deletes a topic; with if_exists a missing topic is not an error. Returns
  /// true when the topic was deleted, false when if_exists found none.
  bool delete_topic(const std::string &topic, bool if_exists = false) {
    bool deleted = false;
    detail::call(cursus_admin_delete_topic, h_.get(), topic.c_str(), if_exists, &deleted);
    return deleted;
  }
  /// Creates a topic with NewTopic fields by name (see cursus_admin_create_topic_opts):
  /// partitions, replication_factor, min_in_sync_replicas, retention_hours,
  /// retention_bytes, idempotent, event_sourcing, cleanup_policy, partitioner,
  /// auth_policy, read_acl, write_acl (comma-separated). Returns the definition
  /// the broker replied with (leaders empty).
  TopicMetadata create_topic(const std::string &topic, const std::map<std::string, std::string> &options) {
    std::vector<const char *> keys, values;
    for (const auto &kv : options) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    cursus_topic_metadata_t m{};
    detail::call(cursus_admin_create_topic_opts, h_.get(), topic.c_str(), keys.data(), values.data(),
                 keys.size(), &m);
    return convert(m, nullptr);
  }
  /// Replaces the min_in_sync_replicas override (std::nullopt: broker default);
  /// returns the definition the broker replied with (leaders empty).
  TopicMetadata alter_topic_config(const std::string &topic, std::optional<uint32_t> min_in_sync_replicas) {
    cursus_topic_metadata_t m{};
    detail::call(cursus_admin_alter_topic_config, h_.get(), topic.c_str(),
                 min_in_sync_replicas ? static_cast<int64_t>(*min_in_sync_replicas) : int64_t{-1}, &m);
    return convert(m, nullptr);
  }
  /// Truncates a topic at `expected_revision` (ConflictError if it moved on).
  TruncateResult truncate_topic(const std::string &topic, uint64_t expected_revision) {
    TruncateResult r{};
    detail::call(cursus_admin_truncate_topic, h_.get(), topic.c_str(), expected_revision, &r.revision,
                 &r.lifecycle_epoch);
    return r;
  }
  /// The broker's DESCRIBE document (JSON).
  std::string describe_topic(const std::string &topic) {
    char *json = nullptr;
    detail::call(cursus_admin_describe_topic, h_.get(), topic.c_str(), &json);
    return detail::take_string(json);
  }
  /// The broker's GROUP_STATUS document (JSON).
  std::string group_status(const std::string &group) {
    char *json = nullptr;
    detail::call(cursus_admin_group_status, h_.get(), group.c_str(), &json);
    return detail::take_string(json);
  }
  /// METADATA: definition, revision and the leader of every partition.
  TopicMetadata metadata(const std::string &topic) {
    cursus_topic_metadata_t m{};
    char *leaders = nullptr;
    detail::call(cursus_admin_metadata, h_.get(), topic.c_str(), &m, &leaders);
    return convert(m, leaders);
  }
  /// Offsets of one partition, or of all of them (std::nullopt).
  std::vector<PartitionOffsets> list_offsets(const std::string &topic,
                                             std::optional<uint32_t> partition = std::nullopt) {
    cursus_partition_offsets_t *arr = nullptr;
    size_t n = 0;
    detail::call(cursus_admin_list_offsets, h_.get(), topic.c_str(),
                 partition ? static_cast<int64_t>(*partition) : int64_t{-1}, &arr, &n);
    std::vector<PartitionOffsets> out;
    for (size_t i = 0; i < n; i++)
      out.push_back(PartitionOffsets{arr[i].partition, arr[i].earliest, arr[i].latest, arr[i].leo, arr[i].hwm});
    cursus_partition_offsets_free(arr, n);
    return out;
  }
  /// Topic names.
  std::vector<std::string> list_topics() {
    char *names = nullptr;
    detail::call(cursus_admin_list_topics, h_.get(), &names);
    return detail::take_lines(names);
  }
  /// Consumer group names.
  std::vector<std::string> list_groups() {
    char *names = nullptr;
    detail::call(cursus_admin_list_groups, h_.get(), &names);
    return detail::take_lines(names);
  }
  /// The broker's HELP: one command per entry.
  std::vector<std::string> help() {
    char *text = nullptr;
    detail::call(cursus_admin_help, h_.get(), &text);
    return detail::take_lines(text);
  }
  /// Closes the client (idempotent); later calls throw ClosedError.
  void close() { detail::call(cursus_admin_close, h_.get()); }

 private:
  using Handle = detail::Handle<cursus_admin_t, cursus_admin_destroy>;
  static TopicMetadata convert(const cursus_topic_metadata_t &m, char *leaders) {
    TopicMetadata t{m.partitions, m.replication_factor, m.revision, m.lifecycle_epoch, m.idempotent,
                    m.event_sourcing, std::nullopt, detail::take_lines(leaders)};
    if (m.min_in_sync_replicas >= 0) t.min_in_sync_replicas = static_cast<uint32_t>(m.min_in_sync_replicas);
    return t;
  }
  Handle h_;
};

/// Outcome of an asynchronous send, passed to the callback of Producer::send_async.
struct DeliveryReport {
  /// Null on success; else the error (throwable with std::rethrow_exception).
  std::exception_ptr error;
  std::string topic;
  RecordMetadata metadata;
};

/// Producer. Thread-safe. The destructor closes it (flushing up to 30 s).
class Producer {
 public:
  using Callback = std::function<void(const DeliveryReport &)>;

  explicit Producer(const Config &config) {
    cursus_producer_t *p = nullptr;
    detail::call(cursus_producer_new, config.c_handle(), &p);
    h_ = Handle(p);
  }
  Producer(Producer &&) noexcept = default;
  Producer &operator=(Producer &&) noexcept = default;
  ~Producer() {
    if (h_.get()) cursus_producer_close(h_.get(), 30000, nullptr);
  }

  /// Sends and waits for the acknowledgement. partition < 0: partitioner chooses.
  RecordMetadata send(const std::string &topic, std::string_view payload,
                      std::optional<std::string_view> key = std::nullopt, int32_t partition = -1) {
    cursus_record_metadata_t m{};
    detail::call(cursus_producer_send, h_.get(), topic.c_str(), partition, key_ptr(key),
                 key ? key->size() : size_t{0}, data(payload), payload.size(), &m);
    return RecordMetadata{m.partition, m.offset, m.timestamp};
  }

  /// Queues a record; `callback` runs once with the outcome on an engine thread
  /// (it must not block for long nor call blocking producer methods).
  void send_async(const std::string &topic, std::string_view payload, Callback callback,
                  std::optional<std::string_view> key = std::nullopt, int32_t partition = -1) {
    auto *boxed = new Callback(std::move(callback));
    cursus_error_t *err = nullptr;
    cursus_status_t s =
        cursus_producer_send_cb(h_.get(), topic.c_str(), partition, key_ptr(key), key ? key->size() : size_t{0},
                                data(payload), payload.size(), &Producer::trampoline, boxed, &err);
    if (s != CURSUS_OK) {
      delete boxed;  // not queued: the callback will never run
      detail::throw_error(s, err);
    }
  }

  /// Queues a record; the future becomes ready with the metadata, or holds the
  /// error (thrown by get()), including a failure to queue. Do not wait on it
  /// from a delivery callback.
  std::future<RecordMetadata> send_async(const std::string &topic, std::string_view payload,
                                         std::optional<std::string_view> key = std::nullopt,
                                         int32_t partition = -1) {
    auto promise = std::make_shared<std::promise<RecordMetadata>>();
    std::future<RecordMetadata> f = promise->get_future();
    try {
      send_async(
          topic, payload,
          [promise](const DeliveryReport &r) {
            if (r.error)
              promise->set_exception(r.error);
            else
              promise->set_value(r.metadata);
          },
          key, partition);
    } catch (...) {
      promise->set_exception(std::current_exception());  // not queued
    }
    return f;
  }

  /// Sends everything queued and waits (and for every callback), at most `timeout`.
  void flush(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1)) {
    detail::call(cursus_producer_flush, h_.get(), detail::millis(timeout));
  }
  /// Flushes within `timeout`, then closes (idempotent).
  void close(std::chrono::milliseconds timeout = std::chrono::milliseconds(30000)) {
    detail::call(cursus_producer_close, h_.get(), detail::millis(timeout));
  }

 private:
  using Handle = detail::Handle<cursus_producer_t, cursus_producer_destroy>;
  static const uint8_t *data(std::string_view v) { return reinterpret_cast<const uint8_t *>(v.data()); }
  static const uint8_t *key_ptr(const std::optional<std::string_view> &k) {
    return k ? (k->empty() ? reinterpret_cast<const uint8_t *>("") : data(*k)) : nullptr;
  }
  static void trampoline(void *user_data, const cursus_delivery_report_t *report) {
    std::unique_ptr<Callback> cb(static_cast<Callback *>(user_data));
    DeliveryReport r{nullptr, detail::str(report->topic),
                     RecordMetadata{report->metadata.partition, report->metadata.offset, report->metadata.timestamp}};
    // The error is borrowed: copy it.
    if (report->status != CURSUS_OK) r.error = detail::copy_error(report->status, report->error);
    try {
      (*cb)(r);
    } catch (...) {
      // Exceptions must not unwind into the C library.
    }
  }
  Handle h_;
};

/// Group consumer. Meant for one thread at a time. The destructor closes it.
class Consumer {
 public:
  explicit Consumer(const Config &config) {
    cursus_consumer_t *c = nullptr;
    detail::call(cursus_consumer_new, config.c_handle(), &c);
    h_ = Handle(c);
  }
  Consumer(Consumer &&) noexcept = default;
  Consumer &operator=(Consumer &&) noexcept = default;
  ~Consumer() {
    if (h_.get()) cursus_consumer_close(h_.get(), nullptr);
  }
  /// Subscribes to topics (replacing the previous subscription).
  void subscribe(const std::vector<std::string> &topics) {
    std::vector<const char *> names;
    for (const auto &t : topics) names.push_back(t.c_str());
    detail::call(cursus_consumer_subscribe, h_.get(), names.data(), names.size());
  }
  /// The next message, or std::nullopt when none arrived within `timeout`.
  std::optional<Message> poll(std::chrono::milliseconds timeout) {
    cursus_message_t *m = nullptr;
    detail::call(cursus_consumer_poll, h_.get(), detail::millis(timeout), &m);
    if (!m) return std::nullopt;
    return Message(m);
  }
  /// Subscribes to every topic matching a glob pattern, e.g. "orders-*".
  void subscribe_pattern(const std::string &pattern) {
    detail::call(cursus_consumer_subscribe_pattern, h_.get(), pattern.c_str());
  }
  /// Commits the positions of the messages returned so far.
  void commit() { detail::call(cursus_consumer_commit, h_.get()); }
  /// Outcome callback of commit_async: null on success, else the error.
  using CommitCallback = std::function<void(std::exception_ptr)>;
  /// Commits the positions of the messages returned so far in the background;
  /// `callback` runs once with the outcome on a library thread.
  void commit_async(CommitCallback callback) {
    auto *boxed = new CommitCallback(std::move(callback));
    cursus_error_t *err = nullptr;
    cursus_status_t s = cursus_consumer_commit_async(h_.get(), &Consumer::commit_trampoline, boxed, &err);
    if (s != CURSUS_OK) {
      delete boxed;  // not started: the callback will never run
      detail::throw_error(s, err);
    }
  }
  /// Like commit_async(callback); the future becomes ready when the commit completes.
  std::future<void> commit_async() {
    auto promise = std::make_shared<std::promise<void>>();
    std::future<void> f = promise->get_future();
    commit_async([promise](std::exception_ptr e) {
      if (e)
        promise->set_exception(e);
      else
        promise->set_value();
    });
    return f;
  }
  /// Commits explicit next offsets synchronously, in order, e.g.
  /// commit_offsets({{"orders", 0, 42}}). The group must have been joined
  /// (poll once after subscribing), else InvalidArgumentError.
  void commit_offsets(const std::vector<TopicPartitionOffset> &offsets) {
    std::vector<const char *> topics;
    std::vector<uint32_t> partitions;
    std::vector<uint64_t> positions;
    for (const auto &o : offsets) {
      topics.push_back(o.topic.c_str());
      partitions.push_back(o.partition);
      positions.push_back(o.offset);
    }
    detail::call(cursus_consumer_commit_offsets, h_.get(), topics.data(), partitions.data(), positions.data(),
                 offsets.size());
  }
  /// The group's committed next offset of a partition, if any.
  std::optional<int64_t> committed(const std::string &topic, uint32_t partition) {
    int64_t offset = -1;
    bool found = false;
    detail::call(cursus_consumer_committed, h_.get(), topic.c_str(), partition, &offset, &found);
    return found ? std::optional<int64_t>(offset) : std::nullopt;
  }
  /// The partitions currently assigned to this consumer.
  std::vector<TopicPartition> assignment() {
    cursus_topic_partition_t *arr = nullptr;
    size_t n = 0;
    detail::call(cursus_consumer_assignment, h_.get(), &arr, &n);
    std::vector<TopicPartition> out;
    for (size_t i = 0; i < n; i++) out.push_back(TopicPartition{detail::str(arr[i].topic), arr[i].partition});
    cursus_topic_partitions_free(arr, n);
    return out;
  }
  /// Leaves the group and closes (idempotent).
  void close() { detail::call(cursus_consumer_close, h_.get()); }

 private:
  using Handle = detail::Handle<cursus_consumer_t, cursus_consumer_destroy>;
  static void commit_trampoline(void *user_data, cursus_status_t status, const cursus_error_t *error) {
    std::unique_ptr<CommitCallback> cb(static_cast<CommitCallback *>(user_data));
    std::exception_ptr e = status == CURSUS_OK ? nullptr : detail::copy_error(status, error);
    try {
      (*cb)(e);
    } catch (...) {
      // Exceptions must not unwind into the C library.
    }
  }
  Handle h_;
};

}  // namespace cursus

#endif  // CURSUS_HPP
