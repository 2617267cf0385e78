//! Partition log: append/read, segment rolls, recovery, index rebuild,
//! retention and truncation.

use std::fs;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use cursus_broker::storage::{LogConfig, PartitionLog, StorageError, StoredRecord};

/// Record data of fixed size so entry positions are easy to compute.
const DATA: usize = 16;
/// Encoded size of one entry with `DATA` bytes of data.
const ENTRY: u64 = 24 + DATA as u64;

fn config(segment_bytes: u64, index_interval_bytes: u32) -> LogConfig {
    LogConfig {
        segment_bytes,
        index_interval_bytes,
        ..LogConfig::default()
    }
}

fn data(i: u64) -> Bytes {
    Bytes::from(format!("record-{i:09}"))
}

/// Appends `n` single-entry batches with fixed-size data and timestamp
/// `1000 * offset`, then syncs.
fn fill(log: &PartitionLog, n: u64) {
    for _ in 0..n {
        let next = log.log_end_offset();
        let data = data(next);
        assert_eq!(data.len(), DATA);
        let info = log.append(&[(1000 * next as i64, data)]).unwrap();
        assert_eq!(info.base_offset, next);
        assert_eq!(info.last_offset, next);
    }
    if log.log_end_offset() > 0 {
        log.sync_to(log.log_end_offset() - 1).unwrap();
    }
}

fn read_all(log: &PartitionLog) -> Vec<StoredRecord> {
    log.read(log.earliest_offset(), usize::MAX, usize::MAX)
        .unwrap()
}

fn check_contiguous(records: &[StoredRecord], from: u64, to: u64) {
    let offsets: Vec<u64> = records.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, (from..to).collect::<Vec<_>>());
    for r in records {
        assert_eq!(r.data, data(r.offset));
        assert_eq!(r.timestamp, 1000 * r.offset as i64);
    }
}

fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn flip_byte(path: &Path, position: u64) {
    let mut bytes = fs::read(path).unwrap();
    bytes[position as usize] ^= 0x5a;
    fs::write(path, bytes).unwrap();
}

fn expect_corruption(result: Result<PartitionLog, StorageError>, file: &Path, position: u64) {
    match result {
        Err(StorageError::Corruption {
            path,
            position: p,
            reason,
        }) => {
            assert_eq!(path, file, "reason: {reason}");
            assert_eq!(p, position, "reason: {reason}");
            let msg = StorageError::Corruption {
                path,
                position: p,
                reason,
            }
            .to_string();
            assert!(msg.contains(&file.display().to_string()));
            assert!(msg.contains(&format!("byte {position}")));
        }
        Err(other) => panic!("expected corruption, got {other}"),
        Ok(_) => panic!("expected corruption, open succeeded"),
    }
}

#[test]
fn append_read_round_trip_across_segment_rolls() {
    let dir = tempfile::tempdir().unwrap();
    let log = PartitionLog::open(dir.path(), config(300, 64)).unwrap();
    assert_eq!(log.earliest_offset(), 0);
    assert_eq!(log.log_end_offset(), 0);
    assert_eq!(log.durable_offset(), 0);

    let mut expected = Vec::new();
    for batch in 0..40u64 {
        let entries: Vec<(i64, Bytes)> = (0..(batch % 4 + 1))
            .map(|j| {
                let payload = vec![b'a' + (batch % 26) as u8; (batch * 7 + j * 13) as usize % 90];
                (batch as i64 * 10 + j as i64 - 50, Bytes::from(payload))
            })
            .collect();
        let info = log.append(&entries).unwrap();
        assert_eq!(
            info.base_offset,
            expected.len() as u64,
            "offsets are consecutive"
        );
        assert_eq!(
            info.last_offset,
            info.base_offset + entries.len() as u64 - 1
        );
        expected.extend(entries);
    }
    log.sync_to(expected.len() as u64 - 1).unwrap();
    assert!(
        log.segment_count() > 5,
        "segments rolled: {}",
        log.segment_count()
    );
    assert_eq!(log.log_end_offset(), expected.len() as u64);
    assert_eq!(log.durable_offset(), expected.len() as u64);

    let got = log.read(0, usize::MAX, usize::MAX).unwrap();
    assert_eq!(got.len(), expected.len());
    for (i, (r, (ts, data))) in got.iter().zip(&expected).enumerate() {
        assert_eq!(r.offset, i as u64);
        assert_eq!(r.timestamp, *ts);
        assert_eq!(&r.data, data);
    }
    // every segment file is named by its base offset and has 20 digits
    for p in files_with_ext(dir.path(), "log") {
        let stem = p.file_stem().unwrap().to_str().unwrap();
        assert_eq!(stem.len(), 20);
        stem.parse::<u64>().unwrap();
    }
    // reading from any offset returns the suffix
    for from in [1u64, 17, 55, expected.len() as u64 - 1] {
        let got = log.read(from, usize::MAX, usize::MAX).unwrap();
        assert_eq!(got.first().unwrap().offset, from);
        assert_eq!(got.len() as u64, expected.len() as u64 - from);
    }
}

