//! The codec's error type: every way a Wire v2 byte sequence can be rejected.

use super::ids::{Compression, Kind};
use thiserror::Error;

/// A decode or encode failure of the Wire v2 codec.
///
/// On a live connection any framing error is fatal: the byte stream cannot be
/// resynchronised, so the connection must be closed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WireError {
    // ---- frame header (§1.9) ----
    /// The first four bytes are not `CRS2`.
    #[error("bad frame magic {0:#010x}, expected 0x43525332 (CRS2)")]
    BadMagic(u32),
    /// The header's version field is not 2.
    #[error("unsupported wire version {0}, expected 2")]
    UnsupportedVersion(u16),
    /// Kind 0 or above 5.
    #[error("invalid frame kind {0}")]
    InvalidKind(u8),
    /// Flag bits 4-7 are reserved and must be zero.
    #[error("reserved flag bits set in {0:#04x}")]
    ReservedFlags(u8),
    /// Negotiation frames must have flags exactly 0x00.
    #[error("negotiation frame flags must be 0x00, got {0:#04x}")]
    NegotiationFlags(u8),
    /// Non-negotiation frames must set bit 0 (compression-explicit).
    #[error("compression-explicit bit clear in flags {0:#04x}")]
    CompressionNotExplicit(u8),
    /// Compression id 4-7 in the flags, or above 3 in a negotiation payload.
    #[error("unknown compression id {0}")]
    UnknownCompression(u8),
    /// The frame's compression differs from the connection's negotiated one.
    #[error("frame uses {actual} compression but {negotiated} was negotiated")]
    CompressionMismatch {
        /// Negotiated for the connection.
        negotiated: Compression,
        /// Found in the frame.
        actual: Compression,
    },
    /// Encoded or decoded length above 64 MiB.
    #[error("{which} length {len} exceeds the 67108864-byte maximum")]
    TooLarge {
        /// `encoded` or `decoded`.
        which: &'static str,
        /// The offending length.
        len: u64,
    },
    /// The status is not allowed for the frame kind (§1.5).
    #[error("status {status} is not allowed on a {kind} frame")]
    StatusNotAllowed {
        /// Frame kind.
        kind: Kind,
        /// Raw status value.
        status: u16,
    },
    /// Kinds 3, 4 and 5 need a non-zero request id.
    #[error("request id must be non-zero on a {0} frame")]
    ZeroRequestId(Kind),
    /// Negotiation frames must carry command NEGOTIATE (46).
    #[error("negotiation frame carries command {0}, expected NEGOTIATE (46)")]
    NotNegotiate(u16),
    /// Command id 0 or not assigned in §2.1.
    #[error("unknown command id {0}")]
    UnknownCommand(u16),
    /// A complete-buffer decode whose length is not 32 + encoded_length.
    #[error("frame buffer holds {actual} bytes but the header announces {expected}")]
    FrameLengthMismatch {
        /// 32 + encoded_length.
        expected: u64,
        /// Bytes actually supplied.
        actual: u64,
    },
    /// The payload's CRC32C differs from the header's.
    #[error("CRC32C mismatch: header {expected:#010x}, payload {actual:#010x}")]
    CrcMismatch {
        /// From the header.
        expected: u32,
        /// Computed over the payload.
        actual: u32,
    },
    /// The compressed payload is not valid for its algorithm.
    #[error("{algorithm} decompression failed: {reason}")]
    Decompression {
        /// The frame's compression.
        algorithm: Compression,
        /// What the decompressor reported.
        reason: String,
    },
    /// The payload's length after decompression differs from decoded_length
    /// (for compression none: encoded_length differs from decoded_length).
    #[error("payload decodes to {actual} bytes but the header announces {expected}")]
    DecodedLengthMismatch {
        /// decoded_length from the header.
        expected: u64,
        /// Actual length (at most expected + 1 is ever produced).
        actual: u64,
    },
    /// A compressor failed (should not happen with in-memory buffers).
    #[error("{algorithm} compression failed: {reason}")]
    Compression {
        /// The requested compression.
        algorithm: Compression,
        /// What the compressor reported.
        reason: String,
    },
    /// A stream ended inside a frame.
    #[error("connection closed inside a frame ({0} bytes buffered)")]
    IncompleteFrame(usize),

    // ---- shared payload rules ----
    /// Data ended before a field was complete.
    #[error("truncated {what}: needed {needed} more bytes, {remaining} left")]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes that were left.
        remaining: u64,
    },
    /// Bytes remain after a structure that must end the buffer.
    #[error("{count} trailing bytes after {what}")]
    TrailingBytes {
        /// The structure.
        what: &'static str,
        /// How many bytes were left over.
        count: usize,
    },
    /// A `str` field is not valid UTF-8.
    #[error("{0} is not valid UTF-8")]
    InvalidUtf8(&'static str),

    // ---- negotiation (§4.1, §4.3) ----
    /// compression_count outside 1..4.
    #[error("negotiation offers {0} compressions, expected 1 to 4")]
    CompressionCount(u16),
    /// The same compression listed twice.
    #[error("negotiation lists compression {0} twice")]
    DuplicateCompression(Compression),
    /// minimum_version 0 or maximum below minimum.
    #[error("invalid version range {min}..={max}")]
    VersionRange {
        /// minimum_version.
        min: u16,
        /// maximum_version.
        max: u16,
    },
    /// The client's range excludes version 2.
    #[error("version range {min}..={max} excludes wire version 2")]
    VersionNotSupported {
        /// minimum_version.
        min: u16,
        /// maximum_version.
        max: u16,
    },
    /// The negotiation response selects a compression the client did not offer.
    #[error("broker selected {0} compression, which was not offered")]
    CompressionNotOffered(Compression),

    // ---- CRQ2 command payload (§5.2, §5.4) ----
    /// Wrong CRQ2 magic.
    #[error("bad command magic {0:#010x}, expected 0x43525132 (CRQ2)")]
    BadCommandMagic(u32),
    /// CRQ2 schema version is not 2.
    #[error("unsupported command schema version {0}, expected 2")]
    CommandVersion(u16),
    /// More than 1024 positionals or fields.
    #[error("{what} count {count} exceeds 1024")]
    TooManyItems {
        /// `positionals` or `fields`.
        what: &'static str,
        /// The count.
        count: usize,
    },
    /// An empty positional argument.
    #[error("empty positional argument")]
    EmptyPositional,
    /// A positional argument containing space, tab, CR or LF.
    #[error("positional argument {0:?} contains whitespace")]
    PositionalWhitespace(String),
    /// A field name that is empty or outside `[a-z_][A-Za-z0-9_]*`.
    #[error("invalid field name {0:?}")]
    InvalidFieldName(String),
    /// The same field name twice.
    #[error("duplicate field {0:?}")]
    DuplicateField(String),
    /// An empty text command line.
    #[error("empty command")]
    EmptyCommand,
    /// A text command name that is not in §2.1.
    #[error("unknown command {0:?}")]
    UnknownCommandName(String),
    /// A command that cannot be sent as a request (NEGOTIATE).
    #[error("{0} cannot be sent as an application request")]
    NotARequestCommand(&'static str),

    // ---- CBV2 batch and record (§6.5) ----
    /// Wrong CBV2 magic.
    #[error("bad batch magic {0:#010x}, expected 0x43425632 (CBV2)")]
    BadBatchMagic(u32),
    /// CBV2 version is not 2.
    #[error("unsupported batch version {0}, expected 2")]
    BatchVersion(u16),
    /// Batch flag bits other than bit 0.
    #[error("unknown batch flag bits {0:#06x}")]
    BatchFlags(u16),
    /// acks outside `""`, `0`, `1`, `-1`, `all`.
    #[error("invalid acks {0:?}")]
    InvalidAcks(String),
    /// More than 100,000 records in one batch.
    #[error("batch holds {0} records, maximum is 100000")]
    TooManyRecords(u64),
    /// A record's topic or partition differs from its batch's.
    #[error("record routed to {record_topic:?}/{record_partition} inside a batch for {batch_topic:?}/{batch_partition}")]
    RoutingConflict {
        /// The batch topic.
        batch_topic: String,
        /// The batch partition.
        batch_partition: i32,
        /// The record topic.
        record_topic: String,
        /// The record partition.
        record_partition: i32,
    },
    /// Record version other than 2 or 3.
    #[error("unsupported record version {0}, expected 2 or 3")]
    RecordVersion(u16),
    /// Presence bits not defined for the record version.
    #[error("presence bits {bits:#x} are unknown in record version {version}")]
    UnknownPresenceBits {
        /// Record version.
        version: u16,
        /// The unknown bits.
        bits: u64,
    },
    /// An enumerated string field with a value outside its set (§6.6).
    #[error("invalid {field} {value:?}")]
    InvalidEnumValue {
        /// Field name.
        field: &'static str,
        /// The value found.
        value: String,
    },
    /// A version-3-only field set on a record encoded as version 2.
    #[error("{0} requires record version 3")]
    NeedsRecordVersion3(&'static str),
    /// A string or byte field longer than a u32 length can express or the frame allows.
    #[error("{what} is {len} bytes, too long to encode")]
    FieldTooLong {
        /// Field name.
        what: &'static str,
        /// Its length.
        len: usize,
    },

    // ---- typed error payload (§7.3, §7.4) ----
    /// Error class outside 1..8.
    #[error("invalid error class {0}")]
    InvalidErrorClass(u8),
    /// retryable byte other than 0 or 1.
    #[error("invalid retryable byte {0}")]
    InvalidRetryable(u8),
    /// Empty error code.
    #[error("empty error code")]
    EmptyErrorCode,
    /// Empty error field name.
    #[error("empty error field name")]
    EmptyErrorFieldName,
    /// More than 256 error fields when encoding.
    #[error("{0} error fields, encoders allow at most 256")]
    TooManyErrorFields(usize),
}

/// Result alias for codec operations.
pub type WireResult<T> = Result<T, WireError>;
