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

static table_t admins, producers, consumers;

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
  const char *topic, *keys[4], *values[4];
  size_t n = 0;
  if (!need(s, "topic", &topic, err) || !need(s, "partitions", &values[n], err)) return 0;
  keys[n++] = "partitions";
  static const char *optional[] = {"auth_policy", "retention_bytes", "idempotent"};
  for (size_t i = 0; i < 3; i++)
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

static int op_produce(const step_t *s, buf_t *out, char **err) {
  const char *topic;
  uint8_t *key = NULL, *value = NULL;
  size_t key_len = 0, value_len = 0;
  int has_key, has_value;
  int64_t partition = -1;
  cursus_producer_t *p = get_named(s, "producer", &producers, err);
  if (!p || !need(s, "topic", &topic, err)) return 0;
  if (arg(s, "partition") && !num_i64(s, "partition", &partition, err)) return 0;
  if (!hex_arg(s, "key", &key, &key_len, &has_key, err)) return 0;
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
  BINDING(cursus_producer_send(p, topic, (int32_t)partition, key_ptr, key_len, value, value_len, CURSUS_NO_TIMESTAMP,
                               &md, &e_));
  if (md.offset < 0)
    buf_printf(out, "{\"partition\": %" PRId32 ", \"offset\": null}", md.partition);
  else
    buf_printf(out, "{\"partition\": %" PRId32 ", \"offset\": %" PRId64 "}", md.partition, md.offset);
  free(key);
  free(value);
  return 1;
fail:
  free(key);
  free(value);
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
      size_t klen = 0, vlen = 0;
      const uint8_t *k = cursus_message_key(m, &klen);
      const uint8_t *v = cursus_message_payload(m, &vlen);
      buf_puts(&records, got ? ", {\"topic\": " : "{\"topic\": ");
      buf_json_str(&records, cursus_message_topic(m));
      buf_printf(&records, ", \"partition\": %" PRId32 ", \"offset\": %" PRId64 ", \"key\": ",
                 cursus_message_partition(m), cursus_message_offset(m));
      /* The binding reports a missing key as an empty one (length 0). */
      if (klen)
        buf_hex(&records, k, klen);
      else
        buf_puts(&records, "null");
      buf_puts(&records, ", \"value\": ");
      buf_hex(&records, v, vlen);
      buf_puts(&records, "}");
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
    {"commit", op_commit},
    {"commit_offsets", op_commit_offsets},
    {"committed", op_committed},
    {"assignment", op_assignment},
    {"consumer_close", op_consumer_close},
    {"txn_init", op_txn_init},
    {"txn_begin", op_txn_begin},
    {"txn_send_offsets", op_txn_send_offsets},
    {"txn_commit", op_txn_commit},
    {"txn_abort", op_txn_abort},
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
  free(consumers.items);
  free(producers.items);
  free(admins.items);
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