#[test]
fn read_from_the_middle_via_index() {
    let dir = tempfile::tempdir().unwrap();
    let log = PartitionLog::open(dir.path(), config(1 << 20, 128)).unwrap();
    fill(&log, 1000);
    assert_eq!(log.segment_count(), 1);
    for from in [0u64, 1, 3, 4, 537, 998, 999] {
        let got = log.read(from, 10, usize::MAX).unwrap();
        check_contiguous(&got, from, (from + 10).min(1000));
    }
    assert!(log.read(1000, 10, usize::MAX).unwrap().is_empty());
}

#[test]
fn read_limits() {
    let dir = tempfile::tempdir().unwrap();
    let log = PartitionLog::open(dir.path(), config(200, 32)).unwrap();
    fill(&log, 20);
    assert!(log.read(0, 0, usize::MAX).unwrap().is_empty());
    check_contiguous(&log.read(2, 3, usize::MAX).unwrap(), 2, 5);
    // max_bytes is soft: at least one record
    check_contiguous(&log.read(4, 100, 0).unwrap(), 4, 5);
    check_contiguous(&log.read(4, 100, 1).unwrap(), 4, 5);
    // 2.5 records' worth of bytes -> 2 records
    check_contiguous(&log.read(6, 100, DATA * 5 / 2).unwrap(), 6, 8);
    check_contiguous(&log.read(6, 100, DATA * 3).unwrap(), 6, 9);
    // spans segment boundaries
    check_contiguous(&log.read(3, 100, usize::MAX).unwrap(), 3, 20);
    // at the end: empty; beyond the end: out of range
    assert!(log.read(20, 10, usize::MAX).unwrap().is_empty());
    match log.read(21, 10, usize::MAX) {
        Err(StorageError::OffsetOutOfRange {
            requested,
            earliest,
            latest,
        }) => assert_eq!((requested, earliest, latest), (21, 0, 20)),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn reads_stop_at_the_durable_offset_and_flush_if_dirty() {
    let dir = tempfile::tempdir().unwrap();
    let log = PartitionLog::open(dir.path(), config(1 << 20, 4096)).unwrap();
    for i in 0..5 {
        log.append(&[(1000 * i, data(i as u64))]).unwrap();
    }
    assert_eq!(log.log_end_offset(), 5);
    assert_eq!(log.durable_offset(), 0);
    assert!(log.read(0, 100, usize::MAX).unwrap().is_empty());
    log.sync_to(1).unwrap();
    assert_eq!(
        log.durable_offset(),
        5,
        "one sync covers every earlier append"
    );
    check_contiguous(&log.read(0, 100, usize::MAX).unwrap(), 0, 5);

    log.append(&[(5000, data(5))]).unwrap();
    check_contiguous(&log.read(0, 100, usize::MAX).unwrap(), 0, 5);
    assert!(log.read(5, 100, usize::MAX).unwrap().is_empty());
    let syncs = log.sync_count();
    assert!(log.flush_if_dirty().unwrap());
    assert_eq!(log.sync_count(), syncs + 1);
    assert!(!log.flush_if_dirty().unwrap());
    assert_eq!(log.sync_count(), syncs + 1);
    check_contiguous(&log.read(0, 100, usize::MAX).unwrap(), 0, 6);
    // syncing something already durable costs nothing
    log.sync_to(3).unwrap();
    assert_eq!(log.sync_count(), syncs + 1);
    // cannot sync what was never appended
    assert!(matches!(
        log.sync_to(6),
        Err(StorageError::InvalidArgument(_))
    ));
}

#[test]
fn reopen_restores_leo_and_hwm() {
    let dir = tempfile::tempdir().unwrap();
    {
        let log = PartitionLog::open(dir.path(), config(250, 64)).unwrap();
        fill(&log, 57);
        // an unsynced append is still on disk (page cache) after a clean drop
        log.append(&[(57_000, data(57))]).unwrap();
        assert_eq!(log.durable_offset(), 57);
    }
    let log = PartitionLog::open(dir.path(), config(250, 64)).unwrap();
    assert_eq!(log.log_end_offset(), 58);
    assert_eq!(log.durable_offset(), 58);
    check_contiguous(&read_all(&log), 0, 58);
    let info = log.append(&[(58_000, data(58))]).unwrap();
    assert_eq!(info.base_offset, 58);
    log.sync_to(58).unwrap();
    check_contiguous(&read_all(&log), 0, 59);
}

#[test]
fn torn_tail_is_truncated_on_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let seg;
    let clean_len;
    {
        let log = PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
        fill(&log, 10);
        seg = files_with_ext(dir.path(), "log").pop().unwrap();
        clean_len = fs::metadata(&seg).unwrap().len();
        assert_eq!(clean_len, 10 * ENTRY);
    }
    // 1. a partial entry (the first 30 bytes of a real one) after the data
    let bytes = fs::read(&seg).unwrap();
    let mut torn = bytes.clone();
    torn.extend_from_slice(&bytes[..30]);
    fs::write(&seg, &torn).unwrap();
    {
        let log = PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
        assert_eq!(log.log_end_offset(), 10);
        assert_eq!(log.durable_offset(), 10);
        assert_eq!(fs::metadata(&seg).unwrap().len(), clean_len);
        check_contiguous(&read_all(&log), 0, 10);
    }
    // 2. random garbage and zeros after the data
    let mut garbage = bytes.clone();
    garbage.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1, 2, 3, 4]);
    garbage.extend_from_slice(&[0u8; 100]);
    fs::write(&seg, &garbage).unwrap();
    {
        let log = PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
        assert_eq!(log.log_end_offset(), 10);
        assert_eq!(fs::metadata(&seg).unwrap().len(), clean_len);
    }
    // 3. the last entry cut in half
    fs::write(&seg, &bytes[..(clean_len - ENTRY / 2) as usize]).unwrap();
    {
        let log = PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
        assert_eq!(log.log_end_offset(), 9);
        assert_eq!(log.durable_offset(), 9);
        check_contiguous(&read_all(&log), 0, 9);
        // the log continues where the valid data ends
        assert_eq!(log.append(&[(9000, data(9))]).unwrap().base_offset, 9);
        log.sync_to(9).unwrap();
        check_contiguous(&read_all(&log), 0, 10);
    }
    // 4. a complete, checksum-valid but stale entry (offset 0) at the end
    let mut stale = fs::read(&seg).unwrap();
    stale.extend_from_slice(&bytes[..ENTRY as usize]);
    fs::write(&seg, &stale).unwrap();
    let log = PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
    assert_eq!(log.log_end_offset(), 10);
    check_contiguous(&read_all(&log), 0, 10);
}

