//! Transaction commands: INIT_PRODUCER_ID, BEGIN_TXN, TXN_PUBLISH,
//! TXN_APPEND_STREAM, SEND_OFFSETS_TO_TXN, END_TXN and TXN_STATUS. Parsing and reply formats
//! live here (docs/transactions.md); the rules live in
//! [`crate::txn::coordinator`].
//!
//! Every command runs in its own task: a request timeout abandons the
//! reply, never a transition half-way.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use cursus_wire::{CommandPayload, ErrorPayload};

use super::params::{chosen_partition, number, required};
use super::{Durable, HandlerResult, Reply};
use crate::broker::{Broker, Listener};
use crate::placement::CoordinatorKey;
use crate::topics::definition::topic_param;
use crate::txn::requests::{OffsetsRequest, PublishRequest, StreamRequest};
use crate::txn::state::{EndResult, TxnSnapshot};

/// Most unique partitions in one SEND_OFFSETS_TO_TXN.
pub const MAX_TXN_OFFSET_PARTITIONS: usize = 1024;

/// Runs `op` in its own task so that cancelling the request does not
/// cancel it.
async fn detached<T, F, Fut>(broker: &Arc<Broker>, op: F) -> Result<T, ErrorPayload>
where
    T: Send + 'static,
    F: FnOnce(Arc<Broker>) -> Fut,
    Fut: Future<Output = Result<T, ErrorPayload>> + Send + 'static,
{
    tokio::spawn(op(Arc::clone(broker)))
        .await
        .unwrap_or_else(|e| {
            Err(ErrorPayload::new("broker_error")
                .with_field("reason", format!("transaction task failed: {e}")))
        })
}

/// `transactional_id=` (aliases `txn=`, `transaction=`), required.
fn transactional_id(p: &CommandPayload, command: &str) -> Result<String, ErrorPayload> {
    ["transactional_id", "txn", "transaction"]
        .iter()
        .find_map(|f| p.get(f).filter(|v| !v.is_empty()))
        .map(str::to_owned)
        .ok_or_else(|| ErrorPayload::new("missing_transactional_id").with_field("command", command))
}

/// [`transactional_id`]; in a cluster only the owner of the id's
/// coordinator shard serves it (`NOT_COORDINATOR` elsewhere).
fn coordinated_id(
    broker: &Broker,
    p: &CommandPayload,
    command: &str,
    listener: Listener,
) -> Result<String, ErrorPayload> {
    let id = transactional_id(p, command)?;
    broker
        .placement()
        .check_coordinator(CoordinatorKey::Transaction(&id), listener)?;
    Ok(id)
}

/// `producerId=` and `epoch=`, both required.
fn session(p: &CommandPayload, command: &str) -> Result<(String, i64), ErrorPayload> {
    let producer_id = required(p, "producerId", "missing_producer_id", command)?.to_owned();
    let epoch = match p.get("epoch").filter(|e| !e.is_empty()) {
        Some(v) => number(v, "epoch", "invalid_epoch")?,
        None => {
            return Err(ErrorPayload::new("invalid_epoch")
                .with_field("command", command)
                .with_field("reason", "missing"))
        }
    };
    Ok((producer_id, epoch))
}

/// INIT_PRODUCER_ID transactional_id=<id>.
pub async fn init_producer_id(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let id = coordinated_id(broker, p, "INIT_PRODUCER_ID", listener)?;
    detached(broker, move |b| async move {
        let s = b.txns.init(&b, &id).await?;
        Ok(Reply::text(format!(
            "OK transactional_id={} producerId={} epoch={}",
            s.transactional_id, s.producer_id, s.epoch
        )))
    })
    .await
}

/// BEGIN_TXN transactional_id=<id> producerId=<pid> epoch=<N>.
pub async fn begin_txn(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const C: &str = "BEGIN_TXN";
    let id = coordinated_id(broker, p, C, listener)?;
    let (producer_id, epoch) = session(p, C)?;
    detached(broker, move |b| async move {
        let s = b.txns.begin(&b, &id, &producer_id, epoch).await?;
        Ok(Reply::text(format!(
            "OK transactional_id={} state={} producerId={} epoch={}",
            s.transactional_id, s.state, s.producer_id, s.epoch
        )))
    })
    .await
}

