//! Complete-buffer and streaming frame decoders, under every compression.
#![no_main]
use bytes::{Bytes, BytesMut};
use cursus_wire::{Compression, Frame, FrameCodec, NegotiationRequest, NegotiationResponse};
use libfuzzer_sys::fuzz_target;
use tokio_util::codec::Decoder;

fuzz_target!(|data: &[u8]| {
    for &c in Compression::ALL {
        if let Ok(frame) = Frame::decode(Bytes::copy_from_slice(data), c) {
            // Whatever decodes must re-encode and decode to the same frame.
            let again = frame.to_bytes(c).expect("decoded frame re-encodes");
            let negotiated = if frame.kind.is_negotiation() { Compression::None } else { c };
            assert_eq!(Frame::decode(again, negotiated).expect("round trip"), frame);
        }
        let mut codec = FrameCodec::with_compression(c);
        let mut buf = BytesMut::from(data);
        while let Ok(Some(_)) = codec.decode(&mut buf) {}
    }
    let _ = NegotiationRequest::decode(Bytes::copy_from_slice(data));
    let _ = NegotiationResponse::decode(Bytes::copy_from_slice(data));
});
