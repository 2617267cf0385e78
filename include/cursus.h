/* cursus.h: generated -- do not edit. cbindgen writes it from ffi-c/src and the
 * entry points cursus-bridge-gen generates from bridge/src/api (#[bridge_fn]).
 * Regenerate with `make ffi-header`; `make header-check` fails when this file is stale.
 *
 * libcursus: the C ABI of the Cursus engine.
 *
 * Conventions
 * - Every fallible function returns a cursus_status_t (CURSUS_OK == 0) and takes
 *   an optional `cursus_error_t **out_error` last argument. When it is non-NULL it
 *   receives NULL on success, or a new error on failure which the caller owns and
 *   destroys with cursus_error_destroy(). cursus_error_text() gives the readable
 *   message, the same text every Cursus language shows.
 * - Results come through `out_*` parameters, which may be NULL to drop them.
 * - Handles (config, admin, producer, consumer, message, error, results, lists)
 *   are opaque ids, never pointers to memory. Create them with *_new (or get them
 *   as results), release them with *_destroy, which accepts NULL and
 *   already-destroyed handles. A NULL, destroyed or wrong-kind handle gives
 *   CURSUS_ERR_INVALID_ARGUMENT (accessors return their documented fallback:
 *   NULL, -1, 0 or false) instead of crashing.
 * - Strings and bytes an accessor returns are lent by the handle: valid until it
 *   is destroyed. Buffers given to the caller are freed with cursus_buffer_free().
 *   Never free() anything the library returns.
 * - Payloads and keys are pointer + length: binary safe, embedded NULs allowed.
 * - Timeouts are milliseconds; CURSUS_NO_TIMEOUT (-1) waits without limit and
 *   CURSUS_DEFAULT_TIMEOUT (-2) means 30 s for flush and close.
 * - Callbacks run on the client's own callback thread, never on a network
 *   thread, and may call any function of the library (send and flush of the
 *   same producer included).
 * - Panics never cross this boundary: they become CURSUS_ERR_INTERNAL.
 * - Thread safety is stated on every function.
 * - After fork(), handles created before the fork fail with CURSUS_ERR_CLOSED
 *   (code "used_after_fork") in the child; the child creates new clients normally.
 */

#ifndef CURSUS_H
#define CURSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The version this header belongs to; cursus_version() gives the library's.
#define CURSUS_VERSION_STRING "0.1.0"
// The ABI version in the library's SONAME (`libcursus.so.<abi>`).
#define CURSUS_ABI_VERSION "0.1"

// Major version of the library this header belongs to.
#define CURSUS_VERSION_MAJOR 0

// Minor version of the library this header belongs to.
#define CURSUS_VERSION_MINOR 1

// Patch version of the library this header belongs to.
#define CURSUS_VERSION_PATCH 0

// `timeout_ms` value meaning "no limit".
#define CURSUS_NO_TIMEOUT -1

// `timeout_ms` value meaning "the default" (30 s) for flush and close.
#define CURSUS_DEFAULT_TIMEOUT -2

// `timestamp` value meaning "stamp the send time" (`INT64_MIN`).
#define CURSUS_NO_TIMESTAMP (-9223372036854775807 - 1)

// `partition` value letting the partitioner choose.
#define CURSUS_ANY_PARTITION -1

// Status returned by every fallible function. `CURSUS_OK` is zero; every
// other value names the error class (or, for local failures, the kind).
typedef enum cursus_status_t {
  // Success.
  CURSUS_OK = 0,
  // Class `validation`: the request or a value was invalid.
  CURSUS_ERR_VALIDATION = 1,
  // Class `authorization`: the principal may not do this.
  CURSUS_ERR_AUTHORIZATION = 2,
  // Class `routing`: the request went to the wrong broker.
  CURSUS_ERR_ROUTING = 3,
  // Class `availability`: the broker or network is unavailable (retry later).
  CURSUS_ERR_AVAILABILITY = 4,
  // Class `conflict`: the request conflicts with the current state.
  CURSUS_ERR_CONFLICT = 5,
  // Class `fencing`: a newer producer or member fenced this one.
  CURSUS_ERR_FENCING = 6,
  // Class `not_found`: the topic, group or partition does not exist.
  CURSUS_ERR_NOT_FOUND = 7,
  // Class `internal`, a protocol violation, or a panic caught at the boundary.
  CURSUS_ERR_INTERNAL = 8,
  // A deadline passed (class `availability`, retryable).
  CURSUS_ERR_TIMEOUT = 9,
  // The object was closed, or the process forked after creating it
  // (code `used_after_fork`).
  CURSUS_ERR_CLOSED = 10,
  // An argument or configuration value is invalid (NULL or destroyed
  // handle, bad UTF-8, unknown option...).
  CURSUS_ERR_INVALID_ARGUMENT = 11,
} cursus_status_t;

// The eight error classes of the Cursus protocol.
typedef enum cursus_error_class_t {
  // `validation`.
  CURSUS_CLASS_VALIDATION = 1,
  // `authorization`.
  CURSUS_CLASS_AUTHORIZATION = 2,
  // `routing`.
  CURSUS_CLASS_ROUTING = 3,
  // `availability`.
  CURSUS_CLASS_AVAILABILITY = 4,
  // `conflict`.
  CURSUS_CLASS_CONFLICT = 5,
  // `fencing`.
  CURSUS_CLASS_FENCING = 6,
  // `not_found`.
  CURSUS_CLASS_NOT_FOUND = 7,
  // `internal`.
  CURSUS_CLASS_INTERNAL = 8,
} cursus_error_class_t;

// Opaque admin handle (destroy with `cursus_admin_destroy`).
typedef struct cursus_admin_t cursus_admin_t;

// Opaque aggregate handle (destroy with `cursus_aggregate_destroy`).
typedef struct cursus_aggregate_t cursus_aggregate_t;

// Opaque appended handle (destroy with `cursus_appended_destroy`).
typedef struct cursus_appended_t cursus_appended_t;

// Opaque cluster broker list handle (destroy with `cursus_cluster_broker_list_destroy`).
typedef struct cursus_cluster_broker_list_t cursus_cluster_broker_list_t;

// Opaque cluster status handle (destroy with `cursus_cluster_status_destroy`).
typedef struct cursus_cluster_status_t cursus_cluster_status_t;

// Opaque config handle (destroy with `cursus_config_destroy`).
typedef struct cursus_config_t cursus_config_t;

// Opaque consumer handle (destroy with `cursus_consumer_destroy`).
typedef struct cursus_consumer_t cursus_consumer_t;

// Opaque delete outcome handle (destroy with `cursus_delete_outcome_destroy`).
typedef struct cursus_delete_outcome_t cursus_delete_outcome_t;

// Opaque delivery batch handle (destroy with `cursus_delivery_batch_destroy`).
typedef struct cursus_delivery_batch_t cursus_delivery_batch_t;

// Opaque error handle (destroy with `cursus_error_destroy`).
typedef struct cursus_error_t cursus_error_t;

// Opaque event builder handle (destroy with `cursus_event_builder_destroy`).
typedef struct cursus_event_builder_t cursus_event_builder_t;

// Opaque event cursor handle (destroy with `cursus_event_cursor_destroy`).
typedef struct cursus_event_cursor_t cursus_event_cursor_t;

// Opaque event page handle (destroy with `cursus_event_page_destroy`).
typedef struct cursus_event_page_t cursus_event_page_t;

// Opaque event range handle (destroy with `cursus_event_range_destroy`).
typedef struct cursus_event_range_t cursus_event_range_t;

// Opaque event store handle (destroy with `cursus_event_store_destroy`).
typedef struct cursus_event_store_t cursus_event_store_t;

// Opaque group status handle (destroy with `cursus_group_status_destroy`).
typedef struct cursus_group_status_t cursus_group_status_t;

// Opaque leader election handle (destroy with `cursus_leader_election_destroy`).
typedef struct cursus_leader_election_t cursus_leader_election_t;

// Opaque log record handle (destroy with `cursus_log_record_destroy`).
typedef struct cursus_log_record_t cursus_log_record_t;

// Opaque message handle (destroy with `cursus_message_destroy`).
typedef struct cursus_message_t cursus_message_t;

// Opaque metric handle (destroy with `cursus_metric_destroy`).
typedef struct cursus_metric_t cursus_metric_t;

// Opaque partition offsets list handle (destroy with `cursus_partition_offsets_list_destroy`).
typedef struct cursus_partition_offsets_list_t cursus_partition_offsets_list_t;

// Opaque partition reassignment handle (destroy with `cursus_partition_reassignment_destroy`).
typedef struct cursus_partition_reassignment_t cursus_partition_reassignment_t;

// Opaque producer handle (destroy with `cursus_producer_destroy`).
typedef struct cursus_producer_t cursus_producer_t;

// Opaque rebalance event handle (destroy with `cursus_rebalance_event_destroy`).
typedef struct cursus_rebalance_event_t cursus_rebalance_event_t;

// Opaque replay proof handle (destroy with `cursus_replay_proof_destroy`).
typedef struct cursus_replay_proof_t cursus_replay_proof_t;

// Opaque snapshot read handle (destroy with `cursus_snapshot_read_destroy`).
typedef struct cursus_snapshot_read_t cursus_snapshot_read_t;

// Opaque snapshot handle (destroy with `cursus_snapshot_destroy`).
typedef struct cursus_snapshot_t cursus_snapshot_t;

// Opaque span spec handle (destroy with `cursus_span_spec_destroy`).
typedef struct cursus_span_spec_t cursus_span_spec_t;

// Opaque statistics handle (destroy with `cursus_statistics_destroy`).
typedef struct cursus_statistics_t cursus_statistics_t;

// Opaque stream version handle (destroy with `cursus_stream_version_destroy`).
typedef struct cursus_stream_version_t cursus_stream_version_t;

// Opaque string list handle (destroy with `cursus_string_list_destroy`).
typedef struct cursus_string_list_t cursus_string_list_t;

// Opaque topic description handle (destroy with `cursus_topic_description_destroy`).
typedef struct cursus_topic_description_t cursus_topic_description_t;

// Opaque topic info handle (destroy with `cursus_topic_info_destroy`).
typedef struct cursus_topic_info_t cursus_topic_info_t;

// Opaque topic metadata handle (destroy with `cursus_topic_metadata_destroy`).
typedef struct cursus_topic_metadata_t cursus_topic_metadata_t;

// Opaque topic partition list handle (destroy with `cursus_topic_partition_list_destroy`).
typedef struct cursus_topic_partition_list_t cursus_topic_partition_list_t;

// Opaque trace context handle (destroy with `cursus_trace_context_destroy`).
typedef struct cursus_trace_context_t cursus_trace_context_t;

// Opaque truncate outcome handle (destroy with `cursus_truncate_outcome_destroy`).
typedef struct cursus_truncate_outcome_t cursus_truncate_outcome_t;

// Completion callback (e.g. of `cursus_consumer_commit_async`): called
// exactly once with the outcome, on the client's callback thread. `error`
// is NULL on success; otherwise it is borrowed (valid only during the
// callback; do not destroy it). It may call any library function.
typedef void (*cursus_completion_cb)(void *user_data,
                                     enum cursus_status_t status,
                                     const struct cursus_error_t *error);

// A listener of rebalance event events, set with the `user_data` it gets back.
// It is called once per event on the client's callback thread (log
// records: the process's log thread), never on an I/O thread. `event`
// is a rebalance event handle valid only during the call: read it with the
// `cursus_rebalance_event_*` accessors and do not destroy it. `user_data` must stay
// valid until the listener is replaced or cleared (NULL) or the client
// is destroyed.
typedef void (*cursus_rebalance_event_listener)(void *user_data,
                                                const struct cursus_rebalance_event_t *event);

// A completion callback with a appended, passed with the `user_data` it
// gets back. It is called exactly once on the client's callback thread,
// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`
// a appended handle valid only during the call (read it with the
// `cursus_appended_*` accessors and do not destroy it) and `error` NULL;
// otherwise `result` is NULL and `error` is borrowed for the call.
typedef void (*cursus_appended_cb)(void *user_data,
                                   enum cursus_status_t status,
                                   struct cursus_appended_t *result,
                                   const struct cursus_error_t *error);

// A completion callback with a stream version, passed with the `user_data` it
// gets back. It is called exactly once on the client's callback thread,
// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`
// a stream version handle valid only during the call (read it with the
// `cursus_stream_version_*` accessors and do not destroy it) and `error` NULL;
// otherwise `result` is NULL and `error` is borrowed for the call.
typedef void (*cursus_stream_version_cb)(void *user_data,
                                         enum cursus_status_t status,
                                         struct cursus_stream_version_t *result,
                                         const struct cursus_error_t *error);

// A completion callback with a snapshot read, passed with the `user_data` it
// gets back. It is called exactly once on the client's callback thread,
// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`
// a snapshot read handle valid only during the call (read it with the
// `cursus_snapshot_read_*` accessors and do not destroy it) and `error` NULL;
// otherwise `result` is NULL and `error` is borrowed for the call.
typedef void (*cursus_snapshot_read_cb)(void *user_data,
                                        enum cursus_status_t status,
                                        struct cursus_snapshot_read_t *result,
                                        const struct cursus_error_t *error);

// A completion callback with a event page, passed with the `user_data` it
// gets back. It is called exactly once on the client's callback thread,
// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`
// a event page handle valid only during the call (read it with the
// `cursus_event_page_*` accessors and do not destroy it) and `error` NULL;
// otherwise `result` is NULL and `error` is borrowed for the call.
typedef void (*cursus_event_page_cb)(void *user_data,
                                     enum cursus_status_t status,
                                     struct cursus_event_page_t *result,
                                     const struct cursus_error_t *error);

// A completion callback with a replay proof, passed with the `user_data` it
// gets back. It is called exactly once on the client's callback thread,
// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`
// a replay proof handle valid only during the call (read it with the
// `cursus_replay_proof_*` accessors and do not destroy it) and `error` NULL;
// otherwise `result` is NULL and `error` is borrowed for the call.
typedef void (*cursus_replay_proof_cb)(void *user_data,
                                       enum cursus_status_t status,
                                       struct cursus_replay_proof_t *result,
                                       const struct cursus_error_t *error);

