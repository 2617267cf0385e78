/* Shared helpers of the C tests (test_*.c): checks, names, clients. */
#ifndef CURSUS_TEST_UTIL_H
#define CURSUS_TEST_UTIL_H

#include "cursus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int failed_checks;
extern const char *broker;

/* A failed check is reported and ends the test (cleanup after `done:`). */
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failed_checks++;                                                           \
      goto done;                                                                 \
    }                                                                            \
  } while (0)

/* Checks that a call returned CURSUS_OK (prints and destroys the error if not). */
int ok_(cursus_status_t s, cursus_error_t *e, const char *what, int line);
#define CHECK_OK(call)                                       \
  do {                                                       \
    cursus_error_t *err = NULL;                              \
    cursus_status_t status_ = (call);                        \
    if (!ok_(status_, err, #call, __LINE__)) goto done;      \
  } while (0)
/* Inside CHECK_OK, `&err` names the macro's own error out-parameter. */

/* Checks that a call failed with `status`; keeps the error in `*e`. */
#define CHECK_FAILS(status, call, e)                                  \
  do {                                                                \
    cursus_error_destroy(*(e));                                       \
    *(e) = NULL;                                                      \
    cursus_status_t got_ = (call);                                    \
    if (got_ != (status) || *(e) == NULL) {                           \
      fprintf(stderr, "  %s:%d: %s -> %s, expected %s\n", __FILE__,   \
              __LINE__, #call, cursus_status_name(got_),              \
              cursus_status_name(status));                            \
      failed_checks++;                                                \
      goto done;                                                      \
    }                                                                 \
  } while (0)

/* A unique name: prefix-pid-counter. */
void unique_name(char *buf, size_t n, const char *prefix);

/* A configuration for `kind` ("admin", "producer", "consumer") with the
 * test broker, plus group_id when `group` is not NULL. Aborts on failure. */
cursus_config_t *config_for(const char *kind, const char *group);
/* Sets an option or aborts. */
void set_option(cursus_config_t *c, const char *key, const char *value);

/* Creates a topic; 1 on success. */
int create_topic(const char *topic, unsigned partitions);

/* Sends `count` records "v0".. to partition `partition` and waits; 1 on success. */
int produce_values(const char *topic, int partition, int count);

/* Polls one message at a time until `n` arrived (or ~20 s passed); stores
 * their offsets in `offsets` (may be NULL); returns how many arrived. */
int take_messages(cursus_consumer_t *c, int n, int64_t *offsets);

/* Polls until a message arrives (at most ~20 s); NULL when none did. */
cursus_message_t *next_message(cursus_consumer_t *c);

/* 1 when `got` is a string equal to `want`. */
int str_is(const char *got, const char *want);

/* A W3C traceparent the trace tests send. */
#define TRACE_PARENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

#endif
