//! APPEND_STREAM: the version check against the partition's stream index,
//! the append under the partition's writer lock, exact retries, and the
//! reply once the event is committed. A run of appends a client pipelined
//! is taken together: each partition's new events in one log write and
//! one sync, each append answered as it would have been alone.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use cursus_wire::{CommandPayload, ErrorPayload, Record, RecordVersion};
use futures_util::future::{BoxFuture, Shared};
use futures_util::FutureExt;

use super::{es_topic, key_param, now_ms, route, version_param, FENCE_RETRIES};
use crate::broker::{Broker, Listener};
use crate::commands::params::required;
use crate::commands::{Durable, HandlerResult, Reply};
use crate::eventsource::check_reservation;
use crate::eventsource::replay::payload_digest;
use crate::placement::commit::{committed, Commit, Written};
use crate::storage::StorageError;
use crate::topics::definition::topic_param;
use crate::topics::partition::storage_error;
use crate::topics::{Partition, Topic};

// ---------------------------------------------------------- APPEND_STREAM

const CMD: &str = "APPEND_STREAM";

/// The replay identity of an APPEND_STREAM on an aggregate replay topic.
struct ReplayIdentity<'a> {
    event_id: &'a str,
    producer_id: &'a str,
    seq: u64,
    epoch: i64,
}

/// `event_id=`, `producerId=`, `seqNum=` (> 0) and `epoch=` (optional, ≥ 0)
/// of an append to an aggregate replay topic.
fn replay_identity<'a>(
    p: &'a CommandPayload,
    command: &str,
) -> Result<ReplayIdentity<'a>, ErrorPayload> {
    let event_id = required(p, "event_id", "missing_event_id", command)?;
    let producer_id = required(p, "producerId", "missing_producer_id", command)?;
    let seq = match p.get("seqNum").map(|v| v.trim().parse::<u64>()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            return Err(ErrorPayload::new("invalid_producer_sequence")
                .with_field("command", command)
                .with_field("seqNum", p.get("seqNum").unwrap_or("")))
        }
    };
    let epoch = match p.get("epoch") {
        None => 0,
        Some(raw) => match raw.trim().parse::<i64>() {
            Ok(e) if e >= 0 => e,
            _ => return Err(ErrorPayload::new("invalid_producer_epoch").with_field("epoch", raw)),
        },
    };
    Ok(ReplayIdentity {
        event_id,
        producer_id,
        seq,
        epoch,
    })
}

/// The exact-retry check of a replay append of `version` ≤ the head: the
/// committed record at `version` must carry the same event id and payload
/// digest (then its offset is returned), else
/// `aggregate_identity_conflict sequence=<v>`.
async fn replay_retry(
    partition: &Partition,
    key: &str,
    version: u64,
    event_id: &str,
    digest: &str,
) -> Result<u64, ErrorPayload> {
    let unavailable = |reason: String| {
        ErrorPayload::new("aggregate_proof_unavailable")
            .with_field("key", key)
            .with_field("sequence", version)
            .with_field("reason", reason)
    };
    let Some(entry) = partition.with_streams(|s| s.entry_at(key, version)) else {
        return Err(unavailable("the event is no longer retained".into()));
    };
    let stored = partition
        .read(entry.offset, 1, usize::MAX)
        .await
        .map_err(|e| unavailable(e.to_string()))?
        .into_iter()
        .next()
        .filter(|s| s.offset == entry.offset)
        .ok_or_else(|| unavailable("the event record is missing".into()))?;
    let record = Record::decode(stored.data).map_err(|e| unavailable(e.to_string()))?;
    if record.event_id == event_id && record.payload_digest == digest {
        Ok(entry.offset)
    } else {
        Err(ErrorPayload::new("aggregate_identity_conflict").with_field("sequence", version))
    }
}

/// An APPEND_STREAM request after its own fields were checked.
struct AppendRequest<'a> {
    payload: &'a CommandPayload,
    topic: &'a str,
    key: &'a str,
    version: u64,
    message: &'a str,
    schema_version: u32,
    event_type: &'a str,
    metadata: &'a str,
}

