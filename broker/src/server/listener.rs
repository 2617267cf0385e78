//! The accept loop over the plain and the TLS listener. Both share one
//! connection limit; connections beyond `max_connections` are closed at
//! once, without touching the others.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tracing::{info, warn};

use super::connection::{self, Transport};
use super::tls::TlsReloader;
use crate::broker::Broker;

/// How long shutdown waits for connections to finish their current request.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The TLS listener with the acceptor source its connections use.
#[derive(Debug)]
pub struct TlsListener {
    /// The bound socket.
    pub listener: TcpListener,
    /// The current TLS configuration (replaced on SIGHUP).
    pub tls: Arc<TlsReloader>,
}

/// Accepts connections on `plain` and `tls` (either may be absent) until
/// the broker shuts down, then waits (bounded) for open connections to end.
pub async fn run(broker: Arc<Broker>, plain: Option<TcpListener>, tls: Option<TlsListener>) {
    let limit = Arc::new(Semaphore::new(broker.config.max_connections));
    let mut connections = JoinSet::new();
    loop {
        let (accepted, secure) = tokio::select! {
            _ = broker.shutdown.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = accept(plain.as_ref()) => (accepted, false),
            accepted = accept(tls.as_ref().map(|t| &t.listener)) => (accepted, true),
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Usually out of file descriptors: back off instead of spinning.
                warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&limit).try_acquire_owned() else {
            warn!(%peer, limit = broker.config.max_connections, "connection limit reached; closing");
            drop(stream);
            continue;
        };
        let transport = match (&tls, secure) {
            // The acceptor is taken at accept time: a reload affects only
            // connections accepted after it.
            (Some(t), true) => Transport::Tls(stream, t.tls.acceptor()),
            _ => Transport::Plain(stream),
        };
        connections.spawn(connection::handle(
            Arc::clone(&broker),
            transport,
            peer,
            permit,
        ));
    }
    drop(plain);
    drop(tls);
    info!(
        open = connections.len(),
        "listener stopped; draining connections"
    );
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        connections.abort_all();
    }
}

/// Accepts on `listener`; never completes when there is none.
async fn accept(listener: Option<&TcpListener>) -> io::Result<(TcpStream, SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}
