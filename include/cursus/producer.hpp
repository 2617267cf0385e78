// cursus/producer.hpp: Producer and DeliveryReport (part of cursus.hpp; include that).
#ifndef CURSUS_PRODUCER_HPP
#define CURSUS_PRODUCER_HPP

#include "types.hpp"

namespace cursus {

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

}  // namespace cursus

#endif  // CURSUS_PRODUCER_HPP
