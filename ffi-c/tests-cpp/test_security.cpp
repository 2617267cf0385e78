// C++ tests of TLS, mutual TLS and token authentication against the secure
// broker with-broker.sh starts when CURSUS_TEST_PKI_BIN is set
// ($CURSUS_TEST_SECURE_BROKER, certificates in $CURSUS_TEST_PKI; users
// ffi-admin with every permission, ffi-reader with topic.read only).
#include "cursus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

using namespace std::chrono_literals;

namespace {

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

class Security : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("CURSUS_TEST_SECURE_BROKER").empty() || env("CURSUS_TEST_PKI").empty())
      GTEST_FAIL() << "no secure broker (run with-broker.sh with CURSUS_TEST_PKI_BIN)";
  }

  static std::string pki(const std::string &file) { return env("CURSUS_TEST_PKI") + "/" + file; }

  static std::string unique(const std::string &prefix) {
    static int n = 0;
    return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(++n);
  }

  /// A configuration for the secure broker: TLS trusting `ca` (a file of the
  /// PKI), the client certificate when `client_cert`, principal and token.
  static cursus::Config config(cursus::Kind kind, const std::string &principal = "ffi-admin",
                               const std::string &token = "ffi-admin-token", const std::string &ca = "ca.pem",
                               bool client_cert = true) {
    cursus::Config c(kind, {{"bootstrap_servers", env("CURSUS_TEST_SECURE_BROKER")},
                            {"tls", "true"},
                            {"tls_ca_file", pki(ca)},
                            {"principal", principal},
                            {"token", token},
                            {"connect_timeout_ms", "10000"}});
    if (client_cert) c.set("tls_cert_file", pki("client.pem")).set("tls_key_file", pki("client.key"));
    return c;
  }

  /// Opening an admin with `c` fails the TLS handshake with `reason`.
  static void expect_handshake_failure(const cursus::Config &c, const std::string &reason) {
    try {
      cursus::Admin admin(c);
      FAIL() << "the admin opened; expected tls_handshake_failed reason=" << reason;
    } catch (const cursus::AuthorizationError &e) {
      EXPECT_EQ(e.code(), "tls_handshake_failed") << e.what();
      EXPECT_EQ(e.status(), CURSUS_ERR_AUTHORIZATION);
      EXPECT_EQ(e.error_class(), "authorization");
      EXPECT_FALSE(e.retryable());
      ASSERT_EQ(e.fields().count("reason"), 1u) << e.what();
      EXPECT_EQ(e.fields().at("reason"), reason) << e.what();
    } catch (const cursus::Error &e) {
      FAIL() << "expected AuthorizationError tls_handshake_failed reason=" << reason << ", got: " << e.what();
    }
  }
};

TEST_F(Security, MutualTlsAndTokenProduceAndConsume) {
  const std::string topic = unique("cpp-secure"), group = unique("cpp-secure-group");
  cursus::Admin admin(config(cursus::Kind::Admin));
  auto info = admin.create_topic(topic, 1);
  EXPECT_EQ(info.name, topic);
  cursus::Producer producer(config(cursus::Kind::Producer));
  auto meta = producer.send(topic, "over-tls", std::string_view("k"), 0);
  EXPECT_EQ(meta.partition, 0);
  EXPECT_EQ(meta.offset, 0);
  cursus::Consumer consumer(config(cursus::Kind::Consumer)
                                .set("group_id", group)
                                .set("fetch_max_wait_ms", "50"));
  consumer.subscribe({topic});
  std::optional<cursus::Message> m;
  for (int polls = 0; !m && polls < 100; polls++) m = consumer.poll(200ms);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->payload(), "over-tls");
  EXPECT_EQ(m->key(), "k");
  EXPECT_EQ(m->offset(), 0);
}

TEST_F(Security, WrongTokenIsAuthenticationFailed) {
  const std::string secret = "not-the-token-cpp-s3cr3t";
  try {
    cursus::Admin admin(config(cursus::Kind::Admin, "ffi-admin", secret));
    FAIL() << "the admin opened with a wrong token";
  } catch (const cursus::AuthorizationError &e) {
    EXPECT_EQ(e.code(), "authentication_failed") << e.what();
    EXPECT_EQ(e.status(), CURSUS_ERR_AUTHORIZATION);
    EXPECT_FALSE(e.retryable());
    EXPECT_EQ(e.fields().count("principal") ? e.fields().at("principal") : "", "ffi-admin");
    // The token never shows in the error.
    EXPECT_EQ(std::string(e.what()).find(secret), std::string::npos) << e.what();
    EXPECT_EQ(e.message().find(secret), std::string::npos);
    for (const auto &kv : e.fields()) EXPECT_EQ(kv.second.find(secret), std::string::npos);
  }
  EXPECT_THROW(cursus::Producer(config(cursus::Kind::Producer, "ffi-admin", secret)), cursus::AuthorizationError);
}

TEST_F(Security, NoClientCertificateIsRefused) {
  expect_handshake_failure(config(cursus::Kind::Admin, "ffi-admin", "ffi-admin-token", "ca.pem", false),
                           "client_certificate_refused");
}

TEST_F(Security, UntrustedCaIsUnknownCa) {
  expect_handshake_failure(config(cursus::Kind::Admin, "ffi-admin", "ffi-admin-token", "other-ca.pem"), "unknown_ca");
}

TEST_F(Security, MissingPermissionIsNotAuthorizedForOperation) {
  cursus::Admin admin(config(cursus::Kind::Admin, "ffi-reader", "ffi-reader-token"));
  try {
    admin.create_topic(unique("cpp-secure-denied"), 1);
    FAIL() << "a topic.read principal created a topic";
  } catch (const cursus::AuthorizationError &e) {
    EXPECT_EQ(e.code(), "NOT_AUTHORIZED_FOR_OPERATION") << e.what();
    EXPECT_EQ(e.error_class(), "authorization");
    EXPECT_EQ(e.fields().count("command") ? e.fields().at("command") : "", "CREATE") << e.what();
    EXPECT_EQ(e.fields().count("permission") ? e.fields().at("permission") : "", "admin") << e.what();
  }
}

}  // namespace
