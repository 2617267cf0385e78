/* Conformance driver for the C binding (include/cursus.h only).
 *
 *   usage: driver <bootstrap host:port> <plan file>
 *
 * Runs each plan step through libcursus and prints one JSON line per step on
 * stdout (flushed). The contract is conformance/PROTOCOL.md; the harness
 * compares the results. A failed step never stops the plan; the exit status
 * is 0 once every step has been answered. Diagnostics go to stderr. */
#define _POSIX_C_SOURCE 200809L

#include "cursus.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Growable string buffer and JSON writing                                   */

typedef struct {
  char *data;
  size_t len, cap;
} buf_t;

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) {
    fprintf(stderr, "driver: out of memory\n");
    exit(2);
  }
  return q;
}

static void buf_reserve(buf_t *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  b->data = xrealloc(b->data, cap);
  b->cap = cap;
}

static void buf_putn(buf_t *b, const char *s, size_t n) {
  buf_reserve(b, n);
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static void buf_puts(buf_t *b, const char *s) { buf_putn(b, s, strlen(s)); }

static void buf_printf(buf_t *b, const char *fmt, ...) {
  va_list ap, copy;
  va_start(ap, fmt);
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n > 0) {
    buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
  }
  va_end(ap);
}

static void buf_free(buf_t *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

/* Takes the buffer's string (never NULL); the buffer is left empty. */
static char *buf_take(buf_t *b) {
  char *s = b->data;
  if (!s) {
    s = xrealloc(NULL, 1);
    s[0] = '\0';
  }
  b->data = NULL;
  b->len = b->cap = 0;
  return s;
}

/* A JSON string literal: escapes '"', '\\' and control characters. */
static void buf_json_str(buf_t *b, const char *s) {
  buf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    switch (*p) {
      case '"': buf_puts(b, "\\\""); break;
      case '\\': buf_puts(b, "\\\\"); break;
      case '\n': buf_puts(b, "\\n"); break;
      case '\r': buf_puts(b, "\\r"); break;
      case '\t': buf_puts(b, "\\t"); break;
      case '\b': buf_puts(b, "\\b"); break;
      case '\f': buf_puts(b, "\\f"); break;
      default:
        if (*p < 0x20)
          buf_printf(b, "\\u%04x", *p);
        else
          buf_putn(b, (const char *)p, 1);
    }
  }
  buf_puts(b, "\"");
}

static void buf_hex(buf_t *b, const uint8_t *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  buf_reserve(b, 2 * n + 2);
  buf_puts(b, "\"");
  for (size_t i = 0; i < n; i++) {
    char pair[2] = {digits[p[i] >> 4], digits[p[i] & 15]};
    buf_putn(b, pair, 2);
  }
  buf_puts(b, "\"");
}

/* The binding's error as the protocol's error object (code, class,
 * retryable, fields) -- accessors' values, unchanged. */
static char *error_json(const cursus_error_t *e) {
  buf_t b = {0};
  if (!e) {
    /* A failing status always comes with an error; if not, that is a bug
     * to surface, not a code to invent. */
    fprintf(stderr, "driver: the binding failed without an error object\n");
    buf_puts(&b, "{\"code\": \"driver_error\", \"class\": \"internal\", \"retryable\": false, \"fields\": {}}");
    return buf_take(&b);
  }
  buf_puts(&b, "{\"code\": ");
  buf_json_str(&b, cursus_error_code(e));
  buf_puts(&b, ", \"class\": ");
  buf_json_str(&b, cursus_error_class_name(e));
  buf_printf(&b, ", \"retryable\": %s, \"fields\": {", cursus_error_retryable(e) ? "true" : "false");
  for (size_t i = 0, n = cursus_error_field_count(e); i < n; i++) {
    if (i) buf_puts(&b, ", ");
    buf_json_str(&b, cursus_error_field_name(e, i));
    buf_puts(&b, ": ");
    buf_json_str(&b, cursus_error_field_value(e, i));
  }
  buf_puts(&b, "}}");
  const char *msg = cursus_error_message(e);
  fprintf(stderr, "driver: binding error %s: %s\n", cursus_error_code(e), msg ? msg : "");
  return buf_take(&b);
}

static char *driver_error_json(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "driver error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  buf_t b = {0};
  buf_puts(&b, "{\"code\": \"driver_error\", \"class\": \"internal\", \"retryable\": false, \"fields\": {}}");
  return buf_take(&b);
}

/* ------------------------------------------------------------------------ */
/* Plan steps                                                                */

typedef struct {
  char *name, *value;
} kv_t;

typedef struct {
  char *op;
  kv_t *args; /* the op's own arguments */
  size_t nargs;
  kv_t *config; /* everything else, in plan order */
  size_t nconfig;
} step_t;

/* Arguments named config.<option> are configuration (PROTOCOL.md, "Plan file"). */
static const char CONFIG_PREFIX[] = "config.";

static void step_free(step_t *s) {
  free(s->op);
  for (size_t i = 0; i < s->nargs; i++) free(s->args[i].name), free(s->args[i].value);
  for (size_t i = 0; i < s->nconfig; i++) free(s->config[i].name), free(s->config[i].value);
  free(s->args);
  free(s->config);
  memset(s, 0, sizeof *s);
}

