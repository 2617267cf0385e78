/* C tests of the libcursus API against a real broker: configuration, handles,
 * errors, admin results, producing and consuming. */
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>

void test_version(void) {
  char expect[64];
  snprintf(expect, sizeof expect, "%d.%d.%d", CURSUS_VERSION_MAJOR, CURSUS_VERSION_MINOR,
           CURSUS_VERSION_PATCH);
  CHECK(strcmp(cursus_version(), expect) == 0);
  CHECK(strcmp(cursus_version(), CURSUS_VERSION_STRING) == 0);
  CHECK(strcmp(cursus_status_name(CURSUS_ERR_FENCING), "CURSUS_ERR_FENCING") == 0);
  /* What CURSUS_DEFAULT_TIMEOUT stands for: the library's one 30 s. */
  int64_t ms = 0;
  CHECK_OK(cursus_default_timeout_ms(&ms, &err));
  CHECK(ms == 30000);
done:;
}

void test_config_validation(void) {
  cursus_config_t *c = NULL, *p = NULL, *bad = NULL;
  cursus_error_t *err = NULL;
  CHECK_OK(cursus_config_new(&c, &err));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_config_set(c, "no_such_option", "1", &err), &err);
  CHECK(strstr(cursus_error_message(err), "unknown option \"no_such_option\"") != NULL);
  CHECK(strcmp(cursus_error_code(err), "invalid_argument") == 0);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_VALIDATION);
  CHECK(strcmp(cursus_error_class_name(err), "validation") == 0);
  CHECK(strcmp(cursus_error_kind(err), "invalid_argument") == 0);
  CHECK(!cursus_error_retryable(err));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_config_set(c, "acks", "seven", &err), &err);
  CHECK(strstr(cursus_error_message(err), "acks") != NULL);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_config_set(c, "linger_ms", "abc", &err), &err);
  CHECK_OK(cursus_config_set(c, "acks", "all", &err));
  CHECK(cursus_config_set(c, "group_id", "g1", NULL) == CURSUS_OK);
  CHECK(cursus_config_set(c, NULL, "x", NULL) == CURSUS_ERR_INVALID_ARGUMENT);
  /* A configuration made for a kind names it, and lists only its options. */
  CHECK_OK(cursus_config_new_for("producer", &p, &err));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_config_set(p, "group_id", "g", &err), &err);
  const char *text = cursus_error_text(err);
  CHECK(strncmp(text, "invalid_argument (validation): unknown producer option \"group_id\"; known options: ",
                strlen("invalid_argument (validation): unknown producer option \"group_id\"; known options: ")) == 0);
  CHECK(strstr(text, "linger_ms") != NULL && strstr(text, "group_id,") == NULL);
  /* An unknown name: the text lists the producer's options, and only those. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_config_set(p, "no_such_option", "1", &err), &err);
  text = cursus_error_text(err);
  CHECK(strstr(text, "unknown producer option \"no_such_option\"; known options: ") != NULL);
  CHECK(strstr(text, "linger_ms") != NULL && strstr(text, "acks") != NULL);
  CHECK(strstr(text, "group_id") == NULL);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_config_new_for("broker", &bad, &err), &err);
  CHECK(bad == NULL);
done:
  cursus_error_destroy(err);
  cursus_config_destroy(c);
  cursus_config_destroy(p);
  cursus_config_destroy(bad);
}

void test_invalid_handles(void) {
  cursus_error_t *err = NULL;
  cursus_config_t *c = config_for("producer", NULL);
  cursus_producer_t *p = NULL;
  cursus_string_list_t *names = NULL;
  cursus_topic_partition_list_t *parts = NULL;
  CHECK(cursus_config_set(NULL, "acks", "1", NULL) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_flush(NULL, 0, &err), &err);
  CHECK(strstr(cursus_error_message(err), "NULL") != NULL);
  /* Wrong kind: a config passed as a producer. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_flush((cursus_producer_t *)c, 0, &err), &err);
  CHECK(strstr(cursus_error_message(err), "not a producer") != NULL);
  /* Destroyed handle. */
  cursus_config_destroy(c);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_config_set(c, "acks", "1", &err), &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_handle") == 0);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_producer_new(c, &p, &err), &err);
  CHECK(p == NULL);
  /* Destroy functions accept NULL and double destroy. */
  cursus_config_destroy(c);
  cursus_config_destroy(NULL);
  cursus_producer_destroy(NULL);
  cursus_consumer_destroy(NULL);
  cursus_admin_destroy(NULL);
  cursus_message_destroy(NULL);
  cursus_error_destroy(NULL);
  cursus_topic_info_destroy(NULL);
  cursus_buffer_free(NULL, 0);
  cursus_string_free(NULL);
  /* NULL handles with out-parameters: errors, and the out-parameters cleared. */
  names = (cursus_string_list_t *)1;
  int64_t off = 7;
  CHECK(cursus_admin_help(NULL, &names, NULL) == CURSUS_ERR_INVALID_ARGUMENT && names == NULL);
  CHECK(cursus_consumer_committed(NULL, "t", 0, &off, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(cursus_consumer_commit_async(NULL, NULL, NULL, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
  CHECK(cursus_consumer_wakeup(NULL, NULL) == CURSUS_ERR_INVALID_ARGUMENT);
  /* Accessors on invalid handles give their fallbacks. */
  CHECK(cursus_error_message(NULL) == NULL);
  CHECK(cursus_error_field_count(NULL) == 0);
  CHECK(cursus_error_status(NULL) == CURSUS_ERR_INVALID_ARGUMENT);
  size_t len = 9;
  CHECK(cursus_message_payload(NULL, &len) == NULL && len == 0);
  CHECK(cursus_message_offset(NULL) == -1);
  CHECK(cursus_topic_info_min_in_sync_replicas(NULL) == -1);
  CHECK(cursus_string_list_get(NULL, 0) == NULL);
  /* Destroyed result handles: their accessors give the fallbacks too. */
  CHECK_OK(cursus_config_options("producer", &names, &err));
  CHECK(cursus_string_list_count(names) > 4 && cursus_string_list_get(names, 0) != NULL);
  /* Wrong kind: a string list read as a topic partition list. */
  CHECK(cursus_topic_partition_list_count((cursus_topic_partition_list_t *)names) == 0);
  cursus_string_list_destroy(names);
  CHECK(cursus_string_list_count(names) == 0 && cursus_string_list_get(names, 0) == NULL);
  names = NULL;
  CHECK_OK(cursus_topic_partition_list_new(&parts, &err));
  CHECK_OK(cursus_topic_partition_list_add(parts, "t", 3, 42, &err));
  CHECK(cursus_topic_partition_list_count(parts) == 1 && cursus_topic_partition_list_offset(parts, 0) == 42);
  cursus_topic_partition_list_destroy(parts);
  CHECK(cursus_topic_partition_list_count(parts) == 0 && cursus_topic_partition_list_topic(parts, 0) == NULL);
  CHECK(cursus_topic_partition_list_partition(parts, 0) == -1 && cursus_topic_partition_list_offset(parts, 0) == -1);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_topic_partition_list_add(parts, "t", 0, 0, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "invalid_handle") == 0);
  parts = NULL;
  c = NULL;
done:
  cursus_topic_partition_list_destroy(parts);
  cursus_string_list_destroy(names);
  cursus_error_destroy(err);
  cursus_config_destroy(c);
}

void test_consumer_requires_group(void) {
  cursus_config_t *c = config_for("consumer", NULL);
  cursus_consumer_t *consumer = NULL;
  cursus_error_t *err = NULL;
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_consumer_new(c, &consumer, &err), &err);
  CHECK(strstr(cursus_error_message(err), "group_id") != NULL);
  CHECK(consumer == NULL);
done:
  cursus_error_destroy(err);
  cursus_config_destroy(c);
}

static int list_has(cursus_string_list_t *l, const char *s) {
  for (size_t i = 0; i < cursus_string_list_count(l); i++)
    if (strcmp(cursus_string_list_get(l, i), s) == 0) return 1;
  return 0;
}

void test_admin_errors_and_lists(void) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  cursus_delete_outcome_t *outcome = NULL;
  cursus_string_list_t *names = NULL;
  char topic[64], expect[160];
  unique_name(topic, sizeof topic, "c-admin");
  CHECK_OK(cursus_admin_new(c, &admin, &err));
  CHECK_FAILS(CURSUS_ERR_NOT_FOUND, cursus_admin_delete_topic(admin, topic, false, &outcome, &err), &err);
  CHECK(outcome == NULL);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_NOT_FOUND);
  CHECK(strcmp(cursus_error_code(err), "topic_not_found") == 0);
  CHECK(strcmp(cursus_error_field(err, "topic"), topic) == 0);
  CHECK(cursus_error_field_count(err) == 1);
  CHECK(strcmp(cursus_error_field_name(err, 0), "topic") == 0);
  CHECK(cursus_error_field_name(err, 1000) == NULL);
  /* The readable text is the same in every language. */
  snprintf(expect, sizeof expect, "topic_not_found (not_found): topic=%s", topic);
  CHECK(strcmp(cursus_error_text(err), expect) == 0);
  CHECK_OK(cursus_admin_delete_topic(admin, topic, true, &outcome, &err));
  CHECK(!cursus_delete_outcome_deleted(outcome)); /* if_exists found no topic */
  cursus_delete_outcome_destroy(outcome);
  outcome = NULL;
  CHECK_OK(cursus_admin_create_topic(admin, topic, 2, NULL, &err));
  CHECK_OK(cursus_admin_list_topics(admin, &names, &err));
  CHECK(list_has(names, topic));
  cursus_string_list_destroy(names);
  names = NULL;
  CHECK_OK(cursus_admin_delete_topic(admin, topic, true, &outcome, &err));
  CHECK(cursus_delete_outcome_deleted(outcome));
  CHECK_OK(cursus_admin_close(admin, &err));
  CHECK_OK(cursus_admin_close(admin, &err));
  CHECK_FAILS(CURSUS_ERR_CLOSED, cursus_admin_list_topics(admin, &names, &err), &err);
