//! The replay proof of one aggregate (match) of an aggregate replay topic:
//! what AGGREGATE_REPLAY_PROOF and AGGREGATE_EVENT_RANGE_READ report.
//!
//! The log is authoritative: [`ProofScan`] is fed, in offset order, every
//! committed record of the partition carrying the match id as its key, up
//! to the proof's high-water mark, and checks each (fail-closed): a
//! positive sequence (`aggregate_version`), a non-empty event id and
//! payload digest, the digest equal to the SHA-256 of the payload, an event
//! id not seen before (else `identity_conflict`), and sequences increasing
//! by exactly one (else `sequence_gap`). The scan stops at the first
//! failure; the counters then describe the events accepted before it, and
//! `diagnostic` names the offending record. [`ProofScan::finish`] decides
//! the rest: nothing found ⇒ `not_found`, a first sequence other than 1 ⇒
//! `retention_gap`, an `expected_last_sequence` other than the last ⇒
//! `proof_unavailable`, else `complete`.

use std::collections::HashMap;

use cursus_wire::Record;
use serde::Serialize;

/// A proof's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProofStatus {
    /// Every event from sequence 1 on is retained, contiguous and intact.
    Complete,
    /// No event of the match is retained.
    NotFound,
    /// The first retained event is not sequence 1.
    RetentionGap,
    /// A sequence does not follow its predecessor by one.
    SequenceGap,
    /// An event's identity is missing, repeated, or does not match its
    /// payload.
    IdentityConflict,
    /// The proof could not be established (read failure, or the last
    /// sequence is not the expected one).
    ProofUnavailable,
}

impl ProofStatus {
    /// The status text (`aggregate_proof_<status>` in errors).
    pub fn as_str(self) -> &'static str {
        match self {
            ProofStatus::Complete => "complete",
            ProofStatus::NotFound => "not_found",
            ProofStatus::RetentionGap => "retention_gap",
            ProofStatus::SequenceGap => "sequence_gap",
            ProofStatus::IdentityConflict => "identity_conflict",
            ProofStatus::ProofUnavailable => "proof_unavailable",
        }
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The proof JSON, keys in the addendum's order; zero and empty starred
/// fields are omitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Proof {
    /// Topic.
    pub topic: String,
    /// The match's partition.
    pub partition: u32,
    /// The match id (the aggregate key).
    pub match_id: String,
    /// First retained sequence.
    #[serde(skip_serializing_if = "is_zero")]
    pub earliest_retained_sequence: u64,
    /// Last retained sequence.
    #[serde(skip_serializing_if = "is_zero")]
    pub latest_retained_sequence: u64,
    /// Offset of the first event.
    #[serde(skip_serializing_if = "is_zero")]
    pub first_offset: u64,
    /// Offset of the last event.
    #[serde(skip_serializing_if = "is_zero")]
    pub last_offset: u64,
    /// Events accepted.
    pub event_count: u64,
    /// Event id of the first event.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub first_event_id: String,
    /// Event id of the last event.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub last_event_id: String,
    /// The retained sequences are contiguous and intact.
    pub sequence_complete: bool,
    /// The retained sequences start at 1.
    pub retention_complete_from_sequence_one: bool,
    /// The last stable offset the scan stopped at (exclusive).
    pub proof_hwm: u64,
    /// The status text.
    pub status: &'static str,
    /// What failed, when something did.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub diagnostic: String,
}

impl Proof {
    /// The compact JSON text.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}

/// One accepted event (kept for range reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvenEvent {
    /// Its offset.
    pub offset: u64,
    /// Its sequence.
    pub sequence: u64,
    /// Its event id.
    pub event_id: String,
    /// Its event type.
    pub event_type: String,
    /// Its payload as stored.
    pub payload: String,
}

/// The scan of one match; see the module docs.
#[derive(Debug)]
pub struct ProofScan {
    proof: Proof,
    seen: HashMap<String, u64>,
    failure: Option<ProofStatus>,
    keep_events: bool,
    events: Vec<ProvenEvent>,
}

