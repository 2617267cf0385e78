// cursus.hpp: header-only C++17 RAII wrapper over the libcursus C ABI (cursus.h).
//
// - Config, Admin, Producer, Consumer and Message own their C handle, are
//   move-only and release it in their destructor.
// - Admin results are plain C++ values (TopicInfo, TopicDescription,
//   TopicMetadata, GroupStatus, ...), read from the C result handles.
// - Every failure throws a subclass of cursus::Error chosen by the status
//   (ValidationError, RoutingError, FencingError, ...; TimeoutError,
//   ClosedError and InvalidArgumentError for local failures). what() is the
//   error's readable text, the same in every Cursus language; code(),
//   error_class(), kind(), retryable() and fields() give it typed.
// - Callbacks run on the client's own callback thread, never a network
//   thread; they may call the wrapper again (send and flush included).
// - flush and close wait cursus::default_timeout (30 s) unless told
//   otherwise; cursus::no_timeout waits without limit.
// - Thread safety is that of the C functions (see cursus.h).
//
// Build with C++17 or later: `pkg-config --cflags --libs cursus++`, or CMake
// `find_package(cursus)` and `target_link_libraries(app cursus::cursus++)`.
#ifndef CURSUS_HPP
#define CURSUS_HPP

#include "cursus.h"

#include <chrono>
#include <cstdint>
#include <cstring>
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

/// The library's runtime version, e.g. "0.1.0" (CURSUS_VERSION_STRING is the header's).
inline std::string version() { return cursus_version(); }

/// The default wait of flush and close in every Cursus language: 30 s.
inline constexpr std::chrono::milliseconds default_timeout{30000};
/// A flush, close or poll timeout meaning "no limit".
inline constexpr std::chrono::milliseconds no_timeout{-1};

/// Base of every exception thrown by this wrapper.
class Error : public std::runtime_error {
 public:
  /// An error with all its parts (the wrapper builds these from C errors).
  Error(cursus_status_t status, std::string text, std::string code, std::string error_class, std::string kind,
        bool retryable, std::string message, std::map<std::string, std::string> fields)
      : std::runtime_error(std::move(text)),
        status_(status),
        code_(std::move(code)),
        class_(std::move(error_class)),
        kind_(std::move(kind)),
        retryable_(retryable),
        message_(std::move(message)),
        fields_(std::move(fields)) {}

  /// The C status (CURSUS_ERR_...).
  cursus_status_t status() const noexcept { return status_; }
  /// Machine-readable code, e.g. "topic_not_found".
  const std::string &code() const noexcept { return code_; }
  /// Class: validation, authorization, routing, availability, conflict,
  /// fencing, not_found or internal.
  const std::string &error_class() const noexcept { return class_; }
  /// Where it comes from: broker, io, timeout, protocol, closed,
  /// invalid_argument or internal.
  const std::string &kind() const noexcept { return kind_; }
  /// Whether retrying (with backoff) may succeed.
  bool retryable() const noexcept { return retryable_; }
  /// The detail message alone (what() is the full readable text).
  const std::string &message() const noexcept { return message_; }
  /// Structured fields (e.g. "topic", "leader").
  const std::map<std::string, std::string> &fields() const noexcept { return fields_; }

 private:
  cursus_status_t status_;
  std::string code_, class_, kind_;
  bool retryable_;
  std::string message_;
  std::map<std::string, std::string> fields_;
};

#define CURSUS_HPP_ERROR(Name, Base) \
  class Name : public Base {         \
   public:                           \
    using Base::Base;                \
  };
/// Class `validation`.
CURSUS_HPP_ERROR(ValidationError, Error)
/// Class `authorization`.
CURSUS_HPP_ERROR(AuthorizationError, Error)
/// Class `routing`.
CURSUS_HPP_ERROR(RoutingError, Error)
/// Class `availability`.
CURSUS_HPP_ERROR(AvailabilityError, Error)
/// Class `conflict`.
CURSUS_HPP_ERROR(ConflictError, Error)
/// Class `fencing`.
CURSUS_HPP_ERROR(FencingError, Error)
/// Class `not_found`.
CURSUS_HPP_ERROR(NotFoundError, Error)
/// Class `internal`.
CURSUS_HPP_ERROR(InternalError, Error)
/// A deadline passed (class availability, retryable).
CURSUS_HPP_ERROR(TimeoutError, AvailabilityError)
/// Use of a closed object, or of one created before fork() (class validation).
CURSUS_HPP_ERROR(ClosedError, ValidationError)
/// An invalid argument, option or handle (class validation).
CURSUS_HPP_ERROR(InvalidArgumentError, ValidationError)
#undef CURSUS_HPP_ERROR