/// TXN_PUBLISH transactional_id= topic= [partition=] producerId= seqNum=
/// epoch= [key=] [metadata=] message=.
pub async fn txn_publish(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let req = publish_request(broker, p, listener)?;
    let mut replies = detached(broker, move |b| async move {
        Ok(publish_replies(&b, std::slice::from_ref(&req)).await)
    })
    .await?;
    Ok(replies.pop().unwrap_or_else(|| {
        Reply::Error(ErrorPayload::new("broker_error").with_field("reason", "no reply"))
    }))
}

/// TXN_PUBLISH requests that a client pipelined on one connection, taken
/// together (the connection reads ahead, see `crate::server::connection`):
/// one reply each, in order, exactly as if they had come one by one, but
/// a session's records share the id's lock, one participant registration,
/// and one append and one sync per partition
/// ([`crate::txn::TxnCoordinator::publish_batch`]).
pub async fn txn_publish_pipelined(
    broker: &Arc<Broker>,
    payloads: &[CommandPayload],
    listener: Listener,
) -> Vec<Reply> {
    if let Err(e) = super::deadline::point_of_no_return() {
        return payloads.iter().map(|_| Reply::Error(e.clone())).collect();
    }
    let parsed: Vec<Result<PublishRequest, ErrorPayload>> = payloads
        .iter()
        .map(|p| publish_request(broker, p, listener))
        .collect();
    let reqs: Vec<PublishRequest> = parsed.iter().filter_map(|r| r.clone().ok()).collect();
    let published = detached(broker, move |b| async move {
        Ok(publish_replies(&b, &reqs).await)
    })
    .await;
    let mut published = match published {
        Ok(replies) => replies.into_iter(),
        Err(e) => return payloads.iter().map(|_| Reply::Error(e.clone())).collect(),
    };
    parsed
        .into_iter()
        .map(|r| match r {
            Err(e) => Reply::Error(e),
            Ok(_) => published.next().unwrap_or_else(|| {
                Reply::Error(ErrorPayload::new("broker_error").with_field("reason", "no reply"))
            }),
        })
        .collect()
}

/// Publishes `reqs` and answers each once its record is durable.
async fn publish_replies(broker: &Broker, reqs: &[PublishRequest]) -> Vec<Reply> {
    let outcomes = broker.txns.publish_batch(broker, reqs).await;
    reqs.iter()
        .zip(outcomes)
        .map(|(req, outcome)| match outcome {
            Err(e) => Reply::Error(e),
            Ok((partition, appended)) => {
                let line = format!(
                    "OK transactional_id={} appended=true topic={} partition={partition} offset={} state=open",
                    req.transactional_id, req.topic, appended.offset
                );
                // Answered once durable; the connection takes the next
                // request meanwhile, so a pipelined transaction shares fsyncs.
                Reply::Deferred(Durable(Box::pin(async move {
                    match appended.durable.wait().await {
                        Ok(()) => Reply::text(line),
                        Err(e) => Reply::Error(e),
                    }
                })))
            }
        })
        .collect()
}

/// The TXN_PUBLISH request `p` carries.
fn publish_request(
    broker: &Broker,
    p: &CommandPayload,
    listener: Listener,
) -> Result<PublishRequest, ErrorPayload> {
    const C: &str = "TXN_PUBLISH";
    let id = coordinated_id(broker, p, C, listener)?;
    let topic = topic_param(p, C)?.to_owned();
    let (producer_id, epoch) = session(p, C)?;
    let seq = match p.get("seqNum").map(|v| v.trim().parse::<u64>()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            return Err(ErrorPayload::new("invalid_seq_num")
                .with_field("command", C)
                .with_field("seqNum", p.get("seqNum").unwrap_or(""))
                .with_field("reason", "transactional publish requires seqNum > 0"))
        }
    };
    let message = required(p, "message", "missing_message", C)?;
    let partition = chosen_partition(p, C)?;
    Ok(PublishRequest {
        transactional_id: id,
        producer_id,
        epoch,
        seq,
        topic,
        partition,
        key: p
            .get("key")
            .map(|k| Bytes::copy_from_slice(k.as_bytes()))
            .unwrap_or_default(),
        payload: Bytes::copy_from_slice(message.as_bytes()),
        metadata: p.get("metadata").unwrap_or_default().to_owned(),
    })
}

