//! Distributed mode (docs/cluster.md): the Raft-replicated cluster
//! metadata and what each broker does with it.

pub mod fsm;
pub mod raft;
pub mod transport;
