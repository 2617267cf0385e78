/* C tests of transactions (docs/transactions.md) against a real broker:
 * read_committed and read_uncommitted visibility, consume-process-produce,
 * zombie fencing, the _async variants and calls in the wrong state. */
#include "test_util.h"

#include <pthread.h>

/* A producer with transactional_id `id` (NULL: not transactional). */
static cursus_producer_t *txn_producer(const char *id) {
  cursus_config_t *c = config_for("producer", NULL);
  if (id) set_option(c, "transactional_id", id);
  cursus_producer_t *p = NULL;
  cursus_error_t *err = NULL;
  if (!ok_(cursus_producer_new(c, &p, &err), err, "producer_new", __LINE__)) p = NULL;
  cursus_config_destroy(c);
  return p;
}

static void producer_free(cursus_producer_t *p) {
  if (p) cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(p);
}

/* Sends `value` (blocking: waits for its TXN_PUBLISH reply); 1 on success. */
static int send_value(cursus_producer_t *p, const char *topic, const char *value) {
  cursus_error_t *err = NULL;
  return ok_(cursus_producer_send(p, topic, 0, NULL, 0, (const uint8_t *)value, strlen(value), CURSUS_NO_TIMESTAMP,
                                  NULL, &err),
             err, value, __LINE__);
}

/* The values of the first `n` records a fresh consumer group reads from
 * `topic` with `isolation`, comma-separated into `out` ("" when fewer
 * arrived within ~20 s). Records a read_committed reader must skip come
 * first in the log, so the first ones it reads are the visible ones. */
static void read_values(const char *topic, const char *isolation, int n, char *out, size_t size) {
  char group[64];
  unique_name(group, sizeof group, "c-txn-reader");
  cursus_config_t *c = config_for("consumer", group);
  set_option(c, "isolation_level", isolation);
  cursus_consumer_t *consumer = NULL;
  cursus_error_t *err = NULL;
  const char *topics[] = {topic};
  size_t len = 0;
  int got = 0;
  out[0] = '\0';
  if (!ok_(cursus_consumer_new(c, &consumer, &err), err, "consumer_new", __LINE__) ||
      !ok_(cursus_consumer_subscribe(consumer, topics, 1, &err), err, "subscribe", __LINE__))
    goto done;
  for (int polls = 0; got < n && polls < 100; polls++) {
    cursus_message_t *m = NULL;
    if (!ok_(cursus_consumer_poll(consumer, 200, &m, &err), err, "poll", __LINE__)) break;
    if (m == NULL) continue;
    size_t vlen = 0;
    const uint8_t *v = cursus_message_payload(m, &vlen);
    int w = snprintf(out + len, size - len, "%s%.*s", got ? "," : "", (int)vlen, (const char *)v);
    len = w < 0 || (size_t)w >= size - len ? size - 1 : len + (size_t)w;
    got++;
    cursus_message_destroy(m);
  }
  if (got < n) out[0] = '\0';
done:
  if (consumer) cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(c);
}

/* The latest offset LIST_OFFSETS reports for partition 0 (the last
 * stable offset: records of an open transaction do not count); -1 on error. */
static int64_t latest_offset(const char *topic) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_admin_t *admin = NULL;
  cursus_partition_offsets_list_t *offsets = NULL;
  cursus_error_t *err = NULL;
  int64_t latest = -1;
  if (ok_(cursus_admin_new(c, &admin, &err), err, "admin_new", __LINE__) &&
      ok_(cursus_admin_list_offsets(admin, topic, 0, &offsets, &err), err, "list_offsets", __LINE__))
    latest = cursus_partition_offsets_list_latest(offsets, 0);
  cursus_partition_offsets_list_destroy(offsets);
  if (admin) cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
  return latest;
}