// A completion callback with a event range, passed with the `user_data` it
// gets back. It is called exactly once on the client's callback thread,
// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`
// a event range handle valid only during the call (read it with the
// `cursus_event_range_*` accessors and do not destroy it) and `error` NULL;
// otherwise `result` is NULL and `error` is borrowed for the call.
typedef void (*cursus_event_range_cb)(void *user_data,
                                      enum cursus_status_t status,
                                      struct cursus_event_range_t *result,
                                      const struct cursus_error_t *error);

// A completion callback with a aggregate, passed with the `user_data` it
// gets back. It is called exactly once on the client's callback thread,
// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`
// a aggregate handle valid only during the call (read it with the
// `cursus_aggregate_*` accessors and do not destroy it) and `error` NULL;
// otherwise `result` is NULL and `error` is borrowed for the call.
typedef void (*cursus_aggregate_cb)(void *user_data,
                                    enum cursus_status_t status,
                                    struct cursus_aggregate_t *result,
                                    const struct cursus_error_t *error);

// A listener of statistics events, set with the `user_data` it gets back.
// It is called once per event on the client's callback thread (log
// records: the process's log thread), never on an I/O thread. `event`
// is a statistics handle valid only during the call: read it with the
// `cursus_statistics_*` accessors and do not destroy it. `user_data` must stay
// valid until the listener is replaced or cleared (NULL) or the client
// is destroyed.
typedef void (*cursus_statistics_listener)(void *user_data, const struct cursus_statistics_t *event);

// A listener of error events, set with the `user_data` it gets back.
// It is called once per event on the client's callback thread (log
// records: the process's log thread), never on an I/O thread. `event`
// is a error handle valid only during the call: read it with the
// `cursus_error_*` accessors and do not destroy it. `user_data` must stay
// valid until the listener is replaced or cleared (NULL) or the client
// is destroyed.
typedef void (*cursus_error_listener)(void *user_data, const struct cursus_error_t *event);

// A listener of log record events, set with the `user_data` it gets back.
// It is called once per event on the client's callback thread (log
// records: the process's log thread), never on an I/O thread. `event`
// is a log record handle valid only during the call: read it with the
// `cursus_log_record_*` accessors and do not destroy it. `user_data` must stay
// valid until the listener is replaced or cleared (NULL) or the client
// is destroyed.
typedef void (*cursus_log_record_listener)(void *user_data, const struct cursus_log_record_t *event);

// Where a record was written.
typedef struct cursus_record_metadata_t {
  // Partition the record was written to.
  int32_t partition;
  // Offset of the record, or -1 when the broker did not report one (acks=0).
  int64_t offset;
  // Timestamp in milliseconds since the epoch.
  int64_t timestamp;
} cursus_record_metadata_t;

// Outcome of one send, passed to a delivery callback.
typedef struct cursus_delivery_report_t {
  // `CURSUS_OK` when the record was acknowledged.
  enum cursus_status_t status;
  // The error when `status != CURSUS_OK`, else NULL. Borrowed: valid only
  // during the callback; do not destroy it.
  const struct cursus_error_t *error;
  // Topic of the record (NUL-terminated; valid only during the callback).
  const char *topic;
  // Metadata, meaningful when `status == CURSUS_OK`.
  struct cursus_record_metadata_t metadata;
} cursus_delivery_report_t;

// Delivery callback: called exactly once per queued record, on the
// producer's callback thread (never a network thread), in offset order per
// partition. It may call any library function, including `send` and
// `flush` of the same producer; while it runs, the producer's later
// callbacks wait.
typedef void (*cursus_delivery_cb)(void *user_data, const struct cursus_delivery_report_t *report);

// A completion callback with a delivery batch, passed with the `user_data` it
// gets back. It is called exactly once on the client's callback thread,
// never on an I/O thread. On success `status` is `CURSUS_OK`, `result`
// a delivery batch handle valid only during the call (read it with the
// `cursus_delivery_batch_*` accessors and do not destroy it) and `error` NULL;
// otherwise `result` is NULL and `error` is borrowed for the call.
typedef void (*cursus_delivery_batch_cb)(void *user_data,
                                         enum cursus_status_t status,
                                         struct cursus_delivery_batch_t *result,
                                         const struct cursus_error_t *error);

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Connects an admin client with `config` (options `bootstrap_servers`,
// `connect_timeout_ms`, TLS and AUTH options...).
//
// Thread-safety: safe from any thread. An admin client may be used from
// several threads at once.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_new(struct cursus_config_t *config,
                                      struct cursus_admin_t **out_admin,
                                      struct cursus_error_t **out_error);

// Creates a topic with `partitions` partitions (0: the broker default),
// or patches an existing one, and returns the definition the broker
// replied with.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_create_topic(struct cursus_admin_t *admin,
                                               const char *topic,
                                               uint32_t partitions,
                                               struct cursus_topic_info_t **out_info,
                                               struct cursus_error_t **out_error);

// Creates (or patches) a topic with any of its settings, given as
// name/value pairs: `partitions`, `replication_factor`,
// `min_in_sync_replicas`, `retention_hours`, `retention_bytes` (unsigned
// integers); `idempotent`, `event_sourcing` (`true`/`false`, `1`/`0`);
// `cleanup_policy`, `partitioner`, `auth_policy` (strings); `read_acl`,
// `write_acl` (comma-separated principals, empty for none). Unset settings
// keep the broker default. An unknown name or a bad value fails with
// `invalid_argument` before anything is sent.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_create_topic_with(struct cursus_admin_t *admin,
                                                    const char *topic,
                                                    const char *const *options_keys,
                                                    const char *const *options_values,
                                                    size_t options_count,
                                                    struct cursus_topic_info_t **out_info,
                                                    struct cursus_error_t **out_error);

// Replaces the topic's `min_in_sync_replicas` override (negative: back to
// the broker default) and returns the new definition.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_alter_topic_config(struct cursus_admin_t *admin,
                                                     const char *topic,
                                                     int64_t min_in_sync_replicas,
                                                     struct cursus_topic_info_t **out_info,
                                                     struct cursus_error_t **out_error);

// Deletes a topic; with `if_exists`, a missing topic is not an error (the
// outcome then says nothing was deleted).
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_delete_topic(struct cursus_admin_t *admin,
                                               const char *topic,
                                               bool if_exists,
                                               struct cursus_delete_outcome_t **out_outcome,
                                               struct cursus_error_t **out_error);

// Drops every record of a topic if its current revision is
// `expected_revision` (else a `conflict` error); offsets restart at 0.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_truncate_topic(struct cursus_admin_t *admin,
                                                 const char *topic,
                                                 uint64_t expected_revision,
                                                 struct cursus_truncate_outcome_t **out_outcome,
                                                 struct cursus_error_t **out_error);

// The topic names.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_list_topics(struct cursus_admin_t *admin,
                                              struct cursus_string_list_t **out_names,
                                              struct cursus_error_t **out_error);

// A topic's definition and the state of each partition (DESCRIBE).
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_describe_topic(struct cursus_admin_t *admin,
                                                 const char *topic,
                                                 struct cursus_topic_description_t **out_description,
                                                 struct cursus_error_t **out_error);

// A topic's definition and the leader of each partition (METADATA).
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_metadata(struct cursus_admin_t *admin,
                                           const char *topic,
                                           struct cursus_topic_metadata_t **out_metadata,
                                           struct cursus_error_t **out_error);

// The offsets of one partition (`partition` >= 0) or of every partition
// (negative) of a topic (LIST_OFFSETS).
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_list_offsets(struct cursus_admin_t *admin,
                                               const char *topic,
                                               int64_t partition,
                                               struct cursus_partition_offsets_list_t **out_offsets,
                                               struct cursus_error_t **out_error);

// A consumer group's state and members (GROUP_STATUS).
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_group_status(struct cursus_admin_t *admin,
                                               const char *group,
                                               struct cursus_group_status_t **out_status,
                                               struct cursus_error_t **out_error);

// The consumer group names.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_list_groups(struct cursus_admin_t *admin,
                                              struct cursus_string_list_t **out_names,
                                              struct cursus_error_t **out_error);

// The broker's HELP lines (one command each).
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_help(struct cursus_admin_t *admin,
                                       struct cursus_string_list_t **out_lines,
                                       struct cursus_error_t **out_error);

// Closes the admin client; later calls fail with `closed`. Closing twice
// is harmless. The handle must still be destroyed.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_close(struct cursus_admin_t *admin,
                                        struct cursus_error_t **out_error);

// The cluster's state (CLUSTER_STATUS): the Raft leader, every broker and
// every partition with its leader, epoch, high-water mark and replicas.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_cluster_status(struct cursus_admin_t *admin,
                                                 struct cursus_cluster_status_t **out_status,
                                                 struct cursus_error_t **out_error);

// Makes broker `broker_id` (an active in-sync replica) the leader of
// `topic`/`partition` (ELECT_LEADER). Electing the current leader again
// changes nothing (`changed` is false). Errors: `leader_election_rejected`
// (conflict), `topic_not_found`, `partition_not_found`.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_elect_leader(struct cursus_admin_t *admin,
                                               const char *topic,
                                               uint32_t partition,
                                               const char *broker_id,
                                               struct cursus_leader_election_t **out_election,
                                               struct cursus_error_t **out_error);

// Moves the replicas of `topic`/`partition` to the brokers `replicas`
// (broker ids, preferred leader first, as many as the topic's replication
// factor; REASSIGN_PARTITIONS, a project extension) and returns once the
// move is done: the new replicas caught up into the ISR, the others
// dropped, the leader one of `replicas`. No acknowledged record is lost.
// Waits at most the client's `request_timeout_ms`, then fails with the
// retryable `reassignment_timeout` while the move goes on (calling again
// with the same replicas resumes waiting). Errors: `topic_not_found`,
// `partition_not_found`, `broker_not_found`, `replica_broker_inactive`,
// `invalid_replicas`, `invalid_replication_factor`,
// `reassignment_in_progress`, `distribution_not_enabled`.
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_reassign_partition(struct cursus_admin_t *admin,
                                                     const char *topic,
                                                     uint32_t partition,
                                                     const char *const *replicas,
                                                     size_t replicas_count,
                                                     struct cursus_partition_reassignment_t **out_reassignment,
                                                     struct cursus_error_t **out_error);

// The brokers registered in the cluster (LIST_CLUSTER).
//
// Thread-safety: safe from any thread, concurrently on one client.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_admin_list_cluster(struct cursus_admin_t *admin,
                                               struct cursus_cluster_broker_list_t **out_brokers,
                                               struct cursus_error_t **out_error);

// The broker id of the Raft (metadata) leader (none while no leader
// is known).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_status_raft_leader(const struct cursus_cluster_status_t *status);

// The registered brokers.
//
// A cluster broker list handle of its own (destroy it too).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_cluster_status_brokers(struct cursus_cluster_status_t *status,
                                                   struct cursus_cluster_broker_list_t **out_brokers,
                                                   struct cursus_error_t **out_error);

// The number of partition entries: Every partition of every topic.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_cluster_status_partition_count(const struct cursus_cluster_status_t *status);

// The topic name.
//
// Of the partition entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_status_partition_topic(const struct cursus_cluster_status_t *status,
                                                  size_t index);

// The partition id.
//
// Of the partition entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_cluster_status_partition_id(const struct cursus_cluster_status_t *status,
                                           size_t index);

// The broker id of the leader (none for a leaderless partition).
//
// Of the partition entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_status_partition_leader(const struct cursus_cluster_status_t *status,
                                                   size_t index);

// The leader epoch.
//
// Of the partition entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_cluster_status_partition_leader_epoch(const struct cursus_cluster_status_t *status,
                                                     size_t index);

// The committed high-water mark.
//
// Of the partition entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_cluster_status_partition_hwm(const struct cursus_cluster_status_t *status,
                                            size_t index);

// The number of replica entries: The broker ids of the replica set.
//
// Of the partition entry `index` (0 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_cluster_status_partition_replica_count(const struct cursus_cluster_status_t *status,
                                                     size_t index);

// Entry `replica` of the replica entries: The broker ids of the replica set.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_status_partition_replica(const struct cursus_cluster_status_t *status,
                                                    size_t index,
                                                    size_t replica);

// The number of isr entries: The broker ids of the in-sync replicas.
//
// Of the partition entry `index` (0 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_cluster_status_partition_isr_count(const struct cursus_cluster_status_t *status,
                                                 size_t index);

// Entry `isr` of the isr entries: The broker ids of the in-sync replicas.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_status_partition_isr(const struct cursus_cluster_status_t *status,
                                                size_t index,
                                                size_t isr);

// The number of idempotent producers whose committed sequences the
// replicated state holds for the partition.
//
// Of the partition entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_cluster_status_partition_producers(const struct cursus_cluster_status_t *status,
                                                  size_t index);

// The number of target replica entries: The broker ids a reassignment in progress moves the replicas to (REASSIGN_PARTITIONS; empty when none is in progress).
//
// Of the partition entry `index` (0 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_cluster_status_partition_target_replica_count(const struct cursus_cluster_status_t *status,
                                                            size_t index);

// Entry `target_replica` of the target replica entries: The broker ids a reassignment in progress moves the replicas to (REASSIGN_PARTITIONS; empty when none is in progress).
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_status_partition_target_replica(const struct cursus_cluster_status_t *status,
                                                           size_t index,
                                                           size_t target_replica);

// The number of partitions without an active leader.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_cluster_status_leaderless(const struct cursus_cluster_status_t *status);

// The number of partitions whose ISR is smaller than their replica
// set.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_cluster_status_under_replicated(const struct cursus_cluster_status_t *status);

// The number of voter entries: The Raft voters (broker ids) as the answering broker knows the membership.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_cluster_status_voter_count(const struct cursus_cluster_status_t *status);

// Entry `index` of the voter entries: The Raft voters (broker ids) as the answering broker knows the membership.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_status_voter(const struct cursus_cluster_status_t *status,
                                        size_t index);

