/* The batch send: one call for many records, one callback per batch. */
#include "test_util.h"

#include <stdint.h>

/* Appends little-endian integers and bytes to a packed batch. */
static size_t put32(uint8_t *b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + i] = (uint8_t)(v >> (8 * i));
  return at + 4;
}
static size_t put64(uint8_t *b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; i++) b[at + i] = (uint8_t)(v >> (8 * i));
  return at + 8;
}
/* One record of another topic (NULL: the batch's): partition (-1 any), no
 * timestamp, key (NULL: none), value. */
static size_t put_record_of(uint8_t *b, size_t at, const char *topic, int32_t partition,
                            const char *key, const char *value) {
  if (topic == NULL) {
    at = put32(b, at, UINT32_MAX); /* -1: the batch's topic */
  } else {
    at = put32(b, at, (uint32_t)strlen(topic));
    memcpy(b + at, topic, strlen(topic));
    at += strlen(topic);
  }
  at = put32(b, at, (uint32_t)partition);
  at = put64(b, at, (uint64_t)CURSUS_NO_TIMESTAMP);
  if (key == NULL) {
    at = put32(b, at, UINT32_MAX); /* -1: no key */
  } else {
    at = put32(b, at, (uint32_t)strlen(key));
    memcpy(b + at, key, strlen(key));
    at += strlen(key);
  }
  at = put32(b, at, (uint32_t)strlen(value));
  memcpy(b + at, value, strlen(value));
  return at + strlen(value);
}
/* One record of the batch's topic. */
static size_t put_record(uint8_t *b, size_t at, int32_t partition, const char *key,
                         const char *value) {
  return put_record_of(b, at, NULL, partition, key, value);
}

struct seen {
  int calls;
  size_t count;
  cursus_status_t status[8];
  int32_t partition[8];
  int64_t offset[8];
  cursus_status_t checked;
  char code[64];
  uint32_t packed_count;
  int32_t packed_status2;
  int64_t packed_offset3;
  char topic[64];
};

static void on_batch(void *user_data, cursus_status_t status, cursus_delivery_batch_t *batch,
                     const cursus_error_t *error) {
  struct seen *s = user_data;
  (void)error;
  s->calls++;
  if (status != CURSUS_OK) return;
  s->count = cursus_delivery_batch_count(batch);
  snprintf(s->topic, sizeof s->topic, "%s", cursus_delivery_batch_topic(batch));
  for (size_t i = 0; i < s->count && i < 8; i++) {
    s->status[i] = cursus_delivery_batch_status(batch, i);
    s->partition[i] = cursus_delivery_batch_partition(batch, i);
    s->offset[i] = cursus_delivery_batch_offset(batch, i);
  }
  cursus_error_t *e = NULL;
  s->checked = cursus_delivery_batch_check(batch, 2, &e);
  if (e) snprintf(s->code, sizeof s->code, "%s", cursus_error_code(e));
  cursus_error_destroy(e);
  size_t len = 0;
  const uint8_t *p = cursus_delivery_batch_packed(batch, &len);
  if (s->count == 5 && len == 4 + 24 * s->count) {
    memcpy(&s->packed_count, p, 4);
    memcpy(&s->packed_status2, p + 4 + 2 * 24, 4);
    memcpy(&s->packed_offset3, p + 4 + 3 * 24 + 8, 8);
  }
}

void test_send_batch_reports_each_record_once_per_batch(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-send-batch");
  cursus_config_t *c = config_for("producer", NULL);
  cursus_producer_t *producer = NULL;
  cursus_error_t *err = NULL;
  struct seen seen;
  memset(&seen, 0, sizeof seen);
  uint8_t packed[512];
  size_t at = put32(packed, 0, 5);
  at = put_record(packed, at, 0, "k0", "v0");
  at = put_record(packed, at, 0, NULL, "v1");
  at = put_record(packed, at, 7, NULL, "bad"); /* partition 7 does not exist */
  at = put_record(packed, at, 0, "k3", "v3");
  at = put_record(packed, at, -1, NULL, "v4");
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(c, &producer, &err));
  CHECK_OK(cursus_producer_send_batch(producer, topic, packed, at, on_batch, &seen, &err));
  CHECK_OK(cursus_producer_flush(producer, CURSUS_DEFAULT_TIMEOUT, &err));
  /* flush waited for the one callback of the batch. */
  CHECK(seen.calls == 1);
  CHECK(seen.count == 5);
  CHECK(strcmp(seen.topic, topic) == 0);
  int64_t expected = 0;
  for (size_t i = 0; i < 5; i++) {
    if (i == 2) continue;
    CHECK(seen.status[i] == CURSUS_OK);
    CHECK(seen.partition[i] == 0);
    CHECK(seen.offset[i] == expected++);
  }
  CHECK(seen.status[2] == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(seen.partition[2] == -1 && seen.offset[2] == -1);
  CHECK(seen.checked == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(seen.code[0] != '\0');
  CHECK(seen.packed_count == 5);
  CHECK(seen.packed_status2 == (int32_t)CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(seen.packed_offset3 == 2);

  /* A malformed buffer fails the call; the callback is never called. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_producer_send_batch(producer, topic, packed, at - 1, on_batch, &seen, &err),
              &err);
  /* One topic per batch: the library's rule and error. */
  {
    size_t mixed = put32(packed, 0, 2);
    mixed = put_record_of(packed, mixed, topic, 0, NULL, "a");
    mixed = put_record_of(packed, mixed, "other", 0, NULL, "b");
    char want[160];
    snprintf(want, sizeof want, "a batch has one topic: record 1 is for \"other\", the batch for \"%s\"",
             topic);
    seen.calls = 0;
    CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
                cursus_producer_send_batch(producer, topic, packed, mixed, on_batch, &seen, &err), &err);
    CHECK(strcmp(cursus_error_code(err), "invalid_argument") == 0);
    CHECK(cursus_error_class(err) == CURSUS_CLASS_VALIDATION);
    CHECK(strcmp(cursus_error_message(err), want) == 0);
    CHECK(seen.calls == 0);
  }
  /* An empty batch is one callback with no records. */
  seen.calls = 0;
  seen.count = 99;
  CHECK_OK(cursus_producer_send_batch(producer, topic, (const uint8_t *)"\0\0\0\0", 4, on_batch,
                                      &seen, &err));
  CHECK_OK(cursus_producer_flush(producer, CURSUS_DEFAULT_TIMEOUT, &err));
  CHECK(seen.calls == 1 && seen.count == 0);
done:
  cursus_error_destroy(err);
  if (producer) cursus_producer_close(producer, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(producer);
  cursus_config_destroy(c);
}
