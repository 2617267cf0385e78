//! The client-facing Wire v2 server: the accept loop with its connection
//! limit ([`listener`]), the per-connection protocol ([`connection`]) and
//! the TLS configuration with its reload ([`tls`]), and byte streams that
//! count traffic for the metrics ([`counting`]).

pub mod connection;
pub mod counting;
pub mod listener;
pub mod tls;

pub use connection::{FrameWriter, Inbound};
