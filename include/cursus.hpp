// cursus.hpp: header-only C++17 RAII wrapper over the libcursus C ABI (cursus.h).
//
// - Config, Admin, Producer, Consumer and Message own their C handle, are
//   move-only and release it in their destructor. Transaction is the scope
//   of one producer transaction: it aborts in its destructor unless committed.
// - EventStore appends and reads event-sourced aggregates; its reads are
//   EventCursor ranges of pages, and Aggregate<State> is the load/append/
//   snapshot cycle (include/cursus/eventstore.hpp).
// - Admin results are plain C++ values (TopicInfo, TopicDescription,
//   TopicMetadata, GroupStatus, ...), read from the C result handles.
// - Every failure throws a subclass of cursus::Error chosen by the status
//   (ValidationError, RoutingError, FencingError, ...; TimeoutError,
//   ClosedError and InvalidArgumentError for local failures). what() is the
//   error's readable text, the same in every Cursus language; code(),
//   error_class(), kind(), retryable() and fields() give it typed.
// - Observability: set_log_handler (process-wide engine log records),
//   statistics() snapshots and periodic set_statistics_handler, and
//   set_error_handler for background errors, per producer and consumer.
//   Consumer control: seek, position, pause/resume/paused, committed for a
//   list of partitions, and a RebalanceListener (cursus/observability.hpp,
//   cursus/consumer.hpp). Exceptions thrown by listeners are caught and
//   logged, never passed to C.
// - Callbacks run on the client's own callback thread, never a network
//   thread; they may call the wrapper again (send and flush included).
// - flush and close wait the library's default (cursus::default_timeout,
//   its marker for 30 s) unless told otherwise; cursus::no_timeout waits
//   without limit.
// - Thread safety is that of the C functions (see cursus.h).
//
// Build with C++17 or later: `pkg-config --cflags --libs cursus++`, or CMake
// `find_package(cursus)` and `target_link_libraries(app cursus::cursus++)`.
#ifndef CURSUS_HPP
#define CURSUS_HPP

// The wrapper is split by concern under cursus/; this header includes all of it.
#include "cursus/error.hpp"
#include "cursus/types.hpp"
#include "cursus/observability.hpp"
#include "cursus/admin.hpp"
#include "cursus/producer.hpp"
#include "cursus/consumer.hpp"
#include "cursus/transaction.hpp"
#include "cursus/eventstore.hpp"
#include "cursus/telemetry.hpp"

#endif  // CURSUS_HPP
