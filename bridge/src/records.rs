//! The packed record view: records of one poll in one buffer, for bindings
//! where a call per record field is expensive (JNI, cgo).
//!
//! Layout, all integers little-endian:
//!
//! ```text
//! u32 count
//! count times:
//!   u32 topic_len, topic (UTF-8)
//!   u32 partition
//!   u64 offset
//!   i64 timestamp         milliseconds since the epoch, 0 when unknown
//!   u32 key_len, key      (0 for no key)
//!   u32 value_len, value
//! ```
//!
//! Java reads it with a little-endian `ByteBuffer` (`RecordView.java`),
//! Go with `encoding/binary`.

use cursus::{ConsumerRecord, Error, Result};

/// Packs `records` (fails only past the 4 GiB a length can say).
pub fn pack(records: &[ConsumerRecord]) -> Result<Vec<u8>> {
    let size: usize = 4 + records
        .iter()
        .map(|r| 32 + r.topic.len() + r.key.len() + r.payload.len())
        .sum::<usize>();
    if size > i32::MAX as usize {
        return Err(Error::internal(
            "one poll's records exceed 2 GiB; lower max_poll_records",
        ));
    }
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    for r in records {
        out.extend_from_slice(&(r.topic.len() as u32).to_le_bytes());
        out.extend_from_slice(r.topic.as_bytes());
        out.extend_from_slice(&r.partition.to_le_bytes());
        out.extend_from_slice(&r.offset.to_le_bytes());
        out.extend_from_slice(&r.timestamp.to_le_bytes());
        out.extend_from_slice(&(r.key.len() as u32).to_le_bytes());
        out.extend_from_slice(&r.key);
        out.extend_from_slice(&(r.payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&r.payload);
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
            key: bytes::Bytes::from_static(b"k"),
            payload: bytes::Bytes::from_static(b"vv"),
            timestamp: -1,
        };
        let b = pack(&[r]).unwrap();
        let mut expected = vec![1, 0, 0, 0, 1, 0, 0, 0, b't', 2, 0, 0, 0];
        expected.extend_from_slice(&7u64.to_le_bytes());
        expected.extend_from_slice(&(-1i64).to_le_bytes());
        expected.extend_from_slice(&[1, 0, 0, 0, b'k', 2, 0, 0, 0, b'v', b'v']);
        assert_eq!(b, expected);
        assert_eq!(pack(&[]).unwrap(), vec![0, 0, 0, 0]);
    }
}
