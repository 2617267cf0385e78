//! Aggregate replay proofs and range reads for Python (`ReplayProof`,
//! `RangeEvent`; `docs/aggregate-replay.md`).

use cursus::eventstore::{RangeEvent as EngineRangeEvent, ReplayProof as EngineProof};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// What the broker proved about an aggregate's retained events on an
/// aggregate replay topic (AGGREGATE_REPLAY_PROOF; fields the broker
/// omits are 0 or empty).
#[pyclass(module = "cursus", frozen, get_all, eq)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayProof {
    /// Topic.
    pub topic: String,
    /// The aggregate's partition.
    pub partition: u32,
    /// The aggregate (match) id: its key.
    pub match_id: String,
    /// Lowest retained event sequence (aggregate version).
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
    /// The committed offset (high watermark) the proof covers.
    pub proof_hwm: u64,
    /// `"complete"`, `"not_found"`, `"retention_gap"`, `"sequence_gap"`,
    /// `"identity_conflict"` or `"proof_unavailable"`.
    pub status: String,
    /// Why the proof is not complete, when it is not (else empty).
    pub diagnostic: String,
}

#[pymethods]
impl ReplayProof {
    /// A proof with these fields (for tests; the store returns them).
    #[new]
    #[pyo3(signature = (*, topic=String::new(), partition=0, match_id=String::new(), earliest_retained_sequence=0, latest_retained_sequence=0, first_offset=0, last_offset=0, event_count=0, first_event_id=String::new(), last_event_id=String::new(), sequence_complete=false, retention_complete_from_sequence_one=false, proof_hwm=0, status=String::new(), diagnostic=String::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        topic: String,
        partition: u32,
        match_id: String,
        earliest_retained_sequence: u64,
        latest_retained_sequence: u64,
        first_offset: u64,
        last_offset: u64,
        event_count: u64,
        first_event_id: String,
        last_event_id: String,
        sequence_complete: bool,
        retention_complete_from_sequence_one: bool,
        proof_hwm: u64,
        status: String,
        diagnostic: String,
    ) -> Self {
        ReplayProof {
            topic,
            partition,
            match_id,
            earliest_retained_sequence,
            latest_retained_sequence,
            first_offset,
            last_offset,
            event_count,
            first_event_id,
            last_event_id,
            sequence_complete,
            retention_complete_from_sequence_one,
            proof_hwm,
            status,
            diagnostic,
        }
    }

    /// True when every retained event from sequence 1 on was verified
    /// (`status == "complete"`).
    #[getter]
    fn complete(&self) -> bool {
        self.status == "complete"
    }

    fn __repr__(&self) -> String {
        format!(
            "ReplayProof(topic={:?}, partition={}, match_id={:?}, status={:?}, \
             event_count={}, earliest_retained_sequence={}, latest_retained_sequence={}, \
             first_offset={}, last_offset={}, first_event_id={:?}, last_event_id={:?}, \
             sequence_complete={}, retention_complete_from_sequence_one={}, proof_hwm={}{})",
            self.topic,
            self.partition,
            self.match_id,
            self.status,
            self.event_count,
            self.earliest_retained_sequence,
            self.latest_retained_sequence,
            self.first_offset,
            self.last_offset,
            self.first_event_id,
            self.last_event_id,
            py_bool(self.sequence_complete),
            py_bool(self.retention_complete_from_sequence_one),
            self.proof_hwm,
            if self.diagnostic.is_empty() {
                String::new()
            } else {
                format!(", diagnostic={:?}", self.diagnostic)
            },
        )
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

impl From<EngineProof> for ReplayProof {
    fn from(p: EngineProof) -> Self {
        ReplayProof {
            topic: p.topic,
            partition: p.partition,
            match_id: p.match_id,
            earliest_retained_sequence: p.earliest_retained_sequence,
            latest_retained_sequence: p.latest_retained_sequence,
            first_offset: p.first_offset,
            last_offset: p.last_offset,
            event_count: p.event_count,
            first_event_id: p.first_event_id,
            last_event_id: p.last_event_id,
            sequence_complete: p.sequence_complete,
            retention_complete_from_sequence_one: p.retention_complete_from_sequence_one,
            proof_hwm: p.proof_hwm,
            status: p.status,
            diagnostic: p.diagnostic,
        }
    }
}

/// One event of a range read (AGGREGATE_EVENT_RANGE_READ).
#[pyclass(module = "cursus", frozen, get_all, eq)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeEvent {
    /// Offset in the partition.
    pub offset: u64,
    /// The aggregate (match) id.
    pub match_id: String,
    /// The event's sequence: its aggregate version.
    pub event_sequence: u64,
    /// The event id.
    pub event_id: String,
    /// Event type (may be empty).
    pub event_type: String,
    /// The payload text, as stored.
    pub payload: String,
}

#[pymethods]
impl RangeEvent {
    /// An event with these fields (for tests; range reads return them).
    #[new]
    #[pyo3(signature = (*, offset, match_id, event_sequence, event_id, event_type=String::new(), payload=String::new()))]
    fn new(
        offset: u64,
        match_id: String,
        event_sequence: u64,
        event_id: String,
        event_type: String,
        payload: String,
    ) -> Self {
        RangeEvent {
            offset,
            match_id,
            event_sequence,
            event_id,
            event_type,
            payload,
        }
    }

    /// The event's sequence (alias of `event_sequence`, as
    /// `StoredEvent.version`).
    #[getter]
    fn version(&self) -> u64 {
        self.event_sequence
    }

    fn __repr__(&self) -> String {
        format!(
            "RangeEvent(offset={}, match_id={:?}, event_sequence={}, event_id={:?}, \
             event_type={:?}, payload=<{} chars>)",
            self.offset,
            self.match_id,
            self.event_sequence,
            self.event_id,
            self.event_type,
            self.payload.chars().count()
        )
    }
}

impl From<EngineRangeEvent> for RangeEvent {
    fn from(e: EngineRangeEvent) -> Self {
        RangeEvent {
            offset: e.offset,
            match_id: e.match_id,
            event_sequence: e.event_sequence,
            event_id: e.event_id,
            event_type: e.event_type,
            payload: e.payload,
        }
    }
}

/// A range read's outcome for Python: `(ReplayProof, [RangeEvent, ...])`.
pub fn range_result(
    py: Python<'_>,
    (proof, events): (EngineProof, Vec<EngineRangeEvent>),
) -> PyResult<PyObject> {
    let events: Vec<PyObject> = events
        .into_iter()
        .map(|e| Py::new(py, RangeEvent::from(e)).map(|o| o.into_py(py)))
        .collect::<PyResult<_>>()?;
    Ok((
        Py::new(py, ReplayProof::from(proof))?,
        PyList::new_bound(py, events),
    )
        .into_py(py))
}
