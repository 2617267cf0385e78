//! TLS (custom CA, mutual TLS) and AUTH, against test peers: a TLS
//! terminator in front of the real broker (the reference broker listens in
//! plain TCP), and a fake broker that checks AUTH credentials.

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::{ClientConfig, ErrorKind};
use cursus_testkit::TestBroker;
use cursus_wire::{
    CommandPayload, ErrorClass, ErrorPayload, Frame, FrameCodec, NegotiationRequest, Status,
};
use futures_util::{SinkExt, StreamExt};
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;
use tokio_util::codec::Framed;

struct Pki {
    dir: tempfile::TempDir,
    server: (
        rustls::pki_types::CertificateDer<'static>,
        rustls::pki_types::PrivateKeyDer<'static>,
    ),
    ca_der: rustls::pki_types::CertificateDer<'static>,
}

/// A CA, a server certificate for `localhost`, and a client certificate,
/// with the CA and the client's files written as PEM.
fn pki() -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issue = |name: &str| {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec![name.to_owned()])
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        (cert, key)
    };
    let (server_cert, server_key) = issue("localhost");
    let (client_cert, client_key) = issue("client");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
    std::fs::write(dir.path().join("client.pem"), client_cert.pem()).unwrap();
    std::fs::write(dir.path().join("client.key"), client_key.serialize_pem()).unwrap();
    Pki {
        dir,
        server: (
            server_cert.der().clone(),
            rustls::pki_types::PrivatePkcs8KeyDer::from(server_key.serialize_der()).into(),
        ),
        ca_der: ca.der().clone(),
    }
}

/// Terminates TLS (requiring a client certificate when `mutual`) and
/// forwards the plain bytes to `upstream`.
async fn tls_terminator(pki: &Pki, upstream: String, mutual: bool) -> String {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = if mutual {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(pki.ca_der.clone()).unwrap();
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let config = builder
        .with_single_cert(vec![pki.server.0.clone()], pki.server.1.clone_key())
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let mut plain = TcpStream::connect(upstream).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    format!("localhost:{}", addr.port())
}

fn tls_config(addr: &str, pki: &Pki, client_cert: bool) -> ClientConfig {
    let mut c = ClientConfig::new(addr);
    c.set(
        "tls_ca_file",
        pki.dir.path().join("ca.pem").to_str().unwrap(),
    )
    .unwrap();
    if client_cert {
        c.set(
            "tls_cert_file",
            pki.dir.path().join("client.pem").to_str().unwrap(),
        )
        .unwrap();
        c.set(
            "tls_key_file",
            pki.dir.path().join("client.key").to_str().unwrap(),
        )
        .unwrap();
    }
    c.retries = 0;
    c
}

#[tokio::test]
async fn tls_with_a_custom_ca() {
    let broker = TestBroker::start();
    let pki = pki();
    let addr = tls_terminator(&pki, broker.addr.clone(), false).await;
    let admin = Admin::connect(tls_config(&addr, &pki, false))
        .await
        .unwrap();
    admin
        .create_topic(&NewTopic::new("secure").partitions(1))
        .await
        .unwrap();
    assert_eq!(admin.list_topics().await.unwrap(), ["secure"]);
}

#[tokio::test]
async fn mutual_tls_needs_the_client_certificate() {
    let broker = TestBroker::start();
    let pki = pki();
    let addr = tls_terminator(&pki, broker.addr.clone(), true).await;
    let admin = Admin::connect(tls_config(&addr, &pki, true)).await.unwrap();
    assert!(admin.list_topics().await.unwrap().is_empty());
    let e = Admin::connect(tls_config(&addr, &pki, false))
        .await
        .unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Io | ErrorKind::Protocol),
        "{e}"
    );
}

#[tokio::test]
async fn tls_refuses_an_untrusted_server() {
    let broker = TestBroker::start();
    let (trusted, other) = (pki(), pki());
    let addr = tls_terminator(&other, broker.addr.clone(), false).await;
    let e = Admin::connect(tls_config(&addr, &trusted, false))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains("TLS"), "{e}");
}

/// A fake broker that requires `AUTH principal=alice token=s3cret` first.
async fn auth_broker() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut framed = Framed::new(socket, FrameCodec::new());
                let Some(Ok(hello)) = framed.next().await else {
                    return;
                };
                let chosen = NegotiationRequest::decode(hello.payload)
                    .unwrap()
                    .select()
                    .unwrap();
                framed
                    .send(Frame::negotiation_response(chosen.encode()))
                    .await
                    .unwrap();
                let mut authed = false;
                while let Some(Ok(req)) = framed.next().await {
                    let p = CommandPayload::decode(req.payload.clone()).unwrap();
                    let (status, body) = match req.command {
                        cursus_wire::Command::Auth => {
                            authed = p.get("principal") == Some("alice")
                                && p.get("token") == Some("s3cret");
                            if authed {
                                (Status::Ok, bytes::Bytes::from_static(b"OK principal=alice"))
                            } else {
                                (
                                    Status::Error,
                                    ErrorPayload::new("authentication_failed")
                                        .to_bytes()
                                        .unwrap(),
                                )
                            }
                        }
                        _ if !authed => (
                            Status::Error,
                            ErrorPayload::new("authentication_required")
                                .to_bytes()
                                .unwrap(),
                        ),
                        _ => (
                            Status::Ok,
                            bytes::Bytes::from_static(b"OK count=1 topics=private"),
                        ),
                    };
                    framed
                        .send(Frame::response(req.command, req.request_id, status, body))
                        .await
                        .unwrap();
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn auth_sends_credentials_after_the_handshake() {
    let addr = auth_broker().await;
    let mut config = ClientConfig::new(&addr);
    config.set("principal", "alice").unwrap();
    config.set("token", "s3cret").unwrap();
    let admin = Admin::connect(config).await.unwrap();
    assert_eq!(admin.list_topics().await.unwrap(), ["private"]);

    let mut config = ClientConfig::new(&addr);
    config.set("principal", "alice").unwrap();
    config.set("token", "wrong").unwrap();
    config.retries = 0;
    let e = Admin::connect(config).await.unwrap_err();
    assert_eq!(e.code(), "authentication_failed");
    assert_eq!(e.class(), ErrorClass::Authorization);

    // A principal without a token is refused before connecting.
    let mut config = ClientConfig::new(&addr);
    config.set("principal", "alice").unwrap();
    assert_eq!(
        Admin::connect(config).await.unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}
