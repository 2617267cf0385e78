//! The Wire v2 frame (§1): a fixed 32-byte big-endian header and a payload
//! that is CRC32C-checked and optionally compressed.

use super::compression::{compress, decompress};
use super::error::{WireError, WireResult};
use super::ids::{Command, Compression, Kind, Status};
use super::MAX_PAYLOAD;
use bytes::{BufMut, Bytes, BytesMut};

/// Frame magic, ASCII `CRS2`.
pub const FRAME_MAGIC: u32 = 0x4352_5332;
/// The only wire version.
pub const WIRE_VERSION: u16 = 2;
/// Size of the fixed frame header.
pub const HEADER_LEN: usize = 32;

const FLAG_EXPLICIT: u8 = 0x01;
const FLAG_RESERVED: u8 = 0xF0;

/// A validated frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Frame kind.
    pub kind: Kind,
    /// Compression of the payload (always none on negotiation frames).
    pub compression: Compression,
    /// Command id.
    pub command: Command,
    /// Status.
    pub status: Status,
    /// Correlation id.
    pub request_id: u64,
    /// Payload bytes on the wire.
    pub encoded_length: u32,
    /// Payload bytes after decompression.
    pub decoded_length: u32,
    /// CRC32C of the encoded payload.
    pub crc32c: u32,
}

impl FrameHeader {
    /// Parses and validates a header (§1.9 steps 2-6) for a connection that
    /// negotiated `negotiated`. Nothing about the payload is read or allocated.
    pub fn parse(raw: &[u8; HEADER_LEN], negotiated: Compression) -> WireResult<Self> {
        let be16 = |at: usize| u16::from_be_bytes([raw[at], raw[at + 1]]);
        let be32 = |at: usize| u32::from_be_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]);
        let magic = be32(0);
        if magic != FRAME_MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        let version = be16(4);
        if version != WIRE_VERSION {
            return Err(WireError::UnsupportedVersion(version));
        }
        let kind = Kind::from_id(raw[6]).ok_or(WireError::InvalidKind(raw[6]))?;
        let flags = raw[7];
        if flags & FLAG_RESERVED != 0 {
            return Err(WireError::ReservedFlags(flags));
        }
        let compression = if kind.is_negotiation() {
            if flags != 0 {
                return Err(WireError::NegotiationFlags(flags));
            }
            Compression::None
        } else {
            if flags & FLAG_EXPLICIT == 0 {
                return Err(WireError::CompressionNotExplicit(flags));
            }
            let id = (flags >> 1) & 0x07;
            let actual = Compression::from_id(id).ok_or(WireError::UnknownCompression(id))?;
            if actual != negotiated {
                return Err(WireError::CompressionMismatch { negotiated, actual });
            }
            actual
        };
        let encoded_length = be32(20);
        let decoded_length = be32(24);
        check_len("encoded", encoded_length as usize)?;
        check_len("decoded", decoded_length as usize)?;
        let raw_status = be16(10);
        let request_id = u64::from_be_bytes(raw[12..20].try_into().expect("8 bytes"));
        let raw_command = be16(8);
        let status = Status::from_id(raw_status)
            .filter(|s| kind.allows(*s))
            .ok_or(WireError::StatusNotAllowed {
                kind,
                status: raw_status,
            })?;
        if !kind.is_negotiation() && request_id == 0 {
            return Err(WireError::ZeroRequestId(kind));
        }
        if kind.is_negotiation() && raw_command != Command::Negotiate.id() {
            return Err(WireError::NotNegotiate(raw_command));
        }
        let command =
            Command::from_id(raw_command).ok_or(WireError::UnknownCommand(raw_command))?;
        Ok(FrameHeader {
            kind,
            compression,
            command,
            status,
            request_id,
            encoded_length,
            decoded_length,
            crc32c: be32(28),
        })
    }

    /// The flags byte this header encodes to.
    pub fn flags(&self) -> u8 {
        if self.kind.is_negotiation() {
            0
        } else {
            FLAG_EXPLICIT | (self.compression.id() << 1)
        }
    }

    /// The 32 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..4].copy_from_slice(&FRAME_MAGIC.to_be_bytes());
        out[4..6].copy_from_slice(&WIRE_VERSION.to_be_bytes());
        out[6] = self.kind.id();
        out[7] = self.flags();
        out[8..10].copy_from_slice(&self.command.id().to_be_bytes());
        out[10..12].copy_from_slice(&self.status.id().to_be_bytes());
        out[12..20].copy_from_slice(&self.request_id.to_be_bytes());
        out[20..24].copy_from_slice(&self.encoded_length.to_be_bytes());
        out[24..28].copy_from_slice(&self.decoded_length.to_be_bytes());
        out[28..32].copy_from_slice(&self.crc32c.to_be_bytes());
        out
    }

    /// Total frame size: header plus encoded payload.
    pub fn frame_len(&self) -> usize {
        HEADER_LEN + self.encoded_length as usize
    }

    /// Verifies the CRC of the encoded payload and decompresses it to exactly
    /// `decoded_length` bytes (§1.9 steps 9-10).
    pub fn decode_payload(&self, encoded: Bytes) -> WireResult<Bytes> {
        let actual = crc32c::crc32c(&encoded);
        if actual != self.crc32c {
            return Err(WireError::CrcMismatch {
                expected: self.crc32c,
                actual,
            });
        }
        if self.compression == Compression::None && self.encoded_length != self.decoded_length {
            return Err(WireError::DecodedLengthMismatch {
                expected: self.decoded_length as u64,
                actual: self.encoded_length as u64,
            });
        }
        decompress(self.compression, encoded, self.decoded_length)
    }
}

