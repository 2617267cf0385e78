/* Produce three records and consume them through a consumer group, in C.
 *   usage: produce_consume [BROKER_ADDR]   (default 127.0.0.1:9000) */
#include "cursus.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Prints the error's readable text (the same in every Cursus language). */
static int fail(const char *what, cursus_error_t *err) {
  fprintf(stderr, "%s failed: %s\n", what, cursus_error_text(err));
  cursus_error_destroy(err);
  return 1;
}

/* A configuration for one kind of client: options are checked as they are set. */
static cursus_config_t *config_for(const char *kind, const char *broker, cursus_error_t **err) {
  cursus_config_t *c = NULL;
  if (cursus_config_new_for(kind, &c, err) || cursus_config_set(c, "bootstrap_servers", broker, err)) {
    cursus_config_destroy(c);
    return NULL;
  }
  return c;
}

int main(int argc, char **argv) {
  const char *broker = argc > 1 ? argv[1] : "127.0.0.1:9000";
  char topic[64];
  snprintf(topic, sizeof topic, "example-c-%ld", (long)time(NULL));
  cursus_error_t *err = NULL;
  printf("libcursus %s, broker %s\n", cursus_version(), broker);

  cursus_config_t *config = config_for("admin", broker, &err);
  cursus_admin_t *admin = NULL;
  cursus_topic_info_t *info = NULL;
  if (!config || cursus_admin_new(config, &admin, &err)) return fail("admin", err);
  if (cursus_admin_create_topic(admin, topic, 1, &info, &err)) return fail("create_topic", err);
  printf("created %s with %u partition(s), revision %llu\n", cursus_topic_info_name(info),
         cursus_topic_info_partitions(info), (unsigned long long)cursus_topic_info_revision(info));
  cursus_topic_info_destroy(info);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_config_destroy(config);

  config = config_for("producer", broker, &err);
  cursus_producer_t *producer = NULL;
  if (!config || cursus_producer_new(config, &producer, &err)) return fail("producer", err);
  for (int i = 0; i < 3; i++) {
    char payload[32];
    int n = snprintf(payload, sizeof payload, "hello %d", i);
    cursus_record_metadata_t meta;
    if (cursus_producer_send(producer, topic, CURSUS_ANY_PARTITION, NULL, 0, (const uint8_t *)payload, (size_t)n,
                             CURSUS_NO_TIMESTAMP, &meta, &err))
      return fail("send", err);
    printf("produced %s to %s/%d@%lld\n", payload, topic, meta.partition, (long long)meta.offset);
  }
  cursus_producer_close(producer, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(producer);
  cursus_config_destroy(config);

  config = config_for("consumer", broker, &err);
  cursus_consumer_t *consumer = NULL;
  /* A group of its own: a group stays bound to the topics it consumed. */
  if (!config || cursus_config_set(config, "group_id", topic, &err)) return fail("config", err);
  if (cursus_consumer_new(config, &consumer, &err)) return fail("consumer", err);
  const char *topics[] = {topic};
  if (cursus_consumer_subscribe(consumer, topics, 1, &err)) return fail("subscribe", err);
  for (int got = 0, polls = 0; got < 3 && polls < 100; polls++) {
    cursus_message_t *m = NULL;
    if (cursus_consumer_poll(consumer, 500, &m, &err)) return fail("poll", err);
    if (!m) continue;
    size_t len = 0;
    const uint8_t *p = cursus_message_payload(m, &len);
    printf("consumed %.*s from %s/%d@%lld\n", (int)len, (const char *)p, cursus_message_topic(m),
           cursus_message_partition(m), (long long)cursus_message_offset(m));
    cursus_message_destroy(m);
    got++;
  }
  if (cursus_consumer_commit(consumer, &err)) return fail("commit", err);
  cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(config);
  printf("done\n");
  return 0;
}
