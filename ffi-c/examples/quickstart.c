/* Quickstart in C: create a topic, produce 1,000 records, consume them
 * through a consumer group and commit.
 *   usage: quickstart [BROKER_ADDR]   (default 127.0.0.1:9000)
 * Build: cc quickstart.c $(pkg-config --cflags --libs cursus) */
#define _POSIX_C_SOURCE 200809L

#include "cursus.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define TOPIC "quickstart-c"
#define GROUP "quickstart-c"
#define RECORDS 1000

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Prints the error's readable text (and destroys it); returns the exit
 * status for main. */
static int fail(const char *what, cursus_error_t *err) {
  fprintf(stderr, "c quickstart: %s failed: %s\n", what, cursus_error_text(err));
  cursus_error_destroy(err);
  return 1;
}

/* Delivery callback: runs once per record, on the producer's callback
 * thread (it may call the library, even this producer). */
static void on_delivery(void *user_data, const cursus_delivery_report_t *report) {
  atomic_int *failed = user_data;
  if (report->status != CURSUS_OK) atomic_fetch_add(failed, 1);
}

int main(int argc, char **argv) {
  const char *broker = argc > 1 ? argv[1] : "127.0.0.1:9000";
  long long started = now_ms();
  cursus_error_t *err = NULL;

  /* One generic config serves admin, producer and consumer: each uses its
   * own options (cursus_config_new_for makes one for a single kind). */
  cursus_config_t *config = NULL;
  if (cursus_config_new(&config, &err) || cursus_config_set(config, "bootstrap_servers", broker, &err) ||
      cursus_config_set(config, "group_id", GROUP, &err) ||
      cursus_config_set(config, "auto_offset_reset", "earliest", &err))
    return fail("config", err);

  /* The topic, with 3 partitions. Creating a topic that already exists with
   * the same settings succeeds, so the quickstart can run again. */
  cursus_admin_t *admin = NULL;
  if (cursus_admin_new(config, &admin, &err)) return fail("admin", err);
  if (cursus_admin_create_topic(admin, TOPIC, 3, NULL, &err)) return fail("create_topic", err);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);

  /* Produce: queue every record, then flush (waits for every delivery). */
  cursus_producer_t *producer = NULL;
  if (cursus_producer_new(config, &producer, &err)) return fail("producer", err);
  atomic_int failed = 0;
  for (int i = 0; i < RECORDS; i++) {
    char key[32], value[32];
    int klen = snprintf(key, sizeof key, "key-%d", i);
    int vlen = snprintf(value, sizeof value, "c record %d", i);
    if (cursus_producer_send_cb(producer, TOPIC, CURSUS_ANY_PARTITION, (const uint8_t *)key, (size_t)klen,
                                (const uint8_t *)value, (size_t)vlen, CURSUS_NO_TIMESTAMP, on_delivery, &failed, &err))
      return fail("send", err);
  }
  if (cursus_producer_flush(producer, CURSUS_DEFAULT_TIMEOUT, &err)) return fail("flush", err);
  if (atomic_load(&failed) > 0) {
    fprintf(stderr, "c quickstart: %d deliveries failed\n", atomic_load(&failed));
    return 1;
  }
  cursus_producer_close(producer, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(producer);

  /* Consume through the group until all records arrived (at most 60 s). */
  cursus_consumer_t *consumer = NULL;
  if (cursus_consumer_new(config, &consumer, &err)) return fail("consumer", err);
  const char *topics[] = {TOPIC};
  if (cursus_consumer_subscribe(consumer, topics, 1, &err)) return fail("subscribe", err);
  int consumed = 0;
  long long deadline = now_ms() + 60000;
  while (consumed < RECORDS && now_ms() < deadline) {
    cursus_message_t *m = NULL;
    if (cursus_consumer_poll(consumer, 500, &m, &err)) return fail("poll", err);
    if (m == NULL) continue; /* nothing within 500 ms */
    consumed++;
    cursus_message_destroy(m);
  }
  if (consumed < RECORDS) {
    fprintf(stderr, "c quickstart: consumed only %d of %d records in 60 s\n", consumed, RECORDS);
    return 1;
  }
  if (cursus_consumer_commit(consumer, &err)) return fail("commit", err);
  if (cursus_consumer_close(consumer, &err)) return fail("consumer close", err);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(config);

  printf("c: produced %d, consumed %d through group %s, committed (%lld ms)\n", RECORDS, consumed, GROUP,
         now_ms() - started);
  return 0;
}
