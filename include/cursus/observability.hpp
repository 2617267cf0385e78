// cursus/observability.hpp: logging, statistics and listener storage (part of cursus.hpp; include that).
#ifndef CURSUS_OBSERVABILITY_HPP
#define CURSUS_OBSERVABILITY_HPP

#include <iostream>
#include <memory>
#include <mutex>

#include "error.hpp"

namespace cursus {

/// Levels of the engine's log records, least verbose first (off: none).
enum class LogLevel { off, error, warn, info, debug, trace };

/// The name the C ABI uses for a level ("off", "error", ..., "trace").
inline const char *log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warn";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
    case LogLevel::trace: return "trace";
    default: return "off";
  }
}

/// One engine log record, lent for the duration of the handler's call.
struct LogRecord {
  LogLevel level;            ///< error, warn, info, debug or trace.
  std::string_view target;   ///< The engine module, e.g. "cursus::consumer::group".
  std::string_view message;  ///< The message, followed by " key=value" per field.
  uint64_t dropped;          ///< Records dropped just before this one (the handler fell behind).
};

/// A process-wide log handler (see set_log_handler).
using LogHandler = std::function<void(const LogRecord &)>;

namespace detail {

/// The installed log handler; the C listener reads it on each record, so
/// replacing it never leaves the library with a dangling pointer.
struct LogSlot {
  std::mutex mu;
  std::shared_ptr<LogHandler> handler;
};
inline LogSlot &log_slot() {
  static LogSlot *slot = new LogSlot();  // never destroyed: the log thread may outlive static destructors
  return *slot;
}

inline LogLevel parse_level(const char *name) {
  std::string_view n = name ? name : "";
  if (n == "error") return LogLevel::error;
  if (n == "warn") return LogLevel::warn;
  if (n == "debug") return LogLevel::debug;
  if (n == "trace") return LogLevel::trace;
  return LogLevel::info;
}

/// Reports an exception a user listener threw (it must not reach C): to
/// the log handler when one is installed, else to std::cerr.
inline void report_listener_exception(const char *what) noexcept {
  try {
    std::string text = std::string("cursus: ") + what + " threw";
    try {
      throw;
    } catch (const std::exception &e) {
      text += ": ";
      text += e.what();
    } catch (...) {
      text += " a non-standard exception";
    }
    std::shared_ptr<LogHandler> h;
    {
      std::lock_guard<std::mutex> lock(log_slot().mu);
      h = log_slot().handler;
    }
    if (h && *h) {
      (*h)(LogRecord{LogLevel::error, "cursus::cpp", text, 0});
    } else {
      std::cerr << text << std::endl;
    }
  } catch (...) {
    // Reporting failed too: nothing more can be done without unwinding into C.
  }
}

inline void log_trampoline(void *, const cursus_log_record_t *record) noexcept {
  std::shared_ptr<LogHandler> h;
  {
    std::lock_guard<std::mutex> lock(log_slot().mu);
    h = log_slot().handler;
  }
  if (!h || !*h) return;
  try {
    const char *target = cursus_log_record_target(record);
    const char *message = cursus_log_record_message(record);
    (*h)(LogRecord{parse_level(cursus_log_record_level(record)), target ? target : "", message ? message : "",
                   cursus_log_record_dropped(record)});
  } catch (...) {
    // A log handler that throws cannot log its own failure: print it.
    try {
      std::cerr << "cursus: the log handler threw" << std::endl;
    } catch (...) {
    }
  }
}

}  // namespace detail

/// Sends the engine's log records at `level` and above, of every client in
/// the process, to `handler`, on the library's log thread (in order). An
/// empty handler or LogLevel::off stops logging; records below the level
/// cost nearly nothing. When the handler falls 10000 records behind, newer
/// records are dropped and the next one says how many (LogRecord::dropped).
/// An exception the handler throws is caught (and printed to std::cerr).
inline void set_log_handler(LogLevel level, LogHandler handler) {
  bool on = level != LogLevel::off && handler;
  {
    std::lock_guard<std::mutex> lock(detail::log_slot().mu);
    detail::log_slot().handler = on ? std::make_shared<LogHandler>(std::move(handler)) : nullptr;
  }
  detail::call(cursus_log_set_listener, log_level_name(on ? level : LogLevel::off),
               on ? &detail::log_trampoline : nullptr, static_cast<void *>(nullptr));
}

/// Changes the level of the installed log handler.
inline void set_log_level(LogLevel level) { detail::call(cursus_log_set_level, log_level_name(level)); }

/// Latency samples, summarized (microseconds).
struct Latency {
  uint64_t count = 0;    ///< Samples.
  uint64_t p50_us = 0;   ///< Median.
  uint64_t p99_us = 0;   ///< 99th percentile.
  uint64_t p999_us = 0;  ///< 99.9th percentile.
  uint64_t max_us = 0;   ///< Largest sample.
};

/// A consumer's view of one assigned partition.
struct PartitionStatistics {
  std::string topic;      ///< Topic.
  uint32_t partition = 0; ///< Partition.
  int64_t position = -1;  ///< Offset after the last record returned (-1: unknown).
  int64_t end_offset = -1;///< The partition's end offset.
  int64_t lag = -1;       ///< end_offset - position (-1: position unknown).
};

