//! CRQ2 command decoder and the text-command parser.
#![no_main]
use bytes::Bytes;
use cursus_wire::CommandPayload;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(payload) = CommandPayload::decode(Bytes::copy_from_slice(data)) {
        let again = payload.to_bytes().expect("decoded payload re-encodes");
        assert_eq!(&again[..], data);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok((_, payload)) = CommandPayload::parse_line(text) {
            let bytes = payload.to_bytes().expect("parsed payload encodes");
            assert_eq!(CommandPayload::decode(bytes).expect("round trip"), payload);
        }
    }
});
