// C side of the Go callbacks: user_data carries a runtime/cgo.Handle value
// (an integer), never a Go pointer.
#include "cursus.h"
#include "_cgo_export.h"

static void cursus_go_delivery(void *user_data, const cursus_delivery_report_t *report) {
  cursusGoDelivery((uintptr_t)user_data, (cursus_delivery_report_t *)report);
}

cursus_status_t cursus_go_send(cursus_producer_t *p, const char *topic, int32_t partition, const uint8_t *key,
                               size_t key_len, const uint8_t *payload, size_t payload_len, int64_t timestamp,
                               uintptr_t handle, cursus_error_t **err) {
  return cursus_producer_send_cb(p, topic, partition, key, key_len, payload, payload_len, timestamp,
                                 cursus_go_delivery, (void *)handle, err);
}

static void cursus_go_completion(void *user_data, cursus_status_t status, const cursus_error_t *error) {
  cursusGoCompletion((uintptr_t)user_data, status, (cursus_error_t *)error);
}

cursus_status_t cursus_go_commit_async(cursus_consumer_t *c, uintptr_t handle, cursus_error_t **err) {
  return cursus_consumer_commit_async(c, cursus_go_completion, (void *)handle, err);
}
