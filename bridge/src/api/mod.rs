//! The entry points every binding exposes.
//!
//! Each `#[bridge_fn]` here is generated into a C function `cursus_<name>`
//! (`ffi-c`) and a JNI method `NativeBridge.<camelName>` (the Java
//! binding) by `cursus-bridge-gen`, from its signature and its docs (which
//! become the header's and the Java method's documentation). Each
//! `bridge_results!` block declares result types once: the macro expands
//! it to their accessors (entry points like the others) and the generator
//! writes every language's shape of them (`bridge/README.md`, "Adding a
//! result type"). Python does not call these functions: its pyo3 classes
//! call the engine directly and use the generated result classes. The
//! rules the generator follows:
//!
//! - a function returning `Result<T>` is a **call**: in C it returns a
//!   status, takes an optional `cursus_error_t **out_error` last and gives
//!   `T` through an out-parameter; in Java it returns `T` and throws;
//! - any other function is an **accessor** of a handle: in C it returns its
//!   value directly (a fallback for an invalid handle); strings and bytes
//!   it lends stay valid until the handle is destroyed;
//! - every handle type (the types below) gets a `<type>_destroy` function.
//!
//! Argument and result types are limited to those the generator knows
//! (`bridge/README.md` lists them); semantics that need more (a partition
//! that may be "any", a timeout with reserved values) are documented
//! conventions on plain integers, checked here.

pub mod admin;
pub mod cluster;
pub mod config;
pub mod consumer;
pub mod errors;
pub mod eventstore;
pub mod eventstore_async;
pub mod library;
pub mod lists;
pub mod message;
pub mod observability;
pub mod producer;
pub mod replay;
pub mod results;
pub mod telemetry;
pub mod transaction;

pub use crate::callback::{Callback, Listener};
pub use crate::log::LogRecord;
pub use admin::Admin;
pub use cluster::{
    ClusterBroker, ClusterBrokerList, ClusterPartition, ClusterStatus, LeaderElection,
    PartitionReassignment,
};
pub use config::Config;
pub use consumer::{Consumer, RebalanceEvent};
pub use cursus::eventstore::ReplayProof;
pub use cursus::ErrorClass;
pub use cursus::Statistics;
pub use cursus::TraceContext;
pub use cursus::{Error, RecordMetadata, Result};
pub use errors::Status;
pub use eventstore::{Aggregate, Appended, EventCursor, EventPage, EventStore, Snapshot};
pub use eventstore_async::{SnapshotRead, StreamVersion};
pub use lists::{PartitionOffsetsList, StringList, TopicPartitionList};
pub use message::Message;
pub(crate) use producer::with_trace_context;
pub use producer::{DeliveryBatch, Producer};
pub use replay::{EventBuilder, EventRange};
pub use results::{
    DeleteOutcome, GroupMember, GroupStatus, PartitionDescription, TopicDescription, TopicInfo,
    TopicMetadata, TruncateOutcome,
};
pub use telemetry::{Metric, SpanSpec};

use crate::registry::Handle;

impl Handle for Error {
    const KIND: &'static str = "error";
}

/// The partition an `i32` names: negative lets the partitioner choose.
pub(crate) fn partition_arg(partition: i32) -> Option<u32> {
    u32::try_from(partition).ok()
}

/// The timestamp an `i64` names: `i64::MIN` means "stamp the send time".
pub const NO_TIMESTAMP: i64 = i64::MIN;

/// An optional `u32` given as an `i64` (negative: none).
pub(crate) fn optional_u32(name: &str, value: i64) -> Result<Option<u32>> {
    if value < 0 {
        return Ok(None);
    }
    u32::try_from(value)
        .map(Some)
        .map_err(|_| Error::invalid_argument(format!("{name} is out of range: {value}")))
}
