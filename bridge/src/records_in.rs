//! The packed batch of records to send: many records of one topic in one
//! buffer, so that a batch send is one FFI crossing (C, cgo, JNI), and the
//! packed delivery reports that come back (one callback per batch).
//!
//! **The batch rule**, the same in every language: a batch send is records
//! of ONE topic (the spec's batch is per topic, and a batch's delivery
//! reports name one topic); each record has its own partition (or lets the
//! partitioner choose), key and timestamp, and the engine routes each one.
//! A record naming another topic fails the whole call before anything is
//! sent, with [`one_topic`]'s error: `invalid_argument` (class
//! `validation`), "a batch has one topic: record I is for "T", the batch
//! for "B"". The parser below applies it (C, C++, Go, Java); Python names
//! the topic once, so its batches always keep it.
//!
//! Records in, all integers little-endian (the batch's topic is a separate
//! argument of `producer_send_batch`):
//!
//! ```text
//! u32 count
//! count times:
//!   i32 topic_len, topic    -1: the batch's topic; else it must be that topic
//!   i32 partition           -1 (any negative): the partitioner chooses
//!   i64 timestamp           milliseconds since the epoch; i64::MIN: the send time
//!   i32 key_len, key        -1: no key (not the same as an empty key)
//!   u32 value_len, value
//! ```
//!
//! **The traced layout** ([`Layout::Traced`]), which
//! `producer_send_batch_traced` takes: every record as above, followed by
//! its metadata and W3C trace context, the three fields that
//! `producer_send_traced` takes for one record:
//!
//! ```text
//!   i32 metadata_len, metadata        -1: none; UTF-8 (usually a JSON object)
//!   i32 traceparent_len, traceparent  -1: no trace context
//!   i32 tracestate_len, tracestate    -1 (or 0): none
//! ```
//!
//! The engine writes the context into the record's metadata exactly as for
//! a single traced send (docs/observability.md, "Trace context in
//! records"). A malformed context, or a `tracestate` without a
//! `traceparent`, fails the whole call before anything is sent with
//! `invalid_argument`, code `invalid_trace_context`, its field `record`
//! naming the record. The plain layout (`producer_send_batch`) stays as it
//! is, byte for byte: the layout is chosen by the function, never guessed
//! from the bytes.
//!
//! Delivery reports out (`delivery_batch_packed`), 24 bytes per record in
//! the order the records were packed:
//!
//! ```text
//! u32 count
//! count times:
//!   i32 status              0: delivered; else the record's status (read its
//!                           error with `delivery_batch_check`)
//!   i32 partition           -1 when it failed
//!   i64 offset              -1 when it failed, or with acks=0
//!   i64 timestamp           0 when it failed
//! ```
//!
//! The whole input buffer is copied once; every record's key and value are
//! slices of that copy (no allocation per record).

use crate::api::{partition_arg, with_trace_context, NO_TIMESTAMP};
use crate::error::Status;
use bytes::Bytes;
use cursus::{Error, ProducerRecord, RecordMetadata, Result};

/// Size of one delivery report in the packed reports.
pub const REPORT_SIZE: usize = 24;

struct Reader {
    buf: Bytes,
    at: usize,
}

impl Reader {
    fn take(&mut self, n: usize, what: &str) -> Result<Bytes> {
        if self.buf.len() - self.at < n {
            return Err(Error::invalid_argument(format!(
                "packed records end inside {what} at byte {}",
                self.at
            )));
        }
        let out = self.buf.slice(self.at..self.at + n);
        self.at += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let b = self.take(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(&b);
        Ok(out)
    }

    fn i32(&mut self, what: &str) -> Result<i32> {
        self.array(what).map(i32::from_le_bytes)
    }

    fn i64(&mut self, what: &str) -> Result<i64> {
        self.array(what).map(i64::from_le_bytes)
    }

    /// An optional UTF-8 string: `i32 len` (-1: none), then its bytes.
    fn text(&mut self, index: usize, what: &str) -> Result<Option<String>> {
        let at = self.at;
        match self.i32(what)? {
            -1 => Ok(None),
            n if n < 0 => Err(Error::invalid_argument(format!(
                "packed records: record {index}'s {what} length {n} at byte {at} (only -1 means none)"
            ))),
            n => {
                let start = self.at;
                let bytes = self.take(n as usize, what)?;
                String::from_utf8(bytes.to_vec()).map(Some).map_err(|e| {
                    Error::invalid_argument(format!(
                        "packed records: record {index}'s {what} is not UTF-8 (byte {})",
                        start + e.utf8_error().valid_up_to()
                    ))
                })
            }
        }
    }
}

/// Which packed layout a buffer has (module docs): chosen by the bridge
/// function the caller calls, never guessed from the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The records without metadata or trace context (`producer_send_batch`).
    Plain,
    /// Each record followed by its metadata, traceparent and tracestate
    /// (`producer_send_batch_traced`).
    Traced,
}

