//! `cursus-wire`: the Cursus Wire v2 codec and the key partitioner.
//!
//! Shared by the client engine (`cursus`) and the reference broker
//! (`cursus-broker`), so both speak exactly the same bytes; the broker links
//! this crate only, not the client engine.
//!
//! Byte layouts follow `shared/spec/wire-v2.md`; section numbers in the docs
//! refer to it. Everything here is pure: no I/O, no async, no `unsafe`.
//!
//! | Module | Spec | Contents |
//! |---|---|---|
//! | [`frame`] | §1 | 32-byte header, CRC32C, complete-buffer encode/decode |
//! | [`codec`] | §1.9 | incremental stream decoder (tokio codec) |
//! | [`compression`] | §3 | none, gzip, snappy (raw + xerial), lz4 frame |
//! | [`negotiation`] | §4 | handshake payloads and broker selection |
//! | [`command`] | §5 | CRQ2 payloads and the text-command parser |
//! | [`batch`] | §6 | CBV2 batches and records, versions 2 and 3 |
//! | [`error_payload`] | §7 | typed errors and their rendering |
//! | [`registry`] | §11 | error-code classes and fallback rules |
//! | [`ids`] | §1.2, §1.3, §2, §7.2 | id tables |
//! | [`partitioner`] | seed, key partitioning | FNV-1a key partitioner |

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod batch;
mod buf;
pub mod codec;
pub mod command;
pub mod compression;
pub mod error;
pub mod error_payload;
pub mod frame;
pub mod ids;
pub mod negotiation;
pub mod partitioner;
pub mod registry;

/// Largest encoded or decoded payload: 64 MiB.
pub const MAX_PAYLOAD: usize = 64 * 1024 * 1024;

pub use batch::{
    Acks, Batch, ControlBatchType, Record, RecordRef, RecordVersion, RecordVersionPolicy,
    TransactionMarker, TransactionState,
};
pub use codec::{FrameCodec, FrameCodecError};
pub use command::CommandPayload;
pub use error::{WireError, WireResult};
pub use error_payload::ErrorPayload;
pub use frame::{Frame, FrameHeader, HEADER_LEN};
pub use ids::{Command, Compression, ErrorClass, Kind, Status};
pub use negotiation::{NegotiationRequest, NegotiationResponse};
