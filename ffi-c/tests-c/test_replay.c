/* C tests of event ids, aggregate replay proofs and range reads, and
 * transactional stream appends (docs/aggregate-replay.md) against a real
 * broker: the event builder, an exact retry on a replay topic answered
 * with the original offset, identity conflicts, complete and failed
 * proofs (the failed one read from the error), range reads, and
 * TXN_APPEND_STREAM committed, aborted and reserving its aggregate. */
#include "test_util.h"

#include <inttypes.h>

static cursus_event_store_t *store_open(void) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_event_store_t *store = NULL;
  cursus_error_t *err = NULL;
  if (!ok_(cursus_event_store_new(c, &store, &err), err, "event_store_new", __LINE__)) store = NULL;
  cursus_config_destroy(c);
  return store;
}

static void store_free(cursus_event_store_t *store) {
  if (store) cursus_event_store_close(store, NULL);
  cursus_event_store_destroy(store);
}

/* Creates an event-sourcing topic, an aggregate replay one when `replay`
 * (event_sourcing, idempotent and aggregate_replay); 1 on success. */
static int create_topic_for(const char *topic, int replay) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_admin_t *admin = NULL;
  cursus_topic_info_t *info = NULL;
  cursus_error_t *err = NULL;
  const char *keys[] = {"partitions", "event_sourcing", "idempotent", "aggregate_replay"};
  const char *values[] = {"2", "true", "true", "true"};
  int good = ok_(cursus_admin_new(c, &admin, &err), err, "admin_new", __LINE__) &&
             ok_(cursus_admin_create_topic_with(admin, topic, keys, values, replay ? 4 : 2, &info, &err), err,
                 "create_topic_with", __LINE__) &&
             cursus_topic_info_event_sourcing(info);
  cursus_topic_info_destroy(info);
  if (admin) cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
  return good;
}

/* An event of `type` carrying `payload` with id `id` (NULL: generated). */
static cursus_event_builder_t *event(const char *type, const char *payload, const char *id) {
  cursus_event_builder_t *ev = NULL;
  cursus_error_t *err = NULL;
  if (!ok_(cursus_event_builder_new(type, payload, &ev, &err), err, "event_builder_new", __LINE__)) return NULL;
  if (id && !ok_(cursus_event_builder_set_event_id(ev, id, &err), err, "set_event_id", __LINE__)) {
    cursus_event_builder_destroy(ev);
    return NULL;
  }
  return ev;
}

/* Appends an event with id `id`; the version it got (0 on failure, reported). */
static uint64_t append_id(cursus_event_store_t *store, const char *topic, const char *key, uint64_t expected,
                          const char *payload, const char *id) {
  cursus_event_builder_t *ev = event("Scored", payload, id);
  cursus_appended_t *a = NULL;
  cursus_error_t *err = NULL;
  uint64_t version = 0;
  if (ev && ok_(cursus_event_store_append_event(store, topic, key, expected, ev, &a, &err), err, "append_event",
                __LINE__))
    version = cursus_appended_version(a);
  cursus_appended_destroy(a);
  cursus_event_builder_destroy(ev);
  return version;
}

static uint64_t version_of(cursus_event_store_t *store, const char *topic, const char *key) {
  uint64_t v = 0;
  cursus_error_t *err = NULL;
  if (!ok_(cursus_event_store_stream_version(store, topic, key, &v, &err), err, "stream_version", __LINE__))
    return UINT64_MAX;
  return v;
}

static int code_is(const cursus_error_t *e, const char *code) {
  const char *got = cursus_error_code(e);
  if (got && strcmp(got, code) == 0) return 1;
  fprintf(stderr, "  error code %s, expected %s (%s)\n", got ? got : "(none)", code, cursus_error_text(e));
  return 0;
}

