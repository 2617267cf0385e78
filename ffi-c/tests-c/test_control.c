/* C tests of consumer control (seek, position, pause/resume, committed
 * offsets of a list), the rebalance listener, every record field with
 * producer timestamps, statistics (snapshot and periodic listener), the
 * error listener and the process-wide log listener, against a real broker. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <inttypes.h>
#include <pthread.h>
#include <time.h>

/* A counter a listener bumps and a test waits on (no sleeps). */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int count;
} signal_t;

static void signal_init(signal_t *s) {
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  s->count = 0;
}

static void signal_free(signal_t *s) {
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
}

static void signal_bump(signal_t *s) {
  pthread_mutex_lock(&s->lock);
  s->count++;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

/* Waits until the count reaches `n` (at most 60 s: valgrind is slow); 1 when it did. */
static int signal_wait(signal_t *s, int n) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 60;
  pthread_mutex_lock(&s->lock);
  while (s->count < n)
    if (pthread_cond_timedwait(&s->cond, &s->lock, &until) != 0) break;
  int reached = s->count >= n;
  pthread_mutex_unlock(&s->lock);
  return reached;
}

/* The message's key is `want`. */
static int key_is(const cursus_message_t *m, const char *want) {
  size_t n = 0;
  const uint8_t *p = cursus_message_key(m, &n);
  return n == strlen(want) && memcmp(p, want, n) == 0;
}

/* The message's payload is `want`. */
static int payload_is(const cursus_message_t *m, const char *want) {
  size_t n = 0;
  const uint8_t *p = cursus_message_payload(m, &n);
  return n == strlen(want) && memcmp(p, want, n) == 0;
}

void test_record_fields_and_timestamps(void) {
  char topic[64], group[64], es[64], es_group[64];
  unique_name(topic, sizeof topic, "c-fields");
  unique_name(group, sizeof group, "c-fields-group");
  unique_name(es, sizeof es, "c-fields-es");
  unique_name(es_group, sizeof es_group, "c-fields-es-group");
  cursus_config_t *pc = config_for("producer", NULL), *cc = config_for("consumer", group);
  cursus_config_t *ec = config_for("consumer", es_group), *sc = config_for("admin", NULL), *ac = config_for("admin", NULL);
  set_option(cc, "auto_offset_reset", "earliest");
  set_option(ec, "auto_offset_reset", "earliest");
  cursus_producer_t *p = NULL;
  cursus_consumer_t *c = NULL, *ce = NULL;
  cursus_event_store_t *store = NULL;
  cursus_admin_t *admin = NULL;
  cursus_topic_info_t *info = NULL;
  cursus_message_t *m = NULL;
  cursus_record_metadata_t md;
  const char *topics[] = {topic}, *es_topics[] = {es};
  const char *keys[] = {"partitions", "event_sourcing"}, *values[] = {"1", "true"};
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(pc, &p, &err));
  CHECK_OK(cursus_producer_send(p, topic, 0, (const uint8_t *)"k", 1, (const uint8_t *)"stamped", 7, 1234567, &md, &err));
  CHECK(md.timestamp == 1234567);
  CHECK_OK(cursus_producer_send(p, topic, 0, NULL, 0, (const uint8_t *)"nokey", 5, CURSUS_NO_TIMESTAMP, &md, &err));
  CHECK(md.timestamp > 0);
  CHECK_OK(cursus_consumer_new(cc, &c, &err));
  CHECK_OK(cursus_consumer_subscribe(c, topics, 1, &err));
  CHECK((m = next_message(c)) != NULL);
  CHECK(cursus_message_timestamp(m) == 1234567 && cursus_message_has_key(m));
  CHECK(key_is(m, "k") && payload_is(m, "stamped"));
  CHECK(cursus_message_metadata(m) == NULL && cursus_message_event_type(m) == NULL);
  CHECK(cursus_message_event_id(m) == NULL && cursus_message_schema_version(m) == 0);
  CHECK(cursus_message_aggregate_version(m) == -1);
  cursus_message_destroy(m);
  CHECK((m = next_message(c)) != NULL);
  CHECK(!cursus_message_has_key(m) && cursus_message_timestamp(m) == md.timestamp);
  CHECK(payload_is(m, "nokey"));
  cursus_message_destroy(m);
  m = NULL;

  /* An event's fields reach a plain consumer. */
  CHECK_OK(cursus_admin_new(ac, &admin, &err));
  CHECK_OK(cursus_admin_create_topic_with(admin, es, keys, values, 2, &info, &err));
  CHECK_OK(cursus_event_store_new(sc, &store, &err));
  CHECK_OK(cursus_event_store_append(store, es, "agg", 0, "Created", "p", "{\"by\":\"a\"}", 2, NULL, &err));
  CHECK_OK(cursus_consumer_new(ec, &ce, &err));
  CHECK_OK(cursus_consumer_subscribe(ce, es_topics, 1, &err));
  CHECK((m = next_message(ce)) != NULL);
  CHECK(cursus_message_metadata(m) && strcmp(cursus_message_metadata(m), "{\"by\":\"a\"}") == 0);
  CHECK(cursus_message_event_type(m) && strcmp(cursus_message_event_type(m), "Created") == 0);
  CHECK(cursus_message_schema_version(m) == 2 && cursus_message_aggregate_version(m) == 1);
  CHECK(cursus_message_event_id(m) != NULL); /* generated at append */
  CHECK(cursus_message_has_key(m) && key_is(m, "agg") && payload_is(m, "p"));
