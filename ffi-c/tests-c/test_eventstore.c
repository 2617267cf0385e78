/* C tests of the event store (docs/event-sourcing.md) against a real
 * broker: appends read back with every field, version conflicts with their
 * fields, snapshots, paged stream/history/browse reads through cursors, the
 * aggregate cycle, a topic without event sourcing, and bad arguments. */
#include "test_util.h"

#include <inttypes.h>
#include <pthread.h>

/* An event store client on the test broker; NULL (reported) on failure. */
static cursus_event_store_t *es_open(void) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_event_store_t *store = NULL;
  cursus_error_t *err = NULL;
  if (!ok_(cursus_event_store_new(c, &store, &err), err, "event_store_new", __LINE__)) store = NULL;
  cursus_config_destroy(c);
  return store;
}

static void es_free(cursus_event_store_t *store) {
  if (store) cursus_event_store_close(store, NULL);
  cursus_event_store_destroy(store);
}

/* Creates an event-sourcing topic; 1 on success. */
static int create_es_topic(const char *topic, const char *partitions) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_admin_t *admin = NULL;
  cursus_topic_info_t *info = NULL;
  cursus_error_t *err = NULL;
  const char *keys[] = {"partitions", "event_sourcing"};
  const char *values[] = {partitions, "true"};
  int good = ok_(cursus_admin_new(c, &admin, &err), err, "admin_new", __LINE__) &&
             ok_(cursus_admin_create_topic_with(admin, topic, keys, values, 2, &info, &err), err, "create_topic_with",
                 __LINE__) &&
             cursus_topic_info_event_sourcing(info);
  cursus_topic_info_destroy(info);
  if (admin) cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
  return good;
}

/* Appends one event of type `type`; returns the version it got (0 on failure, reported). */
static uint64_t append(cursus_event_store_t *store, const char *topic, const char *key, uint64_t expected,
                       const char *type, const char *payload) {
  cursus_appended_t *a = NULL;
  cursus_error_t *err = NULL;
  uint64_t version = 0;
  if (ok_(cursus_event_store_append(store, topic, key, expected, type, payload, NULL, 0, &a, &err), err, "append",
          __LINE__))
    version = cursus_appended_version(a);
  cursus_appended_destroy(a);
  return version;
}

/* Appends through the aggregate with `id` (NULL: generated); the stored event's version (0 on failure, left in
 * *err) and, when `offset` is not NULL, its offset. */
static uint64_t agg_append(cursus_event_store_t *store, cursus_aggregate_t *agg, const char *type, const char *payload,
                           const char *metadata, uint32_t schema, const char *id, int64_t *offset,
                           cursus_error_t **err) {
  cursus_event_page_t *stored = NULL;
  uint64_t version = 0;
  if (cursus_event_store_aggregate_append(store, agg, type, payload, metadata, schema, id, &stored, err) ==
      CURSUS_OK) {
    version = cursus_event_page_version(stored, 0);
    if (offset) *offset = cursus_event_page_offset(stored, 0);
  }
  cursus_event_page_destroy(stored);
  return version;
}

/* Payload of event `i` of `page` equals `want`. */
static int payload_is(const cursus_event_page_t *page, size_t i, const char *want) {
  size_t n = 0;
  const uint8_t *p = cursus_event_page_payload(page, i, &n);
  return n == strlen(want) && memcmp(p, want, n) == 0;
}

static int key_is(const cursus_event_page_t *page, size_t i, const char *want) {
  size_t n = 0;
  const uint8_t *p = cursus_event_page_key(page, i, &n);
  return n == strlen(want) && memcmp(p, want, n) == 0;
}

