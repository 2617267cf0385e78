//! Client statistics, like librdkafka's: counters every client keeps with
//! atomics while it works ([`StatsRecorder`]), and the snapshot a caller
//! or a periodic statistics listener gets ([`Statistics`]).
//!
//! Recording never takes a lock: counters are relaxed atomics, bumped once
//! per request or per batch (never per record), and the latency histograms
//! are fixed arrays of atomic buckets (log-linear: 16 sub-buckets per power
//! of two, so a percentile is within about 6 % of the true value).
//!
//! Which events count:
//!
//! - `requests`: every attempt of a request the client sends through its
//!   routing layer (a retry is a new request); `retries`: attempts after
//!   the first; `errors`: every failed attempt, by error class;
//!   `in_flight_requests`: attempts sent and not answered yet;
//! - `records_sent`/`bytes_sent`/`batches_sent`: acknowledged producer
//!   batches (bytes: record payload + key); the produce latency is from a
//!   batch's send to its acknowledgement;
//! - `records_received`/`bytes_received`: records a consumer's fetchers got
//!   from the broker (transaction markers and records below the position
//!   excluded); the fetch latency is a CONSUME long poll's round trip, for
//!   replies that carried records (a STREAM pushes batches as they are
//!   appended, with no request per batch: it records none).

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// A client's statistics at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Statistics {
    /// The client's `client_id` option.
    pub client_id: String,
    /// What client this is: `producer`, `consumer`, `admin` or `event_store`.
    pub kind: String,
    /// Records acknowledged by the broker (producer).
    pub records_sent: u64,
    /// Payload plus key bytes of the acknowledged records (producer).
    pub bytes_sent: u64,
    /// Batches acknowledged by the broker (producer).
    pub batches_sent: u64,
    /// Records the fetchers received (consumer).
    pub records_received: u64,
    /// Payload plus key bytes of the received records (consumer).
    pub bytes_received: u64,
    /// Request attempts sent to brokers (each retry counts).
    pub requests: u64,
    /// Request attempts that were retries.
    pub retries: u64,
    /// Failed request attempts, by error class
    /// (`validation`, `authorization`, `routing`, `availability`,
    /// `conflict`, `fencing`, `not_found`, `internal`); classes that never
    /// failed are absent.
    pub errors: BTreeMap<String, u64>,
    /// Request attempts sent and not answered yet (a gauge).
    pub in_flight_requests: u64,
    /// Produce latency: a batch's send to its acknowledgement.
    pub produce_latency: Latency,
    /// Fetch latency: a CONSUME request to the batch it returned.
    pub fetch_latency: Latency,
    /// Per assigned partition lag (consumer; empty for other clients).
    pub partitions: Vec<PartitionLag>,
}

/// Latency percentiles in microseconds (all 0 while `count` is 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Latency {
    /// Samples recorded.
    pub count: u64,
    /// Median.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// The largest sample.
    pub max_us: u64,
}

/// How far a consumer is behind on one partition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PartitionLag {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: u32,
    /// The consumer's position: the offset after the last record it
    /// delivered, else the group's committed offset, else where
    /// `auto_offset_reset` starts it (`None` with `auto_offset_reset=error`
    /// and nothing committed).
    pub position: Option<u64>,
    /// The partition's end offset (LIST_OFFSETS latest).
    pub end_offset: u64,
    /// `end_offset - position` (`None` when the position is unknown).
    pub lag: Option<u64>,
}

impl Statistics {
    /// The snapshot as JSON (the field names above).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }

    /// Failed attempts of one error class (its name, e.g. `not_found`).
    pub fn errors_of(&self, class: &str) -> u64 {
        self.errors.get(class).copied().unwrap_or(0)
    }
}

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// Powers of two covered above the linear range (2^44 µs is ~200 days).
const EXPONENTS: usize = 44;
const BUCKETS: usize = SUB + EXPONENTS * SUB;