fn check_len(which: &'static str, len: usize) -> WireResult<()> {
    if len > MAX_PAYLOAD {
        return Err(WireError::TooLarge {
            which,
            len: len as u64,
        });
    }
    Ok(())
}

/// A decoded frame: header fields plus the decompressed payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Frame kind.
    pub kind: Kind,
    /// Command id.
    pub command: Command,
    /// Status.
    pub status: Status,
    /// Correlation id (0 on negotiation frames).
    pub request_id: u64,
    /// Decompressed payload.
    pub payload: Bytes,
}

impl Frame {
    /// A client request (kind 3, status NONE).
    pub fn request(command: Command, request_id: u64, payload: impl Into<Bytes>) -> Self {
        Frame {
            kind: Kind::Request,
            command,
            status: Status::None,
            request_id,
            payload: payload.into(),
        }
    }

    /// A broker response (kind 4) to `request_id`.
    pub fn response(
        command: Command,
        request_id: u64,
        status: Status,
        payload: impl Into<Bytes>,
    ) -> Self {
        Frame {
            kind: Kind::Response,
            command,
            status,
            request_id,
            payload: payload.into(),
        }
    }

    /// A stream frame (kind 5).
    pub fn stream(
        command: Command,
        request_id: u64,
        status: Status,
        payload: impl Into<Bytes>,
    ) -> Self {
        Frame {
            kind: Kind::Stream,
            command,
            status,
            request_id,
            payload: payload.into(),
        }
    }

    /// A negotiation request (kind 1) carrying an encoded §4.1 payload.
    pub fn negotiation_request(payload: impl Into<Bytes>) -> Self {
        Frame {
            kind: Kind::NegotiationRequest,
            command: Command::Negotiate,
            status: Status::None,
            request_id: 0,
            payload: payload.into(),
        }
    }

    /// A successful negotiation response (kind 2) carrying a §4.3 payload.
    pub fn negotiation_response(payload: impl Into<Bytes>) -> Self {
        Frame {
            kind: Kind::NegotiationResponse,
            command: Command::Negotiate,
            status: Status::Ok,
            request_id: 0,
            payload: payload.into(),
        }
    }

    /// Checks the per-kind rules of §1.5 that an encoder must respect.
    pub fn validate(&self) -> WireResult<()> {
        if !self.kind.allows(self.status) {
            return Err(WireError::StatusNotAllowed {
                kind: self.kind,
                status: self.status.id(),
            });
        }
        if !self.kind.is_negotiation() && self.request_id == 0 {
            return Err(WireError::ZeroRequestId(self.kind));
        }
        if self.kind.is_negotiation() && self.command != Command::Negotiate {
            return Err(WireError::NotNegotiate(self.command.id()));
        }
        check_len("decoded", self.payload.len())
    }

    /// Encodes the frame into a header and an encoded payload without copying
    /// an uncompressed payload, for vectored writes. Negotiation frames are
    /// never compressed, whatever `compression` says.
    pub fn encode_parts(&self, compression: Compression) -> WireResult<([u8; HEADER_LEN], Bytes)> {
        self.validate()?;
        let compression = if self.kind.is_negotiation() {
            Compression::None
        } else {
            compression
        };
        let encoded = match compression {
            Compression::None => self.payload.clone(),
            other => compress(other, &self.payload)?,
        };
        check_len("encoded", encoded.len())?;
        let header = FrameHeader {
            kind: self.kind,
            compression,
            command: self.command,
            status: self.status,
            request_id: self.request_id,
            encoded_length: encoded.len() as u32,
            decoded_length: self.payload.len() as u32,
            crc32c: crc32c::crc32c(&encoded),
        };
        Ok((header.to_bytes(), encoded))
    }

    /// Appends the encoded frame to `dst`.
    pub fn encode(&self, compression: Compression, dst: &mut BytesMut) -> WireResult<()> {
        let (header, payload) = self.encode_parts(compression)?;
        dst.reserve(HEADER_LEN + payload.len());
        dst.put_slice(&header);
        dst.put_slice(&payload);
        Ok(())
    }

    /// Encodes the frame into a new buffer.
    pub fn to_bytes(&self, compression: Compression) -> WireResult<Bytes> {
        let mut dst = BytesMut::new();
        self.encode(compression, &mut dst)?;
        Ok(dst.freeze())
    }

    /// Decodes one complete frame; `buf` must hold exactly that frame.
    pub fn decode(buf: Bytes, negotiated: Compression) -> WireResult<Frame> {
        let raw: &[u8; HEADER_LEN] = buf
            .get(..HEADER_LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or(WireError::Truncated {
                what: "frame header",
                needed: HEADER_LEN as u64,
                remaining: buf.len() as u64,
            })?;
        let header = FrameHeader::parse(raw, negotiated)?;
        if buf.len() != header.frame_len() {
            return Err(WireError::FrameLengthMismatch {
                expected: header.frame_len() as u64,
                actual: buf.len() as u64,
            });
        }
        let payload = header.decode_payload(buf.slice(HEADER_LEN..))?;
        Ok(header.into_frame(payload))
    }
}

impl FrameHeader {
    /// Combines this header with its decoded payload.
    pub fn into_frame(self, payload: Bytes) -> Frame {
        Frame {
            kind: self.kind,
            command: self.command,
            status: self.status,
            request_id: self.request_id,
            payload,
        }
    }
}
