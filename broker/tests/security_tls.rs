//! The TLS listener (docs/security.md "TLS"): handshakes with TLS 1.2 and
//! 1.3, mutual TLS, wrong-protocol clients, SIGHUP reload and startup
//! validation of the certificate files.

mod security_common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;

use cursus_testkit::pki::TestPki;
use cursus_testkit::{eventually_async, TestBroker};
use security_common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::version::{TLS12, TLS13};

/// A PKI in its own directory, plus copies of the server pair under fixed
/// names the broker is configured with (so a test can swap them).
struct Setup {
    _dir: tempfile::TempDir,
    pki: TestPki,
    cert: PathBuf,
    key: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("temp dir");
    let pki = TestPki::generate(&dir.path().join("pki")).expect("pki");
    let cert = dir.path().join("live-cert.pem");
    let key = dir.path().join("live-key.pem");
    std::fs::copy(&pki.server_cert, &cert).unwrap();
    std::fs::copy(&pki.server_key, &key).unwrap();
    Setup {
        _dir: dir,
        pki,
        cert,
        key,
    }
}

impl Setup {
    fn toml(&self, mutual: bool) -> String {
        let mut toml = format!(
            "tls_listen = \"127.0.0.1:0\"\ntls_cert_file = {}\ntls_key_file = {}\n",
            toml_path(&self.cert),
            toml_path(&self.key)
        );
        if mutual {
            toml += &format!("tls_client_ca_file = {}\n", toml_path(&self.pki.ca));
        }
        toml
    }

    fn start(&self, mutual: bool) -> (TestBroker, String) {
        let broker = start(&self.toml(mutual));
        let tls = broker.tls_addr.clone().expect("banner has tls_addr=");
        (broker, tls)
    }

    fn install(&self, cert: &Path, key: &Path) {
        std::fs::copy(cert, &self.cert).unwrap();
        std::fs::copy(key, &self.key).unwrap();
    }
}

