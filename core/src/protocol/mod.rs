//! Typed requests and replies on top of the codec: what each command sends
//! and how its `OK key=value`, JSON or batch reply becomes a Rust value.
//!
//! - [`reply`]: parsing `OK key=value …` lines and JSON envelopes;
//! - [`admin`]: topic administration requests and results;
//! - [`cluster`]: cluster administration replies (distributed mode);
//! - [`eventsource`]: event-sourcing requests and two-frame replies;
//! - [`group`]: consumer-group coordination requests and results;
//! - [`publish`]: the PUBLISH batch and its AckResponse;
//! - [`replay`]: aggregate replay proofs and range reads;
//! - [`txn`]: transaction coordinator requests and replies.

pub mod admin;
pub mod cluster;
pub mod eventsource;
pub mod group;
pub mod publish;
pub mod replay;
pub mod reply;
pub mod txn;
