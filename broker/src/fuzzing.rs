//! Fuzz target bodies, shared by the cargo-fuzz crate (`broker/fuzz`) and
//! the short stable-Rust runs in `make test` (`tests/fuzz_short.rs`). Not
//! part of the broker's API.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::broker::Broker;
use crate::config::Config;
use crate::server::connection;

/// How long one input may keep the broker busy (a long poll, a stream);
/// running out of time is not a failure.
pub const DEADLINE: Duration = Duration::from_millis(500);

/// Reply bytes one input may draw from the broker before the client stops
/// reading; more would mean the broker amplifies a small input without
/// bound.
pub const MAX_REPLY_BYTES: u64 = 64 << 20;

/// Feeds `data` as one client connection's bytes through the broker's
/// whole request path (negotiation, framing, decoding, authorization,
/// dispatch, the handlers and storage) of a fresh broker on a temporary
/// data directory, in-process over `tokio::io::duplex`. Panics if the
/// broker panics or answers without bound; returns once the broker closed
/// the connection or [`DEADLINE`] passed.
pub fn request_path(data: &[u8]) {
    let dir = TempDir::new();
    let config = Config {
        data_dir: dir.0.join("data"),
        default_partitions: 2,
        request_timeout: DEADLINE,
        idle_timeout: DEADLINE,
        ..Config::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let shutdown = CancellationToken::new();
    let broker = {
        let _context = runtime.enter();
        Arc::new(
            Broker::open(
                config,
                "127.0.0.1:9000".into(),
                None,
                Default::default(),
                shutdown.clone(),
            )
            .expect("a broker opens on an empty data directory"),
        )
    };
    runtime.block_on(async {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = tokio::spawn(connection::serve_io(
            Arc::clone(&broker),
            Box::new(server_read),
            Box::new(server_write),
        ));
        let (mut from_broker, mut to_broker) = tokio::io::split(client);
        let feed = async move {
            let _ = to_broker.write_all(data).await;
            let _ = to_broker.shutdown().await;
        };
        let drain = async move {
            let mut buf = vec![0u8; 64 * 1024];
            let mut total = 0u64;
            while let Ok(n @ 1..) = from_broker.read(&mut buf).await {
                total += n as u64;
                assert!(
                    total <= MAX_REPLY_BYTES,
                    "{total} reply bytes for a {}-byte input",
                    data.len()
                );
            }
        };
        let _ = tokio::time::timeout(DEADLINE, async { tokio::join!(feed, drain) }).await;
        shutdown.cancel();
        serving.abort();
        if let Err(e) = serving.await {
            if e.is_panic() {
                std::panic::resume_unwind(e.into_panic());
            }
        }
    });
    drop(broker);
    // Blocking storage work still running ends with the runtime.
    runtime.shutdown_timeout(DEADLINE);
}

/// A data directory removed on drop (tempfile is only a dev-dependency).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "cursus-fuzz-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("create fuzz data directory");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
