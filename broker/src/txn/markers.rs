//! Transaction records as stored in partition logs: the data records of
//! TXN_PUBLISH and the control markers that resolve them.
//!
//! A marker is a record with payload [`CONTROL_MARKER_PAYLOAD`], the
//! transaction's `producer_id`/`epoch` and `transactional_id`,
//! `transaction_marker=commit|abort`, `transaction_state=committed|aborted`,
//! `control_batch_type=transaction`, `control_batch_version=2`,
//! `control_batch_coordinator_epoch=<epoch>`, and Kafka-style control bytes:
//! key = i16 version 0 + i16 marker type (0 abort, 1 commit), value = i16
//! version 0 + i32 coordinator epoch, big-endian. The coordinator epoch is
//! [`COORDINATOR_EPOCH`] on a standalone broker and the coordinator's
//! durable shard epoch in a cluster (`cluster/shards.rs`).

use bytes::Bytes;
use cursus_wire::{ControlBatchType, Record, TransactionMarker, TransactionState};

/// Payload of every control marker.
pub const CONTROL_MARKER_PAYLOAD: &str = "__cursus_txn_control_marker__";
/// `control_batch_version` of Cursus v2 transaction control records.
pub const CONTROL_BATCH_VERSION: i16 = 2;
/// The coordinator epoch of a standalone broker.
pub const COORDINATOR_EPOCH: i64 = 1;

/// The outcome a marker records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    /// Commit marker: the transaction's records become visible.
    Commit,
    /// Abort marker: the transaction's records are never visible.
    Abort,
}

impl MarkerKind {
    /// Kafka's control record type (0 abort, 1 commit).
    pub fn control_type(self) -> i16 {
        match self {
            MarkerKind::Abort => 0,
            MarkerKind::Commit => 1,
        }
    }
}

/// The control marker record for `(producer_id, epoch)` of
/// `transactional_id`, written by a coordinator at `coordinator_epoch`
/// (topic, partition, offset and timestamp are set by the append).
pub fn marker_record(
    transactional_id: &str,
    producer_id: &str,
    epoch: i64,
    kind: MarkerKind,
    coordinator_epoch: i64,
) -> Record {
    // The control record value holds an i32 (Kafka's layout).
    let value_epoch = i32::try_from(coordinator_epoch).unwrap_or(i32::MAX);
    let mut key = Vec::with_capacity(4);
    key.extend_from_slice(&0i16.to_be_bytes());
    key.extend_from_slice(&kind.control_type().to_be_bytes());
    let mut value = Vec::with_capacity(6);
    value.extend_from_slice(&0i16.to_be_bytes());
    value.extend_from_slice(&value_epoch.to_be_bytes());
    let (marker, state) = match kind {
        MarkerKind::Commit => (TransactionMarker::Commit, TransactionState::Committed),
        MarkerKind::Abort => (TransactionMarker::Abort, TransactionState::Aborted),
    };
    Record {
        payload: Bytes::from_static(CONTROL_MARKER_PAYLOAD.as_bytes()),
        producer_id: producer_id.to_owned(),
        epoch,
        transactional_id: transactional_id.to_owned(),
        transaction_state: state,
        transaction_marker: marker,
        control_batch_type: ControlBatchType::Transaction,
        control_batch_version: CONTROL_BATCH_VERSION,
        control_batch_coordinator_epoch: coordinator_epoch,
        control_batch_key: Some(Bytes::from(key)),
        control_batch_value: Some(Bytes::from(value)),
        ..Record::default()
    }
}

/// What a stored record is to the transaction index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnRecordKind {
    /// Not transactional.
    Plain,
    /// A record appended by TXN_PUBLISH.
    Data,
    /// A control marker.
    Marker(MarkerKind),
}

/// Classifies a decoded stored record.
pub fn classify(record: &Record) -> TxnRecordKind {
    if record.control_batch_type == ControlBatchType::Transaction {
        return match record.transaction_marker {
            TransactionMarker::Abort => TxnRecordKind::Marker(MarkerKind::Abort),
            // A control record without a marker value is treated as a
            // commit only when its state says so; anything else aborts.
            TransactionMarker::Commit => TxnRecordKind::Marker(MarkerKind::Commit),
            TransactionMarker::None if record.transaction_state == TransactionState::Committed => {
                TxnRecordKind::Marker(MarkerKind::Commit)
            }
            TransactionMarker::None => TxnRecordKind::Marker(MarkerKind::Abort),
        };
    }
    if !record.transactional_id.is_empty() && !record.producer_id.is_empty() {
        return TxnRecordKind::Data;
    }
    TxnRecordKind::Plain
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use cursus_wire::RecordVersion;

    #[test]
    fn markers_carry_the_documented_fields_and_bytes() {
        let m = marker_record("tx", "txn-4", 2, MarkerKind::Commit, COORDINATOR_EPOCH);
        let mut buf = BytesMut::new();
        m.encode(RecordVersion::V3, &mut buf).unwrap();
        let back = Record::decode(buf.freeze()).unwrap();
        assert_eq!(back.payload, CONTROL_MARKER_PAYLOAD.as_bytes());
        assert_eq!(back.transaction_marker, TransactionMarker::Commit);
        assert_eq!(back.transaction_state, TransactionState::Committed);
        assert_eq!(back.control_batch_version, 2);
        assert_eq!(back.control_batch_coordinator_epoch, 1);
        assert_eq!(back.control_batch_key.as_deref(), Some(&[0u8, 0, 0, 1][..]));
        assert_eq!(
            back.control_batch_value.as_deref(),
            Some(&[0u8, 0, 0, 0, 0, 1][..])
        );
        assert_eq!((back.producer_id.as_str(), back.epoch), ("txn-4", 2));
        assert_eq!(classify(&back), TxnRecordKind::Marker(MarkerKind::Commit));
        let a = marker_record("tx", "txn-4", 2, MarkerKind::Abort, 1);
        assert_eq!(a.control_batch_key.as_deref(), Some(&[0u8, 0, 0, 0][..]));
        assert_eq!(classify(&a), TxnRecordKind::Marker(MarkerKind::Abort));
        // A cluster coordinator's shard epoch, in the metadata and the value.
        let s = marker_record("tx", "txn-4", 2, MarkerKind::Commit, 0x0102_0304);
        assert_eq!(s.control_batch_coordinator_epoch, 0x0102_0304);
        assert_eq!(
            s.control_batch_value.as_deref(),
            Some(&[0u8, 0, 1, 2, 3, 4][..])
        );
    }

    #[test]
    fn data_and_plain_records() {
        let data = Record {
            producer_id: "txn-1".into(),
            transactional_id: "tx".into(),
            transaction_state: TransactionState::Open,
            ..Record::new("x")
        };
        assert_eq!(classify(&data), TxnRecordKind::Data);
        let plain = Record {
            producer_id: "p".into(),
            ..Record::new("x")
        };
        assert_eq!(classify(&plain), TxnRecordKind::Plain);
    }
}
