/* The C binding's figures next to the engine's (see bench_send.rs):
 *   usage: bench_c BROKER_ADDR N ENGINE.json OUT.json
 * ENGINE.json is what `bench_send engine` wrote just before against the same
 * broker; OUT.json gets this program's figures and the ratios to it.
 * Workload: N records of 100 B to 4 partitions (the partitioner choosing),
 * acks=1, batch_size 256 KiB; per record (cursus_producer_send_cb, no
 * callback), in batches of 1000 (cursus_producer_send_batch, one callback
 * each), consumed with cursus_consumer_poll_batch (up to 10,000 per call). */
#define _POSIX_C_SOURCE 200809L
#include "cursus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PAYLOAD 100
#define BATCH 1000

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld", &kib) == 1) break;
  fclose(f);
  return kib;
}

/* A number after "key": in a small JSON file (0 when absent). */
static double json_number(const char *path, const char *key) {
  static char buf[8192];
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char pattern[128];
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  const char *at = strstr(buf, pattern);
  return at ? atof(at + strlen(pattern)) : 0;
}

static void die(const char *what, cursus_error_t *e) {
  fprintf(stderr, "%s failed: %s\n", what, e ? cursus_error_message(e) : "");
  exit(1);
}

static void create_topic(cursus_admin_t *admin, const char *topic) {
  cursus_error_t *e = NULL;
  if (cursus_admin_create_topic(admin, topic, 4, NULL, &e) != CURSUS_OK) die("create topic", e);
}