/// The batch rule (module docs): record `index`, for `record_topic`, may
/// be in a batch of `batch_topic` only when the two are the same topic.
pub fn one_topic(batch_topic: &str, index: usize, record_topic: &str) -> Result<()> {
    if record_topic == batch_topic {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "a batch has one topic: record {index} is for \"{record_topic}\", the batch for \"{batch_topic}\""
    )))
}

/// Unpacks a batch of records of `topic` in the plain layout (module
/// docs), applying the batch rule. A malformed buffer (truncated, trailing
/// bytes) is an `invalid_argument` error naming the byte where it went
/// wrong.
pub fn unpack(topic: &str, packed: &[u8]) -> Result<Vec<ProducerRecord>> {
    unpack_layout(topic, packed, Layout::Plain)
}

/// [`unpack`] for either layout; the traced one's contexts are checked by
/// the engine's rules (`invalid_trace_context`, field `record`).
pub fn unpack_layout(topic: &str, packed: &[u8], layout: Layout) -> Result<Vec<ProducerRecord>> {
    let mut r = Reader {
        buf: Bytes::copy_from_slice(packed),
        at: 0,
    };
    let count = r.i32("the record count")? as u32 as usize;
    // Each record takes at least 24 bytes: a bogus count cannot reserve
    // more than the buffer could hold.
    let mut records = Vec::with_capacity(count.min(packed.len() / 24));
    for index in 0..count {
        match r.i32("a topic length")? {
            -1 => {}
            n if n < 0 => {
                return Err(Error::invalid_argument(format!(
                    "packed records: topic length {n} (only -1 means the batch's topic)"
                )))
            }
            n => {
                let named = r.take(n as usize, "a topic")?;
                let named = std::str::from_utf8(&named).map_err(|_| {
                    Error::invalid_argument(format!(
                        "packed records: record {index}'s topic is not UTF-8"
                    ))
                })?;
                one_topic(topic, index, named)?;
            }
        }
        let partition = r.i32("a partition")?;
        let timestamp = r.i64("a timestamp")?;
        let key_len = r.i32("a key length")?;
        let key = match key_len {
            -1 => None,
            n if n < 0 => {
                return Err(Error::invalid_argument(format!(
                    "packed records: key length {n} (only -1 means no key)"
                )))
            }
            n => Some(r.take(n as usize, "a key")?),
        };
        let value_len = r.i32("a value length")? as u32 as usize;
        let payload = r.take(value_len, "a value")?;
        let mut record = ProducerRecord {
            topic: topic.to_owned(),
            partition: partition_arg(partition),
            key,
            payload,
            timestamp: (timestamp != NO_TIMESTAMP).then_some(timestamp),
            ..Default::default()
        };
        if layout == Layout::Traced {
            let metadata = r.text(index, "metadata")?;
            let traceparent = r.text(index, "traceparent")?;
            let tracestate = r.text(index, "tracestate")?;
            record = with_trace_context(
                record,
                metadata.as_deref(),
                traceparent.as_deref(),
                tracestate.as_deref(),
            )
            .map_err(|e| e.with_field("record", index.to_string()))?;
        }
        records.push(record);
    }
    if r.at != r.buf.len() {
        return Err(Error::invalid_argument(format!(
            "packed records: {} bytes after the {count} records",
            r.buf.len() - r.at
        )));
    }
    Ok(records)
}

/// Packs records in the plain layout (the inverse of [`unpack`]; for tests
/// and Rust callers): their metadata and trace contexts are left out.
pub fn pack(records: &[ProducerRecord]) -> Vec<u8> {
    pack_layout(records, Layout::Plain)
}