void test_replay_event_id_and_exact_retry(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-replay-retry");
  cursus_event_store_t *store = store_open();
  cursus_event_builder_t *ev = NULL;
  cursus_appended_t *first = NULL, *again = NULL;
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL;
  cursus_error_t *err = NULL;
  CHECK(store != NULL);
  CHECK(create_topic_for(topic, 1));
  CHECK_OK(cursus_event_builder_new("Started", "kickoff", &ev, &err));
  CHECK_OK(cursus_event_builder_set_metadata(ev, "{\"by\":\"ref\"}", &err));
  CHECK_OK(cursus_event_builder_set_schema_version(ev, 2, &err));
  CHECK_OK(cursus_event_builder_set_event_id(ev, "ev-1", &err));
  CHECK_OK(cursus_event_store_append_event(store, topic, "m1", 0, ev, &first, &err));
  CHECK(cursus_appended_version(first) == 1);
  /* The exact retry (same version, id and payload) gets the original offset. */
  CHECK_OK(cursus_event_store_append_event(store, topic, "m1", 0, ev, &again, &err));
  CHECK(cursus_appended_version(again) == 1);
  CHECK(cursus_appended_offset(again) == cursus_appended_offset(first));
  CHECK(cursus_appended_partition(again) == cursus_appended_partition(first));
  CHECK(version_of(store, topic, "m1") == 1);
  /* One event, with every field the builder set. */
  CHECK_OK(cursus_event_cursor_stream(topic, "m1", 1, 0, 0, &cursor, &err));
  CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
  CHECK(page != NULL && cursus_event_page_count(page) == 1);
  CHECK(strcmp(cursus_event_page_event_type(page, 0), "Started") == 0);
  CHECK(strcmp(cursus_event_page_metadata(page, 0), "{\"by\":\"ref\"}") == 0);
  CHECK(cursus_event_page_schema_version(page, 0) == 2);
  CHECK(cursus_event_page_offset(page, 0) == (int64_t)cursus_appended_offset(first));
  /* An event id must be non-empty text without whitespace. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_builder_set_event_id(ev, "ev 2", &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_builder_set_event_id(ev, "", &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_builder_set_event_id(NULL, "ev-3", &err), &err);
done:
  cursus_error_destroy(err);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  cursus_appended_destroy(first);
  cursus_appended_destroy(again);
  cursus_event_builder_destroy(ev);
  store_free(store);
}

void test_replay_identity_conflict(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-replay-conflict");
  cursus_event_store_t *store = store_open();
  cursus_event_builder_t *other_payload = NULL, *other_id = NULL;
  cursus_appended_t *a = NULL;
  cursus_replay_proof_t *proof = NULL;
  cursus_error_t *err = NULL;
  CHECK(store != NULL);
  CHECK(create_topic_for(topic, 1));
  CHECK(append_id(store, topic, "m2", 0, "kickoff", "ev-a") == 1);
  /* Version 1 again with the same id but another payload... */
  CHECK((other_payload = event("Started", "other payload", "ev-a")) != NULL);
  CHECK_FAILS(CURSUS_ERR_CONFLICT, cursus_event_store_append_event(store, topic, "m2", 0, other_payload, &a, &err),
              &err);
  CHECK(code_is(err, "aggregate_identity_conflict"));
  CHECK(a == NULL);
  /* ...no proof rides on it. */
  CHECK(cursus_replay_proof_from_error(err, &proof, NULL) == CURSUS_OK); /* err: the failed call's */
  CHECK(proof == NULL);
  /* ...or with the same payload but another id: a conflict too. */
  CHECK((other_id = event("Started", "kickoff", "ev-b")) != NULL);
  CHECK_FAILS(CURSUS_ERR_CONFLICT, cursus_event_store_append_event(store, topic, "m2", 0, other_id, &a, &err), &err);
  CHECK(code_is(err, "aggregate_identity_conflict"));
  CHECK(version_of(store, topic, "m2") == 1);
done:
  cursus_error_destroy(err);
  cursus_appended_destroy(a);
  cursus_event_builder_destroy(other_payload);
  cursus_event_builder_destroy(other_id);
  cursus_replay_proof_destroy(proof);
  store_free(store);
}

