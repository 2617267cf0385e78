//! Typed error payload decoder and the broker error-text parser.
#![no_main]
use bytes::Bytes;
use cursus_wire::ErrorPayload;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(e) = ErrorPayload::decode(Bytes::copy_from_slice(data)) {
        let _ = e.render();
        if e.fields.len() <= 256 {
            let again = e.to_bytes().expect("decoded error re-encodes");
            assert_eq!(ErrorPayload::decode(again).expect("round trip"), e);
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ErrorPayload::from_error_text(text);
    }
});