namespace detail {

inline std::string str(const char *s) { return s ? std::string(s) : std::string(); }

/// Throws the exception for `status` with the details of `e` (not consumed).
[[noreturn]] inline void throw_from(cursus_status_t status, const cursus_error_t *e) {
  std::map<std::string, std::string> fields;
  for (size_t i = 0, n = cursus_error_field_count(e); i < n; i++)
    fields.emplace(str(cursus_error_field_name(e, i)), str(cursus_error_field_value(e, i)));
  std::string text = e ? str(cursus_error_text(e)) : "internal_error (internal): no error details";
#define CURSUS_HPP_THROW(E)                                                                                  \
  throw E(status, text, str(cursus_error_code(e)), str(cursus_error_class_name(e)), str(cursus_error_kind(e)), \
          cursus_error_retryable(e), str(cursus_error_message(e)), std::move(fields))
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

/// The exception for a borrowed error (a callback's), as an exception_ptr.
inline std::exception_ptr capture(cursus_status_t status, const cursus_error_t *e) {
  try {
    throw_from(status, e);
  } catch (...) {
    return std::current_exception();
  }
}

/// Calls a C function whose last argument is `cursus_error_t **`; throws on failure.
template <typename F, typename... A>
inline void call(F f, A... args) {
  cursus_error_t *err = nullptr;
  cursus_status_t s = f(args..., &err);
  if (s == CURSUS_OK) return;
  std::unique_ptr<cursus_error_t, void (*)(cursus_error_t *)> guard(err, cursus_error_destroy);
  throw_from(s, err);
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

/// Milliseconds for the C ABI (no_timeout: CURSUS_NO_TIMEOUT).
inline int64_t millis(std::chrono::milliseconds d) {
  return d < std::chrono::milliseconds::zero() ? CURSUS_NO_TIMEOUT : static_cast<int64_t>(d.count());
}

/// Calls a C function returning a result handle through `out`, and owns it.
template <typename T, void (*Destroy)(T *), typename F, typename... A>
inline Handle<T, Destroy> result(F f, A... args) {
  T *out = nullptr;
  call(f, args..., &out);
  return Handle<T, Destroy>(out);
}

/// The strings of a string list (consumed).
inline std::vector<std::string> strings(cursus_string_list_t *l) {
  Handle<cursus_string_list_t, cursus_string_list_destroy> owned(l);
  std::vector<std::string> out;
  for (size_t i = 0, n = cursus_string_list_count(l); i < n; i++) out.push_back(str(cursus_string_list_get(l, i)));
  return out;
}

inline const uint8_t *bytes(std::string_view v) { return reinterpret_cast<const uint8_t *>(v.data()); }

}  // namespace detail

/// The kind of client a Config is for.
enum class Kind {
  /// Any kind: each client uses the options of its own kind.
  Any,
  /// An Admin.
  Admin,
  /// A Producer.
  Producer,
  /// A Consumer.
  Consumer,
};

/// Options by name (the same names in every language), checked as they are
/// set: a Config made for a kind names it in errors and lists its options.
class Config {
 public:
  /// An empty configuration (every option at its default) for `kind`.
  explicit Config(Kind kind = Kind::Any) {
    cursus_config_t *c = nullptr;
    if (kind == Kind::Any)
      detail::call(cursus_config_new, &c);
    else
      detail::call(cursus_config_new_for, kind == Kind::Admin ? "admin" : kind == Kind::Producer ? "producer" : "consumer",
                   &c);
    h_ = detail::Handle<cursus_config_t, cursus_config_destroy>(c);
  }
  /// A configuration for `kind` with options.
  Config(Kind kind, std::initializer_list<std::pair<std::string, std::string>> options) : Config(kind) {
    for (const auto &kv : options) set(kv.first, kv.second);
  }
  /// Sets one option; throws InvalidArgumentError for an unknown name or a bad value.
  Config &set(const std::string &key, const std::string &value) {
    detail::call(cursus_config_set, h_.get(), key.c_str(), value.c_str());
    return *this;
  }
  /// The C handle (owned by this Config).
  cursus_config_t *c_handle() const noexcept { return h_.get(); }

 private:
  detail::Handle<cursus_config_t, cursus_config_destroy> h_;
};

/// Where a record was stored.
struct RecordMetadata {
  int32_t partition;  ///< Partition.
  int64_t offset;     ///< Offset (-1 with acks=0).
  int64_t timestamp;  ///< Milliseconds since the epoch.
};

/// A topic partition.
struct TopicPartition {
  std::string topic;   ///< Topic.
  uint32_t partition;  ///< Partition.
  /// Same topic and partition.
  bool operator==(const TopicPartition &o) const { return topic == o.topic && partition == o.partition; }
  /// Ordered by topic, then partition (a std::map key).
  bool operator<(const TopicPartition &o) const {
    return topic != o.topic ? topic < o.topic : partition < o.partition;
  }
};

/// A topic's definition (CREATE, ALTER, METADATA, DESCRIBE).
struct TopicInfo {
  std::string name;                                       ///< Name.
  uint32_t partitions = 0;                                ///< Partition count.
  uint32_t replication_factor = 0;                        ///< Replication factor.
  uint64_t revision = 0;                                  ///< Definition revision.
  uint64_t lifecycle_epoch = 0;                           ///< Lifecycle epoch (bumped by TRUNCATE).
  bool idempotent = false;                                ///< Producers are deduplicated.
  bool event_sourcing = false;                            ///< Event-sourcing commands allowed.
  std::optional<uint32_t> min_in_sync_replicas;           ///< Override (none: broker default).
  std::optional<uint32_t> effective_min_in_sync_replicas; ///< In force, when reported.
  std::string cleanup_policy;                             ///< delete, compact or delete,compact.
  std::string partitioner;                                ///< hash_key or round_robin.
  std::string auth_policy;                                ///< open, deny_write, deny_read or acl.
  uint64_t retention_hours = 0;                           ///< Retention hours (0: default).
  uint64_t retention_bytes = 0;                           ///< Retention bytes (0: default).
  std::vector<std::string> read_acl;                      ///< Principals allowed to read.
  std::vector<std::string> write_acl;                     ///< Principals allowed to write.
};

/// One partition of a DESCRIBE.
struct PartitionDescription {
  uint32_t id;                      ///< Partition id.
  std::string leader;               ///< Leader address.
  std::vector<std::string> replicas; ///< Replica set.
  std::vector<std::string> isr;     ///< In-sync replicas.
  uint64_t earliest;                ///< First retained offset.
  uint64_t leo;                     ///< Log end offset.
  uint64_t hwm;                     ///< High-water mark.
};

/// DESCRIBE: a topic's definition and partitions.
struct TopicDescription {
  std::string topic;                            ///< Topic.
  TopicInfo definition;                         ///< Definition.
  std::vector<PartitionDescription> partitions; ///< Partitions.
};

/// METADATA: the definition and each partition's leader.
struct TopicMetadata {
  TopicInfo topic;                  ///< Definition.
  std::vector<std::string> leaders; ///< Leader address per partition.
  std::vector<int64_t> epochs;      ///< Leader epoch per partition (-1: not reported).
};

/// One partition's offsets (LIST_OFFSETS).
struct PartitionOffsets {
  uint32_t partition; ///< Partition id.
  uint64_t earliest;  ///< First retained offset.
  uint64_t latest;    ///< Where `latest` consumers start.
  uint64_t leo;       ///< Log end offset.
  uint64_t hwm;       ///< High-water mark.
};

/// One member of a group.
struct GroupMember {
  std::string member_id;             ///< Member id.
  std::string last_heartbeat;        ///< Last heartbeat, as the broker reports it.
  std::vector<uint32_t> assignments; ///< Assigned partitions.
};

/// GROUP_STATUS.
struct GroupStatus {
  std::string group;                ///< Group.
  std::string topic;                ///< Topic of a single-topic group.
  std::string state;                ///< State, e.g. Stable.
  uint64_t generation;              ///< Generation.
  uint64_t partition_count;         ///< Partitions of the group's topics.
  std::vector<GroupMember> members; ///< Members.
};

/// What DELETE did.
struct DeleteResult {
  bool deleted;         ///< False when if_exists found no topic.
  bool cleanup_pending; ///< The broker still retries storage cleanup.
};

/// What TRUNCATE did.
struct TruncateResult {
  uint64_t revision;        ///< New revision.
  uint64_t lifecycle_epoch; ///< New lifecycle epoch.
  bool cleanup_pending;     ///< The broker still retries storage cleanup.
};

namespace detail {

inline std::optional<uint32_t> opt_u32(int64_t v) {
  return v < 0 ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(v));
}

/// A TopicInfo from its handle (consumed).
inline TopicInfo topic_info(cursus_topic_info_t *h) {
  Handle<cursus_topic_info_t, cursus_topic_info_destroy> owned(h);
  TopicInfo t;
  t.name = str(cursus_topic_info_name(h));
  t.partitions = cursus_topic_info_partitions(h);
  t.replication_factor = cursus_topic_info_replication_factor(h);
  t.revision = cursus_topic_info_revision(h);
  t.lifecycle_epoch = cursus_topic_info_lifecycle_epoch(h);
  t.idempotent = cursus_topic_info_idempotent(h);
  t.event_sourcing = cursus_topic_info_event_sourcing(h);
  t.min_in_sync_replicas = opt_u32(cursus_topic_info_min_in_sync_replicas(h));
  t.effective_min_in_sync_replicas = opt_u32(cursus_topic_info_effective_min_in_sync_replicas(h));
  t.cleanup_policy = str(cursus_topic_info_cleanup_policy(h));
  t.partitioner = str(cursus_topic_info_partitioner(h));
  t.auth_policy = str(cursus_topic_info_auth_policy(h));
  t.retention_hours = cursus_topic_info_retention_hours(h);
  t.retention_bytes = cursus_topic_info_retention_bytes(h);
  for (size_t i = 0, n = cursus_topic_info_read_acl_count(h); i < n; i++)
    t.read_acl.push_back(str(cursus_topic_info_read_acl(h, i)));
  for (size_t i = 0, n = cursus_topic_info_write_acl_count(h); i < n; i++)
    t.write_acl.push_back(str(cursus_topic_info_write_acl(h, i)));
  return t;
}

inline std::vector<std::string> replicas(const cursus_topic_description_t *d, size_t p, bool isr) {
  std::vector<std::string> out;
  size_t n = isr ? cursus_topic_description_partition_isr_count(d, p)
                 : cursus_topic_description_partition_replica_count(d, p);
  for (size_t j = 0; j < n; j++)
    out.push_back(str(isr ? cursus_topic_description_partition_isr(d, p, j)
                          : cursus_topic_description_partition_replica(d, p, j)));
  return out;
}

}  // namespace detail

/// A consumed record (owns its C message; views are valid while it lives).
class Message {
 public:
  /// Takes ownership of a C message.
  explicit Message(cursus_message_t *m) : h_(m) {}
  /// Topic.
  std::string_view topic() const { return cursus_message_topic(h_.get()); }
  /// Partition.
  int32_t partition() const { return cursus_message_partition(h_.get()); }
  /// Offset.
  int64_t offset() const { return cursus_message_offset(h_.get()); }
  /// Milliseconds since the epoch (0 when unknown).
  int64_t timestamp() const { return cursus_message_timestamp(h_.get()); }
  /// Key bytes (empty when none).
  std::string_view key() const {
    size_t n = 0;
    const uint8_t *p = cursus_message_key(h_.get(), &n);
    return n ? std::string_view(reinterpret_cast<const char *>(p), n) : std::string_view();
  }
  /// Value bytes (binary safe).
  std::string_view payload() const {
    size_t n = 0;
    const uint8_t *p = cursus_message_payload(h_.get(), &n);
    return n ? std::string_view(reinterpret_cast<const char *>(p), n) : std::string_view();
  }

