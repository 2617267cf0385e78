// cursus/types.hpp: Config, admin result types, Message and Record (part of cursus.hpp; include that).
#ifndef CURSUS_TYPES_HPP
#define CURSUS_TYPES_HPP

#include "error.hpp"
#include "results.hpp"

namespace cursus {

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

// The admin result types (TopicInfo, TopicDescription, PartitionDescription,
// TopicMetadata, PartitionOffsets, GroupStatus, GroupMember, DeleteResult,
// TruncateResult) and Appended are generated: cursus/results.hpp.

/// An event to append (EventStore::append, Producer::append_stream).
/// Payload, metadata, event type and event id are UTF-8 text.
/// `{"OrderCreated", payload}` or `{"OrderCreated", payload, metadata, 2}`,
/// with an id: `cursus::Event{"OrderCreated", payload}.with_event_id("order-1-created")`.
struct Event {
  /// An empty event.
  Event() = default;
  /// An event of `event_type` carrying `payload`.
  Event(std::string event_type, std::string payload, std::string metadata = {}, uint32_t schema_version = 0)
      : event_type(std::move(event_type)),
        payload(std::move(payload)),
        metadata(std::move(metadata)),
        schema_version(schema_version) {}
  /// This event with `id` as its event id.
  Event &with_event_id(std::string id) & {
    event_id = std::move(id);
    return *this;
  }
  /// This event with `id` as its event id.
  Event &&with_event_id(std::string id) && {
    event_id = std::move(id);
    return std::move(*this);
  }
  std::string event_type;      ///< Event type name (e.g. "OrderCreated"); may be empty.
  std::string payload;         ///< Payload text (e.g. JSON).
  std::string metadata;        ///< Metadata text; may be empty.
  uint32_t schema_version = 0; ///< Schema version of the payload (0: the broker's default, 1).
  /// The event's id: non-empty text without whitespace, unique per
  /// aggregate replay topic (empty: one is generated at append). On a
  /// replay topic an append repeated with the same id, version and payload
  /// is answered with the original offset instead of a second event.
  std::string event_id;
};

namespace detail {

/// `s` as a C string; a NUL inside (where a C string would end, cutting the
/// text short) throws InvalidArgumentError.
inline const char *text(const std::string &s, const char *name) {
  if (s.find('\0') != std::string::npos) {
    std::string msg = std::string(name) + " must not contain a NUL byte";
    throw InvalidArgumentError(CURSUS_ERR_INVALID_ARGUMENT, "invalid_argument (validation): " + msg, "invalid_argument",
                               "validation", "invalid_argument", false, msg, {});
  }
  return s.c_str();
}

/// An event builder for `event` (owned).
inline Handle<cursus_event_builder_t, cursus_event_builder_destroy> event_builder(const Event &event) {
  cursus_event_builder_t *b = nullptr;
  call(cursus_event_builder_new, text(event.event_type, "event type"), text(event.payload, "payload"), &b);
  Handle<cursus_event_builder_t, cursus_event_builder_destroy> owned(b);
  if (!event.metadata.empty()) call(cursus_event_builder_set_metadata, b, text(event.metadata, "metadata"));
  if (event.schema_version) call(cursus_event_builder_set_schema_version, b, event.schema_version);
  if (!event.event_id.empty()) call(cursus_event_builder_set_event_id, b, text(event.event_id, "event id"));
  return owned;
}

/// An Appended from its handle (consumed).
inline Appended appended(cursus_appended_t *a) {
  Handle<cursus_appended_t, cursus_appended_destroy> owned(a);
  return read_appended(a);
}

/// A TopicInfo from its handle (consumed).
inline TopicInfo topic_info(cursus_topic_info_t *h) {
  Handle<cursus_topic_info_t, cursus_topic_info_destroy> owned(h);
  return read_topic_info(h);
}

}  // namespace detail

/// The event fields of a record of an event-sourcing topic.
struct RecordEvent {
  std::string type;                ///< Event type, e.g. "OrderPlaced".
  uint32_t schema_version = 0;     ///< The event's schema version.
  int64_t aggregate_version = 0;   ///< The aggregate version this event created.
  std::optional<std::string> id;   ///< The event id, when it has one.
};

/// A W3C trace context (docs/observability.md, "Trace context in records"):
/// what a send carries for the span that sent the record, and what a
/// consumed record gives back. Plain values; the send checks them
/// (InvalidArgumentError, code "invalid_trace_context").
struct TraceContext {
  std::string traceparent;                ///< The `traceparent` header value.
  std::optional<std::string> tracestate;  ///< The `tracestate` header value, if any.

  /// Compares both values.
  bool operator==(const TraceContext &o) const { return traceparent == o.traceparent && tracestate == o.tracestate; }
  /// Compares both values.
  bool operator!=(const TraceContext &o) const { return !(*this == o); }
};

namespace detail {
/// The context of `traceparent` and `tracestate` (either may be NULL).
inline std::optional<TraceContext> trace_context(const char *traceparent, const char *tracestate) {
  if (!traceparent) return std::nullopt;
  return TraceContext{traceparent, tracestate ? std::optional<std::string>(tracestate) : std::nullopt};
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
  /// Whether the record has a key (an empty key arrives as none).
  bool has_key() const { return cursus_message_has_key(h_.get()); }
  /// The record's metadata (UTF-8, usually JSON on event-sourcing topics), none when it has none.
  std::optional<std::string_view> metadata() const {
    const char *m = cursus_message_metadata(h_.get());
    return m ? std::optional<std::string_view>(m) : std::nullopt;
  }
  /// The trace context the record carries (the sending span's), none when
  /// it carries none: the parent of a process span, a link of a receive span.
  std::optional<TraceContext> trace_context() const {
    return detail::trace_context(cursus_message_traceparent(h_.get()), cursus_message_tracestate(h_.get()));
  }
  /// The event fields when the record is an event of an event-sourcing topic.
  std::optional<RecordEvent> event() const {
    const char *type = cursus_message_event_type(h_.get());
    if (!type) return std::nullopt;
    const char *id = cursus_message_event_id(h_.get());
    return RecordEvent{type, cursus_message_schema_version(h_.get()), cursus_message_aggregate_version(h_.get()),
                       id ? std::optional<std::string>(id) : std::nullopt};
  }
  /// Key bytes (empty when none; has_key() tells the two apart).
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
  std::optional<std::string> key;       ///< Key bytes (none when the record has no key).
  std::string value;                    ///< Value bytes.
  std::optional<std::string> metadata;  ///< Metadata (UTF-8), none when absent.
  std::optional<RecordEvent> event;     ///< Event fields, when the record is an event.

  /// The trace context the record's metadata carries, as Message::trace_context.
  std::optional<TraceContext> trace_context() const {
    if (!metadata) return std::nullopt;
    cursus_trace_context_t *c = nullptr;
    detail::call(cursus_trace_context_extract, detail::text(*metadata, "metadata"), &c);
    if (!c) return std::nullopt;
    detail::Handle<cursus_trace_context_t, cursus_trace_context_destroy> owned(c);
    return detail::trace_context(cursus_trace_context_traceparent(c), cursus_trace_context_tracestate(c));
  }
};

}  // namespace cursus

#endif  // CURSUS_TYPES_HPP
