/* C tests of TLS, mutual TLS and token authentication against the secure
 * broker with-broker.sh starts when CURSUS_TEST_PKI_BIN is set
 * ($CURSUS_TEST_SECURE_BROKER, certificates in $CURSUS_TEST_PKI; users
 * ffi-admin with every permission, ffi-reader with topic.read only).
 * Without it each test fails: `make test-c` always provides it, and a
 * security test that silently passes would prove nothing. */
#include "test_util.h"

static const char *secure_broker(void) {
  const char *addr = getenv("CURSUS_TEST_SECURE_BROKER");
  if (addr == NULL || *addr == '\0' || getenv("CURSUS_TEST_PKI") == NULL) {
    fprintf(stderr, "  no secure broker (run with-broker.sh with CURSUS_TEST_PKI_BIN)\n");
    failed_checks++;
    return NULL;
  }
  return addr;
}

/* The path of a file of the test PKI. */
static void pki_file(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/%s", getenv("CURSUS_TEST_PKI"), name);
}

/* A configuration for `kind` on the secure broker: TLS trusting `ca`
 * (a file of the PKI), the client certificate when `client_cert`, and
 * the principal's token when `principal` is not NULL. */
static cursus_config_t *secure_config(const char *kind, const char *group, const char *ca, int client_cert,
                                      const char *principal, const char *token) {
  char path[1024];
  cursus_config_t *c = NULL;
  if (cursus_config_new_for(kind, &c, NULL) != CURSUS_OK) abort();
  set_option(c, "bootstrap_servers", getenv("CURSUS_TEST_SECURE_BROKER"));
  set_option(c, "tls", "true");
  pki_file(path, sizeof path, ca);
  set_option(c, "tls_ca_file", path);
  if (client_cert) {
    pki_file(path, sizeof path, "client.pem");
    set_option(c, "tls_cert_file", path);
    pki_file(path, sizeof path, "client.key");
    set_option(c, "tls_key_file", path);
  }
  if (principal) {
    set_option(c, "principal", principal);
    set_option(c, "token", token);
  }
  if (group) {
    set_option(c, "group_id", group);
    set_option(c, "fetch_max_wait_ms", "50");
  }
  /* Failures must come from the errors, never from a long wait. */
  set_option(c, "connect_timeout_ms", "10000");
  return c;
}

void test_tls_mutual_auth_produce_and_consume(void) {
  if (!secure_broker()) return;
  char topic[64], group[64];
  unique_name(topic, sizeof topic, "c-secure");
  unique_name(group, sizeof group, "c-secure-group");
  cursus_config_t *ac = secure_config("admin", NULL, "ca.pem", 1, "ffi-admin", "ffi-admin-token");
  cursus_config_t *pc = secure_config("producer", NULL, "ca.pem", 1, "ffi-admin", "ffi-admin-token");
  cursus_config_t *cc = secure_config("consumer", group, "ca.pem", 1, "ffi-admin", "ffi-admin-token");
  cursus_admin_t *admin = NULL;
  cursus_producer_t *producer = NULL;
  cursus_consumer_t *consumer = NULL;
  cursus_message_t *m = NULL;
  cursus_error_t *err = NULL;
  const char *topics[] = {topic};
  cursus_record_metadata_t meta;
  CHECK_OK(cursus_admin_new(ac, &admin, &err));
  CHECK_OK(cursus_admin_create_topic(admin, topic, 1, NULL, &err));
  CHECK_OK(cursus_producer_new(pc, &producer, &err));
  CHECK_OK(cursus_producer_send(producer, topic, 0, (const uint8_t *)"k", 1, (const uint8_t *)"over-tls", 8,
                                CURSUS_NO_TIMESTAMP, &meta, &err));
  CHECK(meta.partition == 0 && meta.offset == 0);
  CHECK_OK(cursus_consumer_new(cc, &consumer, &err));
  CHECK_OK(cursus_consumer_subscribe(consumer, topics, 1, &err));
  for (int polls = 0; m == NULL && polls < 100; polls++) CHECK_OK(cursus_consumer_poll(consumer, 200, &m, &err));
  CHECK(m != NULL);
  size_t len = 0;
  const uint8_t *payload = cursus_message_payload(m, &len);
  CHECK(len == 8 && memcmp(payload, "over-tls", 8) == 0);
  CHECK(cursus_message_offset(m) == 0);
done:
  cursus_message_destroy(m);
  cursus_error_destroy(err);
  cursus_consumer_close(consumer, NULL);
  cursus_consumer_destroy(consumer);
  cursus_producer_close(producer, CURSUS_DEFAULT_TIMEOUT, NULL);
  cursus_producer_destroy(producer);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_config_destroy(ac);
  cursus_config_destroy(pc);
  cursus_config_destroy(cc);
}

