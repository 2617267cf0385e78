//! Journal: round trip, torn-tail truncation, non-tail corruption, rewrite.

use std::fs;
use std::path::Path;

use bytes::Bytes;
use cursus_broker::storage::{Journal, StorageError};

fn records(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{{\"version\":1,\"snapshot\":{i}}}").into_bytes())
        .collect()
}

fn write_journal(path: &Path, recs: &[Vec<u8>]) {
    let (journal, existing) = Journal::open(path).unwrap();
    assert!(existing.is_empty());
    for r in recs {
        journal.append_sync(r).unwrap();
    }
}

fn as_vecs(records: Vec<Bytes>) -> Vec<Vec<u8>> {
    records.into_iter().map(|b| b.to_vec()).collect()
}

/// Byte position of record `i` (frames are 8 bytes of header + record).
fn position_of(recs: &[Vec<u8>], i: usize) -> u64 {
    recs[..i].iter().map(|r| 8 + r.len() as u64).sum()
}

#[test]
fn round_trip_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("__transaction_state.journal");
    let recs = records(5);
    write_journal(&path, &recs);
    let (journal, got) = Journal::open(&path).unwrap();
    assert_eq!(as_vecs(got), recs);
    assert_eq!(journal.record_count(), 5);
    assert_eq!(journal.size_bytes(), position_of(&recs, 5));
    journal.append_sync(b"").unwrap(); // empty records are allowed
    journal.append_sync(b"last").unwrap();
    drop(journal);
    let (_, got) = Journal::open(&path).unwrap();
    let mut want = recs.clone();
    want.push(Vec::new());
    want.push(b"last".to_vec());
    assert_eq!(as_vecs(got), want);
}

#[test]
fn torn_tail_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let recs = records(4);
    write_journal(&path, &recs);
    let clean = fs::read(&path).unwrap();

    // partial frame at the end (header and part of a record)
    let mut torn = clean.clone();
    torn.extend_from_slice(&clean[..12]);
    fs::write(&path, &torn).unwrap();
    let (_, got) = Journal::open(&path).unwrap();
    assert_eq!(as_vecs(got), recs);
    assert_eq!(fs::read(&path).unwrap(), clean);

    // zero-filled tail (file extended, data never written)
    let mut zeros = clean.clone();
    zeros.extend_from_slice(&[0u8; 4096]);
    fs::write(&path, &zeros).unwrap();
    let (journal, got) = Journal::open(&path).unwrap();
    assert_eq!(as_vecs(got), recs);
    assert_eq!(fs::read(&path).unwrap(), clean);
    // appends continue after the valid data
    journal.append_sync(b"next").unwrap();
    drop(journal);
    let (_, got) = Journal::open(&path).unwrap();
    assert_eq!(got.len(), 5);
    assert_eq!(&got[4][..], b"next");

    // the last record cut short
    fs::write(&path, &clean[..clean.len() - 3]).unwrap();
    let (_, got) = Journal::open(&path).unwrap();
    assert_eq!(as_vecs(got), recs[..3].to_vec());
}

#[test]
fn checksum_failure_in_last_record_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let recs = records(4);
    write_journal(&path, &recs);
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x01;
    fs::write(&path, &bytes).unwrap();
    let (_, got) = Journal::open(&path).unwrap();
    assert_eq!(as_vecs(got), recs[..3].to_vec());
    assert_eq!(fs::metadata(&path).unwrap().len(), position_of(&recs, 3));
}

#[test]
fn corruption_before_the_tail_refuses_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let recs = records(4);
    write_journal(&path, &recs);
    let original = fs::read(&path).unwrap();
    let at = position_of(&recs, 1);
    // a data byte, a checksum byte and a length byte of record 1
    for delta in [12, 0, 6] {
        let mut bytes = original.clone();
        bytes[(at + delta) as usize] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        match Journal::open(&path) {
            Err(StorageError::Corruption {
                path: p, position, ..
            }) => {
                assert_eq!(p, path);
                assert_eq!(position, at);
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("opened a journal with non-tail corruption"),
        }
        assert_eq!(fs::read(&path).unwrap(), bytes, "file left untouched");
    }
}

#[test]
fn rewrite_replaces_contents_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("__consumer_offsets.journal");
    write_journal(&path, &records(10));
    let (journal, got) = Journal::open(&path).unwrap();
    assert_eq!(got.len(), 10);
    let compacted = vec![b"state-a".to_vec(), b"state-b".to_vec()];
    journal.rewrite(&compacted).unwrap();
    assert_eq!(journal.record_count(), 2);
    journal.append_sync(b"state-c").unwrap();
    assert_eq!(journal.record_count(), 3);
    drop(journal);
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["__consumer_offsets.journal".to_string()]);
    let (journal, got) = Journal::open(&path).unwrap();
    assert_eq!(
        as_vecs(got),
        vec![
            b"state-a".to_vec(),
            b"state-b".to_vec(),
            b"state-c".to_vec()
        ]
    );
    journal.rewrite::<Vec<u8>>(&[]).unwrap();
    drop(journal);
    let (_, got) = Journal::open(&path).unwrap();
    assert!(got.is_empty());
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
}

#[test]
fn stale_rewrite_temp_files_are_removed_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    write_journal(&path, &records(2));
    fs::write(dir.path().join(".j.tmp.999.0"), b"half-written").unwrap();
    let (_, got) = Journal::open(&path).unwrap();
    assert_eq!(got.len(), 2);
    assert!(!dir.path().join(".j.tmp.999.0").exists());
}

#[test]
fn record_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let (journal, _) = Journal::open_with_limit(&path, 8).unwrap();
    journal.append_sync(b"12345678").unwrap();
    assert!(matches!(
        journal.append_sync(b"123456789"),
        Err(StorageError::InvalidArgument(_))
    ));
    assert!(matches!(
        journal.rewrite(&[b"123456789"]),
        Err(StorageError::InvalidArgument(_))
    ));
    drop(journal);
    // existing records larger than a new limit are still readable
    let (_, got) = Journal::open_with_limit(&path, 1).unwrap();
    assert_eq!(&got[0][..], b"12345678");
}