done:
  cursus_message_destroy(m);
  cursus_topic_info_destroy(info);
  if (admin) cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  if (store) cursus_event_store_close(store, NULL);
  cursus_event_store_destroy(store);
  if (ce) cursus_consumer_close(ce, NULL);
  cursus_consumer_destroy(ce);
  if (c) cursus_consumer_close(c, NULL);
  cursus_consumer_destroy(c);
  if (p) cursus_producer_close(p, 5000, NULL);
  cursus_producer_destroy(p);
  cursus_config_destroy(pc);
  cursus_config_destroy(cc);
  cursus_config_destroy(ec);
  cursus_config_destroy(sc);
  cursus_config_destroy(ac);
}

void test_seek_position_pause_resume_and_committed_list(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-seek");
  unique_name(group, sizeof group, "c-seek-group");
  cursus_config_t *cc = config_for("consumer", group);
  set_option(cc, "auto_offset_reset", "earliest");
  set_option(cc, "enable_auto_commit", "false");
  cursus_consumer_t *c = NULL;
  cursus_topic_partition_list_t *list = NULL, *out = NULL;
  cursus_error_t *e = NULL;
  cursus_message_t *m = NULL;
  const char *topics[] = {topic};
  int64_t offsets[5];
  uint64_t pos = 0;
  CHECK(create_topic(topic, 2));
  CHECK(produce_values(topic, 0, 5));
  CHECK_OK(cursus_consumer_new(cc, &c, &err));
  /* Not assigned before the group was joined. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_consumer_seek(c, topic, 0, 0, &e), &e);
  CHECK(strcmp(cursus_error_code(e), "partition_not_assigned") == 0);
  CHECK_OK(cursus_consumer_subscribe(c, topics, 1, &err));
  CHECK(take_messages(c, 3, offsets) == 3 && offsets[2] == 2);
  CHECK_OK(cursus_consumer_position(c, topic, 0, &pos, &err));
  CHECK(pos == 3);
  CHECK_OK(cursus_consumer_seek(c, topic, 0, 1, &err));
  CHECK_OK(cursus_consumer_position(c, topic, 0, &pos, &err));
  CHECK(pos == 1);
  CHECK(take_messages(c, 2, offsets) == 2 && offsets[0] == 1 && offsets[1] == 2);

  /* Pause partition 0: nothing more from it until resume. */
  CHECK_OK(cursus_topic_partition_list_new(&list, &err));
  CHECK_OK(cursus_topic_partition_list_add(list, topic, 0, -1, &err));
  CHECK_OK(cursus_consumer_pause(c, list, &err));
  CHECK_OK(cursus_consumer_paused(c, &out, &err));
  CHECK(cursus_topic_partition_list_count(out) == 1 && strcmp(cursus_topic_partition_list_topic(out, 0), topic) == 0 &&
        cursus_topic_partition_list_partition(out, 0) == 0);
  cursus_topic_partition_list_destroy(out);
  out = NULL;
  CHECK_OK(cursus_consumer_poll(c, 300, &m, &err));
  CHECK(m == NULL);
  CHECK_OK(cursus_consumer_resume(c, list, &err));
  CHECK_OK(cursus_consumer_paused(c, &out, &err));
  CHECK(cursus_topic_partition_list_count(out) == 0);
  cursus_topic_partition_list_destroy(out);
  out = NULL;
  CHECK(take_messages(c, 2, offsets) == 2 && offsets[0] == 3 && offsets[1] == 4);

  /* Committed offsets of a list: -1 where nothing was committed. */
  CHECK_OK(cursus_consumer_commit(c, &err));
  CHECK_OK(cursus_topic_partition_list_add(list, topic, 1, -1, &err));
  CHECK_OK(cursus_consumer_committed_list(c, list, &out, &err));
  CHECK(cursus_topic_partition_list_count(out) == 2);
  CHECK(cursus_topic_partition_list_offset(out, 0) == 5 && cursus_topic_partition_list_offset(out, 1) == -1);
  CHECK(cursus_topic_partition_list_partition(out, 1) == 1);
done:
  cursus_message_destroy(m);
  cursus_error_destroy(e);
  cursus_topic_partition_list_destroy(list);
  cursus_topic_partition_list_destroy(out);
  if (c) cursus_consumer_close(c, NULL);
  cursus_consumer_destroy(c);
  cursus_config_destroy(cc);
}