void test_es_append_and_read_back(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-read");
  cursus_event_store_t *store = es_open();
  cursus_appended_t *first = NULL, *second = NULL;
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL, *end = NULL;
  cursus_snapshot_t *snap = NULL;
  cursus_error_t *err = NULL;
  uint64_t version = 99;
  CHECK(store != NULL);
  CHECK(create_es_topic(topic, "3"));
  CHECK_OK(cursus_event_store_stream_version(store, topic, "order-1", &version, &err));
  CHECK(version == 0);
  CHECK_OK(cursus_event_store_append(store, topic, "order-1", 0, "Created", "{\"id\":1}", "{\"by\":\"alice\"}", 2,
                                     &first, &err));
  CHECK(cursus_appended_version(first) == 1);
  CHECK(cursus_appended_partition(first) < 3);
  CHECK_OK(cursus_event_store_append(store, topic, "order-1", 1, "Paid", "paid 10 \xe2\x82\xac", NULL, 0, &second, &err));
  CHECK(cursus_appended_version(second) == 2);
  CHECK(cursus_appended_partition(second) == cursus_appended_partition(first));
  CHECK(cursus_appended_offset(second) > cursus_appended_offset(first));
  CHECK_OK(cursus_event_store_stream_version(store, topic, "order-1", &version, &err));
  CHECK(version == 2);

  CHECK_OK(cursus_event_cursor_stream(topic, "order-1", 1, 0, 0, &cursor, &err));
  CHECK(!cursus_event_cursor_done(cursor));
  CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
  CHECK(page != NULL);
  CHECK(cursus_event_page_count(page) == 2);
  CHECK(!cursus_event_page_has_more(page));
  CHECK(cursus_event_page_partition(page) == cursus_appended_partition(first));
  CHECK_OK(cursus_event_page_snapshot(page, &snap, &err));
  CHECK(snap == NULL);
  /* Every field of the first event. */
  CHECK(cursus_event_page_version(page, 0) == 1);
  CHECK(cursus_event_page_offset(page, 0) == (int64_t)cursus_appended_offset(first));
  CHECK(key_is(page, 0, "order-1"));
  CHECK(strcmp(cursus_event_page_event_type(page, 0), "Created") == 0);
  CHECK(cursus_event_page_schema_version(page, 0) == 2);
  CHECK(strcmp(cursus_event_page_metadata(page, 0), "{\"by\":\"alice\"}") == 0);
  CHECK(payload_is(page, 0, "{\"id\":1}"));
  CHECK(cursus_event_page_timestamp(page, 0) > 0);
  /* The second: no metadata, the default schema version, UTF-8 text. */
  CHECK(cursus_event_page_version(page, 1) == 2);
  CHECK(strcmp(cursus_event_page_event_type(page, 1), "Paid") == 0);
  CHECK(cursus_event_page_schema_version(page, 1) == 1);
  CHECK(strcmp(cursus_event_page_metadata(page, 1), "") == 0);
  CHECK(payload_is(page, 1, "paid 10 \xe2\x82\xac"));
  /* Out of range: the documented fallbacks. */
  CHECK(cursus_event_page_version(page, 2) == 0);
  CHECK(cursus_event_page_offset(page, 2) == -1);
  CHECK(strcmp(cursus_event_page_event_type(page, 2), "") == 0);
  /* Stream pages carry no history or browse information. */
  CHECK(strcmp(cursus_event_page_completeness(page), "") == 0);
  CHECK(cursus_event_page_head_version(page) == 0);
  CHECK(cursus_event_page_readable_end_offset(page) == -1);
  /* Done: the next call gives no page. */
  CHECK(cursus_event_cursor_done(cursor));
  CHECK_OK(cursus_event_store_next_page(store, cursor, &end, &err));
  CHECK(end == NULL);
done:
  cursus_error_destroy(err);
  cursus_snapshot_destroy(snap);
  cursus_event_page_destroy(page);
  cursus_event_page_destroy(end);
  cursus_event_cursor_destroy(cursor);
  cursus_appended_destroy(first);
  cursus_appended_destroy(second);
  es_free(store);
}