done:
  cursus_string_list_destroy(names);
  cursus_delete_outcome_destroy(outcome);
  cursus_error_destroy(err);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
}

void test_admin_typed_results(void) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  cursus_topic_info_t *info = NULL, *def = NULL;
  cursus_topic_metadata_t *md = NULL;
  cursus_topic_description_t *d = NULL;
  cursus_partition_offsets_list_t *offsets = NULL;
  cursus_truncate_outcome_t *tr = NULL;
  cursus_string_list_t *lines = NULL;
  char topic[64];
  unique_name(topic, sizeof topic, "c-typed");
  CHECK_OK(cursus_admin_new(c, &admin, &err));
  const char *bad_keys[] = {"no_such_field"}, *bad_values[] = {"1"};
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_admin_create_topic_with(admin, topic, bad_keys, bad_values, 1, &info, &err), &err);
  CHECK(strstr(cursus_error_message(err), "unknown topic option \"no_such_field\"") != NULL);
  const char *keys[] = {"partitions", "retention_hours", "idempotent", "read_acl"};
  const char *values[] = {"3", "24", "0", "alice,bob"};
  CHECK_OK(cursus_admin_create_topic_with(admin, topic, keys, values, 4, &info, &err));
  CHECK(strcmp(cursus_topic_info_name(info), topic) == 0);
  CHECK(cursus_topic_info_partitions(info) == 3 && cursus_topic_info_revision(info) == 1);
  CHECK(!cursus_topic_info_idempotent(info) && cursus_topic_info_retention_hours(info) == 24);
  CHECK(cursus_topic_info_read_acl_count(info) == 2);
  CHECK(strcmp(cursus_topic_info_read_acl(info, 1), "bob") == 0 && cursus_topic_info_read_acl(info, 2) == NULL);
  CHECK(strcmp(cursus_topic_info_cleanup_policy(info), "delete") == 0);

  CHECK_OK(cursus_admin_metadata(admin, topic, &md, &err));
  CHECK(cursus_topic_metadata_leader_count(md) == 3);
  CHECK(strcmp(cursus_topic_metadata_leader(md, 0), broker) == 0);
  CHECK(cursus_topic_metadata_leader(md, 3) == NULL);
  CHECK_OK(cursus_topic_metadata_info(md, &def, &err));
  CHECK(cursus_topic_info_partitions(def) == 3 && cursus_topic_info_min_in_sync_replicas(def) == -1);
  cursus_topic_info_destroy(def);
  def = NULL;

  cursus_topic_info_destroy(info);
  info = NULL;
  CHECK_OK(cursus_admin_alter_topic_config(admin, topic, 1, &info, &err));
  CHECK(cursus_topic_info_min_in_sync_replicas(info) == 1);
  cursus_topic_info_destroy(info);
  info = NULL;
  CHECK_OK(cursus_admin_alter_topic_config(admin, topic, -1, &info, &err));
  CHECK(cursus_topic_info_min_in_sync_replicas(info) == -1);

  CHECK_OK(cursus_admin_list_offsets(admin, topic, -1, &offsets, &err));
  CHECK(cursus_partition_offsets_list_count(offsets) == 3);
  for (size_t i = 0; i < 3; i++)
    CHECK(cursus_partition_offsets_list_earliest(offsets, i) == 0 && cursus_partition_offsets_list_latest(offsets, i) == 0);
  CHECK(cursus_partition_offsets_list_hwm(offsets, 3) == -1);

  CHECK_OK(cursus_admin_describe_topic(admin, topic, &d, &err));
  CHECK(strcmp(cursus_topic_description_topic(d), topic) == 0);
  CHECK(cursus_topic_description_partition_count(d) == 3);
  CHECK(cursus_topic_description_partition_id(d, 2) == 2);
  CHECK(strcmp(cursus_topic_description_partition_leader(d, 0), broker) == 0);
  CHECK(cursus_topic_description_partition_replica_count(d, 0) == 1);
  CHECK(cursus_topic_description_partition_hwm(d, 0) == 0);
  CHECK_OK(cursus_topic_description_definition(d, &def, &err));
  CHECK(strcmp(cursus_topic_info_name(def), topic) == 0 && cursus_topic_info_partitions(def) == 3);

  CHECK_FAILS(CURSUS_ERR_CONFLICT,
              cursus_admin_truncate_topic(admin, topic, cursus_topic_info_revision(info) + 100, &tr, &err), &err);
  CHECK(strcmp(cursus_error_field(err, "current"), "3") == 0);
  CHECK_OK(cursus_admin_truncate_topic(admin, topic, cursus_topic_info_revision(info), &tr, &err));
  CHECK(cursus_truncate_outcome_revision(tr) == cursus_topic_info_revision(info) + 1);

  CHECK_OK(cursus_admin_help(admin, &lines, &err));
  CHECK(list_has(lines, "PUBLISH"));
  CHECK_FAILS(CURSUS_ERR_NOT_FOUND, cursus_admin_describe_topic(admin, "c-no-such-topic", &d, &err), &err);
  CHECK(d == NULL);