static char *dupn(const char *s, size_t n) {
  char *d = xrealloc(NULL, n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* Parses one step line (modified in place); NULL on success, else why not. */
static const char *parse_step(char *line, step_t *s, char *why, size_t why_len) {
  memset(s, 0, sizeof *s);
  char *save = NULL;
  char *word = strtok_r(line, " \t", &save);
  if (!word) return "empty step";
  s->op = dupn(word, strlen(word));
  while ((word = strtok_r(NULL, " \t", &save))) {
    char *eq = strchr(word, '=');
    if (!eq || eq == word) {
      snprintf(why, why_len, "argument without name=value: %s", word);
      return why;
    }
    size_t skip = strncmp(word, CONFIG_PREFIX, sizeof CONFIG_PREFIX - 1) == 0 ? sizeof CONFIG_PREFIX - 1 : 0;
    kv_t kv = {dupn(word + skip, (size_t)(eq - word) - skip), dupn(eq + 1, strlen(eq + 1))};
    if (!skip) {
      s->args = xrealloc(s->args, (s->nargs + 1) * sizeof *s->args);
      s->args[s->nargs++] = kv;
    } else {
      s->config = xrealloc(s->config, (s->nconfig + 1) * sizeof *s->config);
      s->config[s->nconfig++] = kv;
    }
  }
  return NULL;
}

static const char *arg(const step_t *s, const char *name) {
  for (size_t i = 0; i < s->nargs; i++)
    if (strcmp(s->args[i].name, name) == 0) return s->args[i].value;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Argument conversions: each returns 0 and sets *err on failure.           */

static int need(const step_t *s, const char *name, const char **out, char **err) {
  *out = arg(s, name);
  if (!*out) {
    *err = driver_error_json("%s: missing argument %s", s->op, name);
    return 0;
  }
  return 1;
}

static int num_i64(const step_t *s, const char *name, int64_t *out, char **err) {
  const char *v;
  if (!need(s, name, &v, err)) return 0;
  char *end = NULL;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || !*v || *end) {
    *err = driver_error_json("%s: %s=%s is not a number", s->op, name, v);
    return 0;
  }
  *out = (int64_t)x;
  return 1;
}

static int num_u64(const step_t *s, const char *name, uint64_t *out, char **err) {
  const char *v;
  if (!need(s, name, &v, err)) return 0;
  char *end = NULL;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || !*v || *end || *v == '-') {
    *err = driver_error_json("%s: %s=%s is not an unsigned number", s->op, name, v);
    return 0;
  }
  *out = (uint64_t)x;
  return 1;
}

static int num_u32(const step_t *s, const char *name, uint32_t *out, char **err) {
  uint64_t x;
  if (!num_u64(s, name, &x, err)) return 0;
  if (x > UINT32_MAX) {
    *err = driver_error_json("%s: %s is out of range", s->op, name);
    return 0;
  }
  *out = (uint32_t)x;
  return 1;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes hex argument `name`: *present tells whether it was given. */
static int hex_arg(const step_t *s, const char *name, uint8_t **out, size_t *len, int *present, char **err) {
  const char *v = arg(s, name);
  *out = NULL;
  *len = 0;
  *present = v != NULL;
  if (!v) return 1;
  size_t n = strlen(v);
  if (n % 2) goto bad;
  *out = xrealloc(NULL, n / 2 + 1);
  for (size_t i = 0; i < n / 2; i++) {
    int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);
    if (hi < 0 || lo < 0) goto bad;
    (*out)[i] = (uint8_t)(hi << 4 | lo);
  }
  *len = n / 2;
  return 1;
bad:
  free(*out);
  *out = NULL;
  *err = driver_error_json("%s: %s is not hex", s->op, name);
  return 0;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms) {
  if (ms <= 0) return;
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------ */
/* Named handles                                                             */

typedef struct {
  char *name;
  void *handle;
} named_t;

typedef struct {
  named_t *items;
  size_t n;
} table_t;

static table_t admins, producers, consumers, stores;

static void *table_get(const table_t *t, const char *name) {
  /* Newest first: a name opened twice refers to its latest handle. */
  for (size_t i = t->n; i-- > 0;)
    if (strcmp(t->items[i].name, name) == 0) return t->items[i].handle;
  return NULL;
}

static void table_put(table_t *t, const char *name, void *handle) {
  t->items = xrealloc(t->items, (t->n + 1) * sizeof *t->items);
  t->items[t->n].name = dupn(name, strlen(name));
  t->items[t->n].handle = handle;
  t->n++;
}

static const char *bootstrap;

/* A config for `kind` with bootstrap_servers first, then the step's configuration. */
static cursus_config_t *make_config(const step_t *s, const char *kind, char **err) {
  cursus_config_t *c = NULL;
  cursus_error_t *e = NULL;
  if (cursus_config_new_for(kind, &c, &e) != CURSUS_OK) goto fail;
  if (cursus_config_set(c, "bootstrap_servers", bootstrap, &e) != CURSUS_OK) goto fail;
  for (size_t i = 0; i < s->nconfig; i++)
    if (cursus_config_set(c, s->config[i].name, s->config[i].value, &e) != CURSUS_OK) goto fail;
  return c;
fail:
  *err = error_json(e);
  cursus_error_destroy(e);
  cursus_config_destroy(c);
  return NULL;
}

/* The admin named by `admin=`, or the implicit one (opened on first use). */
static cursus_admin_t *get_admin(const step_t *s, char **err) {
  const char *name = arg(s, "admin");
  if (name) {
    cursus_admin_t *a = table_get(&admins, name);
    if (!a) *err = driver_error_json("%s: no admin named %s", s->op, name);
    return a;
  }
  cursus_admin_t *a = table_get(&admins, "");
  if (a) return a;
  step_t bare = {0};
  cursus_config_t *c = make_config(&bare, "admin", err);
  if (!c) return NULL;
  cursus_error_t *e = NULL;
  if (cursus_admin_new(c, &a, &e) != CURSUS_OK) {
    *err = error_json(e);
    cursus_error_destroy(e);
    a = NULL;
  } else {
    table_put(&admins, "", a);
  }
  cursus_config_destroy(c);
  return a;
}

static void *get_named(const step_t *s, const char *argname, const table_t *t, char **err) {
  const char *name;
  if (!need(s, argname, &name, err)) return NULL;
  void *h = table_get(t, name);
  if (!h) *err = driver_error_json("%s: no %s named %s", s->op, argname, name);
  return h;
}

/* ------------------------------------------------------------------------ */
/* produce_many: delivery callbacks                                          */

typedef struct {
  pthread_mutex_t lock;
  size_t pending;
  int32_t *partitions;
  char **errors; /* per record: the rendered error of a failed delivery */
} many_t;

typedef struct {
  many_t *state;
  size_t index;
} many_item_t;

static void on_delivery(void *user_data, const cursus_delivery_report_t *report) {
  many_item_t *item = user_data;
  many_t *st = item->state;
  /* The error is borrowed: render it now. */
  char *error = report->status == CURSUS_OK ? NULL : error_json(report->error);
  pthread_mutex_lock(&st->lock);
  if (error)
    st->errors[item->index] = error;
  else
    st->partitions[item->index] = report->metadata.partition;
  st->pending--;
  pthread_mutex_unlock(&st->lock);
}

/* ------------------------------------------------------------------------ */
/* Ops. Each returns 1 and appends the result object to `out`, or returns 0
 * with *err set to the error object. */

#define BINDING(call)             \
  do {                            \
    cursus_error_t *e_ = NULL;    \
    if ((call) != CURSUS_OK) {    \
      *err = error_json(e_);      \
      cursus_error_destroy(e_);      \
      goto fail;                  \
    }                             \
  } while (0)
/* Inside BINDING(...), `&e_` names the error out-parameter. */

static int op_admin_open(const step_t *s, buf_t *out, char **err) {
  const char *name;
  cursus_admin_t *a = NULL;
  if (!need(s, "name", &name, err)) return 0;
  cursus_config_t *c = make_config(s, "admin", err);
  if (!c) return 0;
  BINDING(cursus_admin_new(c, &a, &e_));
  table_put(&admins, name, a);
  cursus_config_destroy(c);
  buf_puts(out, "{}");
  return 1;
fail:
  cursus_config_destroy(c);
  return 0;
}

static int op_admin_close(const step_t *s, buf_t *out, char **err) {
  cursus_admin_t *a = get_named(s, "name", &admins, err);
  if (!a) return 0;
  BINDING(cursus_admin_close(a, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_create_topic(const step_t *s, buf_t *out, char **err) {
  /* read_acl / write_acl: comma-separated principals, as the C ABI takes them. */
  static const char *optional[] = {"replication_factor", "auth_policy",   "read_acl",         "write_acl",
                                   "retention_bytes",    "idempotent",    "event_sourcing",   "aggregate_replay"};
  enum { N_OPTIONAL = sizeof optional / sizeof optional[0] };
  const char *topic, *keys[N_OPTIONAL + 1], *values[N_OPTIONAL + 1];
  size_t n = 0;
  if (!need(s, "topic", &topic, err) || !need(s, "partitions", &values[n], err)) return 0;
  keys[n++] = "partitions";
  for (size_t i = 0; i < N_OPTIONAL; i++)
    if ((values[n] = arg(s, optional[i]))) keys[n++] = optional[i];
  cursus_admin_t *a = get_admin(s, err);
  if (!a) return 0;
  cursus_topic_info_t *info = NULL;
  BINDING(cursus_admin_create_topic_with(a, topic, keys, values, n, &info, &e_));
  buf_printf(out, "{\"partitions\": %" PRIu32 "}", cursus_topic_info_partitions(info));
  cursus_topic_info_destroy(info);
  return 1;
fail:
  return 0;
}

static int op_delete_topic(const step_t *s, buf_t *out, char **err) {
  const char *topic, *if_exists = arg(s, "if_exists");
  if (!need(s, "topic", &topic, err)) return 0;
  cursus_admin_t *a = get_admin(s, err);
  if (!a) return 0;
  cursus_delete_outcome_t *outcome = NULL;
  BINDING(cursus_admin_delete_topic(a, topic, if_exists && strcmp(if_exists, "true") == 0, &outcome, &e_));
  buf_printf(out, "{\"deleted\": %s}", cursus_delete_outcome_deleted(outcome) ? "true" : "false");
  cursus_delete_outcome_destroy(outcome);
  return 1;
fail:
  return 0;
}

static int op_truncate_topic(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint64_t expected;
  if (!need(s, "topic", &topic, err) || !num_u64(s, "expected_revision", &expected, err)) return 0;
  cursus_admin_t *a = get_admin(s, err);
  if (!a) return 0;
  cursus_truncate_outcome_t *outcome = NULL;
  BINDING(cursus_admin_truncate_topic(a, topic, expected, &outcome, &e_));
  buf_printf(out, "{\"revision\": %" PRIu64 "}", cursus_truncate_outcome_revision(outcome));
  cursus_truncate_outcome_destroy(outcome);
  return 1;
fail:
  return 0;
}

/* A broker id or JSON null. */
static void buf_json_opt_str(buf_t *b, const char *s) {
  if (s)
    buf_json_str(b, s);
  else
    buf_puts(b, "null");
}

static int op_cluster_status(const step_t *s, buf_t *out, char **err) {
  cursus_admin_t *a = get_admin(s, err);
  cursus_cluster_status_t *st = NULL;
  cursus_cluster_broker_list_t *brokers = NULL;
  if (!a) return 0;
  BINDING(cursus_admin_cluster_status(a, &st, &e_));
  BINDING(cursus_cluster_status_brokers(st, &brokers, &e_));
  size_t n = cursus_cluster_status_partition_count(st);
  buf_printf(out, "{\"brokers\": %zu, \"partitions\": %zu, \"raft_leader\": ", cursus_cluster_broker_list_count(brokers),
             n);
  buf_json_opt_str(out, cursus_cluster_status_raft_leader(st));
  buf_printf(out, ", \"leaderless\": %" PRIu64 ", \"under_replicated\": %" PRIu64 ", \"led_by\": {",
             cursus_cluster_status_leaderless(st), cursus_cluster_status_under_replicated(st));
  int first = 1;
  for (size_t i = 0; i < n; i++) {
    const char *leader = cursus_cluster_status_partition_leader(st, i);
    if (!leader) continue;
    char key[512];
    snprintf(key, sizeof key, "%s/%" PRId64, cursus_cluster_status_partition_topic(st, i),
             cursus_cluster_status_partition_id(st, i));
    if (!first) buf_puts(out, ", ");
    first = 0;
    buf_json_str(out, key);
    buf_puts(out, ": ");
    buf_json_str(out, leader);
  }
  buf_puts(out, "}, \"voters\": [");
  for (size_t i = 0, v = cursus_cluster_status_voter_count(st); i < v; i++) {
    if (i) buf_puts(out, ", ");
    buf_json_str(out, cursus_cluster_status_voter(st, i));
  }
  buf_puts(out, "], \"learners\": [");
  for (size_t i = 0, l = cursus_cluster_status_learner_count(st); i < l; i++) {
    if (i) buf_puts(out, ", ");
    buf_json_str(out, cursus_cluster_status_learner(st, i));
  }
  int64_t shards = cursus_cluster_status_transaction_coordinator_shards(st);
  if (shards < 0)
    buf_puts(out, "], \"transaction_coordinator_shards\": null, \"producers\": {");
  else
    buf_printf(out, "], \"transaction_coordinator_shards\": %" PRId64 ", \"producers\": {", shards);
  for (size_t i = 0; i < n; i++) {
    char key[512];
    snprintf(key, sizeof key, "%s/%" PRId64, cursus_cluster_status_partition_topic(st, i),
             cursus_cluster_status_partition_id(st, i));
    if (i) buf_puts(out, ", ");
    buf_json_str(out, key);
    buf_printf(out, ": %" PRId64, cursus_cluster_status_partition_producers(st, i));
  }
  buf_puts(out, "}}");
  cursus_cluster_broker_list_destroy(brokers);
  cursus_cluster_status_destroy(st);
  return 1;
fail:
  cursus_cluster_broker_list_destroy(brokers);
  cursus_cluster_status_destroy(st);
  return 0;
}

/* A JSON array of the `count` strings `at(h, i)` returns. */
static void buf_json_ids(buf_t *out, const cursus_partition_reassignment_t *h, size_t count,
                         const char *(*at)(const cursus_partition_reassignment_t *, size_t)) {
  buf_puts(out, "[");
  for (size_t i = 0; i < count; i++) {
    if (i) buf_puts(out, ", ");
    buf_json_str(out, at(h, i));
  }
  buf_puts(out, "]");
}

static int op_reassign_partition(const step_t *s, buf_t *out, char **err) {
  const char *topic, *list;
  uint64_t partition;
  if (!need(s, "topic", &topic, err) || !num_u64(s, "partition", &partition, err) ||
      !need(s, "replicas", &list, err))
    return 0;
  /* Split the comma-separated broker ids in a copy. */
  char *copy = strdup(list);
  const char *ids[64];
  size_t n = 0;
  for (char *save = NULL, *id = strtok_r(copy, ",", &save); id && n < 64; id = strtok_r(NULL, ",", &save))
    ids[n++] = id;
  cursus_partition_reassignment_t *r = NULL;
  cursus_admin_t *a = get_admin(s, err);
  if (!a) goto fail;
  BINDING(cursus_admin_reassign_partition(a, topic, (uint32_t)partition, ids, n, &r, &e_));
  free(copy);
  const cursus_partition_reassignment_t *h = r;
  buf_printf(out, "{\"done\": %s, \"replicas\": ", cursus_partition_reassignment_done(h) ? "true" : "false");
  buf_json_ids(out, h, cursus_partition_reassignment_replica_count(h), cursus_partition_reassignment_replica);
  buf_puts(out, ", \"isr\": ");
  buf_json_ids(out, h, cursus_partition_reassignment_isr_count(h), cursus_partition_reassignment_isr);
  buf_puts(out, ", \"leader\": ");
  buf_json_opt_str(out, cursus_partition_reassignment_leader(h));
  buf_puts(out, ", \"target\": ");
  buf_json_ids(out, h, cursus_partition_reassignment_target_count(h), cursus_partition_reassignment_target);
  buf_puts(out, "}");
  cursus_partition_reassignment_destroy(r);
  return 1;
fail:
  free(copy);
  return 0;
}

static int op_elect_leader(const step_t *s, buf_t *out, char **err) {
  const char *topic, *broker_id;
  uint64_t partition;
  if (!need(s, "topic", &topic, err) || !num_u64(s, "partition", &partition, err) ||
      !need(s, "broker", &broker_id, err))
    return 0;
  cursus_admin_t *a = get_admin(s, err);
  if (!a) return 0;
  cursus_leader_election_t *e = NULL;
  BINDING(cursus_admin_elect_leader(a, topic, (uint32_t)partition, broker_id, &e, &e_));
  buf_puts(out, "{\"previous_leader\": ");
  buf_json_opt_str(out, cursus_leader_election_previous_leader(e));
  buf_puts(out, ", \"leader\": ");
  buf_json_str(out, cursus_leader_election_leader(e));
  buf_printf(out, ", \"leader_epoch\": %" PRIu64 ", \"changed\": %s}", cursus_leader_election_leader_epoch(e),
             cursus_leader_election_changed(e) ? "true" : "false");
  cursus_leader_election_destroy(e);
  return 1;
fail:
  return 0;
}

static int op_list_cluster(const step_t *s, buf_t *out, char **err) {
  cursus_admin_t *a = get_admin(s, err);
  cursus_cluster_broker_list_t *brokers = NULL;
  if (!a) return 0;
  BINDING(cursus_admin_list_cluster(a, &brokers, &e_));
  buf_puts(out, "{\"brokers\": [");
  for (size_t i = 0, n = cursus_cluster_broker_list_count(brokers); i < n; i++) {
    if (i) buf_puts(out, ", ");
    buf_json_str(out, cursus_cluster_broker_list_id(brokers, i));
  }
  buf_puts(out, "]}");
  cursus_cluster_broker_list_destroy(brokers);
  return 1;
fail:
  return 0;
}

static int op_alter_topic(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  int64_t min_isr;
  if (!need(s, "topic", &topic, err) || !num_i64(s, "min_in_sync_replicas", &min_isr, err)) return 0;
  cursus_admin_t *a = get_admin(s, err);
  if (!a) return 0;
  BINDING(cursus_admin_alter_topic_config(a, topic, min_isr, NULL, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_list_topics(const step_t *s, buf_t *out, char **err) {
  cursus_admin_t *a = get_admin(s, err);
  cursus_string_list_t *names = NULL;
  if (!a) return 0;
  BINDING(cursus_admin_list_topics(a, &names, &e_));
  buf_puts(out, "{\"topics\": [");
  for (size_t i = 0, n = cursus_string_list_count(names); i < n; i++) {
    if (i) buf_puts(out, ", ");
    buf_json_str(out, cursus_string_list_get(names, i));
  }
  buf_puts(out, "]}");
  cursus_string_list_destroy(names);
  return 1;
fail:
  return 0;
}

static int op_describe_topic(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  cursus_topic_description_t *d = NULL;
  if (!need(s, "topic", &topic, err)) return 0;
  cursus_admin_t *a = get_admin(s, err);
  if (!a) return 0;
  BINDING(cursus_admin_describe_topic(a, topic, &d, &e_));
  buf_printf(out, "{\"partitions\": %zu}", cursus_topic_description_partition_count(d));
  cursus_topic_description_destroy(d);
  return 1;
fail:
  return 0;
}

/* Earliest and latest offsets of the step's topic/partition. */
static int offsets_of(const step_t *s, uint64_t *earliest, uint64_t *latest, char **err) {
  const char *topic;
  uint32_t partition;
  cursus_partition_offsets_list_t *list = NULL;
  if (!need(s, "topic", &topic, err) || !num_u32(s, "partition", &partition, err)) return 0;
  cursus_admin_t *a = get_admin(s, err);
  if (!a) return 0;
  BINDING(cursus_admin_list_offsets(a, topic, (int64_t)partition, &list, &e_));
  for (size_t i = 0, n = cursus_partition_offsets_list_count(list); i < n; i++) {
    if (cursus_partition_offsets_list_partition(list, i) == (int64_t)partition) {
      *earliest = (uint64_t)cursus_partition_offsets_list_earliest(list, i);
      *latest = (uint64_t)cursus_partition_offsets_list_latest(list, i);
      cursus_partition_offsets_list_destroy(list);
      return 1;
    }
  }
  cursus_partition_offsets_list_destroy(list);
  *err = driver_error_json("list_offsets: no partition %" PRIu32 " in the reply", partition);
  return 0;
fail:
  return 0;
}

static int op_list_offsets(const step_t *s, buf_t *out, char **err) {
  uint64_t earliest, latest;
  if (!offsets_of(s, &earliest, &latest, err)) return 0;
  buf_printf(out, "{\"earliest\": %" PRIu64 ", \"latest\": %" PRIu64 "}", earliest, latest);
  return 1;
}

static int op_await_earliest(const step_t *s, buf_t *out, char **err) {
  uint64_t min, timeout, earliest, latest;
  if (!num_u64(s, "min", &min, err) || !num_u64(s, "timeout_ms", &timeout, err)) return 0;
  int64_t deadline = now_ms() + (int64_t)timeout;
  for (;;) {
    if (!offsets_of(s, &earliest, &latest, err)) return 0;
    int64_t left = deadline - now_ms();
    if (earliest >= min || left <= 0) break;
    sleep_ms(left < 50 ? left : 50);
  }
  buf_printf(out, "{\"earliest\": %" PRIu64 "}", earliest);
  return 1;
}

static int op_producer_open(const step_t *s, buf_t *out, char **err) {
  const char *name;
  cursus_producer_t *p = NULL;
  if (!need(s, "name", &name, err)) return 0;
  cursus_config_t *c = make_config(s, "producer", err);
  if (!c) return 0;
  BINDING(cursus_producer_new(c, &p, &e_));
  table_put(&producers, name, p);
  cursus_config_destroy(c);
  buf_puts(out, "{}");
  return 1;
fail:
  cursus_config_destroy(c);
  return 0;
}

static int text_arg(const step_t *s, const char *name, char **out, char **err);

static int op_produce(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint8_t *key = NULL, *value = NULL;
  char *metadata = NULL;
  size_t key_len = 0, value_len = 0;
  int has_key, has_value;
  int64_t partition = -1, timestamp = CURSUS_NO_TIMESTAMP;
  cursus_producer_t *p = get_named(s, "producer", &producers, err);
  if (!p || !need(s, "topic", &topic, err)) return 0;
  if (arg(s, "partition") && !num_i64(s, "partition", &partition, err)) return 0;
  if (arg(s, "timestamp") && !num_i64(s, "timestamp", &timestamp, err)) return 0;
  if (!text_arg(s, "metadata", &metadata, err)) return 0;
  if (!hex_arg(s, "key", &key, &key_len, &has_key, err)) goto fail;
  if (!hex_arg(s, "value", &value, &value_len, &has_value, err)) goto fail;
  if (!has_value) {
    uint8_t *fill = NULL;
    size_t fill_len = 0;
    uint64_t n;
    int has_fill;
    if (!hex_arg(s, "value_fill", &fill, &fill_len, &has_fill, err)) goto fail;
    if (!has_fill || fill_len != 1) {
      free(fill);
      *err = driver_error_json("produce: needs value or value_fill (one byte) and value_len");
      goto fail;
    }
    if (!num_u64(s, "value_len", &n, err)) {
      free(fill);
      goto fail;
    }
    value = xrealloc(NULL, (size_t)n);
    memset(value, fill[0], (size_t)n);
    value_len = (size_t)n;
    free(fill);
  }
  /* A present but empty key is an empty key, not "no key". */
  const uint8_t *key_ptr = has_key ? (key ? key : (const uint8_t *)"") : NULL;
  cursus_record_metadata_t md;
  const char *traceparent = arg(s, "traceparent"), *tracestate = arg(s, "tracestate");
  /* Records with metadata or a trace context go through the traced send;
   * the others keep exercising the plain one. */
  if (metadata || traceparent || tracestate)
    BINDING(cursus_producer_send_traced(p, topic, (int32_t)partition, key_ptr, key_len, value, value_len, timestamp,
                                        metadata, traceparent, tracestate, &md, &e_));
  else
    BINDING(cursus_producer_send(p, topic, (int32_t)partition, key_ptr, key_len, value, value_len, timestamp, &md,
                                 &e_));
  if (md.offset < 0)
    buf_printf(out, "{\"partition\": %" PRId32 ", \"offset\": null, \"timestamp\": %" PRId64 "}", md.partition,
               md.timestamp);
  else
    buf_printf(out, "{\"partition\": %" PRId32 ", \"offset\": %" PRId64 ", \"timestamp\": %" PRId64 "}",
               md.partition, md.offset, md.timestamp);
  free(key);
  free(value);
  free(metadata);
  return 1;
fail:
  free(key);
  free(value);
  free(metadata);
  return 0;
}

static int op_produce_many(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint64_t count;
  uint8_t *vp = NULL, *kp = NULL;
  size_t vp_len = 0, kp_len = 0;
  int has_vp, has_kp;
  cursus_producer_t *p = get_named(s, "producer", &producers, err);
  if (!p || !need(s, "topic", &topic, err) || !num_u64(s, "count", &count, err)) return 0;
  if (!hex_arg(s, "value_prefix", &vp, &vp_len, &has_vp, err)) return 0;
  if (!hex_arg(s, "key_prefix", &kp, &kp_len, &has_kp, err)) {
    free(vp);
    return 0;
  }
  size_t n = (size_t)count;
  many_t *st = xrealloc(NULL, sizeof *st);
  pthread_mutex_init(&st->lock, NULL);
  st->pending = 0;
  st->partitions = xrealloc(NULL, (n ? n : 1) * sizeof *st->partitions);
  st->errors = calloc(n ? n : 1, sizeof *st->errors);
  many_item_t *items = xrealloc(NULL, (n ? n : 1) * sizeof *items);
  char *queue_error = NULL;
  uint8_t *value = xrealloc(NULL, vp_len + 24), *key = xrealloc(NULL, kp_len + 24);
  if (vp_len) memcpy(value, vp, vp_len);
  if (kp_len) memcpy(key, kp, kp_len);
  for (size_t i = 0; i < n && !queue_error; i++) {
    char suffix[24];
    int sl = snprintf(suffix, sizeof suffix, "%zu", i);
    memcpy(value + vp_len, suffix, (size_t)sl);
    memcpy(key + kp_len, suffix, (size_t)sl);
    items[i].state = st;
    items[i].index = i;
    pthread_mutex_lock(&st->lock);
    st->pending++;
    pthread_mutex_unlock(&st->lock);
    cursus_error_t *e = NULL;
    if (cursus_producer_send_cb(p, topic, -1, has_kp ? key : NULL, has_kp ? kp_len + (size_t)sl : 0, value,
                                vp_len + (size_t)sl, CURSUS_NO_TIMESTAMP, on_delivery, &items[i], &e) != CURSUS_OK) {
      /* Not queued: its callback will never run. */
      pthread_mutex_lock(&st->lock);
      st->pending--;
      pthread_mutex_unlock(&st->lock);
      queue_error = error_json(e);
      cursus_error_destroy(e);
    }
  }
  free(value);
  free(key);
  free(vp);
  free(kp);
  /* Flush: when it returns OK, every callback has returned. */
  cursus_error_t *e = NULL;
  char *flush_error = NULL;
  if (cursus_producer_flush(p, -1, &e) != CURSUS_OK) flush_error = error_json(e);
  cursus_error_destroy(e);
  pthread_mutex_lock(&st->lock);
  int settled = st->pending == 0;
  pthread_mutex_unlock(&st->lock);
  int ok = 0;
  if (queue_error) {
    *err = queue_error;
    queue_error = NULL;
  } else if (flush_error) {
    *err = flush_error;
    flush_error = NULL;
  } else {
    for (size_t i = 0; i < n && settled; i++) {
      if (st->errors[i]) {
        *err = st->errors[i];
        st->errors[i] = NULL;
        break;
      }
    }
    if (!*err && !settled) *err = driver_error_json("produce_many: deliveries still pending after flush");
    if (!*err) {
      buf_printf(out, "{\"count\": %zu, \"partitions\": [", n);
      for (size_t i = 0; i < n; i++) buf_printf(out, "%s%" PRId32, i ? ", " : "", st->partitions[i]);
      buf_puts(out, "]}");
      ok = 1;
    }
  }
  free(queue_error);
  free(flush_error);
  if (settled) {
    /* Every callback returned: the state can go. (Otherwise it is leaked
     * on purpose: a late callback may still write to it.) */
    for (size_t i = 0; i < n; i++) free(st->errors[i]);
    free(st->errors);
    free(st->partitions);
    free(items);
    pthread_mutex_destroy(&st->lock);
    free(st);
  }
  return ok;
}

static int op_flush(const step_t *s, buf_t *out, char **err) {
  cursus_producer_t *p = get_named(s, "producer", &producers, err);
  if (!p) return 0;
  BINDING(cursus_producer_flush(p, -1, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_producer_close(const step_t *s, buf_t *out, char **err) {
  cursus_producer_t *p = get_named(s, "name", &producers, err);
  if (!p) return 0;
  BINDING(cursus_producer_close(p, 30000, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_consumer_open(const step_t *s, buf_t *out, char **err) {
  const char *name;
  cursus_consumer_t *c = NULL;
  if (!need(s, "name", &name, err)) return 0;
  cursus_config_t *cfg = make_config(s, "consumer", err);
  if (!cfg) return 0;
  BINDING(cursus_consumer_new(cfg, &c, &e_));
  table_put(&consumers, name, c);
  cursus_config_destroy(cfg);
  buf_puts(out, "{}");
  return 1;
fail:
  cursus_config_destroy(cfg);
  return 0;
}

static int op_subscribe(const step_t *s, buf_t *out, char **err) {
  const char *pattern = arg(s, "pattern"), *topics;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  if (pattern) {
    BINDING(cursus_consumer_subscribe_pattern(c, pattern, &e_));
  } else {
    if (!need(s, "topics", &topics, err)) return 0;
    char *copy = dupn(topics, strlen(topics));
    const char **names = NULL;
    size_t n = 0;
    /* Split on commas, keeping empty names: the binding judges them. */
    for (char *p = copy;;) {
      char *comma = strchr(p, ',');
      names = xrealloc(names, (n + 1) * sizeof *names);
      names[n++] = p;
      if (!comma) break;
      *comma = '\0';
      p = comma + 1;
    }
    cursus_error_t *e = NULL;
    cursus_status_t st = cursus_consumer_subscribe(c, names, n, &e);
    free(names);
    free(copy);
    if (st != CURSUS_OK) {
      *err = error_json(e);
      cursus_error_destroy(e);
      return 0;
    }
  }
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

/* One polled message as a record object of the protocol (after a comma
 * unless it is the first). */
static void message_json(buf_t *records, cursus_message_t *m, int first) {
  size_t klen = 0, vlen = 0;
  const uint8_t *k = cursus_message_key(m, &klen);
  const uint8_t *v = cursus_message_payload(m, &vlen);
  buf_puts(records, first ? "{\"topic\": " : ", {\"topic\": ");
  buf_json_str(records, cursus_message_topic(m));
  buf_printf(records, ", \"partition\": %" PRId32 ", \"offset\": %" PRId64 ", \"key\": ",
             cursus_message_partition(m), cursus_message_offset(m));
  if (cursus_message_has_key(m))
    buf_hex(records, k, klen);
  else
    buf_puts(records, "null");
  buf_puts(records, ", \"value\": ");
  buf_hex(records, v, vlen);
  buf_printf(records, ", \"timestamp\": %" PRId64 ", \"metadata\": ", cursus_message_timestamp(m));
  const char *metadata = cursus_message_metadata(m);
  if (metadata)
    buf_hex(records, (const uint8_t *)metadata, strlen(metadata));
  else
    buf_puts(records, "null");
  /* The context as the binding reads it, never parsed here. */
  const char *traceparent = cursus_message_traceparent(m), *tracestate = cursus_message_tracestate(m);
  buf_puts(records, ", \"traceparent\": ");
  if (traceparent)
    buf_json_str(records, traceparent);
  else
    buf_puts(records, "null");
  buf_puts(records, ", \"tracestate\": ");
  if (tracestate)
    buf_json_str(records, tracestate);
  else
    buf_puts(records, "null");
  const char *event_type = cursus_message_event_type(m);
  buf_puts(records, ", \"event_type\": ");
  if (event_type) {
    buf_json_str(records, event_type);
    buf_printf(records, ", \"aggregate_version\": %" PRId64 "}", cursus_message_aggregate_version(m));
  } else {
    buf_puts(records, "null, \"aggregate_version\": null}");
  }
}

/* `poll` (exact == 0) polls until at least max(count, 1) records arrived;
 * `take` (exact == 1) until exactly `count` did. The C poll returns one
 * message, so both receive no more than they stop at. */
static int poll_records(const step_t *s, buf_t *out, char **err, int exact) {
  uint64_t want, timeout;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c || !num_u64(s, "count", &want, err) || !num_u64(s, "timeout_ms", &timeout, err)) return 0;
  buf_t records = {0};
  uint64_t got = 0;
  int64_t deadline = now_ms() + (int64_t)timeout;
  uint64_t stop_at = exact ? want : (want ? want : 1);
  while (got < stop_at) {
    int64_t left = deadline - now_ms();
    cursus_message_t *m = NULL;
    cursus_error_t *e = NULL;
    if (cursus_consumer_poll(c, left > 0 ? left : 0, &m, &e) != CURSUS_OK) {
      /* Records received before a failed poll are dropped. */
      *err = error_json(e);
      cursus_error_destroy(e);
      buf_free(&records);
      return 0;
    }
    if (m) {
      message_json(&records, m, got == 0);
      cursus_message_destroy(m);
      got++;
    }
    if (now_ms() >= deadline) break;
  }
  buf_puts(out, "{\"records\": [");
  if (records.data) buf_puts(out, records.data);
  buf_puts(out, "]}");
  buf_free(&records);
  return 1;
}

static int op_poll(const step_t *s, buf_t *out, char **err) { return poll_records(s, out, err, 0); }

static int op_take(const step_t *s, buf_t *out, char **err) { return poll_records(s, out, err, 1); }

/* One call of poll: empty before its deadline only when woken. */
static int op_poll_once(const step_t *s, buf_t *out, char **err) {
  uint64_t timeout;
  cursus_message_t *m = NULL;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c || !num_u64(s, "timeout_ms", &timeout, err)) return 0;
  int64_t start = now_ms();
  BINDING(cursus_consumer_poll(c, (int64_t)timeout, &m, &e_));
  int early_empty = !m && now_ms() - start < (int64_t)timeout;
  buf_puts(out, "{\"records\": [");
  if (m) message_json(out, m, 1);
  buf_printf(out, "], \"early_empty\": %s}", early_empty ? "true" : "false");
  cursus_message_destroy(m);
  return 1;
fail:
  return 0;
}

static int op_wakeup(const step_t *s, buf_t *out, char **err) {
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  BINDING(cursus_consumer_wakeup(c, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_commit(const step_t *s, buf_t *out, char **err) {
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  BINDING(cursus_consumer_commit(c, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_commit_offsets(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint32_t partition;
  uint64_t offset;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c || !need(s, "topic", &topic, err) || !num_u32(s, "partition", &partition, err) ||
      !num_u64(s, "offset", &offset, err))
    return 0;
  cursus_topic_partition_list_t *list = NULL;
  BINDING(cursus_topic_partition_list_new(&list, &e_));
  BINDING(cursus_topic_partition_list_add(list, topic, partition, (int64_t)offset, &e_));
  BINDING(cursus_consumer_commit_offsets(c, list, &e_));
  cursus_topic_partition_list_destroy(list);
  buf_puts(out, "{}");
  return 1;
fail:
  cursus_topic_partition_list_destroy(list);
  return 0;
}

static int op_committed(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint32_t partition;
  int64_t offset = -1;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c || !need(s, "topic", &topic, err) || !num_u32(s, "partition", &partition, err)) return 0;
  BINDING(cursus_consumer_committed(c, topic, partition, &offset, &e_));
  if (offset >= 0)
    buf_printf(out, "{\"offset\": %" PRId64 "}", offset);
  else
    buf_puts(out, "{\"offset\": null}");
  return 1;
fail:
  return 0;
}

static int op_assignment(const step_t *s, buf_t *out, char **err) {
  cursus_topic_partition_list_t *parts = NULL;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  BINDING(cursus_consumer_assignment(c, &parts, &e_));
  buf_puts(out, "{\"partitions\": [");
  for (size_t i = 0, n = cursus_topic_partition_list_count(parts); i < n; i++) {
    buf_t tp = {0};
    buf_printf(&tp, "%s:%" PRId64, cursus_topic_partition_list_topic(parts, i),
               cursus_topic_partition_list_partition(parts, i));
    if (i) buf_puts(out, ", ");
    buf_json_str(out, tp.data);
    buf_free(&tp);
  }
  buf_puts(out, "]}");
  cursus_topic_partition_list_destroy(parts);
  return 1;
fail:
  return 0;
}

static int op_consumer_close(const step_t *s, buf_t *out, char **err) {
  cursus_consumer_t *c = get_named(s, "name", &consumers, err);
  if (!c) return 0;
  BINDING(cursus_consumer_close(c, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Consumer control and the rebalance listener                               */

static int op_seek(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint32_t partition;
  uint64_t offset;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c || !need(s, "topic", &topic, err) || !num_u32(s, "partition", &partition, err) ||
      !num_u64(s, "offset", &offset, err))
    return 0;
  BINDING(cursus_consumer_seek(c, topic, partition, offset, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_position(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint32_t partition;
  uint64_t offset = 0;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c || !need(s, "topic", &topic, err) || !num_u32(s, "partition", &partition, err)) return 0;
  BINDING(cursus_consumer_position(c, topic, partition, &offset, &e_));
  buf_printf(out, "{\"offset\": %" PRIu64 "}", offset);
  return 1;
fail:
  return 0;
}

/* The `partitions` argument ("topic:p,topic:p") as a new list (offsets -1). */
static cursus_topic_partition_list_t *partition_list(const step_t *s, char **err) {
  const char *all;
  if (!need(s, "partitions", &all, err)) return NULL;
  cursus_topic_partition_list_t *list = NULL;
  cursus_error_t *e = NULL;
  if (cursus_topic_partition_list_new(&list, &e) != CURSUS_OK) {
    *err = error_json(e);
    cursus_error_destroy(e);
    return NULL;
  }
  char *copy = dupn(all, strlen(all));
  for (char *item = copy; item;) {
    char *comma = strchr(item, ',');
    if (comma) *comma = '\0';
    char *colon = strrchr(item, ':');
    char *end = NULL;
    unsigned long p = colon ? strtoul(colon + 1, &end, 10) : 0;
    if (!colon || end == colon + 1 || *end) {
      *err = driver_error_json("%s: %s is not topic:p", s->op, item);
      goto fail;
    }
    *colon = '\0';
    if (cursus_topic_partition_list_add(list, item, (uint32_t)p, -1, &e) != CURSUS_OK) {
      *err = error_json(e);
      cursus_error_destroy(e);
      goto fail;
    }
    item = comma ? comma + 1 : NULL;
  }
  free(copy);
  return list;
fail:
  free(copy);
  cursus_topic_partition_list_destroy(list);
  return NULL;
}

typedef cursus_status_t (*partitions_call_t)(cursus_consumer_t *, cursus_topic_partition_list_t *, cursus_error_t **);

static int partitions_step(const step_t *s, buf_t *out, char **err, partitions_call_t call) {
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  cursus_topic_partition_list_t *list = partition_list(s, err);
  if (!list) return 0;
  BINDING(call(c, list, &e_));
  cursus_topic_partition_list_destroy(list);
  buf_puts(out, "{}");
  return 1;
fail:
  cursus_topic_partition_list_destroy(list);
  return 0;
}

static int op_pause(const step_t *s, buf_t *out, char **err) { return partitions_step(s, out, err, cursus_consumer_pause); }

static int op_resume(const step_t *s, buf_t *out, char **err) {
  return partitions_step(s, out, err, cursus_consumer_resume);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Appends partitions as a sorted JSON list of "topic:p" (count/topic/partition read them by index). */
static void buf_partitions(buf_t *out, size_t n, const char *(*topic)(const void *, size_t),
                           int64_t (*partition)(const void *, size_t), const void *from) {
  char **names = n ? xrealloc(NULL, n * sizeof *names) : NULL;
  for (size_t i = 0; i < n; i++) {
    buf_t tp = {0};
    buf_printf(&tp, "%s:%" PRId64, topic(from, i), partition(from, i));
    names[i] = buf_take(&tp);
  }
  if (n) qsort(names, n, sizeof *names, cmp_str);
  buf_puts(out, "[");
  for (size_t i = 0; i < n; i++) {
    if (i) buf_puts(out, ", ");
    buf_json_str(out, names[i]);
    free(names[i]);
  }
  buf_puts(out, "]");
  free(names);
}

static const char *list_topic(const void *l, size_t i) { return cursus_topic_partition_list_topic(l, i); }
static int64_t list_partition(const void *l, size_t i) { return cursus_topic_partition_list_partition(l, i); }
static const char *event_topic(const void *ev, size_t i) { return cursus_rebalance_event_topic(ev, i); }
static int64_t event_partition(const void *ev, size_t i) { return cursus_rebalance_event_partition(ev, i); }

static int op_paused(const step_t *s, buf_t *out, char **err) {
  cursus_topic_partition_list_t *parts = NULL;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  BINDING(cursus_consumer_paused(c, &parts, &e_));
  buf_puts(out, "{\"partitions\": ");
  buf_partitions(out, cursus_topic_partition_list_count(parts), list_topic, list_partition, parts);
  buf_puts(out, "}");
  cursus_topic_partition_list_destroy(parts);
  return 1;
fail:
  return 0;
}

static int op_committed_list(const step_t *s, buf_t *out, char **err) {
  cursus_topic_partition_list_t *committed = NULL;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  cursus_topic_partition_list_t *list = partition_list(s, err);
  if (!list) return 0;
  BINDING(cursus_consumer_committed_list(c, list, &committed, &e_));
  buf_puts(out, "{\"committed\": [");
  for (size_t i = 0, n = cursus_topic_partition_list_count(committed); i < n; i++) {
    int64_t off = cursus_topic_partition_list_offset(committed, i);
    if (i) buf_puts(out, ", ");
    if (off >= 0)
      buf_printf(out, "%" PRId64, off);
    else
      buf_puts(out, "null");
  }
  buf_puts(out, "]}");
  cursus_topic_partition_list_destroy(committed);
  cursus_topic_partition_list_destroy(list);
  return 1;
fail:
  cursus_topic_partition_list_destroy(list);
  return 0;
}

/* A consumer's rebalance listener state: what it was told (JSON objects,
 * comma-separated), appended on the consumer's listener thread. Freed at
 * exit, after the consumers are destroyed. */
typedef struct {
  char *name;
  cursus_consumer_t *consumer;
  int has_seek, commit;
  uint64_t seek_to;
  pthread_mutex_t lock;
  buf_t events;
  size_t count;
} rebalance_log_t;

static rebalance_log_t **rebalance_logs;
static size_t rebalance_count;

static rebalance_log_t *rebalance_log(const char *name) {
  for (size_t i = rebalance_count; i-- > 0;)
    if (strcmp(rebalance_logs[i]->name, name) == 0) return rebalance_logs[i];
  return NULL;
}

static void on_rebalance(void *user_data, const cursus_rebalance_event_t *event) {
  rebalance_log_t *log = user_data;
  const char *kind = cursus_rebalance_event_kind(event);
  size_t n = cursus_rebalance_event_count(event);
  buf_t entry = {0};
  buf_puts(&entry, "{\"kind\": ");
  buf_json_str(&entry, kind);
  buf_puts(&entry, ", \"partitions\": ");
  buf_partitions(&entry, n, event_topic, event_partition, event);
  if (strcmp(kind, "assigned") == 0 && log->has_seek) {
    for (size_t i = 0; i < n; i++)
      cursus_consumer_seek(log->consumer, cursus_rebalance_event_topic(event, i),
                           (uint32_t)cursus_rebalance_event_partition(event, i), log->seek_to, NULL);
  } else if (strcmp(kind, "revoked") == 0 && log->commit) {
    cursus_error_t *e = NULL;
    if (cursus_consumer_commit(log->consumer, &e) != CURSUS_OK) {
      buf_puts(&entry, ", \"commit_error\": ");
      buf_json_str(&entry, cursus_error_code(e));
    }
    cursus_error_destroy(e);
  }
  buf_puts(&entry, "}");
  pthread_mutex_lock(&log->lock);
  buf_puts(&log->events, log->count++ ? ", " : "");
  buf_puts(&log->events, entry.data);
  pthread_mutex_unlock(&log->lock);
  buf_free(&entry);
}

static int op_rebalance_listen(const step_t *s, buf_t *out, char **err) {
  const char *name;
  if (!need(s, "consumer", &name, err)) return 0;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  uint64_t seek_to = 0;
  if (arg(s, "seek_to") && !num_u64(s, "seek_to", &seek_to, err)) return 0;
  rebalance_log_t *log = xrealloc(NULL, sizeof *log);
  memset(log, 0, sizeof *log);
  log->name = dupn(name, strlen(name));
  log->consumer = c;
  log->has_seek = arg(s, "seek_to") != NULL;
  log->seek_to = seek_to;
  log->commit = arg(s, "commit_on_revoke") && strcmp(arg(s, "commit_on_revoke"), "true") == 0;
  pthread_mutex_init(&log->lock, NULL);
  /* Kept until exit (a replaced listener's state too: it may still be running). */
  rebalance_logs = xrealloc(rebalance_logs, (rebalance_count + 1) * sizeof *rebalance_logs);
  rebalance_logs[rebalance_count++] = log;
  BINDING(cursus_consumer_set_rebalance_listener(c, on_rebalance, log, true, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_rebalance_events(const step_t *s, buf_t *out, char **err) {
  const char *name;
  if (!need(s, "consumer", &name, err)) return 0;
  rebalance_log_t *log = rebalance_log(name);
  if (!log) {
    *err = driver_error_json("%s: no rebalance listener of consumer %s", s->op, name);
    return 0;
  }
  pthread_mutex_lock(&log->lock);
  buf_puts(out, "{\"events\": [");
  if (log->events.data) buf_puts(out, log->events.data);
  buf_puts(out, "]}");
  pthread_mutex_unlock(&log->lock);
  return 1;
}

static void free_rebalance_logs(void) {
  for (size_t i = 0; i < rebalance_count; i++) {
    pthread_mutex_destroy(&rebalance_logs[i]->lock);
    buf_free(&rebalance_logs[i]->events);
    free(rebalance_logs[i]->name);
    free(rebalance_logs[i]);
  }
  free(rebalance_logs);
}

/* Transactions (PROTOCOL.md): the producer's transaction calls, blocking. */
typedef cursus_status_t (*txn_call_t)(cursus_producer_t *, cursus_error_t **);

static int txn_step(const step_t *s, buf_t *out, char **err, txn_call_t call) {
  cursus_producer_t *p = get_named(s, "producer", &producers, err);
  if (!p) return 0;
  BINDING(call(p, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_txn_init(const step_t *s, buf_t *out, char **err) {
  return txn_step(s, out, err, cursus_producer_init_transactions);
}

static int op_txn_begin(const step_t *s, buf_t *out, char **err) {
  return txn_step(s, out, err, cursus_producer_begin_transaction);
}

static int op_txn_commit(const step_t *s, buf_t *out, char **err) {
  return txn_step(s, out, err, cursus_producer_commit_transaction);
}

static int op_txn_abort(const step_t *s, buf_t *out, char **err) {
  return txn_step(s, out, err, cursus_producer_abort_transaction);
}

/* Stages what the consumer has delivered (its delivered offsets, with its
 * group session) in the producer's open transaction. */
static int op_txn_send_offsets(const step_t *s, buf_t *out, char **err) {
  cursus_producer_t *p = get_named(s, "producer", &producers, err);
  if (!p) return 0;
  cursus_consumer_t *c = get_named(s, "consumer", &consumers, err);
  if (!c) return 0;
  BINDING(cursus_producer_send_consumer_offsets(p, c, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The event store (PROTOCOL.md, es_* ops). Keys, payloads, metadata and
 * states are byte strings holding UTF-8 text: decoded from hex into C
 * strings (a NUL inside cannot be expressed: a driver error). */

/* Text argument `name` (hex in the plan), NULL-terminated; NULL in *out
 * when absent. Returns 0 with *err set on bad hex or an embedded NUL. */
static int text_arg(const step_t *s, const char *name, char **out, char **err) {
  uint8_t *bytes = NULL;
  size_t len = 0;
  int present = 0;
  *out = NULL;
  if (!hex_arg(s, name, &bytes, &len, &present, err)) return 0;
  if (!present) return 1;
  if (memchr(bytes, 0, len)) {
    free(bytes);
    *err = driver_error_json("%s: %s holds a NUL byte, which a C string cannot carry", s->op, name);
    return 0;
  }
  bytes[len] = '\0'; /* hex_arg allocates len + 1 */
  *out = (char *)bytes;
  return 1;
}

/* Like text_arg, but the argument is required. */
static int need_text(const step_t *s, const char *name, char **out, char **err) {
  if (!text_arg(s, name, out, err)) return 0;
  if (*out) return 1;
  *err = driver_error_json("%s: missing argument %s", s->op, name);
  return 0;
}

/* Optional unsigned argument: `fallback` when absent. */
static int opt_u32(const step_t *s, const char *name, uint32_t fallback, uint32_t *out, char **err) {
  if (!arg(s, name)) {
    *out = fallback;
    return 1;
  }
  return num_u32(s, name, out, err);
}

static int op_es_open(const step_t *s, buf_t *out, char **err) {
  const char *name;
  cursus_event_store_t *store = NULL;
  if (!need(s, "name", &name, err)) return 0;
  cursus_config_t *c = make_config(s, "admin", err);
  if (!c) return 0;
  BINDING(cursus_event_store_new(c, &store, &e_));
  table_put(&stores, name, store);
  cursus_config_destroy(c);
  buf_puts(out, "{}");
  return 1;
fail:
  cursus_config_destroy(c);
  return 0;
}

static int op_es_close(const step_t *s, buf_t *out, char **err) {
  cursus_event_store_t *store = get_named(s, "name", &stores, err);
  if (!store) return 0;
  BINDING(cursus_event_store_close(store, &e_));
  buf_puts(out, "{}");
  return 1;
fail:
  return 0;
}

static int op_es_append(const step_t *s, buf_t *out, char **err) {
  const char *topic, *event_type = arg(s, "event_type");
  char *key = NULL, *value = NULL, *metadata = NULL;
  uint64_t expected;
  uint32_t schema_version;
  cursus_appended_t *appended = NULL;
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !num_u64(s, "expected_version", &expected, err) ||
      !opt_u32(s, "schema_version", 0, &schema_version, err) || !need_text(s, "key", &key, err) ||
      !need_text(s, "value", &value, err) || !text_arg(s, "metadata", &metadata, err))
    goto fail;
  BINDING(cursus_event_store_append(store, topic, key, expected, event_type ? event_type : "", value, metadata,
                                    schema_version, &appended, &e_));
  buf_printf(out, "{\"version\": %" PRIu64 ", \"offset\": %" PRIu64 ", \"partition\": %" PRIu32 "}",
             cursus_appended_version(appended), cursus_appended_offset(appended),
             cursus_appended_partition(appended));
  ok = 1;
fail:
  cursus_appended_destroy(appended);
  free(key);
  free(value);
  free(metadata);
  return ok;
}

static int op_es_stream_version(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL;
  uint64_t version = 0;
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !need_text(s, "key", &key, err)) goto fail;
  BINDING(cursus_event_store_stream_version(store, topic, key, &version, &e_));
  buf_printf(out, "{\"version\": %" PRIu64 "}", version);
  ok = 1;
fail:
  free(key);
  return ok;
}

static int op_es_save_snapshot(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL, *state = NULL;
  uint64_t version;
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !num_u64(s, "version", &version, err) ||
      !need_text(s, "key", &key, err) || !need_text(s, "state", &state, err))
    goto fail;
  BINDING(cursus_event_store_save_snapshot(store, topic, key, version, state, &e_));
  buf_puts(out, "{}");
  ok = 1;
fail:
  free(key);
  free(state);
  return ok;
}

/* A snapshot as {"version", "state": hex}, or null. */
static void snapshot_json(buf_t *out, const cursus_snapshot_t *snap) {
  if (!snap) {
    buf_puts(out, "null");
    return;
  }
  const char *state = cursus_snapshot_state(snap);
  buf_printf(out, "{\"version\": %" PRIu64 ", \"state\": ", cursus_snapshot_version(snap));
  buf_hex(out, (const uint8_t *)state, strlen(state));
  buf_puts(out, "}");
}

static int op_es_read_snapshot(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL;
  cursus_snapshot_t *snap = NULL;
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !need_text(s, "key", &key, err)) goto fail;
  BINDING(cursus_event_store_read_snapshot(store, topic, key, &snap, &e_));
  buf_puts(out, "{\"snapshot\": ");
  snapshot_json(out, snap);
  buf_puts(out, "}");
  ok = 1;
fail:
  cursus_snapshot_destroy(snap);
  free(key);
  return ok;
}

/* Appends event `i` of `page` as the protocol's event object. */
static void event_json(buf_t *out, const char *topic, const cursus_event_page_t *page, size_t i) {
  size_t klen = 0, vlen = 0;
  const uint8_t *k = cursus_event_page_key(page, i, &klen);
  const uint8_t *v = cursus_event_page_payload(page, i, &vlen);
  const char *metadata = cursus_event_page_metadata(page, i);
  buf_puts(out, "{\"topic\": ");
  buf_json_str(out, topic);
  buf_printf(out, ", \"partition\": %" PRIu32 ", \"offset\": %" PRId64 ", \"key\": ", cursus_event_page_partition(page),
             cursus_event_page_offset(page, i));
  if (klen)
    buf_hex(out, k, klen);
  else
    buf_puts(out, "null");
  buf_puts(out, ", \"value\": ");
  buf_hex(out, v, vlen);
  buf_printf(out, ", \"version\": %" PRIu64 ", \"event_type\": ", cursus_event_page_version(page, i));
  buf_json_str(out, cursus_event_page_event_type(page, i));
  buf_printf(out, ", \"schema_version\": %" PRIu32 ", \"metadata\": ", cursus_event_page_schema_version(page, i));
  buf_hex(out, (const uint8_t *)metadata, strlen(metadata));
  buf_puts(out, "}");
}

/* What reading every page of a cursor gathered. */
typedef struct {
  buf_t records;               /* the events' JSON objects, comma-separated */
  size_t count, pages;
  cursus_snapshot_t *snapshot; /* the first page's (stream reads) */
  char *completeness;          /* the last page's (history reads) */
  uint64_t head_version;       /* the last page's (history reads) */
} pages_t;

static void pages_free(pages_t *p) {
  buf_free(&p->records);
  cursus_snapshot_destroy(p->snapshot);
  free(p->completeness);
}

/* Reads the cursor's pages until it is done (destroys the cursor). */
static int read_pages(cursus_event_store_t *store, cursus_event_cursor_t *cursor, const char *topic, pages_t *p,
                      char **err) {
  cursus_event_page_t *page = NULL;
  int ok = 0;
  for (;;) {
    BINDING(cursus_event_store_next_page(store, cursor, &page, &e_));
    if (!page) break;
    if (p->pages++ == 0) BINDING(cursus_event_page_snapshot(page, &p->snapshot, &e_));
    for (size_t i = 0, n = cursus_event_page_count(page); i < n; i++, p->count++) {
      if (p->count) buf_puts(&p->records, ", ");
      event_json(&p->records, topic, page, i);
    }
    free(p->completeness);
    const char *completeness = cursus_event_page_completeness(page);
    p->completeness = dupn(completeness, strlen(completeness));
    p->head_version = cursus_event_page_head_version(page);
    cursus_event_page_destroy(page);
    page = NULL;
  }
  ok = 1;
fail:
  cursus_event_page_destroy(page);
  cursus_event_cursor_destroy(cursor);
  return ok;
}

static int op_es_read_stream(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL;
  uint64_t from;
  uint32_t max_events;
  cursus_event_cursor_t *cursor = NULL;
  pages_t p = {0};
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !num_u64(s, "from_version", &from, err) ||
      !opt_u32(s, "max_events", 0, &max_events, err) || !need_text(s, "key", &key, err))
    goto fail;
  BINDING(cursus_event_cursor_stream(topic, key, from, max_events, 0, &cursor, &e_));
  if (!read_pages(store, cursor, topic, &p, err)) goto fail;
  buf_puts(out, "{\"snapshot\": ");
  snapshot_json(out, p.snapshot);
  buf_printf(out, ", \"records\": [%s], \"pages\": %zu}", p.records.data ? p.records.data : "", p.pages);
  ok = 1;
fail:
  pages_free(&p);
  free(key);
  return ok;
}

static int op_es_history(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL;
  uint64_t from, to = 0;
  uint32_t max_records;
  cursus_event_cursor_t *cursor = NULL;
  pages_t p = {0};
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !num_u64(s, "from_version", &from, err) ||
      (arg(s, "to_version") && !num_u64(s, "to_version", &to, err)) ||
      !opt_u32(s, "max_records", 0, &max_records, err) || !need_text(s, "key", &key, err))
    goto fail;
  BINDING(cursus_event_cursor_history(topic, key, from, to, max_records, 0, &cursor, &e_));
  if (!read_pages(store, cursor, topic, &p, err)) goto fail;
  if (p.pages == 0) {
    *err = driver_error_json("es_history: the cursor gave no page");
    goto fail;
  }
  buf_printf(out, "{\"records\": [%s], \"completeness\": ", p.records.data ? p.records.data : "");
  buf_json_str(out, p.completeness);
  buf_printf(out, ", \"head_version\": %" PRIu64 ", \"pages\": %zu}", p.head_version, p.pages);
  ok = 1;
fail:
  pages_free(&p);
  free(key);
  return ok;
}

static int op_es_browse(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint32_t partition, max_records;
  uint64_t from;
  int64_t to = -1;
  cursus_event_cursor_t *cursor = NULL;
  pages_t p = {0};
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !num_u32(s, "partition", &partition, err) ||
      !num_u64(s, "from_offset", &from, err) || (arg(s, "to_offset") && !num_i64(s, "to_offset", &to, err)) ||
      !opt_u32(s, "max_records", 0, &max_records, err))
    goto fail;
  BINDING(cursus_event_cursor_browse(topic, partition, from, to, max_records, 0, &cursor, &e_));
  if (!read_pages(store, cursor, topic, &p, err)) goto fail;
  buf_printf(out, "{\"records\": [%s], \"pages\": %zu}", p.records.data ? p.records.data : "", p.pages);
  ok = 1;
fail:
  pages_free(&p);
  return ok;
}

/* The aggregate cycle with a counter as state (PROTOCOL.md, es_aggregate). */
static int op_es_aggregate(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL, *prefix = NULL;
  uint64_t appends, every, state = 0;
  cursus_aggregate_t *agg = NULL;
  cursus_event_page_t *loaded = NULL;
  cursus_snapshot_t *snap = NULL;
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !num_u64(s, "appends", &appends, err) ||
      !num_u64(s, "snapshot_every", &every, err) || !need_text(s, "key", &key, err) ||
      !need_text(s, "value_prefix", &prefix, err))
    goto fail;
  BINDING(cursus_event_store_load_aggregate(store, topic, key, every, &agg, &e_));
  BINDING(cursus_aggregate_loaded(agg, &loaded, &e_));
  BINDING(cursus_event_page_snapshot(loaded, &snap, &e_));
  if (snap) {
    const char *text = cursus_snapshot_state(snap);
    char *end = NULL;
    errno = 0;
    state = strtoull(text, &end, 10);
    if (errno || !*text || *end) {
      *err = driver_error_json("es_aggregate: snapshot state \"%s\" is no counter", text);
      goto fail;
    }
  }
  size_t loaded_events = cursus_event_page_count(loaded);
  state += loaded_events;
  const char *id_prefix = arg(s, "event_id_prefix");
  int64_t last_offset = -1;
  for (uint64_t i = 0; i < appends; i++) {
    char payload[4096], text[32], id[4096];
    snprintf(payload, sizeof payload, "%s%" PRIu64, prefix, i);
    if (id_prefix) snprintf(id, sizeof id, "%s%" PRIu64, id_prefix, i);
    cursus_event_page_t *stored = NULL;
    BINDING(cursus_event_store_aggregate_append(store, agg, "Counted", payload, NULL, 0, id_prefix ? id : NULL,
                                                &stored, &e_));
    last_offset = cursus_event_page_offset(stored, 0);
    cursus_event_page_destroy(stored);
    state++;
    snprintf(text, sizeof text, "%" PRIu64, state);
    bool saved = false;
    BINDING(cursus_event_store_aggregate_auto_snapshot(store, agg, text, &saved, &e_));
  }
  buf_printf(out, "{\"version\": %" PRIu64 ", \"state\": %" PRIu64 ", \"loaded_snapshot_version\": ",
             cursus_aggregate_version(agg), state);
  if (snap)
    buf_printf(out, "%" PRIu64, cursus_snapshot_version(snap));
  else
    buf_puts(out, "null");
  buf_printf(out, ", \"loaded_events\": %zu, \"last_offset\": ", loaded_events);
  if (last_offset >= 0)
    buf_printf(out, "%" PRId64 "}", last_offset);
  else
    buf_puts(out, "null}");
  ok = 1;
fail:
  cursus_snapshot_destroy(snap);
  cursus_event_page_destroy(loaded);
  cursus_aggregate_destroy(agg);
  free(key);
  free(prefix);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Event ids, replay proofs, range reads and transactional stream appends
 * (docs/aggregate-replay.md): events go through the event builder. */

/* An event builder from the step's event_type, value (hex), metadata
 * (hex), schema_version and event_id; NULL with *err set on failure. */
static cursus_event_builder_t *step_event(const step_t *s, char **err) {
  const char *event_type = arg(s, "event_type"), *event_id = arg(s, "event_id");
  char *value = NULL, *metadata = NULL;
  uint32_t schema_version;
  cursus_event_builder_t *ev = NULL;
  if (!opt_u32(s, "schema_version", 0, &schema_version, err) || !need_text(s, "value", &value, err) ||
      !text_arg(s, "metadata", &metadata, err))
    goto fail;
  BINDING(cursus_event_builder_new(event_type ? event_type : "", value, &ev, &e_));
  if (metadata) BINDING(cursus_event_builder_set_metadata(ev, metadata, &e_));
  if (schema_version) BINDING(cursus_event_builder_set_schema_version(ev, schema_version, &e_));
  if (event_id) BINDING(cursus_event_builder_set_event_id(ev, event_id, &e_));
  free(value);
  free(metadata);
  return ev;
fail:
  cursus_event_builder_destroy(ev);
  free(value);
  free(metadata);
  return NULL;
}

static void appended_json(buf_t *out, const cursus_appended_t *a) {
  buf_printf(out, "{\"version\": %" PRIu64 ", \"offset\": %" PRIu64 ", \"partition\": %" PRIu32 "}",
             cursus_appended_version(a), cursus_appended_offset(a), cursus_appended_partition(a));
}

static int op_es_append_id(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL;
  uint64_t expected;
  cursus_event_builder_t *ev = NULL;
  cursus_appended_t *appended = NULL;
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !num_u64(s, "expected_version", &expected, err) ||
      !need_text(s, "key", &key, err) || !(ev = step_event(s, err)))
    goto fail;
  BINDING(cursus_event_store_append_event(store, topic, key, expected, ev, &appended, &e_));
  appended_json(out, appended);
  ok = 1;
fail:
  cursus_appended_destroy(appended);
  cursus_event_builder_destroy(ev);
  free(key);
  return ok;
}

static int op_txn_append_stream(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL;
  uint64_t expected;
  cursus_event_builder_t *ev = NULL;
  cursus_appended_t *appended = NULL;
  int ok = 0;
  cursus_producer_t *p = get_named(s, "producer", &producers, err);
  if (!p || !need(s, "topic", &topic, err) || !num_u64(s, "expected_version", &expected, err) ||
      !need_text(s, "key", &key, err) || !(ev = step_event(s, err)))
    goto fail;
  BINDING(cursus_producer_append_stream(p, topic, key, expected, ev, &appended, &e_));
  appended_json(out, appended);
  ok = 1;
fail:
  cursus_appended_destroy(appended);
  cursus_event_builder_destroy(ev);
  free(key);
  return ok;
}

static int op_es_replay_proof(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL;
  uint64_t expected = 0;
  cursus_replay_proof_t *proof = NULL;
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !need_text(s, "key", &key, err) ||
      (arg(s, "expected_last_sequence") && !num_u64(s, "expected_last_sequence", &expected, err)))
    goto fail;
  /* -1: no expectation; a given 0 goes to the library, which refuses it. */
  BINDING(cursus_event_store_replay_proof(store, topic, key,
                                          arg(s, "expected_last_sequence") ? (int64_t)expected : -1, &proof, &e_));
  buf_puts(out, "{\"status\": ");
  buf_json_str(out, cursus_replay_proof_status(proof));
  buf_printf(out,
             ", \"event_count\": %" PRIu64 ", \"earliest_sequence\": %" PRIu64 ", \"latest_sequence\": %" PRIu64
             ", \"first_event_id\": ",
             cursus_replay_proof_event_count(proof), cursus_replay_proof_earliest_sequence(proof),
             cursus_replay_proof_latest_sequence(proof));
  buf_json_str(out, cursus_replay_proof_first_event_id(proof));
  buf_puts(out, ", \"last_event_id\": ");
  buf_json_str(out, cursus_replay_proof_last_event_id(proof));
  buf_printf(out, ", \"sequence_complete\": %s, \"retention_complete\": %s}",
             cursus_replay_proof_sequence_complete(proof) ? "true" : "false",
             cursus_replay_proof_retention_complete(proof) ? "true" : "false");
  ok = 1;
fail:
  cursus_replay_proof_destroy(proof);
  free(key);
  return ok;
}

static int op_es_event_range(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  char *key = NULL;
  uint64_t from, to;
  uint32_t max_records;
  cursus_event_range_t *range = NULL;
  cursus_replay_proof_t *proof = NULL;
  int ok = 0;
  cursus_event_store_t *store = get_named(s, "store", &stores, err);
  if (!store || !need(s, "topic", &topic, err) || !need_text(s, "key", &key, err) ||
      !num_u64(s, "from_sequence", &from, err) || !num_u64(s, "to_sequence", &to, err) ||
      !opt_u32(s, "max_records", 0, &max_records, err))
    goto fail;
  BINDING(cursus_event_store_event_range(store, topic, key, from, to, max_records, &range, &e_));
  BINDING(cursus_event_range_proof(range, &proof, &e_));
  buf_puts(out, "{\"status\": ");
  buf_json_str(out, cursus_replay_proof_status(proof));
  buf_puts(out, ", \"records\": [");
  for (size_t i = 0, n = cursus_event_range_count(range); i < n; i++) {
    const char *payload = cursus_event_range_payload(range, i);
    buf_printf(out, "%s{\"offset\": %" PRId64 ", \"version\": %" PRIu64 ", \"event_id\": ", i ? ", " : "",
               cursus_event_range_offset(range, i), cursus_event_range_sequence(range, i));
    buf_json_str(out, cursus_event_range_event_id(range, i));
    buf_puts(out, ", \"event_type\": ");
    buf_json_str(out, cursus_event_range_event_type(range, i));
    buf_puts(out, ", \"value\": ");
    buf_hex(out, (const uint8_t *)payload, strlen(payload));
    buf_puts(out, "}");
  }
  buf_puts(out, "]}");
  ok = 1;
fail:
  cursus_replay_proof_destroy(proof);
  cursus_event_range_destroy(range);
  free(key);
  return ok;
}


static const struct {
  const char *op;
  int (*run)(const step_t *, buf_t *, char **);
} HANDLERS[] = {
    {"admin_open", op_admin_open},
    {"admin_close", op_admin_close},
    {"create_topic", op_create_topic},
    {"delete_topic", op_delete_topic},
    {"truncate_topic", op_truncate_topic},
    {"alter_topic", op_alter_topic},
    {"cluster_status", op_cluster_status},
    {"elect_leader", op_elect_leader},
    {"reassign_partition", op_reassign_partition},
    {"list_cluster", op_list_cluster},
    {"list_topics", op_list_topics},
    {"describe_topic", op_describe_topic},
    {"list_offsets", op_list_offsets},
    {"await_earliest", op_await_earliest},
    {"producer_open", op_producer_open},
    {"produce", op_produce},
    {"produce_many", op_produce_many},
    {"flush", op_flush},
    {"producer_close", op_producer_close},
    {"consumer_open", op_consumer_open},
    {"subscribe", op_subscribe},
    {"poll", op_poll},
    {"take", op_take},
    {"poll_once", op_poll_once},
    {"wakeup", op_wakeup},
    {"commit", op_commit},
    {"commit_offsets", op_commit_offsets},
    {"committed", op_committed},
    {"assignment", op_assignment},
    {"consumer_close", op_consumer_close},
    {"seek", op_seek},
    {"position", op_position},
    {"pause", op_pause},
    {"resume", op_resume},
    {"paused", op_paused},
    {"committed_list", op_committed_list},
    {"rebalance_listen", op_rebalance_listen},
    {"rebalance_events", op_rebalance_events},
    {"txn_init", op_txn_init},
    {"txn_begin", op_txn_begin},
    {"txn_send_offsets", op_txn_send_offsets},
    {"txn_commit", op_txn_commit},
    {"txn_abort", op_txn_abort},
    {"es_open", op_es_open},
    {"es_close", op_es_close},
    {"es_append", op_es_append},
    {"es_stream_version", op_es_stream_version},
    {"es_save_snapshot", op_es_save_snapshot},
    {"es_read_snapshot", op_es_read_snapshot},
    {"es_read_stream", op_es_read_stream},
    {"es_history", op_es_history},
    {"es_browse", op_es_browse},
    {"es_aggregate", op_es_aggregate},
    {"es_append_id", op_es_append_id},
    {"es_replay_proof", op_es_replay_proof},
    {"es_event_range", op_es_event_range},
    {"txn_append_stream", op_txn_append_stream},
};

/* ------------------------------------------------------------------------ */

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  buf_t b = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_putn(&b, chunk, n);
  fclose(f);
  return buf_take(&b);
}

static void run_step(size_t index, char *line) {
  step_t s;
  char why[256];
  buf_t result = {0};
  char *err = NULL;
  int ok = 0;
  const char *problem = parse_step(line, &s, why, sizeof why);
  if (problem) {
    err = driver_error_json("%s", problem);
  } else {
    for (size_t i = 0; i < sizeof HANDLERS / sizeof HANDLERS[0]; i++)
      if (strcmp(HANDLERS[i].op, s.op) == 0) ok = HANDLERS[i].run(&s, &result, &err);
    if (!ok && !err) err = driver_error_json("%s: failed without an error", s.op);
  }
  if (ok)
    printf("{\"step\": %zu, \"ok\": true, \"result\": %s}\n", index, result.data ? result.data : "{}");
  else
    printf("{\"step\": %zu, \"ok\": false, \"error\": %s}\n", index, err);
  fflush(stdout);
  free(err);
  buf_free(&result);
  step_free(&s);
}

/* Releases the handles without closing them: closing could leave a group or
 * commit, which the plan did not ask for. */
static void destroy_all(void) {
  for (size_t i = 0; i < consumers.n; i++) {
    cursus_consumer_destroy(consumers.items[i].handle);
    free(consumers.items[i].name);
  }
  for (size_t i = 0; i < producers.n; i++) {
    cursus_producer_destroy(producers.items[i].handle);
    free(producers.items[i].name);
  }
  for (size_t i = 0; i < admins.n; i++) {
    cursus_admin_destroy(admins.items[i].handle);
    free(admins.items[i].name);
  }
  for (size_t i = 0; i < stores.n; i++) {
    cursus_event_store_destroy(stores.items[i].handle);
    free(stores.items[i].name);
  }
  free(consumers.items);
  free(producers.items);
  free(admins.items);
  free(stores.items);
  free_rebalance_logs(); /* after the consumers that called them */
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <bootstrap host:port> <plan file>\n", argv[0]);
    return 2;
  }
  bootstrap = argv[1];
  char *plan = read_file(argv[2]);
  if (!plan) {
    fprintf(stderr, "cannot read plan %s: %s\n", argv[2], strerror(errno));
    return 2;
  }
  size_t index = 0;
  for (char *line = plan; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    char *end = line + strlen(line);
    while (end > line && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t')) *--end = '\0';
    while (*line == ' ' || *line == '\t') line++;
    if (*line && *line != '#') run_step(index++, line);
    line = nl ? nl + 1 : NULL;
  }
  free(plan);
  destroy_all();
  return 0;
}