void test_es_version_conflict_has_fields(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-conflict");
  cursus_event_store_t *store = es_open(), *other = es_open();
  cursus_aggregate_t *agg = NULL;
  cursus_error_t *err = NULL;
  uint64_t version = 0;
  CHECK(store != NULL && other != NULL);
  CHECK(create_es_topic(topic, "1"));
  CHECK(append(store, topic, "acct", 0, "Opened", "open") == 1);
  CHECK(append(store, topic, "acct", 1, "Deposited", "first writer") == 2);
  /* A second writer that also saw version 1. */
  CHECK_FAILS(CURSUS_ERR_CONFLICT,
              cursus_event_store_append(other, topic, "acct", 1, "Deposited", "second writer", NULL, 0, NULL, &err),
              &err);
  CHECK(strcmp(cursus_error_code(err), "version_conflict") == 0);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_CONFLICT);
  CHECK(!cursus_error_retryable(err));
  CHECK(cursus_error_field(err, "current") != NULL);
  CHECK(strcmp(cursus_error_field(err, "current"), "2") == 0);
  CHECK(cursus_error_field(err, "expected") != NULL);
  /* Through the aggregate cycle too: loaded at 2, someone appends 3. */
  CHECK_OK(cursus_event_store_load_aggregate(other, topic, "acct", 0, &agg, &err));
  CHECK(cursus_aggregate_version(agg) == 2);
  CHECK(append(store, topic, "acct", 2, "Withdrawn", "meanwhile") == 3);
  cursus_error_destroy(err);
  err = NULL;
  CHECK(agg_append(other, agg, "Deposited", "late", NULL, 0, NULL, NULL, &err) == 0);
  CHECK(cursus_error_status(err) == CURSUS_ERR_CONFLICT);
  CHECK(strcmp(cursus_error_code(err), "version_conflict") == 0);
  CHECK(strcmp(cursus_error_field(err, "current"), "3") == 0);
  CHECK(cursus_aggregate_version(agg) == 2); /* unchanged: reload and decide again */
  cursus_aggregate_destroy(agg);
  agg = NULL;
  CHECK_OK(cursus_event_store_load_aggregate(other, topic, "acct", 0, &agg, &err));
  version = agg_append(other, agg, "Deposited", "retried", NULL, 0, NULL, NULL, &err);
  CHECK(version == 4 && cursus_aggregate_version(agg) == 4);
done:
  cursus_error_destroy(err);
  cursus_aggregate_destroy(agg);
  es_free(store);
  es_free(other);
}

void test_es_snapshots_and_stream_after_one(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-snap");
  cursus_event_store_t *store = es_open();
  cursus_snapshot_t *snap = NULL, *first = NULL;
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL;
  cursus_error_t *err = NULL;
  CHECK(store != NULL);
  CHECK(create_es_topic(topic, "3"));
  CHECK_OK(cursus_event_store_read_snapshot(store, topic, "cart", &snap, &err));
  CHECK(snap == NULL);
  for (uint64_t v = 0; v < 5; v++) {
    char payload[16];
    snprintf(payload, sizeof payload, "item-%" PRIu64, v + 1);
    CHECK(append(store, topic, "cart", v, "Added", payload) == v + 1);
  }
  CHECK_FAILS(CURSUS_ERR_CONFLICT, cursus_event_store_save_snapshot(store, topic, "cart", 9, "too far", &err), &err);
  CHECK(strcmp(cursus_error_code(err), "snapshot_version_exceeds_stream") == 0);
  CHECK_OK(cursus_event_store_save_snapshot(store, topic, "cart", 3, "items=3", &err));
  CHECK_OK(cursus_event_store_read_snapshot(store, topic, "cart", &snap, &err));
  CHECK(snap != NULL);
  CHECK(cursus_snapshot_version(snap) == 3);
  CHECK(strcmp(cursus_snapshot_state(snap), "items=3") == 0);
  /* A read from 1 starts at the snapshot; the events follow it. */
  CHECK_OK(cursus_event_cursor_stream(topic, "cart", 1, 0, 0, &cursor, &err));
  CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
  CHECK(page != NULL);
  CHECK_OK(cursus_event_page_snapshot(page, &first, &err));
  CHECK(first != NULL && cursus_snapshot_version(first) == 3);
  CHECK(strcmp(cursus_snapshot_state(first), "items=3") == 0);
  CHECK(cursus_event_page_count(page) == 2);
  CHECK(cursus_event_page_version(page, 0) == 4 && payload_is(page, 0, "item-4"));
  CHECK(cursus_event_page_version(page, 1) == 5 && payload_is(page, 1, "item-5"));
  cursus_snapshot_destroy(first);
  first = NULL;
  cursus_event_page_destroy(page);
  page = NULL;
  cursus_event_cursor_destroy(cursor);
  cursor = NULL;
  /* From after the snapshot: no snapshot, the events from there. */
  CHECK_OK(cursus_event_cursor_stream(topic, "cart", 5, 0, 0, &cursor, &err));
  CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
  CHECK(page != NULL);
  CHECK_OK(cursus_event_page_snapshot(page, &first, &err));
  CHECK(first == NULL);
  CHECK(cursus_event_page_count(page) == 1 && cursus_event_page_version(page, 0) == 5);
  /* A later snapshot replaces the earlier one. */
  CHECK_OK(cursus_event_store_save_snapshot(store, topic, "cart", 5, "items=5", &err));
  cursus_snapshot_destroy(snap);
  snap = NULL;
  CHECK_OK(cursus_event_store_read_snapshot(store, topic, "cart", &snap, &err));
  CHECK(snap != NULL && cursus_snapshot_version(snap) == 5 && strcmp(cursus_snapshot_state(snap), "items=5") == 0);
done:
  cursus_error_destroy(err);
  cursus_snapshot_destroy(snap);
  cursus_snapshot_destroy(first);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  es_free(store);
}