/// Lowercase hex SHA-256 of `payload`: a replay event's `payload_digest`.
pub fn payload_digest(payload: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
    let mut out = String::with_capacity(64);
    for b in Sha256::digest(payload) {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

impl ProofScan {
    /// A scan of `match_id` on `topic`/`partition` up to `proof_hwm`;
    /// `keep_events` keeps the accepted events for a range read.
    pub fn new(
        topic: &str,
        partition: u32,
        match_id: &str,
        proof_hwm: u64,
        keep_events: bool,
    ) -> ProofScan {
        ProofScan {
            proof: Proof {
                topic: topic.to_owned(),
                partition,
                match_id: match_id.to_owned(),
                earliest_retained_sequence: 0,
                latest_retained_sequence: 0,
                first_offset: 0,
                last_offset: 0,
                event_count: 0,
                first_event_id: String::new(),
                last_event_id: String::new(),
                sequence_complete: false,
                retention_complete_from_sequence_one: false,
                proof_hwm,
                status: "",
                diagnostic: String::new(),
            },
            seen: HashMap::new(),
            failure: None,
            keep_events,
            events: Vec::new(),
        }
    }

    /// True once a failure stopped the scan.
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }

    fn fail(&mut self, status: ProofStatus, diagnostic: String) {
        self.failure = Some(status);
        self.proof.diagnostic = diagnostic;
    }

    /// The read failed or made no progress at `offset`.
    pub fn unavailable(&mut self, offset: u64, reason: &str) {
        if self.failure.is_none() {
            self.fail(
                ProofStatus::ProofUnavailable,
                format!("offset {offset}: {reason}"),
            );
        }
    }

    /// Feeds one committed record of the match (its key is the match id).
    pub fn feed(&mut self, offset: u64, record: &Record) {
        if self.failure.is_some() {
            return;
        }
        let sequence = record.aggregate_version;
        let problem = if sequence == 0 {
            Some("the record has no sequence (aggregate_version)".to_owned())
        } else if record.event_id.is_empty() {
            Some("the record has no event_id".to_owned())
        } else if record.payload_digest.is_empty() {
            Some("the record has no payload_digest".to_owned())
        } else if payload_digest(&record.payload) != record.payload_digest {
            Some("payload_digest does not match the payload".to_owned())
        } else {
            self.seen.get(&record.event_id).map(|first| {
                format!(
                    "event_id {} repeats the event at offset {first}",
                    record.event_id
                )
            })
        };
        if let Some(problem) = problem {
            self.fail(
                ProofStatus::IdentityConflict,
                format!("offset {offset}: {problem}"),
            );
            return;
        }
        let p = &mut self.proof;
        if p.event_count > 0 && sequence != p.latest_retained_sequence + 1 {
            let last = p.latest_retained_sequence;
            self.fail(
                ProofStatus::SequenceGap,
                format!("offset {offset}: sequence {sequence} follows {last}"),
            );
            return;
        }
        if p.event_count == 0 {
            p.earliest_retained_sequence = sequence;
            p.first_offset = offset;
            p.first_event_id = record.event_id.clone();
        }
        p.latest_retained_sequence = sequence;
        p.last_offset = offset;
        p.last_event_id = record.event_id.clone();
        p.event_count += 1;
        self.seen.insert(record.event_id.clone(), offset);
        if self.keep_events {
            self.events.push(ProvenEvent {
                offset,
                sequence,
                event_id: record.event_id.clone(),
                event_type: record.event_type.clone(),
                payload: String::from_utf8_lossy(&record.payload).into_owned(),
            });
        }
    }

    /// Ends the scan: the proof, its status, and the accepted events.
    pub fn finish(
        mut self,
        expected_last_sequence: Option<u64>,
    ) -> (Proof, ProofStatus, Vec<ProvenEvent>) {
        let found = self.proof.event_count > 0;
        let from_one = found && self.proof.earliest_retained_sequence == 1;
        let status = match self.failure {
            Some(failure) => failure,
            None if !found => ProofStatus::NotFound,
            None if !from_one => ProofStatus::RetentionGap,
            None => match expected_last_sequence {
                Some(expected) if expected != self.proof.latest_retained_sequence => {
                    self.proof.diagnostic = format!(
                        "expected_last_sequence {expected} but the last retained sequence is {}",
                        self.proof.latest_retained_sequence
                    );
                    ProofStatus::ProofUnavailable
                }
                _ => ProofStatus::Complete,
            },
        };
        // A scan stopped by a failure did not see every event.
        let scanned_all = self.failure.is_none();
        self.proof.sequence_complete = found && scanned_all;
        self.proof.retention_complete_from_sequence_one = from_one;
        self.proof.status = status.as_str();
        (self.proof, status, self.events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn event(seq: u64, id: &str, payload: &str) -> Record {
        Record {
            key: Bytes::from_static(b"m"),
            aggregate_version: seq,
            event_id: id.into(),
            payload_digest: payload_digest(payload.as_bytes()),
            ..Record::new(payload.to_owned())
        }
    }

    fn scan(records: &[Record], expected: Option<u64>) -> (Proof, ProofStatus) {
        let mut s = ProofScan::new("t", 1, "m", 99, false);
        for (i, r) in records.iter().enumerate() {
            s.feed(i as u64 * 2, r);
        }
        let (proof, status, _) = s.finish(expected);
        (proof, status)
    }

    #[test]
    fn digests_are_lowercase_hex_sha256() {
        assert_eq!(
            payload_digest(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_complete_proof_has_the_documented_json() {
        let (proof, status) = scan(&[event(1, "a", "x"), event(2, "b", "y")], Some(2));
        assert_eq!(status, ProofStatus::Complete);
        assert_eq!(
            proof.to_json().unwrap(),
            r#"{"topic":"t","partition":1,"match_id":"m","earliest_retained_sequence":1,"latest_retained_sequence":2,"last_offset":2,"event_count":2,"first_event_id":"a","last_event_id":"b","sequence_complete":true,"retention_complete_from_sequence_one":true,"proof_hwm":99,"status":"complete"}"#
        );
    }

    #[test]
    fn each_failure_has_its_status() {
        assert_eq!(scan(&[], None).1, ProofStatus::NotFound);
        let (p, s) = scan(&[event(2, "a", "x"), event(3, "b", "y")], None);
        assert_eq!(s, ProofStatus::RetentionGap);
        assert!(p.sequence_complete && !p.retention_complete_from_sequence_one);
        let (p, s) = scan(&[event(1, "a", "x"), event(3, "b", "y")], None);
        assert_eq!(s, ProofStatus::SequenceGap);
        assert_eq!(p.event_count, 1);
        assert_eq!(p.diagnostic, "offset 2: sequence 3 follows 1");
        assert!(!p.sequence_complete && p.retention_complete_from_sequence_one);
        let (p, s) = scan(&[event(1, "a", "x"), event(2, "a", "y")], None);
        assert_eq!(s, ProofStatus::IdentityConflict);
        assert!(p.diagnostic.contains("repeats"), "{}", p.diagnostic);
        let mut tampered = event(1, "a", "x");
        tampered.payload = Bytes::from_static(b"z");
        assert_eq!(scan(&[tampered], None).1, ProofStatus::IdentityConflict);
        let mut no_id = event(1, "a", "x");
        no_id.event_id.clear();
        assert_eq!(scan(&[no_id], None).1, ProofStatus::IdentityConflict);
        assert_eq!(
            scan(&[event(0, "a", "x")], None).1,
            ProofStatus::IdentityConflict
        );
        let (p, s) = scan(&[event(1, "a", "x")], Some(2));
        assert_eq!(s, ProofStatus::ProofUnavailable);
        assert!(p.sequence_complete);
        assert_eq!(p.status, "proof_unavailable");
    }
}
