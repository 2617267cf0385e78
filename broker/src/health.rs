//! HTTP health endpoints: `GET /live` answers 200 as soon as the process
//! serves HTTP; `GET /ready` answers 200 only once recovery finished and the
//! client listener accepts connections, 503 before, and 503 again (with the
//! reason) while storage has failed (a failed fsync: restart to recover).
//! `GET /metrics` answers the Prometheus metrics ([`crate::metrics`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::metrics::{self, Metrics};

/// Tells why the broker cannot serve writes any more, if it cannot.
pub type FailureProbe = Box<dyn Fn() -> Option<String> + Send + Sync>;

/// Shared readiness flag, plus a probe for failures found after startup.
#[derive(Clone, Default)]
pub struct Readiness(Arc<AtomicBool>, Arc<OnceLock<FailureProbe>>);

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Readiness").field(&self.is_ready()).finish()
    }
}

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

    /// Consults `probe` on every `/ready` once ready: a `Some(reason)` makes
    /// the broker not ready, for that reason. Only the first probe counts.
    pub fn set_failure_probe(&self, probe: FailureProbe) {
        let _ = self.1.set(probe);
    }

    /// Why the broker is not ready (`None` = ready).
    pub fn not_ready_reason(&self) -> Option<String> {
        if !self.is_ready() {
            return Some("recovering".into());
        }
        self.1.get().and_then(|probe| probe())
    }
}

/// Serves the endpoints on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    readiness: Readiness,
    metrics: Arc<Metrics>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/live", get(|| async { (StatusCode::OK, "live\n") }))
        .route("/ready", get(ready))
        .with_state(readiness)
        .merge(
            Router::new()
                .route("/metrics", get(scrape))
                .with_state(metrics),
        );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

async fn ready(State(readiness): State<Readiness>) -> (StatusCode, String) {
    match readiness.not_ready_reason() {
        None => (StatusCode::OK, "ready\n".into()),
        Some(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
    }
}

async fn scrape(State(metrics): State<Arc<Metrics>>) -> Response {
    match metrics.render() {
        Ok(text) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
            text,
        )
            .into_response(),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot render the metrics\n",
        )
            .into_response(),
    }
}