void test_es_stream_cursor_pages(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-pages");
  cursus_event_store_t *store = es_open();
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL;
  cursus_error_t *err = NULL;
  uint64_t versions[8];
  size_t seen = 0, pages = 0;
  CHECK(store != NULL);
  CHECK(create_es_topic(topic, "2"));
  for (uint64_t v = 0; v < 5; v++) CHECK(append(store, topic, "k", v, "E", "e") == v + 1);
  /* Two events a page: 2 + 2 + 1, has_more on all but the last. */
  CHECK_OK(cursus_event_cursor_stream(topic, "k", 1, 2, 0, &cursor, &err));
  while (!cursus_event_cursor_done(cursor)) {
    CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
    CHECK(page != NULL);
    pages++;
    size_t n = cursus_event_page_count(page);
    CHECK(n == (pages < 3 ? 2u : 1u));
    CHECK(cursus_event_page_has_more(page) == (pages < 3));
    for (size_t i = 0; i < n && seen < 8; i++) versions[seen++] = cursus_event_page_version(page, i);
    cursus_event_page_destroy(page);
    page = NULL;
    CHECK(pages <= 3);
  }
  CHECK(pages == 3 && seen == 5);
  for (size_t i = 0; i < seen; i++) CHECK(versions[i] == i + 1);
done:
  cursus_error_destroy(err);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  es_free(store);
}

void test_es_history_pages_and_completeness(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-history");
  cursus_event_store_t *store = es_open();
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL;
  cursus_error_t *err = NULL;
  size_t pages = 0, seen = 0;
  CHECK(store != NULL);
  CHECK(create_es_topic(topic, "3"));
  for (uint64_t v = 0; v < 6; v++) CHECK(append(store, topic, "h", v, "E", "e") == v + 1);
  CHECK_OK(cursus_event_store_save_snapshot(store, topic, "h", 4, "s4", &err));
  /* The original events, no snapshot, four a page. */
  CHECK_OK(cursus_event_cursor_history(topic, "h", 1, 0, 4, 0, &cursor, &err));
  while (!cursus_event_cursor_done(cursor)) {
    cursus_snapshot_t *snap = NULL;
    CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
    CHECK(page != NULL);
    pages++;
    CHECK_OK(cursus_event_page_snapshot(page, &snap, &err));
    CHECK(snap == NULL);
    CHECK(strcmp(cursus_event_page_completeness(page), "complete") == 0);
    CHECK(cursus_event_page_head_version(page) == 6);
    for (size_t i = 0, n = cursus_event_page_count(page); i < n; i++)
      CHECK(cursus_event_page_version(page, i) == ++seen);
    cursus_event_page_destroy(page);
    page = NULL;
    CHECK(pages <= 2);
  }
  CHECK(pages == 2 && seen == 6);
  cursus_event_cursor_destroy(cursor);
  cursor = NULL;
  /* A range. */
  CHECK_OK(cursus_event_cursor_history(topic, "h", 2, 3, 0, 0, &cursor, &err));
  CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
  CHECK(page != NULL && cursus_event_page_count(page) == 2);
  CHECK(cursus_event_page_version(page, 0) == 2 && cursus_event_page_version(page, 1) == 3);
  CHECK(cursus_event_cursor_done(cursor));
  cursus_event_page_destroy(page);
  page = NULL;
  cursus_event_cursor_destroy(cursor);
  cursor = NULL;
  /* A missing aggregate: complete and empty. */
  CHECK_OK(cursus_event_cursor_history(topic, "nobody", 1, 0, 0, 0, &cursor, &err));
  CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
  CHECK(page != NULL && cursus_event_page_count(page) == 0);
  CHECK(strcmp(cursus_event_page_completeness(page), "complete") == 0);
  CHECK(cursus_event_page_head_version(page) == 0);
done:
  cursus_error_destroy(err);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  es_free(store);
}