// The number of learner entries: The Raft learners (non-voting members, broker ids) as the answering broker knows the membership.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_cluster_status_learner_count(const struct cursus_cluster_status_t *status);

// Entry `index` of the learner entries: The Raft learners (non-voting members, broker ids) as the answering broker knows the membership.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_status_learner(const struct cursus_cluster_status_t *status,
                                          size_t index);

// The cluster's transaction coordinator shard count (none until a
// broker that knows it has registered).
//
// -1 when there is none.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_cluster_status_transaction_coordinator_shards(const struct cursus_cluster_status_t *status);

// The number of cluster broker entries.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_cluster_broker_list_count(const struct cursus_cluster_broker_list_t *list);

// The broker id, e.g. `broker-1`.
//
// Of the entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_broker_list_id(const struct cursus_cluster_broker_list_t *list,
                                          size_t index);

// The cluster (peer) address, `host:port`.
//
// Of the entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_broker_list_addr(const struct cursus_cluster_broker_list_t *list,
                                            size_t index);

// The address clients connect to (none when the broker reports
// none).
//
// Of the entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_broker_list_client_addr(const struct cursus_cluster_broker_list_t *list,
                                                   size_t index);

// `active` or `inactive`.
//
// Of the entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_broker_list_status(const struct cursus_cluster_broker_list_t *list,
                                              size_t index);

// When the broker was last heard from, RFC 3339 (none when not
// reported).
//
// Of the entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_cluster_broker_list_last_seen(const struct cursus_cluster_broker_list_t *list,
                                                 size_t index);

// The lifecycle protocol version the broker speaks (none when not
// reported).
//
// -1 when there is none.
//
// Of the entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_cluster_broker_list_lifecycle_protocol(const struct cursus_cluster_broker_list_t *list,
                                                      size_t index);

// The topic of the move.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_partition_reassignment_topic(const struct cursus_partition_reassignment_t *reassignment);

// The partition of the move.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_partition_reassignment_partition(const struct cursus_partition_reassignment_t *reassignment);

// Whether the move is done (the replicas are the target).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_partition_reassignment_done(const struct cursus_partition_reassignment_t *reassignment);

// The number of replica entries: The broker ids of the replica set now.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_partition_reassignment_replica_count(const struct cursus_partition_reassignment_t *reassignment);

// Entry `index` of the replica entries: The broker ids of the replica set now.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_partition_reassignment_replica(const struct cursus_partition_reassignment_t *reassignment,
                                                  size_t index);

// The number of isr entries: The broker ids of the in-sync replicas now.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_partition_reassignment_isr_count(const struct cursus_partition_reassignment_t *reassignment);

// Entry `index` of the isr entries: The broker ids of the in-sync replicas now.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_partition_reassignment_isr(const struct cursus_partition_reassignment_t *reassignment,
                                              size_t index);

// The broker id of the leader now (none while the partition has
// none).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_partition_reassignment_leader(const struct cursus_partition_reassignment_t *reassignment);

// The number of target entries: The broker ids of the target replica set, preferred leader first.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_partition_reassignment_target_count(const struct cursus_partition_reassignment_t *reassignment);

// Entry `index` of the target entries: The broker ids of the target replica set, preferred leader first.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_partition_reassignment_target(const struct cursus_partition_reassignment_t *reassignment,
                                                 size_t index);

// The topic of the election.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_leader_election_topic(const struct cursus_leader_election_t *election);

// The partition of the election.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_leader_election_partition(const struct cursus_leader_election_t *election);

// The broker id of the leader before the election (none when the
// partition had no leader).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_leader_election_previous_leader(const struct cursus_leader_election_t *election);

// The broker id of the leader now.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_leader_election_leader(const struct cursus_leader_election_t *election);

// The leader epoch now.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_leader_election_leader_epoch(const struct cursus_leader_election_t *election);

// Whether the election changed the leader (false: the broker already
// led; the election is idempotent).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_leader_election_changed(const struct cursus_leader_election_t *election);

// Creates an empty configuration (every option at its default) that any
// kind of client may use: `set` accepts an option some kind knows, and
// each client uses the options of its own kind. A configuration may be
// destroyed as soon as the clients made from it exist.
//
// Thread-safety: safe from any thread; a configuration is internally locked.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_config_new(struct cursus_config_t **out_config,
                                       struct cursus_error_t **out_error);

// Creates an empty configuration for one kind of client: `kind` is
// `"admin"`, `"producer"` or `"consumer"`. Every `set` is then checked
// against that kind's options, and an unknown name fails with a message
// naming the kind and listing its options.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_config_new_for(const char *kind,
                                           struct cursus_config_t **out_config,
                                           struct cursus_error_t **out_error);

// Sets one option by name (the same names in every language:
// `bootstrap_servers`, `acks`, `linger_ms`, `group_id`, ...). The value is
// checked at once: an unknown name or a bad value fails with
// `invalid_argument` and a message naming the option (and, for an unknown
// name, listing the known ones).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_config_set(struct cursus_config_t *config,
                                       const char *key,
                                       const char *value,
                                       struct cursus_error_t **out_error);

// Checks a configuration made for one kind of client (`config_new_for`)
// as creating that client would before connecting: each option and the
// rules between options (`enable_idempotence=true` needs `acks=all`; a
// consumer needs `group_id`). Fails with `invalid_argument` naming the
// problem, and for a configuration made by `config_new` (no kind).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_config_validate(struct cursus_config_t *config,
                                            struct cursus_error_t **out_error);

// The options of a kind of client (`"admin"`, `"producer"` or
// `"consumer"`) as a flat list of (name, type, default, description)
// quadruples; the type is `integer`, `boolean`, `string` or `list`.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_config_options(const char *kind,
                                           struct cursus_string_list_t **out_options,
                                           struct cursus_error_t **out_error);

// Connects a group consumer with `config` (option `group_id` is required;
// `auto_offset_reset`, `enable_auto_commit`, `max_poll_records`, ... are
// optional).
//
// Thread-safety: safe from any thread. A consumer may be shared between
// threads; `close` and `wakeup` from another thread interrupt a blocked
// poll.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_new(struct cursus_config_t *config,
                                         struct cursus_consumer_t **out_consumer,
                                         struct cursus_error_t **out_error);

// Subscribes to topics, replacing any earlier subscription; the group is
// joined on the next poll.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_subscribe(struct cursus_consumer_t *consumer,
                                               const char *const *topics,
                                               size_t topics_count,
                                               struct cursus_error_t **out_error);

// Subscribes to every topic whose name matches the glob `pattern` (`*`,
// `?`), replacing any earlier subscription.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_subscribe_pattern(struct cursus_consumer_t *consumer,
                                                       const char *pattern,
                                                       struct cursus_error_t **out_error);

// Waits at most `timeout_ms` (`-1`: no limit) for the next message; none
// when nothing arrived in time, or after `consumer_wakeup`. Only the
// messages returned count as delivered: commits (explicit, automatic or
// at close) cover exactly those. A close from another thread makes it
// fail with `closed` at once.
//
// Thread-safety: safe from any thread; one poll at a time per consumer is
// the intended use.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_poll(struct cursus_consumer_t *consumer,
                                          int64_t timeout_ms,
                                          struct cursus_message_t **out_message,
                                          struct cursus_error_t **out_error);

// Like `consumer_poll`, but returns up to `max_records` (at most the
// `max_poll_records` option) records at once, packed in the record view
// layout of `bridge/src/records.rs`.
//
// Thread-safety: as `consumer_poll`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_poll_batch(struct cursus_consumer_t *consumer,
                                                int64_t timeout_ms,
                                                uint32_t max_records,
                                                uint8_t **out_records,
                                                size_t *out_records_len,
                                                struct cursus_error_t **out_error);

// Makes the poll blocked now (or else the next one) return at once with
// no message.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_wakeup(struct cursus_consumer_t *consumer,
                                            struct cursus_error_t **out_error);

// Commits the positions of the messages returned so far, synchronously.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_commit(struct cursus_consumer_t *consumer,
                                            struct cursus_error_t **out_error);

// Commits the positions of the messages returned so far in the
// background; `callback` is then called exactly once with the outcome, on
// this consumer's callback thread. If starting fails, the error is
// returned and the callback is never called.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_commit_async(struct cursus_consumer_t *consumer,
                                                  cursus_completion_cb callback,
                                                  void *user_data,
                                                  struct cursus_error_t **out_error);

// Commits explicit next offsets (the offset after the last record
// processed), synchronously and in list order: every entry of `offsets`
// needs an offset. The consumer must have joined its group (polled once
// after subscribing). On failure the entries before the failing one stay
// committed.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_commit_offsets(struct cursus_consumer_t *consumer,
                                                    struct cursus_topic_partition_list_t *offsets,
                                                    struct cursus_error_t **out_error);

// The group's committed next offset of a partition, or -1 when the group
// committed nothing there.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_committed(struct cursus_consumer_t *consumer,
                                               const char *topic,
                                               uint32_t partition,
                                               int64_t *out_offset,
                                               struct cursus_error_t **out_error);

// This member's id in its group (as the admin's group status lists it),
// or an empty string before it has joined: the first poll after
// subscribing joins.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_member_id(struct cursus_consumer_t *consumer,
                                               char **out_member_id,
                                               struct cursus_error_t **out_error);

// The partitions currently assigned to this member (empty before the
// first poll).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_assignment(struct cursus_consumer_t *consumer,
                                                struct cursus_topic_partition_list_t **out_partitions,
                                                struct cursus_error_t **out_error);

// Commits what was returned (with `enable_auto_commit`), leaves the group
// and closes; a poll blocked in another thread fails with `closed` at
// once. Closing twice is harmless. The handle must still be destroyed.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_close(struct cursus_consumer_t *consumer,
                                           struct cursus_error_t **out_error);

// Makes the next poll return records of a partition from `offset` on;
// records already fetched for it are dropped. The partition must be
// assigned (`partition_not_assigned` otherwise: poll joins the group
// first; a rebalance listener's `assigned` event is the place to seek
// before any record is returned). Commits never move backwards: after a
// seek backwards they stay at the furthest offset returned.
//
// Thread-safety: safe from any thread, and from the rebalance listener.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_seek(struct cursus_consumer_t *consumer,
                                          const char *topic,
                                          uint32_t partition,
                                          uint64_t offset,
                                          struct cursus_error_t **out_error);

// The offset of the next record poll returns for an assigned partition.
//
// Thread-safety: safe from any thread, and from the rebalance listener.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_position(struct cursus_consumer_t *consumer,
                                              const char *topic,
                                              uint32_t partition,
                                              uint64_t *out_offset,
                                              struct cursus_error_t **out_error);

// Stops returning records of these assigned partitions (their offsets in
// the list are ignored) until `consumer_resume`; the consumer stays in its
// group and their positions are kept.
//
// Thread-safety: safe from any thread, and from the rebalance listener.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_pause(struct cursus_consumer_t *consumer,
                                           struct cursus_topic_partition_list_t *partitions,
                                           struct cursus_error_t **out_error);

// Returns records of these partitions again, from their positions.
//
// Thread-safety: safe from any thread, and from the rebalance listener.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_resume(struct cursus_consumer_t *consumer,
                                            struct cursus_topic_partition_list_t *partitions,
                                            struct cursus_error_t **out_error);

// The paused partitions, sorted.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_paused(struct cursus_consumer_t *consumer,
                                            struct cursus_topic_partition_list_t **out_partitions,
                                            struct cursus_error_t **out_error);

// The group's committed next offset of each listed partition, in list
// order: a new list whose offsets are the committed ones (-1 where the
// group committed nothing).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_committed_list(struct cursus_consumer_t *consumer,
                                                    struct cursus_topic_partition_list_t *partitions,
                                                    struct cursus_topic_partition_list_t **out_committed,
                                                    struct cursus_error_t **out_error);

// Sets the rebalance listener (NULL/null removes it). It is called with
// each change of the assignment: `assigned` after every join of the group
// (possibly empty), before any record of those partitions is returned;
// `revoked` before partitions are taken away while still a member (by
// close, a new subscribe, or a rebalance); `lost` when the session had
// expired. `has_lost_callback` says whether the listener handles `lost`
// itself: when false, a loss is told as `revoked` (as Kafka's clients do),
// the one rule for every binding whose listeners have a callback per kind.
// It runs on a thread of the consumer's own while poll (or close, or
// subscribe) waits for it, so it may call the consumer again (commit,
// seek, pause, position), except poll, which fails there. The event is
// lent for the duration of the call.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_set_rebalance_listener(struct cursus_consumer_t *consumer,
                                                            cursus_rebalance_event_listener listener,
                                                            void *user_data,
                                                            bool has_lost_callback,
                                                            struct cursus_error_t **out_error);

// The kind of change: `"assigned"`, `"revoked"` or `"lost"`.
//
// Thread-safety: safe from any thread while the event is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_rebalance_event_kind(const struct cursus_rebalance_event_t *event);

// How many partitions the event is about.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_rebalance_event_count(const struct cursus_rebalance_event_t *event);

// The topic of the partition at `index` (none past the end).
//
// Thread-safety: safe from any thread while the event is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_rebalance_event_topic(const struct cursus_rebalance_event_t *event,
                                         size_t index);

// The partition number at `index` (-1 past the end).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_rebalance_event_partition(const struct cursus_rebalance_event_t *event,
                                         size_t index);

// The status this error reports (its class, or its local kind).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_error_status(const struct cursus_error_t *error);

// The class (one of the protocol's eight).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_error_class_t cursus_error_class(const struct cursus_error_t *error);

// The machine-readable code, e.g. `"topic_not_found"` or `"timeout"`.
//
// Thread-safety: safe from any thread while the error is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_error_code(const struct cursus_error_t *error);

// The class name, e.g. `"routing"`.
//
// Thread-safety: safe from any thread while the error is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_error_class_name(const struct cursus_error_t *error);