void test_txn_commit_is_visible_to_read_committed(void) {
  char topic[64], id[64], got[256];
  unique_name(topic, sizeof topic, "c-txn-commit");
  unique_name(id, sizeof id, "c-txn");
  cursus_producer_t *p = txn_producer(id);
  cursus_error_t *err = NULL;
  cursus_record_metadata_t meta;
  CHECK(p != NULL);
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_init_transactions(p, &err));
  CHECK_OK(cursus_producer_begin_transaction(p, &err));
  CHECK_OK(cursus_producer_send(p, topic, CURSUS_ANY_PARTITION, (const uint8_t *)"k", 1, (const uint8_t *)"t0", 2,
                                CURSUS_NO_TIMESTAMP, &meta, &err));
  CHECK(meta.partition == 0 && meta.offset == 0);
  CHECK(send_value(p, topic, "t1") && send_value(p, topic, "t2"));
  /* Open: stored, but the last stable offset has not moved. */
  CHECK(latest_offset(topic) == 0);
  CHECK_OK(cursus_producer_commit_transaction(p, &err));
  CHECK(latest_offset(topic) >= 3);
  read_values(topic, "read_committed", 3, got, sizeof got);
  CHECK(strcmp(got, "t0,t1,t2") == 0);
  /* The next transaction re-initialises the session by itself. */
  CHECK_OK(cursus_producer_begin_transaction(p, &err));
  CHECK(send_value(p, topic, "t3"));
  CHECK_OK(cursus_producer_commit_transaction(p, &err));
  read_values(topic, "read_committed", 4, got, sizeof got);
  CHECK(strcmp(got, "t0,t1,t2,t3") == 0);
done:
  cursus_error_destroy(err);
  producer_free(p);
}

void test_txn_abort_is_never_visible(void) {
  char topic[64], id[64], got[256];
  unique_name(topic, sizeof topic, "c-txn-abort");
  unique_name(id, sizeof id, "c-txn");
  cursus_producer_t *p = txn_producer(id);
  cursus_error_t *err = NULL;
  CHECK(p != NULL);
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_init_transactions(p, &err));
  CHECK_OK(cursus_producer_begin_transaction(p, &err));
  CHECK(send_value(p, topic, "a0") && send_value(p, topic, "a1"));
  CHECK_OK(cursus_producer_abort_transaction(p, &err));
  CHECK_OK(cursus_producer_begin_transaction(p, &err));
  CHECK(send_value(p, topic, "c0"));
  CHECK_OK(cursus_producer_commit_transaction(p, &err));
  /* The aborted records come first in the log: a reader that did not skip
   * them would read them first. */
  read_values(topic, "read_committed", 1, got, sizeof got);
  CHECK(strcmp(got, "c0") == 0);
  /* read_uncommitted reads the raw log (markers left out). */
  read_values(topic, "read_uncommitted", 3, got, sizeof got);
  CHECK(strcmp(got, "a0,a1,c0") == 0);
done:
  cursus_error_destroy(err);
  producer_free(p);
}

void test_txn_read_uncommitted_sees_open_records(void) {
  char topic[64], id[64], got[256];
  unique_name(topic, sizeof topic, "c-txn-open");
  unique_name(id, sizeof id, "c-txn");
  cursus_producer_t *p = txn_producer(id);
  cursus_error_t *err = NULL;
  CHECK(p != NULL);
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_init_transactions(p, &err));
  CHECK_OK(cursus_producer_begin_transaction(p, &err));
  CHECK(send_value(p, topic, "u0") && send_value(p, topic, "u1"));
  read_values(topic, "read_uncommitted", 2, got, sizeof got);
  CHECK(strcmp(got, "u0,u1") == 0);
  CHECK_OK(cursus_producer_abort_transaction(p, &err));
done:
  cursus_error_destroy(err);
  producer_free(p);
}

