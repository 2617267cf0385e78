//! CBV2 batch decoder.
#![no_main]
use bytes::Bytes;
use cursus_wire::{Batch, RecordVersion, RecordVersionPolicy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = Batch::peek_acks(Bytes::copy_from_slice(data));
    if let Ok(batch) = Batch::decode(Bytes::copy_from_slice(data)) {
        let again = batch
            .to_bytes(RecordVersionPolicy::Fixed(RecordVersion::V3))
            .expect("decoded batch re-encodes");
        let mut expected = batch.clone();
        // The encoder fills a zero batch_start/batch_end from the records'
        // sequence numbers (reference behaviour), so compare after that rule.
        if expected.batch_start == 0 {
            if let (Some(f), Some(l)) = (batch.records.first(), batch.records.last()) {
                expected.batch_start = f.seq_num;
                expected.batch_end = l.seq_num;
            }
        }
        assert_eq!(Batch::decode(again).expect("round trip"), expected);
    }
});
