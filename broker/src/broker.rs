//! The state every handler works on, shared by all connections.

use crate::faults::Faults;
use std::sync::{Arc, LazyLock, OnceLock};

use cursus_wire::ErrorPayload;

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::groups::{Coordinator, OffsetLookup, ReplayError};
use crate::metrics::Metrics;
use crate::placement::{ClusterAdmin, Mode, Participants, Placement, Standalone, TopicCatalog};
use crate::storage::{LogConfig, StorageError};
use crate::topics::{TopicDefaults, TopicRegistry};
use crate::txn::{TxnCoordinator, TxnJournal, TxnReplayError, TxnSettings};

/// Why the broker could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Topic storage could not be recovered.
    #[error("{0}")]
    Storage(#[from] StorageError),
    /// The group coordinator could not replay `__consumer_offsets`: the
    /// broker must stay not ready rather than start with empty groups.
    #[error("consumer group state cannot be recovered: {0}")]
    Groups(#[from] ReplayError),
    /// The transaction journal could not be replayed: the broker must stay
    /// not ready rather than forget transactions.
    #[error("transaction state cannot be recovered: {0}")]
    Transactions(#[from] TxnReplayError),
}

/// The listener a connection came in on: it decides the address the
/// broker advertises to that client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The plain TCP listener (`listen`).
    Plain,
    /// The TLS listener (`tls_listen`).
    Tls,
}

/// The broker: configuration, topics and the shutdown signal.
pub struct Broker {
    /// Resolved configuration.
    pub config: Config,
    /// The client address this broker advertises (`host:port`) to clients
    /// of the plain listener.
    pub advertised: String,
    /// The address advertised to clients of the TLS listener (`None`
    /// without one).
    pub tls_advertised: Option<String>,
    /// Topics and their partitions.
    pub topics: TopicRegistry,
    /// Committed group offsets, as CONSUME and STREAM resolve them (the
    /// coordinator).
    pub offsets: Arc<dyn OffsetLookup>,
    /// The consumer group coordinator.
    pub groups: Arc<Coordinator>,
    /// The transaction coordinator.
    pub txns: TxnCoordinator,
    /// Cancelled when the broker shuts down.
    pub shutdown: CancellationToken,
    /// Injected faults (none unless configured).
    pub faults: Faults,
    /// The Prometheus metrics the connections record into.
    pub metrics: Arc<Metrics>,
    /// The seam's implementations, installed once at startup (standalone
    /// until then).
    mode: OnceLock<Mode>,
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
    /// Recovers the data directory, replays the group coordinator and the
    /// transaction journal (blocking) and builds the broker; `shutdown` is
    /// the process-wide shutdown signal and `metrics` where requests are
    /// recorded (see [`Metrics::attach`] for the scrape-time state).
    /// Interrupted transactions are finished afterwards by
    /// [`crate::txn::recover`], before readiness.
    pub fn open(
        config: Config,
        advertised: String,
        tls_advertised: Option<String>,
        metrics: Arc<Metrics>,
        shutdown: CancellationToken,
    ) -> Result<Broker, OpenError> {
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
        let groups = Arc::new(Coordinator::open(
            &config.data_dir,
            &topics,
            config.group_session_timeout,
        )?);
        let txns = TxnCoordinator::new(
            TxnJournal::open(&config.data_dir)?,
            TxnSettings {
                transaction_timeout: config.transaction_timeout,
                transactional_id_expiration: config.transactional_id_expiration,
                crash_point: config.crash_point.clone(),
            },
        );
        let config_faults = config.faults.clone();
        Ok(Broker {
            config,
            advertised,
            tls_advertised,
            topics,
            offsets: Arc::clone(&groups) as Arc<dyn OffsetLookup>,
            groups,
            txns,
            shutdown,
            faults: Faults::new(&config_faults),
            metrics,
            mode: OnceLock::new(),
        })
    }

    /// Installs the seam's implementations (distributed mode, before the
    /// broker serves clients); only the first call counts.
    pub fn install(&self, mode: Mode) {
        let _ = self.mode.set(mode);
    }

    /// The seam's implementations: the installed ones, else standalone.
    pub fn mode(&self) -> &Mode {
        static STANDALONE: LazyLock<Mode> = LazyLock::new(Standalone::mode);
        self.mode.get().unwrap_or(&STANDALONE)
    }

    /// Where partitions live and who coordinates what.
    pub fn placement(&self) -> &dyn Placement {
        &*self.mode().placement
    }

    /// Topic creation, changes and removal.
    pub fn catalog(&self) -> &dyn TopicCatalog {
        &*self.mode().catalog
    }

    /// Where a transaction's partition and group operations run.
    pub fn participants(&self) -> &dyn Participants {
        &*self.mode().participants
    }

    /// The cluster's administration for `command`, or
    /// `distribution_not_enabled` on a standalone broker.
    pub fn cluster_admin(&self, command: &str) -> Result<&dyn ClusterAdmin, ErrorPayload> {
        self.mode().admin.as_deref().ok_or_else(|| {
            ErrorPayload::new("distribution_not_enabled").with_field("command", command)
        })
    }

    /// The address advertised to a client of `listener`: a TLS client is
    /// sent to the TLS listener, a plain one to the plain listener.
    pub fn advertised_to(&self, listener: Listener) -> &str {
        match (listener, &self.tls_advertised) {
            (Listener::Tls, Some(tls)) => tls,
            _ => &self.advertised,
        }
    }

    /// The first failed journal or partition log (a failed fsync: it
    /// refuses writes until a restart recovers it), as `/ready` reports it.
    pub fn storage_failure(&self) -> Option<String> {
        if let Some(reason) = self.txns.journal_failure() {
            return Some(format!(
                "storage failed: __transaction_state.journal: {reason}"
            ));
        }
        if let Some(reason) = self.groups.journal_failure() {
            return Some(format!("storage failed: __consumer_offsets: {reason}"));
        }
        self.topics.list().iter().find_map(|topic| {
            if let Some(reason) = topic.snapshots.as_ref().and_then(|s| s.failure()) {
                return Some(format!(
                    "storage failed: topic={} snapshots: {reason}",
                    topic.def.name
                ));
            }
            topic.partitions.iter().find_map(|p| {
                let reason = p.log().failure()?;
                Some(format!(
                    "storage failed: topic={} partition={}: {reason}",
                    topic.def.name,
                    p.id()
                ))
            })
        })
    }

    /// [`Broker::advertised_to`] split into host and port.
    pub fn advertised_host_port(&self, listener: Listener) -> (&str, &str) {
        let addr = self.advertised_to(listener);
        addr.rsplit_once(':').unwrap_or((addr, ""))
    }
}