/// A lock-free log-linear histogram of microseconds.
struct Histogram {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
    max: AtomicU64,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }

    fn index(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let exp = 63 - v.leading_zeros(); // >= SUB_BITS
        let sub = ((v >> (exp - SUB_BITS)) as usize) & (SUB - 1);
        let i = SUB + (exp - SUB_BITS) as usize * SUB + sub;
        i.min(BUCKETS - 1)
    }

    /// The largest value a bucket holds.
    fn upper(i: usize) -> u64 {
        if i < SUB {
            return i as u64;
        }
        let exp = ((i - SUB) / SUB) as u32 + SUB_BITS;
        let sub = ((i - SUB) % SUB) as u64;
        let base = (SUB as u64 + sub) << (exp - SUB_BITS);
        base + (1u64 << (exp - SUB_BITS)) - 1
    }

    fn record(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.buckets[Self::index(us)].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        self.max.fetch_max(us, Ordering::Relaxed);
    }

    fn snapshot(&self) -> Latency {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        let count: u64 = counts.iter().sum();
        let max = self.max.load(Ordering::Relaxed);
        if count == 0 {
            return Latency::default();
        }
        let at = |q: f64| -> u64 {
            let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
            let mut seen = 0;
            for (i, c) in counts.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return Self::upper(i).min(max);
                }
            }
            max
        };
        Latency {
            count,
            p50_us: at(0.50),
            p99_us: at(0.99),
            p999_us: at(0.999),
            max_us: max,
        }
    }
}

/// The counters a client updates as it works (see the module docs).
/// Every method is lock-free.
pub struct StatsRecorder {
    records_sent: AtomicU64,
    bytes_sent: AtomicU64,
    batches_sent: AtomicU64,
    records_received: AtomicU64,
    bytes_received: AtomicU64,
    requests: AtomicU64,
    retries: AtomicU64,
    /// Indexed by the error class id (1..=8); 0 is unused.
    errors: [AtomicU64; 9],
    in_flight: AtomicI64,
    produce_latency: Histogram,
    fetch_latency: Histogram,
}

impl Default for StatsRecorder {
    fn default() -> Self {
        StatsRecorder {
            records_sent: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            batches_sent: AtomicU64::new(0),
            records_received: AtomicU64::new(0),
            bytes_received: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            errors: std::array::from_fn(|_| AtomicU64::new(0)),
            in_flight: AtomicI64::new(0),
            produce_latency: Histogram::new(),
            fetch_latency: Histogram::new(),
        }
    }
}

impl std::fmt::Debug for StatsRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsRecorder").finish_non_exhaustive()
    }
}

/// Decrements the in-flight gauge when the attempt ends (even if its
/// future is dropped).
pub struct InFlight<'a>(&'a StatsRecorder);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl StatsRecorder {
    /// A request attempt starts (a retry when `retry`); the gauge counts it
    /// until the returned guard is dropped.
    pub fn request_started(&self, retry: bool) -> InFlight<'_> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if retry {
            self.retries.fetch_add(1, Ordering::Relaxed);
        }
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self)
    }

    /// Counts a failure of `class`.
    pub fn error(&self, class: crate::ErrorClass) {
        let i = (class.id() as usize).min(self.errors.len() - 1);
        self.errors[i].fetch_add(1, Ordering::Relaxed);
    }

    /// A producer batch of `records` records and `bytes` payload+key bytes
    /// was acknowledged `latency` after it was sent.
    pub fn batch_acknowledged(&self, records: u64, bytes: u64, latency: Duration) {
        self.records_sent.fetch_add(records, Ordering::Relaxed);
        self.bytes_sent.fetch_add(bytes, Ordering::Relaxed);
        self.batches_sent.fetch_add(1, Ordering::Relaxed);
        self.produce_latency.record(latency);
    }

    /// A fetcher received a batch; counts the records it will deliver (at
    /// or after `position`, transaction markers excluded).
    pub fn batch_fetched(&self, batch: &crate::wire::Batch, position: u64) {
        let (mut records, mut bytes) = (0u64, 0u64);
        for r in &batch.records {
            if r.offset >= position && r.control_batch_type == crate::wire::ControlBatchType::None {
                records += 1;
                bytes += (r.payload.len() + r.key.len()) as u64;
            }
        }
        self.records_received.fetch_add(records, Ordering::Relaxed);
        self.bytes_received.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A fetch request returned records `latency` after it was sent.
    pub fn fetch_latency(&self, latency: Duration) {
        self.fetch_latency.record(latency);
    }

    /// The counters as a snapshot (without partitions).
    pub fn snapshot(&self, client_id: &str, kind: &str) -> Statistics {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let errors = crate::ErrorClass::ALL
            .iter()
            .filter_map(|c| {
                let n = load(&self.errors[(c.id() as usize).min(self.errors.len() - 1)]);
                (n > 0).then(|| (c.name().to_owned(), n))
            })
            .collect();
        Statistics {
            client_id: client_id.to_owned(),
            kind: kind.to_owned(),
            records_sent: load(&self.records_sent),
            bytes_sent: load(&self.bytes_sent),
            batches_sent: load(&self.batches_sent),
            records_received: load(&self.records_received),
            bytes_received: load(&self.bytes_received),
            requests: load(&self.requests),
            retries: load(&self.retries),
            errors,
            in_flight_requests: self.in_flight.load(Ordering::Relaxed).max(0) as u64,
            produce_latency: self.produce_latency.snapshot(),
            fetch_latency: self.fetch_latency.snapshot(),
            partitions: Vec::new(),
        }
    }
}

