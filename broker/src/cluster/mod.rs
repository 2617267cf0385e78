//! Distributed mode (docs/cluster.md): the Raft-replicated cluster
//! metadata and what each broker does with it.

pub mod admin;
pub mod config;
pub mod fsm;
pub mod groups;
pub mod internal_tls;
pub mod membership;
pub mod node;
pub mod offsets;
pub mod raft;
pub mod replication;
pub mod routing;
pub mod shards;
pub mod topics;
pub mod transport;
pub mod txns;