done:
  cursus_string_list_destroy(lines);
  cursus_truncate_outcome_destroy(tr);
  cursus_topic_description_destroy(d);
  cursus_partition_offsets_list_destroy(offsets);
  cursus_topic_metadata_destroy(md);
  cursus_topic_info_destroy(def);
  cursus_topic_info_destroy(info);
  cursus_error_destroy(err);
  if (admin) cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
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

void test_produce_and_consume_through_group(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-roundtrip");
  unique_name(group, sizeof group, "c-group");
  cursus_config_t *pc = config_for("producer", NULL), *cc = config_for("consumer", group);
  cursus_producer_t *producer = NULL;
  cursus_consumer_t *consumer = NULL, *second = NULL;
  cursus_message_t *m = NULL;
  cursus_error_t *err = NULL;
  struct delivery_state st = {0};
  const unsigned char binary[] = {'a', 0, 'b', 0, 0, 0xff};
  const char *topics[] = {topic};
  int seen = 0;
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(pc, &producer, &err));
  cursus_record_metadata_t meta;
  CHECK_OK(cursus_producer_send(producer, topic, CURSUS_ANY_PARTITION, (const uint8_t *)"k", 1, binary,
                                sizeof binary, 1700000000000, &meta, &err));
  CHECK(meta.partition == 0 && meta.offset == 0 && meta.timestamp == 1700000000000);
  /* Nine with a callback, then three without (NULL: nothing is called,
   * the records are sent all the same). */
  for (int i = 0; i < 12; i++) {
    char payload[32];
    int n = snprintf(payload, sizeof payload, "msg-%d", i);
    CHECK_OK(cursus_producer_send_cb(producer, topic, -1, NULL, 0, (const uint8_t *)payload, (size_t)n,
                                     CURSUS_NO_TIMESTAMP, i < 9 ? on_delivery : NULL, i < 9 ? &st : NULL,
                                     &err));
  }
  /* When flush returns, every callback of the records before it has run. */
  CHECK_OK(cursus_producer_flush(producer, CURSUS_DEFAULT_TIMEOUT, &err));
  CHECK(atomic_load(&st.ok) == 9 && atomic_load(&st.failed) == 0);
  CHECK(atomic_load(&st.offset_sum) == 45);

  CHECK_OK(cursus_consumer_new(cc, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(consumer, topics, 1, &err));
  for (int polls = 0; seen < 13 && polls < 200; polls++) {
    CHECK_OK(cursus_consumer_poll(consumer, 500, &m, &err));
    if (m == NULL) continue;
    CHECK(strcmp(cursus_message_topic(m), topic) == 0);
    CHECK(cursus_message_partition(m) == 0 && cursus_message_offset(m) == seen);
    size_t len = 0, klen = 0;
    const uint8_t *payload = cursus_message_payload(m, &len);
    const uint8_t *key = cursus_message_key(m, &klen);
    if (seen == 0) {
      CHECK(len == sizeof binary && memcmp(payload, binary, len) == 0);
      CHECK(klen == 1 && key[0] == 'k');
      CHECK(cursus_message_timestamp(m) > 0);
    } else {
      char expect[32];
      int n = snprintf(expect, sizeof expect, "msg-%d", seen - 1);
      CHECK(len == (size_t)n && memcmp(payload, expect, len) == 0);
      CHECK(klen == 0 && cursus_message_timestamp(m) > 0);
    }
    seen++;
    cursus_message_destroy(m);
    m = NULL;
  }
  CHECK(seen == 13);
  CHECK_OK(cursus_consumer_commit(consumer, &err));
  CHECK_OK(cursus_consumer_close(consumer, &err));
  CHECK_FAILS(CURSUS_ERR_CLOSED, cursus_consumer_poll(consumer, 0, &m, &err), &err);

  /* The group resumes after the committed position. */
  CHECK_OK(cursus_producer_send(producer, topic, 0, NULL, 0, (const uint8_t *)"after", 5, CURSUS_NO_TIMESTAMP,
                                NULL, &err));
  CHECK_OK(cursus_consumer_new(cc, &second, &err));
  CHECK_OK(cursus_consumer_subscribe(second, topics, 1, &err));
  for (int polls = 0; m == NULL && polls < 200; polls++) CHECK_OK(cursus_consumer_poll(second, 500, &m, &err));
  CHECK(m != NULL && cursus_message_offset(m) == 13);
  CHECK_OK(cursus_consumer_close(second, &err));

  /* Closed producer: CURSUS_ERR_CLOSED; destroyed: invalid handle. */
  CHECK_OK(cursus_producer_close(producer, CURSUS_DEFAULT_TIMEOUT, &err));
  CHECK_FAILS(CURSUS_ERR_CLOSED,
              cursus_producer_send(producer, topic, -1, NULL, 0, (const uint8_t *)"x", 1, CURSUS_NO_TIMESTAMP,
                                   NULL, &err),
              &err);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_VALIDATION);
  cursus_producer_destroy(producer);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_producer_send(producer, topic, -1, NULL, 0, (const uint8_t *)"x", 1, CURSUS_NO_TIMESTAMP,
                                   NULL, &err),
              &err);
  producer = NULL;