#[test]
fn flipped_byte_in_last_entry_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    drop({
        let log = PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
        fill(&log, 10);
        log
    });
    let seg = files_with_ext(dir.path(), "log").pop().unwrap();
    for position in [10 * ENTRY - 2, 9 * ENTRY, 9 * ENTRY + 5, 9 * ENTRY + 10] {
        // checksum, length and offset fields of the last entry, and its data
        let original = fs::read(&seg).unwrap();
        flip_byte(&seg, position);
        let log = PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
        assert_eq!(log.log_end_offset(), 9, "flip at {position}");
        check_contiguous(&read_all(&log), 0, 9);
        drop(log);
        fs::write(&seg, original).unwrap();
    }
}

#[test]
fn flipped_byte_in_a_middle_entry_refuses_to_open() {
    let dir = tempfile::tempdir().unwrap();
    drop({
        let log = PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
        fill(&log, 10);
        log
    });
    let seg = files_with_ext(dir.path(), "log").pop().unwrap();
    let original = fs::read(&seg).unwrap();
    // data byte, checksum byte and high length byte of entry 3
    for position in [3 * ENTRY + 30, 3 * ENTRY + 1, 3 * ENTRY + 5] {
        flip_byte(&seg, position);
        expect_corruption(
            PartitionLog::open(dir.path(), config(1 << 20, 64)),
            &seg,
            3 * ENTRY,
        );
        // the file was not touched
        assert_eq!(fs::metadata(&seg).unwrap().len(), original.len() as u64);
        fs::write(&seg, &original).unwrap();
    }
    PartitionLog::open(dir.path(), config(1 << 20, 64)).unwrap();
}

