/* C tests of the language edge: callbacks on the client's own thread (they
 * may call the library; a blocked one stalls no other client), close and
 * wakeup interrupting a blocked poll, delivery accounting, fork(). */
#define _DEFAULT_SOURCE /* clock_gettime, usleep, kill under -std=c11 */
#include "test_util.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Waits on `cond` until `*flag` or ~30 s (a hang guard, not a timing check). */
static int wait_flag(pthread_mutex_t *lock, pthread_cond_t *cond, const int *flag) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 30;
  pthread_mutex_lock(lock);
  while (!*flag && pthread_cond_timedwait(cond, lock, &until) == 0) {
  }
  int set = *flag;
  pthread_mutex_unlock(lock);
  return set;
}

static void raise_flag(pthread_mutex_t *lock, pthread_cond_t *cond, int *flag) {
  pthread_mutex_lock(lock);
  *flag = 1;
  pthread_cond_broadcast(cond);
  pthread_mutex_unlock(lock);
}

/* ---- a delivery callback that sends and flushes on its own producer */

struct reentry {
  cursus_producer_t *producer;
  const char *topic;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done;
  cursus_status_t send_status, flush_status;
  int64_t inner_offset;
};

static void reenter(void *user_data, const cursus_delivery_report_t *report) {
  struct reentry *r = user_data;
  cursus_record_metadata_t md = {0, -1, 0};
  (void)report;
  r->send_status = cursus_producer_send(r->producer, r->topic, 0, NULL, 0, (const uint8_t *)"inner", 5,
                                        CURSUS_NO_TIMESTAMP, &md, NULL);
  r->inner_offset = md.offset;
  r->flush_status = cursus_producer_flush(r->producer, 10000, NULL);
  raise_flag(&r->lock, &r->cond, &r->done);
}

void test_callback_may_send_and_flush_its_producer(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-reentry");
  cursus_config_t *c = config_for("producer", NULL);
  struct reentry r = {NULL, topic, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1, -1, -1};
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(c, &r.producer, &err));
  CHECK_OK(cursus_producer_send_cb(r.producer, topic, 0, NULL, 0, (const uint8_t *)"outer", 5, CURSUS_NO_TIMESTAMP,
                                   reenter, &r, &err));
  CHECK(wait_flag(&r.lock, &r.cond, &r.done));
  CHECK(r.send_status == CURSUS_OK && r.inner_offset == 1);
  CHECK(r.flush_status == CURSUS_OK);
done:
  cursus_producer_close(r.producer, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(r.producer);
  cursus_config_destroy(c);
}

/* ---- a blocked callback does not hold up another producer */

struct gate {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int entered, other_ran, released;
};

static void blocked_callback(void *user_data, const cursus_delivery_report_t *report) {
  struct gate *g = user_data;
  (void)report;
  raise_flag(&g->lock, &g->cond, &g->entered);
  wait_flag(&g->lock, &g->cond, &g->released); /* until the test releases it */
}

static void other_callback(void *user_data, const cursus_delivery_report_t *report) {
  struct gate *g = user_data;
  (void)report;
  raise_flag(&g->lock, &g->cond, &g->other_ran);
}

void test_blocked_callback_does_not_stall_another_producer(void) {
  char topic[64];
  unique_name(topic, sizeof topic, "c-slow-cb");
  cursus_config_t *c = config_for("producer", NULL);
  cursus_producer_t *slow = NULL, *fast = NULL;
  struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(c, &slow, &err));
  CHECK_OK(cursus_producer_new(c, &fast, &err));
  CHECK_OK(cursus_producer_send_cb(slow, topic, 0, NULL, 0, (const uint8_t *)"a", 1, CURSUS_NO_TIMESTAMP,
                                   blocked_callback, &g, &err));
  CHECK(wait_flag(&g.lock, &g.cond, &g.entered));
  CHECK_OK(cursus_producer_send_cb(fast, topic, 0, NULL, 0, (const uint8_t *)"b", 1, CURSUS_NO_TIMESTAMP,
                                   other_callback, &g, &err));
  /* Runs while the first producer's callback is still blocked. */
  CHECK(wait_flag(&g.lock, &g.cond, &g.other_ran));
  CHECK(!g.released);
