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

/* The traced layout's three fields after a record (NULL: -1, none). */
static size_t put_traced(uint8_t *b, size_t at, const char *metadata, const char *traceparent,
                         const char *tracestate) {
  const char *fields[] = {metadata, traceparent, tracestate};
  for (int i = 0; i < 3; i++) {
    if (fields[i] == NULL) {
      at = put32(b, at, UINT32_MAX);
      continue;
    }
    at = put32(b, at, (uint32_t)strlen(fields[i]));
    memcpy(b + at, fields[i], strlen(fields[i]));
    at += strlen(fields[i]);
  }
  return at;
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

void test_send_batch_traced_carries_metadata_and_context(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-batch-trace");
  unique_name(group, sizeof group, "c-batch-trace-group");
  cursus_config_t *pc = config_for("producer", NULL), *cc = config_for("consumer", group);
  set_option(cc, "auto_offset_reset", "earliest");
  cursus_producer_t *p = NULL;
  cursus_consumer_t *c = NULL;
  cursus_message_t *m = NULL;
  cursus_error_t *e = NULL;
  struct seen seen;
  memset(&seen, 0, sizeof seen);
  const char *topics[] = {topic};
  uint8_t packed[1024];
  size_t at = put32(packed, 0, 3);
  at = put_traced(packed, put_record(packed, at, 0, "k", "a"), "{\"app\":1}", TRACE_PARENT, "congo=t61rcWkgMzE");
  at = put_traced(packed, put_record(packed, at, 0, NULL, "b"), "{\"app\":2}", NULL, NULL);
  at = put_traced(packed, put_record(packed, at, 0, NULL, "c"), NULL, NULL, NULL);
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(pc, &p, &err));
  CHECK_OK(cursus_producer_send_batch_traced(p, topic, packed, at, on_batch, &seen, &err));
  CHECK_OK(cursus_producer_flush(p, CURSUS_DEFAULT_TIMEOUT, &err));
  CHECK(seen.calls == 1 && seen.count == 3);
  CHECK(seen.status[0] == CURSUS_OK && seen.offset[0] == 0 && seen.offset[2] == 2);

  /* A malformed context fails the whole batch, naming the record; nothing is sent. */
  {
    size_t bad = put32(packed, 0, 2);
    bad = put_traced(packed, put_record(packed, bad, 0, NULL, "x"), NULL, TRACE_PARENT, NULL);
    bad = put_traced(packed, put_record(packed, bad, 0, NULL, "y"), NULL, "00-not-a-context", NULL);
    seen.calls = 0;
    CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
                cursus_producer_send_batch_traced(p, topic, packed, bad, on_batch, &seen, &e), &e);
    CHECK(str_is(cursus_error_code(e), "invalid_trace_context"));
    CHECK(cursus_error_class(e) == CURSUS_CLASS_VALIDATION);
    CHECK(str_is(cursus_error_field(e, "record"), "1"));
    /* The plain layout given to the traced call: a malformed buffer, named by its byte. */
    size_t plain = put_record(packed, put32(packed, 0, 1), 0, NULL, "z");
    CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
                cursus_producer_send_batch_traced(p, topic, packed, plain, on_batch, &seen, &e), &e);
    CHECK(strstr(cursus_error_message(e), "at byte") != NULL);
    CHECK(seen.calls == 0);
  }

  CHECK_OK(cursus_consumer_new(cc, &c, &err));
  CHECK_OK(cursus_consumer_subscribe(c, topics, 1, &err));
  CHECK((m = next_message(c)) != NULL);
  CHECK(str_is(cursus_message_traceparent(m), TRACE_PARENT));
  CHECK(str_is(cursus_message_tracestate(m), "congo=t61rcWkgMzE"));
  /* The application's JSON metadata kept, the context in front of it. */
  CHECK(strstr(cursus_message_metadata(m), "\"app\":1}") != NULL);
  cursus_message_destroy(m);
  CHECK((m = next_message(c)) != NULL);
  CHECK(str_is(cursus_message_metadata(m), "{\"app\":2}") && cursus_message_traceparent(m) == NULL);
  cursus_message_destroy(m);
  CHECK((m = next_message(c)) != NULL);
  CHECK(cursus_message_metadata(m) == NULL && cursus_message_traceparent(m) == NULL);
  CHECK(cursus_message_offset(m) == 2);
done:
  cursus_message_destroy(m);
  cursus_error_destroy(e);
  if (c) cursus_consumer_close(c, NULL);
  cursus_consumer_destroy(c);
  if (p) cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(p);
  cursus_config_destroy(pc);
  cursus_config_destroy(cc);
}