/// A snapshot of a client's counters (docs/observability.md).
struct Statistics {
  std::string client_id;                    ///< The client's client_id.
  std::string kind;                         ///< "producer" or "consumer".
  uint64_t records_sent = 0;                ///< Records acknowledged (producer).
  uint64_t bytes_sent = 0;                  ///< Payload plus key bytes acknowledged (producer).
  uint64_t batches_sent = 0;                ///< Batches acknowledged (producer).
  uint64_t records_received = 0;            ///< Records received (consumer).
  uint64_t bytes_received = 0;              ///< Payload plus key bytes received (consumer).
  uint64_t requests = 0;                    ///< Request attempts (each retry counts).
  uint64_t retries = 0;                     ///< Attempts that were retries.
  uint64_t in_flight_requests = 0;          ///< Requests not answered yet.
  std::map<std::string, uint64_t> errors;   ///< Failed attempts by error class (classes with none absent).
  Latency produce_latency;                  ///< Send to acknowledgement of a batch.
  Latency fetch_latency;                    ///< Fetches that returned records.
  std::vector<PartitionStatistics> partitions; ///< A row per assigned partition (consumer).
  std::string json;                         ///< The whole snapshot as one JSON object.

  /// Copies a statistics handle (borrowed).
  static Statistics from(const cursus_statistics_t *s) {
    Statistics out;
    out.client_id = detail::str(cursus_statistics_client_id(s));
    out.kind = detail::str(cursus_statistics_kind(s));
    out.records_sent = cursus_statistics_records_sent(s);
    out.bytes_sent = cursus_statistics_bytes_sent(s);
    out.batches_sent = cursus_statistics_batches_sent(s);
    out.records_received = cursus_statistics_records_received(s);
    out.bytes_received = cursus_statistics_bytes_received(s);
    out.requests = cursus_statistics_requests(s);
    out.retries = cursus_statistics_retries(s);
    out.in_flight_requests = cursus_statistics_in_flight_requests(s);
    for (const char *c : {"validation", "authorization", "routing", "availability", "conflict", "fencing",
                          "not_found", "internal"})
      if (uint64_t n = cursus_statistics_errors(s, c)) out.errors[c] = n;
    out.produce_latency = Latency{cursus_statistics_produce_latency_count(s), cursus_statistics_produce_latency_p50_us(s),
                                  cursus_statistics_produce_latency_p99_us(s), cursus_statistics_produce_latency_p999_us(s),
                                  cursus_statistics_produce_latency_max_us(s)};
    out.fetch_latency = Latency{cursus_statistics_fetch_latency_count(s), cursus_statistics_fetch_latency_p50_us(s),
                                cursus_statistics_fetch_latency_p99_us(s), cursus_statistics_fetch_latency_p999_us(s),
                                cursus_statistics_fetch_latency_max_us(s)};
    for (size_t i = 0, n = cursus_statistics_partition_count(s); i < n; i++)
      out.partitions.push_back(PartitionStatistics{detail::str(cursus_statistics_partition_topic(s, i)),
                                                   static_cast<uint32_t>(cursus_statistics_partition_partition(s, i)),
                                                   cursus_statistics_partition_position(s, i),
                                                   cursus_statistics_partition_end_offset(s, i),
                                                   cursus_statistics_partition_lag(s, i)});
    out.json = detail::str(cursus_statistics_json(s));
    return out;
  }
};

/// A periodic statistics handler (runs on the client's callback thread).
using StatisticsHandler = std::function<void(const Statistics &)>;
/// A background error handler (runs on the client's callback thread).
using ErrorHandler = std::function<void(const Error &)>;

namespace detail {

/// Listeners a client handed to the library. Each stays alive until the
/// client's C handle is destroyed (a replaced one too: the library may be
/// in the middle of calling it), so the library never calls freed memory.
class ListenerStore {
 public:
  /// Keeps `v` and returns its address (stable: it is on the heap).
  template <typename T>
  T *keep(T v) {
    auto p = std::make_shared<T>(std::move(v));
    std::lock_guard<std::mutex> lock(mu_);
    kept_.push_back(p);
    return p.get();
  }

 private:
  std::mutex mu_;
  std::vector<std::shared_ptr<void>> kept_;
};

inline void statistics_trampoline(void *user_data, const cursus_statistics_t *s) noexcept {
  try {
    (*static_cast<StatisticsHandler *>(user_data))(Statistics::from(s));
  } catch (...) {
    report_listener_exception("a statistics handler");
  }
}

inline void error_trampoline(void *user_data, const cursus_error_t *e) noexcept {
  try {
    try {
      throw_from(cursus_error_status(e), e);
    } catch (const Error &err) {
      (*static_cast<ErrorHandler *>(user_data))(err);
    }
  } catch (...) {
    report_listener_exception("an error handler");
  }
}

/// Statistics now from a client's statistics call.
template <typename F, typename H>
inline Statistics statistics_of(F f, H *h) {
  auto s = result<cursus_statistics_t, cursus_statistics_destroy>(f, h);
  return Statistics::from(s.get());
}

/// A C interval for set_*_statistics_listener (zero or less: the option).
inline int64_t interval(std::chrono::milliseconds d) {
  return d <= std::chrono::milliseconds::zero() ? -1 : static_cast<int64_t>(d.count());
}

}  // namespace detail

}  // namespace cursus

#endif  // CURSUS_OBSERVABILITY_HPP