void test_es_browse_pages(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-browse");
  cursus_event_store_t *store = es_open();
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL;
  cursus_error_t *err = NULL;
  size_t pages = 0, seen = 0;
  CHECK(store != NULL);
  /* Any topic may be browsed: a plain one, records sent by a producer. */
  CHECK(create_topic(topic, 1));
  CHECK(produce_values(topic, 0, 25));
  CHECK_OK(cursus_event_cursor_browse(topic, 0, 0, -1, 10, 0, &cursor, &err));
  while (!cursus_event_cursor_done(cursor)) {
    CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
    CHECK(page != NULL);
    pages++;
    CHECK(cursus_event_page_readable_end_offset(page) == 25);
    CHECK(cursus_event_page_has_more(page) == (pages < 3));
    for (size_t i = 0, n = cursus_event_page_count(page); i < n; i++, seen++) {
      char want[16];
      snprintf(want, sizeof want, "v%zu", seen);
      CHECK(cursus_event_page_offset(page, i) == (int64_t)seen);
      CHECK(payload_is(page, i, want));
      CHECK(cursus_event_page_version(page, i) == 0); /* not an event */
    }
    cursus_event_page_destroy(page);
    page = NULL;
    CHECK(pages <= 3);
  }
  CHECK(pages == 3 && seen == 25);
  cursus_event_cursor_destroy(cursor);
  cursor = NULL;
  /* [5, 12), four a page. */
  pages = seen = 0;
  CHECK_OK(cursus_event_cursor_browse(topic, 0, 5, 12, 4, 0, &cursor, &err));
  while (!cursus_event_cursor_done(cursor)) {
    CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
    CHECK(page != NULL);
    pages++;
    for (size_t i = 0, n = cursus_event_page_count(page); i < n; i++, seen++)
      CHECK(cursus_event_page_offset(page, i) == (int64_t)(5 + seen));
    cursus_event_page_destroy(page);
    page = NULL;
    CHECK(pages <= 2);
  }
  CHECK(pages == 2 && seen == 7);
done:
  cursus_error_destroy(err);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  es_free(store);
}

/* Loads aggregate `key` as a counter (the snapshot's number plus one per
 * event after it); returns the state, or -1 on failure (reported). */
static long long load_counter(cursus_event_store_t *store, const char *topic, const char *key, uint64_t every,
                              cursus_aggregate_t **agg, uint64_t *snapshot_version, size_t *events) {
  cursus_event_page_t *loaded = NULL;
  cursus_snapshot_t *snap = NULL;
  cursus_error_t *err = NULL;
  long long state = -1;
  *snapshot_version = 0;
  if (!ok_(cursus_event_store_load_aggregate(store, topic, key, every, agg, &err), err, "load_aggregate", __LINE__) ||
      !ok_(cursus_aggregate_loaded(*agg, &loaded, &err), err, "aggregate_loaded", __LINE__) ||
      !ok_(cursus_event_page_snapshot(loaded, &snap, &err), err, "page_snapshot", __LINE__))
    goto out;
  state = 0;
  if (snap) {
    *snapshot_version = cursus_snapshot_version(snap);
    state = atoll(cursus_snapshot_state(snap));
  }
  *events = cursus_event_page_count(loaded);
  for (size_t i = 0; i < *events; i++)
    if (cursus_event_page_version(loaded, i) != *snapshot_version + i + 1) state = -1000000;
  state += (long long)*events;
out:
  cursus_snapshot_destroy(snap);
  cursus_event_page_destroy(loaded);
  return state;
}

