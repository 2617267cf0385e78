/* The C test runner: runs every test against the broker in
 * $CURSUS_TEST_BROKER (see with-broker.sh), one line per test, then the
 * summary "N passed, N failed". */
#include "test_util.h"

/* test_api.c */
void test_version(void);
void test_config_validation(void);
void test_invalid_handles(void);
void test_consumer_requires_group(void);
void test_admin_errors_and_lists(void);
void test_admin_typed_results(void);
void test_produce_and_consume_through_group(void);
void test_commits_assignment_and_group_status(void);
void test_send_to_missing_topic_fails_with_class(void);
void test_concurrent_sends_on_one_producer(void);
void test_poll_batch_record_view(void);
/* test_cluster.c */
void test_cluster_admin_needs_distributed_mode(void);
void test_cluster_accessors_of_invalid_handles(void);
/* test_batch.c */
void test_send_batch_reports_each_record_once_per_batch(void);
void test_send_batch_traced_carries_metadata_and_context(void);
/* test_edges.c */
void test_callback_may_send_and_flush_its_producer(void);
void test_blocked_callback_does_not_stall_another_producer(void);
void test_close_and_wakeup_interrupt_a_blocked_poll(void);
void test_poll_returns_only_with_messages_at_its_deadline_or_when_woken(void);
void test_close_commits_only_the_messages_taken(void);
void test_fork_child_uses_its_own_clients(void);
/* test_txn.c */
void test_txn_commit_is_visible_to_read_committed(void);
void test_txn_abort_is_never_visible(void);
void test_txn_read_uncommitted_sees_open_records(void);
void test_txn_consume_process_produce(void);
void test_txn_zombie_is_fenced(void);
void test_txn_async_variants(void);
void test_txn_calls_in_the_wrong_state(void);
/* test_eventstore.c */
void test_es_append_and_read_back(void);
void test_es_version_conflict_has_fields(void);
void test_es_snapshots_and_stream_after_one(void);
void test_es_stream_cursor_pages(void);
void test_es_history_pages_and_completeness(void);
void test_es_browse_pages(void);
void test_es_aggregate_cycle_with_snapshots(void);
void test_es_aggregate_event_id_offset_and_snapshot_policy(void);
void test_es_topic_without_event_sourcing(void);
void test_es_bad_arguments(void);
void test_es_append_event_async(void);
/* test_replay.c */
void test_replay_event_id_and_exact_retry(void);
void test_replay_identity_conflict(void);
void test_replay_proof_and_range(void);
void test_replay_proof_needs_a_replay_topic(void);
void test_txn_append_stream_commit(void);
void test_txn_append_stream_abort(void);
/* test_control.c */
void test_record_fields_and_timestamps(void);
void test_seek_position_pause_resume_and_committed_list(void);
void test_rebalance_listener_seeks_and_commits_on_close(void);
void test_statistics_snapshot_and_listener(void);
void test_log_listener_gets_engine_records(void);
/* test_trace.c */
void test_trace_context_round_trip(void);
void test_trace_context_accessors_of_invalid_handles(void);
void test_span_specs_are_the_engines(void);
void test_trace_context_new_and_metric_names(void);
/* test_security.c */
void test_tls_mutual_auth_produce_and_consume(void);
void test_wrong_token_is_authentication_failed(void);
void test_tls_without_client_certificate_is_refused(void);
void test_tls_untrusted_ca_is_unknown_ca(void);
void test_missing_permission_is_not_authorized_for_operation(void);

struct test {
  const char *name;
  void (*fn)(void);
};

#define TEST(name) {#name, test_##name}

int main(void) {
  static const struct test tests[] = {
      TEST(version),
      TEST(config_validation),
      TEST(invalid_handles),
      TEST(consumer_requires_group),
      TEST(admin_errors_and_lists),
      TEST(admin_typed_results),
      TEST(cluster_admin_needs_distributed_mode),
      TEST(cluster_accessors_of_invalid_handles),
      TEST(produce_and_consume_through_group),
      TEST(commits_assignment_and_group_status),
      TEST(send_to_missing_topic_fails_with_class),
      TEST(concurrent_sends_on_one_producer),
      TEST(poll_batch_record_view),
      TEST(send_batch_reports_each_record_once_per_batch),
      TEST(send_batch_traced_carries_metadata_and_context),
      TEST(callback_may_send_and_flush_its_producer),
      TEST(blocked_callback_does_not_stall_another_producer),
      TEST(close_and_wakeup_interrupt_a_blocked_poll),
      TEST(poll_returns_only_with_messages_at_its_deadline_or_when_woken),
      TEST(close_commits_only_the_messages_taken),
      TEST(fork_child_uses_its_own_clients),
      TEST(txn_commit_is_visible_to_read_committed),
      TEST(txn_abort_is_never_visible),
      TEST(txn_read_uncommitted_sees_open_records),
      TEST(txn_consume_process_produce),
      TEST(txn_zombie_is_fenced),
      TEST(txn_async_variants),
      TEST(txn_calls_in_the_wrong_state),
      TEST(es_append_and_read_back),
      TEST(es_version_conflict_has_fields),
      TEST(es_snapshots_and_stream_after_one),
      TEST(es_stream_cursor_pages),
      TEST(es_history_pages_and_completeness),
      TEST(es_browse_pages),
      TEST(es_aggregate_cycle_with_snapshots),
      TEST(es_aggregate_event_id_offset_and_snapshot_policy),
      TEST(es_topic_without_event_sourcing),
      TEST(es_bad_arguments),
      TEST(es_append_event_async),
      TEST(replay_event_id_and_exact_retry),
      TEST(replay_identity_conflict),
      TEST(replay_proof_and_range),
      TEST(replay_proof_needs_a_replay_topic),
      TEST(txn_append_stream_commit),
      TEST(txn_append_stream_abort),
      TEST(record_fields_and_timestamps),
      TEST(seek_position_pause_resume_and_committed_list),
      TEST(rebalance_listener_seeks_and_commits_on_close),
      TEST(statistics_snapshot_and_listener),
      TEST(log_listener_gets_engine_records),
      TEST(trace_context_round_trip),
      TEST(trace_context_accessors_of_invalid_handles),
      TEST(span_specs_are_the_engines),
      TEST(trace_context_new_and_metric_names),
      TEST(tls_mutual_auth_produce_and_consume),
      TEST(wrong_token_is_authentication_failed),
      TEST(tls_without_client_certificate_is_refused),
      TEST(tls_untrusted_ca_is_unknown_ca),
      TEST(missing_permission_is_not_authorized_for_operation),
  };
  broker = getenv("CURSUS_TEST_BROKER");
  if (broker == NULL || *broker == '\0') {
    fprintf(stderr, "CURSUS_TEST_BROKER is not set (run through with-broker.sh)\n");
    return 2;
  }
  /* CURSUS_TEST_FILTER=substring runs only the tests whose name has it;
   * CURSUS_TEST_EXCLUDE=substring leaves those out. */
  const char *filter = getenv("CURSUS_TEST_FILTER");
  const char *exclude = getenv("CURSUS_TEST_EXCLUDE");
  int passed = 0, failed = 0;
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    if (filter && !strstr(tests[i].name, filter)) continue;
    if (exclude && *exclude && strstr(tests[i].name, exclude)) continue;
    failed_checks = 0;
    tests[i].fn();
    if (failed_checks == 0) {
      passed++;
      printf("test %s ... ok\n", tests[i].name);
    } else {
      failed++;
      printf("test %s ... FAILED\n", tests[i].name);
    }
    fflush(stdout);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
