//! When a write counts as committed: synced on this broker, then — for the
//! writes that need it — held by the partition's in-sync replicas, as the
//! [`Placement`] knows them (this broker alone when standalone). PUBLISH
//! acks=all, APPEND_STREAM and a transaction's records and markers all
//! wait here.

use std::future::Future;
use std::time::Duration;

use cursus_wire::ErrorPayload;

use super::Placement;
use crate::topics::Partition;

/// A write to wait for: its partition, its offset and the leader epoch
/// of the partition generation that appended it
/// ([`Partition::leader_epoch`]; 0 where no epoch is served).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Partition number.
    pub partition: u32,
    /// Offset of the (last) record written.
    pub offset: u64,
    /// The epoch the appending generation served.
    pub leader_epoch: u64,
}

impl Written {
    /// `offset`, appended to `partition` (the generation that appended it).
    pub fn at(partition: &Partition, offset: u64) -> Written {
        Written {
            partition: partition.id(),
            offset,
            leader_epoch: partition.leader_epoch(),
        }
    }
}

/// How far a write must have gone before it is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// Synced on this broker (PUBLISH acks=1).
    Local,
    /// Synced here and held by the partition's in-sync replicas (PUBLISH
    /// acks=all, APPEND_STREAM, transactional records and markers).
    InSync,
}

/// Waits until the `writes` of `topic` are committed at `level`: first
/// `local`, their sync here (its error is the caller's to shape), then the
/// in-sync replicas of each partition, at most `timeout` for each.
pub async fn committed(
    placement: &dyn Placement,
    topic: &str,
    writes: &[Written],
    local: impl Future<Output = Result<(), ErrorPayload>>,
    level: Commit,
    timeout: Duration,
) -> Result<(), ErrorPayload> {
    local.await?;
    if level == Commit::InSync {
        for write in writes {
            placement.wait_replicated(topic, *write, timeout).await?;
        }
    }
    Ok(())
}
