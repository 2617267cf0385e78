//! The packed record view: records of one poll in one buffer, for bindings
//! where a call per record field is expensive (JNI, cgo).
//!
//! Layout, all integers little-endian; a length of `-1` says the field is
//! absent (a key the record does not have is not an empty key):
//!
//! ```text
//! u32 count
//! count times:
//!   u32 topic_len, topic (UTF-8)
//!   u32 partition
//!   u64 offset
//!   i64 timestamp           milliseconds since the epoch, 0 when unknown
//!   i32 key_len, key        -1: no key
//!   u32 value_len, value
//!   i32 metadata_len, metadata (UTF-8)   -1: none
//!   i32 event_type_len      -1: not an event; else:
//!     event_type (UTF-8), u32 schema_version, u64 aggregate_version,
//!     i32 event_id_len, event_id (UTF-8)  -1: no event id
//! ```
//!
//! Java reads it with a little-endian `ByteBuffer` (`RecordView.java`),
//! Go with `encoding/binary`.

use cursus::{ConsumerRecord, Error, Result};

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A length-prefixed field; `None` is written as length -1.
fn put_opt(out: &mut Vec<u8>, field: Option<&[u8]>) {
    match field {
        Some(b) => {
            put_u32(out, b.len() as u32);
            out.extend_from_slice(b);
        }
        None => out.extend_from_slice(&(-1i32).to_le_bytes()),
    }
}

fn packed_size(r: &ConsumerRecord) -> usize {
    let event = r.event.as_ref().map_or(0, |e| {
        16 + e.event_type.len() + e.event_id.as_ref().map_or(0, String::len)
    });
    48 + r.topic.len()
        + r.key.as_ref().map_or(0, |k| k.len())
        + r.payload.len()
        + r.metadata.as_ref().map_or(0, String::len)
        + event
}

/// Packs `records` (fails only past the 2 GiB a Java array can hold).
pub fn pack(records: &[ConsumerRecord]) -> Result<Vec<u8>> {
    let size: usize = 4 + records.iter().map(packed_size).sum::<usize>();
    if size > i32::MAX as usize {
        return Err(Error::internal(
            "one poll's records exceed 2 GiB; lower max_poll_records",
        ));
    }
    let mut out = Vec::with_capacity(size);
    put_u32(&mut out, records.len() as u32);
    for r in records {
        put_opt(&mut out, Some(r.topic.as_bytes()));
        put_u32(&mut out, r.partition);
        out.extend_from_slice(&r.offset.to_le_bytes());
        out.extend_from_slice(&r.timestamp.to_le_bytes());
        put_opt(&mut out, r.key.as_deref());
        put_opt(&mut out, Some(&r.payload));
        put_opt(&mut out, r.metadata.as_deref().map(str::as_bytes));
        match &r.event {
            None => put_opt(&mut out, None),
            Some(e) => {
                put_opt(&mut out, Some(e.event_type.as_bytes()));
                put_u32(&mut out, e.schema_version);
                out.extend_from_slice(&e.aggregate_version.to_le_bytes());
                put_opt(&mut out, e.event_id.as_deref().map(str::as_bytes));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_as_documented() {
        let r = ConsumerRecord {
            topic: "t".into(),
            partition: 2,
            offset: 7,
            key: Some(bytes::Bytes::from_static(b"k")),
            payload: bytes::Bytes::from_static(b"vv"),
            timestamp: -1,
            metadata: None,
            event: None,
        };
        let b = pack(std::slice::from_ref(&r)).unwrap();
        let mut expected = vec![1, 0, 0, 0, 1, 0, 0, 0, b't', 2, 0, 0, 0];
        expected.extend_from_slice(&7u64.to_le_bytes());
        expected.extend_from_slice(&(-1i64).to_le_bytes());
        expected.extend_from_slice(&[1, 0, 0, 0, b'k', 2, 0, 0, 0, b'v', b'v']);
        expected.extend_from_slice(&[0xff; 8]); // no metadata, not an event
        assert_eq!(b, expected);
        assert_eq!(pack(&[]).unwrap(), vec![0, 0, 0, 0]);

        // No key is -1, an event carries its fields.
        let event = ConsumerRecord {
            key: None,
            payload: bytes::Bytes::new(),
            metadata: Some("m".into()),
            event: Some(cursus::RecordEvent {
                event_type: "E".into(),
                schema_version: 3,
                aggregate_version: 9,
                event_id: Some("id".into()),
            }),
            ..r
        };
        let b = pack(&[event]).unwrap();
        let mut expected = vec![1, 0, 0, 0, 1, 0, 0, 0, b't', 2, 0, 0, 0];
        expected.extend_from_slice(&7u64.to_le_bytes());
        expected.extend_from_slice(&(-1i64).to_le_bytes());
        expected.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        expected.extend_from_slice(&[1, 0, 0, 0, b'm', 1, 0, 0, 0, b'E', 3, 0, 0, 0]);
        expected.extend_from_slice(&9u64.to_le_bytes());
        expected.extend_from_slice(&[2, 0, 0, 0, b'i', b'd']);
        assert_eq!(b, expected);
    }
}
