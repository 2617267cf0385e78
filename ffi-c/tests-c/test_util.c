/* Shared helpers of the C tests (see test_util.h). */
#include "test_util.h"

#include <unistd.h>

int failed_checks;
const char *broker;

int ok_(cursus_status_t s, cursus_error_t *e, const char *what, int line) {
  if (s == CURSUS_OK && e == NULL) return 1;
  fprintf(stderr, "  line %d: %s -> %s: %s\n", line, what, cursus_status_name(s),
          e ? cursus_error_text(e) : "(no error)");
  cursus_error_destroy(e);
  failed_checks++;
  return 0;
}

static int counter;
void unique_name(char *buf, size_t n, const char *prefix) {
  snprintf(buf, n, "%s-%ld-%d", prefix, (long)getpid(), ++counter);
}

void set_option(cursus_config_t *c, const char *key, const char *value) {
  cursus_error_t *err = NULL;
  if (cursus_config_set(c, key, value, &err) != CURSUS_OK) {
    fprintf(stderr, "cannot set %s=%s: %s\n", key, value, cursus_error_text(err));
    abort();
  }
}

cursus_config_t *config_for(const char *kind, const char *group) {
  cursus_config_t *c = NULL;
  if (cursus_config_new_for(kind, &c, NULL) != CURSUS_OK) abort();
  set_option(c, "bootstrap_servers", broker);
  if (group) set_option(c, "group_id", group);
  if (group) set_option(c, "fetch_max_wait_ms", "50");
  return c;
}

int create_topic(const char *topic, unsigned partitions) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  int good = ok_(cursus_admin_new(c, &admin, &err), err, "admin_new", __LINE__) &&
             ok_(cursus_admin_create_topic(admin, topic, partitions, NULL, &err), err, "create_topic", __LINE__);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
  return good;
}

int produce_values(const char *topic, int partition, int count) {
  cursus_config_t *c = config_for("producer", NULL);
  cursus_producer_t *p = NULL;
  cursus_error_t *err = NULL;
  int good = ok_(cursus_producer_new(c, &p, &err), err, "producer_new", __LINE__);
  for (int i = 0; good && i < count; i++) {
    char v[16];
    int n = snprintf(v, sizeof v, "v%d", i);
    good = ok_(cursus_producer_send(p, topic, partition, NULL, 0, (const uint8_t *)v, (size_t)n,
                                    CURSUS_NO_TIMESTAMP, NULL, &err),
               err, "send", __LINE__);
  }
  cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(p);
  cursus_config_destroy(c);
  return good;
}

int take_messages(cursus_consumer_t *c, int n, int64_t *offsets) {
  int got = 0;
  for (int polls = 0; got < n && polls < 100; polls++) {
    cursus_message_t *m = NULL;
    cursus_error_t *err = NULL;
    if (!ok_(cursus_consumer_poll(c, 200, &m, &err), err, "poll", __LINE__)) break;
    if (m == NULL) continue;
    if (offsets) offsets[got] = cursus_message_offset(m);
    got++;
    cursus_message_destroy(m);
  }
  return got;
}

cursus_message_t *next_message(cursus_consumer_t *c) {
  for (int i = 0; i < 100; i++) {
    cursus_message_t *m = NULL;
    cursus_error_t *e = NULL;
    if (cursus_consumer_poll(c, 200, &m, &e) != CURSUS_OK) {
      fprintf(stderr, "  poll: %s\n", cursus_error_text(e));
      cursus_error_destroy(e);
      return NULL;
    }
    if (m) return m;
  }
  return NULL;
}

int str_is(const char *got, const char *want) { return got != NULL && strcmp(got, want) == 0; }
