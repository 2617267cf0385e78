/* C tests of libcursus against a real broker (address in $CURSUS_TEST_BROKER).
 * A plain runner: one line per test, then "N passed, N failed". */
#include "cursus.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failed_checks;
static const char *broker;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failed_checks++;                                                           \
      goto done;                                                                 \
    }                                                                            \
  } while (0)

/* Checks that a call returned CURSUS_OK; prints and frees the error if not. */
static int ok(cursus_status_t s, cursus_error_t *e, const char *what, int line) {
  if (s == CURSUS_OK && e == NULL) return 1;
  fprintf(stderr, "  line %d: %s -> %s: %s\n", line, what, cursus_status_name(s),
          e ? cursus_error_message(e) : "(no error)");
  cursus_error_free(e);
  failed_checks++;
  return 0;
}
#define CHECK_OK(call)                                       \
  do {                                                       \
    cursus_error_t *err = NULL;                              \
    if (!ok(call, err, #call, __LINE__)) goto done;          \
  } while (0)
/* Inside CHECK_OK, `&err` names the local error out-parameter. */

static int counter;
static void topic_name(char *buf, size_t n, const char *prefix) {
  snprintf(buf, n, "%s-%ld-%d", prefix, (long)getpid(), ++counter);
}

static cursus_config_t *config_with(const char *group) {
  cursus_config_t *c = cursus_config_new();
  cursus_error_t *err = NULL;
  if (cursus_config_set(c, "bootstrap_servers", broker, &err) != CURSUS_OK) abort();
  if (group && cursus_config_set(c, "group_id", group, &err) != CURSUS_OK) abort();
  return c;
}

static int create_topic(const char *topic, unsigned partitions) {
  cursus_config_t *c = config_with(NULL);
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  int good = ok(cursus_admin_new(c, &admin, &err), err, "admin_new", __LINE__) &&
             ok(cursus_admin_create_topic(admin, topic, partitions, &err), err, "create_topic", __LINE__);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
  return good;
}

/* ------------------------------------------------------------------------ */

static void test_version(void) {
  char expect[64];
  snprintf(expect, sizeof expect, "%d.%d.%d", CURSUS_VERSION_MAJOR, CURSUS_VERSION_MINOR,
           CURSUS_VERSION_PATCH);
  CHECK(strcmp(cursus_version(), expect) == 0);
  CHECK(strcmp(cursus_status_name(CURSUS_ERR_FENCING), "CURSUS_ERR_FENCING") == 0);
done:;
}

static void test_config_validation(void) {
  cursus_config_t *c = cursus_config_new();
  cursus_error_t *err = NULL;
  CHECK(c != NULL);
  CHECK(cursus_config_set(c, "no_such_option", "1", &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(err != NULL);
  CHECK(strstr(cursus_error_message(err), "no_such_option") != NULL);
  CHECK(strcmp(cursus_error_code(err), "invalid_argument") == 0);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_VALIDATION);
  CHECK(strcmp(cursus_error_class_name(err), "validation") == 0);
  CHECK(!cursus_error_retryable(err));
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_config_set(c, "acks", "seven", &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cursus_error_message(err), "acks") != NULL);
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_config_set(c, "linger_ms", "abc", &err) == CURSUS_ERR_INVALID_ARGUMENT);
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_config_set(c, "acks", "all", &err) == CURSUS_OK);
  CHECK(err == NULL);
  CHECK(cursus_config_set(c, "group_id", "g1", NULL) == CURSUS_OK);
  CHECK(cursus_config_set(c, NULL, "x", NULL) == CURSUS_ERR_INVALID_ARGUMENT);
done:
  cursus_error_free(err);
  cursus_config_destroy(c);
}