/// TXN_APPEND_STREAM transactional_id= topic= key= expected_version=
/// producerId= seqNum= epoch= [schema_version=] [event_type=] [metadata=]
/// [event_id=] message=.
pub async fn txn_append_stream(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const C: &str = "TXN_APPEND_STREAM";
    let id = coordinated_id(broker, p, C, listener)?;
    let topic = topic_param(p, C)?.to_owned();
    let key = required(p, "key", "missing_key", C)?.to_owned();
    let expected_version = match p.get("expected_version").map(|v| v.trim().parse::<u64>()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            return Err(ErrorPayload::new("invalid_expected_version")
                .with_field("command", C)
                .with_field("expected_version", p.get("expected_version").unwrap_or("")))
        }
    };
    let (producer_id, epoch) = session(p, C)?;
    let seq = match p.get("seqNum").map(|v| v.trim().parse::<u64>()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            return Err(ErrorPayload::new("invalid_seq_num")
                .with_field("command", C)
                .with_field("seqNum", p.get("seqNum").unwrap_or(""))
                .with_field("reason", "transactional append requires seqNum > 0"))
        }
    };
    let schema_version: u32 = match p.get("schema_version") {
        None => 1,
        Some(raw) => raw.trim().parse().map_err(|_| {
            ErrorPayload::new("invalid_schema_version").with_field("schema_version", raw)
        })?,
    };
    let message = required(p, "message", "missing_message", C)?;
    let req = StreamRequest {
        transactional_id: id,
        producer_id,
        epoch,
        seq,
        topic,
        key,
        expected_version,
        schema_version,
        event_type: p.get("event_type").unwrap_or_default().to_owned(),
        metadata: p.get("metadata").unwrap_or_default().to_owned(),
        event_id: p.get("event_id").unwrap_or_default().to_owned(),
        payload: Bytes::copy_from_slice(message.as_bytes()),
    };
    detached(broker, move |b| async move {
        let (partition, version, appended) = b.txns.append_stream(&b, &req).await?;
        let line = format!(
            "OK transactional_id={} appended=true topic={} partition={partition} version={version} \
             offset={} state=open",
            req.transactional_id, req.topic, appended.offset
        );
        Ok(Reply::Deferred(Durable(Box::pin(async move {
            match appended.durable.wait().await {
                Ok(()) => Reply::text(line),
                Err(e) => Reply::Error(e),
            }
        }))))
    })
    .await
}

/// Parses `offsets=P<partition>:<next>,...`: `invalid_txn_offsets` when
/// missing, malformed, empty, too long or repeating a partition.
pub fn parse_txn_offsets(raw: Option<&str>) -> Result<Vec<(u32, u64)>, ErrorPayload> {
    let invalid =
        |reason: &str| ErrorPayload::new("invalid_txn_offsets").with_field("reason", reason);
    let raw = raw.ok_or_else(|| invalid("missing_offsets"))?;
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let parsed = entry
            .strip_prefix('P')
            .and_then(|rest| rest.split_once(':'))
            .and_then(|(p, o)| Some((p.parse::<u32>().ok()?, o.parse::<u64>().ok()?)));
        let Some((partition, offset)) = parsed else {
            return Err(invalid("malformed_entry").with_field("entry", entry));
        };
        if !seen.insert(partition) {
            return Err(invalid("duplicate_partition").with_field("partition", partition));
        }
        if seen.len() > MAX_TXN_OFFSET_PARTITIONS {
            return Err(invalid("too_many_partitions").with_field("max", MAX_TXN_OFFSET_PARTITIONS));
        }
        out.push((partition, offset));
    }
    if out.is_empty() {
        return Err(invalid("no_offsets"));
    }
    Ok(out)
}