#[test]
fn corruption_in_a_sealed_segment_refuses_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(4 * ENTRY, 64);
    drop({
        let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
        fill(&log, 10);
        assert_eq!(log.segment_count(), 3);
        log
    });
    let segs = files_with_ext(dir.path(), "log");
    let first = &segs[0];
    let original = fs::read(first).unwrap();
    // the *last* entry of a sealed segment is not a torn tail
    flip_byte(first, 3 * ENTRY + 30);
    expect_corruption(
        PartitionLog::open(dir.path(), cfg.clone()),
        first,
        3 * ENTRY,
    );
    fs::write(first, &original).unwrap();
    // nor is a truncated sealed segment
    fs::write(first, &original[..original.len() - 3]).unwrap();
    expect_corruption(
        PartitionLog::open(dir.path(), cfg.clone()),
        first,
        3 * ENTRY,
    );
    fs::write(first, &original).unwrap();
    check_contiguous(
        &read_all(&PartitionLog::open(dir.path(), cfg).unwrap()),
        0,
        10,
    );
}

#[test]
fn fast_open_detects_sealed_corruption_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = LogConfig {
        verify_sealed_segments: false,
        ..config(4 * ENTRY, 64)
    };
    drop({
        let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
        fill(&log, 10);
        log
    });
    let segs = files_with_ext(dir.path(), "log");
    // damage the first entry of the first sealed segment: the fast path only
    // checks from the last index entry on, so open succeeds ...
    flip_byte(&segs[0], 30);
    let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
    assert_eq!(log.log_end_offset(), 10);
    // ... and the read reports the damage
    match log.read(0, 10, usize::MAX) {
        Err(StorageError::Corruption { path, position, .. }) => {
            assert_eq!(path, segs[0]);
            assert_eq!(position, 0);
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    check_contiguous(&log.read(4, 100, usize::MAX).unwrap(), 4, 10);
    drop(log);
    // damage at the end of a sealed segment is still found on open
    flip_byte(&segs[0], 30);
    flip_byte(&segs[1], 3 * ENTRY + 30);
    assert!(PartitionLog::open(dir.path(), cfg)
        .unwrap_err()
        .is_corruption());
}

#[test]
fn missing_segment_refuses_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(2 * ENTRY, 64);
    drop({
        let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
        fill(&log, 10);
        log
    });
    let segs = files_with_ext(dir.path(), "log");
    assert_eq!(segs.len(), 5);
    fs::remove_file(&segs[2]).unwrap();
    expect_corruption(PartitionLog::open(dir.path(), cfg), &segs[3], 0);
}

#[test]
fn index_files_are_rebuilt_when_missing_or_inconsistent() {
    for verify in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = LogConfig {
            verify_sealed_segments: verify,
            ..config(20 * ENTRY, 2 * ENTRY as u32)
        };
        drop({
            let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
            fill(&log, 70);
            log
        });
        let indexes = files_with_ext(dir.path(), "index");
        // the three sealed segments have an index; the active one keeps its
        // index in memory until it is sealed
        assert_eq!(indexes.len(), 3);
        let originals: Vec<Vec<u8>> = indexes.iter().map(|p| fs::read(p).unwrap()).collect();
        assert!(originals.iter().all(|b| !b.is_empty() && b.len() % 16 == 0));

        fs::remove_file(&indexes[0]).unwrap(); // missing
        fs::write(&indexes[1], b"garbage garbage!").unwrap(); // inconsistent
        let mut short = originals[2].clone(); // stale: last entries lost
        short.truncate(short.len() - 16);
        fs::write(&indexes[2], &short).unwrap();
        fs::write(dir.path().join("00000000000000009999.index"), b"").unwrap(); // orphan

        let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
        for (p, original) in indexes.iter().zip(&originals) {
            assert_eq!(&fs::read(p).unwrap(), original, "{} rebuilt", p.display());
        }
        assert!(!dir.path().join("00000000000000009999.index").exists());
        for from in [0u64, 7, 21, 39, 45, 69] {
            check_contiguous(
                &log.read(from, 5, usize::MAX).unwrap(),
                from,
                (from + 5).min(70),
            );
        }
    }
}

