//! CBV2 record decoder.
#![no_main]
use bytes::Bytes;
use cursus_wire::{Record, RecordVersion};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(record) = Record::decode(Bytes::copy_from_slice(data)) {
        let again = record.to_bytes(RecordVersion::V3).expect("decoded record re-encodes");
        assert_eq!(Record::decode(again).expect("round trip"), record);
    }
});
