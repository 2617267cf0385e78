//! Negotiation payloads (§4): the client's version range and ordered
//! compression preferences, and the broker's selection.

use super::buf::Reader;
use super::error::{WireError, WireResult};
use super::frame::WIRE_VERSION;
use super::ids::Compression;
use bytes::{BufMut, Bytes, BytesMut};

/// The client's first frame payload (§4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NegotiationRequest {
    /// Lowest wire version the client accepts (non-zero).
    pub min_version: u16,
    /// Highest wire version the client accepts.
    pub max_version: u16,
    /// Compressions in preference order: 1 to 4, no duplicates.
    pub compressions: Vec<Compression>,
}

impl NegotiationRequest {
    /// What every client sends: version 2 only, `preferred` first and `none`
    /// as the fallback when `preferred` is not none.
    pub fn for_compression(preferred: Compression) -> Self {
        let mut compressions = vec![preferred];
        if preferred != Compression::None {
            compressions.push(Compression::None);
        }
        NegotiationRequest {
            min_version: WIRE_VERSION,
            max_version: WIRE_VERSION,
            compressions,
        }
    }

    /// Checks the broker's validation rules.
    pub fn validate(&self) -> WireResult<()> {
        let count = self.compressions.len();
        if !(1..=4).contains(&count) {
            return Err(WireError::CompressionCount(
                count.min(u16::MAX as usize) as u16
            ));
        }
        for (i, c) in self.compressions.iter().enumerate() {
            if self.compressions[..i].contains(c) {
                return Err(WireError::DuplicateCompression(*c));
            }
        }
        if self.min_version == 0 || self.max_version < self.min_version {
            return Err(WireError::VersionRange {
                min: self.min_version,
                max: self.max_version,
            });
        }
        Ok(())
    }

    /// Encodes the payload (7 to 10 bytes).
    pub fn encode(&self) -> WireResult<Bytes> {
        self.validate()?;
        let mut out = BytesMut::with_capacity(6 + self.compressions.len());
        out.put_u16(self.min_version);
        out.put_u16(self.max_version);
        out.put_u16(self.compressions.len() as u16);
        for c in &self.compressions {
            out.put_u8(c.id());
        }
        Ok(out.freeze())
    }

    /// Decodes and validates a payload.
    pub fn decode(payload: Bytes) -> WireResult<Self> {
        let mut r = Reader::new(payload);
        let min_version = r.u16("minimum_version")?;
        let max_version = r.u16("maximum_version")?;
        let count = r.u16("compression_count")?;
        if !(1..=4).contains(&count) {
            return Err(WireError::CompressionCount(count));
        }
        let mut compressions = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let id = r.u8("compression id")?;
            let c = Compression::from_id(id).ok_or(WireError::UnknownCompression(id))?;
            if compressions.contains(&c) {
                return Err(WireError::DuplicateCompression(c));
            }
            compressions.push(c);
        }
        r.finish("negotiation request")?;
        let request = NegotiationRequest {
            min_version,
            max_version,
            compressions,
        };
        request.validate()?;
        Ok(request)
    }

    /// The broker's choice (§4.2): version 2 must be in range, and the first
    /// offered compression wins (this implementation supports all four).
    pub fn select(&self) -> WireResult<NegotiationResponse> {
        if self.min_version > WIRE_VERSION || self.max_version < WIRE_VERSION {
            return Err(WireError::VersionNotSupported {
                min: self.min_version,
                max: self.max_version,
            });
        }
        let compression = *self
            .compressions
            .first()
            .ok_or(WireError::CompressionCount(0))?;
        Ok(NegotiationResponse {
            version: WIRE_VERSION,
            compression,
        })
    }
}

/// The broker's negotiation answer (§4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NegotiationResponse {
    /// Selected wire version (2).
    pub version: u16,
    /// Selected compression for every later frame.
    pub compression: Compression,
}

impl NegotiationResponse {
    /// Encodes the 3-byte payload.
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(3);
        out.put_u16(self.version);
        out.put_u8(self.compression.id());
        out.freeze()
    }

    /// Decodes a payload of exactly 3 bytes.
    pub fn decode(payload: Bytes) -> WireResult<Self> {
        let mut r = Reader::new(payload);
        let version = r.u16("negotiated version")?;
        let id = r.u8("negotiated compression")?;
        r.finish("negotiation response")?;
        let compression = Compression::from_id(id).ok_or(WireError::UnknownCompression(id))?;
        Ok(NegotiationResponse {
            version,
            compression,
        })
    }

    /// The client's checks: version 2 and a compression it offered.
    pub fn check_against(&self, request: &NegotiationRequest) -> WireResult<()> {
        if self.version != WIRE_VERSION {
            return Err(WireError::UnsupportedVersion(self.version));
        }
        if !request.compressions.contains(&self.compression) {
            return Err(WireError::CompressionNotOffered(self.compression));
        }
        Ok(())
    }
}
