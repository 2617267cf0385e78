//! The `cursus-broker` binary: parse configuration, start the health and
//! client listeners, recover the data directory, serve until SIGINT/SIGTERM.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use clap::Parser;
use cursus_broker::broker::{Broker, OpenError};
use cursus_broker::cluster;
use cursus_broker::cluster::config::{ClusterConfig, ClusterSettings};
use cursus_broker::cluster::node::ClusterNode;
use cursus_broker::config::{BrokerSettings, Config, ConfigError, LISTEN_OFF};
use cursus_broker::health::{self, Readiness};
use cursus_broker::metrics::Metrics;
use cursus_broker::server::listener::TlsListener;
use cursus_broker::server::tls::TlsReloader;
use cursus_broker::settings::layered;
use cursus_broker::{maintenance, server};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::{error, info};
use tracing_subscriber::EnvFilter;

/// The command line: `--config` and the settings of both sections, the
/// broker's own and distributed mode's.
#[derive(Parser)]
#[command(
    name = "cursus-broker",
    version,
    about = "Cursus reference broker (Wire v2, standalone mode)",
    long_about = "Cursus reference broker (Wire v2, standalone mode).\n\n\
        Every option can also be set in a TOML file given with --config, using the \
        option name with '_' instead of '-' (e.g. max_connections = 100). Flags given \
        on the command line override the file."
)]
struct Cli {
    /// TOML configuration file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    broker: BrokerSettings,
    #[command(flatten)]
    cluster: ClusterSettings,
}

impl Cli {
    /// Both sections, each setting from its flag, else the file, else its
    /// default; a cluster member's broker id defaults to `broker-<node_id>`.
    fn resolve(self) -> Result<(Config, Option<ClusterConfig>), ConfigError> {
        let (mut broker, cluster) = layered((self.broker, self.cluster), self.config.as_deref())?;
        let cluster = ClusterConfig::resolve(cluster).map_err(ConfigError::Invalid)?;
        if let Some(cluster) = &cluster {
            let id = format!("broker-{}", cluster.node_id);
            broker.broker_id.get_or_insert(id);
        }
        Ok((Config::resolve(broker)?, cluster))
    }
}

