/* Cluster administration (distributed mode, docs/cluster.md) against the
 * standalone test broker, which refuses every call. */
#include "test_util.h"

/* Checks that `err` is distribution_not_enabled of class validation. */
static int not_enabled(const cursus_error_t *err) {
  return err != NULL && strcmp(cursus_error_code(err), "distribution_not_enabled") == 0 &&
         cursus_error_class(err) == CURSUS_CLASS_VALIDATION;
}

void test_cluster_admin_needs_distributed_mode(void) {
  cursus_config_t *c = config_for("admin", NULL);
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  cursus_cluster_status_t *status = NULL;
  cursus_leader_election_t *election = NULL;
  cursus_cluster_broker_list_t *brokers = NULL;
  cursus_partition_reassignment_t *moved = NULL;
  const char *replicas[] = {"broker-1"};
  CHECK_OK(cursus_admin_new(c, &admin, &err));
  CHECK_FAILS(CURSUS_ERR_VALIDATION, cursus_admin_cluster_status(admin, &status, &err), &err);
  CHECK(status == NULL);
  CHECK(not_enabled(err));
  CHECK_FAILS(CURSUS_ERR_VALIDATION, cursus_admin_elect_leader(admin, "orders", 0, "broker-1", &election, &err),
              &err);
  CHECK(election == NULL);
  CHECK(not_enabled(err));
  CHECK_FAILS(CURSUS_ERR_VALIDATION, cursus_admin_list_cluster(admin, &brokers, &err), &err);
  CHECK(brokers == NULL);
  CHECK(not_enabled(err));
  CHECK_FAILS(CURSUS_ERR_VALIDATION, cursus_admin_reassign_partition(admin, "orders", 0, replicas, 1, &moved, &err),
              &err);
  CHECK(moved == NULL);
  CHECK(not_enabled(err));
  /* No replicas, or a NULL list with a count: refused before any request. */
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT,
              cursus_admin_reassign_partition(admin, "orders", 0, replicas, 0, &moved, &err), &err);
  CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_admin_reassign_partition(admin, "orders", 0, NULL, 2, &moved, &err),
              &err);
  CHECK_OK(cursus_admin_close(admin, &err));
  CHECK_FAILS(CURSUS_ERR_CLOSED, cursus_admin_cluster_status(admin, &status, &err), &err);
done:
  cursus_cluster_status_destroy(status);
  cursus_leader_election_destroy(election);
  cursus_cluster_broker_list_destroy(brokers);
  cursus_partition_reassignment_destroy(moved);
  cursus_error_destroy(err);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
}

void test_cluster_accessors_of_invalid_handles(void) {
  /* An invalid handle reads as the documented fallbacks, never a crash. */
  CHECK(cursus_cluster_status_raft_leader(NULL) == NULL);
  CHECK(cursus_cluster_status_leaderless(NULL) == 0);
  CHECK(cursus_cluster_status_partition_count(NULL) == 0);
  CHECK(cursus_cluster_status_partition_id(NULL, 0) == -1);
  CHECK(cursus_cluster_status_partition_leader_epoch(NULL, 0) == -1);
  CHECK(cursus_cluster_status_partition_hwm(NULL, 0) == -1);
  CHECK(cursus_cluster_status_partition_replica(NULL, 0, 0) == NULL);
  CHECK(cursus_cluster_status_partition_isr_count(NULL, 0) == 0);
  CHECK(cursus_cluster_broker_list_count(NULL) == 0);
  CHECK(cursus_cluster_broker_list_id(NULL, 0) == NULL);
  CHECK(cursus_cluster_broker_list_lifecycle_protocol(NULL, 0) == -1);
  CHECK(cursus_leader_election_previous_leader(NULL) == NULL);
  CHECK(!cursus_leader_election_changed(NULL));
  CHECK(!cursus_partition_reassignment_done(NULL));
  CHECK(cursus_partition_reassignment_leader(NULL) == NULL);
  CHECK(cursus_partition_reassignment_target_count(NULL) == 0);
  CHECK(cursus_partition_reassignment_replica(NULL, 0) == NULL);
  {
    cursus_error_t *err = NULL;
    cursus_cluster_broker_list_t *brokers = NULL;
    CHECK_FAILS(CURSUS_ERR_INVALID_ARGUMENT, cursus_cluster_status_brokers(NULL, &brokers, &err), &err);
    CHECK(strcmp(cursus_error_code(err), "invalid_handle") == 0);
    cursus_error_destroy(err);
  }
done:;
}