void test_es_aggregate_cycle_with_snapshots(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-agg");
  cursus_event_store_t *store = es_open();
  cursus_aggregate_t *agg = NULL;
  cursus_snapshot_t *snap = NULL;
  cursus_error_t *err = NULL;
  uint64_t snapshot_version = 0, version = 0;
  size_t events = 0;
  int snapshots = 0;
  CHECK(store != NULL);
  CHECK(create_es_topic(topic, "3"));
  long long state = load_counter(store, topic, "counter", 3, &agg, &snapshot_version, &events);
  CHECK(state == 0 && snapshot_version == 0 && events == 0);
  CHECK(cursus_aggregate_version(agg) == 0 && !cursus_aggregate_snapshot_due(agg));
  for (int i = 0; i < 7; i++) {
    char payload[16], text[24];
    snprintf(payload, sizeof payload, "tick-%d", i);
    version = agg_append(store, agg, "Counted", payload, NULL, 0, NULL, NULL, &err);
    CHECK(version == (uint64_t)i + 1);
    state++;
    /* Due after every third event. */
    CHECK(cursus_aggregate_snapshot_due(agg) == ((i + 1) % 3 == 0));
    snprintf(text, sizeof text, "%lld", state);
    bool saved = false;
    CHECK_OK(cursus_event_store_aggregate_auto_snapshot(store, agg, text, &saved, &err));
    CHECK(!cursus_aggregate_snapshot_due(agg));
    if (saved) snapshots++;
  }
  CHECK(snapshots == 2 && cursus_aggregate_version(agg) == 7);
  CHECK_OK(cursus_event_store_read_snapshot(store, topic, "counter", &snap, &err));
  CHECK(snap != NULL && cursus_snapshot_version(snap) == 6 && strcmp(cursus_snapshot_state(snap), "6") == 0);
  cursus_aggregate_destroy(agg);
  agg = NULL;
  /* Reloading starts from the snapshot and replays only the event after it. */
  state = load_counter(store, topic, "counter", 3, &agg, &snapshot_version, &events);
  CHECK(state == 7 && snapshot_version == 6 && events == 1);
  CHECK(cursus_aggregate_version(agg) == 7 && !cursus_aggregate_snapshot_due(agg));
  version = agg_append(store, agg, "Counted", "more", "{\"trace\":1}", 3, NULL, NULL, &err);
  CHECK(version == 8);
done:
  cursus_error_destroy(err);
  cursus_snapshot_destroy(snap);
  cursus_aggregate_destroy(agg);
  es_free(store);
}

/* The aggregate append keeps a caller's event id and returns the stored event with its real offset; the library
 * refuses a bad id; a failed automatic snapshot is no error of the append and stays due. */
void test_es_aggregate_event_id_offset_and_snapshot_policy(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-agg-id");
  cursus_event_store_t *store = es_open();
  cursus_event_store_t *closed = es_open();
  cursus_error_t *err = NULL;
  cursus_aggregate_t *agg = NULL;
  cursus_event_page_t *page = NULL;
  cursus_event_cursor_t *cursor = NULL;
  int64_t offset = -2;
  bool saved = true;
  CHECK(store != NULL && closed != NULL);
  CHECK(create_es_topic(topic, "1"));
  CHECK(append(store, topic, "other", 0, "T", "first") == 1); /* offset 0 */
  CHECK_OK(cursus_event_store_load_aggregate(store, topic, "a", 1, &agg, &err));
  CHECK(agg_append(store, agg, "Opened", "x", NULL, 0, "caller-1", &offset, &err) == 1);
  CHECK(offset == 1); /* the real offset, after "other"'s event */
  CHECK(agg_append(store, agg, "Opened", "y", NULL, 0, "two words", NULL, &err) == 0);
  CHECK(cursus_error_status(err) == CURSUS_ERR_INVALID_ARGUMENT);
  cursus_error_destroy(err);
  err = NULL;
  CHECK(cursus_aggregate_version(agg) == 1);
  /* Due now (every 1): saving through a closed store fails, logged, not returned. */
  CHECK(cursus_aggregate_snapshot_due(agg));
  CHECK_OK(cursus_event_store_close(closed, &err));
  CHECK_OK(cursus_event_store_aggregate_auto_snapshot(closed, agg, "1", &saved, &err));
  CHECK(!saved && cursus_aggregate_snapshot_due(agg));
  CHECK_OK(cursus_aggregate_snapshot_failed(agg, "serialiser failed", &err));
  CHECK_OK(cursus_event_store_aggregate_auto_snapshot(store, agg, "1", &saved, &err));
  CHECK(saved && !cursus_aggregate_snapshot_due(agg));
  CHECK_OK(cursus_event_cursor_history(topic, "a", 1, 0, 0, 0, &cursor, &err)); /* no snapshot in the way */
  CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
  CHECK(page != NULL && cursus_event_page_count(page) == 1 && cursus_event_page_offset(page, 0) == 1);
done:
  cursus_error_destroy(err);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  cursus_aggregate_destroy(agg);
  es_free(store);
  es_free(closed);
}

