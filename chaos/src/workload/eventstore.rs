//! Event-store appenders on the event-sourcing topic [`ES_TOPIC`]: each
//! appends to its own aggregate and to one aggregate they all share (so
//! versions conflict), with the expected version it last saw; on
//! `version_conflict` (or an unknown outcome) it re-reads the version.
//! Every acknowledged (aggregate, version, payload) is recorded.

use super::{client_config, connect_retrying, ES_TOPIC};
use crate::ledger::{lock, EsAck, Ledger};
use crate::rng::Rng;
use cursus::eventstore::{Event, EventStore};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The aggregate every appender writes to.
pub const SHARED_AGGREGATE: &str = "agg-shared";

/// The aggregates `appenders` appenders write.
pub fn aggregates(appenders: u32) -> Vec<String> {
    (0..appenders)
        .map(|a| format!("agg-{a}"))
        .chain([SHARED_AGGREGATE.to_owned()])
        .collect()
}

/// Runs appender `id` at up to `rate` appends per second until `stop`.
pub async fn run(
    id: u32,
    addr: String,
    rate: u64,
    mut rng: Rng,
    ledger: Arc<Ledger>,
    stop: CancellationToken,
) {
    let Some(store) = connect_retrying(&stop, || EventStore::connect(client_config(&addr))).await
    else {
        return;
    };
    let own = format!("agg-{id}");
    // The version each aggregate had when last seen; `None`: read it again.
    let mut known: HashMap<&str, Option<u64>> = HashMap::new();
    let started = Instant::now();
    let mut n = 0u64;
    while !stop.is_cancelled() {
        n += 1;
        let aggregate: &str = if rng.one_in(3) {
            SHARED_AGGREGATE
        } else {
            &own
        };
        let expected = match known.get(aggregate).copied().flatten() {
            Some(v) => v,
            None => match store.stream_version(ES_TOPIC, aggregate).await {
                Ok(v) => v,
                Err(_) => {
                    known.insert(aggregate, None);
                    continue;
                }
            },
        };
        let payload = format!("es-{id}-{n}");
        let event = Event::new("Appended", payload.clone());
        match store.append(ES_TOPIC, aggregate, expected, &event).await {
            Ok(appended) => {
                lock(&ledger.es_appends).push(EsAck {
                    aggregate: aggregate.to_owned(),
                    version: appended.version,
                    payload,
                });
                known.insert(aggregate, Some(appended.version));
            }
            Err(e) => {
                if e.is_broker_code("version_conflict") {
                    Ledger::bump(&ledger.es_conflicts);
                } else {
                    Ledger::bump(&ledger.es_failures);
                }
                known.insert(aggregate, None);
            }
        }
        let due = started + Duration::from_micros(n * 1_000_000 / rate.max(1));
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep_until(due) => {}
        }
    }
    store.close().await;
}
