/* Cost of one blocking cursus_producer_send from C (see bench_send.rs).
 *   usage: bench_send BROKER_ADDR [N] */
#define _POSIX_C_SOURCE 200809L
#include "cursus.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int n = argc > 2 ? atoi(argv[2]) : 2000;
  char topic[64];
  snprintf(topic, sizeof topic, "bench-c-%ld", (long)getpid());
  cursus_config_t *c = NULL;
  cursus_config_new(&c, NULL);
  cursus_config_set(c, "bootstrap_servers", argv[1], NULL);
  cursus_config_set(c, "linger_ms", "0", NULL);
  cursus_config_set(c, "acks", "1", NULL);
  cursus_admin_t *admin = NULL;
  cursus_producer_t *p = NULL;
  if (cursus_admin_new(c, &admin, NULL) || cursus_admin_create_topic(admin, topic, 1, NULL, NULL) ||
      cursus_producer_new(c, &p, NULL)) {
    fprintf(stderr, "setup failed\n");
    return 1;
  }
  static const uint8_t payload[100];
  double start = now_ns();
  for (int i = 0; i < n; i++) {
    if (cursus_producer_send(p, topic, 0, NULL, 0, payload, sizeof payload, CURSUS_NO_TIMESTAMP, NULL, NULL) != CURSUS_OK) {
      fprintf(stderr, "send failed\n");
      return 1;
    }
  }
  printf("C ABI cursus_producer_send (from C): %.0f ns/send (%d sends)\n", (now_ns() - start) / n, n);
  int q = n * 10;
  start = now_ns();
  for (int i = 0; i < q; i++) {
    if (cursus_producer_send_cb(p, topic, 0, NULL, 0, payload, sizeof payload, CURSUS_NO_TIMESTAMP, NULL, NULL, NULL) != CURSUS_OK) {
      fprintf(stderr, "send_cb failed\n");
      return 1;
    }
  }
  printf("C ABI cursus_producer_send_cb (queue only, from C): %.0f ns/record (%d records)\n", (now_ns() - start) / q, q);
  cursus_producer_flush(p, CURSUS_NO_TIMEOUT, NULL);
  cursus_producer_close(p, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(p);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
  return 0;
}
