// cursus/telemetry.hpp: the spans a tracing layer records, as the engine
// declares them (part of cursus.hpp; include that). docs/observability.md,
// "Spans" and "C and C++: the trace-context hook".
#ifndef CURSUS_TELEMETRY_HPP
#define CURSUS_TELEMETRY_HPP

#include <variant>

#include "producer.hpp"
#include "types.hpp"

namespace cursus {

/// One attribute of a span: a string or an integer.
struct SpanAttribute {
  std::string key;                         ///< E.g. "messaging.destination.name".
  std::variant<std::string, int64_t> value;  ///< The value.
};

/// A span to start (name, kind, attributes), as the engine declares it: an
/// opentelemetry-cpp layer starts a span with these, so every language
/// names and describes its spans the same way.
struct SpanSpec {
  std::string name;                       ///< E.g. "publish orders" (empty: attributes alone).
  std::string kind;                       ///< "producer", "consumer" or "client".
  std::vector<SpanAttribute> attributes;  ///< The attributes known when the span starts.
};

namespace detail {
/// A span spec from its handle (consumed).
inline SpanSpec span(cursus_span_spec_t *h) {
  Handle<cursus_span_spec_t, cursus_span_spec_destroy> owned(h);
  SpanSpec s{cursus_span_spec_name(h), cursus_span_spec_kind(h), {}};
  size_t n = cursus_span_spec_attribute_count(h);
  s.attributes.reserve(n);
  for (size_t i = 0; i < n; i++) {
    const char *str = cursus_span_spec_attribute_string(h, i);
    SpanAttribute a{cursus_span_spec_attribute_key(h, i), int64_t{0}};
    if (str)
      a.value = std::string(str);
    else
      a.value = cursus_span_spec_attribute_int(h, i);
    s.attributes.push_back(std::move(a));
  }
  return s;
}
/// `s` as an optional C string (NULL when empty).
inline const char *opt_text(const std::string &s, const char *name) { return s.empty() ? nullptr : text(s, name); }
}  // namespace detail

/// The engine's span declarations (core/src/telemetry.rs).
namespace spans {

/// The instrumentation scope to name the tracer with ("cursus").
inline std::string scope() {
  char *s = nullptr;
  detail::call(cursus_span_scope, &s);
  std::unique_ptr<char, void (*)(char *)> owned(s, cursus_string_free);
  return s;
}

/// The publish span of a send of `payload` to `topic` with `options`
/// (started at the send, ended at its acknowledgement).
inline SpanSpec publish(const std::string &topic, std::string_view payload, const SendOptions &options = {},
                        const std::string &client_id = "") {
  cursus_span_spec_t *h = nullptr;
  const auto &key = options.key;
  detail::call(cursus_span_publish, detail::text(topic, "topic"), options.partition,
               key ? detail::bytes(*key) : nullptr, key ? key->size() : size_t{0}, uint64_t{payload.size()},
               detail::opt_text(client_id, "client id"), &h);
  return detail::span(h);
}

/// What a publish span adds once its record is acknowledged.
inline std::vector<SpanAttribute> acknowledged(const RecordMetadata &md) {
  cursus_span_spec_t *h = nullptr;
  detail::call(cursus_span_acknowledged, static_cast<uint32_t>(md.partition), md.offset, &h);
  return detail::span(h).attributes;
}

/// The receive span of one poll that returned `count` records of `topics`.
inline SpanSpec receive(const std::vector<std::string> &topics, size_t count, const std::string &group = "") {
  std::vector<const char *> names;
  for (const auto &t : topics) names.push_back(detail::text(t, "topic"));
  cursus_span_spec_t *h = nullptr;
  detail::call(cursus_span_receive, names.data(), names.size(), uint64_t{count}, detail::opt_text(group, "group"),
               &h);
  return detail::span(h);
}

/// The process span of `m` (a child of m.trace_context()).
inline SpanSpec process(const Message &m, const std::string &group = "") {
  std::string topic(m.topic());
  std::string_view key = m.key(), payload = m.payload();
  cursus_span_spec_t *h = nullptr;
  detail::call(cursus_span_process, topic.c_str(), static_cast<uint32_t>(m.partition()),
               static_cast<uint64_t>(m.offset()), m.has_key() ? detail::bytes(key) : nullptr, key.size(),
               uint64_t{payload.size()}, detail::opt_text(group, "group"), &h);
  return detail::span(h);
}

/// The span of a transaction's commit (`commit` true) or abort.
inline SpanSpec end_transaction(const std::string &transactional_id, bool commit) {
  cursus_span_spec_t *h = nullptr;
  detail::call(cursus_span_end_transaction, detail::text(transactional_id, "transactional id"), commit, &h);
  return detail::span(h);
}

/// The span of an event-store append to `aggregate` expecting `version`.
inline SpanSpec append(const std::string &topic, const std::string &aggregate, uint64_t version) {
  cursus_span_spec_t *h = nullptr;
  detail::call(cursus_span_append, detail::text(topic, "topic"), detail::text(aggregate, "aggregate"), version, &h);
  return detail::span(h);
}

/// The span of an event-store read of `aggregate` from `from_version`.
inline SpanSpec read(const std::string &topic, const std::string &aggregate, uint64_t from_version) {
  cursus_span_spec_t *h = nullptr;
  detail::call(cursus_span_read, detail::text(topic, "topic"), detail::text(aggregate, "aggregate"), from_version,
               &h);
  return detail::span(h);
}

/// What the span of an operation that failed with `e` adds (error.type).
inline std::vector<SpanAttribute> failed(const Error &e) {
  cursus_span_spec_t *h = nullptr;
  detail::call(cursus_span_failed, detail::text(e.code(), "code"), &h);
  return detail::span(h).attributes;
}

}  // namespace spans
}  // namespace cursus

#endif  // CURSUS_TELEMETRY_HPP
