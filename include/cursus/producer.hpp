// cursus/producer.hpp: Producer and DeliveryReport (part of cursus.hpp; include that).
#ifndef CURSUS_PRODUCER_HPP
#define CURSUS_PRODUCER_HPP

#include "consumer.hpp"
#include "types.hpp"

namespace cursus {

/// The outcome of one send, given to a delivery callback.
struct DeliveryReport {
  std::exception_ptr error; ///< Set when the record failed.
  std::string topic;        ///< The record's topic.
  RecordMetadata metadata;  ///< Where it was stored (when no error).
};

/// One record of a batch send (`Producer::send_batch`). The views must stay
/// valid during the call only: the batch is copied before it returns.
struct BatchRecord {
  std::string_view value{};                            ///< The value (any bytes).
  std::optional<std::string_view> key = std::nullopt;  ///< The key; none: no key.
  int32_t partition = CURSUS_ANY_PARTITION;            ///< < 0: the partitioner chooses.
  std::optional<int64_t> timestamp = std::nullopt;     ///< Milliseconds since the epoch; none: now.
  /// The record's topic; none: the batch's. A batch has one topic: another
  /// one fails the whole send_batch (InvalidArgumentError, the library's rule).
  std::optional<std::string_view> topic = std::nullopt;
  /// The record's metadata (UTF-8, usually a JSON object); none: none. As
  /// SendOptions::metadata.
  std::optional<std::string> metadata = std::nullopt;
  /// The W3C context of the span sending the record, as
  /// SendOptions::trace_context: the engine adds it to the metadata. A
  /// malformed one fails the whole send_batch with InvalidArgumentError, code
  /// "invalid_trace_context", field "record" the record's index.
  std::optional<TraceContext> trace_context = std::nullopt;
};

/// One record's options besides its topic and value (`Producer::send` with
/// options): what the positional overloads take, plus the record's metadata
/// and the trace context of the span sending it.
struct SendOptions {
  std::optional<std::string_view> key = std::nullopt;  ///< The key; none: no key.
  int32_t partition = CURSUS_ANY_PARTITION;            ///< < 0: the partitioner chooses.
  std::optional<int64_t> timestamp = std::nullopt;     ///< Milliseconds since the epoch; none: now.
  /// The record's metadata (UTF-8, usually a JSON object); none: none.
  std::optional<std::string> metadata = std::nullopt;
  /// The W3C context of the span sending the record (a tracing layer's
  /// publish span): the engine adds it to the metadata, consumers read it
  /// with Message::trace_context (docs/observability.md, "C and C++"). A
  /// malformed one fails the send with InvalidArgumentError, code
  /// "invalid_trace_context".
  std::optional<TraceContext> trace_context = std::nullopt;
};

namespace detail {
/// SendOptions' strings as the traced sends take them (NULL: none); valid
/// while `o` is.
struct TracedArgs {
  const char *metadata;
  const char *traceparent;
  const char *tracestate;
  explicit TracedArgs(const SendOptions &o)
      : metadata(o.metadata ? text(*o.metadata, "metadata") : nullptr),
        traceparent(o.trace_context ? text(o.trace_context->traceparent, "traceparent") : nullptr),
        tracestate(o.trace_context && o.trace_context->tracestate ? text(*o.trace_context->tracestate, "tracestate")
                                                                  : nullptr) {}
};

inline void put_le(std::string &out, uint64_t v, int n) {
  for (int i = 0; i < n; i++) out.push_back(static_cast<char>(v >> (8 * i)));
}
/// Whether a batch needs the traced layout: a record has metadata or a trace context.
inline bool batch_traced(const std::vector<BatchRecord> &records) {
  for (const auto &r : records)
    if (r.metadata || r.trace_context) return true;
  return false;
}
/// Appends an i32 length (-1: none) and the bytes.
inline void put_text(std::string &out, const std::optional<std::string> &s) {
  if (!s) {
    put_le(out, 0xffffffffu, 4);
    return;
  }
  put_le(out, s->size(), 4);
  out.append(*s);
}
/// Packs records as cursus_producer_send_batch takes them, or, when `traced`,
/// in the traced layout of cursus_producer_send_batch_traced (each record
/// followed by its metadata, traceparent and tracestate; bridge/src/records_in.rs).
inline std::string pack_batch(const std::vector<BatchRecord> &records, bool traced) {
  size_t size = 4;
  for (const auto &r : records)
    size += 24 + r.value.size() + (r.key ? r.key->size() : 0) + (r.topic ? r.topic->size() : 0);
  std::string out;
  out.reserve(size + (traced ? 12 * records.size() : 0));
  put_le(out, records.size(), 4);
  for (const auto &r : records) {
    if (r.topic) {
      put_le(out, r.topic->size(), 4);
      out.append(r.topic->data(), r.topic->size());
    } else {
      put_le(out, 0xffffffffu, 4);  // -1: the batch's topic
    }
    put_le(out, static_cast<uint32_t>(r.partition), 4);
    put_le(out, static_cast<uint64_t>(r.timestamp.value_or(CURSUS_NO_TIMESTAMP)), 8);
    if (r.key) {
      put_le(out, r.key->size(), 4);
      out.append(r.key->data(), r.key->size());
    } else {
      put_le(out, 0xffffffffu, 4);  // -1: no key
    }
    put_le(out, r.value.size(), 4);
    out.append(r.value.data(), r.value.size());
    if (traced) {
      put_text(out, r.metadata);
      put_text(out, r.trace_context ? std::optional<std::string>(r.trace_context->traceparent) : std::nullopt);
      put_text(out, r.trace_context ? r.trace_context->tracestate : std::nullopt);
    }
  }
  return out;
}
inline uint64_t get_le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
}  // namespace detail

/// Sends records. May be shared between threads.
class Producer {
 public:
  /// A delivery callback (runs on the producer's callback thread; may call the producer).
  using Callback = std::function<void(const DeliveryReport &)>;
  /// A batch's delivery callback: every record's report, in the order sent.
  using BatchCallback = std::function<void(std::vector<DeliveryReport> &)>;

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
      h_ = std::move(o.h_);  // destroys the old C producer first,
      listeners_ = std::move(o.listeners_);  // then the listeners it may have called
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