// Where the error comes from: `"broker"`, `"io"`, `"timeout"`,
// `"protocol"`, `"closed"`, `"invalid_argument"` or `"internal"`.
//
// Thread-safety: safe from any thread while the error is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_error_kind(const struct cursus_error_t *error);

// Whether the operation may be retried (with backoff).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_error_retryable(const struct cursus_error_t *error);

// The detail message as the broker or the engine wrote it (may be empty;
// see `error_text` for the readable form).
//
// Thread-safety: safe from any thread while the error is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_error_message(const struct cursus_error_t *error);

// The readable form, the same in every language:
// `code (class[, retryable]): message; field=value, ...`, e.g.
// `topic_not_found (not_found): topic=orders`.
//
// Thread-safety: safe from any thread while the error is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_error_text(const struct cursus_error_t *error);

// The number of structured fields (`topic`, `leader`, ...).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_error_field_count(const struct cursus_error_t *error);

// The name of field `index` (fields are sorted by name; none when out of
// range).
//
// Thread-safety: safe from any thread while the error is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_error_field_name(const struct cursus_error_t *error, size_t index);

// The value of field `index` (none when out of range).
//
// Thread-safety: safe from any thread while the error is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_error_field_value(const struct cursus_error_t *error, size_t index);

// The value of the field named `name` (none when absent).
//
// Thread-safety: safe from any thread while the error is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_error_field(const struct cursus_error_t *error, const char *name);

// The version the appended event got (`expected_version + 1`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_appended_version(const struct cursus_appended_t *appended);

// The offset the appended event got.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_appended_offset(const struct cursus_appended_t *appended);

// The partition of the appended event (its aggregate's).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_appended_partition(const struct cursus_appended_t *appended);

// The aggregate version the snapshot's state includes.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_snapshot_version(const struct cursus_snapshot_t *snapshot);

// The snapshot's serialised state.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_snapshot_state(const struct cursus_snapshot_t *snapshot);

// Connects an event store client with `config` (the client options:
// `bootstrap_servers`, TLS, timeouts, ...).
//
// Thread-safety: safe from any thread; a store may be used from several
// threads at once.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_new(struct cursus_config_t *config,
                                            struct cursus_event_store_t **out_store,
                                            struct cursus_error_t **out_error);

// Appends an event to aggregate `key` of an event-sourcing topic if the
// aggregate's version is `expected_version` (0 for a new one): the event
// gets `expected_version + 1`. Otherwise fails with `version_conflict`
// (class conflict; fields `current` and `expected`). `metadata` may be
// absent; `schema_version` 0 lets the broker use 1.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_append(struct cursus_event_store_t *store,
                                               const char *topic,
                                               const char *key,
                                               uint64_t expected_version,
                                               const char *event_type,
                                               const char *payload,
                                               const char *metadata,
                                               uint32_t schema_version,
                                               struct cursus_appended_t **out_appended,
                                               struct cursus_error_t **out_error);

// The aggregate's current version (0 when it has no event).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_stream_version(struct cursus_event_store_t *store,
                                                       const char *topic,
                                                       const char *key,
                                                       uint64_t *out_version,
                                                       struct cursus_error_t **out_error);

// Saves `state` as the aggregate's snapshot at `version` (at most its
// current version, else `snapshot_version_exceeds_stream`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_save_snapshot(struct cursus_event_store_t *store,
                                                      const char *topic,
                                                      const char *key,
                                                      uint64_t version,
                                                      const char *state,
                                                      struct cursus_error_t **out_error);

// The aggregate's latest snapshot, or none.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_read_snapshot(struct cursus_event_store_t *store,
                                                      const char *topic,
                                                      const char *key,
                                                      struct cursus_snapshot_t **out_snapshot,
                                                      struct cursus_error_t **out_error);

// Closes the store; later calls fail with `closed`. The handle must still
// be destroyed.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_close(struct cursus_event_store_t *store,
                                              struct cursus_error_t **out_error);

// A cursor over aggregate `key`'s stream from `from_version` (1: the
// start): its first page carries the latest snapshot at or after
// `from_version`, and the events after it. `max_events` and `max_bytes`
// bound a page (0: the broker's defaults, 256 events and 8 MiB).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_cursor_stream(const char *topic,
                                                const char *key,
                                                uint64_t from_version,
                                                uint32_t max_events,
                                                uint32_t max_bytes,
                                                struct cursus_event_cursor_t **out_cursor,
                                                struct cursus_error_t **out_error);

// A cursor over aggregate `key`'s original events (no snapshot) from
// `from_version` to `to_version` (0: its current version); each page
// reports its completeness. `max_records`/`max_bytes` 0: the defaults
// (100 and 1 MiB).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_cursor_history(const char *topic,
                                                 const char *key,
                                                 uint64_t from_version,
                                                 uint64_t to_version,
                                                 uint32_t max_records,
                                                 uint32_t max_bytes,
                                                 struct cursus_event_cursor_t **out_cursor,
                                                 struct cursus_error_t **out_error);

// A cursor over the committed records of any topic's partition from
// `from_offset` up to `to_offset` (exclusive; -1: the readable end).
// `max_records`/`max_bytes` 0: the defaults (100 and 1 MiB).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_cursor_browse(const char *topic,
                                                uint32_t partition,
                                                uint64_t from_offset,
                                                int64_t to_offset,
                                                uint32_t max_records,
                                                uint32_t max_bytes,
                                                struct cursus_event_cursor_t **out_cursor,
                                                struct cursus_error_t **out_error);

// True once every page of the cursor was read.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_event_cursor_done(const struct cursus_event_cursor_t *cursor);

// Reads the cursor's next page and moves it on; none once it is done.
// A failed read leaves the cursor where it was (the call may be repeated).
//
// Thread-safety: safe from any thread; calls on one cursor run one at a
// time.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_next_page(struct cursus_event_store_t *store,
                                                  struct cursus_event_cursor_t *cursor,
                                                  struct cursus_event_page_t **out_page,
                                                  struct cursus_error_t **out_error);

// The partition the page was read from.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_event_page_partition(const struct cursus_event_page_t *page);

// True when more pages follow.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_event_page_has_more(const struct cursus_event_page_t *page);

// The number of events (or browsed records) in the page.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_event_page_count(const struct cursus_event_page_t *page);

// History pages: `complete`, `partial` or `unknown`; other pages: empty.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_event_page_completeness(const struct cursus_event_page_t *page);

// History pages: the aggregate's current version; other pages: 0.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_event_page_head_version(const struct cursus_event_page_t *page);

// Browse pages: the end of what is readable in the partition; other
// pages: -1.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_event_page_readable_end_offset(const struct cursus_event_page_t *page);

// The snapshot the page starts from (first page of a stream read), or
// none.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_page_snapshot(struct cursus_event_page_t *page,
                                                struct cursus_snapshot_t **out_snapshot,
                                                struct cursus_error_t **out_error);

// The version of event `index` (0 for a browsed record that is no
// event, or an index out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_event_page_version(const struct cursus_event_page_t *page, size_t index);

// The offset of event `index` (-1 for an index out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_event_page_offset(const struct cursus_event_page_t *page, size_t index);

// The timestamp of event `index` in milliseconds since the epoch.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_event_page_timestamp(const struct cursus_event_page_t *page, size_t index);

// The aggregate key of event `index` (empty for none).
//
// Thread-safety: safe from any thread while the page is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const uint8_t *cursus_event_page_key(const struct cursus_event_page_t *page,
                                     size_t index,
                                     size_t *out_len);

// The event type of event `index`.
//
// Thread-safety: safe from any thread while the page is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_event_page_event_type(const struct cursus_event_page_t *page, size_t index);

// The schema version of event `index`.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_event_page_schema_version(const struct cursus_event_page_t *page, size_t index);

// The metadata of event `index`.
//
// Thread-safety: safe from any thread while the page is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_event_page_metadata(const struct cursus_event_page_t *page, size_t index);

// The payload of event `index`.
//
// Thread-safety: safe from any thread while the page is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const uint8_t *cursus_event_page_payload(const struct cursus_event_page_t *page,
                                         size_t index,
                                         size_t *out_len);

// Loads aggregate `key`: reads its latest snapshot and every event after
// it. `aggregate_loaded` gives them to fold into the application's
// state; `snapshot_every` (0: never) sets when `aggregate_snapshot_due`
// says a snapshot should be saved (500 is the recommended value).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_load_aggregate(struct cursus_event_store_t *store,
                                                       const char *topic,
                                                       const char *key,
                                                       uint64_t snapshot_every,
                                                       struct cursus_aggregate_t **out_aggregate,
                                                       struct cursus_error_t **out_error);

// A second handle to the same aggregate: appends through either move
// both. What keeps an aggregate a callback was lent
// (`event_store_load_aggregate_async`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_aggregate_share(struct cursus_aggregate_t *aggregate,
                                            struct cursus_aggregate_t **out_aggregate,
                                            struct cursus_error_t **out_error);

// What loading read: a page with the snapshot (if any) and the events
// after it, in order.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_aggregate_loaded(struct cursus_aggregate_t *aggregate,
                                             struct cursus_event_page_t **out_page,
                                             struct cursus_error_t **out_error);

// The version loaded or last appended.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_aggregate_version(const struct cursus_aggregate_t *aggregate);

// Appends an event at the aggregate's next version, with `event_id` as its
// id (absent: a generated one; an empty id or one holding whitespace is
// `invalid_argument`). Returns the event as stored: a page holding that
// one event, with its version, offset and partition (its timestamp is 0:
// the broker's reply does not carry it). Fold it into the application's
// state only now, so a failed append leaves the state unchanged; then call
// `event_store_aggregate_auto_snapshot`. On `version_conflict` another
// writer got there first: load the aggregate again and decide again.
//
// Thread-safety: safe from any thread; appends to one aggregate handle
// run one at a time.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_aggregate_append(struct cursus_event_store_t *store,
                                                         struct cursus_aggregate_t *aggregate,
                                                         const char *event_type,
                                                         const char *payload,
                                                         const char *metadata,
                                                         uint32_t schema_version,
                                                         const char *event_id,
                                                         struct cursus_event_page_t **out_stored,
                                                         struct cursus_error_t **out_error);

// The automatic snapshot after an append: when a snapshot is due, saves
// `state` (the application's state with the appended event folded in) and
// says whether it did. A failed save is not this call's error (the append
// before it is durable, and an error would invite retrying it): it is
// reported through the engine log at warn and the snapshot stays due, so
// the next append tries again.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_aggregate_auto_snapshot(struct cursus_event_store_t *store,
                                                                struct cursus_aggregate_t *aggregate,
                                                                const char *state,
                                                                bool *out_saved,
                                                                struct cursus_error_t **out_error);

// Reports an automatic snapshot the application could not serialise
// (`reason`) as the engine reports a failed save: through the engine log
// at warn; the snapshot stays due.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_aggregate_snapshot_failed(struct cursus_aggregate_t *aggregate,
                                                      const char *reason,
                                                      struct cursus_error_t **out_error);

// True when `snapshot_every` events were appended since the last
// snapshot: serialise the state and call
// `event_store_aggregate_save_snapshot`.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_aggregate_snapshot_due(const struct cursus_aggregate_t *aggregate);

// Saves `state` as the aggregate's snapshot at its current version.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_aggregate_save_snapshot(struct cursus_event_store_t *store,
                                                                struct cursus_aggregate_t *aggregate,
                                                                const char *state,
                                                                struct cursus_error_t **out_error);

// The version (0 when the aggregate has no event).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_stream_version_value(const struct cursus_stream_version_t *version);

// The snapshot found, or none.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_snapshot_read_snapshot(struct cursus_snapshot_read_t *read,
                                                   struct cursus_snapshot_t **out_snapshot,
                                                   struct cursus_error_t **out_error);

// `event_store_append_event` in the background (see the module): the
// callback gets the appended event, or the error (`version_conflict`, ...).
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_append_event_async(struct cursus_event_store_t *store,
                                                           const char *topic,
                                                           const char *key,
                                                           uint64_t expected_version,
                                                           struct cursus_event_builder_t *event,
                                                           cursus_appended_cb callback,
                                                           void *user_data,
                                                           struct cursus_error_t **out_error);

// `event_store_stream_version` in the background (see the module).
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_stream_version_async(struct cursus_event_store_t *store,
                                                             const char *topic,
                                                             const char *key,
                                                             cursus_stream_version_cb callback,
                                                             void *user_data,
                                                             struct cursus_error_t **out_error);

// `event_store_save_snapshot` in the background (see the module).
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_save_snapshot_async(struct cursus_event_store_t *store,
                                                            const char *topic,
                                                            const char *key,
                                                            uint64_t version,
                                                            const char *state,
                                                            cursus_completion_cb callback,
                                                            void *user_data,
                                                            struct cursus_error_t **out_error);

// `event_store_read_snapshot` in the background (see the module): the
// callback gets the snapshot or none.
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_read_snapshot_async(struct cursus_event_store_t *store,
                                                            const char *topic,
                                                            const char *key,
                                                            cursus_snapshot_read_cb callback,
                                                            void *user_data,
                                                            struct cursus_error_t **out_error);

// Reads aggregate `key`'s whole stream from `from_version` (1: the
// start) in the background, page after page (see the module): the
// callback gets one page with the latest snapshot at or after
// `from_version`, if any, and every event after it.
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_read_stream_async(struct cursus_event_store_t *store,
                                                          const char *topic,
                                                          const char *key,
                                                          uint64_t from_version,
                                                          cursus_event_page_cb callback,
                                                          void *user_data,
                                                          struct cursus_error_t **out_error);

// `event_store_replay_proof` in the background (see the module): the
// callback gets the complete proof, or the error `aggregate_proof_<status>`
// (`replay_proof_from_error` reads its proof). `expected_last_sequence`
// as there (-1: none); a bad one fails the call.
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_replay_proof_async(struct cursus_event_store_t *store,
                                                           const char *topic,
                                                           const char *match_id,
                                                           int64_t expected_last_sequence,
                                                           cursus_replay_proof_cb callback,
                                                           void *user_data,
                                                           struct cursus_error_t **out_error);