/* What the rebalance test's listener saw. */
typedef struct {
  cursus_consumer_t *consumer;
  signal_t seen;
  char kinds[8][16];
  size_t partitions[8];
  int seek_status, poll_status, commit_status;
} rebalance_state_t;

static void on_rebalance(void *user_data, const cursus_rebalance_event_t *event) {
  rebalance_state_t *st = user_data;
  const char *kind = cursus_rebalance_event_kind(event);
  int i = st->seen.count;
  if (i < 8) {
    snprintf(st->kinds[i], sizeof st->kinds[i], "%s", kind);
    st->partitions[i] = cursus_rebalance_event_count(event);
  }
  if (strcmp(kind, "assigned") == 0) {
    for (size_t p = 0; p < cursus_rebalance_event_count(event); p++)
      st->seek_status = cursus_consumer_seek(st->consumer, cursus_rebalance_event_topic(event, p),
                                             (uint32_t)cursus_rebalance_event_partition(event, p), 3, NULL);
    /* poll from the listener fails (it must not deadlock). */
    cursus_message_t *m = NULL;
    st->poll_status = cursus_consumer_poll(st->consumer, 0, &m, NULL);
    cursus_message_destroy(m);
  } else if (strcmp(kind, "revoked") == 0) {
    st->commit_status = cursus_consumer_commit(st->consumer, NULL);
  }
  signal_bump(&st->seen);
}