  /// Sends one record with `options` (metadata, trace context, ...) and
  /// waits for its acknowledgement.
  RecordMetadata send(const std::string &topic, std::string_view payload, const SendOptions &options) {
    const auto &key = options.key;
    detail::TracedArgs traced(options);
    cursus_record_metadata_t m{};
    detail::call(cursus_producer_send_traced, h_.get(), topic.c_str(), options.partition,
                 key ? detail::bytes(*key) : nullptr, key ? key->size() : size_t{0}, detail::bytes(payload),
                 payload.size(), options.timestamp.value_or(CURSUS_NO_TIMESTAMP), traced.metadata, traced.traceparent,
                 traced.tracestate, &m);
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
    queued_or_throw(s, err, boxed);
  }

  /// Queues one record with `options` (metadata, trace context, ...);
  /// `callback` then runs once with the outcome. Throws (and never calls
  /// back) when the record cannot be queued or its trace context is malformed.
  void send(const std::string &topic, std::string_view payload, const SendOptions &options, Callback callback) {
    const auto &key = options.key;
    detail::TracedArgs traced(options);
    auto *boxed = new Callback(std::move(callback));
    cursus_error_t *err = nullptr;
    cursus_status_t s = cursus_producer_send_cb_traced(
        h_.get(), topic.c_str(), options.partition, key ? detail::bytes(*key) : nullptr,
        key ? key->size() : size_t{0}, detail::bytes(payload), payload.size(),
        options.timestamp.value_or(CURSUS_NO_TIMESTAMP), traced.metadata, traced.traceparent, traced.tracestate,
        &Producer::trampoline, boxed, &err);
    queued_or_throw(s, err, boxed);
  }

  /// Queues one record with `options`; the future holds its metadata or its error.
  std::future<RecordMetadata> send_async(const std::string &topic, std::string_view payload,
                                         const SendOptions &options) {
    auto promise = std::make_shared<std::promise<RecordMetadata>>();
    std::future<RecordMetadata> f = promise->get_future();
    send(topic, payload, options, promise_callback(promise));
    return f;
  }

  /// Queues one record; the future holds its metadata or its error.
  std::future<RecordMetadata> send_async(const std::string &topic, std::string_view payload,
                                         std::optional<std::string_view> key = std::nullopt,
                                         int32_t partition = CURSUS_ANY_PARTITION,
                                         std::optional<int64_t> timestamp = std::nullopt) {
    auto promise = std::make_shared<std::promise<RecordMetadata>>();
    std::future<RecordMetadata> f = promise->get_future();
    send(topic, payload, promise_callback(promise), key, partition, timestamp);
    return f;
  }

