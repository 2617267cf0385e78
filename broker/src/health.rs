//! HTTP health endpoints: `GET /live` answers 200 as soon as the process
//! serves HTTP; `GET /ready` answers 200 only once recovery finished and the
//! client listener accepts connections, 503 before.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Shared readiness flag.
#[derive(Debug, Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// A flag that starts "not ready".
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the broker ready.
    pub fn set_ready(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// True once ready.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Serves the endpoints on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    readiness: Readiness,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/live", get(|| async { (StatusCode::OK, "live\n") }))
        .route("/ready", get(ready))
        .with_state(readiness);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

async fn ready(State(readiness): State<Readiness>) -> (StatusCode, &'static str) {
    if readiness.is_ready() {
        (StatusCode::OK, "ready\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "recovering\n")
    }
}