/// SEND_OFFSETS_TO_TXN transactional_id= producerId= epoch= topic= group=
/// member= generation= offsets=P<p>:<next>,...
pub async fn send_offsets_to_txn(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const C: &str = "SEND_OFFSETS_TO_TXN";
    let id = coordinated_id(broker, p, C, listener)?;
    let (producer_id, epoch) = session(p, C)?;
    let topic = topic_param(p, C)?.to_owned();
    let group = required(p, "group", "missing_group", C)?.to_owned();
    let member = required(p, "member", "missing_member", C)?.to_owned();
    let generation = match p.get("generation").filter(|g| !g.is_empty()) {
        Some(g) => number(g, "generation", "invalid_generation")?,
        None => return Err(ErrorPayload::new("missing_generation").with_field("command", C)),
    };
    let entries = parse_txn_offsets(p.get("offsets"))?;
    let req = OffsetsRequest {
        transactional_id: id,
        producer_id,
        epoch,
        topic,
        group,
        member,
        generation,
        entries,
    };
    detached(broker, move |b| async move {
        let staged = b.txns.send_offsets(&b, &req).await?;
        Ok(Reply::text(format!(
            "OK transactional_id={} staged_offsets={staged}",
            req.transactional_id
        )))
    })
    .await
}

/// END_TXN transactional_id= producerId= epoch= result=<commit|abort>
/// (`result` defaults to commit).
pub async fn end_txn(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    const C: &str = "END_TXN";
    let id = coordinated_id(broker, p, C, listener)?;
    let (producer_id, epoch) = session(p, C)?;
    let result = match p.get("result") {
        None => EndResult::Commit,
        Some(v) => EndResult::parse(v)?,
    };
    detached(broker, move |b| async move {
        let s = b.txns.end(&b, &id, &producer_id, epoch, result).await?;
        Ok(Reply::text(format!(
            "OK transactional_id={} state={} messages={} offsets={}",
            s.transactional_id,
            s.state,
            s.messages,
            s.offset_count()
        )))
    })
    .await
}

/// TXN_STATUS transactional_id=<id>.
pub async fn txn_status(
    broker: &Arc<Broker>,
    p: &CommandPayload,
    listener: Listener,
) -> HandlerResult {
    let id = coordinated_id(broker, p, "TXN_STATUS", listener)?;
    let s = broker.txns.status(&id).await?;
    Ok(Reply::text(status_line(&s)))
}

/// The TXN_STATUS reply line.
pub fn status_line(s: &TxnSnapshot) -> String {
    format!(
        "OK transactional_id={} mode=exactly_once state={} producerId={} epoch={} messages={} participants={} offsets={}",
        s.transactional_id,
        s.state,
        s.producer_id,
        s.epoch,
        s.messages,
        s.participants.len(),
        s.offset_count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn txn_offsets_parse_strictly() {
        assert_eq!(
            parse_txn_offsets(Some("P0:10,P3:7")).unwrap(),
            vec![(0, 10), (3, 7)]
        );
        let reason = |raw: Option<&str>| {
            let e = parse_txn_offsets(raw).unwrap_err();
            assert_eq!(e.code, "invalid_txn_offsets");
            e.fields["reason"].clone()
        };
        assert_eq!(reason(None), "missing_offsets");
        assert_eq!(reason(Some("0:10")), "malformed_entry");
        assert_eq!(reason(Some("P0:-1")), "malformed_entry");
        assert_eq!(reason(Some("P0:1,P0:2")), "duplicate_partition");
        assert_eq!(reason(Some(" , ")), "no_offsets");
    }

    #[test]
    fn ids_accept_the_aliases() {
        for line in [
            "TXN_STATUS transactional_id=a",
            "TXN_STATUS txn=a",
            "TXN_STATUS transaction=a",
        ] {
            let (_, p) = CommandPayload::parse_line(line).unwrap();
            assert_eq!(transactional_id(&p, "TXN_STATUS").unwrap(), "a");
        }
        let (_, p) = CommandPayload::parse_line("TXN_STATUS").unwrap();
        assert_eq!(
            transactional_id(&p, "TXN_STATUS").unwrap_err().code,
            "missing_transactional_id"
        );
    }
}
