//! Authentication (docs/security.md "Authentication"): AUTH, inline
//! credentials, the failure limit, SASL off, token hashing, log hygiene and
//! startup validation of `[[users]]`.

mod security_common;

use std::io::Read;

use cursus_wire::ErrorClass;
use security_common::*;

// sha256("test")
const TEST_SHA256: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn users() -> String {
    let mut toml = users_toml(&[
        ("ops", "ops-token", &["*"]),
        ("reader", "reader-token", &["topic.read", "group"]),
    ]);
    toml += &format!(
        "[[users]]\nprincipal = \"hashed\"\ntoken_sha256 = \"{TEST_SHA256}\"\npermissions = [\"admin\"]\n"
    );
    toml
}

#[tokio::test]
async fn auth_succeeds_fails_and_validates_its_fields() {
    let broker = start(&users());
    let mut c = Client::plain(&broker.addr).await;
    let e = c.error("AUTH principal=ops token=wrong").await;
    assert_eq!(e.code, "authentication_failed");
    assert_eq!(e.class, ErrorClass::Authorization);
    assert!(!e.retryable);
    assert_eq!(e.fields["principal"], "ops");
    let e = c.error("AUTH principal=ops").await;
    assert_eq!(e.code, "invalid_auth");
    assert_eq!(e.class, ErrorClass::Validation);
    assert_eq!(c.error("AUTH token=ops-token").await.code, "invalid_auth");
    assert_eq!(
        c.ok("AUTH principal=ops token=ops-token").await,
        "OK authenticated principal=ops"
    );
    c.ok("CREATE topic=t partitions=1").await;
    // A token configured as its SHA-256 digest.
    assert_eq!(
        c.ok("AUTH principal=hashed token=test").await,
        "OK authenticated principal=hashed"
    );
    c.ok("CREATE topic=u partitions=1").await;
}

#[tokio::test]
async fn a_later_auth_replaces_the_principal_and_a_failed_one_clears_it() {
    let broker = start(&users());
    let mut c = Client::plain(&broker.addr).await;
    c.ok("AUTH principal=ops token=ops-token").await;
    c.ok("CREATE topic=t partitions=1").await;
    c.ok("AUTH principal=reader token=reader-token").await;
    let e = c.error("CREATE topic=v partitions=1").await;
    assert_eq!(e.code, "NOT_AUTHORIZED_FOR_OPERATION");
    assert_eq!(e.fields["permission"], "admin");
    c.error("AUTH principal=ops token=nope").await;
    assert_eq!(c.error("LIST").await.code, "authentication_required");
}

#[tokio::test]
async fn the_third_failure_is_answered_then_the_connection_closed() {
    let broker = start(&users());
    let mut c = Client::plain(&broker.addr).await;
    assert_eq!(
        c.error("AUTH principal=ops token=a").await.code,
        "authentication_failed"
    );
    // Inline attempts count too.
    let e = c.error("LIST principal=nobody auth_token=b").await;
    assert_eq!(e.code, "authentication_failed");
    assert_eq!(e.fields["principal"], "nobody");
    // Missing fields are not an attempt.
    assert_eq!(c.error("AUTH principal=ops").await.code, "invalid_auth");
    assert_eq!(
        c.error("AUTH principal=ops token=c").await.code,
        "authentication_failed"
    );
    assert!(c.is_closed().await);
    // Others are unaffected.
    let mut other = Client::plain(&broker.addr).await;
    other.ok("AUTH principal=ops token=ops-token").await;
}

#[tokio::test]
async fn inline_credentials_authorize_one_request_only() {
    let broker = start(&users());
    let mut c = Client::plain(&broker.addr).await;
    c.ok("CREATE topic=t partitions=1 principal=ops auth_token=ops-token")
        .await;
    // The connection itself stays unauthenticated.
    assert_eq!(c.error("LIST").await.code, "authentication_required");
    // The fields are gone before the handler: the message is intact and
    // nothing else sees them.
    c.ok("PUBLISH topic=t acks=1 producerId=p principal=ops auth_token=ops-token message=hello")
        .await;
    let batch = c
        .reply("CONSUME topic=t partition=0 offset=0 member=m principal=reader auth_token=reader-token")
        .await;
    assert!(batch.expect("consume").contains("hello"));
    // One field without the other is invalid.
    assert_eq!(c.error("LIST principal=ops").await.code, "invalid_auth");
    assert_eq!(
        c.error("LIST auth_token=ops-token").await.code,
        "invalid_auth"
    );
    // Inline credentials of another principal override the connection's.
    c.ok("AUTH principal=ops token=ops-token").await;
    let e = c
        .error("CREATE topic=w partitions=1 principal=reader auth_token=reader-token")
        .await;
    assert_eq!(e.code, "NOT_AUTHORIZED_FOR_OPERATION");
    c.ok("CREATE topic=w partitions=1").await;
}

