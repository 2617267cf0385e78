//! The state every handler works on, shared by all connections.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::groups::{NoCommittedOffsets, OffsetLookup};
use crate::storage::{LogConfig, StorageError};
use crate::topics::{TopicDefaults, TopicRegistry};

/// The broker: configuration, topics and the shutdown signal.
pub struct Broker {
    /// Resolved configuration.
    pub config: Config,
    /// The client address this broker advertises (`host:port`).
    pub advertised: String,
    /// Topics and their partitions.
    pub topics: TopicRegistry,
    /// Committed group offsets (none until group coordination exists).
    pub offsets: Arc<dyn OffsetLookup>,
    /// Cancelled when the broker shuts down.
    pub shutdown: CancellationToken,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("advertised", &self.advertised)
            .field("data_dir", &self.config.data_dir)
            .finish_non_exhaustive()
    }
}

impl Broker {
    /// Recovers the data directory (blocking) and builds the broker;
    /// `shutdown` is the process-wide shutdown signal.
    pub fn open(
        config: Config,
        advertised: String,
        shutdown: CancellationToken,
    ) -> Result<Broker, StorageError> {
        let log_config = LogConfig {
            segment_bytes: config.segment_bytes,
            ..LogConfig::default()
        };
        let defaults = TopicDefaults {
            partitions: config.default_partitions,
            replication_factor: config.default_replication_factor,
            cleanup_policy: config.default_cleanup_policy,
            min_insync_replicas: config.min_insync_replicas,
        };
        std::fs::create_dir_all(&config.data_dir)
            .map_err(|e| StorageError::io(&config.data_dir, e))?;
        let topics = TopicRegistry::open(&config.data_dir, log_config, defaults)?;
        Ok(Broker {
            config,
            advertised,
            topics,
            offsets: Arc::new(NoCommittedOffsets),
            shutdown,
        })
    }

    /// The advertised address split into host and port.
    pub fn advertised_host_port(&self) -> (&str, &str) {
        self.advertised
            .rsplit_once(':')
            .unwrap_or((self.advertised.as_str(), ""))
    }
}