fn sighup(pid: u32) {
    let status = Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

#[tokio::test]
async fn tls_handshake_then_requests_work_next_to_the_plain_listener() {
    let s = setup();
    let (broker, tls) = s.start(false);
    let mut c = Client::tls(&tls, &TlsClient::trusting(&s.pki.ca))
        .await
        .expect("TLS connection");
    c.ok("CREATE topic=t partitions=1").await;
    c.ok("PUBLISH topic=t acks=1 producerId=p message=hello")
        .await;
    // The plain listener serves the same broker.
    let mut plain = Client::plain(&broker.addr).await;
    assert!(plain.ok("LIST").await.contains("t"));
    // Each client is pointed at the listener it came in on.
    let tls_port = tls.rsplit_once(':').unwrap().1;
    let plain_port = broker.addr.rsplit_once(':').unwrap().1;
    assert!(c
        .ok("METADATA topic=t")
        .await
        .contains(&format!("leaders={tls}")));
    let coordinator = c.ok("FIND_COORDINATOR group=g").await;
    assert!(
        coordinator.ends_with(&format!("port={tls_port}")),
        "{coordinator}"
    );
    let ack = c
        .ok("PUBLISH topic=t acks=1 producerId=p message=again")
        .await;
    assert!(ack.contains(&format!("\"leader\":\"{tls}\"")), "{ack}");
    let metadata = plain.ok("METADATA topic=t").await;
    assert!(
        metadata.contains(&format!("leaders={}", broker.addr)),
        "{metadata}"
    );
    let coordinator = plain.ok("FIND_COORDINATOR group=g").await;
    assert!(
        coordinator.ends_with(&format!("port={plain_port}")),
        "{coordinator}"
    );
}

#[tokio::test]
async fn tls12_only_and_tls13_only_clients_both_work() {
    let s = setup();
    let (_broker, tls) = s.start(false);
    for (versions, expected) in [(&[&TLS12][..], "TLSv1_2"), (&[&TLS13][..], "TLSv1_3")] {
        let settings = TlsClient {
            versions,
            ..TlsClient::trusting(&s.pki.ca)
        };
        let version = Client::tls_version(&tls, &settings).await.expect("connect");
        assert!(version.contains(expected), "{version}");
    }
}

#[tokio::test]
async fn mutual_tls_accepts_only_clients_signed_by_the_client_ca() {
    let s = setup();
    let (_broker, tls) = s.start(true);
    let good = TlsClient {
        identity: Some((&s.pki.client_cert, &s.pki.client_key)),
        ..TlsClient::trusting(&s.pki.ca)
    };
    let mut c = Client::tls(&tls, &good).await.expect("trusted client");
    c.ok("LIST").await;

    for versions in [&[&TLS12][..], &[&TLS13][..]] {
        let anonymous = TlsClient {
            versions,
            ..TlsClient::trusting(&s.pki.ca)
        };
        assert!(
            Client::tls(&tls, &anonymous).await.is_err(),
            "no certificate"
        );
        let foreign = TlsClient {
            identity: Some((&s.pki.other_client_cert, &s.pki.other_client_key)),
            versions,
            ..TlsClient::trusting(&s.pki.ca)
        };
        assert!(Client::tls(&tls, &foreign).await.is_err(), "other CA");
    }
    // Refused clients do not disturb an accepted one.
    c.ok("LIST").await;
}

#[tokio::test]
async fn wrong_protocol_clients_are_closed_and_others_still_served() {
    let s = setup();
    let (broker, tls) = s.start(false);
    // A Wire v2 negotiation in plaintext on the TLS port: never answered
    // with a frame; the connection ends.
    let mut raw = tokio::net::TcpStream::connect(&tls).await.unwrap();
    let request = cursus_wire::NegotiationRequest::for_compression(cursus_wire::Compression::None);
    let frame = cursus_wire::Frame::negotiation_request(request.encode().unwrap());
    raw.write_all(&frame.to_bytes(cursus_wire::Compression::None).unwrap())
        .await
        .unwrap();
    let mut got = Vec::new();
    let _ = within(raw.read_to_end(&mut got)).await;
    // A TLS alert record (content type 21; clients recognise it where a
    // frame header should be), never a Wire v2 frame.
    assert_eq!(got.first(), Some(&21), "{got:?}");

    // A TLS client on the plain port fails.
    assert!(Client::tls(&broker.addr, &TlsClient::trusting(&s.pki.ca))
        .await
        .is_err());

    // Both listeners still serve well-behaved clients.
    Client::plain(&broker.addr).await.ok("LIST").await;
    Client::tls(&tls, &TlsClient::trusting(&s.pki.ca))
        .await
        .expect("TLS client")
        .ok("LIST")
        .await;
}

#[tokio::test]
async fn sighup_reloads_the_certificate_for_new_connections_only() {
    let s = setup();
    let (broker, tls) = s.start(false);
    let mut old = Client::tls(&tls, &TlsClient::trusting(&s.pki.ca))
        .await
        .expect("before reload");
    s.install(&s.pki.other_server_cert, &s.pki.other_server_key);
    sighup(broker.pid().expect("pid"));

    // The reload has no observable event but its effect: poll, bounded.
    let other = TlsClient::trusting(&s.pki.other_ca);
    let mut fresh = eventually_async!(
        SAFETY,
        "the new certificate to be served",
        Client::tls(&tls, &other)
    );
    fresh.ok("LIST").await;
    // New connections no longer verify with the old CA...
    assert!(Client::tls(&tls, &TlsClient::trusting(&s.pki.ca))
        .await
        .is_err());
    // ...while the connection opened before the reload is untouched.
    old.ok("LIST").await;
}

#[tokio::test]
async fn a_failed_reload_keeps_the_previous_certificate() {
    let s = setup();
    let config = s._dir.path().join("broker.toml");
    std::fs::write(&config, s.toml(false)).unwrap();
    // The reload failure is only visible in the log.
    let logged = spawn_logged(
        &config,
        &s._dir.path().join("data"),
        &["--listen", "127.0.0.1:0"],
        "error",
    );
    let (mut child, tls) = (logged.child, banner_field(&logged.banner, "tls_addr"));
    let mut log = BufReader::new(logged.stderr).lines();

    // A certificate with a key that does not belong to it.
    s.install(&s.pki.other_server_cert, &s.pki.server_key);
    sighup(child.id());
    let failure = tokio::task::spawn_blocking(move || {
        log.find(|l| l.as_deref().is_ok_and(|l| l.contains("TLS reload failed")))
            .map(|l| l.unwrap())
    });
    let line = within(failure)
        .await
        .unwrap()
        .expect("reload failure logged");
    assert!(line.contains("tls_key_file"), "{line}");

    let mut c = Client::tls(&tls, &TlsClient::trusting(&s.pki.ca))
        .await
        .expect("old certificate still served");
    c.ok("LIST").await;
    assert!(Client::tls(&tls, &TlsClient::trusting(&s.pki.other_ca))
        .await
        .is_err());
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn invalid_tls_configuration_fails_startup_with_the_reason() {
    let s = setup();
    let dir = s._dir.path();
    let garbage = dir.join("garbage.pem");
    std::fs::write(&garbage, "not a PEM file\n").unwrap();
    let tls = |cert: &Path, key: &Path| {
        format!(
            "tls_listen = \"127.0.0.1:0\"\ntls_cert_file = {}\ntls_key_file = {}\n",
            toml_path(cert),
            toml_path(key)
        )
    };
    let cases: Vec<(String, &str)> = vec![
        (
            "tls_listen = \"127.0.0.1:0\"\n".into(),
            "tls_listen needs tls_cert_file",
        ),
        (
            format!(
                "tls_listen = \"127.0.0.1:0\"\ntls_cert_file = {}\n",
                toml_path(&s.cert)
            ),
            "tls_listen needs tls_key_file",
        ),
        (
            format!("tls_cert_file = {}\n", toml_path(&s.cert)),
            "need tls_listen",
        ),
        (
            tls(&dir.join("missing.pem"), &s.key),
            "cannot read tls_cert_file",
        ),
        (
            tls(&s.cert, &dir.join("missing.pem")),
            "cannot read tls_key_file",
        ),
        (tls(&garbage, &s.key), "tls_cert_file"),
        (tls(&s.cert, &garbage), "no PEM private key"),
        (tls(&s.pki.other_server_cert, &s.key), "does not fit"),
        (
            tls(&s.cert, &s.key) + &format!("tls_client_ca_file = {}\n", toml_path(&garbage)),
            "tls_client_ca_file",
        ),
        ("listen = \"off\"\n".into(), "needs tls_listen"),
    ];
    for (toml, needle) in cases {
        // --listen on the command line would override listen = "off".
        let flags: &[&str] = &[];
        let stderr = if toml.starts_with("listen") {
            startup_failure_without_listen(&toml)
        } else {
            startup_failure(&toml, flags)
        };
        assert!(stderr.contains(needle), "{toml:?}: {stderr}");
    }
}

fn startup_failure_without_listen(toml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("broker.toml");
    std::fs::write(&config, toml).unwrap();
    let out = Command::new(broker_bin())
        .args(["--health-listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .output()
        .expect("run broker");
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn listen_off_serves_tls_only_and_says_so_in_the_banner() {
    let s = setup();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("broker.toml");
    std::fs::write(&config, format!("listen = \"off\"\n{}", s.toml(false))).unwrap();
    let logged = spawn_logged(&config, &dir.path().join("data"), &[], "info");
    let (mut child, banner) = (logged.child, logged.banner);
    let _ = child.kill();
    let _ = child.wait();
    assert!(banner.contains(" addr=off "), "{banner}");
    assert!(banner.contains(" tls_addr=127.0.0.1:"), "{banner}");
}
