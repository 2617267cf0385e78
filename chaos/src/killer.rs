//! The killer: at random moments (seeded) it SIGKILLs the broker and
//! restarts it on the same ports and data directory, while the clients
//! stay connected and must find it again through the engine's retries.
//! Now and then it kills the restarted broker again during its recovery.

use crate::broker::BrokerProcess;
use crate::rng::Rng;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What the killer did.
#[derive(Debug, Default, Clone, Copy)]
pub struct KillStats {
    /// SIGKILLs sent.
    pub kills: u64,
    /// Of them, kills during recovery (before `/ready`).
    pub during_recovery: u64,
}

/// Kills and restarts `broker` every `min_ms..=max_ms` (after it is
/// ready again) until `stop`; returns with the broker running and ready.
pub async fn run(
    broker: &tokio::sync::Mutex<BrokerProcess>,
    mut rng: Rng,
    min_ms: u64,
    max_ms: u64,
    stop: CancellationToken,
) -> Result<KillStats, String> {
    let mut stats = KillStats::default();
    loop {
        let wait = Duration::from_millis(rng.range(min_ms, max_ms));
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(wait) => {}
        }
        let mut b = broker.lock().await;
        if let Some(status) = b.exited() {
            return Err(format!(
                "the broker exited on its own ({status}); see {}",
                b.log_path().display()
            ));
        }
        b.kill().await;
        stats.kills += 1;
        b.restart().await?;
        if rng.one_in(6) {
            // Again, in the middle of recovery.
            tokio::time::sleep(Duration::from_millis(rng.range(0, 150))).await;
            b.kill().await;
            stats.kills += 1;
            stats.during_recovery += 1;
            b.restart().await?;
        }
        b.wait_ready(Duration::from_secs(120)).await?;
    }
    let mut b = broker.lock().await;
    b.wait_ready(Duration::from_secs(120)).await?;
    Ok(stats)
}