void test_txn_consume_process_produce(void) {
  char in[64], out[64], group[64], id[64], got[256];
  unique_name(in, sizeof in, "c-txn-in");
  unique_name(out, sizeof out, "c-txn-out");
  unique_name(group, sizeof group, "c-txn-group");
  unique_name(id, sizeof id, "c-txn");
  cursus_config_t *cc = config_for("consumer", group);
  cursus_consumer_t *consumer = NULL;
  cursus_producer_t *p = txn_producer(id);
  cursus_topic_partition_list_t *offsets = NULL;
  cursus_error_t *err = NULL;
  const char *topics[] = {in};
  int64_t committed = 0;
  CHECK(p != NULL);
  CHECK(create_topic(in, 1) && create_topic(out, 1));
  CHECK(produce_values(in, 0, 4));
  CHECK_OK(cursus_consumer_new(cc, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(consumer, topics, 1, &err));
  CHECK(take_messages(consumer, 3, NULL) == 3);

  CHECK_OK(cursus_producer_init_transactions(p, &err));
  CHECK_OK(cursus_producer_begin_transaction(p, &err));
  CHECK(send_value(p, out, "o0") && send_value(p, out, "o1") && send_value(p, out, "o2"));
  CHECK_OK(cursus_producer_send_consumer_offsets(p, consumer, &err));
  /* Staged, not committed: the group has no offset until the commit. */
  CHECK_OK(cursus_consumer_committed(consumer, in, 0, &committed, &err));
  CHECK(committed == -1);
  CHECK_OK(cursus_producer_commit_transaction(p, &err));
  CHECK_OK(cursus_consumer_committed(consumer, in, 0, &committed, &err));
  CHECK(committed == 3);
  read_values(out, "read_committed", 3, got, sizeof got);
  CHECK(strcmp(got, "o0,o1,o2") == 0);

  /* Explicit offsets; every entry needs one. */
  CHECK(take_messages(consumer, 1, NULL) == 1);
  CHECK_OK(cursus_topic_partition_list_new(&offsets, &err));
  CHECK_OK(cursus_topic_partition_list_add(offsets, in, 0, -1, &err));
  CHECK_OK(cursus_producer_begin_transaction(p, &err));
  CHECK(send_value(p, out, "o3"));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_send_offsets_to_transaction(p, offsets, consumer, &err),
              &err);
  CHECK(strstr(cursus_error_message(err), "no offset") != NULL);
  cursus_topic_partition_list_destroy(offsets);
  offsets = NULL;
  CHECK_OK(cursus_topic_partition_list_new(&offsets, &err));
  CHECK_OK(cursus_topic_partition_list_add(offsets, in, 0, 4, &err));
  CHECK_OK(cursus_producer_send_offsets_to_transaction(p, offsets, consumer, &err));
  CHECK_OK(cursus_consumer_committed(consumer, in, 0, &committed, &err));
  CHECK(committed == 3);
  CHECK_OK(cursus_producer_commit_transaction(p, &err));
  CHECK_OK(cursus_consumer_committed(consumer, in, 0, &committed, &err));
  CHECK(committed == 4);
done:
  cursus_topic_partition_list_destroy(offsets);
  cursus_error_destroy(err);
  if (consumer) cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(cc);
  producer_free(p);
}

void test_txn_zombie_is_fenced(void) {
  char topic[64], id[64], got[256];
  unique_name(topic, sizeof topic, "c-txn-zombie");
  unique_name(id, sizeof id, "c-txn");
  cursus_producer_t *old = txn_producer(id), *fresh = txn_producer(id);
  cursus_error_t *err = NULL;
  CHECK(old != NULL && fresh != NULL);
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_init_transactions(old, &err));
  CHECK_OK(cursus_producer_begin_transaction(old, &err));
  CHECK(send_value(old, topic, "old-0"));
  /* A second producer with the same id fences the first and aborts its
   * open transaction. */
  CHECK_OK(cursus_producer_init_transactions(fresh, &err));
  CHECK_FAILS(CURSUS_ERR_FENCING,
              cursus_producer_send(old, topic, 0, NULL, 0, (const uint8_t *)"old-1", 5, CURSUS_NO_TIMESTAMP, NULL,
                                   &err),
              &err);
  CHECK(strcmp(cursus_error_code(err), "producer_fenced") == 0);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_FENCING);
  CHECK(strcmp(cursus_error_field(err, "transactional_id"), id) == 0);
  /* Fencing is for good. */
  CHECK_FAILS(CURSUS_ERR_FENCING, cursus_producer_commit_transaction(old, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "producer_fenced") == 0);
  CHECK_FAILS(CURSUS_ERR_FENCING, cursus_producer_begin_transaction(old, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "producer_fenced") == 0);

  CHECK_OK(cursus_producer_begin_transaction(fresh, &err));
  CHECK(send_value(fresh, topic, "new-0"));
  CHECK_OK(cursus_producer_commit_transaction(fresh, &err));
  read_values(topic, "read_committed", 1, got, sizeof got);
  CHECK(strcmp(got, "new-0") == 0);
