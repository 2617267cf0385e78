//! Health endpoints and the command-line interface of the binary.

mod common;

use common::*;

#[test]
fn live_and_ready_answer_200_once_recovered() {
    let broker = TestBroker::start();
    assert_eq!(broker.http_get("/live"), 200);
    // Readiness flips once recovery finished; there is no event to await
    // over HTTP, so poll (bounded).
    eventually(SAFETY, "/ready to answer 200", || {
        match broker.http_get("/ready") {
            200 => true,
            503 => false,
            other => panic!("unexpected /ready status {other}"),
        }
    });
    assert_eq!(broker.http_get("/nope"), 404);
}

#[test]
fn help_lists_every_flag() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cursus-broker"))
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--config",
        "--listen",
        "--health-listen",
        "--advertised-addr",
        "--broker-id",
        "--data-dir",
        "--max-connections",
        "--request-timeout-ms",
        "--idle-timeout-ms",
        "--default-partitions",
        "--default-replication-factor",
        "--default-cleanup-policy",
        "--min-insync-replicas",
        "--segment-bytes",
        "--retention-hours",
        "--retention-bytes",
        "--retention-check-interval-ms",
        "--flush-interval-ms",
        "--stream-keepalive-ms",
        "--log-level",
        "--tls-listen",
        "--tls-cert-file",
        "--tls-key-file",
        "--tls-client-ca-file",
        "--enable-sasl",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
    assert!(help.contains("127.0.0.1:9000"));
}

#[test]
fn bad_configuration_fails_fast() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cursus-broker"))
        .args(["--max-connections", "0"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_connections"));
}

#[test]
fn advertised_address_is_configurable() {
    let (_dir, path) = config_dir("advertised_addr = \"broker.example:9000\"\n");
    let broker = TestBroker::start_with(&["--config", path.to_str().unwrap()]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut c = broker.client().await;
        c.ok("CREATE topic=a partitions=2").await;
        let f = kv(&c.ok("METADATA topic=a").await);
        assert_eq!(f["leaders"], "broker.example:9000,broker.example:9000");
        let f = kv(&c.ok("FIND_COORDINATOR group=g").await);
        assert_eq!(
            (f["host"].as_str(), f["port"].as_str()),
            ("broker.example", "9000")
        );
    });
}

#[test]
fn ready_is_503_until_recovery_finishes() {
    // Recovery reads the manifest first; a FIFO in its place holds recovery
    // until the test writes the manifest, which makes "before" observable.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let manifest = data.join("__topic_metadata.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&manifest)
        .status()
        .unwrap();
    assert!(made.success());
    let broker = TestBroker::start_in(dir, Vec::new());
    assert_eq!(broker.http_get("/live"), 200);
    assert_eq!(broker.http_get("/ready"), 503);
    // A client connecting now waits in the backlog until recovery is done.
    let addr = broker.addr;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let early = std::thread::spawn(move || {
        rt.block_on(async {
            let mut c = Client::connect(addr, cursus_wire::Compression::None).await;
            c.ok("LIST").await
        })
    });
    std::fs::write(&manifest, "{\"format\": 3, \"topics\": []}\n").unwrap();
    assert_eq!(early.join().unwrap(), "OK count=0 topics=");
    assert_eq!(broker.http_get("/ready"), 200);
}