void test_wrong_token_is_authentication_failed(void) {
  if (!secure_broker()) return;
  static const char secret[] = "not-the-token-c-s3cr3t";
  cursus_config_t *ac = secure_config("admin", NULL, "ca.pem", 1, "ffi-admin", secret);
  cursus_config_t *pc = secure_config("producer", NULL, "ca.pem", 1, "ffi-admin", secret);
  cursus_admin_t *admin = NULL;
  cursus_producer_t *producer = NULL;
  cursus_error_t *err = NULL;
  /* Opening connects: the refused AUTH fails the open, and is not retried. */
  CHECK_FAILS(CURSUS_ERR_AUTHORIZATION, cursus_admin_new(ac, &admin, &err), &err);
  CHECK(admin == NULL);
  CHECK(strcmp(cursus_error_code(err), "authentication_failed") == 0);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_AUTHORIZATION);
  CHECK(!cursus_error_retryable(err));
  CHECK(cursus_error_field(err, "principal") != NULL && strcmp(cursus_error_field(err, "principal"), "ffi-admin") == 0);
  /* The token never shows in the error. */
  CHECK(strstr(cursus_error_text(err), secret) == NULL && strstr(cursus_error_message(err), secret) == NULL);
  CHECK_FAILS(CURSUS_ERR_AUTHORIZATION, cursus_producer_new(pc, &producer, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "authentication_failed") == 0);
  CHECK(strstr(cursus_error_text(err), secret) == NULL);
done:
  cursus_error_destroy(err);
  cursus_admin_destroy(admin);
  cursus_producer_destroy(producer);
  cursus_config_destroy(ac);
  cursus_config_destroy(pc);
}

/* Opens an admin with `c`, which must fail the TLS handshake with `reason`. */
static int handshake_fails_with(cursus_config_t *c, const char *reason) {
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  int good = 0;
  cursus_status_t s = cursus_admin_new(c, &admin, &err);
  CHECK(admin == NULL && err != NULL);
  if (s != CURSUS_ERR_AUTHORIZATION || strcmp(cursus_error_code(err), "tls_handshake_failed") != 0 ||
      cursus_error_field(err, "reason") == NULL || strcmp(cursus_error_field(err, "reason"), reason) != 0) {
    fprintf(stderr, "  expected tls_handshake_failed reason=%s, got: %s\n", reason, cursus_error_text(err));
    CHECK(0);
  }
  CHECK(cursus_error_class(err) == CURSUS_CLASS_AUTHORIZATION);
  CHECK(!cursus_error_retryable(err));
  good = 1;
done:
  cursus_error_destroy(err);
  cursus_admin_destroy(admin);
  return good;
}

void test_tls_without_client_certificate_is_refused(void) {
  if (!secure_broker()) return;
  cursus_config_t *c = secure_config("admin", NULL, "ca.pem", 0, "ffi-admin", "ffi-admin-token");
  CHECK(handshake_fails_with(c, "client_certificate_refused"));
done:
  cursus_config_destroy(c);
}

void test_tls_untrusted_ca_is_unknown_ca(void) {
  if (!secure_broker()) return;
  cursus_config_t *c = secure_config("admin", NULL, "other-ca.pem", 1, "ffi-admin", "ffi-admin-token");
  CHECK(handshake_fails_with(c, "unknown_ca"));
done:
  cursus_config_destroy(c);
}

void test_missing_permission_is_not_authorized_for_operation(void) {
  if (!secure_broker()) return;
  char topic[64];
  unique_name(topic, sizeof topic, "c-secure-denied");
  cursus_config_t *c = secure_config("admin", NULL, "ca.pem", 1, "ffi-reader", "ffi-reader-token");
  cursus_admin_t *admin = NULL;
  cursus_error_t *err = NULL;
  CHECK_OK(cursus_admin_new(c, &admin, &err));
  CHECK_FAILS(CURSUS_ERR_AUTHORIZATION, cursus_admin_create_topic(admin, topic, 1, NULL, &err), &err);
  CHECK(strcmp(cursus_error_code(err), "NOT_AUTHORIZED_FOR_OPERATION") == 0);
  CHECK(cursus_error_class(err) == CURSUS_CLASS_AUTHORIZATION);
  CHECK(cursus_error_field(err, "command") && strcmp(cursus_error_field(err, "command"), "CREATE") == 0);
  CHECK(cursus_error_field(err, "permission") && strcmp(cursus_error_field(err, "permission"), "admin") == 0);
done:
  cursus_error_destroy(err);
  cursus_admin_close(admin, NULL);
  cursus_admin_destroy(admin);
  cursus_config_destroy(c);
}