done:
  cursus_error_destroy(err);
  cursus_message_destroy(m);
  cursus_consumer_destroy(consumer);
  cursus_consumer_destroy(second);
  cursus_producer_destroy(producer);
  cursus_config_destroy(pc);
  cursus_config_destroy(cc);
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

void test_commits_assignment_and_group_status(void) {
  char prefix[64], topic[80], group[64], pattern[80];
  unique_name(prefix, sizeof prefix, "c-pat");
  snprintf(topic, sizeof topic, "%s-orders", prefix);
  snprintf(pattern, sizeof pattern, "%s-*", prefix);
  unique_name(group, sizeof group, "c-pat-group");
  cursus_config_t *c = config_for("consumer", group), *ac = config_for("admin", NULL);
  cursus_consumer_t *consumer = NULL;
  cursus_admin_t *admin = NULL;
  cursus_topic_partition_list_t *parts = NULL, *offsets = NULL;
  cursus_group_status_t *gs = NULL;
  cursus_error_t *err = NULL;
  int64_t offset = 0;
  char *member_id = NULL;
  struct commit_state st = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, CURSUS_OK};
  CHECK(create_topic(topic, 2));
  CHECK(produce_values(topic, 0, 4));
  CHECK_OK(cursus_consumer_new(c, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe_pattern(consumer, pattern, &err));
  /* Not joined yet: an empty member id. */
  CHECK_OK(cursus_consumer_member_id(consumer, &member_id, &err));
  CHECK(strcmp(member_id, "") == 0);
  cursus_string_free(member_id);
  member_id = NULL;
  CHECK_OK(cursus_consumer_committed(consumer, topic, 0, &offset, &err));
  CHECK(offset == -1);
  CHECK(take_messages(consumer, 2, NULL) == 2);
  /* Only the two messages handed out count, whatever else is buffered. */
  CHECK_OK(cursus_consumer_commit_async(consumer, on_commit, &st, &err));
  CHECK(wait_commit(&st));
  CHECK_OK(cursus_consumer_committed(consumer, topic, 0, &offset, &err));
  CHECK(offset == 2);
  CHECK(take_messages(consumer, 2, NULL) == 2);
  CHECK_OK(cursus_consumer_assignment(consumer, &parts, &err));
  CHECK(cursus_topic_partition_list_count(parts) == 2);
  CHECK(strcmp(cursus_topic_partition_list_topic(parts, 0), topic) == 0);
  CHECK(cursus_topic_partition_list_partition(parts, 0) != cursus_topic_partition_list_partition(parts, 1));
  CHECK(cursus_topic_partition_list_topic(parts, 2) == NULL);
  CHECK_OK(cursus_consumer_commit(consumer, &err));
  CHECK_OK(cursus_consumer_committed(consumer, topic, 0, &offset, &err));
  CHECK(offset == 4);
  /* Explicit offsets: committed as given (never below a committed one). */
  CHECK_OK(cursus_topic_partition_list_new(&offsets, &err));
  CHECK_OK(cursus_topic_partition_list_add(offsets, topic, 0, 4, &err));
  CHECK_OK(cursus_topic_partition_list_add(offsets, topic, 1, 0, &err));
  CHECK_OK(cursus_consumer_commit_offsets(consumer, offsets, &err));
  CHECK_OK(cursus_consumer_committed(consumer, topic, 1, &offset, &err));
  CHECK(offset == 0);
  CHECK_OK(cursus_topic_partition_list_add(offsets, topic, 1, -1, &err));
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_consumer_commit_offsets(consumer, offsets, &err), &err);
  CHECK(strstr(cursus_error_message(err), "no offset") != NULL);

  CHECK_OK(cursus_admin_new(ac, &admin, &err));
  CHECK_OK(cursus_admin_group_status(admin, group, &gs, &err));
  CHECK(strcmp(cursus_group_status_group(gs), group) == 0);
  CHECK(cursus_group_status_member_count(gs) == 1);
  CHECK(cursus_group_status_member_assignment_count(gs, 0) == 2);
  CHECK(cursus_group_status_member_id(gs, 1) == NULL);
  CHECK_OK(cursus_consumer_member_id(consumer, &member_id, &err));
  CHECK(strcmp(member_id, cursus_group_status_member_id(gs, 0)) == 0);
  cursus_string_free(member_id); /* the next call clears its out-parameter first */
  member_id = NULL;

  CHECK_OK(cursus_consumer_close(consumer, &err));
  CHECK_FAILS(CURSUS_ERR_CLOSED, cursus_consumer_member_id(consumer, &member_id, &err), &err);
  CHECK_FAILS(CURSUS_ERR_CLOSED, cursus_consumer_commit_async(consumer, on_commit, &st, &err), &err);