// `event_store_event_range` in the background (see the module).
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_event_range_async(struct cursus_event_store_t *store,
                                                          const char *topic,
                                                          const char *match_id,
                                                          uint64_t from_sequence,
                                                          uint64_t to_sequence,
                                                          uint32_t max_records,
                                                          cursus_event_range_cb callback,
                                                          void *user_data,
                                                          struct cursus_error_t **out_error);

// `event_store_load_aggregate` in the background (see the module): the
// callback gets the aggregate lent for the call; `aggregate_share` keeps
// it.
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_load_aggregate_async(struct cursus_event_store_t *store,
                                                             const char *topic,
                                                             const char *key,
                                                             uint64_t snapshot_every,
                                                             cursus_aggregate_cb callback,
                                                             void *user_data,
                                                             struct cursus_error_t **out_error);

// `event_store_aggregate_append` in the background (see the module): the
// callback gets the stored event (a page holding it); the aggregate's
// version moves only when the append succeeded. Start the next call on
// this aggregate only once the callback ran: calls started before would
// work from the version before this append.
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_aggregate_append_async(struct cursus_event_store_t *store,
                                                               struct cursus_aggregate_t *aggregate,
                                                               const char *event_type,
                                                               const char *payload,
                                                               const char *metadata,
                                                               uint32_t schema_version,
                                                               const char *event_id,
                                                               cursus_event_page_cb callback,
                                                               void *user_data,
                                                               struct cursus_error_t **out_error);

// `event_store_aggregate_auto_snapshot` in the background (see the
// module and `event_store_aggregate_append_async`): the callback is
// called once the due snapshot, if any, was saved or its failure logged;
// it gets no error for a failed save (that stays due, as there).
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_aggregate_auto_snapshot_async(struct cursus_event_store_t *store,
                                                                      struct cursus_aggregate_t *aggregate,
                                                                      const char *state,
                                                                      cursus_completion_cb callback,
                                                                      void *user_data,
                                                                      struct cursus_error_t **out_error);

// `event_store_aggregate_save_snapshot` in the background (see the
// module and `event_store_aggregate_append_async`).
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_aggregate_save_snapshot_async(struct cursus_event_store_t *store,
                                                                      struct cursus_aggregate_t *aggregate,
                                                                      const char *state,
                                                                      cursus_completion_cb callback,
                                                                      void *user_data,
                                                                      struct cursus_error_t **out_error);

// `producer_append_stream` in the background (see the module; the
// callback runs on the producer's callback thread, in order with its
// delivery callbacks): the callback gets what the event becomes when the
// transaction commits. Start the commit only once the callback ran.
//
// Thread-safety: safe from any thread, also from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_append_stream_async(struct cursus_producer_t *producer,
                                                         const char *topic,
                                                         const char *key,
                                                         uint64_t expected_version,
                                                         struct cursus_event_builder_t *event,
                                                         cursus_appended_cb callback,
                                                         void *user_data,
                                                         struct cursus_error_t **out_error);

// The default wait of `flush` and `close`, in milliseconds (30 000): what
// the marker `-2` (`CURSUS_DEFAULT_TIMEOUT`) stands for. A binding passes
// the marker, and asks this only where it needs the number itself (Go
// slices a cancellable flush into short waits).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_default_timeout_ms(int64_t *out_ms, struct cursus_error_t **out_error);

// Creates an empty topic partition list.
//
// Thread-safety: safe from any thread; a list is internally locked.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_topic_partition_list_new(struct cursus_topic_partition_list_t **out_list,
                                                     struct cursus_error_t **out_error);

// Appends `topic`/`partition` with `offset` (-1: none).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_topic_partition_list_add(struct cursus_topic_partition_list_t *list,
                                                     const char *topic,
                                                     uint32_t partition,
                                                     int64_t offset,
                                                     struct cursus_error_t **out_error);

// The number of entries.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_topic_partition_list_count(const struct cursus_topic_partition_list_t *list);

// The topic of entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the list is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_partition_list_topic(const struct cursus_topic_partition_list_t *list,
                                              size_t index);

// The partition of entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_partition_list_partition(const struct cursus_topic_partition_list_t *list,
                                              size_t index);

// The offset of entry `index` (-1 when it has none or is out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_partition_list_offset(const struct cursus_topic_partition_list_t *list,
                                           size_t index);

// The number of partition offsets entries.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_partition_offsets_list_count(const struct cursus_partition_offsets_list_t *list);

// The partition id.
//
// Of the entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_partition_offsets_list_partition(const struct cursus_partition_offsets_list_t *list,
                                                size_t index);

// The earliest retained offset.
//
// Of the entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_partition_offsets_list_earliest(const struct cursus_partition_offsets_list_t *list,
                                               size_t index);

// The next readable committed offset (where `latest` consumers
// start).
//
// Of the entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_partition_offsets_list_latest(const struct cursus_partition_offsets_list_t *list,
                                             size_t index);

// The log end offset.
//
// Of the entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_partition_offsets_list_leo(const struct cursus_partition_offsets_list_t *list,
                                          size_t index);

// The high-water mark.
//
// Of the entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_partition_offsets_list_hwm(const struct cursus_partition_offsets_list_t *list,
                                          size_t index);

// The number of strings.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_string_list_count(const struct cursus_string_list_t *list);

// String `index` (none when out of range).
//
// Thread-safety: safe from any thread while the list is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_string_list_get(const struct cursus_string_list_t *list, size_t index);

// The topic of the message.
//
// Thread-safety: safe from any thread while the message is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_message_topic(const struct cursus_message_t *message);

// The partition of the message.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int32_t cursus_message_partition(const struct cursus_message_t *message);

// The offset of the message.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_message_offset(const struct cursus_message_t *message);

// The timestamp in milliseconds since the epoch (0 when unknown).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_message_timestamp(const struct cursus_message_t *message);

// The key bytes (empty when the record has no key; `message_has_key`
// tells the two apart).
//
// Thread-safety: safe from any thread while the message is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const uint8_t *cursus_message_key(const struct cursus_message_t *message, size_t *out_len);

// Whether the record has a key. The protocol carries only non-empty
// keys, so a producer's empty key arrives as no key.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_message_has_key(const struct cursus_message_t *message);

// The record's metadata (UTF-8, usually JSON on event-sourcing topics);
// none when the record has none.
//
// Thread-safety: safe from any thread while the message is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_message_metadata(const struct cursus_message_t *message);

// The event type, when the record is an event of an event-sourcing topic;
// none otherwise (and then the other event accessors return their
// fallbacks).
//
// Thread-safety: safe from any thread while the message is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_message_event_type(const struct cursus_message_t *message);

// The event's schema version (0 when the record is not an event).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_message_schema_version(const struct cursus_message_t *message);

// The aggregate version the event created (-1 when the record is not an
// event).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_message_aggregate_version(const struct cursus_message_t *message);

// The event id, when the record is an event that has one.
//
// Thread-safety: safe from any thread while the message is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_message_event_id(const struct cursus_message_t *message);

// The value bytes (binary; may contain NUL bytes).
//
// Thread-safety: safe from any thread while the message is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const uint8_t *cursus_message_payload(const struct cursus_message_t *message, size_t *out_len);

// The W3C `traceparent` of the span that sent the record, when its
// metadata carries a trace context (docs/observability.md, "Trace
// context in records"); none otherwise (a malformed one counts as
// none). A tracing layer starts the record's process span as a child
// of it, and links the poll's receive span to it.
//
// Thread-safety: safe from any thread while the message is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_message_traceparent(const struct cursus_message_t *message);

// The W3C `tracestate` that came with `message_traceparent`; none when
// the record carries no context or a context without state.
//
// Thread-safety: safe from any thread while the message is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_message_tracestate(const struct cursus_message_t *message);

// The trace context `metadata` (a record's metadata, as a batch poll's
// record view gives it) carries, by the engine's rules
// (docs/observability.md, "Trace context in records"); none when it
// carries none or a malformed one. What `message_traceparent` reads, for
// records that are not message handles.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_trace_context_extract(const char *metadata,
                                                  struct cursus_trace_context_t **out_context,
                                                  struct cursus_error_t **out_error);

// A trace context from its W3C header values, checked by the engine's
// rules (`tracestate` absent or empty: none); a malformed one fails with
// `invalid_argument`, code `invalid_trace_context`. For a language's
// own trace-context value (Java's `TraceContext.of`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_trace_context_new(const char *traceparent,
                                              const char *tracestate,
                                              struct cursus_trace_context_t **out_context,
                                              struct cursus_error_t **out_error);

// The context's trace id: 32 lower-case hex digits.
//
// Thread-safety: safe from any thread while the context is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_trace_context_trace_id(const struct cursus_trace_context_t *context);

// The id of the span that sent the record: 16 lower-case hex digits.
//
// Thread-safety: safe from any thread while the context is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_trace_context_span_id(const struct cursus_trace_context_t *context);

// The trace flags' sampled bit.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_trace_context_sampled(const struct cursus_trace_context_t *context);

// The context's W3C `traceparent`.
//
// Thread-safety: safe from any thread while the context is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_trace_context_traceparent(const struct cursus_trace_context_t *context);

// The context's W3C `tracestate`; none when it has none.
//
// Thread-safety: safe from any thread while the context is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_trace_context_tracestate(const struct cursus_trace_context_t *context);

// A producer's statistics now: counters since it was created (records,
// bytes and batches acknowledged, requests, retries, errors by class,
// requests in flight) and the produce latency percentiles.
//
// Thread-safety: safe from any thread, and from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_statistics(struct cursus_producer_t *producer,
                                                struct cursus_statistics_t **out_statistics,
                                                struct cursus_error_t **out_error);

// A consumer's statistics now: counters since it was created (records and
// bytes received, requests, retries, errors by class), the fetch latency
// percentiles, and the lag of every assigned partition (asks the broker
// for the partitions' end offsets).
//
// Thread-safety: safe from any thread, and from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_statistics(struct cursus_consumer_t *consumer,
                                                struct cursus_statistics_t **out_statistics,
                                                struct cursus_error_t **out_error);

// The client's `client_id`.
//
// Thread-safety: safe from any thread while the statistics are alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_statistics_client_id(const struct cursus_statistics_t *statistics);

// What client they are from: `"producer"` or `"consumer"`.
//
// Thread-safety: safe from any thread while the statistics are alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_statistics_kind(const struct cursus_statistics_t *statistics);

// Records the broker acknowledged (producer).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_records_sent(const struct cursus_statistics_t *statistics);

// Payload plus key bytes of the acknowledged records (producer).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_bytes_sent(const struct cursus_statistics_t *statistics);

// Batches the broker acknowledged (producer).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_batches_sent(const struct cursus_statistics_t *statistics);

// Records the consumer's fetchers received.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_records_received(const struct cursus_statistics_t *statistics);

// Payload plus key bytes of the received records (consumer).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_bytes_received(const struct cursus_statistics_t *statistics);

// Request attempts sent to brokers (each retry counts).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_requests(const struct cursus_statistics_t *statistics);

// Request attempts that were retries.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_retries(const struct cursus_statistics_t *statistics);

// Request attempts sent and not answered yet when the snapshot was taken.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_in_flight_requests(const struct cursus_statistics_t *statistics);

// Failed request attempts of one error class (`class_name` as
// `error_class_name` gives it, e.g. `"not_found"`); 0 for a class that
// never failed or an unknown name.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_errors(const struct cursus_statistics_t *statistics,
                                  const char *class_name);

// Produce latency samples (acknowledged batches).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_produce_latency_count(const struct cursus_statistics_t *statistics);

// Produce latency (send to acknowledgement of a batch), median, in
// microseconds.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_produce_latency_p50_us(const struct cursus_statistics_t *statistics);

// Produce latency, 99th percentile, in microseconds.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_produce_latency_p99_us(const struct cursus_statistics_t *statistics);

// Produce latency, 99.9th percentile, in microseconds.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_produce_latency_p999_us(const struct cursus_statistics_t *statistics);

// Produce latency, the largest sample, in microseconds.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_produce_latency_max_us(const struct cursus_statistics_t *statistics);

// Fetch latency samples (CONSUME requests that returned records).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_fetch_latency_count(const struct cursus_statistics_t *statistics);

// Fetch latency (a CONSUME request to its records), median, in
// microseconds.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_fetch_latency_p50_us(const struct cursus_statistics_t *statistics);

// Fetch latency, 99th percentile, in microseconds.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_fetch_latency_p99_us(const struct cursus_statistics_t *statistics);

// Fetch latency, 99.9th percentile, in microseconds.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_fetch_latency_p999_us(const struct cursus_statistics_t *statistics);

// Fetch latency, the largest sample, in microseconds.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_statistics_fetch_latency_max_us(const struct cursus_statistics_t *statistics);

// How many partition rows the statistics hold (a consumer's assigned
// partitions; 0 for a producer). Rows are read by index, `0 <= i < count`.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_statistics_partition_count(const struct cursus_statistics_t *statistics);

// Row `i`'s topic (NULL/null when `i` is out of range).
//
// Thread-safety: safe from any thread while the statistics are alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_statistics_partition_topic(const struct cursus_statistics_t *statistics,
                                              size_t i);

// Row `i`'s partition (-1 when `i` is out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_statistics_partition_partition(const struct cursus_statistics_t *statistics,
                                              size_t i);

// Row `i`'s position: the offset after the last record the consumer
// returned, else the group's committed offset, else where
// `auto_offset_reset` starts it (-1 when unknown or out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_statistics_partition_position(const struct cursus_statistics_t *statistics,
                                             size_t i);

// Row `i`'s end offset (LIST_OFFSETS latest; -1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_statistics_partition_end_offset(const struct cursus_statistics_t *statistics,
                                               size_t i);

// Row `i`'s lag: end offset minus position (-1 when the position is
// unknown or `i` is out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_statistics_partition_lag(const struct cursus_statistics_t *statistics, size_t i);

// The statistics as one JSON object (fields as in docs/observability.md).
//
// Thread-safety: safe from any thread while the statistics are alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_statistics_json(const struct cursus_statistics_t *statistics);

