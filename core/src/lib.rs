//! `cursus`: the Cursus client engine, the one implementation of the client
//! behaviour (connections, routing, retries, producer batching, consumer
//! groups) that every language binding of the Cursus SDK calls.
//!
//! # Depending on it
//!
//! The crate lives in the SDK repository (`core/`); depend on it by path or
//! git until it is published:
//!
//! ```toml
//! [dependencies]
//! cursus = { path = "../cursus-sdk/core" }
//! # or: cursus = { git = "https://example.invalid/cursus-sdk" }
//! ```
//!
//! The cargo feature `otel` adds `cursus::otel`: OpenTelemetry spans and
//! metrics (docs/observability.md, "Rust"). Without it nothing of
//! OpenTelemetry is compiled in.
//!
//! # Which API
//!
//! - The async API ([`admin::Admin`], [`producer::Producer`],
//!   [`consumer::Consumer`]) runs on the caller's tokio runtime: use it from
//!   async Rust.
//! - The [`blocking`] API owns its runtime and blocks the calling thread:
//!   use it from synchronous code (and it is what the C, Java and Python
//!   bindings call). Its delivery and commit callbacks run on a dispatcher
//!   thread of each client, never on the engine's I/O threads.
//!
//! ```no_run
//! use cursus::blocking::{Admin, Producer};
//! use cursus::{ClientConfig, NewTopic, ProducerConfig, ProducerRecord};
//!
//! # fn main() -> cursus::Result<()> {
//! let admin = Admin::connect(ClientConfig::new("127.0.0.1:9000"))?;
//! admin.create_topic(&NewTopic::new("orders").partitions(3))?;
//! let producer = Producer::connect(ProducerConfig::new("127.0.0.1:9000"))?;
//! let stored = producer.send_and_wait(ProducerRecord::new("orders", "hello").key("k1"))?;
//! println!("stored at partition {} offset {:?}", stored.partition, stored.offset);
//! producer.close(None)?;
//! # Ok(())
//! # }
//! ```
//!
//! Options have the same names in every language ([`ProducerConfig::set`],
//! [`ConsumerConfig::set`], [`ClientConfig::set`]); errors are one type,
//! [`Error`], with the protocol's code, class and retryable flag.
//!
//! The Wire v2 codec itself is the separate crate `cursus-wire`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admin;
pub mod blocking;
#[cfg(feature = "internals")]
pub mod client;
#[cfg(not(feature = "internals"))]
mod client;
pub mod config;
pub mod consumer;
pub mod dispatch;
pub mod error;
pub mod events;
pub mod eventstore;
#[cfg(feature = "otel")]
pub mod otel;
pub mod producer;
mod protocol;
mod runtime;
pub mod stats;
pub mod telemetry;
pub mod trace_context;

/// The codec this engine speaks (`cursus-wire`), for code that needs the
/// protocol's own types.
pub(crate) use cursus_wire as wire;

pub use admin::{
    ClusterBroker, ClusterPartition, ClusterStatus, DeleteOutcome, GroupMember, GroupStatus,
    LeaderElection, NewTopic, PartitionDescription, PartitionOffsets, PartitionReassignment,
    TopicDescription, TopicInfo, TopicMetadata, TruncateOutcome,
};
pub use config::{ClientConfig, ConsumerConfig, ProducerConfig};
pub use consumer::{ConsumerRecord, RebalanceEvent, RecordEvent, TopicPartition};
pub use cursus_wire::{Compression, ErrorClass};
pub use error::{Error, ErrorKind, Result};
pub use producer::{GroupMetadata, ProducerRecord, RecordMetadata};
pub use stats::{Latency, PartitionLag, Statistics};
pub use trace_context::TraceContext;

/// The engine's version (the workspace version every binding carries).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