static size_t put32(uint8_t *b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + i] = (uint8_t)(v >> (8 * i));
  return at + 4;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: bench_c BROKER_ADDR N ENGINE.json OUT.json\n");
    return 2;
  }
  const char *broker = argv[1];
  int n = atoi(argv[2]);
  char t_record[64], t_batch[64], group[64];
  snprintf(t_record, sizeof t_record, "bench-c-record-%ld", (long)getpid());
  snprintf(t_batch, sizeof t_batch, "bench-c-batch-%ld", (long)getpid());
  snprintf(group, sizeof group, "bench-c-group-%ld", (long)getpid());
  long rss_start = rss_kib();
  cursus_config_t *pc = NULL, *cc = NULL;
  cursus_config_new(&pc, NULL);
  cursus_config_set(pc, "bootstrap_servers", broker, NULL);
  cursus_config_set(pc, "acks", "1", NULL);
  cursus_config_set(pc, "batch_size", "262144", NULL);
  cursus_config_new(&cc, NULL);
  cursus_config_set(cc, "bootstrap_servers", broker, NULL);
  cursus_config_set(cc, "group_id", group, NULL);
  cursus_config_set(cc, "max_poll_records", "10000", NULL);
  cursus_config_set(cc, "fetch_max_records", "8192", NULL);
  cursus_admin_t *admin = NULL;
  cursus_producer_t *p = NULL;
  cursus_consumer_t *c = NULL;
  cursus_error_t *e = NULL;
  if (cursus_admin_new(pc, &admin, &e) != CURSUS_OK) die("admin", e);
  create_topic(admin, t_record);
  create_topic(admin, t_batch);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  if (cursus_producer_new(pc, &p, &e) != CURSUS_OK) die("producer", e);
  if (cursus_consumer_new(cc, &c, &e) != CURSUS_OK) die("consumer", e);
  const char *topics[] = {t_batch};
  if (cursus_consumer_subscribe(c, topics, 1, &e) != CURSUS_OK) die("subscribe", e);
  /* A connected producer and consumer, before any traffic. */
  long rss_idle = rss_kib();

  static uint8_t payload[PAYLOAD];
  memset(payload, 'x', sizeof payload);
  double start = now_s();
  for (int i = 0; i < n; i++)
    if (cursus_producer_send_cb(p, t_record, CURSUS_ANY_PARTITION, NULL, 0, payload, sizeof payload,
                                CURSUS_NO_TIMESTAMP, NULL, NULL, &e) != CURSUS_OK)
      die("send_cb", e);
  double call_us = (now_s() - start) * 1e6 / n;
  if (cursus_producer_flush(p, CURSUS_NO_TIMEOUT, &e) != CURSUS_OK) die("flush", e);
  double per_record = n / (now_s() - start);

  size_t cap = 4 + (size_t)BATCH * (24 + PAYLOAD);
  uint8_t *packed = malloc(cap);
  start = now_s();
  for (int sent = 0; sent < n;) {
    int count = n - sent < BATCH ? n - sent : BATCH;
    size_t at = put32(packed, 0, (uint32_t)count);
    for (int i = 0; i < count; i++) {
      at = put32(packed, at, UINT32_MAX);                 /* topic -1: the batch's */
      at = put32(packed, at, UINT32_MAX);                 /* partition -1: any */
      at = put32(packed, at, 0);                          /* timestamp: INT64_MIN, */
      at = put32(packed, at, 0x80000000u);                /* little-endian */
      at = put32(packed, at, UINT32_MAX);                 /* no key */
      at = put32(packed, at, PAYLOAD);
      memcpy(packed + at, payload, PAYLOAD);
      at += PAYLOAD;
    }
    if (cursus_producer_send_batch(p, t_batch, packed, at, NULL, NULL, &e) != CURSUS_OK) die("send_batch", e);
    sent += count;
  }
  if (cursus_producer_flush(p, CURSUS_NO_TIMEOUT, &e) != CURSUS_OK) die("flush", e);
  double batch = n / (now_s() - start);
  free(packed);

  start = now_s();
  long seen = 0;
  while (seen < n) {
    uint8_t *buf = NULL;
    size_t len = 0;
    if (cursus_consumer_poll_batch(c, 5000, 10000, &buf, &len, &e) != CURSUS_OK) die("poll_batch", e);
    if (len >= 4) seen += (long)buf[0] | (long)buf[1] << 8 | (long)buf[2] << 16 | (long)buf[3] << 24;
    cursus_buffer_free(buf, len);
  }
  double consume = n / (now_s() - start);
  cursus_consumer_close(c, NULL);
  cursus_consumer_destroy(c);
  cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(p);
  cursus_config_destroy(pc);
  cursus_config_destroy(cc);

  double ep = json_number(argv[3], "engine_produce_records_per_s");
  double ec = json_number(argv[3], "engine_consume_records_per_s");
  FILE *out = fopen(argv[4], "w");
  if (!out) die("open the output", NULL);
  fprintf(out,
          "{\"binding\": \"c\", \"command\": \"%s %s %s %s %s\", \"records\": %d, \"payload_bytes\": %d,\n"
          " \"partitions\": 4, \"batch_records\": %d,\n"
          " \"engine_produce_records_per_s\": %.0f, \"engine_consume_records_per_s\": %.0f,\n"
          " \"produce_batch_records_per_s\": %.0f, \"produce_per_record_records_per_s\": %.0f,\n"
          " \"send_call_us\": %.3f, \"consume_records_per_s\": %.0f,\n"
          " \"rss_before_clients_kib\": %ld, \"idle_client_rss_kib\": %ld,\n"
          " \"ratio_produce_batch\": %.3f, \"ratio_produce_per_record\": %.3f, \"ratio_consume\": %.3f}\n",
          argv[0], argv[1], argv[2], argv[3], argv[4], n, PAYLOAD, BATCH, ep, ec, batch, per_record, call_us,
          consume, rss_start, rss_idle, ep > 0 ? batch / ep : 0, ep > 0 ? per_record / ep : 0,
          ec > 0 ? consume / ec : 0);
  fclose(out);
  printf("C: batch %.0f records/s (%.2f of the engine), per record %.0f records/s (%.2f), %.2f us per send call;"
         " consume %.0f records/s (%.2f); idle producer+consumer RSS %ld KiB (%ld before)\n",
         batch, ep > 0 ? batch / ep : 0, per_record, ep > 0 ? per_record / ep : 0, call_us, consume,
         ec > 0 ? consume / ec : 0, rss_idle, rss_start);
  return 0;
}