done:
  cursus_error_destroy(err);
  producer_free(old);
  producer_free(fresh);
}

/* The outcome of one _async call, handed over by its callback. */
struct outcome {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int calls;
  cursus_status_t status;
  char code[64]; /* the error's code ("" on success): the error is borrowed */
};

#define OUTCOME_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, CURSUS_OK, ""}

static void on_outcome(void *user_data, cursus_status_t status, const cursus_error_t *error) {
  struct outcome *o = user_data;
  pthread_mutex_lock(&o->lock);
  o->calls++;
  o->status = (status == CURSUS_OK) == (error == NULL) ? status : CURSUS_ERR_INTERNAL;
  snprintf(o->code, sizeof o->code, "%s", error ? cursus_error_code(error) : "");
  pthread_cond_broadcast(&o->cond);
  pthread_mutex_unlock(&o->lock);
}

/* Waits for the callback; returns its status (CURSUS_ERR_INTERNAL when it
 * was called more than once) and resets for the next call. */
static cursus_status_t await_outcome(struct outcome *o, char *code, size_t size) {
  pthread_mutex_lock(&o->lock);
  while (o->calls == 0) pthread_cond_wait(&o->cond, &o->lock);
  cursus_status_t s = o->calls == 1 ? o->status : CURSUS_ERR_INTERNAL;
  if (code) snprintf(code, size, "%s", o->code);
  o->calls = 0;
  pthread_mutex_unlock(&o->lock);
  return s;
}