 private:
  detail::Handle<cursus_message_t, cursus_message_destroy> h_;
};

/// A consumed record that owns copies of its bytes (from Consumer::poll_batch).
struct Record {
  std::string topic;  ///< Topic.
  uint32_t partition; ///< Partition.
  uint64_t offset;    ///< Offset.
  int64_t timestamp;  ///< Milliseconds since the epoch (0 when unknown).
  std::string key;    ///< Key bytes (empty when none).
  std::string value;  ///< Value bytes.
};

/// Topic and group administration.
class Admin {
 public:
  /// Connects with a configuration of kind Admin (or Any).
  explicit Admin(const Config &config) {
    cursus_admin_t *a = nullptr;
    detail::call(cursus_admin_new, config.c_handle(), &a);
    h_ = detail::Handle<cursus_admin_t, cursus_admin_destroy>(a);
  }
  /// Creates a topic (0 partitions: the broker default) or patches one.
  TopicInfo create_topic(const std::string &topic, uint32_t partitions = 0) {
    cursus_topic_info_t *t = nullptr;
    detail::call(cursus_admin_create_topic, h_.get(), topic.c_str(), partitions, &t);
    return detail::topic_info(t);
  }
  /// Creates or patches a topic with settings by name ("partitions", "idempotent", "read_acl", ...).
  TopicInfo create_topic(const std::string &topic, const std::map<std::string, std::string> &options) {
    std::vector<const char *> keys, values;
    for (const auto &kv : options) {
      keys.push_back(kv.first.c_str());
      values.push_back(kv.second.c_str());
    }
    cursus_topic_info_t *t = nullptr;
    detail::call(cursus_admin_create_topic_with, h_.get(), topic.c_str(), keys.data(), values.data(), keys.size(),
                 &t);
    return detail::topic_info(t);
  }
  /// Replaces the min_in_sync_replicas override (none: the broker default).
  TopicInfo alter_topic_config(const std::string &topic, std::optional<uint32_t> min_in_sync_replicas) {
    cursus_topic_info_t *t = nullptr;
    detail::call(cursus_admin_alter_topic_config, h_.get(), topic.c_str(),
                 min_in_sync_replicas ? static_cast<int64_t>(*min_in_sync_replicas) : int64_t{-1}, &t);
    return detail::topic_info(t);
  }
  /// Deletes a topic (if_exists: a missing topic is not an error).
  DeleteResult delete_topic(const std::string &topic, bool if_exists = false) {
    auto o = detail::result<cursus_delete_outcome_t, cursus_delete_outcome_destroy>(cursus_admin_delete_topic, h_.get(),
                                                                                    topic.c_str(), if_exists);
    return DeleteResult{cursus_delete_outcome_deleted(o.get()), cursus_delete_outcome_cleanup_pending(o.get())};
  }
  /// Drops every record if the revision is expected_revision (else ConflictError).
  TruncateResult truncate_topic(const std::string &topic, uint64_t expected_revision) {
    auto o = detail::result<cursus_truncate_outcome_t, cursus_truncate_outcome_destroy>(
        cursus_admin_truncate_topic, h_.get(), topic.c_str(), expected_revision);
    return TruncateResult{cursus_truncate_outcome_revision(o.get()), cursus_truncate_outcome_lifecycle_epoch(o.get()),
                          cursus_truncate_outcome_cleanup_pending(o.get())};
  }
  /// DESCRIBE.
  TopicDescription describe_topic(const std::string &topic) {
    auto d = detail::result<cursus_topic_description_t, cursus_topic_description_destroy>(cursus_admin_describe_topic,
                                                                                          h_.get(), topic.c_str());
    TopicDescription out;
    out.topic = detail::str(cursus_topic_description_topic(d.get()));
    cursus_topic_info_t *def = nullptr;
    detail::call(cursus_topic_description_definition, d.get(), &def);
    out.definition = detail::topic_info(def);
    for (size_t i = 0, n = cursus_topic_description_partition_count(d.get()); i < n; i++)
      out.partitions.push_back(PartitionDescription{
          static_cast<uint32_t>(cursus_topic_description_partition_id(d.get(), i)),
          detail::str(cursus_topic_description_partition_leader(d.get(), i)), detail::replicas(d.get(), i, false),
          detail::replicas(d.get(), i, true), static_cast<uint64_t>(cursus_topic_description_partition_earliest(d.get(), i)),
          static_cast<uint64_t>(cursus_topic_description_partition_leo(d.get(), i)),
          static_cast<uint64_t>(cursus_topic_description_partition_hwm(d.get(), i))});
    return out;
  }
  /// METADATA.
  TopicMetadata metadata(const std::string &topic) {
    auto m = detail::result<cursus_topic_metadata_t, cursus_topic_metadata_destroy>(cursus_admin_metadata, h_.get(),
                                                                                    topic.c_str());
    TopicMetadata out;
    cursus_topic_info_t *info = nullptr;
    detail::call(cursus_topic_metadata_info, m.get(), &info);
    out.topic = detail::topic_info(info);
    for (size_t i = 0, n = cursus_topic_metadata_leader_count(m.get()); i < n; i++) {
      out.leaders.push_back(detail::str(cursus_topic_metadata_leader(m.get(), i)));
      out.epochs.push_back(cursus_topic_metadata_leader_epoch(m.get(), i));
    }
    return out;
  }
  /// LIST_OFFSETS of one partition, or of all.
  std::vector<PartitionOffsets> list_offsets(const std::string &topic,
                                             std::optional<uint32_t> partition = std::nullopt) {
    auto l = detail::result<cursus_partition_offsets_list_t, cursus_partition_offsets_list_destroy>(
        cursus_admin_list_offsets, h_.get(), topic.c_str(), partition ? static_cast<int64_t>(*partition) : int64_t{-1});
    std::vector<PartitionOffsets> out;
    for (size_t i = 0, n = cursus_partition_offsets_list_count(l.get()); i < n; i++)
      out.push_back(PartitionOffsets{static_cast<uint32_t>(cursus_partition_offsets_list_partition(l.get(), i)),
                                     static_cast<uint64_t>(cursus_partition_offsets_list_earliest(l.get(), i)),
                                     static_cast<uint64_t>(cursus_partition_offsets_list_latest(l.get(), i)),
                                     static_cast<uint64_t>(cursus_partition_offsets_list_leo(l.get(), i)),
                                     static_cast<uint64_t>(cursus_partition_offsets_list_hwm(l.get(), i))});
    return out;
  }
  /// GROUP_STATUS.
  GroupStatus group_status(const std::string &group) {
    auto g = detail::result<cursus_group_status_t, cursus_group_status_destroy>(cursus_admin_group_status, h_.get(),
                                                                                group.c_str());
    GroupStatus out{detail::str(cursus_group_status_group(g.get())), detail::str(cursus_group_status_topic(g.get())),
                    detail::str(cursus_group_status_state(g.get())), cursus_group_status_generation(g.get()),
                    cursus_group_status_partition_count(g.get()), {}};
    for (size_t i = 0, n = cursus_group_status_member_count(g.get()); i < n; i++) {
      GroupMember m{detail::str(cursus_group_status_member_id(g.get(), i)),
                    detail::str(cursus_group_status_member_last_heartbeat(g.get(), i)), {}};
      for (size_t j = 0, k = cursus_group_status_member_assignment_count(g.get(), i); j < k; j++)
        m.assignments.push_back(static_cast<uint32_t>(cursus_group_status_member_assignment(g.get(), i, j)));
      out.members.push_back(std::move(m));
    }
    return out;
  }
  /// Topic names.
  std::vector<std::string> list_topics() { return names(cursus_admin_list_topics); }
  /// Group names.
  std::vector<std::string> list_groups() { return names(cursus_admin_list_groups); }
  /// The broker's HELP lines.
  std::vector<std::string> help() { return names(cursus_admin_help); }
  /// Closes the client (idempotent); later calls throw ClosedError.
  void close() { detail::call(cursus_admin_close, h_.get()); }

