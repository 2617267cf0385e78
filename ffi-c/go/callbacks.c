// C side of the Go callbacks: user_data carries a handle (an integer: a
// runtime/cgo.Handle, or a slot of handles.go for the send paths), never a
// Go pointer.
#include "cursus.h"
#include "_cgo_export.h"

// Non-zero while this thread runs a Go callback (a client's callback thread):
// a call made there must not wait for a completion on that same thread.
static __thread int in_go_callback;

int cursus_go_in_callback(void) { return in_go_callback; }

static void cursus_go_delivery(void *user_data, const cursus_delivery_report_t *report) {
  in_go_callback++;
  cursusGoDelivery((uintptr_t)user_data, (cursus_delivery_report_t *)report);
  in_go_callback--;
}

// cursus_go_result_t comes from producer.go's preamble (via _cgo_export.h).
cursus_go_result_t cursus_go_send(cursus_producer_t *p, const char *topic, int32_t partition, const uint8_t *key,
                                  size_t key_len, const uint8_t *payload, size_t payload_len, int64_t timestamp,
                                  uintptr_t handle) {
  cursus_go_result_t r = {CURSUS_OK, NULL};
  // Handle 0 (never a slot of handles.go): no callback; the library drops the outcome.
  r.status = cursus_producer_send_cb(p, topic, partition, key, key_len, payload, payload_len, timestamp,
                                     handle ? cursus_go_delivery : NULL, (void *)handle, &r.error);
  return r;
}

// cursus_go_send with the record's metadata and trace context (NULL: none).
cursus_go_result_t cursus_go_send_traced(cursus_producer_t *p, const char *topic, int32_t partition,
                                         const uint8_t *key, size_t key_len, const uint8_t *payload,
                                         size_t payload_len, int64_t timestamp, const char *metadata,
                                         const char *traceparent, const char *tracestate, uintptr_t handle) {
  cursus_go_result_t r = {CURSUS_OK, NULL};
  r.status = cursus_producer_send_cb_traced(p, topic, partition, key, key_len, payload, payload_len, timestamp,
                                            metadata, traceparent, tracestate, handle ? cursus_go_delivery : NULL,
                                            (void *)handle, &r.error);
  return r;
}

static void cursus_go_completion(void *user_data, cursus_status_t status, const cursus_error_t *error) {
  in_go_callback++;
  cursusGoCompletion((uintptr_t)user_data, status, (cursus_error_t *)error);
  in_go_callback--;
}

cursus_status_t cursus_go_commit_async(cursus_consumer_t *c, uintptr_t handle, cursus_error_t **err) {
  return cursus_consumer_commit_async(c, cursus_go_completion, (void *)handle, err);
}

// The _async transaction calls of a producer, by step (see transaction.go).
cursus_status_t cursus_go_txn(cursus_producer_t *p, int step, uintptr_t handle, cursus_error_t **err) {
  void *user_data = (void *)handle;
  switch (step) {
    case 0: return cursus_producer_init_transactions_async(p, cursus_go_completion, user_data, err);
    case 1: return cursus_producer_begin_transaction_async(p, cursus_go_completion, user_data, err);
    case 2: return cursus_producer_commit_transaction_async(p, cursus_go_completion, user_data, err);
    default: return cursus_producer_abort_transaction_async(p, cursus_go_completion, user_data, err);
  }
}

cursus_status_t cursus_go_txn_send_offsets(cursus_producer_t *p, cursus_consumer_t *c, uintptr_t handle,
                                           cursus_error_t **err) {
  return cursus_producer_send_consumer_offsets_async(p, c, cursus_go_completion, (void *)handle, err);
}

// Listeners (see listeners.go): user_data is a listener id of the package's
// registry (an integer), 0 clears the listener.
static void cursus_go_rebalance(void *user_data, const cursus_rebalance_event_t *event) {
  in_go_callback++;
  cursusGoRebalance((uintptr_t)user_data, (cursus_rebalance_event_t *)event);
  in_go_callback--;
}

static void cursus_go_statistics(void *user_data, const cursus_statistics_t *stats) {
  in_go_callback++;
  cursusGoStatistics((uintptr_t)user_data, (cursus_statistics_t *)stats);
  in_go_callback--;
}

static void cursus_go_error(void *user_data, const cursus_error_t *error) {
  in_go_callback++;
  cursusGoError((uintptr_t)user_data, (cursus_error_t *)error);
  in_go_callback--;
}

static void cursus_go_log(void *user_data, const cursus_log_record_t *record) {
  (void)user_data;
  cursusGoLog((cursus_log_record_t *)record);
}

cursus_status_t cursus_go_set_rebalance(cursus_consumer_t *c, uintptr_t id, bool has_lost, cursus_error_t **err) {
  return cursus_consumer_set_rebalance_listener(c, id ? cursus_go_rebalance : NULL, (void *)id, has_lost, err);
}

cursus_status_t cursus_go_producer_set_statistics(cursus_producer_t *p, int64_t interval_ms, uintptr_t id,
                                                  cursus_error_t **err) {
  return cursus_producer_set_statistics_listener(p, interval_ms, id ? cursus_go_statistics : NULL, (void *)id, err);
}

cursus_status_t cursus_go_consumer_set_statistics(cursus_consumer_t *c, int64_t interval_ms, uintptr_t id,
                                                  cursus_error_t **err) {
  return cursus_consumer_set_statistics_listener(c, interval_ms, id ? cursus_go_statistics : NULL, (void *)id, err);
}

cursus_status_t cursus_go_producer_set_errors(cursus_producer_t *p, uintptr_t id, cursus_error_t **err) {
  return cursus_producer_set_error_listener(p, id ? cursus_go_error : NULL, (void *)id, err);
}

cursus_status_t cursus_go_consumer_set_errors(cursus_consumer_t *c, uintptr_t id, cursus_error_t **err) {
  return cursus_consumer_set_error_listener(c, id ? cursus_go_error : NULL, (void *)id, err);
}

cursus_status_t cursus_go_log_set(const char *level, int on, cursus_error_t **err) {
  return cursus_log_set_listener(level, on ? cursus_go_log : NULL, NULL, err);
}

// A batch send (see batch.go): one callback per batch, the delivery batch
// lent for the call.
static void cursus_go_delivery_batch(void *user_data, cursus_status_t status, cursus_delivery_batch_t *batch,
                                     const cursus_error_t *error) {
  in_go_callback++;
  cursusGoDeliveryBatch((uintptr_t)user_data, status, batch, (cursus_error_t *)error);
  in_go_callback--;
}

cursus_status_t cursus_go_send_batch(cursus_producer_t *p, const char *topic, const uint8_t *packed,
                                     size_t packed_len, int traced, uintptr_t handle, cursus_error_t **err) {
  // traced: the traced layout (records with metadata or a trace context).
  // Handle 0 (never a slot of handles.go): no callback; the library drops the outcomes.
  return (traced ? cursus_producer_send_batch_traced : cursus_producer_send_batch)(
      p, topic, packed, packed_len, handle ? cursus_go_delivery_batch : NULL, (void *)handle, err);
}
