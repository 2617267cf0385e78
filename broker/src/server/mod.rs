//! The client-facing Wire v2 server: the accept loop with its connection
//! limit ([`listener`]) and the per-connection protocol ([`connection`]).

pub mod connection;
pub mod listener;

pub use connection::{FrameWriter, Inbound};