void test_replay_proof_and_range(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-replay-proof");
  cursus_event_store_t *store = store_open();
  cursus_replay_proof_t *proof = NULL, *failed = NULL, *range_proof = NULL;
  cursus_event_range_t *range = NULL;
  cursus_error_t *err = NULL;
  uint64_t first_offset = 0;
  CHECK(store != NULL);
  CHECK(create_topic_for(topic, 1));
  CHECK(append_id(store, topic, "m3", 0, "goal-1", "m3-1") == 1);
  CHECK(append_id(store, topic, "m3", 1, "goal 2", "m3-2") == 2);
  CHECK(append_id(store, topic, "m3", 2, "goal-3", "m3-3") == 3);

  CHECK_OK(cursus_event_store_replay_proof(store, topic, "m3", -1, &proof, &err));
  CHECK(strcmp(cursus_replay_proof_status(proof), "complete") == 0);
  CHECK(strcmp(cursus_replay_proof_diagnostic(proof), "") == 0);
  CHECK(cursus_replay_proof_partition(proof) < 2);
  CHECK(cursus_replay_proof_event_count(proof) == 3);
  CHECK(cursus_replay_proof_earliest_sequence(proof) == 1);
  CHECK(cursus_replay_proof_latest_sequence(proof) == 3);
  CHECK(cursus_replay_proof_first_offset(proof) < cursus_replay_proof_last_offset(proof));
  CHECK(cursus_replay_proof_hwm(proof) > cursus_replay_proof_last_offset(proof));
  CHECK(strcmp(cursus_replay_proof_first_event_id(proof), "m3-1") == 0);
  CHECK(strcmp(cursus_replay_proof_last_event_id(proof), "m3-3") == 0);
  CHECK(cursus_replay_proof_sequence_complete(proof));
  CHECK(cursus_replay_proof_retention_complete(proof));
  first_offset = cursus_replay_proof_first_offset(proof);
  cursus_replay_proof_destroy(proof);
  proof = NULL;
  /* 0 is no sequence: the library refuses it, as in every language (-1: no expectation). */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_store_replay_proof(store, topic, "m3", 0, &failed, &err),
              &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_store_replay_proof(store, topic, "m3", -5, &failed, &err),
              &err);
  /* The expected last sequence, when right, changes nothing. */
  CHECK_OK(cursus_event_store_replay_proof(store, topic, "m3", 3, &proof, &err));
  CHECK(strcmp(cursus_replay_proof_status(proof), "complete") == 0);

  /* A wrong one fails; the error carries the proof. */
  CHECK_FAILS(CURSUS_ERR_INTERNAL, cursus_event_store_replay_proof(store, topic, "m3", 9, &failed, &err), &err);
  CHECK(code_is(err, "aggregate_proof_proof_unavailable"));
  CHECK(failed == NULL);
  CHECK(cursus_replay_proof_from_error(err, &failed, NULL) == CURSUS_OK); /* err: the failed call's */
  CHECK(failed != NULL);
  CHECK(strcmp(cursus_replay_proof_status(failed), "proof_unavailable") == 0);
  CHECK(cursus_replay_proof_event_count(failed) == 3);
  CHECK(cursus_replay_proof_latest_sequence(failed) == 3);
  CHECK(strcmp(cursus_replay_proof_last_event_id(failed), "m3-3") == 0);
  cursus_replay_proof_destroy(failed);
  failed = NULL;
  /* An unknown aggregate has no proof either (class not_found by the
   * fallback rule for a code ending in _not_found). */
  CHECK_FAILS(CURSUS_ERR_NOT_FOUND, cursus_event_store_replay_proof(store, topic, "nobody", -1, &failed, &err), &err);
  CHECK(code_is(err, "aggregate_proof_not_found"));
  CHECK(cursus_replay_proof_from_error(err, &failed, NULL) == CURSUS_OK); /* err: the failed call's */
  CHECK(failed != NULL);
  CHECK(strcmp(cursus_replay_proof_status(failed), "not_found") == 0);
  CHECK(cursus_replay_proof_event_count(failed) == 0);

  /* A range read under a complete proof: every field of its events. */
  CHECK_OK(cursus_event_store_event_range(store, topic, "m3", 2, 3, 0, &range, &err));
  CHECK(cursus_event_range_count(range) == 2);
  CHECK(cursus_event_range_sequence(range, 0) == 2);
  CHECK(cursus_event_range_sequence(range, 1) == 3);
  CHECK(cursus_event_range_offset(range, 0) > (int64_t)first_offset);
  CHECK(cursus_event_range_offset(range, 1) > cursus_event_range_offset(range, 0));
  CHECK(strcmp(cursus_event_range_event_id(range, 0), "m3-2") == 0);
  CHECK(strcmp(cursus_event_range_event_type(range, 0), "Scored") == 0);
  CHECK(strcmp(cursus_event_range_payload(range, 0), "goal 2") == 0);
  CHECK(strcmp(cursus_event_range_payload(range, 1), "goal-3") == 0);
  /* Out of range: the documented fallbacks. */
  CHECK(cursus_event_range_offset(range, 2) == -1);
  CHECK(cursus_event_range_sequence(range, 2) == 0);
  CHECK(strcmp(cursus_event_range_event_id(range, 2), "") == 0);
  CHECK_OK(cursus_event_range_proof(range, &range_proof, &err));
  CHECK(strcmp(cursus_replay_proof_status(range_proof), "complete") == 0);
  CHECK(cursus_replay_proof_event_count(range_proof) == 3);
  cursus_event_range_destroy(range);
  range = NULL;
  /* max_records bounds the range. */
  CHECK_OK(cursus_event_store_event_range(store, topic, "m3", 1, 3, 1, &range, &err));
  CHECK(cursus_event_range_count(range) == 1);
  CHECK(cursus_event_range_sequence(range, 0) == 1);
  cursus_event_range_destroy(range);
  range = NULL;
  /* Past the last sequence: incomplete. */
  CHECK_FAILS(CURSUS_ERR_INTERNAL, cursus_event_store_event_range(store, topic, "m3", 2, 9, 0, &range, &err), &err);
  CHECK(code_is(err, "aggregate_range_incomplete"));
  CHECK(range == NULL);