void test_txn_async_variants(void) {
  char in[64], out[64], group[64], id[64], got[256], code[64];
  unique_name(in, sizeof in, "c-txn-async-in");
  unique_name(out, sizeof out, "c-txn-async-out");
  unique_name(group, sizeof group, "c-txn-async-group");
  unique_name(id, sizeof id, "c-txn");
  cursus_config_t *cc = config_for("consumer", group);
  cursus_consumer_t *consumer = NULL;
  cursus_producer_t *p = txn_producer(id);
  cursus_error_t *err = NULL;
  struct outcome o = OUTCOME_INIT;
  const char *topics[] = {in};
  int64_t committed = 0;
  CHECK(p != NULL);
  CHECK(create_topic(in, 1) && create_topic(out, 1));
  CHECK(produce_values(in, 0, 2));
  CHECK_OK(cursus_consumer_new(cc, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(consumer, topics, 1, &err));
  CHECK(take_messages(consumer, 2, NULL) == 2);

  CHECK_OK(cursus_producer_init_transactions_async(p, on_outcome, &o, &err));
  CHECK(await_outcome(&o, NULL, 0) == CURSUS_OK);
  /* A call in the wrong state reports through the callback. */
  CHECK_OK(cursus_producer_commit_transaction_async(p, on_outcome, &o, &err));
  CHECK(await_outcome(&o, code, sizeof code) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(code, "invalid_transaction_state") == 0);
  CHECK_OK(cursus_producer_begin_transaction_async(p, on_outcome, &o, &err));
  CHECK(await_outcome(&o, NULL, 0) == CURSUS_OK);
  CHECK(send_value(p, out, "x0"));
  CHECK_OK(cursus_producer_send_consumer_offsets_async(p, consumer, on_outcome, &o, &err));
  CHECK(await_outcome(&o, NULL, 0) == CURSUS_OK);
  CHECK_OK(cursus_producer_commit_transaction_async(p, on_outcome, &o, &err));
  CHECK(await_outcome(&o, NULL, 0) == CURSUS_OK);
  CHECK_OK(cursus_consumer_committed(consumer, in, 0, &committed, &err));
  CHECK(committed == 2);
  read_values(out, "read_committed", 1, got, sizeof got);
  CHECK(strcmp(got, "x0") == 0);

  CHECK_OK(cursus_producer_begin_transaction_async(p, on_outcome, &o, &err));
  CHECK(await_outcome(&o, NULL, 0) == CURSUS_OK);
  CHECK(send_value(p, out, "x1"));
  CHECK_OK(cursus_producer_abort_transaction_async(p, on_outcome, &o, &err));
  CHECK(await_outcome(&o, NULL, 0) == CURSUS_OK);

  /* On a closed producer both forms fail at the start (as
   * cursus_consumer_commit_async does): the callback is never called. */
  CHECK_OK(cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, &err));
  CHECK_FAILS(CURSUS_ERR_CLOSED, cursus_producer_begin_transaction(p, &err), &err);
  CHECK_FAILS(CURSUS_ERR_CLOSED, cursus_producer_begin_transaction_async(p, on_outcome, &o, &err), &err);
  CHECK(o.calls == 0);
  /* An invalid handle fails the start: the callback is never called. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_commit_transaction_async(NULL, on_outcome, &o, &err),
              &err);
  CHECK(o.calls == 0);
done:
  cursus_error_destroy(err);
  if (consumer) cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(cc);
  producer_free(p);
}

void test_txn_calls_in_the_wrong_state(void) {
  char topic[64], id[64];
  unique_name(topic, sizeof topic, "c-txn-state");
  unique_name(id, sizeof id, "c-txn");
  cursus_producer_t *p = txn_producer(id), *plain = txn_producer(NULL);
  cursus_config_t *bad = config_for("producer", NULL);
  cursus_producer_t *never = NULL;
  cursus_error_t *err = NULL;
  CHECK(p != NULL && plain != NULL);
  CHECK(create_topic(topic, 1));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_begin_transaction(p, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_transaction_state") == 0);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_VALIDATION);
  CHECK(strstr(cursus_error_message(err), "init_transactions") != NULL);
  CHECK_OK(cursus_producer_init_transactions(p, &err));
  /* A transactional producer sends only inside a transaction. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_producer_send(p, topic, 0, NULL, 0, (const uint8_t *)"x", 1, CURSUS_NO_TIMESTAMP, NULL, &err),
              &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_transaction_state") == 0);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_commit_transaction(p, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_transaction_state") == 0);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_abort_transaction(p, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_transaction_state") == 0);
  CHECK_OK(cursus_producer_begin_transaction(p, &err));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_begin_transaction(p, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_transaction_state") == 0);
  CHECK_OK(cursus_producer_abort_transaction(p, &err));
  /* Without transactional_id there are no transactions. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_init_transactions(plain, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_transaction_state") == 0);
  CHECK(strstr(cursus_error_message(err), "transactional_id") != NULL);
  /* transactional_id needs acks=all. */
  set_option(bad, "transactional_id", id);
  set_option(bad, "acks", "1");
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_new(bad, &never, &err), &err);
  CHECK(never == NULL && strstr(cursus_error_message(err), "acks=all") != NULL);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_init_transactions(NULL, &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_send_consumer_offsets(p, NULL, &err), &err);
done:
  cursus_error_destroy(err);
  cursus_config_destroy(bad);
  producer_free(never);
  producer_free(p);
  producer_free(plain);
}
