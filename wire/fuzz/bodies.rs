//! The bodies of the wire fuzz targets, shared by the cargo-fuzz targets
//! (`fuzz_targets/*.rs`) and the short stable-Rust runs
//! (`wire/tests/fuzz_short.rs`).

#![allow(dead_code)]

use bytes::{Bytes, BytesMut};
use cursus_wire::{
    Batch, CommandPayload, Compression, ErrorPayload, Frame, FrameCodec, NegotiationRequest,
    NegotiationResponse, Record, RecordVersion, RecordVersionPolicy,
};
use tokio_util::codec::Decoder;

/// Complete-buffer and streaming frame decoders, under every compression.
pub fn frame(data: &[u8]) {
    for &c in Compression::ALL {
        if let Ok(frame) = Frame::decode(Bytes::copy_from_slice(data), c) {
            // Whatever decodes must re-encode and decode to the same frame.
            let again = frame.to_bytes(c).expect("decoded frame re-encodes");
            let negotiated = if frame.kind.is_negotiation() {
                Compression::None
            } else {
                c
            };
            assert_eq!(Frame::decode(again, negotiated).expect("round trip"), frame);
        }
        let mut codec = FrameCodec::with_compression(c);
        let mut buf = BytesMut::from(data);
        while let Ok(Some(_)) = codec.decode(&mut buf) {}
    }
    let _ = NegotiationRequest::decode(Bytes::copy_from_slice(data));
    let _ = NegotiationResponse::decode(Bytes::copy_from_slice(data));
}

/// CBV2 batch decoder.
pub fn batch(data: &[u8]) {
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
}

/// CBV2 record decoder.
pub fn record(data: &[u8]) {
    if let Ok(record) = Record::decode(Bytes::copy_from_slice(data)) {
        let again = record
            .to_bytes(RecordVersion::V3)
            .expect("decoded record re-encodes");
        assert_eq!(Record::decode(again).expect("round trip"), record);
    }
}

/// CRQ2 command decoder and the text-command parser.
pub fn command(data: &[u8]) {
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
}

/// Typed error payload decoder and the broker error-text parser.
pub fn error(data: &[u8]) {
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
}