/// The fields of an APPEND_STREAM, checked in the order the single
/// request always checked them.
fn append_request(p: &CommandPayload) -> Result<AppendRequest<'_>, ErrorPayload> {
    let topic = topic_param(p, CMD)?;
    let key = key_param(p, CMD)?;
    let version = version_param(p, CMD)?;
    let message = required(p, "message", "missing_message", CMD)?;
    let schema_version: u32 = match p.get("schema_version") {
        None => 1,
        Some(raw) => raw.trim().parse().map_err(|_| {
            ErrorPayload::new("invalid_schema_version").with_field("schema_version", raw)
        })?,
    };
    Ok(AppendRequest {
        payload: p,
        topic,
        key,
        version,
        message,
        schema_version,
        event_type: p.get("event_type").unwrap_or_default(),
        metadata: p.get("metadata").unwrap_or_default(),
    })
}

/// One append of a run, routed to its partition generation.
struct Routed<'a> {
    /// Its place in the run.
    slot: usize,
    req: &'a AppendRequest<'a>,
    replay: Option<ReplayIdentity<'a>>,
    event_id: &'a str,
    digest: String,
}

/// The topic generation and the partition `req` goes to, with its replay
/// identity and event id.
fn route_append<'a>(
    broker: &Broker,
    slot: usize,
    req: &'a AppendRequest<'a>,
    listener: Listener,
) -> Result<(Arc<Topic>, Arc<Partition>, Routed<'a>), ErrorPayload> {
    let topic = es_topic(broker, req.topic)?;
    let replay = if topic.def.aggregate_replay {
        Some(replay_identity(req.payload, CMD)?)
    } else {
        None
    };
    let event_id = match &replay {
        Some(r) => r.event_id,
        None => req.payload.get("event_id").unwrap_or_default(),
    };
    let digest = replay
        .as_ref()
        .map(|_| payload_digest(req.message.as_bytes()))
        .unwrap_or_default();
    let partition = route(broker, &topic, req.key, listener)?;
    let routed = Routed {
        slot,
        req,
        replay,
        event_id,
        digest,
    };
    Ok((topic, partition, routed))
}

/// `APPEND_STREAM topic= key= version= [event_type=] [schema_version=]
/// [metadata=] [event_id=] [producerId= seqNum= [epoch=]] message=`:
/// appends the event as version `version` (which must be the current
/// version + 1), synced before the reply `OK version= offset= partition=`.
/// On an aggregate replay topic the event id and producer fields are
/// required and stored with the payload digest, and an exact retry of an
/// appended event answers its original offset. On any event-sourcing
/// topic a retry of version `v` whose `event_id` is the one stored at `v`
/// answers the original append too (the SDK sends a fresh id with every
/// event, so its retries are safe).
pub async fn append_stream(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let reply = append_run(broker, std::slice::from_ref(p), listener)
        .await
        .pop();
    Ok(reply.unwrap_or_else(no_reply))
}

/// APPEND_STREAM requests that a client pipelined on one connection, taken
/// together (the connection reads ahead, see `crate::server::connection`):
/// one reply each, in order, exactly as if they had come one by one, but
/// each partition's new events go to its log in one write covered by one
/// sync. The run passes its point of no return once, then runs to the end
/// in its own task, so a timeout never leaves a partition's log ahead of
/// its stream index.
pub async fn append_stream_pipelined(
    broker: &Arc<Broker>,
    payloads: &[CommandPayload],
    listener: Listener,
) -> Vec<Reply> {
    if payloads.len() == 1 {
        return vec![append_stream(broker, &payloads[0], listener)
            .await
            .unwrap_or_else(Reply::Error)];
    }
    if let Err(e) = crate::commands::deadline::point_of_no_return() {
        return payloads.iter().map(|_| Reply::Error(e.clone())).collect();
    }
    let (owned, count) = (payloads.to_vec(), payloads.len());
    let broker = Arc::clone(broker);
    let run = tokio::spawn(async move { append_run(&broker, &owned, listener).await });
    run.await.unwrap_or_else(|e| {
        let e = ErrorPayload::new("append_stream_failed").with_field("reason", e.to_string());
        (0..count).map(|_| Reply::Error(e.clone())).collect()
    })
}