done:
  cursus_string_free(member_id);
  cursus_group_status_destroy(gs);
  cursus_topic_partition_list_destroy(parts);
  cursus_topic_partition_list_destroy(offsets);
  cursus_error_destroy(err);
  if (admin) cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(c);
  cursus_config_destroy(ac);
}

void test_send_to_missing_topic_fails_with_class(void) {
  cursus_config_t *c = config_for("producer", NULL);
  cursus_producer_t *producer = NULL;
  cursus_error_t *err = NULL;
  char topic[64];
  unique_name(topic, sizeof topic, "c-missing");
  set_option(c, "retries", "0");
  CHECK_OK(cursus_producer_new(c, &producer, &err));
  CHECK_FAILS(CURSUS_ERR_NOT_FOUND,
              cursus_producer_send(producer, topic, -1, NULL, 0, (const uint8_t *)"x", 1, CURSUS_NO_TIMESTAMP,
                                   NULL, &err),
              &err);
  CHECK(cursus_error_status(err) == CURSUS_ERR_NOT_FOUND);
  /* What the broker returns, in the readable form every language shows. */
  char expect[128];
  snprintf(expect, sizeof expect, "topic_not_found (not_found): topic=%s", topic);
  CHECK(strcmp(cursus_error_text(err), expect) == 0);
done:
  cursus_error_destroy(err);
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
    if (cursus_producer_send(a->producer, a->topic, -1, NULL, 0, (const uint8_t *)"t", 1, CURSUS_NO_TIMESTAMP, NULL,
                             NULL) == CURSUS_OK)
      atomic_fetch_add(a->acked, 1);
  }
  return NULL;
}