void test_es_topic_without_event_sourcing(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-plain");
  cursus_event_store_t *store = es_open();
  cursus_error_t *err = NULL;
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL;
  uint64_t version = 0;
  CHECK(store != NULL);
  CHECK(create_topic(topic, 1));
  CHECK_FAILS(CURSUS_ERR_VALIDATION,
              cursus_event_store_append(store, topic, "a", 0, "X", "v", NULL, 0, NULL, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "event_sourcing_not_enabled") == 0);
  CHECK(cursus_error_field(err, "topic") && strcmp(cursus_error_field(err, "topic"), topic) == 0);
  CHECK_FAILS(CURSUS_ERR_VALIDATION, cursus_event_store_stream_version(store, topic, "a", &version, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "event_sourcing_not_enabled") == 0);
  /* A paged read fails the same way, and the cursor stays where it was. */
  CHECK_OK(cursus_event_cursor_stream(topic, "a", 1, 0, 0, &cursor, &err));
  CHECK_FAILS(CURSUS_ERR_VALIDATION, cursus_event_store_next_page(store, cursor, &page, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "event_sourcing_not_enabled") == 0);
  CHECK(page == NULL && !cursus_event_cursor_done(cursor));
done:
  cursus_error_destroy(err);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  es_free(store);
}

void test_es_bad_arguments(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-args");
  cursus_event_store_t *store = es_open(), *closed = es_open();
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL;
  cursus_appended_t *appended = NULL;
  cursus_error_t *err = NULL;
  uint64_t version = 0;
  CHECK(store != NULL && closed != NULL);
  CHECK(create_es_topic(topic, "1"));
  /* Keys are text without whitespace, never empty: refused before sending. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_event_store_append(store, topic, "a key", 0, "X", "v", NULL, 0, &appended, &err), &err);
  CHECK(appended == NULL);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_event_store_append(store, topic, "", 0, "X", "v", NULL, 0, &appended, &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_store_stream_version(store, topic, "tab\there", &version, &err),
              &err);
  /* NULL strings and handles. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_event_store_append(store, NULL, "k", 0, "X", "v", NULL, 0, &appended, &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_event_store_append(store, topic, "k", 0, "X", NULL, NULL, 0, &appended, &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_event_store_append(NULL, topic, "k", 0, "X", "v", NULL, 0, &appended, &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_store_next_page(store, NULL, &page, &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_cursor_stream(NULL, "k", 1, 0, 0, &cursor, &err), &err);
  /* A browse end below -1 is no offset. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_cursor_browse(topic, 0, 0, -5, 0, 0, &cursor, &err), &err);
  CHECK(cursor == NULL);
  /* The broker refuses version 0 as the start of a read. */
  CHECK_OK(cursus_event_cursor_stream(topic, "k", 0, 0, 0, &cursor, &err));
  CHECK_FAILS(CURSUS_ERR_VALIDATION, cursus_event_store_next_page(store, cursor, &page, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_from_version") == 0);
  /* Accessors of NULL handles give their fallbacks. */
  CHECK(cursus_appended_version(NULL) == 0);
  CHECK(cursus_snapshot_state(NULL) == NULL);
  CHECK(cursus_event_page_count(NULL) == 0);
  CHECK(cursus_event_page_offset(NULL, 0) == -1);
  CHECK(cursus_event_page_readable_end_offset(NULL) == -1);
  CHECK(cursus_aggregate_version(NULL) == 0 && !cursus_aggregate_snapshot_due(NULL));
  CHECK(!cursus_event_cursor_done(NULL));
  /* A destroyed cursor is an invalid argument, not a crash. */
  cursus_event_cursor_destroy(cursor);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_store_next_page(store, cursor, &page, &err), &err);
  cursor = NULL;
  /* A closed store. */
  CHECK_OK(cursus_event_store_close(closed, &err));
  CHECK_FAILS(CURSUS_ERR_CLOSED, cursus_event_store_stream_version(closed, topic, "k", &version, &err), &err);
done:
  cursus_error_destroy(err);
  cursus_appended_destroy(appended);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  es_free(store);
  es_free(closed);
}

/* What cursus_event_store_append_event_async's callback saw. */
struct async_append {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int calls;
  cursus_status_t status;
  uint64_t version;
  char code[64], current[32];
  pthread_t thread;
};

static void on_appended(void *user_data, cursus_status_t status, cursus_appended_t *result,
                        const cursus_error_t *error) {
  struct async_append *st = user_data;
  pthread_mutex_lock(&st->lock);
  st->calls++;
  st->thread = pthread_self();
  st->status = (status == CURSUS_OK) == (result != NULL && error == NULL) ? status : CURSUS_ERR_INTERNAL;
  st->version = result ? cursus_appended_version(result) : 0;
  snprintf(st->code, sizeof st->code, "%s", error ? cursus_error_code(error) : "");
  const char *current = error ? cursus_error_field(error, "current") : NULL;
  snprintf(st->current, sizeof st->current, "%s", current ? current : "");
  pthread_cond_broadcast(&st->cond);
  pthread_mutex_unlock(&st->lock);
}

/* Waits for the one callback of the append in flight; its status (and resets the count). */
static cursus_status_t wait_appended(struct async_append *st) {
  pthread_mutex_lock(&st->lock);
  while (st->calls == 0) pthread_cond_wait(&st->cond, &st->lock);
  cursus_status_t status = st->calls == 1 ? st->status : CURSUS_ERR_INTERNAL;
  st->calls = 0;
  pthread_mutex_unlock(&st->lock);
  return status;
}

/* The background append: the callback gets the appended event on a thread that is not the caller's, a conflict
 * with its fields, and a closed store fails the call without calling it. */
void test_es_append_event_async(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-es-async");
  cursus_event_store_t *store = es_open();
  cursus_event_builder_t *event = NULL;
  cursus_error_t *err = NULL;
  struct async_append st = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, CURSUS_OK, 0, "", "", 0};
  CHECK(store != NULL);
  CHECK(create_es_topic(topic, "1"));
  CHECK_OK(cursus_event_builder_new("Opened", "open", &event, &err));
  CHECK_OK(cursus_event_store_append_event_async(store, topic, "acct", 0, event, on_appended, &st, &err));
  CHECK(wait_appended(&st) == CURSUS_OK);
  CHECK(st.version == 1);
  CHECK(!pthread_equal(st.thread, pthread_self()));
  CHECK(append(store, topic, "acct", 1, "Deposited", "blocking") == 2);
  /* The builder was copied: reusing it at a stale version is a conflict, reported to the callback. */
  CHECK_OK(cursus_event_store_append_event_async(store, topic, "acct", 0, event, on_appended, &st, &err));
  CHECK(wait_appended(&st) == CURSUS_ERR_CONFLICT);
  CHECK(strcmp(st.code, "version_conflict") == 0);
  CHECK(strcmp(st.current, "2") == 0);
  CHECK_OK(cursus_event_store_close(store, &err));
  CHECK_FAILS(CURSUS_ERR_CLOSED,
              cursus_event_store_append_event_async(store, topic, "acct", 2, event, on_appended, &st, &err), &err);
  pthread_mutex_lock(&st.lock);
  CHECK(st.calls == 0);
  pthread_mutex_unlock(&st.lock);
done:
  cursus_error_destroy(err);
  cursus_event_builder_destroy(event);
  es_free(store);
}