fn no_reply() -> Reply {
    Reply::Error(ErrorPayload::new("broker_error").with_field("reason", "no reply"))
}

/// The appends `payloads`, one reply each in order. Requests are grouped
/// by partition; each group is appended under its partition's writer lock
/// ([`append_group`]; one lock at a time, so runs of different connections
/// never wait on each other in a cycle) and answered once one sync (and,
/// in a cluster, the in-sync replicas) covers its last event.
async fn append_run(
    broker: &Arc<Broker>,
    payloads: &[CommandPayload],
    listener: Listener,
) -> Vec<Reply> {
    let requests: Vec<_> = payloads.iter().map(append_request).collect();
    let mut replies: Vec<Option<Reply>> = requests
        .iter()
        .map(|r| r.as_ref().err().map(|e| Reply::Error(e.clone())))
        .collect();
    for _ in 0..FENCE_RETRIES {
        // Partition generations in order of first use, with their appends.
        let mut groups: Vec<(Arc<Topic>, Arc<Partition>, Vec<Routed<'_>>)> = Vec::new();
        let mut group_of: HashMap<usize, usize> = HashMap::new();
        for (slot, req) in requests.iter().enumerate() {
            let Ok(req) = req else { continue };
            if replies[slot].is_some() {
                continue;
            }
            match route_append(broker, slot, req, listener) {
                Err(e) => replies[slot] = Some(Reply::Error(e)),
                Ok((topic, partition, routed)) => {
                    let next = groups.len();
                    let g = *group_of
                        .entry(Arc::as_ptr(&partition) as usize)
                        .or_insert(next);
                    if g == next {
                        groups.push((topic, partition, Vec::new()));
                    }
                    groups[g].2.push(routed);
                }
            }
        }
        if groups.is_empty() {
            break;
        }
        for (topic, partition, items) in groups {
            // None: a TRUNCATE or DELETE ended this generation; its
            // appends find the next one in the next round.
            let Some(outcomes) = append_group(&topic, &partition, &items).await else {
                continue;
            };
            let last = outcomes.iter().filter_map(|o| o.as_ref().ok()).max();
            let durable = last.map(|&last| when_durable(broker, &partition, &topic.def.name, last));
            for (item, outcome) in items.iter().zip(outcomes) {
                replies[item.slot] = Some(match (outcome, &durable) {
                    (Ok(offset), Some(durable)) => {
                        let line = format!(
                            "OK version={} offset={offset} partition={}",
                            item.req.version,
                            partition.id()
                        );
                        answer_when(durable.clone(), line)
                    }
                    (Err(e), _) => Reply::Error(e),
                    (Ok(_), None) => no_reply(),
                });
            }
        }
    }
    replies
        .into_iter()
        .zip(&requests)
        .map(|(reply, req)| {
            reply.unwrap_or_else(|| match req {
                Ok(req) => Reply::Error(broker.placement().generation_changed(req.topic)),
                Err(e) => Reply::Error(e.clone()),
            })
        })
        .collect()
}

/// The new events of a group not yet in the log, and what the stream
/// index must learn once they are. A later append of the group checks its
/// version against these first.
struct Unwritten<'a> {
    base: u64,
    timestamp: i64,
    entries: Vec<(i64, Bytes)>,
    /// (its outcome's index, key, version, offset, event id), in log order.
    events: Vec<(usize, &'a str, u64, u64, &'a str)>,
    heads: HashMap<&'a str, u64>,
    event_ids: HashSet<&'a str>,
}

impl<'a> Unwritten<'a> {
    fn new(partition: &Partition) -> Self {
        Unwritten {
            base: partition.log().log_end_offset(),
            timestamp: now_ms(),
            entries: Vec::new(),
            events: Vec::new(),
            heads: HashMap::new(),
            event_ids: HashSet::new(),
        }
    }