void test_rebalance_listener_seeks_and_commits_on_close(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-rebalance");
  unique_name(group, sizeof group, "c-rebalance-group");
  cursus_config_t *cc = config_for("consumer", group), *cc2 = config_for("consumer", group);
  set_option(cc, "auto_offset_reset", "earliest");
  set_option(cc, "enable_auto_commit", "false");
  cursus_consumer_t *c = NULL, *c2 = NULL;
  const char *topics[] = {topic};
  int64_t offsets[3], committed = -1;
  rebalance_state_t st;
  memset(&st, 0, sizeof st);
  signal_init(&st.seen);
  st.seek_status = st.poll_status = st.commit_status = -1;
  CHECK(create_topic(topic, 1));
  CHECK(produce_values(topic, 0, 6));
  CHECK_OK(cursus_consumer_new(cc, &c, &err));
  st.consumer = c;
  CHECK_OK(cursus_consumer_set_rebalance_listener(c, on_rebalance, &st, true, &err));
  CHECK_OK(cursus_consumer_subscribe(c, topics, 1, &err));
  CHECK(take_messages(c, 3, offsets) == 3);
  CHECK(offsets[0] == 3 && offsets[2] == 5); /* the seek in "assigned" */
  CHECK(signal_wait(&st.seen, 1));
  CHECK(strcmp(st.kinds[0], "assigned") == 0 && st.partitions[0] == 1);
  CHECK(st.seek_status == CURSUS_OK && st.poll_status != CURSUS_OK);
  CHECK_OK(cursus_consumer_close(c, &err));
  CHECK(signal_wait(&st.seen, 2));
  CHECK(strcmp(st.kinds[1], "revoked") == 0 && st.partitions[1] == 1);
  CHECK(st.commit_status == CURSUS_OK); /* a commit in "revoked" at close succeeds */
  CHECK_OK(cursus_consumer_new(cc2, &c2, &err));
  CHECK_OK(cursus_consumer_committed(c2, topic, 0, &committed, &err));
  CHECK(committed == 6);
done:
  cursus_consumer_destroy(c); /* no listener call after destroy: st may go */
  if (c2) cursus_consumer_close(c2, NULL);
  cursus_consumer_destroy(c2);
  signal_free(&st.seen);
  cursus_config_destroy(cc);
  cursus_config_destroy(cc2);
}

/* Keeps the first statistics kind and counts the calls. */
typedef struct {
  signal_t calls;
  char kind[16];
  uint64_t records_sent;
} stats_state_t;

static void on_statistics(void *user_data, const cursus_statistics_t *s) {
  stats_state_t *st = user_data;
  pthread_mutex_lock(&st->calls.lock);
  snprintf(st->kind, sizeof st->kind, "%s", cursus_statistics_kind(s));
  st->records_sent = cursus_statistics_records_sent(s);
  pthread_mutex_unlock(&st->calls.lock);
  signal_bump(&st->calls);
}

static void on_error(void *user_data, const cursus_error_t *e) {
  (void)e;
  signal_bump(user_data);
}