void test_concurrent_sends_on_one_producer(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-threads");
  cursus_config_t *c = config_for("producer", NULL);
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
  cursus_producer_close(producer, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(producer);
  cursus_config_destroy(c);
}

void test_poll_batch_record_view(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-batch");
  unique_name(group, sizeof group, "c-batch-group");
  cursus_config_t *c = config_for("consumer", group);
  cursus_consumer_t *consumer = NULL;
  cursus_error_t *err = NULL;
  uint8_t *buf = NULL;
  size_t len = 0;
  const char *topics[] = {topic};
  CHECK(create_topic(topic, 1));
  CHECK(produce_values(topic, 0, 3));
  CHECK_OK(cursus_consumer_new(c, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(consumer, topics, 1, &err));
  for (int polls = 0; polls < 100; polls++) {
    CHECK_OK(cursus_consumer_poll_batch(consumer, 200, 2, &buf, &len, &err));
    if (len > 4 && buf[0] > 0) break;
    cursus_buffer_free(buf, len);
    buf = NULL;
  }
  CHECK(buf != NULL);
  /* u32 count, then u32 topic length and the topic (little-endian). */
  uint32_t count = (uint32_t)buf[0] | (uint32_t)buf[1] << 8;
  CHECK(count >= 1 && count <= 2);
  uint32_t tlen = (uint32_t)buf[4] | (uint32_t)buf[5] << 8;
  CHECK(tlen == strlen(topic) && memcmp(buf + 8, topic, tlen) == 0);
done:
  cursus_buffer_free(buf, len);
  cursus_error_destroy(err);
  if (consumer) cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(c);
}