    /// True when `item`'s outcome depends on an event still here: a retry
    /// or conflict at a version not yet indexed, or an event id not yet
    /// indexed. The events here are written first, so the index decides.
    fn involved(&self, item: &Routed<'_>) -> bool {
        self.heads
            .get(item.req.key)
            .is_some_and(|&head| item.req.version <= head)
            || (!item.event_id.is_empty() && self.event_ids.contains(item.event_id))
    }

    /// Writes the events in one log append and indexes them; on failure
    /// each of them is answered with the error instead.
    async fn write(
        &mut self,
        topic: &str,
        partition: &Partition,
        outcomes: &mut [Result<u64, ErrorPayload>],
    ) {
        if !self.entries.is_empty() {
            let entries = std::mem::take(&mut self.entries);
            let written = match crate::commands::deadline::point_of_no_return() {
                Err(e) => Err(e),
                Ok(()) => match partition.append(entries).await {
                    Err(e) => Err(append_failed(topic, partition.id(), &e)),
                    Ok(info) if info.base_offset != self.base => {
                        Err(ErrorPayload::new("append_stream_failed")
                            .with_field("reason", "append offset mismatch")
                            .with_field("expected", self.base)
                            .with_field("actual", info.base_offset))
                    }
                    Ok(_) => Ok(()),
                },
            };
            match written {
                Ok(()) => partition.with_streams(|s| {
                    for &(_, key, version, offset, event_id) in &self.events {
                        s.append_event(key, version, offset, event_id);
                    }
                }),
                Err(e) => {
                    for &(i, ..) in &self.events {
                        outcomes[i] = Err(e.clone());
                    }
                }
            }
        }
        *self = Unwritten::new(partition);
    }
}

/// The appends of one group to `partition`, in arrival order, under its
/// writer lock: each one's offset (the original one for an exact retry)
/// or its error, as it would have been alone. The new events go to the log
/// in one write, unless one of them depends on an earlier one of the group
/// (see [`Unwritten::involved`]): those before it are written first.
/// `None` when the generation was closed by a TRUNCATE or DELETE.
async fn append_group(
    topic: &Topic,
    partition: &Partition,
    items: &[Routed<'_>],
) -> Option<Vec<Result<u64, ErrorPayload>>> {
    let name = &topic.def.name;
    let writer = partition.writer.lock().await;
    if partition.is_closed() {
        return None;
    }
    let mut outcomes = Vec::with_capacity(items.len());
    let mut unwritten = Unwritten::new(partition);
    for item in items {
        if unwritten.involved(item) {
            unwritten.write(name, partition, &mut outcomes).await;
        }
        let outcome = take(topic, partition, item, &mut unwritten, outcomes.len()).await;
        outcomes.push(outcome);
    }
    unwritten.write(name, partition, &mut outcomes).await;
    drop(writer);
    Some(outcomes)
}

/// The checks of one append against the stream index (and the group's
/// unwritten events, none of which it depends on): its original offset
/// for an exact retry, else its new event joins `unwritten` as outcome
/// `slot` and its offset-to-be is returned.
async fn take<'a>(
    topic: &Topic,
    partition: &Partition,
    item: &Routed<'a>,
    unwritten: &mut Unwritten<'a>,
    slot: usize,
) -> Result<u64, ErrorPayload> {
    let (key, version, event_id) = (item.req.key, item.req.version, item.event_id);
    // A key reserved by a transaction (TXN_APPEND_STREAM) takes no
    // other append until that transaction is resolved.
    check_reservation(partition, &topic.def.name, key, None)?;
    let current = match unwritten.heads.get(key) {
        Some(&head) => head,
        None => partition.with_streams(|s| s.head(key)),
    };
    // An exact retry of an appended version (its reply was lost, or its
    // replication wait ended with a leadership move) answers the
    // original append: on a replay topic the stored event must match
    // (else aggregate_identity_conflict); elsewhere an event carrying
    // this event id must be the one stored at `version`.
    let retried = if version > current {
        None
    } else if item.replay.is_some() {
        Some(replay_retry(partition, key, version, event_id, &item.digest).await?)
    } else if event_id.is_empty() {
        None
    } else {
        partition.with_streams(|s| {
            s.entry_at(key, version)
                .map(|e| e.offset)
                .filter(|offset| s.event_id_offset(event_id) == Some(*offset))
        })
    };
    if let Some(offset) = retried {
        return Ok(offset);
    }
    if item.replay.is_some() {
        let taken = partition.with_streams(|s| {
            s.event_id_offset(event_id).is_some() || s.event_id_pending(event_id)
        });
        if taken {
            return Err(
                ErrorPayload::new("aggregate_identity_conflict").with_field("event_id", event_id)
            );
        }
    }
    if version != current + 1 {
        return Err(ErrorPayload::new("version_conflict")
            .with_field("current", current)
            .with_field("expected", version));
    }
    let offset = unwritten.base + unwritten.entries.len() as u64;
    let timestamp = unwritten.timestamp;
    let req = item.req;
    let mut record = Record {
        topic: topic.def.name.clone(),
        partition: partition.id() as i32,
        offset,
        timestamp,
        payload: Bytes::copy_from_slice(req.message.as_bytes()),
        key: Bytes::copy_from_slice(key.as_bytes()),
        event_type: req.event_type.to_owned(),
        schema_version: req.schema_version,
        aggregate_version: version,
        metadata: req.metadata.to_owned(),
        event_id: event_id.to_owned(),
        payload_digest: item.digest.clone(),
        ..Record::default()
    };
    if let Some(r) = &item.replay {
        record.producer_id = r.producer_id.to_owned();
        record.seq_num = r.seq;
        record.epoch = r.epoch;
    }
    let mut buf = BytesMut::new();
    record
        .encode(RecordVersion::V3, &mut buf)
        .map_err(|e| ErrorPayload::new("invalid_payload").with_field("reason", e.to_string()))?;
    unwritten.entries.push((timestamp, buf.freeze()));
    unwritten
        .events
        .push((slot, key, version, offset, event_id));
    unwritten.heads.insert(key, version);
    if !event_id.is_empty() {
        unwritten.event_ids.insert(event_id);
    }
    Ok(offset)
}