// Sets the producer's statistics listener: it gets a statistics handle
// every `interval_ms` milliseconds (negative: the `statistics_interval_ms`
// option; 0: never), on the producer's callback thread (never an I/O
// thread). A NULL/null listener removes it. The handle is valid only
// during the call. The listener may call the library, this producer
// included.
//
// Thread-safety: safe from any thread, and from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_set_statistics_listener(struct cursus_producer_t *producer,
                                                             int64_t interval_ms,
                                                             cursus_statistics_listener listener,
                                                             void *user_data,
                                                             struct cursus_error_t **out_error);

// Sets the consumer's statistics listener: it gets a statistics handle
// (lag included) every `interval_ms` milliseconds (negative: the
// `statistics_interval_ms` option; 0: never), on the consumer's callback
// thread (never an I/O thread). A NULL/null listener removes it. The
// handle is valid only during the call.
//
// Thread-safety: safe from any thread, and from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_set_statistics_listener(struct cursus_consumer_t *consumer,
                                                             int64_t interval_ms,
                                                             cursus_statistics_listener listener,
                                                             void *user_data,
                                                             struct cursus_error_t **out_error);

// Sets the producer's error listener: it gets each background error (a
// batch that failed, a fenced producer, a lost broker connection) as an
// error handle, on the producer's callback thread. A NULL/null listener
// removes it. The handle is valid only during the call.
//
// Thread-safety: safe from any thread, and from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_set_error_listener(struct cursus_producer_t *producer,
                                                        cursus_error_listener listener,
                                                        void *user_data,
                                                        struct cursus_error_t **out_error);

// Sets the consumer's error listener: it gets each background error
// (membership lost, a lost broker connection) as an error handle, on the
// consumer's callback thread. A NULL/null listener removes it. The handle
// is valid only during the call.
//
// Thread-safety: safe from any thread, and from a callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_consumer_set_error_listener(struct cursus_consumer_t *consumer,
                                                        cursus_error_listener listener,
                                                        void *user_data,
                                                        struct cursus_error_t **out_error);

// Sends the engine's log records at `level_name` (`error`, `warn`,
// `info`, `debug`, `trace`) and above to `listener`, for the whole
// process, on the process's log thread (`cursus-log`, never an I/O
// thread), in order. `off` or a NULL/null listener stops logging; records
// below the level cost nearly nothing. The record handle is valid only
// during the call. When the listener falls 10000 records behind, newer
// records are dropped; the next one delivered says how many.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_log_set_listener(const char *level_name,
                                             cursus_log_record_listener listener,
                                             void *user_data,
                                             struct cursus_error_t **out_error);

// Changes the level of the log listener (`error`, `warn`, `info`,
// `debug`, `trace` or `off`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_log_set_level(const char *level_name,
                                          struct cursus_error_t **out_error);

// The record's level: `"error"`, `"warn"`, `"info"`, `"debug"` or
// `"trace"`.
//
// Thread-safety: safe from any thread while the record is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_log_record_level(const struct cursus_log_record_t *record);

// Where the record comes from: the engine module, e.g.
// `"cursus::consumer::group"`.
//
// Thread-safety: safe from any thread while the record is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_log_record_target(const struct cursus_log_record_t *record);

// The message, followed by ` key=value` per field.
//
// Thread-safety: safe from any thread while the record is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_log_record_message(const struct cursus_log_record_t *record);

// Records dropped just before this one because the listener fell behind.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_log_record_dropped(const struct cursus_log_record_t *record);

// Connects a producer with `config` (options `bootstrap_servers`, `acks`,
// `linger_ms`, `enable_idempotence`, ...).
//
// Thread-safety: safe from any thread. A producer may be used from several
// threads at once.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_new(struct cursus_config_t *config,
                                         struct cursus_producer_t **out_producer,
                                         struct cursus_error_t **out_error);

// Sends one record and waits until it is acknowledged (or fails);
// returns where it was stored.
//
// `partition` < 0 lets the partitioner choose (the key's FNV-1a hash, or
// round-robin without a key). `key` may be absent (no key); key and value
// may hold any bytes and are copied before the call returns. `timestamp`
// is milliseconds since the epoch, or `CURSUS_NO_TIMESTAMP` (`INT64_MIN`)
// to stamp the send time.
//
// Thread-safety: safe from any thread, concurrently on one producer, and
// from a delivery callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send(struct cursus_producer_t *producer,
                                          const char *topic,
                                          int32_t partition,
                                          const uint8_t *key,
                                          size_t key_len,
                                          const uint8_t *value,
                                          size_t value_len,
                                          int64_t timestamp,
                                          struct cursus_record_metadata_t *out_metadata,
                                          struct cursus_error_t **out_error);

// Queues one record and returns once it is queued (waiting at most
// `max_block_ms` for buffer space). `callback` is then called exactly
// once with the outcome, on this producer's callback thread (never an
// I/O thread), in offset order per partition. If queueing fails, the
// error is returned and the callback is never called. The callback may
// call the library, including `send` and `flush` of this producer.
// Without a callback (NULL) the record is sent all the same and nothing
// is called for it: the cheapest send; a failure reaches the producer's
// error listener, and `flush` waits for it as for any record.
// Arguments are as for `producer_send`.
//
// Thread-safety: safe from any thread, concurrently on one producer, and
// from a delivery callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_cb(struct cursus_producer_t *producer,
                                             const char *topic,
                                             int32_t partition,
                                             const uint8_t *key,
                                             size_t key_len,
                                             const uint8_t *value,
                                             size_t value_len,
                                             int64_t timestamp,
                                             cursus_delivery_cb callback,
                                             void *user_data,
                                             struct cursus_error_t **out_error);

// `producer_send` with the record's metadata and the W3C trace context
// of the span sending it: the hook a tracing layer (opentelemetry-cpp's
// propagator, for one) uses to link the consumer's spans to this send
// (docs/observability.md, "C and C++").
//
// `metadata` (NULL: none) is the record's own metadata (UTF-8, usually
// a JSON object). `traceparent` (NULL: no context) and `tracestate`
// (NULL or empty: none) are the W3C header values; the engine adds them
// to the metadata as the keys `traceparent` and `tracestate` of a JSON
// object, keeping the application's object byte for byte (metadata that
// is not a JSON object is sent unchanged, without the context). A
// malformed context fails the call with `CURSUS_ERR_INVALID_ARGUMENT`,
// code `invalid_trace_context`, as does a `tracestate` without a
// `traceparent`. Consumers read the context back with
// `message_traceparent` and `message_tracestate`. The other arguments
// are as for `producer_send`.
//
// Thread-safety: safe from any thread, concurrently on one producer, and
// from a delivery callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_traced(struct cursus_producer_t *producer,
                                                 const char *topic,
                                                 int32_t partition,
                                                 const uint8_t *key,
                                                 size_t key_len,
                                                 const uint8_t *value,
                                                 size_t value_len,
                                                 int64_t timestamp,
                                                 const char *metadata,
                                                 const char *traceparent,
                                                 const char *tracestate,
                                                 struct cursus_record_metadata_t *out_metadata,
                                                 struct cursus_error_t **out_error);

// `producer_send_cb` with the record's metadata and trace context, as
// `producer_send_traced` takes them (a malformed context fails the call
// with code `invalid_trace_context`, and then the callback is never
// called). The other arguments are as for `producer_send_cb`.
//
// Thread-safety: safe from any thread, concurrently on one producer, and
// from a delivery callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_cb_traced(struct cursus_producer_t *producer,
                                                    const char *topic,
                                                    int32_t partition,
                                                    const uint8_t *key,
                                                    size_t key_len,
                                                    const uint8_t *value,
                                                    size_t value_len,
                                                    int64_t timestamp,
                                                    const char *metadata,
                                                    const char *traceparent,
                                                    const char *tracestate,
                                                    cursus_delivery_cb callback,
                                                    void *user_data,
                                                    struct cursus_error_t **out_error);

// Queues a batch of records of `topic`, packed as `bridge/src/records_in.rs`
// describes (u32 count; per record i32 topic_len (-1: the batch's topic),
// topic, i32 partition (-1: any), i64 timestamp (`CURSUS_NO_TIMESTAMP`: the
// send time), i32 key_len (-1: no key), key, u32 value_len, value;
// little-endian), in one call, and returns once every record is queued
// (each waits at most `max_block_ms` for buffer space). The buffer is
// copied before the call returns. A batch has one topic: a record naming
// another fails the call with `CURSUS_ERR_INVALID_ARGUMENT` (class
// validation, "a batch has one topic: record I is for "T", the batch for
// "B""), the same rule and error in every language. Records with
// metadata or a trace context: `producer_send_batch_traced`.
//
// `callback` is then called exactly once for the whole batch, on this
// producer's callback thread, with a delivery batch handle lent for the
// call: every record's outcome in packed order. A record that cannot be
// queued (a partition that does not exist, a record too large) fails
// alone, in its slot; the others are sent. A malformed buffer or a
// closed producer fails the call, and then the callback is never called.
//
// Thread-safety: safe from any thread, concurrently on one producer, and
// from a delivery callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_batch(struct cursus_producer_t *producer,
                                                const char *topic,
                                                const uint8_t *packed,
                                                size_t packed_len,
                                                cursus_delivery_batch_cb callback,
                                                void *user_data,
                                                struct cursus_error_t **out_error);

// `producer_send_batch` for records that carry metadata or a W3C trace
// context: the batch is packed in the traced layout of
// `bridge/src/records_in.rs`, each record as for `producer_send_batch`
// followed by i32 metadata_len (-1: none), metadata (UTF-8), i32
// traceparent_len (-1: no context), traceparent, i32 tracestate_len (-1:
// none), tracestate. Each record's context is written into its metadata
// as `producer_send_traced` writes one record's (docs/observability.md,
// "Trace context in records"). A malformed context, or a tracestate
// without a traceparent, fails the whole call before anything is sent
// with `CURSUS_ERR_INVALID_ARGUMENT`, code `invalid_trace_context` (its
// field `record` names the record); a malformed buffer, with
// `CURSUS_ERR_INVALID_ARGUMENT` naming the byte. The callback and
// everything else are as for `producer_send_batch`.
//
// Thread-safety: safe from any thread, concurrently on one producer, and
// from a delivery callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_batch_traced(struct cursus_producer_t *producer,
                                                       const char *topic,
                                                       const uint8_t *packed,
                                                       size_t packed_len,
                                                       cursus_delivery_batch_cb callback,
                                                       void *user_data,
                                                       struct cursus_error_t **out_error);

// The number of records in the batch.
//
// Thread-safety: safe from any thread while the batch is lent.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_delivery_batch_count(const struct cursus_delivery_batch_t *batch);

// The topic of the batch.
//
// Thread-safety: safe from any thread while the batch is lent.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_delivery_batch_topic(const struct cursus_delivery_batch_t *batch);

// Record `index`'s status: `ok` when it was delivered, else the status of
// its error (`invalid_argument` for an index out of range).
//
// Thread-safety: safe from any thread while the batch is lent.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_delivery_batch_status(const struct cursus_delivery_batch_t *batch,
                                                  size_t index);

// Succeeds when record `index` was delivered; else fails with its error
// (or `invalid_argument` for an index out of range).
//
// Thread-safety: safe from any thread while the batch is lent.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_delivery_batch_check(struct cursus_delivery_batch_t *batch,
                                                 size_t index,
                                                 struct cursus_error_t **out_error);

// The partition record `index` was written to, or -1 when it failed.
//
// Thread-safety: safe from any thread while the batch is lent.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int32_t cursus_delivery_batch_partition(const struct cursus_delivery_batch_t *batch, size_t index);

// The offset of record `index`, or -1 when it failed (or with acks=0).
//
// Thread-safety: safe from any thread while the batch is lent.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_delivery_batch_offset(const struct cursus_delivery_batch_t *batch, size_t index);

// The timestamp of record `index` (milliseconds since the epoch), or 0
// when it failed.
//
// Thread-safety: safe from any thread while the batch is lent.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_delivery_batch_timestamp(const struct cursus_delivery_batch_t *batch, size_t index);

// Every record's report in one buffer, 24 bytes each after a u32 count
// (i32 status, i32 partition, i64 offset, i64 timestamp; little-endian;
// see `bridge/src/records_in.rs`), lent by the batch: for languages where
// a call per record is expensive (cgo, JNI).
//
// Thread-safety: safe from any thread while the batch is lent.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const uint8_t *cursus_delivery_batch_packed(const struct cursus_delivery_batch_t *batch,
                                            size_t *out_len);

// Sends everything queued and waits until every record sent before the
// call is acknowledged or failed and its callback has returned, at most
// `timeout_ms` (`-1`: no limit, `-2`: the default, 30 s). Fails with
// `timeout` when the deadline passes. From a delivery callback it waits
// for the acknowledgements only (the callbacks behind the running one
// cannot run before it returns).
//
// Thread-safety: safe from any thread, and from a delivery callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_flush(struct cursus_producer_t *producer,
                                           int64_t timeout_ms,
                                           struct cursus_error_t **out_error);

// Stops taking records, flushes within `timeout_ms` (`-1`: no limit, `-2`:
// the default, 30 s), fails what is left, then closes. Later sends fail
// with `closed`; closing twice is harmless. The handle must still be
// destroyed.
//
// Thread-safety: safe from any thread, and from a delivery callback.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_close(struct cursus_producer_t *producer,
                                           int64_t timeout_ms,
                                           struct cursus_error_t **out_error);

// Starts an event of `event_type` (may be empty) carrying `payload`
// (UTF-8 text). Without an event id one is generated at append.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_builder_new(const char *event_type,
                                              const char *payload,
                                              struct cursus_event_builder_t **out_event,
                                              struct cursus_error_t **out_error);

// Sets the event's metadata text.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_builder_set_metadata(struct cursus_event_builder_t *event,
                                                       const char *metadata,
                                                       struct cursus_error_t **out_error);

// Sets the event's schema version (the broker's default is 1).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_builder_set_schema_version(struct cursus_event_builder_t *event,
                                                             uint32_t schema_version,
                                                             struct cursus_error_t **out_error);