 private:
  template <typename F>
  std::vector<std::string> names(F f) {
    cursus_string_list_t *l = nullptr;
    detail::call(f, h_.get(), &l);
    return detail::strings(l);
  }
  detail::Handle<cursus_admin_t, cursus_admin_destroy> h_;
};

/// The outcome of one send, given to a delivery callback.
struct DeliveryReport {
  std::exception_ptr error; ///< Set when the record failed.
  std::string topic;        ///< The record's topic.
  RecordMetadata metadata;  ///< Where it was stored (when no error).
};

/// Sends records. May be shared between threads.
class Producer {
 public:
  /// A delivery callback (runs on the producer's callback thread; may call the producer).
  using Callback = std::function<void(const DeliveryReport &)>;

  /// Connects with a configuration of kind Producer (or Any).
  explicit Producer(const Config &config) {
    cursus_producer_t *p = nullptr;
    detail::call(cursus_producer_new, config.c_handle(), &p);
    h_ = detail::Handle<cursus_producer_t, cursus_producer_destroy>(p);
  }
  /// Takes over another producer (which is left empty).
  Producer(Producer &&) noexcept = default;
  /// Closes this producer (as the destructor does), then takes over `o`.
  Producer &operator=(Producer &&o) noexcept {
    if (this != &o) {
      close_quietly();
      h_ = std::move(o.h_);
    }
    return *this;
  }
  /// Closes within default_timeout (errors ignored), then releases the handle.
  ~Producer() { close_quietly(); }

