/* The C rows of `make bench-peer` (tools/bench-peer/README.md): libcursus
 * (include/cursus.h) against librdkafka, the same workload through each.
 *
 *   bench_peer_c cursus|rdkafka produce|consume BOOTSTRAP TOPIC N
 *
 * The topic exists already (run.py creates it, 4 partitions). produce: a
 * cold producer (no send before the measured ones) queues N records of
 * 100 B, partitions round-robin, acks=1, linger 5 ms, batches of up to
 * 256 KiB, no delivery callback, then flushes; records/s from the first call
 * to the end of the flush, and µs per call for the calls alone. Both queues
 * hold every record (librdkafka fails a call when its queue is full, ours
 * would block), so the calls are queueing only. consume: one group member
 * polls one record at a time; records/s from the first record to the last
 * (the group join left out). Prints one JSON object. */
#define _POSIX_C_SOURCE 200809L
#include "cursus.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAYLOAD 100
#define PARTITIONS 4
#define POLL_MS 1000
#define CONSUME_LIMIT_S 300.0

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why) {
  fprintf(stderr, "%s failed: %s\n", what, why ? why : "");
  exit(1);
}

static void die_cursus(const char *what, cursus_error_t *e) {
  die(what, e ? cursus_error_text(e) : NULL);
}

/* What a run measured: records/s, and µs per call (produce only, else < 0). */
typedef struct {
  double records_per_s;
  double per_call_us;
} figures_t;

/* One poll of at most POLL_MS: 1 when it returned a record, else 0. */
typedef int (*poll_one_t)(void *consumer);

/* Polls until n records arrived (exits after CONSUME_LIMIT_S); records/s
 * from the first record (its own arrival left out) to the last. */
static double consume_all(long n, poll_one_t poll_one, void *consumer) {
  long got = 0;
  double first_at = 0, deadline = now_s() + CONSUME_LIMIT_S;
  while (got < n && now_s() < deadline)
    if (poll_one(consumer) && got++ == 0) first_at = now_s();
  double last_at = now_s();
  if (got < n) die("consume", "not every record arrived in time");
  return last_at > first_at ? (n - 1) / (last_at - first_at) : 0;
}

/* ---- ours: libcursus ---------------------------------------------------- */

static cursus_config_t *cursus_config(const char *bootstrap) {
  cursus_config_t *c = NULL;
  cursus_error_t *e = NULL;
  if (cursus_config_new(&c, &e) != CURSUS_OK ||
      cursus_config_set(c, "bootstrap_servers", bootstrap, &e) != CURSUS_OK)
    die_cursus("config", e);
  return c;
}

static void cursus_set(cursus_config_t *c, const char *key, const char *value) {
  cursus_error_t *e = NULL;
  if (cursus_config_set(c, key, value, &e) != CURSUS_OK) die_cursus(key, e);
}

static figures_t cursus_produce(const char *bootstrap, const char *topic, long n) {
  cursus_config_t *c = cursus_config(bootstrap);
  char room[32];
  snprintf(room, sizeof room, "%ld", 64L * 1024 * 1024 + n * 256L); /* every record fits */
  cursus_set(c, "acks", "1");
  cursus_set(c, "linger_ms", "5");
  cursus_set(c, "batch_size", "262144");
  cursus_set(c, "buffer_memory", room);
  cursus_producer_t *p = NULL;
  cursus_error_t *e = NULL;
  if (cursus_producer_new(c, &p, &e) != CURSUS_OK) die_cursus("producer", e);
  static uint8_t payload[PAYLOAD];
  memset(payload, 'x', sizeof payload);
  double start = now_s();
  for (long i = 0; i < n; i++)
    if (cursus_producer_send_cb(p, topic, (int32_t)(i % PARTITIONS), NULL, 0, payload, sizeof payload,
                                CURSUS_NO_TIMESTAMP, NULL, NULL, &e) != CURSUS_OK)
      die_cursus("send_cb", e);
  double calls = now_s() - start;
  if (cursus_producer_flush(p, CURSUS_NO_TIMEOUT, &e) != CURSUS_OK) die_cursus("flush", e);
  double total = now_s() - start;
  if (cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, &e) != CURSUS_OK) die_cursus("close", e);
  cursus_producer_destroy(p);
  cursus_config_destroy(c);
  return (figures_t){n / total, calls / n * 1e6};
}

static int cursus_poll_one(void *consumer) {
  cursus_message_t *m = NULL;
  cursus_error_t *e = NULL;
  if (cursus_consumer_poll(consumer, POLL_MS, &m, &e) != CURSUS_OK) die_cursus("poll", e);
  if (!m) return 0;
  cursus_message_destroy(m);
  return 1;
}