// Sets the event's id (unique per aggregate replay topic; text without
// whitespace). An append retried with the same id on a replay topic is
// answered with the original offset.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_builder_set_event_id(struct cursus_event_builder_t *event,
                                                       const char *event_id,
                                                       struct cursus_error_t **out_error);

// Appends a built event to aggregate `key` if the aggregate is at
// `expected_version` (as `event_store_append`). On an aggregate replay
// topic an append whose outcome is unknown is retried with the same event
// id, so it is stored once.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_append_event(struct cursus_event_store_t *store,
                                                     const char *topic,
                                                     const char *key,
                                                     uint64_t expected_version,
                                                     struct cursus_event_builder_t *event,
                                                     struct cursus_appended_t **out_appended,
                                                     struct cursus_error_t **out_error);

// Appends a built event to aggregate `key` inside the producer's open
// transaction (TXN_APPEND_STREAM): it becomes the version after
// `expected_version` when the transaction commits, together with the transaction's
// records and offsets, and never if it aborts. The aggregate is reserved
// until then (`stream_version_reserved` for other writers).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_append_stream(struct cursus_producer_t *producer,
                                                   const char *topic,
                                                   const char *key,
                                                   uint64_t expected_version,
                                                   struct cursus_event_builder_t *event,
                                                   struct cursus_appended_t **out_appended,
                                                   struct cursus_error_t **out_error);

// Proves that aggregate `match_id`'s retained events on a replay topic
// are exactly sequences 1..last with verified digests and unique ids (and
// that last is `expected_last_sequence`, unless it is -1: no expectation;
// 0 and other negatives are `invalid_argument`, as in every language). A
// proof that is not complete fails with `aggregate_proof_<status>`;
// `replay_proof_from_error` reads its proof.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_replay_proof(struct cursus_event_store_t *store,
                                                     const char *topic,
                                                     const char *match_id,
                                                     int64_t expected_last_sequence,
                                                     struct cursus_replay_proof_t **out_proof,
                                                     struct cursus_error_t **out_error);

// The proof a failed replay proof or range read carries, or none.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_replay_proof_from_error(struct cursus_error_t *error,
                                                    struct cursus_replay_proof_t **out_proof,
                                                    struct cursus_error_t **out_error);

// The proof in `proof`: the JSON text a failed replay proof or range read
// carries in its error field `proof` (the field `replay_proof_from_error`
// reads, for a language that keeps only the error's fields), or none when
// it is not a proof.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_replay_proof_from_json(const char *proof,
                                                   struct cursus_replay_proof_t **out_proof,
                                                   struct cursus_error_t **out_error);

// Reads the events of aggregate `match_id` with sequences
// `from_sequence..=to_sequence` (at most `max_records`; 0: 1,000) under a
// complete proof.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_store_event_range(struct cursus_event_store_t *store,
                                                    const char *topic,
                                                    const char *match_id,
                                                    uint64_t from_sequence,
                                                    uint64_t to_sequence,
                                                    uint32_t max_records,
                                                    struct cursus_event_range_t **out_range,
                                                    struct cursus_error_t **out_error);

// The proof the range was read under.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_event_range_proof(struct cursus_event_range_t *range,
                                              struct cursus_replay_proof_t **out_proof,
                                              struct cursus_error_t **out_error);

// The number of events in the range.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_event_range_count(const struct cursus_event_range_t *range);

// The offset of event `index` (-1 out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_event_range_offset(const struct cursus_event_range_t *range, size_t index);

// The sequence (aggregate version) of event `index`.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_event_range_sequence(const struct cursus_event_range_t *range, size_t index);

// The event id of event `index`.
//
// Thread-safety: safe from any thread while the range is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_event_range_event_id(const struct cursus_event_range_t *range, size_t index);

// The event type of event `index`.
//
// Thread-safety: safe from any thread while the range is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_event_range_event_type(const struct cursus_event_range_t *range, size_t index);

// The payload of event `index`.
//
// Thread-safety: safe from any thread while the range is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_event_range_payload(const struct cursus_event_range_t *range, size_t index);

// The topic the proof is about.
//
// Thread-safety: safe from any thread while the proof is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_replay_proof_topic(const struct cursus_replay_proof_t *proof);

// The aggregate (match) id the proof is about.
//
// Thread-safety: safe from any thread while the proof is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_replay_proof_match_id(const struct cursus_replay_proof_t *proof);

// `complete`, `not_found`, `retention_gap`, `sequence_gap`,
// `identity_conflict` or `proof_unavailable`.
//
// Thread-safety: safe from any thread while the proof is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_replay_proof_status(const struct cursus_replay_proof_t *proof);

// Why the proof is not complete (empty when it is).
//
// Thread-safety: safe from any thread while the proof is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_replay_proof_diagnostic(const struct cursus_replay_proof_t *proof);

// The aggregate's partition.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_replay_proof_partition(const struct cursus_replay_proof_t *proof);

// The events found.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_replay_proof_event_count(const struct cursus_replay_proof_t *proof);

// The lowest retained sequence (0 when none).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_replay_proof_earliest_sequence(const struct cursus_replay_proof_t *proof);

// The highest retained sequence (0 when none).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_replay_proof_latest_sequence(const struct cursus_replay_proof_t *proof);

// The offset of the first retained event.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_replay_proof_first_offset(const struct cursus_replay_proof_t *proof);

// The offset of the last retained event.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_replay_proof_last_offset(const struct cursus_replay_proof_t *proof);

// The first event's id.
//
// Thread-safety: safe from any thread while the proof is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_replay_proof_first_event_id(const struct cursus_replay_proof_t *proof);

// The last event's id.
//
// Thread-safety: safe from any thread while the proof is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_replay_proof_last_event_id(const struct cursus_replay_proof_t *proof);

// True when sequences increase by exactly one.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_replay_proof_sequence_complete(const struct cursus_replay_proof_t *proof);

// True when the retained events start at sequence 1.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_replay_proof_retention_complete(const struct cursus_replay_proof_t *proof);

// The committed offset the proof covers.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_replay_proof_hwm(const struct cursus_replay_proof_t *proof);

// The topic name.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_info_name(const struct cursus_topic_info_t *info);

// The partition count.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_topic_info_partitions(const struct cursus_topic_info_t *info);

// The cleanup policy (`delete`, `compact` or `delete,compact`).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_info_cleanup_policy(const struct cursus_topic_info_t *info);

// The partitioner (`hash_key` or `round_robin`).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_info_partitioner(const struct cursus_topic_info_t *info);

// The authorization policy (`open`, `deny_write`, `deny_read` or
// `acl`).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_info_auth_policy(const struct cursus_topic_info_t *info);

// The number of read acl entries: The principals allowed to read (the read ACL).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_topic_info_read_acl_count(const struct cursus_topic_info_t *info);

// Entry `index` of the read acl entries: The principals allowed to read (the read ACL).
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_info_read_acl(const struct cursus_topic_info_t *info, size_t index);

// The number of write acl entries: The principals allowed to write (the write ACL).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_topic_info_write_acl_count(const struct cursus_topic_info_t *info);

// Entry `index` of the write acl entries: The principals allowed to write (the write ACL).
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_info_write_acl(const struct cursus_topic_info_t *info, size_t index);

// The retention in hours (0: the broker default).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_topic_info_retention_hours(const struct cursus_topic_info_t *info);

// The retention in bytes (0: the broker default).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_topic_info_retention_bytes(const struct cursus_topic_info_t *info);

// The definition revision (pass it to `admin_truncate_topic`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_topic_info_revision(const struct cursus_topic_info_t *info);

// The replication factor.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint32_t cursus_topic_info_replication_factor(const struct cursus_topic_info_t *info);

// Whether producers are deduplicated on this topic.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_topic_info_idempotent(const struct cursus_topic_info_t *info);

// Whether the topic takes event-sourcing commands.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_topic_info_event_sourcing(const struct cursus_topic_info_t *info);

// Whether the topic is an aggregate replay topic (appends need event
// ids and are retried safely).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_topic_info_aggregate_replay(const struct cursus_topic_info_t *info);

// The lifecycle epoch (bumped by TRUNCATE).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_topic_info_lifecycle_epoch(const struct cursus_topic_info_t *info);

// The topic's `min_in_sync_replicas` override (none: the broker
// default applies).
//
// -1 when there is none.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_info_min_in_sync_replicas(const struct cursus_topic_info_t *info);

// The `min_in_sync_replicas` in force (none when the reply does not
// say).
//
// -1 when there is none.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_info_effective_min_in_sync_replicas(const struct cursus_topic_info_t *info);

// The topic described.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_description_topic(const struct cursus_topic_description_t *description);

// The topic's definition.
//
// A topic info handle of its own (destroy it too).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_topic_description_definition(struct cursus_topic_description_t *description,
                                                         struct cursus_topic_info_t **out_definition,
                                                         struct cursus_error_t **out_error);

// The number of partition entries: The partitions.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_topic_description_partition_count(const struct cursus_topic_description_t *description);

// The partition id.
//
// Of the partition entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_description_partition_id(const struct cursus_topic_description_t *description,
                                              size_t index);

// The leader address.
//
// Of the partition entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_description_partition_leader(const struct cursus_topic_description_t *description,
                                                      size_t index);

// The number of replica entries: The replica addresses.
//
// Of the partition entry `index` (0 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_topic_description_partition_replica_count(const struct cursus_topic_description_t *description,
                                                        size_t index);

// Entry `replica` of the replica entries: The replica addresses.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_description_partition_replica(const struct cursus_topic_description_t *description,
                                                       size_t index,
                                                       size_t replica);

// The number of isr entries: The in-sync replica addresses.
//
// Of the partition entry `index` (0 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_topic_description_partition_isr_count(const struct cursus_topic_description_t *description,
                                                    size_t index);

// Entry `isr` of the isr entries: The in-sync replica addresses.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_description_partition_isr(const struct cursus_topic_description_t *description,
                                                   size_t index,
                                                   size_t isr);

// The earliest retained offset.
//
// Of the partition entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_description_partition_earliest(const struct cursus_topic_description_t *description,
                                                    size_t index);

// The log end offset.
//
// Of the partition entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_description_partition_leo(const struct cursus_topic_description_t *description,
                                               size_t index);

// The high-water mark.
//
// Of the partition entry `index` (-1 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_description_partition_hwm(const struct cursus_topic_description_t *description,
                                               size_t index);

// The topic's definition.
//
// A topic info handle of its own (destroy it too).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_topic_metadata_info(struct cursus_topic_metadata_t *metadata,
                                                struct cursus_topic_info_t **out_topic,
                                                struct cursus_error_t **out_error);

// The number of leader entries: The leader address (`host:port`) of each partition, by partition.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_topic_metadata_leader_count(const struct cursus_topic_metadata_t *metadata);

// Entry `index` of the leader entries: The leader address (`host:port`) of each partition, by partition.
//
// None when out of range.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_topic_metadata_leader(const struct cursus_topic_metadata_t *metadata,
                                         size_t index);

// The number of leader epoch entries: The leader epoch of each partition, by partition.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_topic_metadata_leader_epoch_count(const struct cursus_topic_metadata_t *metadata);

// Entry `index` of the leader epoch entries: The leader epoch of each partition, by partition.
//
// -1 when out of range.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_topic_metadata_leader_epoch(const struct cursus_topic_metadata_t *metadata,
                                           size_t index);

// The group name.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_group_status_group(const struct cursus_group_status_t *status);

// The topic of a single-topic group (empty otherwise).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_group_status_topic(const struct cursus_group_status_t *status);

// The group state, e.g. `Stable`.
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_group_status_state(const struct cursus_group_status_t *status);

// The generation.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_group_status_generation(const struct cursus_group_status_t *status);

// The member count the broker reports.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_group_status_reported_member_count(const struct cursus_group_status_t *status);

// The partition count of the group's topics.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_group_status_partition_count(const struct cursus_group_status_t *status);

// The number of member entries: The members.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_group_status_member_count(const struct cursus_group_status_t *status);

// The member id.
//
// Of the member entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_group_status_member_id(const struct cursus_group_status_t *status, size_t index);

// When the member last sent a heartbeat, as the broker reports it.
//
// Of the member entry `index` (none when out of range).
//
// Thread-safety: safe from any thread while the handle is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_group_status_member_last_heartbeat(const struct cursus_group_status_t *status,
                                                      size_t index);

// The number of assignment entries: The partitions assigned to the member.
//
// Of the member entry `index` (0 when out of range).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_group_status_member_assignment_count(const struct cursus_group_status_t *status,
                                                   size_t index);

// Entry `assignment` of the assignment entries: The partitions assigned to the member.
//
// -1 when out of range.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_group_status_member_assignment(const struct cursus_group_status_t *status,
                                              size_t index,
                                              size_t assignment);

// Whether the topic was deleted (false when `if_exists` found none).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_delete_outcome_deleted(const struct cursus_delete_outcome_t *outcome);

// Whether the broker still has storage cleanup to retry.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_delete_outcome_cleanup_pending(const struct cursus_delete_outcome_t *outcome);

// The topic's revision after truncation.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_truncate_outcome_revision(const struct cursus_truncate_outcome_t *outcome);

// The topic's lifecycle epoch after truncation.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
uint64_t cursus_truncate_outcome_lifecycle_epoch(const struct cursus_truncate_outcome_t *outcome);

// Whether the broker still has storage cleanup to retry.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
bool cursus_truncate_outcome_cleanup_pending(const struct cursus_truncate_outcome_t *outcome);

// The instrumentation scope every layer names its tracer with (`cursus`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_scope(char **out_scope, struct cursus_error_t **out_error);

// The publish span of a send of one record to `topic`: `partition` < 0
// when the partitioner chooses, `key` absent for none (only a UTF-8 key
// is recorded), `body_size` the value's length, `client_id` absent for
// none. Started at the send, ended at the acknowledgement.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_publish(const char *topic,
                                         int32_t partition,
                                         const uint8_t *key,
                                         size_t key_len,
                                         uint64_t body_size,
                                         const char *client_id,
                                         struct cursus_span_spec_t **out_span,
                                         struct cursus_error_t **out_error);