static void test_invalid_handles(void) {
  cursus_error_t *err = NULL;
  cursus_config_t *c = cursus_config_new();
  cursus_producer_t *p = NULL;
  /* NULL handles. */
  CHECK(cursus_config_set(NULL, "acks", "1", NULL) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(cursus_producer_flush(NULL, 0, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cursus_error_message(err), "NULL") != NULL);
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_producer_new(c, NULL, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
  /* Wrong kind: a config passed as a producer. */
  CHECK(cursus_producer_flush((cursus_producer_t *)c, 0, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cursus_error_message(err), "not a producer") != NULL);
  cursus_error_free(err);
  err = NULL;
  /* Destroyed handle. */
  cursus_config_destroy(c);
  CHECK(cursus_config_set(c, "acks", "1", &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(cursus_error_code(err), "invalid_handle") == 0);
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_producer_new(c, &p, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(p == NULL);
  cursus_error_free(err);
  err = NULL;
  /* Destroy functions accept NULL and double destroy. */
  cursus_config_destroy(c);
  cursus_config_destroy(NULL);
  cursus_producer_destroy(NULL);
  cursus_consumer_destroy(NULL);
  cursus_admin_destroy(NULL);
  cursus_message_destroy(NULL);
  cursus_error_free(NULL);
  /* New entry points: NULL handles and out-parameters are errors, not crashes. */
  {
    char *text = NULL;
    size_t n = 7;
    cursus_partition_offsets_t *offs = NULL;
    cursus_topic_partition_t *tps = NULL;
    int64_t off = 0;
    bool found = true;
    CHECK(cursus_admin_help(NULL, &text, NULL) == CURSUS_ERR_INVALID_ARGUMENT && text == NULL);
    CHECK(cursus_admin_list_offsets(NULL, "t", -1, &offs, &n, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
    CHECK(offs == NULL && n == 0);
    CHECK(cursus_admin_list_offsets(NULL, "t", -1, &offs, NULL, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
    CHECK(cursus_admin_create_topic_opts(NULL, "t", NULL, NULL, 0, NULL, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
    found = true;
    CHECK(cursus_admin_delete_topic(NULL, "t", true, &found, NULL) == CURSUS_ERR_INVALID_ARGUMENT && !found);
    CHECK(cursus_consumer_committed(NULL, "t", 0, &off, &found, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
    CHECK(off == -1 && !found);
    CHECK(cursus_consumer_assignment(NULL, &tps, &n, NULL) == CURSUS_ERR_INVALID_ARGUMENT && tps == NULL);
    CHECK(cursus_consumer_commit_async(NULL, NULL, NULL, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
    CHECK(cursus_consumer_subscribe_pattern(NULL, "x", NULL) == CURSUS_ERR_INVALID_ARGUMENT);
    CHECK(cursus_consumer_commit_offsets(NULL, NULL, NULL, NULL, 0, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
    cursus_partition_offsets_free(NULL, 0);
    cursus_topic_partitions_free(NULL, 0);
  }
  /* Accessors on invalid handles. */
  CHECK(cursus_error_message(NULL) == NULL);
  CHECK(cursus_error_field_count(NULL) == 0);
  CHECK(cursus_message_payload(NULL, NULL) == NULL);
  CHECK(cursus_message_offset(NULL) == -1);
  c = NULL;
done:
  cursus_error_free(err);
  cursus_config_destroy(c);
}

static void test_consumer_requires_group(void) {
  cursus_config_t *c = config_with(NULL);
  cursus_consumer_t *consumer = NULL;
  cursus_error_t *err = NULL;
  CHECK(cursus_consumer_new(c, &consumer, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cursus_error_message(err), "group_id") != NULL);
  CHECK(consumer == NULL);
done:
  cursus_error_free(err);
  cursus_config_destroy(c);
}

static void test_admin_errors_carry_class_and_fields(void) {
  cursus_config_t *c = config_with(NULL);
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  char topic[64], *names = NULL;
  topic_name(topic, sizeof topic, "c-admin");
  CHECK_OK(cursus_admin_new(c, &admin, &err));
  bool deleted = true;
  CHECK(cursus_admin_delete_topic(admin, topic, false, &deleted, &err) == CURSUS_ERR_NOT_FOUND);
  CHECK(!deleted);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_NOT_FOUND);
  CHECK(cursus_error_code(err) != NULL && strlen(cursus_error_code(err)) > 0);
  for (size_t i = 0; i < cursus_error_field_count(err); i++) {
    CHECK(cursus_error_field_name(err, i) != NULL);
    CHECK(cursus_error_field_value(err, i) != NULL);
  }
  CHECK(cursus_error_field_name(err, 1000) == NULL);
  cursus_error_free(err);
  err = NULL;
  deleted = true;
  CHECK(cursus_admin_delete_topic(admin, topic, true, &deleted, &err) == CURSUS_OK);
  CHECK(!deleted); /* if_exists found no topic */
  CHECK_OK(cursus_admin_create_topic(admin, topic, 2, &err));
  CHECK_OK(cursus_admin_list_topics(admin, &names, &err));
  CHECK(strstr(names, topic) != NULL);
  cursus_string_free(names);
  names = NULL;
  CHECK_OK(cursus_admin_delete_topic(admin, topic, true, &deleted, &err));
  CHECK(deleted);
  CHECK_OK(cursus_admin_create_topic(admin, topic, 2, &err));
  CHECK_OK(cursus_admin_delete_topic(admin, topic, false, NULL, &err));
  CHECK_OK(cursus_admin_close(admin, &err));
  CHECK_OK(cursus_admin_close(admin, &err));
  CHECK(cursus_admin_list_topics(admin, &names, &err) == CURSUS_ERR_CLOSED);
done:
  cursus_string_free(names);
  cursus_error_free(err);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
}

static void test_admin_topic_management(void) {
  cursus_config_t *c = config_with(NULL);
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  char topic[64], *text = NULL;
  cursus_partition_offsets_t *offsets = NULL;
  size_t count = 0;
  topic_name(topic, sizeof topic, "c-mgmt");
  CHECK_OK(cursus_admin_new(c, &admin, &err));
  const char *bad_keys[] = {"no_such_field"}, *bad_values[] = {"1"};
  CHECK(cursus_admin_create_topic_opts(admin, topic, bad_keys, bad_values, 1, NULL, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cursus_error_message(err), "no_such_field") != NULL);
  cursus_error_free(err);
  err = NULL;
  const char *bad_num[] = {"partitions"}, *bad_num_value[] = {"many"};
  CHECK(cursus_admin_create_topic_opts(admin, topic, bad_num, bad_num_value, 1, NULL, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  cursus_error_free(err);
  err = NULL;
  const char *keys[] = {"partitions", "retention_hours", "idempotent", "read_acl"};
  const char *values[] = {"3", "24", "false", ""};
  cursus_topic_metadata_t created;
  CHECK_OK(cursus_admin_create_topic_opts(admin, topic, keys, values, 4, &created, &err));
  CHECK(created.partitions == 3 && created.revision == 1 && !created.idempotent);
  /* CREATE again with the same fields: idempotent, same definition. */
  created.partitions = 0;
  CHECK_OK(cursus_admin_create_topic_opts(admin, topic, keys, values, 1, &created, &err));
  CHECK(created.partitions == 3 && created.revision == 1);

  cursus_topic_metadata_t md;
  CHECK_OK(cursus_admin_metadata(admin, topic, &md, &text, &err));
  CHECK(md.partitions == 3 && md.revision == 1 && !md.idempotent);
  CHECK(md.min_in_sync_replicas == -1);
  CHECK(strchr(text, '\n') != NULL && strstr(text, broker) != NULL);
  cursus_string_free(text);
  text = NULL;
  CHECK(cursus_admin_metadata(admin, topic, NULL, NULL, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  cursus_error_free(err);
  err = NULL;

  cursus_topic_metadata_t altered;
  CHECK_OK(cursus_admin_alter_topic_config(admin, topic, 1, &altered, &err));
  CHECK(altered.min_in_sync_replicas == 1 && altered.partitions == 3);
  CHECK_OK(cursus_admin_alter_topic_config(admin, topic, -1, &altered, &err));
  CHECK(altered.min_in_sync_replicas == -1);
  CHECK_OK(cursus_admin_alter_topic_config(admin, topic, -1, NULL, &err));
  CHECK_OK(cursus_admin_metadata(admin, topic, &md, NULL, &err));

  CHECK_OK(cursus_admin_list_offsets(admin, topic, -1, &offsets, &count, &err));
  CHECK(count == 3);
  for (size_t i = 0; i < count; i++) CHECK(offsets[i].earliest == 0 && offsets[i].latest == 0);
  cursus_partition_offsets_free(offsets, count);
  offsets = NULL;
  CHECK_OK(cursus_admin_list_offsets(admin, topic, 2, &offsets, &count, &err));
  CHECK(count == 1 && offsets[0].partition == 2);
  cursus_partition_offsets_free(offsets, count);
  offsets = NULL;

  CHECK_OK(cursus_admin_describe_topic(admin, topic, &text, &err));
  CHECK(text[0] == '{' && strstr(text, topic) != NULL && strstr(text, "\"partitions\"") != NULL);
  cursus_string_free(text);
  text = NULL;

  uint64_t revision = 0, epoch = 0;
  CHECK(cursus_admin_truncate_topic(admin, topic, md.revision + 100, &revision, &epoch, &err) == CURSUS_ERR_CONFLICT);
  cursus_error_free(err);
  err = NULL;
  CHECK_OK(cursus_admin_truncate_topic(admin, topic, md.revision, &revision, &epoch, &err));
  CHECK(revision == md.revision + 1);
  CHECK(epoch >= md.lifecycle_epoch);

  CHECK_OK(cursus_admin_help(admin, &text, &err));
  CHECK(strstr(text, "PUBLISH") != NULL);
  cursus_string_free(text);
  text = NULL;
  CHECK_OK(cursus_admin_list_groups(admin, &text, &err));
  cursus_string_free(text);
  text = NULL;
  CHECK(cursus_admin_describe_topic(admin, "c-no-such-topic", &text, &err) == CURSUS_ERR_NOT_FOUND);
  CHECK(text == NULL);
  cursus_error_free(err);
  err = NULL;
  CHECK_OK(cursus_admin_close(admin, &err));
  CHECK(cursus_admin_help(admin, &text, &err) == CURSUS_ERR_CLOSED);
done:
  cursus_string_free(text);
  cursus_partition_offsets_free(offsets, count);
  cursus_error_free(err);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
}

struct commit_state {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int calls;
  cursus_status_t status;
};

static void on_commit(void *user_data, cursus_status_t status, const cursus_error_t *error) {
  struct commit_state *st = user_data;
  pthread_mutex_lock(&st->lock);
  st->calls++;
  st->status = (status == CURSUS_OK) == (error == NULL) ? status : CURSUS_ERR_INTERNAL;
  pthread_cond_broadcast(&st->cond);
  pthread_mutex_unlock(&st->lock);
}

static int wait_commit(struct commit_state *st) {
  pthread_mutex_lock(&st->lock);
  while (st->calls == 0) pthread_cond_wait(&st->cond, &st->lock);
  int good = st->calls == 1 && st->status == CURSUS_OK;
  st->calls = 0;
  pthread_mutex_unlock(&st->lock);
  return good;
}

static void test_consumer_pattern_commit_async_and_status(void) {
  char prefix[64], topic[80], group[64], pattern[80], *text = NULL;
  topic_name(prefix, sizeof prefix, "c-pat");
  snprintf(topic, sizeof topic, "%s-orders", prefix);
  snprintf(pattern, sizeof pattern, "%s-*", prefix);
  topic_name(group, sizeof group, "c-pat-group");
  cursus_config_t *c = config_with(group);
  cursus_producer_t *producer = NULL;
  cursus_consumer_t *consumer = NULL;
  cursus_admin_t *admin = NULL;
  cursus_message_t *m = NULL;
  cursus_topic_partition_t *parts = NULL;
  size_t nparts = 0;
  cursus_error_t *err = NULL;
  struct commit_state st = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, CURSUS_OK};
  CHECK(create_topic(topic, 2));
  CHECK_OK(cursus_config_set(c, "fetch_max_wait_ms", "50", &err));
  CHECK_OK(cursus_producer_new(c, &producer, &err));
  for (int i = 0; i < 4; i++)
    CHECK_OK(cursus_producer_send(producer, topic, 0, NULL, 0, (const uint8_t *)"p", 1, NULL, &err));
  CHECK_OK(cursus_consumer_new(c, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe_pattern(consumer, pattern, &err));
  int64_t offset = 0;
  bool found = true;
  CHECK_OK(cursus_consumer_committed(consumer, topic, 0, &offset, &found, &err));
  CHECK(!found && offset == -1);
  int seen = 0;
  for (int polls = 0; seen < 4 && polls < 200; polls++) {
    CHECK_OK(cursus_consumer_poll(consumer, 500, &m, &err));
    if (m == NULL) continue;
    CHECK(strcmp(cursus_message_topic(m), topic) == 0);
    seen++;
    cursus_message_destroy(m);
    m = NULL;
    if (seen == 2) {
      /* Some records may still be buffered: only the two handed out count. */
      CHECK_OK(cursus_consumer_commit_async(consumer, on_commit, &st, &err));
      CHECK(wait_commit(&st));
      CHECK_OK(cursus_consumer_committed(consumer, topic, 0, &offset, &found, &err));
      CHECK(found && offset == 2);
    }
  }
  CHECK(seen == 4);
  CHECK_OK(cursus_consumer_assignment(consumer, &parts, &nparts, &err));
  CHECK(nparts == 2);
  for (size_t i = 0; i < nparts; i++) CHECK(strcmp(parts[i].topic, topic) == 0 && parts[i].partition < 2);
  CHECK(parts[0].partition != parts[1].partition);
  cursus_topic_partitions_free(parts, nparts);
  parts = NULL;

  CHECK_OK(cursus_consumer_commit_async(consumer, on_commit, &st, &err));
  CHECK(wait_commit(&st));
  CHECK_OK(cursus_consumer_committed(consumer, topic, 0, &offset, &found, &err));
  CHECK(found && offset == 4);
  CHECK_OK(cursus_consumer_commit_async(consumer, NULL, NULL, &err)); /* no callback */

  CHECK_OK(cursus_admin_new(c, &admin, &err));
  CHECK_OK(cursus_admin_list_groups(admin, &text, &err));
  CHECK(strstr(text, group) != NULL);
  cursus_string_free(text);
  text = NULL;
  CHECK_OK(cursus_admin_group_status(admin, group, &text, &err));
  CHECK(text[0] == '{' && strstr(text, group) != NULL && strstr(text, "\"members\"") != NULL);
  cursus_string_free(text);
  text = NULL;

  CHECK_OK(cursus_consumer_close(consumer, &err));
  CHECK(cursus_consumer_commit_async(consumer, on_commit, &st, &err) == CURSUS_ERR_CLOSED);
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_consumer_subscribe_pattern(NULL, pattern, &err) == CURSUS_ERR_INVALID_ARGUMENT);
done:
  cursus_string_free(text);
  cursus_topic_partitions_free(parts, nparts);
  cursus_error_free(err);
  cursus_message_destroy(m);
  if (admin) cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_consumer_destroy(consumer);
  if (producer) cursus_producer_close(producer, 10000, NULL);
  cursus_producer_destroy(producer);
  cursus_config_destroy(c);
}

static void test_commit_offsets_explicit(void) {
  char topic[64], group[64];
  topic_name(topic, sizeof topic, "c-commit-offsets");
  topic_name(group, sizeof group, "c-commit-offsets-group");
  cursus_config_t *c = config_with(group);
  cursus_producer_t *producer = NULL;
  cursus_consumer_t *consumer = NULL, *second = NULL;
  cursus_message_t *m = NULL;
  cursus_error_t *err = NULL;
  const char *topics[] = {topic, topic};
  uint32_t partitions[] = {0, 1};
  uint64_t offsets[] = {2, 0};
  int64_t offset = 0;
  bool found = false;
  CHECK(create_topic(topic, 2));
  CHECK_OK(cursus_config_set(c, "auto_offset_reset", "earliest", &err));
  CHECK_OK(cursus_producer_new(c, &producer, &err));
  for (int i = 0; i < 4; i++) {
    char v[8];
    int n = snprintf(v, sizeof v, "v%d", i);
    CHECK_OK(cursus_producer_send(producer, topic, 0, NULL, 0, (const uint8_t *)v, (size_t)n, NULL, &err));
  }
  CHECK_OK(cursus_consumer_new(c, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(consumer, topics, 1, &err));
  /* Before the group is joined (first poll) there is nothing to commit against. */
  CHECK(cursus_consumer_commit_offsets(consumer, topics, partitions, offsets, 1, &err) ==
        CURSUS_ERR_INVALID_ARGUMENT);
  cursus_error_free(err);
  err = NULL;
  for (int polls = 0; m == NULL && polls < 200; polls++) CHECK_OK(cursus_consumer_poll(consumer, 500, &m, &err));
  CHECK(m != NULL);
  cursus_message_destroy(m);
  m = NULL;
  /* Argument validation: typed errors, not crashes. */
  CHECK(cursus_consumer_commit_offsets(NULL, topics, partitions, offsets, 1, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_consumer_commit_offsets(consumer, NULL, partitions, offsets, 1, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cursus_error_message(err), "topics") != NULL);
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_consumer_commit_offsets(consumer, topics, NULL, offsets, 1, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cursus_error_message(err), "partitions") != NULL);
  cursus_error_free(err);
  err = NULL;
  CHECK(cursus_consumer_commit_offsets(consumer, topics, partitions, NULL, 1, &err) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cursus_error_message(err), "offsets") != NULL);
  cursus_error_free(err);
  err = NULL;
  CHECK_OK(cursus_consumer_commit_offsets(consumer, NULL, NULL, NULL, 0, &err));

  /* An explicit offset is committed as given, whatever was polled. */
  CHECK_OK(cursus_consumer_commit_offsets(consumer, topics, partitions, offsets, 2, &err));
  CHECK_OK(cursus_consumer_committed(consumer, topic, 0, &offset, &found, &err));
  CHECK(found && offset == 2);
  CHECK_OK(cursus_consumer_committed(consumer, topic, 1, &offset, &found, &err));
  CHECK(found && offset == 0);
  CHECK_OK(cursus_consumer_close(consumer, &err));
  CHECK(cursus_consumer_commit_offsets(consumer, topics, partitions, offsets, 1, &err) == CURSUS_ERR_CLOSED);
  cursus_error_free(err);
  err = NULL;

  /* The group resumes from the explicitly committed offset. */
  CHECK_OK(cursus_consumer_new(c, &second, &err));
  CHECK_OK(cursus_consumer_subscribe(second, topics, 1, &err));
  for (int polls = 0; m == NULL && polls < 200; polls++) CHECK_OK(cursus_consumer_poll(second, 500, &m, &err));
  CHECK(m != NULL);
  CHECK(cursus_message_partition(m) == 0 && cursus_message_offset(m) == 2);
  size_t len = 0;
  const uint8_t *payload = cursus_message_payload(m, &len);
  CHECK(len == 2 && memcmp(payload, "v2", 2) == 0);
  CHECK_OK(cursus_consumer_close(second, &err));
done:
  cursus_error_free(err);
  cursus_message_destroy(m);
  cursus_consumer_destroy(consumer);
  cursus_consumer_destroy(second);
  if (producer) cursus_producer_close(producer, 10000, NULL);
  cursus_producer_destroy(producer);
  cursus_config_destroy(c);
}

struct delivery_state {
  atomic_int ok;
  atomic_int failed;
  atomic_llong offset_sum;
};

static void on_delivery(void *user_data, const cursus_delivery_report_t *report) {
  struct delivery_state *st = user_data;
  if (report->status == CURSUS_OK && report->error == NULL && report->topic != NULL) {
    atomic_fetch_add(&st->offset_sum, report->metadata.offset);
    atomic_fetch_add(&st->ok, 1);
  } else {
    atomic_fetch_add(&st->failed, 1);
  }
}

static void test_produce_and_consume_through_group(void) {
  char topic[64], group[64];
  topic_name(topic, sizeof topic, "c-roundtrip");
  topic_name(group, sizeof group, "c-group");
  cursus_config_t *pc = config_with(NULL), *cc = config_with(group);
  cursus_producer_t *producer = NULL;
  cursus_consumer_t *consumer = NULL, *second = NULL;
  cursus_message_t *m = NULL;
  struct delivery_state st = {0};
  const unsigned char binary[] = {'a', 0, 'b', 0, 0, 0xff};
  const char *topics[] = {topic};
  int seen = 0, seen_binary = 0;
  cursus_error_t *err = NULL;
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(pc, &producer, &err));
  cursus_record_metadata_t meta;
  CHECK_OK(cursus_producer_send(producer, topic, -1, (const uint8_t *)"k", 1, binary, sizeof binary, &meta, &err));
  CHECK(meta.partition == 0 && meta.offset == 0);
  for (int i = 0; i < 9; i++) {
    char payload[32];
    int n = snprintf(payload, sizeof payload, "msg-%d", i);
    CHECK_OK(cursus_producer_send_cb(producer, topic, -1, NULL, 0, (const uint8_t *)payload, (size_t)n,
                                     on_delivery, &st, &err));
  }
  CHECK_OK(cursus_producer_flush(producer, 30000, &err));
  CHECK(atomic_load(&st.ok) == 9 && atomic_load(&st.failed) == 0);
  CHECK(atomic_load(&st.offset_sum) == 45); /* offsets 1..9, callbacks in any order */

  CHECK_OK(cursus_consumer_new(cc, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(consumer, topics, 1, &err));
  for (int polls = 0; seen < 10 && polls < 200; polls++) {
    CHECK_OK(cursus_consumer_poll(consumer, 500, &m, &err));
    if (m == NULL) continue;
    CHECK(strcmp(cursus_message_topic(m), topic) == 0);
    CHECK(cursus_message_partition(m) == 0);
    CHECK(cursus_message_offset(m) == seen);
    CHECK(cursus_message_timestamp(m) > 0);
    size_t len = 0, klen = 0;
    const uint8_t *payload = cursus_message_payload(m, &len);
    const uint8_t *key = cursus_message_key(m, &klen);
    if (seen == 0) {
      CHECK(len == sizeof binary && memcmp(payload, binary, len) == 0);
      CHECK(klen == 1 && key[0] == 'k');
      seen_binary = 1;
    } else {
      char expect[32];
      int n = snprintf(expect, sizeof expect, "msg-%d", seen - 1);
      CHECK(len == (size_t)n && memcmp(payload, expect, len) == 0);
      CHECK(klen == 0);
    }
    seen++;
    cursus_message_destroy(m);
    m = NULL;
    if (seen == 5) CHECK_OK(cursus_consumer_commit(consumer, &err));
  }
  CHECK(seen == 10 && seen_binary);
  CHECK_OK(cursus_consumer_commit(consumer, &err));
  CHECK_OK(cursus_consumer_close(consumer, &err));
  CHECK(cursus_consumer_poll(consumer, 0, &m, &err) == CURSUS_ERR_CLOSED);
  cursus_error_free(err);
  err = NULL;

  /* The group resumes after the committed position. */
  CHECK_OK(cursus_producer_send(producer, topic, 0, NULL, 0, (const uint8_t *)"after", 5, NULL, &err));
  CHECK_OK(cursus_consumer_new(cc, &second, &err));
  CHECK_OK(cursus_consumer_subscribe(second, topics, 1, &err));
  for (int polls = 0; m == NULL && polls < 200; polls++) CHECK_OK(cursus_consumer_poll(second, 500, &m, &err));
  CHECK(m != NULL);
  CHECK(cursus_message_offset(m) == 10);
  size_t len = 0;
  const uint8_t *payload = cursus_message_payload(m, &len);
  CHECK(len == 5 && memcmp(payload, "after", 5) == 0);
  CHECK_OK(cursus_consumer_commit(second, &err));
  CHECK_OK(cursus_consumer_close(second, &err));

  /* Closed producer: CURSUS_ERR_CLOSED; destroyed: invalid handle. */
  CHECK_OK(cursus_producer_close(producer, 10000, &err));
  CHECK(cursus_producer_send(producer, topic, -1, NULL, 0, (const uint8_t *)"x", 1, NULL, &err) == CURSUS_ERR_CLOSED);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_VALIDATION);
  cursus_error_free(err);
  err = NULL;
  cursus_producer_destroy(producer);
  CHECK(cursus_producer_send(producer, topic, -1, NULL, 0, (const uint8_t *)"x", 1, NULL, &err) ==
        CURSUS_ERR_INVALID_ARGUMENT);
  producer = NULL;
done:
  cursus_error_free(err);
  cursus_message_destroy(m);
  cursus_consumer_destroy(consumer);
  cursus_consumer_destroy(second);
  cursus_producer_destroy(producer);
  cursus_config_destroy(pc);
  cursus_config_destroy(cc);
}

static void test_send_to_missing_topic_fails_with_class(void) {
  cursus_config_t *c = config_with(NULL);
  cursus_producer_t *producer = NULL;
  cursus_error_t *err = NULL;
  char topic[64];
  topic_name(topic, sizeof topic, "c-missing");
  CHECK(cursus_config_set(c, "retries", "0", NULL) == CURSUS_OK);
  CHECK_OK(cursus_producer_new(c, &producer, &err));
  cursus_status_t s = cursus_producer_send(producer, topic, -1, NULL, 0, (const uint8_t *)"x", 1, NULL, &err);
  CHECK(s != CURSUS_OK);
  CHECK(err != NULL);
  CHECK(cursus_error_status(err) == s);
  CHECK(cursus_error_message(err) != NULL);
  CHECK(s == CURSUS_ERR_NOT_FOUND);
done:
  cursus_error_free(err);
  cursus_producer_close(producer, 1000, NULL);
  cursus_producer_destroy(producer);
  cursus_config_destroy(c);
}

struct sender_args {
  cursus_producer_t *producer;
  const char *topic;
  atomic_int *acked;
};

static void *sender(void *arg) {
  struct sender_args *a = arg;
  for (int i = 0; i < 10; i++) {
    if (cursus_producer_send(a->producer, a->topic, -1, NULL, 0, (const uint8_t *)"t", 1, NULL, NULL) == CURSUS_OK)
      atomic_fetch_add(a->acked, 1);
  }
  return NULL;
}

static void test_concurrent_sends_on_one_producer(void) {
  char topic[64];
  topic_name(topic, sizeof topic, "c-threads");
  cursus_config_t *c = config_with(NULL);
  cursus_producer_t *producer = NULL;
  atomic_int acked = 0;
  pthread_t threads[4];
  CHECK(create_topic(topic, 2));
  CHECK_OK(cursus_producer_new(c, &producer, &err));
  struct sender_args args = {producer, topic, &acked};
  for (int i = 0; i < 4; i++) CHECK(pthread_create(&threads[i], NULL, sender, &args) == 0);
  for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
  CHECK(atomic_load(&acked) == 40);
done:
  cursus_producer_close(producer, 10000, NULL);
  cursus_producer_destroy(producer);
  cursus_config_destroy(c);
}

/* ------------------------------------------------------------------------ */

struct test {
  const char *name;
  void (*fn)(void);
};

int main(void) {
  static const struct test tests[] = {
      {"version", test_version},
      {"config_validation", test_config_validation},
      {"invalid_handles", test_invalid_handles},
      {"consumer_requires_group", test_consumer_requires_group},
      {"admin_errors_carry_class_and_fields", test_admin_errors_carry_class_and_fields},
      {"produce_and_consume_through_group", test_produce_and_consume_through_group},
      {"send_to_missing_topic_fails_with_class", test_send_to_missing_topic_fails_with_class},
      {"concurrent_sends_on_one_producer", test_concurrent_sends_on_one_producer},
      {"admin_topic_management", test_admin_topic_management},
      {"consumer_pattern_commit_async_and_status", test_consumer_pattern_commit_async_and_status},
      {"commit_offsets_explicit", test_commit_offsets_explicit},
  };
  broker = getenv("CURSUS_TEST_BROKER");
  if (broker == NULL || *broker == '\0') {
    fprintf(stderr, "CURSUS_TEST_BROKER is not set (run through with-broker.sh)\n");
    return 2;
  }
  int passed = 0, failed = 0;
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    failed_checks = 0;
    tests[i].fn();
    if (failed_checks == 0) {
      passed++;
      printf("test %s ... ok\n", tests[i].name);
    } else {
      failed++;
      printf("test %s ... FAILED\n", tests[i].name);
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