fn main() -> ExitCode {
    let (config, cluster) = match Cli::parse().resolve() {
        Ok(resolved) => resolved,
        Err(e) => {
            eprintln!("cursus-broker: {e}");
            return ExitCode::from(2);
        }
    };
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.log_level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only for a person at a terminal: never in files, pipes or CI
    // logs, and never with NO_COLOR set (https://no-color.org).
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").map_or(true, |v| v.is_empty());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cursus-broker: cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config, cluster)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!("{e}");
            eprintln!("cursus-broker: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: Config, cluster: Option<ClusterConfig>) -> Result<(), String> {
    // The TLS files are checked before anything is bound, so a bad
    // certificate fails startup with its reason.
    let tls = match &config.tls {
        Some(files) => Some((
            Arc::new(TlsReloader::new(files.clone())?),
            bind(&files.listen).await?,
        )),
        None => None,
    };
    let listener = match config.listen.as_str() {
        LISTEN_OFF => None,
        listen => Some(bind(listen).await?),
    };
    let health_listener = bind(&config.health_listen).await?;
    let local = |l: &TcpListener| l.local_addr().map_err(|e| e.to_string());
    let addr = listener.as_ref().map(local).transpose()?;
    let tls_addr = tls.as_ref().map(|(_, l)| local(l)).transpose()?;
    let health_addr = local(&health_listener)?;
    let shown_addr = addr.map_or_else(|| LISTEN_OFF.to_owned(), |a| a.to_string());
    // Each listener's clients are pointed at that listener; advertised_addr
    // stands for the plain one, or for the TLS one when it is alone.
    let advertised = config
        .advertised_addr
        .clone()
        .or_else(|| addr.or(tls_addr).map(|a| a.to_string()))
        .unwrap_or_default();
    let tls_advertised = match addr {
        None => tls_addr.map(|_| advertised.clone()),
        Some(_) => tls_addr.map(|a| a.to_string()),
    };
    cursus_broker::storage::io::install(&config.storage_faults);
    let metrics = Arc::new(Metrics::new());
    let observed = Arc::clone(&metrics);
    cursus_broker::storage::io::observe_syncs(Box::new(move |took| observed.fsync(took)));
    let shutdown = CancellationToken::new();
    let readiness = Readiness::new();
    let health_task = tokio::spawn(health::serve(
        health_listener,
        readiness.clone(),
        Arc::clone(&metrics),
        shutdown.clone(),
    ));
    // SIGTERM asks for a stop; until the cluster node runs, it is one at once.
    let stop_requested = CancellationToken::new();
    tokio::spawn(signals(stop_requested.clone()));
    let stop_now = tokio::spawn(stop_after(stop_requested.clone(), None, shutdown.clone()));
    // SIGHUP reloads the client listener's TLS files and the cluster
    // listener's (once the cluster node runs).
    let member: Arc<OnceLock<Arc<ClusterNode>>> = Arc::default();
    let internal_tls = cluster.as_ref().is_some_and(|c| c.internal_tls.is_some());
    if tls.is_some() || internal_tls {
        let reloader = tls.as_ref().map(|(reloader, _)| Arc::clone(reloader));
        tokio::spawn(reload_on_sighup(reloader, Arc::clone(&member)));
    }

    // Tests and scripts read the real ports from this line.
    let tls_part = tls_addr.map_or_else(String::new, |a| format!(" tls_addr={a}"));
    println!(
        "cursus-broker listening addr={shown_addr}{tls_part} health={health_addr} data_dir={}",
        config.data_dir.display()
    );
    let _ = std::io::stdout().flush();

    // Connections made during recovery wait in the accept backlog.
    let token = shutdown.clone();
    let recorded = Arc::clone(&metrics);
    let opened = tokio::task::spawn_blocking(move || {
        Broker::open(config, advertised, tls_advertised, recorded, token)
    })
    .await
    .map_err(|e| format!("recovery task failed: {e}"))?;
    let broker = match opened {
        Ok(broker) => broker,
        Err(OpenError::Transactions(e)) => {
            error!(
                error = %e,
                "transaction state cannot be recovered; staying not ready"
            );
            shutdown.cancelled().await;
            let _ = health_task.await;
            return Err(format!("not started: {e}"));
        }
        Err(OpenError::Groups(e)) => {
            // Never serve with an empty coordinator: stay alive and not
            // ready so the operator sees the failure on /ready and in the log.
            error!(
                error = %e,
                "consumer group state cannot be recovered; staying not ready \
                 (see Standalone Clean-Bootstrap Recovery)"
            );
            shutdown.cancelled().await;
            let _ = health_task.await;
            return Err(format!("not started: {e}"));
        }
        Err(e) => return Err(format!("recovery failed: {e}")),
    };
    let broker = Arc::new(broker);
    metrics.attach(&broker);
    // Interrupted transactions are finished before the broker is ready.
    // In a cluster the coordinators' state lives in Raft and each id's
    // coordinator finishes its transactions: a member's local replicas
    // must not be "recovered" (aborting records its journal does not
    // know would contradict the cluster's decisions).
    if let Err(e) = match cluster.is_none() {
        true => cursus_broker::txn::recover(&broker).await,
        false => Ok(()),
    } {
        error!(error = %e.render(), "transaction recovery failed; staying not ready");
        shutdown.cancelled().await;
        let _ = health_task.await;
        return Err(format!(
            "not started: transaction recovery failed: {}",
            e.render()
        ));
    }
    // Distributed mode: the cluster node, and the clustered seam installed.
    let node = match cluster {
        Some(config) => {
            let listener = bind(&config.cluster_listen).await?;
            Some(cluster::start(&broker, config, listener).await?)
        }
        None => None,
    };
    // A cluster member hands its leaderships over before it stops serving
    // (whichever of the two tasks sees the request first stops the broker).
    if let Some(node) = &node {
        let _ = member.set(Arc::clone(node));
        stop_now.abort();
        tokio::spawn(stop_after(
            stop_requested,
            Some(Arc::clone(node)),
            shutdown.clone(),
        ));
    }
    let probed = Arc::clone(&broker);
    let member = node.clone();
    readiness.set_failure_probe(Box::new(move || {
        probed
            .storage_failure()
            .or_else(|| member.as_ref().and_then(|node| node.not_ready()))
    }));
    readiness.set_ready();
    info!(addr = %shown_addr, ?tls_addr, %health_addr, advertised = %broker.advertised, "ready");

    let upkeep = tokio::spawn(maintenance::run(Arc::clone(&broker)));
    let tls = tls.map(|(tls, listener)| TlsListener { listener, tls });
    server::listener::run(Arc::clone(&broker), listener, tls).await;
    if let Some(node) = &node {
        // A stop that did not come from a signal (the cluster refused this
        // broker) leaves now; after a signal the broker left already.
        node.leave().await;
    }
    let _ = upkeep.await;
    let _ = health_task.await;
    // A broker the cluster refused to join stopped on its own: that is a
    // failure for whoever started it.
    if let Some(refusal) = node.and_then(|node| node.refused()) {
        return Err(format!("the cluster refused this broker: {refusal}"));
    }
    info!("stopped");
    Ok(())
}

async fn bind(addr: &str) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))
}