  /// Queues every record of `records` (all of `topic`) in one call; `callback`
  /// then runs ONCE, on the producer's callback thread, with every record's
  /// report in order. A record that cannot be queued (a partition that does
  /// not exist, too large) fails alone, in its report. Throws (and never
  /// calls back) when the batch cannot start (a closed producer, a
  /// malformed trace context). Records with metadata or a trace context
  /// carry them as a single send with SendOptions does.
  void send_batch(const std::string &topic, const std::vector<BatchRecord> &records, BatchCallback callback) {
    bool traced = detail::batch_traced(records);
    std::string packed = detail::pack_batch(records, traced);
    auto *boxed = new BatchCallback(std::move(callback));
    cursus_error_t *err = nullptr;
    // The plain layout when no record needs the traced one: 12 bytes less per record.
    auto *send = traced ? cursus_producer_send_batch_traced : cursus_producer_send_batch;
    cursus_status_t s = send(h_.get(), topic.c_str(), detail::bytes(packed), packed.size(),
                             &Producer::batch_trampoline, boxed, &err);
    if (s != CURSUS_OK) {
      delete boxed;
      std::unique_ptr<cursus_error_t, void (*)(cursus_error_t *)> guard(err, cursus_error_destroy);
      detail::throw_from(s, err);
    }
  }

