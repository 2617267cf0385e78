//! Distributed mode (docs/cluster.md): the Raft-replicated cluster
//! metadata and what each broker does with it. This is the clustered side
//! of the broker's seam ([`crate::placement`], docs/broker-architecture.md):
//! it uses the domain modules, and nothing outside it but the assembly
//! point (`main.rs`) uses it.

pub mod admin;
pub mod config;
pub mod contact;
pub mod fsm;
pub mod groups;
pub mod internal_tls;
pub mod membership;
pub mod node;
pub mod offsets;
pub mod participants;
pub mod placement;
pub mod raft;
pub mod replication;
pub mod routing;
pub mod shards;
pub mod topics;
pub mod transport;
pub mod trust;
pub mod txns;

use std::sync::{Arc, OnceLock};

use tokio::net::TcpListener;

use crate::broker::Broker;
use config::ClusterConfig;
use node::ClusterNode;

/// Makes `broker` a cluster member: starts the cluster listener on
/// `listener` and the Raft node, installs the clustered seam
/// ([`placement::Clustered`]) and the coordinators' replicators, and starts
/// the reconciler that gives this broker its partition roles.
pub async fn start(
    broker: &Arc<Broker>,
    config: ClusterConfig,
    listener: TcpListener,
) -> Result<Arc<ClusterNode>, String> {
    let handler = Arc::new(replication::BrokerHandler {
        broker: Arc::downgrade(broker),
        node: OnceLock::new(),
    });
    let node = ClusterNode::start(broker, config, listener, Arc::clone(&handler) as _).await?;
    let _ = handler.node.set(Arc::downgrade(&node));
    broker.install(placement::Clustered::mode(
        Arc::clone(&node),
        Arc::downgrade(broker),
    ));
    broker.groups.set_replicator(Arc::new(groups::RaftGroups {
        node: Arc::downgrade(&node),
    }));
    let txns = Arc::new(txns::RaftTxns::new(Arc::downgrade(&node)));
    broker.txns.set_replicator(Arc::clone(&txns) as _);
    tokio::spawn(replication::reconcile_forever(
        Arc::clone(broker),
        Arc::clone(&node),
        txns,
    ));
    Ok(node)
}