  /// Sends one record and waits for its acknowledgement. partition < 0: the
  /// partitioner chooses; timestamp: milliseconds since the epoch (none: now).
  RecordMetadata send(const std::string &topic, std::string_view payload,
                      std::optional<std::string_view> key = std::nullopt, int32_t partition = CURSUS_ANY_PARTITION,
                      std::optional<int64_t> timestamp = std::nullopt) {
    cursus_record_metadata_t m{};
    detail::call(cursus_producer_send, h_.get(), topic.c_str(), partition, key ? detail::bytes(*key) : nullptr,
                 key ? key->size() : size_t{0}, detail::bytes(payload), payload.size(),
                 timestamp.value_or(CURSUS_NO_TIMESTAMP), &m);
    return RecordMetadata{m.partition, m.offset, m.timestamp};
  }

  /// Queues one record; `callback` then runs once with the outcome. Throws
  /// (and never calls back) when the record cannot be queued.
  void send(const std::string &topic, std::string_view payload, Callback callback,
            std::optional<std::string_view> key = std::nullopt, int32_t partition = CURSUS_ANY_PARTITION,
            std::optional<int64_t> timestamp = std::nullopt) {
    auto *boxed = new Callback(std::move(callback));
    cursus_error_t *err = nullptr;
    cursus_status_t s = cursus_producer_send_cb(h_.get(), topic.c_str(), partition, key ? detail::bytes(*key) : nullptr,
                                                key ? key->size() : size_t{0}, detail::bytes(payload), payload.size(),
                                                timestamp.value_or(CURSUS_NO_TIMESTAMP), &Producer::trampoline, boxed,
                                                &err);
    if (s != CURSUS_OK) {
      delete boxed;  // not queued: the callback will never run
      std::unique_ptr<cursus_error_t, void (*)(cursus_error_t *)> guard(err, cursus_error_destroy);
      detail::throw_from(s, err);
    }
  }