/// Re-reads the TLS files on every SIGHUP: the client listener's
/// (`tls`) and the cluster listener's (`member`, once the node runs). A
/// failure is logged ([`TlsReloader::reload`],
/// [`ClusterNode::reload_internal_tls`]) and keeps the previous
/// configuration. The handler is installed here, before the banner is
/// printed: a SIGHUP sent by someone who read the banner must never meet
/// the default action, which ends the process.
fn reload_on_sighup(
    tls: Option<Arc<TlsReloader>>,
    member: Arc<OnceLock<Arc<ClusterNode>>>,
) -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let hangup = {
        use tokio::signal::unix::{signal, SignalKind};
        signal(SignalKind::hangup())
            .map_err(|e| error!(error = %e, "cannot watch SIGHUP; TLS reload is unavailable"))
            .ok()
    };
    async move {
        #[cfg(unix)]
        if let Some(mut hangup) = hangup {
            while hangup.recv().await.is_some() {
                if let Some(tls) = &tls {
                    info!("SIGHUP: reloading the TLS configuration");
                    let _ = tls.reload();
                }
                if let Some(node) = member.get() {
                    node.reload_internal_tls();
                }
            }
        }
        #[cfg(not(unix))]
        let _ = (tls, member);
    }
}

/// Once a stop is `requested`: a cluster member hands its Raft and
/// partition leaderships over while it still serves
/// ([`cluster::node::ClusterNode::stop_cleanly`], bounded), then `shutdown`
/// stops everything.
async fn stop_after(
    requested: CancellationToken,
    node: Option<Arc<ClusterNode>>,
    shutdown: CancellationToken,
) {
    tokio::select! {
        _ = requested.cancelled() => {}
        _ = shutdown.cancelled() => return,
    }
    if let Some(node) = node {
        node.stop_cleanly().await;
    }
    shutdown.cancel();
}

/// Cancels `requested` on SIGINT or SIGTERM.
async fn signals(requested: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
    info!("shutdown requested");
    requested.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Both sections from `args` and a TOML file holding `file`.
    fn resolve(args: &[&str], file: &str) -> Result<(Config, Option<ClusterConfig>), ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broker.toml");
        std::fs::write(&path, file).unwrap();
        let head = ["cursus-broker", "--config", path.to_str().unwrap()];
        Cli::try_parse_from(head.into_iter().chain(args.iter().copied()))
            .unwrap()
            .resolve()
    }

    #[test]
    fn one_file_holds_both_sections() {
        let file = "max_connections = 7\nnode_id = 2\n\
                    cluster_peers = \"1=127.0.0.1:7001,2=127.0.0.1:7002\"\n\
                    internal_auth_token = \"t\"\n";
        let (config, cluster) = resolve(&[], file).unwrap();
        assert_eq!(config.max_connections, 7);
        let cluster = cluster.expect("distributed mode");
        assert_eq!(cluster.node_id, 2);
        assert_eq!(cluster.cluster_listen, "127.0.0.1:7002");
        // A member's broker id follows its node id unless one is given.
        assert_eq!(config.broker_id, "broker-2");
        let (config, _) = resolve(&["--broker-id", "b"], file).unwrap();
        assert_eq!(config.broker_id, "b");
        let (config, cluster) = resolve(&["--max-connections", "9"], "").unwrap();
        assert_eq!(
            (config.broker_id.as_str(), config.max_connections),
            ("broker-1", 9)
        );
        assert_eq!(cluster, None);
    }

    #[test]
    fn an_unknown_key_is_refused_naming_both_sections_keys() {
        let e = resolve(&[], "max_conections = 7\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1, column 1"), "{e}");
        assert!(e.contains("unknown field `max_conections`"), "{e}");
        assert!(e.contains("`storage_faults`, `node_id`"), "{e}");
        assert!(e.ends_with("`internal_tls_ca_path`\n"), "{e}");
    }

    #[test]
    fn help_lists_the_storage_fault_flag_after_the_cluster_flags() {
        let help = Cli::command().render_long_help().to_string();
        let at = |flag: &str| help.find(flag).unwrap_or_else(|| panic!("{flag}:\n{help}"));
        assert!(at("--config <FILE>") < at("--listen <ADDR>"));
        assert!(at("--fault <SPEC>") < at("--node-id <N>"));
        assert!(at("--internal-tls-ca-path <FILE>") < at("--storage-fault <SPEC>"));
        assert!(at("--storage-fault <SPEC>") < at("-h, --help"));
    }
}
