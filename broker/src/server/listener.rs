//! The accept loop. Connections beyond `max_connections` are closed at once,
//! without touching the others.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tracing::{info, warn};

use super::connection;
use crate::broker::Broker;

/// How long shutdown waits for connections to finish their current request.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Accepts connections until the broker shuts down, then waits (bounded)
/// for open connections to end.
pub async fn run(broker: Arc<Broker>, listener: TcpListener) {
    let limit = Arc::new(Semaphore::new(broker.config.max_connections));
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = broker.shutdown.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => match Arc::clone(&limit).try_acquire_owned() {
                    Ok(permit) => {
                        connections.spawn(connection::handle(Arc::clone(&broker), stream, peer, permit));
                    }
                    Err(_) => {
                        warn!(%peer, limit = broker.config.max_connections, "connection limit reached; closing");
                        drop(stream);
                    }
                },
                Err(e) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    drop(listener);
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