done:
  raise_flag(&g.lock, &g.cond, &g.released);
  cursus_producer_close(slow, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_close(fast, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(slow);
  cursus_producer_destroy(fast);
  cursus_config_destroy(c);
}

/* ---- close and wakeup interrupt a blocked poll */

struct poller {
  cursus_consumer_t *consumer;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int returned;
  cursus_status_t status;
  int got_message;
};

static void *poll_forever(void *arg) {
  struct poller *p = arg;
  cursus_message_t *m = NULL;
  cursus_status_t s = cursus_consumer_poll(p->consumer, CURSUS_NO_TIMEOUT, &m, NULL);
  pthread_mutex_lock(&p->lock);
  p->status = s;
  p->got_message = m != NULL;
  pthread_mutex_unlock(&p->lock);
  cursus_message_destroy(m);
  raise_flag(&p->lock, &p->cond, &p->returned);
  return NULL;
}

/* Starts a poll without limit on another thread; 1 on success. */
static int start_poll(struct poller *p) {
  p->returned = 0;
  p->status = -1;
  p->got_message = 0;
  if (pthread_create(&p->thread, NULL, poll_forever, p) != 0) return 0;
  usleep(200 * 1000); /* lets the poll block: nothing to await, and correct either way */
  return 1;
}

/* Waits for the poll to return. A poll that never returns ends the program
 * (hang guard): the thread blocked in it cannot be stopped. */
static void await_poll(struct poller *p) {
  if (!wait_flag(&p->lock, &p->cond, &p->returned)) {
    fprintf(stderr, "  a blocked poll did not return (hang guard)\n");
    _exit(1);
  }
  pthread_join(p->thread, NULL);
}

void test_close_and_wakeup_interrupt_a_blocked_poll(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-idle");
  unique_name(group, sizeof group, "c-idle-group");
  cursus_config_t *c = config_for("consumer", group);
  struct poller p = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  const char *topics[] = {topic};
  int polling = 0;
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_consumer_new(c, &p.consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(p.consumer, topics, 1, &err));
  /* wakeup: the blocked (or else the next) poll returns at once, empty. */
  CHECK(polling = start_poll(&p));
  CHECK_OK(cursus_consumer_wakeup(p.consumer, &err));
  await_poll(&p);
  polling = 0;
  CHECK(p.status == CURSUS_OK && !p.got_message);
  /* close from this thread: returns, and the blocked poll fails with
   * CURSUS_ERR_CLOSED. */
  CHECK(polling = start_poll(&p));
  CHECK_OK(cursus_consumer_close(p.consumer, &err));
  await_poll(&p);
  polling = 0;
  CHECK(p.status == CURSUS_ERR_CLOSED && !p.got_message);
done:
  if (polling) {
    cursus_consumer_close(p.consumer, NULL);
    await_poll(&p);
  }
  cursus_consumer_destroy(p.consumer);
  cursus_config_destroy(c);
}

/* ---- a poll returns only with a message, at its deadline or when woken */

static int64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One poll that returned no message: whether it waited its whole timeout
 * (a lower bound on a wait, not a timing assertion); -1 on a message or an
 * error. */
static int poll_reaches_deadline(cursus_consumer_t *c, int64_t timeout_ms) {
  cursus_message_t *m = NULL;
  int64_t start = monotonic_ms();
  if (cursus_consumer_poll(c, timeout_ms, &m, NULL) != CURSUS_OK || m) {
    cursus_message_destroy(m);
    return -1;
  }
  return monotonic_ms() - start >= timeout_ms;
}

void test_poll_returns_only_with_messages_at_its_deadline_or_when_woken(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-no-empty");
  unique_name(group, sizeof group, "c-no-empty-group");
  cursus_config_t *c = config_for("consumer", group);
  cursus_consumer_t *c1 = NULL, *c2 = NULL;
  cursus_topic_partition_list_t *parts = NULL;
  const char *topics[] = {topic};
  set_option(c, "heartbeat_interval_ms", "500");
  CHECK(create_topic(topic, 2));
  CHECK_OK(cursus_consumer_new(c, &c1, &err));
  CHECK_OK(cursus_consumer_subscribe(c1, topics, 1, &err));
  CHECK(poll_reaches_deadline(c1, 200) == 1); /* joins; nothing to read */
  /* A wakeup ends one poll, and only one. */
  CHECK_OK(cursus_consumer_wakeup(c1, &err));
  CHECK(poll_reaches_deadline(c1, 30000) == 0);
  CHECK(poll_reaches_deadline(c1, 300) == 1);
  /* A second member joins: c1's heartbeat notices the rebalance while c1
   * polls; the poll rejoins and waits on to its deadline. */
  CHECK_OK(cursus_consumer_new(c, &c2, &err));
  CHECK_OK(cursus_consumer_subscribe(c2, topics, 1, &err));
  CHECK(poll_reaches_deadline(c2, 0) >= 0);
  CHECK(poll_reaches_deadline(c1, 2000) == 1);
  CHECK_OK(cursus_consumer_assignment(c1, &parts, &err));
  CHECK(cursus_topic_partition_list_count(parts) == 1);
done:
  cursus_topic_partition_list_destroy(parts);
  cursus_consumer_destroy(c2);
  cursus_consumer_destroy(c1);
  cursus_config_destroy(c);
}

/* ---- auto-commit and close commit only what the application took */

void test_close_commits_only_the_messages_taken(void) {
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-taken");
  unique_name(group, sizeof group, "c-taken-group");
  cursus_config_t *c = config_for("consumer", group);
  cursus_consumer_t *first = NULL, *second = NULL;
  const char *topics[] = {topic};
  int64_t offsets[10];
  set_option(c, "enable_auto_commit", "true");
  set_option(c, "max_poll_records", "10");
  CHECK(create_topic(topic, 1));
  CHECK(produce_values(topic, 0, 10));
  CHECK_OK(cursus_consumer_new(c, &first, &err));
  CHECK_OK(cursus_consumer_subscribe(first, topics, 1, &err));
  CHECK(take_messages(first, 3, offsets) == 3);
  CHECK(offsets[0] == 0 && offsets[2] == 2);
  CHECK_OK(cursus_consumer_close(first, &err));
  CHECK_OK(cursus_consumer_new(c, &second, &err));
  CHECK_OK(cursus_consumer_subscribe(second, topics, 1, &err));
  CHECK(take_messages(second, 7, offsets) == 7);
  for (int i = 0; i < 7; i++) CHECK(offsets[i] == 3 + i);
done:
  if (second) cursus_consumer_close(second, NULL);
  cursus_consumer_destroy(first);
  cursus_consumer_destroy(second);
  cursus_config_destroy(c);
}

/* ---- fork(): the parent's handles fail in the child, new ones work */

/* Runs in the child; returns its exit status (0: all good). */
static int child_after_fork(cursus_producer_t *parents_producer, cursus_consumer_t *parents_consumer,
                            const char *topic, const char *group) {
  cursus_error_t *err = NULL;
  cursus_message_t *m = NULL;
  /* The parent's clients: closed (used_after_fork), at once. */
  cursus_status_t s = cursus_producer_send(parents_producer, topic, 0, NULL, 0, (const uint8_t *)"x", 1,
                                           CURSUS_NO_TIMESTAMP, NULL, &err);
  if (s != CURSUS_ERR_CLOSED || strcmp(cursus_error_code(err), "used_after_fork") != 0) return 10;
  cursus_error_destroy(err);
  err = NULL;
  s = cursus_consumer_poll(parents_consumer, CURSUS_NO_TIMEOUT, &m, &err);
  if (s != CURSUS_ERR_CLOSED || m != NULL || strcmp(cursus_error_code(err), "used_after_fork") != 0) return 11;
  cursus_error_destroy(err);
  /* A new producer and consumer of the child's own. */
  if (!produce_values(topic, 0, 1)) return 12;
  cursus_config_t *c = config_for("consumer", group);
  cursus_consumer_t *consumer = NULL;
  const char *topics[] = {topic};
  int64_t offsets[2] = {-1, -1}, committed = -1;
  if (cursus_consumer_new(c, &consumer, NULL) != CURSUS_OK) return 13;
  if (cursus_consumer_subscribe(consumer, topics, 1, NULL) != CURSUS_OK) return 14;
  /* The parent's record and the child's. */
  if (take_messages(consumer, 2, offsets) != 2 || offsets[0] != 0 || offsets[1] != 1) return 15;
  if (cursus_consumer_commit(consumer, NULL) != CURSUS_OK) return 16;
  if (cursus_consumer_committed(consumer, topic, 0, &committed, NULL) != CURSUS_OK || committed != 2) return 17;
  cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_config_destroy(c);
  return 0;
}

void test_fork_child_uses_its_own_clients(void) {
  char topic[64], group[64], parent_group[64];
  unique_name(topic, sizeof topic, "c-fork");
  unique_name(group, sizeof group, "c-fork-group");
  unique_name(parent_group, sizeof parent_group, "c-fork-parent");
  cursus_config_t *c = config_for("producer", NULL), *cc = config_for("consumer", parent_group);
  cursus_producer_t *producer = NULL;
  cursus_consumer_t *consumer = NULL;
  const char *topics[] = {topic};
  cursus_record_metadata_t md;
  int64_t offset = -1;
  int status = -1;
  CHECK(create_topic(topic, 1));
  CHECK_OK(cursus_producer_new(c, &producer, &err));
  CHECK_OK(cursus_producer_send(producer, topic, 0, NULL, 0, (const uint8_t *)"parent", 6, CURSUS_NO_TIMESTAMP, &md,
                                &err));
  CHECK_OK(cursus_consumer_new(cc, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(consumer, topics, 1, &err));
  CHECK(take_messages(consumer, 1, &offset) == 1 && offset == 0);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) _exit(child_after_fork(producer, consumer, topic, group));
  /* A hang guard: the child gets 60 s. */
  for (int waited = 0; waited < 600; waited++) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    usleep(100 * 1000);
  }
  if (!WIFEXITED(status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  CHECK(WIFEXITED(status));
  if (WEXITSTATUS(status) != 0) fprintf(stderr, "  child exited with %d\n", WEXITSTATUS(status));
  CHECK(WEXITSTATUS(status) == 0);
  /* The parent's clients still work: the consumer takes the child's record,
   * the producer appends after it. */
  CHECK(take_messages(consumer, 1, &offset) == 1 && offset == 1);
  CHECK_OK(cursus_producer_send(producer, topic, 0, NULL, 0, (const uint8_t *)"again", 5, CURSUS_NO_TIMESTAMP, &md,
                                &err));
  CHECK(md.offset == 2);
done:
  if (consumer) cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_producer_close(producer, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(producer);
  cursus_config_destroy(c);
  cursus_config_destroy(cc);
}
