//! Property: any sequence of append batches reads back identically, in any
//! page size, before and after reopening, and survives retention as a suffix.

use bytes::Bytes;
use cursus_broker::storage::{LogConfig, PartitionLog, StoredRecord};
use proptest::prelude::*;

type Batch = Vec<(i64, Vec<u8>)>;

fn batches() -> impl Strategy<Value = Vec<Batch>> {
    let entry = (any::<i64>(), prop::collection::vec(any::<u8>(), 0..200));
    prop::collection::vec(prop::collection::vec(entry, 1..6), 1..25)
}

fn read_paged(
    log: &PartitionLog,
    from: u64,
    max_records: usize,
    max_bytes: usize,
) -> Vec<StoredRecord> {
    let mut out = Vec::new();
    let mut next = from;
    loop {
        let page = log.read(next, max_records, max_bytes).unwrap();
        if page.is_empty() {
            return out;
        }
        assert!(page.len() <= max_records);
        let bytes: usize = page.iter().map(|r| r.data.len()).sum();
        assert!(
            page.len() == 1 || bytes <= max_bytes,
            "max_bytes is only exceeded by a single record"
        );
        next = page.last().unwrap().offset + 1;
        out.extend(page);
    }
}

fn check(records: &[StoredRecord], expected: &[(i64, Vec<u8>)], from: u64) {
    assert_eq!(records.len(), expected.len() - from as usize);
    for (r, i) in records.iter().zip(from..) {
        assert_eq!(r.offset, i);
        assert_eq!(r.timestamp, expected[i as usize].0);
        assert_eq!(&r.data[..], &expected[i as usize].1[..]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn appended_batches_read_back_identically(
        batches in batches(),
        segment_bytes in 48u64..2048,
        index_interval_bytes in 1u32..512,
        max_records in 1usize..40,
        max_bytes in 0usize..1500,
        verify in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = LogConfig {
            segment_bytes,
            index_interval_bytes,
            verify_sealed_segments: verify,
            ..LogConfig::default()
        };
        let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
        let mut expected: Vec<(i64, Vec<u8>)> = Vec::new();
        for batch in &batches {
            let entries: Vec<(i64, Bytes)> =
                batch.iter().map(|(ts, d)| (*ts, Bytes::from(d.clone()))).collect();
            let info = log.append(&entries).unwrap();
            prop_assert_eq!(info.base_offset, expected.len() as u64);
            prop_assert_eq!(info.last_offset, (expected.len() + batch.len()) as u64 - 1);
            expected.extend(batch.iter().cloned());
        }
        log.flush_if_dirty().unwrap();
        prop_assert_eq!(log.durable_offset(), expected.len() as u64);

        check(&read_paged(&log, 0, max_records, max_bytes), &expected, 0);
        let middle = expected.len() as u64 / 2;
        check(&read_paged(&log, middle, max_records, max_bytes), &expected, middle);
        drop(log);

        let log = PartitionLog::open(dir.path(), cfg).unwrap();
        prop_assert_eq!(log.log_end_offset(), expected.len() as u64);
        prop_assert_eq!(log.durable_offset(), expected.len() as u64);
        check(&read_paged(&log, 0, usize::MAX, usize::MAX), &expected, 0);

        log.enforce_retention(Some(segment_bytes), None, 0).unwrap();
        let earliest = log.earliest_offset();
        check(&read_paged(&log, earliest, max_records, max_bytes), &expected, earliest);
    }
}