void test_statistics_snapshot_and_listener(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-stats");
  unique_name(group, sizeof group, "c-stats-group");
  cursus_config_t *pc = config_for("producer", NULL), *cc = config_for("consumer", group);
  set_option(pc, "client_id", "c-stats-producer");
  set_option(cc, "auto_offset_reset", "earliest");
  cursus_producer_t *p = NULL;
  cursus_consumer_t *c = NULL;
  cursus_statistics_t *s = NULL;
  cursus_error_t *refused = NULL;
  cursus_record_metadata_t md;
  const char *topics[] = {topic};
  stats_state_t st;
  signal_t errors;
  memset(&st, 0, sizeof st);
  signal_init(&st.calls);
  signal_init(&errors);
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(pc, &p, &err));
  CHECK_OK(cursus_producer_set_error_listener(p, on_error, &errors, &err));
  for (int i = 0; i < 3; i++)
    CHECK_OK(cursus_producer_send(p, topic, 0, NULL, 0, (const uint8_t *)"abc", 3, CURSUS_NO_TIMESTAMP, &md, &err));
  CHECK_OK(cursus_producer_statistics(p, &s, &err));
  CHECK(strcmp(cursus_statistics_kind(s), "producer") == 0);
  CHECK(strcmp(cursus_statistics_client_id(s), "c-stats-producer") == 0);
  CHECK(cursus_statistics_records_sent(s) == 3 && cursus_statistics_bytes_sent(s) >= 9);
  CHECK(cursus_statistics_produce_latency_count(s) >= 1 && cursus_statistics_partition_count(s) == 0);
  CHECK(cursus_statistics_errors(s, "not_found") == 0 && strstr(cursus_statistics_json(s), "records_sent") != NULL);
  cursus_statistics_destroy(s);
  s = NULL;
  /* The library's rule: a listener never called (interval from the unset option, or 0) is refused. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_producer_set_statistics_listener(p, -1, on_statistics, &st, &refused), &refused);
  CHECK(strcmp(cursus_error_field(refused, "option"), "statistics_interval_ms") == 0);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_producer_set_statistics_listener(p, 0, on_statistics, &st, &refused), &refused);
  CHECK_OK(cursus_producer_set_statistics_listener(p, 20, on_statistics, &st, &err));
  CHECK(signal_wait(&st.calls, 2));
  CHECK_OK(cursus_producer_set_statistics_listener(p, 0, NULL, NULL, &err));
  pthread_mutex_lock(&st.calls.lock);
  int kind_ok = strcmp(st.kind, "producer") == 0 && st.records_sent == 3;
  pthread_mutex_unlock(&st.calls.lock);
  CHECK(kind_ok);
  CHECK(errors.count == 0);

  CHECK_OK(cursus_consumer_new(cc, &c, &err));
  CHECK_OK(cursus_consumer_set_error_listener(c, on_error, &errors, &err));
  CHECK_OK(cursus_consumer_subscribe(c, topics, 1, &err));
  CHECK(take_messages(c, 2, NULL) == 2);
  CHECK_OK(cursus_consumer_statistics(c, &s, &err));
  CHECK(strcmp(cursus_statistics_kind(s), "consumer") == 0 && cursus_statistics_records_received(s) >= 2);
  CHECK(cursus_statistics_partition_count(s) == 1);
  CHECK(strcmp(cursus_statistics_partition_topic(s, 0), topic) == 0 && cursus_statistics_partition_partition(s, 0) == 0);
  CHECK(cursus_statistics_partition_position(s, 0) == 2 && cursus_statistics_partition_end_offset(s, 0) == 3);
  CHECK(cursus_statistics_partition_lag(s, 0) == 1 && cursus_statistics_partition_topic(s, 1) == NULL);
done:
  cursus_error_destroy(refused);
  cursus_statistics_destroy(s);
  if (c) cursus_consumer_close(c, NULL);
  cursus_consumer_destroy(c);
  if (p) cursus_producer_close(p, 5000, NULL);
  cursus_producer_destroy(p); /* listeners are never called after destroy */
  signal_free(&st.calls);
  signal_free(&errors);
  cursus_config_destroy(pc);
  cursus_config_destroy(cc);
}

/* Log records seen: a "joined group" one at info sets `joined`. */
typedef struct {
  signal_t joined;
  int below_info;
} log_state_t;

static void on_log(void *user_data, const cursus_log_record_t *r) {
  log_state_t *st = user_data;
  const char *level = cursus_log_record_level(r);
  if (strcmp(level, "debug") == 0 || strcmp(level, "trace") == 0) st->below_info++;
  if (strncmp(cursus_log_record_message(r), "joined group", 12) == 0 && strcmp(level, "info") == 0 &&
      strncmp(cursus_log_record_target(r), "cursus", 6) == 0)
    signal_bump(&st->joined);
}

void test_log_listener_gets_engine_records(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-log");
  unique_name(group, sizeof group, "c-log-group");
  cursus_config_t *cc = config_for("consumer", group);
  cursus_consumer_t *c = NULL;
  cursus_message_t *m = NULL;
  const char *topics[] = {topic};
  cursus_error_t *e = NULL;
  log_state_t st;
  memset(&st, 0, sizeof st);
  signal_init(&st.joined);
  CHECK(create_topic(topic, 1));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_log_set_listener("loud", on_log, &st, &e), &e);
  CHECK_OK(cursus_log_set_listener("info", on_log, &st, &err));
  CHECK_OK(cursus_consumer_new(cc, &c, &err));
  CHECK_OK(cursus_consumer_subscribe(c, topics, 1, &err));
  CHECK_OK(cursus_consumer_poll(c, 300, &m, &err)); /* joins the group */
  CHECK(signal_wait(&st.joined, 1));
  CHECK(st.below_info == 0);
done:
  /* Off: the listener is not called after this returns. */
  cursus_log_set_listener("off", NULL, NULL, NULL);
  cursus_error_destroy(e);
  cursus_message_destroy(m);
  if (c) cursus_consumer_close(c, NULL);
  cursus_consumer_destroy(c);
  signal_free(&st.joined);
  cursus_config_destroy(cc);
}
