/* A first libcursus program: creates a topic, produces one record and
 * consumes it through a consumer group. `make test-install` builds it
 * against an installed libcursus with pkg-config:
 *
 *   cc -std=c11 hello.c $(pkg-config --cflags --libs cursus) -o hello
 *   ./hello 127.0.0.1:9000
 */
#include <cursus.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Prints the error's readable text (the same in every Cursus language),
 * destroys it, and gives main's exit status. */
static int fail(const char *what, cursus_error_t *err) {
  fprintf(stderr, "%s failed: %s\n", what, err ? cursus_error_text(err) : "(no error)");
  cursus_error_destroy(err);
  return 1;
}

int main(int argc, char **argv) {
  const char *broker = argc > 1 ? argv[1] : "127.0.0.1:9000";
  const char *value = "hello, cursus";
  char topic[64];
  snprintf(topic, sizeof topic, "hello-c-%ld", (long)time(NULL));
  cursus_error_t *err = NULL;

  /* One configuration serves every kind of client; each uses its own
   * options. Every call returns CURSUS_OK (0) or fills `err`. */
  cursus_config_t *config = NULL;
  if (cursus_config_new(&config, &err) || cursus_config_set(config, "bootstrap_servers", broker, &err) ||
      cursus_config_set(config, "group_id", topic, &err) || /* a group of its own */
      cursus_config_set(config, "auto_offset_reset", "earliest", &err))
    return fail("config", err);

  cursus_admin_t *admin = NULL;
  if (cursus_admin_new(config, &admin, &err) || cursus_admin_create_topic(admin, topic, 1, NULL, &err))
    return fail("create topic", err);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);

  /* A blocking send: returns once the broker acknowledged the record. */
  cursus_producer_t *producer = NULL;
  cursus_record_metadata_t where;
  if (cursus_producer_new(config, &producer, &err) ||
      cursus_producer_send(producer, topic, CURSUS_ANY_PARTITION, NULL, 0, (const uint8_t *)value, strlen(value),
                           CURSUS_NO_TIMESTAMP, &where, &err))
    return fail("produce", err);
  printf("produced \"%s\" to %s/%d@%lld\n", value, topic, where.partition, (long long)where.offset);
  cursus_producer_close(producer, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(producer);

  /* Poll one message at a time (NULL when none arrived in time). */
  cursus_consumer_t *consumer = NULL;
  cursus_message_t *message = NULL;
  const char *topics[] = {topic};
  if (cursus_consumer_new(config, &consumer, &err) || cursus_consumer_subscribe(consumer, topics, 1, &err))
    return fail("subscribe", err);
  for (int polls = 0; message == NULL && polls < 30; polls++)
    if (cursus_consumer_poll(consumer, 1000, &message, &err)) return fail("poll", err);
  if (message == NULL) {
    fprintf(stderr, "no record within 30 s\n");
    return 1;
  }
  size_t len = 0;
  const uint8_t *bytes = cursus_message_payload(message, &len);
  printf("consumed \"%.*s\" from %s/%d@%lld\n", (int)len, (const char *)bytes, cursus_message_topic(message),
         cursus_message_partition(message), (long long)cursus_message_offset(message));
  int same = len == strlen(value) && memcmp(bytes, value, len) == 0;
  cursus_message_destroy(message);
  if (cursus_consumer_commit(consumer, &err) || cursus_consumer_close(consumer, &err)) return fail("commit", err);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(config);
  return same ? 0 : 1;
}
