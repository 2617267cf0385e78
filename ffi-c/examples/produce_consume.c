/* Produce three records and consume them through a consumer group, in C.
 *   usage: produce_consume [BROKER_ADDR]   (default 127.0.0.1:9000) */
#include "cursus.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int fail(const char *what, cursus_status_t s, cursus_error_t *err) {
  fprintf(stderr, "%s failed: %s [%s/%s] %s\n", what, cursus_status_name(s), cursus_error_class_name(err),
          cursus_error_code(err), cursus_error_message(err));
  cursus_error_free(err);
  return 1;
}

int main(int argc, char **argv) {
  const char *broker = argc > 1 ? argv[1] : "127.0.0.1:9000";
  char topic[64];
  snprintf(topic, sizeof topic, "example-c-%ld", (long)time(NULL));
  cursus_error_t *err = NULL;
  cursus_status_t s;
  printf("libcursus %s, broker %s\n", cursus_version(), broker);

  cursus_config_t *config = cursus_config_new();
  if ((s = cursus_config_set(config, "bootstrap_servers", broker, &err))) return fail("config", s, err);
  if ((s = cursus_config_set(config, "group_id", "example-c", &err))) return fail("config", s, err);

  cursus_admin_t *admin = NULL;
  if ((s = cursus_admin_new(config, &admin, &err))) return fail("admin", s, err);
  if ((s = cursus_admin_create_topic(admin, topic, 1, &err))) return fail("create_topic", s, err);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);

  cursus_producer_t *producer = NULL;
  if ((s = cursus_producer_new(config, &producer, &err))) return fail("producer", s, err);
  for (int i = 0; i < 3; i++) {
    char payload[32];
    int n = snprintf(payload, sizeof payload, "hello %d", i);
    cursus_record_metadata_t meta;
    s = cursus_producer_send(producer, topic, -1, NULL, 0, (const uint8_t *)payload, (size_t)n, &meta, &err);
    if (s) return fail("send", s, err);
    printf("produced %s to %s/%d@%lld\n", payload, topic, meta.partition, (long long)meta.offset);
  }
  cursus_producer_close(producer, 10000, NULL);
  cursus_producer_destroy(producer);

  cursus_consumer_t *consumer = NULL;
  if ((s = cursus_consumer_new(config, &consumer, &err))) return fail("consumer", s, err);
  const char *topics[] = {topic};
  if ((s = cursus_consumer_subscribe(consumer, topics, 1, &err))) return fail("subscribe", s, err);
  for (int got = 0, polls = 0; got < 3 && polls < 100; polls++) {
    cursus_message_t *m = NULL;
    if ((s = cursus_consumer_poll(consumer, 500, &m, &err))) return fail("poll", s, err);
    if (!m) continue;
    size_t len = 0;
    const uint8_t *p = cursus_message_payload(m, &len);
    printf("consumed %.*s from %s/%d@%lld\n", (int)len, (const char *)p, cursus_message_topic(m),
           cursus_message_partition(m), (long long)cursus_message_offset(m));
    cursus_message_destroy(m);
    got++;
  }
  if ((s = cursus_consumer_commit(consumer, &err))) return fail("commit", s, err);
  cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(config);
  printf("done\n");
  return 0;
}