// What a publish span adds when the record is acknowledged (`offset` < 0:
// none, as with acks=0): attributes only.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_acknowledged(uint32_t partition,
                                              int64_t offset,
                                              struct cursus_span_spec_t **out_span,
                                              struct cursus_error_t **out_error);

// The receive span of one poll that returned `count` records of `topics`
// (one entry per record, or per distinct topic), `group` absent for none.
// A layer links it to each record's trace context.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_receive(const char *const *topics,
                                         size_t topics_count,
                                         uint64_t count,
                                         const char *group,
                                         struct cursus_span_spec_t **out_span,
                                         struct cursus_error_t **out_error);

// The process span of one received record: a child of the record's
// trace context.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_process(const char *topic,
                                         uint32_t partition,
                                         uint64_t offset,
                                         const uint8_t *key,
                                         size_t key_len,
                                         uint64_t body_size,
                                         const char *group,
                                         struct cursus_span_spec_t **out_span,
                                         struct cursus_error_t **out_error);

// The span of a transaction's commit (`commit` true) or abort.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_end_transaction(const char *transactional_id,
                                                 bool commit,
                                                 struct cursus_span_spec_t **out_span,
                                                 struct cursus_error_t **out_error);

// The span of an event-store append to `aggregate` expecting `version`.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_append(const char *topic,
                                        const char *aggregate,
                                        uint64_t version,
                                        struct cursus_span_spec_t **out_span,
                                        struct cursus_error_t **out_error);

// The span of an event-store read of `aggregate` from `from_version`.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_read(const char *topic,
                                      const char *aggregate,
                                      uint64_t from_version,
                                      struct cursus_span_spec_t **out_span,
                                      struct cursus_error_t **out_error);

// The attribute key of a metric point's `attribute`: `client_id`
// (every point), `error_type` (the class of `errors`), `topic` and
// `partition` (`lag`), as `telemetry::keys` declares them; an unknown
// one fails with `invalid_argument`.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_telemetry_metric_attribute(const char *attribute,
                                                       char **out_key,
                                                       struct cursus_error_t **out_error);

// What a span of a failed operation adds (`error.type`, the error's
// `code`): attributes only. The layer also sets the span's status to
// error.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_span_failed(const char *code,
                                        struct cursus_span_spec_t **out_span,
                                        struct cursus_error_t **out_error);

// The span's name (empty for attributes alone).
//
// Thread-safety: safe from any thread while the span spec is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_span_spec_name(const struct cursus_span_spec_t *span);

// The span's kind: `producer`, `consumer` or `client`.
//
// Thread-safety: safe from any thread while the span spec is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_span_spec_kind(const struct cursus_span_spec_t *span);

// The number of attributes.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
size_t cursus_span_spec_attribute_count(const struct cursus_span_spec_t *span);

// Attribute `index`'s key; none out of range.
//
// Thread-safety: safe from any thread while the span spec is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_span_spec_attribute_key(const struct cursus_span_spec_t *span, size_t index);

// Attribute `index`'s value when it is a string; none when it is an
// integer (`span_spec_attribute_int`) or out of range.
//
// Thread-safety: safe from any thread while the span spec is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_span_spec_attribute_string(const struct cursus_span_spec_t *span, size_t index);

// Attribute `index`'s value when it is an integer; 0 otherwise.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
int64_t cursus_span_spec_attribute_int(const struct cursus_span_spec_t *span, size_t index);

// The number of metrics (`metric` takes 0 to this minus one).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_metric_count(uint64_t *out_count, struct cursus_error_t **out_error);

// Metric `index`, in the order a layer registers them; an
// `invalid_argument` error out of range.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_metric(uint64_t index,
                                   struct cursus_metric_t **out_metric,
                                   struct cursus_error_t **out_error);

// The instrument name.
//
// Thread-safety: safe from any thread while the metric is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_metric_name(const struct cursus_metric_t *metric);

// The statistics field it reads, its field names joined by dots, e.g.
// `records_sent`, `produce_latency.p50_us` or `partitions.lag`.
//
// Thread-safety: safe from any thread while the metric is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_metric_field(const struct cursus_metric_t *metric);

// The UCUM unit (`{message}`, `By`, `us`, ...).
//
// Thread-safety: safe from any thread while the metric is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_metric_unit(const struct cursus_metric_t *metric);

// The instrument kind: `counter` (monotonic) or `gauge`.
//
// Thread-safety: safe from any thread while the metric is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_metric_kind(const struct cursus_metric_t *metric);

// The kind of client that reports it (`producer`, `consumer`), or none
// for every client.
//
// Thread-safety: safe from any thread while the metric is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_metric_client(const struct cursus_metric_t *metric);

// How the field becomes points: `none` (one), `error_type` (one per
// error class of the `errors` map, in `error.type`) or `partition` (one
// per partition with a known lag, with its topic and partition).
//
// Thread-safety: safe from any thread while the metric is alive.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
const char *cursus_metric_breakdown(const struct cursus_metric_t *metric);

// Obtains the producer's transactional session from the broker, fencing
// any older producer with the same `transactional_id` and aborting a
// transaction it left open. Call once before the first transaction.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_init_transactions(struct cursus_producer_t *producer,
                                                       struct cursus_error_t **out_error);

// Begins a transaction: records sent until commit or abort belong to
// it. Every transaction after the first re-initialises the session (the
// broker allows one transaction per epoch), so this may wait on the broker.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_begin_transaction(struct cursus_producer_t *producer,
                                                       struct cursus_error_t **out_error);

// Adds what `consumer` has delivered so far (the offset after the last
// record each partition returned) to the open transaction, fenced by the
// consumer's group session: committed with the transaction's records, or
// not at all. The consumer must have joined its group (polled once).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_consumer_offsets(struct cursus_producer_t *producer,
                                                           struct cursus_consumer_t *consumer,
                                                           struct cursus_error_t **out_error);

// Adds explicit next offsets (every entry of `offsets` needs one) to the
// open transaction, fenced by `consumer`'s group session.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_offsets_to_transaction(struct cursus_producer_t *producer,
                                                                 struct cursus_topic_partition_list_t *offsets,
                                                                 struct cursus_consumer_t *consumer,
                                                                 struct cursus_error_t **out_error);

// Waits for every send of the open transaction, then commits it. A lost
// reply is retried with the same epoch until the broker decides (up to
// `delivery_timeout_ms`); still undecided, the error is returned and the
// commit may be called again. After a failed send it fails: abort.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_commit_transaction(struct cursus_producer_t *producer,
                                                        struct cursus_error_t **out_error);

// Waits for the open transaction's sends to finish, then aborts it: none
// of its records or offsets become visible to read_committed consumers.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_abort_transaction(struct cursus_producer_t *producer,
                                                       struct cursus_error_t **out_error);

// Starts `init_transactions` in the background; `callback` is then
// called exactly once with the outcome on the producer's callback thread.
// If starting fails, the error is returned and the callback is never
// called.
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_init_transactions_async(struct cursus_producer_t *producer,
                                                             cursus_completion_cb callback,
                                                             void *user_data,
                                                             struct cursus_error_t **out_error);

// Starts `begin_transaction` in the background (callback as for
// `producer_init_transactions_async`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_begin_transaction_async(struct cursus_producer_t *producer,
                                                             cursus_completion_cb callback,
                                                             void *user_data,
                                                             struct cursus_error_t **out_error);

// Takes `consumer`'s delivered offsets and group session now and adds
// them to the open transaction in the background (callback as for
// `producer_init_transactions_async`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_consumer_offsets_async(struct cursus_producer_t *producer,
                                                                 struct cursus_consumer_t *consumer,
                                                                 cursus_completion_cb callback,
                                                                 void *user_data,
                                                                 struct cursus_error_t **out_error);

// Adds explicit next offsets (every entry of `offsets` needs one), fenced
// by `consumer`'s group session taken now, to the open transaction in the
// background (callback as for `producer_init_transactions_async`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_send_offsets_to_transaction_async(struct cursus_producer_t *producer,
                                                                       struct cursus_topic_partition_list_t *offsets,
                                                                       struct cursus_consumer_t *consumer,
                                                                       cursus_completion_cb callback,
                                                                       void *user_data,
                                                                       struct cursus_error_t **out_error);

// Starts `commit_transaction` in the background (callback as for
// `producer_init_transactions_async`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_commit_transaction_async(struct cursus_producer_t *producer,
                                                              cursus_completion_cb callback,
                                                              void *user_data,
                                                              struct cursus_error_t **out_error);

// Starts `abort_transaction` in the background (callback as for
// `producer_init_transactions_async`).
//
// Thread-safety: safe from any thread.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
enum cursus_status_t cursus_producer_abort_transaction_async(struct cursus_producer_t *producer,
                                                             cursus_completion_cb callback,
                                                             void *user_data,
                                                             struct cursus_error_t **out_error);

// Destroys a admin handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_admin_destroy(struct cursus_admin_t *handle);

// Destroys a aggregate handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_aggregate_destroy(struct cursus_aggregate_t *handle);

// Destroys a appended handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_appended_destroy(struct cursus_appended_t *handle);

// Destroys a cluster broker list handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_cluster_broker_list_destroy(struct cursus_cluster_broker_list_t *handle);

// Destroys a cluster status handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_cluster_status_destroy(struct cursus_cluster_status_t *handle);

// Destroys a config handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_config_destroy(struct cursus_config_t *handle);

// Destroys a consumer handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_consumer_destroy(struct cursus_consumer_t *handle);

// Destroys a delete outcome handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_delete_outcome_destroy(struct cursus_delete_outcome_t *handle);

// Destroys a delivery batch handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_delivery_batch_destroy(struct cursus_delivery_batch_t *handle);

// Destroys a error handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_error_destroy(struct cursus_error_t *handle);

// Destroys a event builder handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_event_builder_destroy(struct cursus_event_builder_t *handle);

// Destroys a event cursor handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_event_cursor_destroy(struct cursus_event_cursor_t *handle);

// Destroys a event page handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_event_page_destroy(struct cursus_event_page_t *handle);

// Destroys a event range handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_event_range_destroy(struct cursus_event_range_t *handle);

// Destroys a event store handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_event_store_destroy(struct cursus_event_store_t *handle);

// Destroys a group status handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_group_status_destroy(struct cursus_group_status_t *handle);

// Destroys a leader election handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_leader_election_destroy(struct cursus_leader_election_t *handle);

// Destroys a log record handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_log_record_destroy(struct cursus_log_record_t *handle);

// Destroys a message handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_message_destroy(struct cursus_message_t *handle);

// Destroys a metric handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_metric_destroy(struct cursus_metric_t *handle);

// Destroys a partition offsets list handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_partition_offsets_list_destroy(struct cursus_partition_offsets_list_t *handle);

// Destroys a partition reassignment handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_partition_reassignment_destroy(struct cursus_partition_reassignment_t *handle);

// Destroys a producer handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_producer_destroy(struct cursus_producer_t *handle);

// Destroys a rebalance event handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_rebalance_event_destroy(struct cursus_rebalance_event_t *handle);

// Destroys a replay proof handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_replay_proof_destroy(struct cursus_replay_proof_t *handle);

// Destroys a snapshot handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_snapshot_destroy(struct cursus_snapshot_t *handle);

// Destroys a snapshot read handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_snapshot_read_destroy(struct cursus_snapshot_read_t *handle);

// Destroys a span spec handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_span_spec_destroy(struct cursus_span_spec_t *handle);

// Destroys a statistics handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_statistics_destroy(struct cursus_statistics_t *handle);

// Destroys a stream version handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_stream_version_destroy(struct cursus_stream_version_t *handle);

// Destroys a string list handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_string_list_destroy(struct cursus_string_list_t *handle);

// Destroys a topic description handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_topic_description_destroy(struct cursus_topic_description_t *handle);

// Destroys a topic info handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_topic_info_destroy(struct cursus_topic_info_t *handle);

// Destroys a topic metadata handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_topic_metadata_destroy(struct cursus_topic_metadata_t *handle);

// Destroys a topic partition list handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_topic_partition_list_destroy(struct cursus_topic_partition_list_t *handle);

// Destroys a trace context handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_trace_context_destroy(struct cursus_trace_context_t *handle);

// Destroys a truncate outcome handle (NULL and already-destroyed handles are
// ignored). Strings and bytes its accessors lent become invalid.
//
// Thread-safety: safe from any thread; calls running on the handle
// finish normally, later ones fail with `CURSUS_ERR_INVALID_ARGUMENT`.
//
// # Safety
// Pointer arguments follow the header's conventions: handles are values
// returned by this library (or NULL); strings are NUL-terminated; byte
// buffers hold the given length; out-parameters are NULL or point to
// writable storage.
void cursus_truncate_outcome_destroy(struct cursus_truncate_outcome_t *handle);

// The runtime version of the library, e.g. `"0.1.0"` (static storage; do
// not free). Compare it with `CURSUS_VERSION_STRING` to detect a header
// and library of different versions.
//
// Thread-safety: safe from any thread.
const char *cursus_version(void);

// A static name for a status, e.g. `"CURSUS_ERR_TIMEOUT"` (do not free).
//
// Thread-safety: safe from any thread.
const char *cursus_status_name(enum cursus_status_t status);

// Frees a string the library allocated for the caller (NULL is ignored).
//
// Thread-safety: safe from any thread; each string is freed once.
//
// # Safety
// `s` must be NULL or a string returned by this library for the caller to
// free, not yet freed.
void cursus_string_free(char *s);

// Frees a buffer the library allocated for the caller (e.g. the records
// of `cursus_consumer_poll_batch`) with its length (NULL is ignored).
//
// Thread-safety: safe from any thread; each buffer is freed once.
//
// # Safety
// `buffer` must be NULL or a buffer returned by this library with its
// length, not yet freed.
void cursus_buffer_free(uint8_t *buffer, size_t len);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* CURSUS_H */