  /// Queues one record; the future holds its metadata or its error.
  std::future<RecordMetadata> send_async(const std::string &topic, std::string_view payload,
                                         std::optional<std::string_view> key = std::nullopt,
                                         int32_t partition = CURSUS_ANY_PARTITION,
                                         std::optional<int64_t> timestamp = std::nullopt) {
    auto promise = std::make_shared<std::promise<RecordMetadata>>();
    std::future<RecordMetadata> f = promise->get_future();
    send(
        topic, payload,
        [promise](const DeliveryReport &r) {
          if (r.error)
            promise->set_exception(r.error);
          else
            promise->set_value(r.metadata);
        },
        key, partition, timestamp);
    return f;
  }

  /// Sends everything queued and waits until every record sent before is
  /// acknowledged and its callback returned (TimeoutError after `timeout`).
  void flush(std::chrono::milliseconds timeout = default_timeout) {
    detail::call(cursus_producer_flush, h_.get(), detail::millis(timeout));
  }
  /// Flushes within `timeout`, fails what is left, closes (idempotent).
  void close(std::chrono::milliseconds timeout = default_timeout) {
    detail::call(cursus_producer_close, h_.get(), detail::millis(timeout));
  }

 private:
  static void trampoline(void *user_data, const cursus_delivery_report_t *report) {
    std::unique_ptr<Callback> cb(static_cast<Callback *>(user_data));
    DeliveryReport r{nullptr, detail::str(report->topic),
                     RecordMetadata{report->metadata.partition, report->metadata.offset, report->metadata.timestamp}};
    if (report->status != CURSUS_OK) r.error = detail::capture(report->status, report->error);
    try {
      (*cb)(r);
    } catch (...) {
      // An exception must not unwind into C; a callback reports its own errors.
    }
  }
  void close_quietly() noexcept {
    if (h_.get()) cursus_producer_close(h_.get(), CURSUS_DEFAULT_TIMEOUT, nullptr);
  }
  detail::Handle<cursus_producer_t, cursus_producer_destroy> h_;
};

/// A consumer-group member. close() and wakeup() may be called from another
/// thread and interrupt a blocked poll.
class Consumer {
 public:
  /// Connects with a configuration of kind Consumer (or Any) that has group_id.
  explicit Consumer(const Config &config) {
    cursus_consumer_t *c = nullptr;
    detail::call(cursus_consumer_new, config.c_handle(), &c);
    h_ = detail::Handle<cursus_consumer_t, cursus_consumer_destroy>(c);
  }
  /// Takes over another consumer (which is left empty).
  Consumer(Consumer &&) noexcept = default;
  /// Closes this consumer (as the destructor does), then takes over `o`.
  Consumer &operator=(Consumer &&o) noexcept {
    if (this != &o) {
      close_quietly();
      h_ = std::move(o.h_);
    }
    return *this;
  }
  /// Closes (commits what was returned when auto-commit is on, leaves the
  /// group; errors ignored), then releases the handle.
  ~Consumer() { close_quietly(); }
  /// Subscribes to topics (replacing any earlier subscription).
  void subscribe(const std::vector<std::string> &topics) {
    std::vector<const char *> names;
    for (const auto &t : topics) names.push_back(t.c_str());
    detail::call(cursus_consumer_subscribe, h_.get(), names.data(), names.size());
  }
  /// Subscribes to every topic matching a glob pattern.
  void subscribe_pattern(const std::string &pattern) {
    detail::call(cursus_consumer_subscribe_pattern, h_.get(), pattern.c_str());
  }
  /// The next message, waiting at most `timeout` (no_timeout: until one
  /// arrives); none after wakeup() or when nothing came in time. Only the
  /// messages returned count as delivered.
  std::optional<Message> poll(std::chrono::milliseconds timeout) {
    cursus_message_t *m = nullptr;
    detail::call(cursus_consumer_poll, h_.get(), detail::millis(timeout), &m);
    if (!m) return std::nullopt;
    return Message(m);
  }
  /// Up to `max_records` records at once (owning copies of their bytes).
  std::vector<Record> poll_batch(std::chrono::milliseconds timeout, uint32_t max_records) {
    uint8_t *buf = nullptr;
    size_t len = 0;
    detail::call(cursus_consumer_poll_batch, h_.get(), detail::millis(timeout), max_records, &buf, &len);
    std::unique_ptr<uint8_t, std::function<void(uint8_t *)>> owned(buf, [len](uint8_t *b) { cursus_buffer_free(b, len); });
    return decode(buf, len);
  }
  /// Makes a blocked (or the next) poll return at once with nothing.
  void wakeup() { detail::call(cursus_consumer_wakeup, h_.get()); }
  /// Commits the positions of the messages returned so far.
  void commit() { detail::call(cursus_consumer_commit, h_.get()); }
  /// Commits in the background; the future completes with the outcome.
  std::future<void> commit_async() {
    auto *promise = new std::promise<void>();
    std::future<void> f = promise->get_future();
    cursus_error_t *err = nullptr;
    cursus_status_t s = cursus_consumer_commit_async(h_.get(), &Consumer::completed, promise, &err);
    if (s != CURSUS_OK) {
      delete promise;
      std::unique_ptr<cursus_error_t, void (*)(cursus_error_t *)> guard(err, cursus_error_destroy);
      detail::throw_from(s, err);
    }
    return f;
  }
  /// Commits explicit next offsets (the offset after the last record
  /// processed), synchronously; the consumer must have joined its group
  /// (polled once after subscribing).
  void commit_offsets(const std::map<TopicPartition, uint64_t> &offsets) {
    auto list = detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_topic_partition_list_new);
    for (const auto &o : offsets)
      detail::call(cursus_topic_partition_list_add, list.get(), o.first.topic.c_str(), o.first.partition,
                   static_cast<int64_t>(o.second));
    detail::call(cursus_consumer_commit_offsets, h_.get(), list.get());
  }
  /// The group's committed next offset of a partition (none when nothing was committed).
  std::optional<uint64_t> committed(const std::string &topic, uint32_t partition) {
    int64_t offset = -1;
    detail::call(cursus_consumer_committed, h_.get(), topic.c_str(), partition, &offset);
    return offset < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(offset));
  }
  /// The partitions assigned to this member.
  std::vector<TopicPartition> assignment() {
    auto l = detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_consumer_assignment, h_.get());
    std::vector<TopicPartition> out;
    for (size_t i = 0, n = cursus_topic_partition_list_count(l.get()); i < n; i++)
      out.push_back(TopicPartition{detail::str(cursus_topic_partition_list_topic(l.get(), i)),
                                   static_cast<uint32_t>(cursus_topic_partition_list_partition(l.get(), i))});
    return out;
  }
  /// This member's id in its group (as Admin::group_status lists it);
  /// empty before it has joined (the first poll after subscribing joins).
  std::string member_id() {
    char *id = nullptr;
    detail::call(cursus_consumer_member_id, h_.get(), &id);
    std::unique_ptr<char, void (*)(char *)> owned(id, cursus_string_free);
    return detail::str(id);
  }
  /// Commits what was returned (with auto-commit), leaves the group and
  /// closes; a poll blocked in another thread throws ClosedError.
  void close() { detail::call(cursus_consumer_close, h_.get()); }

 private:
  void close_quietly() noexcept {
    if (h_.get()) cursus_consumer_close(h_.get(), nullptr);
  }
  static void completed(void *user_data, cursus_status_t status, const cursus_error_t *error) {
    std::unique_ptr<std::promise<void>> p(static_cast<std::promise<void> *>(user_data));
    if (status == CURSUS_OK)
      p->set_value();
    else
      p->set_exception(detail::capture(status, error));
  }
  static uint32_t u32(const uint8_t *p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  static uint64_t u64(const uint8_t *p) { return uint64_t(u32(p)) | uint64_t(u32(p + 4)) << 32; }
  // The record view of bridge/src/records.rs (little-endian).
  static std::vector<Record> decode(const uint8_t *p, size_t len) {
    std::vector<Record> out;
    if (len < 4) return out;
    const uint8_t *end = p + len;
    uint32_t n = u32(p);
    p += 4;
    auto take = [&](size_t k) {
      if (size_t(end - p) < k) throw InternalError(CURSUS_ERR_INTERNAL, "internal_error (internal): truncated record view",
                                                   "internal_error", "internal", "internal", false, "truncated record view", {});
      const uint8_t *at = p;
      p += k;
      return at;
    };
    for (uint32_t i = 0; i < n; i++) {
      Record r;
      uint32_t tl = u32(take(4));
      r.topic.assign(reinterpret_cast<const char *>(take(tl)), tl);
      r.partition = u32(take(4));
      r.offset = u64(take(8));
      r.timestamp = static_cast<int64_t>(u64(take(8)));
      uint32_t kl = u32(take(4));
      r.key.assign(reinterpret_cast<const char *>(take(kl)), kl);
      uint32_t vl = u32(take(4));
      r.value.assign(reinterpret_cast<const char *>(take(vl)), vl);
      out.push_back(std::move(r));
    }
    return out;
  }
  detail::Handle<cursus_consumer_t, cursus_consumer_destroy> h_;
};

}  // namespace cursus

#endif  // CURSUS_HPP
