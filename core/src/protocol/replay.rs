//! Aggregate replay proofs and range reads: AGGREGATE_REPLAY_PROOF and
//! AGGREGATE_EVENT_RANGE_READ (the addendum; `docs/aggregate-replay.md`).

use crate::error::Error;
use serde::Deserialize;

pub use super::reply::json_after;

/// What the broker proved about an aggregate's retained events (the
/// addendum's proof JSON; fields it omits are zero or empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ReplayProof {
    /// Topic.
    pub topic: String,
    /// Partition of the aggregate.
    pub partition: u32,
    /// The aggregate (match) id.
    pub match_id: String,
    /// Lowest retained event sequence.
    pub earliest_retained_sequence: u64,
    /// Highest retained event sequence.
    pub latest_retained_sequence: u64,
    /// Offset of the first retained event.
    pub first_offset: u64,
    /// Offset of the last retained event.
    pub last_offset: u64,
    /// Events found.
    pub event_count: u64,
    /// Event id of the first event.
    pub first_event_id: String,
    /// Event id of the last event.
    pub last_event_id: String,
    /// Sequences increase by exactly one.
    pub sequence_complete: bool,
    /// The retained events start at sequence 1.
    pub retention_complete_from_sequence_one: bool,
    /// The committed offset the proof covers.
    pub proof_hwm: u64,
    /// `complete`, `not_found`, `retention_gap`, `sequence_gap`,
    /// `identity_conflict` or `proof_unavailable`.
    pub status: String,
    /// Why the proof is not complete, when it is not.
    pub diagnostic: String,
}

impl ReplayProof {
    /// The proof a failed AGGREGATE_REPLAY_PROOF or range read carries
    /// (code `aggregate_proof_<status>` or `aggregate_range_<status>`,
    /// field `proof`), if the error is one.
    pub fn from_error(error: &Error) -> Option<ReplayProof> {
        ReplayProof::from_json(error.field("proof")?)
    }

    /// The proof in `json`, the text an error's `proof` field holds (what
    /// [`ReplayProof::from_error`] reads); none when it is not a proof.
    pub fn from_json(json: &str) -> Option<ReplayProof> {
        serde_json::from_str(json).ok()
    }

    /// True when every retained event from sequence 1 on was verified.
    pub fn is_complete(&self) -> bool {
        self.status == "complete"
    }
}

/// One event of a range read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct RangeEvent {
    /// Offset in the partition.
    pub offset: u64,
    /// The aggregate (match) id.
    pub match_id: String,
    /// The event's sequence (its aggregate version).
    pub event_sequence: u64,
    /// The event id.
    pub event_id: String,
    /// Event type.
    pub event_type: String,
    /// Payload text.
    pub payload: String,
}

/// `OK range=` JSON.
#[derive(Debug, Deserialize)]
pub struct RangeRead {
    /// The proof the range was read under.
    pub proof: ReplayProof,
    /// The events, in sequence order.
    #[serde(default)]
    pub events: Vec<RangeEvent>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_parse_with_omitted_fields() {
        let p: ReplayProof = json_after(
            br#"OK proof={"topic":"t","partition":1,"match_id":"m","latest_retained_sequence":3,"event_count":3,"sequence_complete":true,"retention_complete_from_sequence_one":true,"proof_hwm":9,"status":"complete"}"#,
            "proof",
        )
        .unwrap();
        assert!(p.is_complete());
        assert_eq!((p.first_offset, p.event_count, p.proof_hwm), (0, 3, 9));
    }

    #[test]
    fn range_reads_keep_payload_spaces() {
        let r: RangeRead = json_after(
            br#"OK range={"proof":{"status":"complete"},"events":[{"offset":4,"match_id":"m","event_sequence":1,"event_id":"e1","event_type":"","payload":"a b"}]}"#,
            "range",
        )
        .unwrap();
        assert_eq!(r.events[0].payload, "a b");
        let e = Error::from(
            crate::wire::ErrorPayload::new("aggregate_proof_sequence_gap")
                .with_field("proof", r#"{"status":"sequence_gap","event_count":2}"#),
        );
        let p = ReplayProof::from_error(&e).unwrap();
        assert_eq!((p.status.as_str(), p.event_count), ("sequence_gap", 2));
    }

    #[test]
    fn proof_text_that_is_no_proof_gives_none() {
        // Unknown fields are ignored, omitted ones are zero or empty.
        let p =
            ReplayProof::from_json(r#"{"status":"not_found","future":[1,{"x":null}]}"#).unwrap();
        assert_eq!(
            (p.status.as_str(), p.partition, p.topic.as_str()),
            ("not_found", 0, "")
        );
        assert_eq!(ReplayProof::from_json(r#"{"status":"#), None);
        assert_eq!(ReplayProof::from_json("[1]"), None);
    }
}