#[test]
fn retention_by_bytes_moves_earliest_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(5 * ENTRY, 64);
    let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
    fill(&log, 23); // segments: 0-4, 5-9, 10-14, 15-19, 20-22 (active)
    assert_eq!(log.segment_count(), 5);
    assert_eq!(log.size_bytes(), 23 * ENTRY);

    let nothing = log.enforce_retention(Some(23 * ENTRY), None, 0).unwrap();
    assert_eq!(nothing.deleted_segments, 0);
    assert_eq!(nothing.earliest_offset, 0);

    let outcome = log.enforce_retention(Some(10 * ENTRY), None, 0).unwrap();
    assert_eq!(outcome.deleted_segments, 3);
    assert_eq!(outcome.deleted_bytes, 15 * ENTRY);
    assert_eq!(outcome.earliest_offset, 15);
    assert_eq!(log.earliest_offset(), 15);
    assert_eq!(log.size_bytes(), 8 * ENTRY);
    assert_eq!(files_with_ext(dir.path(), "log").len(), 2);
    assert_eq!(files_with_ext(dir.path(), "index").len(), 1);
    check_contiguous(&read_all(&log), 15, 23);
    match log.read(3, 10, usize::MAX) {
        Err(StorageError::OffsetOutOfRange {
            requested,
            earliest,
            latest,
        }) => assert_eq!((requested, earliest, latest), (3, 15, 23)),
        other => panic!("unexpected {other:?}"),
    }
    drop(log);

    let log = PartitionLog::open(dir.path(), cfg).unwrap();
    assert_eq!(log.earliest_offset(), 15);
    assert_eq!(log.log_end_offset(), 23);
    check_contiguous(&read_all(&log), 15, 23);
    // the active segment is never deleted
    let outcome = log.enforce_retention(Some(0), None, 0).unwrap();
    assert_eq!(outcome.deleted_segments, 1);
    assert_eq!(log.earliest_offset(), 20);
    assert_eq!(
        log.enforce_retention(Some(0), None, 0)
            .unwrap()
            .deleted_segments,
        0
    );
    check_contiguous(&read_all(&log), 20, 23);
}

#[test]
fn retention_by_time_moves_earliest_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(5 * ENTRY, 64);
    let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
    fill(&log, 23); // timestamp = 1000 * offset; segment k's newest = 1000*(5k+4)
                    // now = 20_000, limit 12_000 ms -> cutoff 8_000: only segment 0 (newest 4_000)
    let outcome = log.enforce_retention(None, Some(12_000), 20_000).unwrap();
    assert_eq!(outcome.deleted_segments, 1);
    assert_eq!(log.earliest_offset(), 5);
    assert!(matches!(
        log.enforce_retention(None, Some(-1), 0),
        Err(StorageError::InvalidArgument(_))
    ));
    drop(log);

    let log = PartitionLog::open(dir.path(), cfg).unwrap();
    assert_eq!(log.earliest_offset(), 5);
    // timestamps were recovered: the same limit deletes nothing more ...
    assert_eq!(
        log.enforce_retention(None, Some(12_000), 20_000)
            .unwrap()
            .deleted_segments,
        0
    );
    // ... a later clock (cutoff 15_000) deletes segments 1 and 2 (newest 9_000
    // and 14_000) but not segment 3 (newest 19_000)
    let outcome = log.enforce_retention(None, Some(12_000), 27_000).unwrap();
    assert_eq!(outcome.deleted_segments, 2);
    assert_eq!(log.earliest_offset(), 15);
    check_contiguous(&read_all(&log), 15, 23);
    // everything expired: all sealed segments go, the active one stays
    log.enforce_retention(None, Some(0), i64::MAX).unwrap();
    assert_eq!(log.earliest_offset(), 20);
    check_contiguous(&read_all(&log), 20, 23);
}

