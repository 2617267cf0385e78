//! The cluster listener over mutual TLS (`internal_use_tls`): three real
//! brokers form a cluster and replicate acks=all over it, while a plain
//! TCP connection and a TLS connection with a certificate from another CA
//! get no frame answered; SIGHUP reloads the files.

mod common;

use std::path::Path;

use bytes::Bytes;
use common::cluster::*;
use common::SAFETY;
use cursus_broker::cluster::internal_tls::{InternalTls, InternalTlsFiles};
use cursus_broker::cluster::transport::{
    encode_request, PeerClient, PeerClientConfig, TransportError,
};
use cursus_testkit::cluster::TOKEN;
use cursus_testkit::pki::TestPki;
use cursus_testkit::signal::{self, Signal};
use cursus_testkit::{eventually_async, TestCluster};
use cursus_wire::{Command, Frame, FrameCodec};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

fn toml_path(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

/// A peer client of `addr` presenting `cert`/`key` and trusting `ca`
/// (`None`: plain TCP).
fn peer(addr: &str, identity: Option<(&Path, &Path, &Path)>) -> PeerClient {
    let tls = identity.map(|(cert, key, ca)| {
        InternalTls::load(&InternalTlsFiles {
            cert_path: cert.into(),
            key_path: key.into(),
            ca_path: ca.into(),
        })
        .expect("test PKI files")
    });
    PeerClient::new(
        addr,
        PeerClientConfig {
            token: Some(TOKEN.into()),
            request_timeout: SAFETY,
            connect_timeout: SAFETY,
            tls,
            ..PeerClientConfig::default()
        },
    )
}

/// A harmless request every member answers when it is let through: the
/// Raft leader with its applied index, another member with a typed
/// refusal (it is not the leader).
async fn heartbeat(client: &PeerClient) -> Result<Bytes, TransportError> {
    client
        .request(
            Command::HeartbeatCluster,
            Bytes::from_static(b"{\"node\":1}"),
        )
        .await
}

/// True when the member answered the request (a reply or a typed error).
fn answered(result: &Result<Bytes, TransportError>) -> bool {
    matches!(result, Ok(_) | Err(TransportError::Remote { .. }))
}

/// True when the request was refused by the connection itself (not
/// answered at all, neither with a reply nor with a typed error).
fn unanswered(result: &Result<Bytes, TransportError>) -> bool {
    matches!(
        result,
        Err(TransportError::Connect { .. }
            | TransportError::Io { .. }
            | TransportError::Closed { .. })
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn brokers_replicate_over_mutual_tls_and_refuse_other_peers() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    // One certificate for every member: the test PKI's leaf certificates
    // carry no extended key usage, so it serves as server and client.
    let toml = format!(
        "internal_use_tls = true\ninternal_tls_cert_path = {}\n\
         internal_tls_key_path = {}\ninternal_tls_ca_path = {}\n",
        toml_path(&pki.server_cert),
        toml_path(&pki.server_key),
        toml_path(&pki.ca)
    );
    let cluster = TestCluster::start_with_config(3, &toml);
    let first = cluster.members[0].addr.clone();
    until(&first, "three active brokers", |s| active_brokers(s) == 3).await;

    // Replication runs over the mutual-TLS cluster listeners.
    let mut c = client(&first).await;
    c.ok("CREATE topic=t partitions=1 replication_factor=3")
        .await;
    for i in 0..5 {
        let line = format!(
            "PUBLISH topic=t partition=0 acks=all producerId=p seqNum={} isIdempotent=true message=m{i}",
            i + 1
        );
        on_leader(&first, &line).await;
    }
    let s = until(&first, "hwm 5 with a full ISR", |s| {
        let p = partition(s, "t", 0);
        p["hwm"] == 5 && p["isr"].as_array().unwrap().len() == 3
    })
    .await;
    assert_eq!(
        partition(&s, "t", 0)["replicas"].as_array().unwrap().len(),
        3
    );

    let target = cluster.members[1].cluster_addr.clone();
    // A member's own certificate gets an answer (the control case).
    let trusted = peer(&target, Some((&pki.server_cert, &pki.server_key, &pki.ca)));
    let answer = heartbeat(&trusted).await;
    assert!(answered(&answer), "{answer:?}");
    let client_cert = peer(&target, Some((&pki.client_cert, &pki.client_key, &pki.ca)));
    let answer = heartbeat(&client_cert).await;
    assert!(answered(&answer), "any CA-signed cert: {answer:?}");

    // Plain TCP: a well-formed request with the right token is never
    // answered; the listener closes the connection.
    let mut raw = Framed::new(
        TcpStream::connect(&target).await.unwrap(),
        FrameCodec::new(),
    );
    let request = Frame::request(
        Command::HeartbeatCluster,
        1,
        encode_request(Some(TOKEN), b"{\"node\":1}"),
    );
    // (The write may already fail if the server closed first.)
    let _ = raw.send(request).await;
    let answer = tokio::time::timeout(SAFETY, raw.next())
        .await
        .expect("the listener closes a plain connection");
    assert!(
        !matches!(answer, Some(Ok(_))),
        "plain TCP got a frame: {answer:?}"
    );
    let plain = heartbeat(&peer(&target, None)).await;
    assert!(unanswered(&plain), "{plain:?}");

    // A client certificate from another CA (the server is trusted, the
    // client is not): refused in the handshake, nothing answered.
    let untrusted = peer(
        &target,
        Some((&pki.other_client_cert, &pki.other_client_key, &pki.ca)),
    );
    let refused = heartbeat(&untrusted).await;
    assert!(unanswered(&refused), "{refused:?}");
    // And a member does not trust a listener with another CA's certificate.
    let wrong_server = peer(
        &target,
        Some((&pki.server_cert, &pki.server_key, &pki.other_ca)),
    );
    let refused = heartbeat(&wrong_server).await;
    assert!(
        matches!(refused, Err(TransportError::Connect { .. })),
        "{refused:?}"
    );
}

/// SIGHUP makes a member read its internal TLS files again: a CA added to
/// its trust file admits peers with that CA's certificates on new
/// connections, an unusable file keeps the previous configuration (the
/// member keeps running and serving), and a later good file applies.
#[tokio::test(flavor = "multi_thread")]
async fn sighup_reloads_the_internal_tls_files() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    let trust = dir.path().join("trust.pem");
    std::fs::copy(&pki.ca, &trust).unwrap();
    let toml = format!(
        "internal_use_tls = true\ninternal_tls_cert_path = {}\n\
         internal_tls_key_path = {}\ninternal_tls_ca_path = {}\n",
        toml_path(&pki.server_cert),
        toml_path(&pki.server_key),
        toml_path(&trust)
    );
    let cluster = TestCluster::start_with_config(3, &toml);
    let first = cluster.members[0].addr.clone();
    until(&first, "three active brokers", |s| active_brokers(s) == 3).await;
    let target = cluster.members[1].cluster_addr.clone();
    let hup = || signal::send(cluster.pid(1).expect("member runs"), Signal::Hup).expect("SIGHUP");
    let other_ca = || {
        peer(
            &target,
            Some((&pki.other_client_cert, &pki.other_client_key, &pki.ca)),
        )
    };
    let refused = heartbeat(&other_ca()).await;
    assert!(unanswered(&refused), "{refused:?}");

    let ca = std::fs::read_to_string(&pki.ca).unwrap();
    let both = ca.clone() + &std::fs::read_to_string(&pki.other_ca).unwrap();
    std::fs::write(&trust, both).unwrap();
    hup();
    eventually_async!(SAFETY, "the reloaded trust to admit the other CA", async {
        match heartbeat(&other_ca()).await {
            ref r if answered(r) => Ok(()),
            r => Err(format!("{r:?}")),
        }
    });

    // An unusable file is refused and the configuration stays; the
    // good file after it applies (SIGHUPs are handled in order).
    std::fs::write(&trust, "not PEM").unwrap();
    hup();
    let answer = heartbeat(&other_ca()).await;
    assert!(
        answered(&answer),
        "the previous configuration stays: {answer:?}"
    );
    std::fs::write(&trust, ca).unwrap();
    hup();
    eventually_async!(SAFETY, "the other CA to be refused again", async {
        match heartbeat(&other_ca()).await {
            ref r if unanswered(r) => Ok(()),
            r => Err(format!("{r:?}")),
        }
    });
    let trusted = peer(&target, Some((&pki.server_cert, &pki.server_key, &pki.ca)));
    let answer = heartbeat(&trusted).await;
    assert!(answered(&answer), "{answer:?}");
    until(&first, "three active brokers after the reloads", |s| {
        active_brokers(s) == 3
    })
    .await;
}