/// Resolves once the events of a group up to its last offset are durable.
type SharedDurable = Shared<BoxFuture<'static, Result<(), ErrorPayload>>>;

/// The durability of `partition` up to `offset`: the fsync starts now
/// (group commit shares it) and, in a cluster, the wait for the in-sync
/// replicas follows (an acknowledged event survives a leader change). The
/// connection takes its next request meanwhile, so a client appending to
/// many aggregates at once does not pay one fsync per append in turn.
fn when_durable(
    broker: &Broker,
    partition: &Arc<Partition>,
    topic: &str,
    offset: u64,
) -> SharedDurable {
    let partition = Arc::clone(partition);
    let topic = topic.to_owned();
    let placement = Arc::clone(&broker.mode().placement);
    let timeout = broker.config.request_timeout;
    let sync = tokio::spawn(async move {
        let id = partition.id();
        let local = async {
            partition
                .sync_to(offset)
                .await
                .map_err(|e| append_failed(&topic, id, &e))
        };
        let writes = [Written::at(&partition, offset)];
        committed(&*placement, &topic, &writes, local, Commit::InSync, timeout).await
    });
    async move {
        sync.await.unwrap_or_else(|e| {
            Err(ErrorPayload::new("append_stream_failed").with_field("reason", e.to_string()))
        })
    }
    .boxed()
    .shared()
}

/// `line` once `durable` resolves, its error otherwise.
fn answer_when(durable: SharedDurable, line: String) -> Reply {
    Reply::Deferred(Durable(Box::pin(async move {
        match durable.await {
            Ok(()) => Reply::text(line),
            Err(e) => Reply::Error(e),
        }
    })))
}

fn append_failed(topic: &str, partition: u32, e: &StorageError) -> ErrorPayload {
    match e {
        StorageError::Deleted { .. } => storage_error(topic, partition, e),
        other => ErrorPayload::new("append_stream_failed")
            .with_field("topic", topic)
            .with_field("partition", partition)
            .with_field("reason", other.to_string()),
    }
}
