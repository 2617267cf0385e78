//! What a consumer hands to the application: every field the protocol
//! carries for a record, with absent fields as `None`.

use crate::protocol::group::TopicPartition;
use bytes::Bytes;

/// A record delivered to the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRecord {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// Offset.
    pub offset: u64,
    /// Key; `None` when the record has none. The protocol carries a key
    /// only when it is non-empty, so a producer's empty key arrives as
    /// `None` too.
    pub key: Option<Bytes>,
    /// Value (may be empty).
    pub payload: Bytes,
    /// Milliseconds since the epoch: the producer's timestamp, or the
    /// broker's append time when the producer set none (0 when unknown).
    pub timestamp: i64,
    /// The record's metadata (event-sourcing topics: usually JSON), if any.
    pub metadata: Option<String>,
    /// The event fields, when the record is an event of an event-sourcing
    /// topic.
    pub event: Option<RecordEvent>,
}

/// The event-sourcing fields of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordEvent {
    /// Event type.
    pub event_type: String,
    /// Schema version of the event's payload.
    pub schema_version: u32,
    /// The aggregate's version this event created.
    pub aggregate_version: u64,
    /// The event id, when the producer gave one.
    pub event_id: Option<String>,
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

impl ConsumerRecord {
    /// The record of `tp` a fetch decoded.
    pub(crate) fn from_wire(tp: &TopicPartition, r: crate::wire::Record) -> ConsumerRecord {
        let event = (!r.event_type.is_empty()).then(|| RecordEvent {
            event_type: r.event_type,
            schema_version: r.schema_version,
            aggregate_version: r.aggregate_version,
            event_id: non_empty(r.event_id),
        });
        ConsumerRecord {
            topic: tp.topic.clone(),
            partition: tp.partition,
            offset: r.offset,
            key: (!r.key.is_empty()).then_some(r.key),
            payload: r.payload,
            timestamp: r.timestamp,
            metadata: non_empty(r.metadata),
            event,
        }
    }

    /// The record's topic and partition.
    pub fn topic_partition(&self) -> TopicPartition {
        TopicPartition::new(&self.topic, self.partition)
    }

    /// The key bytes, empty when the record has none.
    pub fn key_bytes(&self) -> &[u8] {
        self.key.as_deref().unwrap_or_default()
    }

    /// The trace context the producer's span left in the metadata, if
    /// any ([`crate::trace_context`]).
    pub fn trace_context(&self) -> Option<crate::TraceContext> {
        crate::trace_context::extract(self.metadata.as_deref()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_wire_fields_are_none_and_present_ones_are_kept() {
        let tp = TopicPartition::new("t", 3);
        let plain = crate::wire::Record::new(Bytes::from_static(b"v"));
        let r = ConsumerRecord::from_wire(&tp, plain);
        assert_eq!((r.key, r.metadata, r.event), (None, None, None));
        let mut wire = crate::wire::Record::new(Bytes::from_static(b"v"));
        wire.key = Bytes::from_static(b"k");
        wire.metadata = "{\"m\":1}".into();
        wire.event_type = "Created".into();
        wire.schema_version = 2;
        wire.aggregate_version = 7;
        wire.offset = 9;
        let r = ConsumerRecord::from_wire(&tp, wire);
        assert_eq!(r.key.as_deref(), Some(&b"k"[..]));
        assert_eq!(r.metadata.as_deref(), Some("{\"m\":1}"));
        assert_eq!(
            r.event,
            Some(RecordEvent {
                event_type: "Created".into(),
                schema_version: 2,
                aggregate_version: 7,
                event_id: None
            })
        );
        assert_eq!((r.partition, r.offset), (3, 9));
    }
}