  /// Queues a batch (as send_batch); the future holds every record's report.
  std::future<std::vector<DeliveryReport>> send_batch_async(const std::string &topic,
                                                           const std::vector<BatchRecord> &records) {
    auto promise = std::make_shared<std::promise<std::vector<DeliveryReport>>>();
    std::future<std::vector<DeliveryReport>> f = promise->get_future();
    send_batch(topic, records, [promise](std::vector<DeliveryReport> &reports) {
      promise->set_value(std::move(reports));
    });
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

  // Transactions (a producer configured with transactional_id; see
  // docs/transactions.md and cursus::Transaction). A call in the wrong state
  // throws InvalidArgumentError with code() "invalid_transaction_state"; once
  // a newer producer with the same transactional_id has fenced this one,
  // every call throws FencingError ("producer_fenced").

  /// Obtains the transactional session from the broker, fencing any older
  /// producer with the same transactional_id and aborting a transaction it
  /// left open. Call once, before the first transaction.
  void init_transactions() { detail::call(cursus_producer_init_transactions, h_.get()); }
  /// Begins a transaction: records sent until commit or abort belong to it.
  void begin_transaction() { detail::call(cursus_producer_begin_transaction, h_.get()); }
  /// Adds what `consumer` has delivered so far (the offset after the last
  /// record each partition returned) to the open transaction, fenced by the
  /// consumer's group session: committed with the transaction's records, or
  /// not at all. The consumer must have joined its group (polled once).
  void send_offsets_to_transaction(Consumer &consumer) {
    detail::call(cursus_producer_send_consumer_offsets, h_.get(), consumer.c_handle());
  }
  /// Adds explicit next offsets (the offset after the last record
  /// processed) to the open transaction, fenced by `consumer`'s group session.
  void send_offsets_to_transaction(const std::map<TopicPartition, uint64_t> &offsets, Consumer &consumer) {
    auto list = detail::result<cursus_topic_partition_list_t, cursus_topic_partition_list_destroy>(
        cursus_topic_partition_list_new);
    for (const auto &o : offsets)
      detail::call(cursus_topic_partition_list_add, list.get(), o.first.topic.c_str(), o.first.partition,
                   static_cast<int64_t>(o.second));
    detail::call(cursus_producer_send_offsets_to_transaction, h_.get(), list.get(), consumer.c_handle());
  }
  /// Appends `event` to aggregate `key` of an event-sourcing topic inside
  /// the open transaction (TXN_APPEND_STREAM): it becomes version
  /// `expected_version + 1` when the transaction commits, together with the
  /// transaction's records and offsets, and never if it aborts. Until then
  /// it is invisible to readers and the aggregate is reserved (other
  /// writers get ConflictError "stream_version_reserved"). Returns the
  /// version and offset it will have. A failure makes the transaction
  /// abort-only, as a failed send does. On an aggregate replay topic give
  /// the event an id (Event::event_id) or let one be generated.
  Appended append_stream(const std::string &topic, const std::string &key, uint64_t expected_version,
                         const Event &event) {
    auto b = detail::event_builder(event);
    cursus_appended_t *a = nullptr;
    detail::call(cursus_producer_append_stream, h_.get(), detail::text(topic, "topic"), detail::text(key, "key"),
                 expected_version, b.get(), &a);
    return detail::appended(a);
  }
  /// Waits for every send of the open transaction, then commits it. An
  /// unknown outcome is retried until the broker decides (up to
  /// delivery_timeout_ms); if it is still undecided the error is thrown and
  /// commit may be called again. After a failed send it throws: abort.
  void commit_transaction() { detail::call(cursus_producer_commit_transaction, h_.get()); }
  /// Waits for the open transaction's sends to finish, then aborts it: none
  /// of its records or offsets become visible to read_committed consumers.
  void abort_transaction() { detail::call(cursus_producer_abort_transaction, h_.get()); }

  /// The C handle (owned by this Producer).
  cursus_producer_t *c_handle() const noexcept { return h_.get(); }

  /// The producer's statistics now.
  Statistics statistics() { return detail::statistics_of(cursus_producer_statistics, h_.get()); }
  /// Calls `handler` with the producer's statistics every `interval` (zero:
  /// the statistics_interval_ms option) on its callback thread; an empty
  /// handler removes it. An exception it throws is caught and logged. The
  /// handler (and any it replaced) is kept until this Producer is destroyed.
  void set_statistics_handler(std::chrono::milliseconds interval, StatisticsHandler handler) {
    if (!handler) {
      detail::call(cursus_producer_set_statistics_listener, h_.get(), detail::interval(interval),
                   cursus_statistics_listener(nullptr), static_cast<void *>(nullptr));
      return;
    }
    StatisticsHandler *kept = store().keep(std::move(handler));
    detail::call(cursus_producer_set_statistics_listener, h_.get(), detail::interval(interval),
                 &detail::statistics_trampoline, static_cast<void *>(kept));
  }
  /// Calls `handler` with each background error (a batch that failed, a
  /// fenced producer, a lost broker connection) on the producer's callback
  /// thread; an empty handler removes it. An exception it throws is caught and logged.
  void set_error_handler(ErrorHandler handler) {
    if (!handler) {
      detail::call(cursus_producer_set_error_listener, h_.get(), cursus_error_listener(nullptr),
                   static_cast<void *>(nullptr));
      return;
    }
    ErrorHandler *kept = store().keep(std::move(handler));
    detail::call(cursus_producer_set_error_listener, h_.get(), &detail::error_trampoline, static_cast<void *>(kept));
  }

 private:
  /// After a send with a callback: throws when the record was not queued
  /// (and frees the callback, which will never run).
  static void queued_or_throw(cursus_status_t s, cursus_error_t *err, Callback *boxed) {
    if (s == CURSUS_OK) return;
    delete boxed;
    std::unique_ptr<cursus_error_t, void (*)(cursus_error_t *)> guard(err, cursus_error_destroy);
    detail::throw_from(s, err);
  }
  /// A delivery callback settling `promise`.
  static Callback promise_callback(std::shared_ptr<std::promise<RecordMetadata>> promise) {
    return [promise](const DeliveryReport &r) {
      if (r.error)
        promise->set_exception(r.error);
      else
        promise->set_value(r.metadata);
    };
  }
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
  static void batch_trampoline(void *user_data, cursus_status_t status, cursus_delivery_batch_t *batch,
                               const cursus_error_t *error) {
    std::unique_ptr<BatchCallback> cb(static_cast<BatchCallback *>(user_data));
    try {
      std::vector<DeliveryReport> reports;
      if (status == CURSUS_OK) {
        std::string topic = detail::str(cursus_delivery_batch_topic(batch));
        size_t len = 0;
        const uint8_t *p = cursus_delivery_batch_packed(batch, &len);
        size_t n = len >= 4 ? static_cast<size_t>(detail::get_le(p, 4)) : 0;
        reports.reserve(n);
        for (size_t i = 0; i < n && 4 + (i + 1) * 24 <= len; i++) {
          const uint8_t *r = p + 4 + i * 24;
          DeliveryReport report{nullptr, topic,
                                RecordMetadata{static_cast<int32_t>(detail::get_le(r + 4, 4)),
                                               static_cast<int64_t>(detail::get_le(r + 8, 8)),
                                               static_cast<int64_t>(detail::get_le(r + 16, 8))}};
          if (detail::get_le(r, 4) != 0) {
            cursus_error_t *e = nullptr;
            cursus_status_t s = cursus_delivery_batch_check(batch, i, &e);
            report.error = detail::capture(s, e);
            cursus_error_destroy(e);
          }
          reports.push_back(std::move(report));
        }
      } else {
        (void)error;  // the batch callback is only ever called with a batch
      }
      (*cb)(reports);
    } catch (...) {
      // An exception must not unwind into C; a callback reports its own errors.
    }
  }
  void close_quietly() noexcept {
    if (h_.get()) cursus_producer_close(h_.get(), CURSUS_DEFAULT_TIMEOUT, nullptr);
  }
  detail::ListenerStore &store() {
    if (!listeners_) listeners_ = std::make_unique<detail::ListenerStore>();  // a moved-from object
    return *listeners_;
  }
  // Declared before h_: destroyed after the C producer, which may call them until then.
  std::unique_ptr<detail::ListenerStore> listeners_ = std::make_unique<detail::ListenerStore>();
  detail::Handle<cursus_producer_t, cursus_producer_destroy> h_;
};

}  // namespace cursus

#endif  // CURSUS_PRODUCER_HPP
