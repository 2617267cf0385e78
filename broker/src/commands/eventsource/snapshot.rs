//! SAVE_SNAPSHOT and READ_SNAPSHOT: an aggregate's latest snapshot, stored
//! under the partition's writer lock and given to the other in-sync
//! replicas before the reply.

use std::sync::Arc;

use cursus_wire::{CommandPayload, ErrorPayload};

use super::{aggregate, es_topic, key_param, route, snapshot_store, version_param, FENCE_RETRIES};
use crate::broker::{Broker, Listener};
use crate::commands::params::required;
use crate::commands::{HandlerResult, Reply};
use crate::eventsource::Snapshot;
use crate::topics::definition::topic_param;
use crate::topics::partition::blocking;

// ---------------------------------------------------------- SAVE_SNAPSHOT

/// `SAVE_SNAPSHOT topic= key= version= message=`: stores the snapshot as
/// the aggregate's latest (durable before the reply `OK version=
/// partition=`); `version` must not exceed the stream's.
pub async fn save_snapshot(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "SAVE_SNAPSHOT";
    let name = topic_param(p, CMD)?;
    let key = key_param(p, CMD)?;
    let version = version_param(p, CMD)?;
    let message = required(p, "message", "missing_message", CMD)?;
    for _ in 0..FENCE_RETRIES {
        let topic = es_topic(broker, name)?;
        let partition = route(broker, &topic, key, listener)?;
        // The writer lock orders the snapshot with appends and with a
        // TRUNCATE, which clears the store after fencing every partition.
        let _writer = partition.writer.lock().await;
        if partition.is_closed() {
            continue;
        }
        let durable = partition.log().durable_offset();
        let current = partition.with_streams(|s| s.visible_head(key, durable));
        if version > current {
            return Err(ErrorPayload::new("snapshot_version_exceeds_stream")
                .with_field("version", version)
                .with_field("current", current));
        }
        let store = Arc::clone(snapshot_store(&topic)?);
        let (id, key_owned) = (partition.id(), key.to_owned());
        let snapshot = Snapshot {
            version,
            payload: message.to_owned(),
        };
        blocking(move || store.save(id, &key_owned, snapshot))
            .await
            .map_err(|e| {
                ErrorPayload::new("snapshot_save_failed")
                    .with_field("topic", name)
                    .with_field("reason", e.to_string())
            })?;
        drop(_writer);
        // Answered once the other in-sync replicas have it too.
        broker
            .placement()
            .replicate_snapshot(name, partition.id(), key, version, message)
            .await?;
        return Ok(Reply::text(format!(
            "OK version={version} partition={}",
            partition.id()
        )));
    }
    Err(broker.placement().generation_changed(name))
}

// ---------------------------------------------------------- READ_SNAPSHOT

/// `READ_SNAPSHOT topic= key=`: `OK snapshot={"version":N,"payload":"…"}`
/// or `OK snapshot=null`.
pub fn read_snapshot(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const CMD: &str = "READ_SNAPSHOT";
    let (topic, key) = aggregate(broker, p, CMD)?;
    let partition = route(broker, &topic, key, listener)?;
    let snapshot = snapshot_store(&topic)?.get(partition.id(), key);
    let json = serde_json::to_string(&snapshot).map_err(|e| {
        ErrorPayload::new("marshal_snapshot_failed").with_field("reason", e.to_string())
    })?;
    Ok(Reply::text(format!("OK snapshot={json}")))
}