#[test]
fn truncate_all_resets_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(5 * ENTRY, 64);
    let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
    fill(&log, 23);
    log.truncate_all(0).unwrap();
    assert_eq!(log.earliest_offset(), 0);
    assert_eq!(log.log_end_offset(), 0);
    assert_eq!(log.durable_offset(), 0);
    assert_eq!(log.size_bytes(), 0);
    assert_eq!(log.segment_count(), 1);
    assert!(log.read(0, 10, usize::MAX).unwrap().is_empty());
    assert_eq!(files_with_ext(dir.path(), "log").len(), 1);
    assert_eq!(files_with_ext(dir.path(), "index").len(), 0);
    fill(&log, 3);
    check_contiguous(&read_all(&log), 0, 3);
    drop(log);

    let log = PartitionLog::open(dir.path(), cfg.clone()).unwrap();
    assert_eq!(log.log_end_offset(), 3);
    check_contiguous(&read_all(&log), 0, 3);
    log.truncate_all(100).unwrap();
    assert_eq!(log.earliest_offset(), 100);
    assert_eq!(log.log_end_offset(), 100);
    drop(log);
    let log = PartitionLog::open(dir.path(), cfg).unwrap();
    assert_eq!(log.earliest_offset(), 100);
    assert_eq!(log.log_end_offset(), 100);
    assert_eq!(log.durable_offset(), 100);
    assert_eq!(log.append(&[(0, data(0))]).unwrap().base_offset, 100);
}

#[test]
fn delete_removes_the_directory() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("topic-0");
    let log = PartitionLog::open(&dir, config(5 * ENTRY, 64)).unwrap();
    assert!(dir.is_dir());
    fill(&log, 12);
    log.delete().unwrap();
    assert!(!dir.exists());
    assert!(matches!(
        log.append(&[(0, data(0))]),
        Err(StorageError::Deleted { .. })
    ));
    assert!(matches!(
        log.read(0, 1, 1),
        Err(StorageError::Deleted { .. })
    ));
    assert!(matches!(log.sync_to(0), Err(StorageError::Deleted { .. })));
    log.delete().unwrap(); // idempotent
}

#[test]
fn invalid_arguments_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        config(0, 64),
        config(u64::MAX, 64),
        config(1024, 0),
        LogConfig {
            max_record_bytes: u32::MAX,
            ..LogConfig::default()
        },
    ] {
        assert!(matches!(
            PartitionLog::open(dir.path(), bad),
            Err(StorageError::InvalidArgument(_))
        ));
    }
    let log = PartitionLog::open(
        dir.path(),
        LogConfig {
            max_record_bytes: 10,
            ..LogConfig::default()
        },
    )
    .unwrap();
    assert!(matches!(
        log.append(&[]),
        Err(StorageError::InvalidArgument(_))
    ));
    assert!(matches!(
        log.append(&[(0, Bytes::from_static(b"0123456789X"))]),
        Err(StorageError::InvalidArgument(_))
    ));
    assert_eq!(log.log_end_offset(), 0);
    // empty records and extreme timestamps are fine
    log.append(&[
        (i64::MIN, Bytes::new()),
        (i64::MAX, Bytes::from_static(b"0123456789")),
    ])
    .unwrap();
    log.sync_to(1).unwrap();
    let got = log.read(0, 10, usize::MAX).unwrap();
    assert_eq!(got[0].timestamp, i64::MIN);
    assert!(got[0].data.is_empty());
    assert_eq!(got[1].timestamp, i64::MAX);
    assert!(matches!(
        log.sync_to(u64::MAX),
        Err(StorageError::InvalidArgument(_))
    ));
}

#[test]
fn oversized_batch_gets_its_own_segment() {
    let dir = tempfile::tempdir().unwrap();
    let log = PartitionLog::open(dir.path(), config(100, 64)).unwrap();
    log.append(&[(0, data(0))]).unwrap();
    let big: Vec<(i64, Bytes)> = (1..10).map(|i| (i * 1000, data(i as u64))).collect();
    log.append(&big).unwrap();
    log.append(&[(10_000, data(10))]).unwrap();
    log.sync_to(10).unwrap();
    assert_eq!(log.segment_count(), 3);
    let bases: Vec<String> = files_with_ext(dir.path(), "log")
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        bases,
        vec![
            "00000000000000000000",
            "00000000000000000001",
            "00000000000000000010"
        ]
    );
    check_contiguous(&read_all(&log), 0, 11);
}
