//! TLS (custom CA, mutual TLS) and token AUTH against the reference broker
//! with both on: what works, and the typed error of each way it can fail.

use cursus::admin::{Admin, NewTopic};
use cursus::{ClientConfig, ErrorKind};
use cursus_testkit::pki::TestPki;
use cursus_testkit::TestBroker;
use cursus_wire::ErrorClass;

/// A broker with a plain and a TLS listener, mutual TLS, and two users.
struct Secure {
    broker: TestBroker,
    pki: TestPki,
    _dir: tempfile::TempDir,
}

fn secure_broker() -> Secure {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    let toml = format!(
        r#"
tls_listen = "127.0.0.1:0"
tls_cert_file = "{}"
tls_key_file = "{}"
tls_client_ca_file = "{}"
enable_sasl = true

[[users]]
principal = "alice"
token = "alice-token"
permissions = ["*"]

[[users]]
principal = "bob"
token = "bob-token"
permissions = ["topic.read"]
"#,
        pki.server_cert.display(),
        pki.server_key.display(),
        pki.ca.display()
    );
    Secure {
        broker: TestBroker::start_with_config(&toml),
        pki,
        _dir: dir,
    }
}

impl Secure {
    fn tls_addr(&self) -> &str {
        self.broker.tls_addr.as_deref().expect("TLS listener")
    }

    /// Options of a client that does everything right, as `alice`.
    fn config(&self) -> ClientConfig {
        let mut c = ClientConfig::new(self.tls_addr());
        for (k, v) in [
            ("tls_ca_file", self.pki.ca.to_str().unwrap()),
            ("tls_cert_file", self.pki.client_cert.to_str().unwrap()),
            ("tls_key_file", self.pki.client_key.to_str().unwrap()),
            ("principal", "alice"),
            ("token", "alice-token"),
        ] {
            c.set(k, v).unwrap();
        }
        c
    }
}

fn assert_tls_error(e: &cursus::Error, reason: &str) {
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
    assert_eq!(e.code(), "tls_handshake_failed", "{e}");
    assert_eq!(e.class(), ErrorClass::Authorization, "{e}");
    assert!(!e.retryable(), "{e}");
    assert_eq!(e.field("reason"), Some(reason), "{e}");
}

#[tokio::test]
async fn tls_mutual_tls_and_auth_work_together() {
    let s = secure_broker();
    let admin = Admin::connect(s.config()).await.unwrap();
    admin
        .create_topic(&NewTopic::new("secure").partitions(1))
        .await
        .unwrap();
    assert_eq!(admin.list_topics().await.unwrap(), ["secure"]);
}

#[tokio::test]
async fn a_broker_certificate_from_another_ca_is_unknown_ca() {
    let s = secure_broker();
    let mut c = s.config();
    c.set("tls_ca_file", s.pki.other_ca.to_str().unwrap())
        .unwrap();
    let e = Admin::connect(c).await.unwrap_err();
    assert_tls_error(&e, "unknown_ca");
    assert!(e.message().contains("tls_ca_file"), "{e}");
}

#[tokio::test]
async fn a_certificate_for_another_name_is_name_mismatch() {
    let s = secure_broker();
    let mut c = s.config();
    c.set("tls_server_name", "broker.example.invalid").unwrap();
    let e = Admin::connect(c).await.unwrap_err();
    assert_tls_error(&e, "name_mismatch");
    assert!(e.message().contains("broker.example.invalid"), "{e}");
}

#[tokio::test]
async fn mutual_tls_refuses_a_missing_or_foreign_client_certificate() {
    let s = secure_broker();
    let mut without = ClientConfig::new(s.tls_addr());
    without
        .set("tls_ca_file", s.pki.ca.to_str().unwrap())
        .unwrap();
    without.set("principal", "alice").unwrap();
    without.set("token", "alice-token").unwrap();
    let e = Admin::connect(without).await.unwrap_err();
    assert_tls_error(&e, "client_certificate_refused");

    let mut foreign = s.config();
    foreign
        .set("tls_cert_file", s.pki.other_client_cert.to_str().unwrap())
        .unwrap();
    foreign
        .set("tls_key_file", s.pki.other_client_key.to_str().unwrap())
        .unwrap();
    let e = Admin::connect(foreign).await.unwrap_err();
    assert_tls_error(&e, "client_certificate_refused");

    // The broker still serves a client that has one.
    Admin::connect(s.config()).await.unwrap();
}

#[tokio::test]
async fn a_plain_client_on_the_tls_port_is_told_to_use_tls() {
    let s = secure_broker();
    let mut c = ClientConfig::new(s.tls_addr());
    c.retries = 0;
    let e = Admin::connect(c).await.unwrap_err();
    assert_eq!(e.code(), "not_cursus_wire", "{e}");
    assert!(e.message().contains("tls=true"), "{e}");
}

#[tokio::test]
async fn a_tls_client_on_the_plain_port_fails_with_a_hint() {
    let s = secure_broker();
    let mut c = s.config();
    c.bootstrap_servers = vec![s.broker.addr.clone()];
    c.retries = 0;
    let e = Admin::connect(c).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains("TLS listener"), "{e}");
}

#[tokio::test]
async fn a_wrong_token_is_authentication_failed_and_not_retried() {
    let s = secure_broker();
    let mut c = s.config();
    c.set("token", "not-alice-token").unwrap();
    let e = Admin::connect(c).await.unwrap_err();
    assert_eq!(e.code(), "authentication_failed", "{e}");
    assert_eq!(e.class(), ErrorClass::Authorization);
    assert!(!e.retryable());
    assert_eq!(e.field("principal"), Some("alice"));
    assert!(!e.to_string().contains("not-alice-token"), "{e}");
}

#[tokio::test]
async fn a_missing_permission_names_the_command_and_the_permission() {
    let s = secure_broker();
    let mut c = s.config();
    c.set("principal", "bob").unwrap();
    c.set("token", "bob-token").unwrap();
    let admin = Admin::connect(c).await.unwrap();
    let e = admin
        .create_topic(&NewTopic::new("not-for-bob").partitions(1))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "NOT_AUTHORIZED_FOR_OPERATION", "{e}");
    assert_eq!(e.field("command"), Some("CREATE"));
    assert_eq!(e.field("permission"), Some("admin"));
}

#[test]
fn debug_output_never_shows_the_token() {
    let mut c = ClientConfig::new("127.0.0.1:9000");
    c.set("principal", "alice").unwrap();
    c.set("token", "very-secret-token").unwrap();
    let shown = format!("{c:?}");
    assert!(shown.contains("alice"), "{shown}");
    assert!(!shown.contains("very-secret-token"), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
}
