//! Talking to brokers: transport (TCP/TLS), connections with handshake,
//! AUTH and pipelined correlated requests, the pooled cluster view with
//! metadata routing and redirects, and the retry policy.

pub mod cluster;
pub mod connection;
mod frame_sink;
pub mod retry;
pub mod transport;

pub use cluster::{Cluster, Lane};
pub use retry::Idempotence;