static figures_t cursus_consume(const char *bootstrap, const char *topic, long n) {
  cursus_config_t *c = cursus_config(bootstrap);
  char group[300];
  snprintf(group, sizeof group, "g-%s", topic);
  cursus_set(c, "group_id", group);
  cursus_set(c, "auto_offset_reset", "earliest");
  cursus_set(c, "fetch_max_records", "8192");
  cursus_consumer_t *consumer = NULL;
  cursus_error_t *e = NULL;
  if (cursus_consumer_new(c, &consumer, &e) != CURSUS_OK) die_cursus("consumer", e);
  const char *topics[] = {topic};
  if (cursus_consumer_subscribe(consumer, topics, 1, &e) != CURSUS_OK) die_cursus("subscribe", e);
  double rate = consume_all(n, cursus_poll_one, consumer);
  if (cursus_consumer_close(consumer, &e) != CURSUS_OK) die_cursus("close", e);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(c);
  return (figures_t){rate, -1};
}

/* ---- the peer: librdkafka ----------------------------------------------- */

static rd_kafka_conf_t *rd_config(const char *bootstrap) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  char err[512];
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err) != RD_KAFKA_CONF_OK)
    die("bootstrap.servers", err);
  return conf;
}

static void rd_set(rd_kafka_conf_t *conf, const char *key, const char *value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) die(key, err);
}

static figures_t rd_produce(const char *bootstrap, const char *topic, long n) {
  rd_kafka_conf_t *conf = rd_config(bootstrap);
  char room[32];
  snprintf(room, sizeof room, "%ld", n + 1000); /* every record fits */
  rd_set(conf, "acks", "1");
  rd_set(conf, "linger.ms", "5");
  rd_set(conf, "batch.size", "262144");
  rd_set(conf, "queue.buffering.max.messages", room);
  rd_set(conf, "queue.buffering.max.kbytes", "2097151");
  char err[512];
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) die("rd_kafka_new", err);
  rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
  static char payload[PAYLOAD];
  memset(payload, 'x', sizeof payload);
  double start = now_s();
  for (long i = 0; i < n; i++)
    if (rd_kafka_produce(rkt, (int32_t)(i % PARTITIONS), RD_KAFKA_MSG_F_COPY, payload, sizeof payload, NULL, 0,
                         NULL) == -1)
      die("rd_kafka_produce", rd_kafka_err2str(rd_kafka_last_error()));
  double calls = now_s() - start;
  rd_kafka_resp_err_t flushed = rd_kafka_flush(rk, 120000);
  double total = now_s() - start;
  if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR || rd_kafka_outq_len(rk) != 0)
    die("rd_kafka_flush", rd_kafka_err2str(flushed));
  rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk);
  return (figures_t){n / total, calls / n * 1e6};
}

static int rd_poll_one(void *rk) {
  rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, POLL_MS);
  if (!m) return 0;
  int ok = m->err == RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_message_destroy(m);
  return ok;
}

static figures_t rd_consume(const char *bootstrap, const char *topic, long n) {
  rd_kafka_conf_t *conf = rd_config(bootstrap);
  char group[300];
  snprintf(group, sizeof group, "g-%s", topic);
  rd_set(conf, "group.id", group);
  rd_set(conf, "auto.offset.reset", "earliest");
  char err[512];
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) die("rd_kafka_new", err);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, topic, RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t r = rd_kafka_subscribe(rk, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (r) die("rd_kafka_subscribe", rd_kafka_err2str(r));
  double rate = consume_all(n, rd_poll_one, rk);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return (figures_t){rate, -1};
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: bench_peer_c cursus|rdkafka produce|consume BOOTSTRAP TOPIC N\n");
    return 2;
  }
  const char *client = argv[1], *mode = argv[2], *bootstrap = argv[3], *topic = argv[4];
  long n = atol(argv[5]);
  int ours = strcmp(client, "cursus") == 0, produce = strcmp(mode, "produce") == 0;
  if ((!ours && strcmp(client, "rdkafka") != 0) || (!produce && strcmp(mode, "consume") != 0) || n <= 0) {
    fprintf(stderr, "usage: bench_peer_c cursus|rdkafka produce|consume BOOTSTRAP TOPIC N\n");
    return 2;
  }
  figures_t f = ours ? (produce ? cursus_produce : cursus_consume)(bootstrap, topic, n)
                     : (produce ? rd_produce : rd_consume)(bootstrap, topic, n);
  printf("{\"client\": \"%s\", \"version\": \"%s\", \"mode\": \"%s\", \"records\": %ld, \"records_per_s\": %.0f",
         client, ours ? cursus_version() : rd_kafka_version_str(), mode, n, f.records_per_s);
  if (f.per_call_us >= 0) printf(", \"per_call_us\": %.3f", f.per_call_us);
  printf("}\n");
  return 0;
}
