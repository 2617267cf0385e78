// cursus/error.hpp: version, timeouts, the exception classes and the helpers that call the C functions (part of cursus.hpp; include that).
#ifndef CURSUS_ERROR_HPP
#define CURSUS_ERROR_HPP

#include "../cursus.h"
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

/// The default wait of flush and close: the library's marker for its
/// default (CURSUS_DEFAULT_TIMEOUT, 30 s in every Cursus language). Not a
/// poll timeout: poll has no default and refuses it (InvalidArgument).
inline constexpr std::chrono::milliseconds default_timeout{CURSUS_DEFAULT_TIMEOUT};
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

/// Milliseconds for the C ABI: default_timeout stays the library's
/// marker, any other negative duration is no_timeout (CURSUS_NO_TIMEOUT).
inline int64_t millis(std::chrono::milliseconds d) {
  if (d == default_timeout) return CURSUS_DEFAULT_TIMEOUT;
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

}  // namespace cursus

#endif  // CURSUS_ERROR_HPP