/// Counts a batch a consumer's fetcher received (see
/// [`StatsRecorder::batch_fetched`]).
pub(crate) fn batch_fetched(
    cluster: &crate::client::Cluster,
    batch: &crate::wire::Batch,
    position: u64,
) {
    cluster.events().stats().batch_fetched(batch, position);
}

/// The record count of an encoded batch (CBV2), read from its header
/// without decoding the records; `None` when it is not a batch.
pub(crate) fn batch_record_count(payload: &[u8]) -> Option<u32> {
    let u32_at = |at: usize| -> Option<u32> {
        payload
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    // magic, version, flags; topic; partition; acks; batch_start, batch_end.
    let mut at = 8usize;
    at = at.checked_add(4)?.checked_add(u32_at(at)? as usize)?;
    at = at.checked_add(4)?;
    at = at.checked_add(4)?.checked_add(u32_at(at)? as usize)?;
    at = at.checked_add(16)?;
    u32_at(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Batch, Record, RecordVersionPolicy};

    #[test]
    fn buckets_cover_values_in_order() {
        let mut last = 0;
        for v in [
            0u64,
            1,
            15,
            16,
            17,
            31,
            32,
            1000,
            123_456,
            10_000_000,
            u64::MAX,
        ] {
            let i = Histogram::index(v);
            assert!(i >= last, "{v}");
            last = i;
            if v < u64::MAX >> 20 {
                assert!(
                    Histogram::upper(i) >= v,
                    "{v} fits under its bucket's bound"
                );
                assert!(
                    Histogram::upper(i) as f64 <= v as f64 * 1.07 + 1.0,
                    "{v}: bound {} within 7 %",
                    Histogram::upper(i)
                );
            }
        }
    }

    #[test]
    fn percentiles_of_known_samples() {
        let h = Histogram::new();
        assert_eq!(h.snapshot(), Latency::default());
        for us in 1..=1000u64 {
            h.record(Duration::from_micros(us));
        }
        let l = h.snapshot();
        assert_eq!(l.count, 1000);
        assert_eq!(l.max_us, 1000);
        assert!((480..=540).contains(&l.p50_us), "{l:?}");
        assert!((980..=1000).contains(&l.p99_us), "{l:?}");
        assert!(l.p999_us <= 1000 && l.p999_us >= l.p99_us, "{l:?}");
    }

    #[test]
    fn errors_are_named_by_class_and_json_has_every_field() {
        let r = StatsRecorder::default();
        r.error(crate::ErrorClass::NotFound);
        r.error(crate::ErrorClass::NotFound);
        {
            let _a = r.request_started(false);
            let _b = r.request_started(true);
            assert_eq!(r.snapshot("c", "producer").in_flight_requests, 2);
        }
        let s = r.snapshot("c", "producer");
        assert_eq!(s.in_flight_requests, 0);
        assert_eq!((s.requests, s.retries), (2, 1));
        assert_eq!(s.errors_of("not_found"), 2);
        assert_eq!(s.errors.len(), 1);
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        for field in [
            "client_id",
            "kind",
            "records_sent",
            "bytes_sent",
            "batches_sent",
            "records_received",
            "bytes_received",
            "requests",
            "retries",
            "errors",
            "in_flight_requests",
            "produce_latency",
            "fetch_latency",
            "partitions",
        ] {
            assert!(json.get(field).is_some(), "{field} missing from {json}");
        }
        assert_eq!(json["errors"]["not_found"], 2);
    }

    #[test]
    fn the_record_count_is_read_from_the_header() {
        for n in [0usize, 1, 3] {
            let batch = Batch {
                topic: "orders".into(),
                partition: 2,
                records: (0..n)
                    .map(|i| Record {
                        topic: "orders".into(),
                        partition: 2,
                        payload: format!("p{i}").into(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            let bytes = batch.to_bytes(RecordVersionPolicy::Minimal).unwrap();
            assert_eq!(batch_record_count(&bytes), Some(n as u32));
        }
        assert_eq!(batch_record_count(b"OK"), None);
    }
}
