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

use crate::api::{partition_arg, NO_TIMESTAMP};
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

/// Unpacks a batch of records of `topic` (layout in the module docs),
/// applying the batch rule. A malformed buffer (truncated, trailing bytes)
/// is an `invalid_argument` error naming the byte where it went wrong.
pub fn unpack(topic: &str, packed: &[u8]) -> Result<Vec<ProducerRecord>> {
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
        records.push(ProducerRecord {
            topic: topic.to_owned(),
            partition: partition_arg(partition),
            key,
            payload,
            timestamp: (timestamp != NO_TIMESTAMP).then_some(timestamp),
            ..Default::default()
        });
    }
    if r.at != r.buf.len() {
        return Err(Error::invalid_argument(format!(
            "packed records: {} bytes after the {count} records",
            r.buf.len() - r.at
        )));
    }
    Ok(records)
}

/// Packs records (the inverse of [`unpack`]; for tests and Rust callers).
pub fn pack(records: &[ProducerRecord]) -> Vec<u8> {
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