/// Packs records in `layout` (the inverse of [`unpack_layout`]).
pub fn pack_layout(records: &[ProducerRecord], layout: Layout) -> Vec<u8> {
    // -1 or the length, then the bytes.
    fn text(out: &mut Vec<u8>, s: Option<&str>) {
        match s {
            Some(s) => {
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            None => out.extend_from_slice(&(-1i32).to_le_bytes()),
        }
    }
    let mut out = Vec::new();
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    for r in records {
        out.extend_from_slice(&(r.topic.len() as u32).to_le_bytes());
        out.extend_from_slice(r.topic.as_bytes());
        let partition = r.partition.map_or(-1, |p| p as i32);
        out.extend_from_slice(&partition.to_le_bytes());
        out.extend_from_slice(&r.timestamp.unwrap_or(NO_TIMESTAMP).to_le_bytes());
        match &r.key {
            Some(k) => {
                out.extend_from_slice(&(k.len() as u32).to_le_bytes());
                out.extend_from_slice(k);
            }
            None => out.extend_from_slice(&(-1i32).to_le_bytes()),
        }
        out.extend_from_slice(&(r.payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&r.payload);
        if layout == Layout::Traced {
            text(
                &mut out,
                (!r.metadata.is_empty()).then_some(r.metadata.as_str()),
            );
            let context = r.trace_context.as_ref();
            text(&mut out, context.map(|c| c.traceparent()));
            text(&mut out, context.and_then(|c| c.tracestate()));
        }
    }
    out
}

/// Packs delivery reports (layout in the module docs).
pub fn pack_reports(outcomes: &[Result<RecordMetadata>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + outcomes.len() * REPORT_SIZE);
    out.extend_from_slice(&(outcomes.len() as u32).to_le_bytes());
    for o in outcomes {
        let (status, partition, offset, timestamp) = match o {
            Ok(m) => (
                Status::Ok,
                m.partition as i32,
                m.offset.map_or(-1, |o| o as i64),
                m.timestamp,
            ),
            Err(e) => (Status::of(e), -1, -1, 0),
        };
        out.extend_from_slice(&(status as i32).to_le_bytes());
        out.extend_from_slice(&partition.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&timestamp.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_as_documented() {
        let mut b = vec![2, 0, 0, 0];
        b.extend_from_slice(&[1, 0, 0, 0, b't']);
        b.extend_from_slice(&1i32.to_le_bytes());
        b.extend_from_slice(&7i64.to_le_bytes());
        b.extend_from_slice(&[1, 0, 0, 0, b'k', 2, 0, 0, 0, b'v', b'v']);
        b.extend_from_slice(&[1, 0, 0, 0, b't']);
        b.extend_from_slice(&(-1i32).to_le_bytes());
        b.extend_from_slice(&i64::MIN.to_le_bytes());
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let records = unpack("t", &b).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].topic, "t");
        assert_eq!(records[0].partition, Some(1));
        assert_eq!(records[0].timestamp, Some(7));
        assert_eq!(records[0].key.as_deref(), Some(&b"k"[..]));
        assert_eq!(&records[0].payload[..], b"vv");
        assert_eq!(records[1].partition, None);
        assert_eq!(records[1].timestamp, None);
        assert_eq!(records[1].key, None);
        assert!(records[1].payload.is_empty());
        assert_eq!(pack(&records), b);
        assert!(unpack("t", &[0, 0, 0, 0]).unwrap().is_empty());
        // -1: the batch's topic.
        let mut short = vec![1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        short.extend_from_slice(&b[37..]); // record 1 after its topic
        let one = unpack("t", &short).unwrap();
        assert_eq!((one[0].topic.as_str(), one[0].partition), ("t", None));
    }

    #[test]
    fn a_batch_has_one_topic() {
        let mut b = vec![2, 0, 0, 0];
        for topic in ["t", "u"] {
            b.extend_from_slice(&[1, 0, 0, 0, topic.as_bytes()[0]]);
            b.extend_from_slice(&[0xff; 4]);
            b.extend_from_slice(&i64::MIN.to_le_bytes());
            b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        }
        let e = unpack("t", &b).unwrap_err();
        assert_eq!(e.kind(), cursus::ErrorKind::InvalidArgument);
        assert_eq!(e.class(), cursus::ErrorClass::Validation);
        assert_eq!(
            e.message(),
            "a batch has one topic: record 1 is for \"u\", the batch for \"t\""
        );
    }

    #[test]
    fn malformed_buffers_are_refused() {
        for bad in [&[][..], &[1, 0, 0, 0][..], &[0, 0, 0, 0, 9][..]] {
            let e = unpack("t", bad).unwrap_err();
            assert_eq!(e.kind(), cursus::ErrorKind::InvalidArgument, "{bad:?}");
        }
        let mut b = vec![1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
        b.extend_from_slice(&[0; 12]);
        b.extend_from_slice(&(-2i32).to_le_bytes());
        assert!(unpack("t", &b).unwrap_err().to_string().contains("-2"));
        // A huge count does not reserve memory it cannot fill.
        assert!(unpack("t", &[0xff, 0xff, 0xff, 0xff]).is_err());
    }

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /// One keyless record of "t" in the traced layout, with these fields.
    fn traced_record(
        metadata: Option<&[u8]>,
        parent: Option<&str>,
        state: Option<&str>,
    ) -> Vec<u8> {
        let mut b = vec![0xff; 4];
        b.extend_from_slice(&(-1i32).to_le_bytes());
        b.extend_from_slice(&i64::MIN.to_le_bytes());
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, b'v']);
        for field in [
            metadata,
            parent.map(str::as_bytes),
            state.map(str::as_bytes),
        ] {
            match field {
                Some(f) => {
                    b.extend_from_slice(&(f.len() as u32).to_le_bytes());
                    b.extend_from_slice(f);
                }
                None => b.extend_from_slice(&(-1i32).to_le_bytes()),
            }
        }
        b
    }

    fn batch(records: &[Vec<u8>]) -> Vec<u8> {
        let mut b = (records.len() as u32).to_le_bytes().to_vec();
        records.iter().for_each(|r| b.extend_from_slice(r));
        b
    }

    #[test]
    fn the_traced_layout_carries_metadata_and_context() {
        let b = batch(&[
            traced_record(Some(br#"{"tenant":"acme"}"#), Some(PARENT), Some("k=v")),
            traced_record(None, None, None),
            traced_record(Some(b"text"), None, None),
            traced_record(None, Some(PARENT), Some("")),
        ]);
        let records = unpack_layout("t", &b, Layout::Traced).unwrap();
        let context = cursus::TraceContext::new(PARENT, Some("k=v")).unwrap();
        assert_eq!(records[0].metadata, r#"{"tenant":"acme"}"#);
        assert_eq!(records[0].trace_context, Some(context));
        assert_eq!(&records[0].payload[..], b"v");
        assert_eq!(
            (records[1].metadata.as_str(), &records[1].trace_context),
            ("", &None)
        );
        assert_eq!(
            (records[2].metadata.as_str(), &records[2].trace_context),
            ("text", &None)
        );
        // An empty tracestate is none, as for a single traced send.
        let bare = records[3].trace_context.as_ref().unwrap();
        assert_eq!((bare.traceparent(), bare.tracestate()), (PARENT, None));
        // Packing writes an empty tracestate as -1 (and each record's
        // topic by name).
        let again = pack_layout(&records, Layout::Traced);
        assert_eq!(again[again.len() - 4..], (-1i32).to_le_bytes());
        assert_eq!(unpack_layout("t", &again, Layout::Traced).unwrap(), records);
        // The plain layout of the same records leaves the three fields out.
        assert_eq!(unpack("t", &pack(&records)).unwrap()[0].metadata, "");
    }

    #[test]
    fn a_bad_context_in_a_traced_batch_is_the_engines_error() {
        for (parent, state) in [
            (Some("00-garbage"), None),
            (Some(PARENT), Some("a=\u{7}")),
            (None, Some("k=v")),
        ] {
            let b = batch(&[
                traced_record(None, None, None),
                traced_record(None, parent, state),
            ]);
            let e = unpack_layout("t", &b, Layout::Traced).unwrap_err();
            assert_eq!(
                e.kind(),
                cursus::ErrorKind::InvalidArgument,
                "{parent:?} {state:?}"
            );
            assert_eq!(e.code(), "invalid_trace_context");
            assert_eq!(e.field("record"), Some("1"));
        }
    }

    #[test]
    fn malformed_traced_buffers_name_the_byte() {
        // The plain layout read as traced ends inside the metadata length.
        let plain = batch(&[traced_record(None, None, None)[..25].to_vec()]);
        let e = unpack_layout("t", &plain, Layout::Traced).unwrap_err();
        assert_eq!(e.message(), "packed records end inside metadata at byte 29");
        // A negative length other than -1.
        let mut bad = batch(&[traced_record(None, None, None)]);
        bad[29..33].copy_from_slice(&(-3i32).to_le_bytes());
        let e = unpack_layout("t", &bad, Layout::Traced).unwrap_err();
        assert_eq!(e.kind(), cursus::ErrorKind::InvalidArgument);
        assert!(
            e.message().contains("metadata length -3 at byte 29"),
            "{}",
            e.message()
        );
        // Metadata that is not UTF-8.
        let b = batch(&[traced_record(Some(b"ab\xff"), None, None)]);
        let e = unpack_layout("t", &b, Layout::Traced).unwrap_err();
        assert_eq!(
            e.message(),
            "packed records: record 0's metadata is not UTF-8 (byte 35)"
        );
        // Trailing bytes.
        let mut b = batch(&[traced_record(None, None, None)]);
        b.push(0);
        assert!(unpack_layout("t", &b, Layout::Traced).is_err());
    }

    proptest::proptest! {
        /// Whatever records are packed, unpacking gives them back in
        /// either layout.
        #[test]
        fn pack_and_unpack_round_trip(
            records in proptest::collection::vec(
                (
                    proptest::option::of(0u32..8),
                    proptest::option::of(proptest::prelude::any::<i64>()),
                    proptest::option::of(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..8)),
                    proptest::collection::vec(proptest::prelude::any::<u8>(), 0..16),
                    "\\PC{0,12}",
                    proptest::option::of("[a-z=,]{0,8}"),
                    proptest::prelude::any::<bool>(),
                ),
                0..6,
            ),
        ) {
            let records: Vec<ProducerRecord> = records
                .into_iter()
                .map(|(partition, timestamp, key, value, metadata, state, traced)| ProducerRecord {
                    topic: "t".into(),
                    partition,
                    key: key.map(Bytes::from),
                    payload: Bytes::from(value),
                    timestamp: timestamp.filter(|&t| t != NO_TIMESTAMP),
                    metadata,
                    trace_context: traced
                        .then(|| cursus::TraceContext::new(PARENT, state.as_deref()).unwrap()),
                })
                .collect();
            let traced = unpack_layout("t", &pack_layout(&records, Layout::Traced), Layout::Traced).unwrap();
            proptest::prop_assert_eq!(&traced, &records);
            let plain = unpack("t", &pack(&records)).unwrap();
            for (p, r) in plain.iter().zip(&records) {
                proptest::prop_assert_eq!((&p.key, &p.payload, p.partition), (&r.key, &r.payload, r.partition));
            }
        }

        /// Arbitrary bytes are refused or unpacked, never a panic.
        #[test]
        fn arbitrary_buffers_never_panic(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..96)) {
            let _ = unpack_layout("t", &b, Layout::Traced);
            let _ = unpack("t", &b);
        }
    }

    #[test]
    fn reports_are_24_bytes_each() {
        let ok = Ok(RecordMetadata {
            topic: "t".into(),
            partition: 3,
            offset: Some(9),
            timestamp: 5,
        });
        let bad = Err(Error::invalid_argument("no"));
        let b = pack_reports(&[ok, bad]);
        assert_eq!(b.len(), 4 + 2 * REPORT_SIZE);
        let mut expected = vec![2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0];
        expected.extend_from_slice(&9i64.to_le_bytes());
        expected.extend_from_slice(&5i64.to_le_bytes());
        expected.extend_from_slice(&(Status::InvalidArgument as i32).to_le_bytes());
        expected.extend_from_slice(&(-1i32).to_le_bytes());
        expected.extend_from_slice(&(-1i64).to_le_bytes());
        expected.extend_from_slice(&0i64.to_le_bytes());
        assert_eq!(b, expected);
    }
}
