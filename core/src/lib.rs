//! Cursus SDK core: the Wire v2 protocol codec and (in later modules) the
//! client engine that every language binding calls.
//!
//! - [`wire`]: the complete, pure Wire v2 codec (frames, compression,
//!   negotiation, CRQ2 commands, CBV2 batches, typed errors, id tables).
//! - [`partitioner`]: the key partitioner shared by broker and clients.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admin;
pub mod blocking;
pub mod client;
pub mod config;
pub mod consumer;
pub mod error;
pub mod partitioner;
pub mod producer;
pub mod protocol;
pub mod wire;

pub use config::{ClientConfig, ConsumerConfig, ProducerConfig};
pub use error::{Error, ErrorKind, Result};