#[tokio::test]
async fn with_sasl_off_auth_is_not_enforced() {
    let broker = start("");
    let mut c = Client::plain(&broker.addr).await;
    assert_eq!(
        c.ok("AUTH principal=anyone token=anything").await,
        "OK authenticated principal=anyone enforced=false"
    );
    // Inline credentials are ignored (and removed) too.
    c.ok("CREATE topic=t partitions=1 principal=x auth_token=y")
        .await;
    c.ok("LIST").await;
}

#[test]
fn tokens_never_reach_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("broker.toml");
    std::fs::write(&config, users()).unwrap();
    let logged = spawn_logged(
        &config,
        &dir.path().join("data"),
        &["--listen", "127.0.0.1:0"],
        "trace",
    );
    let (mut child, mut stderr) = (logged.child, logged.stderr);
    let addr = banner_field(&logged.banner, "addr");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = Client::plain(&addr).await;
        c.ok("AUTH principal=ops token=ops-token").await;
        c.error("AUTH principal=ops token=guess-one").await;
        c.error("LIST principal=ops auth_token=guess-two").await;
        c.ok("EXIT").await;
    });
    let _ = child.kill();
    let _ = child.wait();
    let mut log = String::new();
    stderr.read_to_string(&mut log).unwrap();
    assert!(log.contains("authentication failed"), "{log}");
    for secret in [
        "ops-token",
        "reader-token",
        "guess-one",
        "guess-two",
        TEST_SHA256,
    ] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
}

/// Runs the binary with `toml`; expects a startup failure naming `needle`.
fn fails_with(toml: &str, needle: &str) {
    let stderr = startup_failure(toml, &[]);
    assert!(stderr.contains(needle), "{toml:?}: {stderr}");
    assert!(!stderr.contains("s3cret"), "a token in the error: {stderr}");
}

#[test]
fn invalid_auth_configuration_fails_startup_naming_the_problem() {
    let user = |body: &str| format!("enable_sasl = true\n[[users]]\n{body}\n");
    fails_with(
        &user("principal = \"\"\ntoken = \"s3cret\"\npermissions = [\"*\"]"),
        "users[0]: principal is missing or empty",
    );
    fails_with(
        &user("token = \"s3cret\"\npermissions = [\"*\"]"),
        "users[0]: principal is missing or empty",
    );
    fails_with(
        &user("principal = \"a b\"\ntoken = \"s3cret\"\npermissions = [\"*\"]"),
        "user \"a b\": principal contains whitespace",
    );
    fails_with(
        &(user("principal = \"ops\"\ntoken = \"s3cret\"\npermissions = [\"*\"]")
            + "[[users]]\nprincipal = \"ops\"\ntoken = \"other\"\npermissions = [\"*\"]\n"),
        "user \"ops\": principal is configured twice",
    );
    fails_with(
        &user("principal = \"ops\"\npermissions = [\"*\"]"),
        "user \"ops\": needs token or token_sha256",
    );
    fails_with(
        &user(&format!(
            "principal = \"ops\"\ntoken = \"s3cret\"\ntoken_sha256 = \"{TEST_SHA256}\"\npermissions = [\"*\"]"
        )),
        "user \"ops\": has both token and token_sha256",
    );
    fails_with(
        &user("principal = \"ops\"\ntoken_sha256 = \"abc\"\npermissions = [\"*\"]"),
        "user \"ops\": token_sha256 must be 64 hexadecimal digits",
    );
    fails_with(
        &user(&format!(
            "principal = \"ops\"\ntoken_sha256 = \"{}\"\npermissions = [\"*\"]",
            "g".repeat(64)
        )),
        "token_sha256 must be 64 hexadecimal digits",
    );
    fails_with(
        &user("principal = \"ops\"\ntoken = \"s3cret\"\npermissions = [\"root\"]"),
        "user \"ops\": unknown permission \"root\"",
    );
    fails_with(
        &user("principal = \"ops\"\ntoken = \"s3cret\"\npermissions = []"),
        "user \"ops\": permissions must be a non-empty list",
    );
    fails_with(
        &user("principal = \"ops\"\ntoken = \"s3cret\""),
        "user \"ops\": permissions must be a non-empty list",
    );
    fails_with(
        &user("principal = \"ops\"\ntoken = \"\"\npermissions = [\"*\"]"),
        "user \"ops\": token is empty",
    );
    fails_with("enable_sasl = true\n", "enable_sasl is on but no [[users]]");
    fails_with(
        "[[users]]\nprincipal = \"ops\"\ntoken = \"s3cret\"\npermissions = [\"*\"]\n",
        "enable_sasl is off",
    );
}
