//! Transaction coordinator requests and replies: INIT_PRODUCER_ID,
//! BEGIN_TXN, TXN_PUBLISH, SEND_OFFSETS_TO_TXN and END_TXN (seed
//! "Transaction Coordinator"; `docs/transactions.md`).

use super::reply::OkReply;
use crate::error::Result;
use crate::wire::CommandPayload;

/// A broker-managed producer session: the id and the epoch that fences
/// older sessions of the same transactional id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Broker-managed producer id.
    pub producer_id: String,
    /// Producer epoch; one transaction per epoch.
    pub epoch: i64,
}

impl Session {
    /// Reads an INIT_PRODUCER_ID reply.
    pub fn from_reply(reply: &OkReply) -> Result<Session> {
        Ok(Session {
            producer_id: reply.require("producerId")?.to_owned(),
            epoch: reply.parse_field("epoch")?,
        })
    }
}

/// The outcome END_TXN reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnResult {
    /// Make the transaction visible.
    Commit,
    /// Discard it.
    Abort,
}

impl TxnResult {
    /// The `result=` value.
    pub fn as_str(self) -> &'static str {
        match self {
            TxnResult::Commit => "commit",
            TxnResult::Abort => "abort",
        }
    }
}

/// `INIT_PRODUCER_ID transactional_id=…`.
pub fn init_producer_id(transactional_id: &str) -> CommandPayload {
    CommandPayload::new().field("transactional_id", transactional_id)
}

/// The fields every command of an open session carries.
fn session_payload(transactional_id: &str, session: &Session) -> CommandPayload {
    CommandPayload::new()
        .field("transactional_id", transactional_id)
        .field("producerId", &session.producer_id)
        .field("epoch", session.epoch)
}

/// `BEGIN_TXN`.
pub fn begin(transactional_id: &str, session: &Session) -> CommandPayload {
    session_payload(transactional_id, session)
}

/// `END_TXN … result=commit|abort`.
pub fn end(transactional_id: &str, session: &Session, result: TxnResult) -> CommandPayload {
    session_payload(transactional_id, session).field("result", result.as_str())
}

/// One record of a transaction (`TXN_PUBLISH`); `message=` comes last as
/// the command line requires.
pub struct TxnRecord<'a> {
    /// Topic.
    pub topic: &'a str,
    /// Partition (always explicit: the engine partitions).
    pub partition: u32,
    /// Sequence number in this epoch and partition, from 1.
    pub seq: u64,
    /// Key, possibly empty (text without whitespace: a command field).
    pub key: &'a str,
    /// Payload (text: the trailing `message=` field).
    pub payload: &'a str,
    /// Metadata, possibly empty (the trailing `metadata=` field, before
    /// `message=`).
    pub metadata: &'a str,
}

/// `TXN_PUBLISH`.
pub fn publish(
    transactional_id: &str,
    session: &Session,
    record: &TxnRecord<'_>,
) -> CommandPayload {
    let mut p = CommandPayload::new()
        .field("transactional_id", transactional_id)
        .field("topic", record.topic)
        .field("partition", record.partition)
        .field("producerId", &session.producer_id)
        .field("seqNum", record.seq)
        .field("epoch", session.epoch);
    if !record.key.is_empty() {
        p = p.field("key", record.key);
    }
    if !record.metadata.is_empty() {
        p = p.field("metadata", record.metadata);
    }
    p.field("message", record.payload)
}

/// `SEND_OFFSETS_TO_TXN` for one topic: `offsets` are `(partition, next
/// offset)` pairs.
pub fn send_offsets(
    transactional_id: &str,
    session: &Session,
    topic: &str,
    group: &GroupMetadata,
    offsets: &[(u32, u64)],
) -> CommandPayload {
    let list = offsets
        .iter()
        .map(|(p, o)| format!("P{p}:{o}"))
        .collect::<Vec<_>>()
        .join(",");
    session_payload(transactional_id, session)
        .field("topic", topic)
        .field("group", &group.group_id)
        .field("member", &group.member_id)
        .field("generation", group.generation)
        .field("offsets", list)
}

/// A consumer's group session, as Kafka's `groupMetadata()`: the offsets a
/// transaction commits are fenced by it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadata {
    /// Group id.
    pub group_id: String,
    /// Member id.
    pub member_id: String,
    /// Generation.
    pub generation: u64,
}

/// The offset a TXN_PUBLISH reply reports for its record.
pub fn published_offset(reply: &OkReply) -> Result<u64> {
    reply.parse_field("offset")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session {
            producer_id: "txn-1".into(),
            epoch: 3,
        }
    }

    #[test]
    fn publish_puts_the_message_last_and_every_session_field() {
        let p = publish(
            "t1",
            &session(),
            &TxnRecord {
                topic: "out",
                partition: 2,
                seq: 7,
                key: "k",
                payload: "hello world",
                metadata: r#"{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "a": 1}"#,
            },
        );
        let names: Vec<&str> = p.fields().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "transactional_id",
                "topic",
                "partition",
                "producerId",
                "seqNum",
                "epoch",
                "key",
                "metadata",
                "message"
            ]
        );
        assert!(p.renders_faithfully());
        assert_eq!(p.get("message"), Some("hello world"));
        assert!(p.get("metadata").unwrap().ends_with(r#""a": 1}"#));
        assert_eq!(p.get("epoch"), Some("3"));
    }

    #[test]
    fn offsets_are_listed_with_the_p_prefix() {
        let group = GroupMetadata {
            group_id: "g".into(),
            member_id: "m-1".into(),
            generation: 4,
        };
        let p = send_offsets("t1", &session(), "in", &group, &[(0, 5), (3, 9)]);
        assert_eq!(p.get("offsets"), Some("P0:5,P3:9"));
        assert_eq!(p.get("generation"), Some("4"));
        assert_eq!(p.get("member"), Some("m-1"));
    }

    #[test]
    fn session_reads_init_reply() {
        let r = OkReply::parse(b"OK transactional_id=t1 producerId=txn-4 epoch=2").unwrap();
        assert_eq!(
            Session::from_reply(&r).unwrap(),
            Session {
                producer_id: "txn-4".into(),
                epoch: 2
            }
        );
        assert!(Session::from_reply(&OkReply::parse(b"OK epoch=2").unwrap()).is_err());
    }
}
