//! Incremental frame decoding for a byte stream, as a `tokio_util` codec.
//!
//! The header is validated as soon as its 32 bytes arrive, before any payload
//! is buffered, and the read buffer is grown to at most the header's bounded
//! `encoded_length`: a peer cannot make the decoder allocate more than 64 MiB
//! plus a header, nor wait for a payload behind a header that is already bad.

use super::error::WireError;
use super::frame::{Frame, FrameHeader, FRAME_MAGIC, HEADER_LEN};
use super::ids::Compression;
use bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

/// Error of the stream codec: an I/O failure or a protocol violation.
#[derive(Debug, thiserror::Error)]
pub enum FrameCodecError {
    /// The transport failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The peer sent bytes that are not a valid frame; close the connection.
    #[error(transparent)]
    Wire(#[from] WireError),
}

/// Decodes and encodes frames on a connection whose negotiated compression is
/// `compression` (none until the handshake completes).
#[derive(Debug, Clone)]
pub struct FrameCodec {
    compression: Compression,
    pending: Option<FrameHeader>,
}

impl FrameCodec {
    /// A codec for a connection that has not negotiated yet.
    pub fn new() -> Self {
        Self::with_compression(Compression::None)
    }

    /// A codec for a connection that negotiated `compression`.
    pub fn with_compression(compression: Compression) -> Self {
        FrameCodec {
            compression,
            pending: None,
        }
    }

    /// Switches to the compression chosen by the handshake.
    pub fn set_compression(&mut self, compression: Compression) {
        self.compression = compression;
    }

    /// The compression frames are expected and written with.
    pub fn compression(&self) -> Compression {
        self.compression
    }
}

impl Default for FrameCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = FrameCodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameCodecError> {
        let header = match self.pending {
            Some(header) => header,
            None => {
                let Some(raw) = src.get(..HEADER_LEN) else {
                    // Reject a wrong magic as soon as it is complete: a peer
                    // speaking another protocol (a TLS alert is 7 bytes, then
                    // a close) is named for what it is, not as a short frame.
                    if let Some(magic) = src.get(..4) {
                        let magic = u32::from_be_bytes(magic.try_into().expect("4 bytes"));
                        if magic != FRAME_MAGIC {
                            return Err(WireError::BadMagic(magic).into());
                        }
                    }
                    return Ok(None);
                };
                let raw: &[u8; HEADER_LEN] = raw.try_into().expect("32 bytes");
                let header = FrameHeader::parse(raw, self.compression)?;
                src.advance(HEADER_LEN);
                self.pending = Some(header);
                header
            }
        };
        let len = header.encoded_length as usize;
        if src.len() < len {
            src.reserve(len - src.len());
            return Ok(None);
        }
        self.pending = None;
        let encoded = src.split_to(len).freeze();
        Ok(Some(header.into_frame(header.decode_payload(encoded)?)))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameCodecError> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None if src.is_empty() && self.pending.is_none() => Ok(None),
            None => {
                let buffered = src.len() + self.pending.map_or(0, |_| HEADER_LEN);
                Err(WireError::IncompleteFrame(buffered).into())
            }
        }
    }
}

impl Encoder<Frame> for FrameCodec {
    type Error = FrameCodecError;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), FrameCodecError> {
        frame.encode(self.compression, dst)?;
        Ok(())
    }
}

impl Encoder<&Frame> for FrameCodec {
    type Error = FrameCodecError;

    fn encode(&mut self, frame: &Frame, dst: &mut BytesMut) -> Result<(), FrameCodecError> {
        frame.encode(self.compression, dst)?;
        Ok(())
    }
}