done:
  cursus_error_destroy(err);
  cursus_replay_proof_destroy(proof);
  cursus_replay_proof_destroy(failed);
  cursus_replay_proof_destroy(range_proof);
  cursus_event_range_destroy(range);
  store_free(store);
}

void test_replay_proof_needs_a_replay_topic(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-replay-plain");
  cursus_event_store_t *store = store_open();
  cursus_replay_proof_t *proof = NULL;
  cursus_error_t *err = NULL;
  CHECK(store != NULL);
  CHECK(create_topic_for(topic, 0));
  /* An id on a plain event-sourcing topic is stored, never required. */
  CHECK(append_id(store, topic, "k", 0, "one", "id-1") == 1);
  CHECK(append_id(store, topic, "k", 1, "two", NULL) == 2);
  CHECK_FAILS(CURSUS_ERR_INTERNAL, cursus_event_store_replay_proof(store, topic, "k", -1, &proof, &err), &err);
  CHECK(code_is(err, "aggregate_replay_not_enabled"));
  CHECK(cursus_replay_proof_from_error(err, &proof, NULL) == CURSUS_OK); /* err: the failed call's */
  CHECK(proof == NULL);
  /* Bad handles and arguments. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_event_store_replay_proof(NULL, topic, "k", -1, &proof, &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_replay_proof_from_error(NULL, &proof, &err), &err);
  CHECK(cursus_replay_proof_status(NULL) == NULL);
  CHECK(cursus_event_range_offset(NULL, 0) == -1);
  CHECK(cursus_event_range_count(NULL) == 0);
done:
  cursus_error_destroy(err);
  cursus_replay_proof_destroy(proof);
  store_free(store);
}

/* A transactional producer with a fresh transactional id, its transactions
 * initialised; NULL (reported) on failure. */
static cursus_producer_t *txn_producer(void) {
  char id[64];
  unique_name(id, sizeof id, "c-txn-stream");
  cursus_config_t *c = config_for("producer", NULL);
  set_option(c, "transactional_id", id);
  cursus_producer_t *p = NULL;
  cursus_error_t *err = NULL;
  if (!ok_(cursus_producer_new(c, &p, &err), err, "producer_new", __LINE__) ||
      !ok_(cursus_producer_init_transactions(p, &err), err, "init_transactions", __LINE__)) {
    cursus_producer_destroy(p);
    p = NULL;
  }
  cursus_config_destroy(c);
  return p;
}

static void producer_free(cursus_producer_t *p) {
  if (p) cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(p);
}

void test_txn_append_stream_commit(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-txn-stream-commit");
  cursus_event_store_t *store = store_open();
  cursus_producer_t *tp = txn_producer();
  cursus_event_builder_t *credit = NULL, *race = NULL;
  cursus_appended_t *a = NULL, *raced = NULL;
  cursus_event_cursor_t *cursor = NULL;
  cursus_event_page_t *page = NULL;
  cursus_error_t *err = NULL;
  size_t len = 0;
  const uint8_t *payload;
  CHECK(store != NULL && tp != NULL);
  CHECK(create_topic_for(topic, 0));
  CHECK(append_id(store, topic, "acct", 0, "open", NULL) == 1);
  CHECK_OK(cursus_producer_begin_transaction(tp, &err));
  CHECK((credit = event("Credited", "credit 3", "credit-1")) != NULL);
  CHECK_OK(cursus_producer_append_stream(tp, topic, "acct", 1, credit, &a, &err));
  CHECK(cursus_appended_version(a) == 2);
  /* Invisible until the commit, and the aggregate is reserved. */
  CHECK(version_of(store, topic, "acct") == 1);
  CHECK((race = event("Debited", "race", NULL)) != NULL);
  CHECK_FAILS(CURSUS_ERR_CONFLICT, cursus_event_store_append_event(store, topic, "acct", 1, race, &raced, &err),
              &err);
  CHECK(code_is(err, "stream_version_reserved"));
  CHECK_OK(cursus_producer_commit_transaction(tp, &err));
  CHECK(version_of(store, topic, "acct") == 2);
  CHECK_OK(cursus_event_cursor_stream(topic, "acct", 2, 0, 0, &cursor, &err));
  CHECK_OK(cursus_event_store_next_page(store, cursor, &page, &err));
  CHECK(page != NULL && cursus_event_page_count(page) == 1);
  CHECK(cursus_event_page_version(page, 0) == 2);
  CHECK(cursus_event_page_offset(page, 0) == (int64_t)cursus_appended_offset(a));
  CHECK(strcmp(cursus_event_page_event_type(page, 0), "Credited") == 0);
  payload = cursus_event_page_payload(page, 0, &len);
  CHECK(len == 8 && memcmp(payload, "credit 3", 8) == 0);
  /* The reservation ended with the commit. */
  CHECK(append_id(store, topic, "acct", 2, "after", NULL) == 3);
done:
  cursus_error_destroy(err);
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  cursus_appended_destroy(a);
  cursus_appended_destroy(raced);
  cursus_event_builder_destroy(credit);
  cursus_event_builder_destroy(race);
  producer_free(tp);
  store_free(store);
}

void test_txn_append_stream_abort(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-txn-stream-abort");
  cursus_event_store_t *store = store_open();
  cursus_producer_t *tp = txn_producer();
  cursus_producer_t *plain = NULL;
  cursus_config_t *c = NULL;
  cursus_event_builder_t *never = NULL;
  cursus_appended_t *a = NULL;
  cursus_error_t *err = NULL;
  CHECK(store != NULL && tp != NULL);
  CHECK(create_topic_for(topic, 0));
  CHECK(append_id(store, topic, "acct", 0, "open", NULL) == 1);
  CHECK((never = event("Credited", "never", NULL)) != NULL);
  /* Outside a transaction: refused. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_append_stream(tp, topic, "acct", 1, never, &a, &err), &err);
  CHECK_OK(cursus_producer_begin_transaction(tp, &err));
  CHECK_OK(cursus_producer_append_stream(tp, topic, "acct", 1, never, &a, &err));
  CHECK(cursus_appended_version(a) == 2);
  CHECK_OK(cursus_producer_abort_transaction(tp, &err));
  /* No version came of it; the next writer takes version 2. */
  CHECK(version_of(store, topic, "acct") == 1);
  CHECK(append_id(store, topic, "acct", 1, "after", NULL) == 2);
  /* A producer without a transactional id cannot append in a transaction. */
  c = config_for("producer", NULL);
  CHECK_OK(cursus_producer_new(c, &plain, &err));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_append_stream(plain, topic, "acct", 2, never, &a, &err),
              &err);
  CHECK(code_is(err, "invalid_transaction_state"));
done:
  cursus_error_destroy(err);
  cursus_appended_destroy(a);
  cursus_event_builder_destroy(never);
  cursus_config_destroy(c);
  producer_free(plain);
  producer_free(tp);
  store_free(store);
}
